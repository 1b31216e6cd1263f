/*
 * advise.h - the search behind `zerosim advise`: which ZeRO stage, offload, micro-batch and
 * checkpointing to use for a model on a cluster.
 *
 * Candidates are DDP, ZeRO-1, -2, -3, ZeRO-2 with the optimizer on the CPU, ZeRO-3 with the
 * optimizer on the CPU, with optimizer and parameters on the CPU, and with both on NVMe (when
 * the platform has NVMe), each without activation checkpointing, with full checkpointing, and
 * with every:N checkpointing (the largest N that fits at full checkpointing's micro-batch:
 * the least recomputation that buys that micro-batch). For each, the analytic estimate picks
 * the largest micro-batch that fits (a power of two dividing the global batch share, when one
 * is given). Then every candidate is set to the same global batch (the user's, else the
 * GPUs times the largest micro-batch any candidate fits), with gradient accumulation making
 * up the rest, so their steps and throughputs compare. The candidates that fit are simulated,
 * each in its own process (study/child.h) and in the mode `zerosim run --mode auto` chooses
 * (two nodes for all of them beyond four nodes). A ZeRO-3 candidate whose compute waited on
 * all-gathers gets a sibling with a prefetch window wide enough to fetch the next layer while
 * one computes (stage3_prefetch_bucket_size one layer, stage3_max_live_parameters two), which
 * is estimated and simulated too. Finally they are ranked (advise_rank).
 * Printing the result is report/advice.h's.
 */
#ifndef ZEROSIM_STUDY_ADVISE_H
#define ZEROSIM_STUDY_ADVISE_H

#include "../common/err.h"
#include "../inputs/model_config.h"
#include "../inputs/platform.h"
#include "../report/advice.h"
#include "../report/breakdown.h"

#include <stddef.h>
#include <stdint.h>

typedef struct AdviseRequest {
    const ModelConfig *model;
    const Platform *platform; /* resized to the cluster asked about */
    uint64_t seq_len;
    uint64_t global_batch;    /* 0: the largest micro-batch that fits, no accumulation */
    uint64_t max_micro_batch; /* the largest micro-batch tried */
    const char *precision;    /* "bf16" or "fp16" */
    /* Called before each simulation (done of total so far, the candidate about to run) and
     * once with done == total at the end; NULL: none. */
    void (*progress)(void *ctx, size_t done, size_t total, const Candidate *next);
    void *progress_ctx;
} AdviseRequest;

/* Builds, estimates, simulates and ranks the candidates. *out_candidates (malloc'd, the
 * caller frees) holds *out_n of them, best first; *out_global_batch is the global batch they
 * all ran. 0, or -1 with err set (a candidate that
 * cannot be estimated or simulated). */
int advise_search(const AdviseRequest *req, Candidate **out_candidates, size_t *out_n,
                  uint64_t *out_global_batch, Err *err);

/* What one simulation of a candidate says (a child process hands it back). */
typedef struct AdviseSample {
    double step_s, tokens_per_s, tflops_per_gpu;
    double gpu_peak;     /* device peak, bytes */
    double bytes;        /* sent by rank 0 per step */
    double time_s[BD_N]; /* the step's breakdown (report/breakdown.h) */
} AdviseSample;

/* A step of k > 2 micro-batches from the steps of 1 and 2: DeepSpeed's micro-steps before
 * the last are the same work (zero_schedule.c builds each with one function), so each more
 * adds what the second added, T(k) = T(2) + (k - 2)(T(2) - T(1)), and the same for bytes
 * and every breakdown category; throughputs are k/2 of the work in that time, the peak the
 * larger of the two. advise simulates a candidate of more than 3 micro-batches this way: 3
 * simulated instead of k (docs/MODEL.md). out may be one or two. */
void advise_extrapolate(const AdviseSample *one, const AdviseSample *two, uint64_t k,
                        AdviseSample *out);

/* Sorts candidates best first (the ranking above), then puts first the recommendation:
 * among the fitting, simulated candidates within ADVICE_NEAR_EQUAL_FRACTION of the fastest
 * one's throughput (report/advice.h), those that leave ADVICE_TIGHT_FRACTION of hbm_bytes free
 * when any does, then the simplest (advice_complexity), then the one with the most room (HBM
 * less the simulated device peak). Sets its chosen_for. */
void advise_rank(Candidate *candidates, size_t n, double hbm_bytes);

#endif
