/*
 * advise.h - the search behind `zerosim advise`: which ZeRO stage, offload, micro-batch and
 * checkpointing to use for a model on a cluster.
 *
 * Candidates are DDP, ZeRO-1, -2, -3, ZeRO-2 with the optimizer on the CPU, ZeRO-3 with the
 * optimizer on the CPU, with optimizer and parameters on the CPU, and with both on NVMe (when
 * the platform has NVMe), each with and without full activation checkpointing. For each, the
 * analytic estimate picks the largest micro-batch that fits (a power of two dividing the global
 * batch share, when one is given); the candidates that fit are then simulated, each in its own
 * process (study/child.h) and in the mode `zerosim run --mode auto` chooses (two nodes for all
 * of them beyond four nodes), and ranked: configurations that fit first, then the highest
 * throughput, then the least GPU memory; among those that do not fit, the smallest shortfall.
 * Printing the result is report/advice.h's.
 */
#ifndef ZEROSIM_STUDY_ADVISE_H
#define ZEROSIM_STUDY_ADVISE_H

#include "../common/err.h"
#include "../inputs/model_config.h"
#include "../inputs/platform.h"
#include "../report/advice.h"

#include <stddef.h>
#include <stdint.h>

typedef struct AdviseRequest {
    const ModelConfig *model;
    const Platform *platform; /* resized to the cluster asked about */
    uint64_t seq_len;
    uint64_t global_batch;    /* 0: the largest micro-batch that fits, no accumulation */
    uint64_t max_micro_batch; /* the largest micro-batch tried */
    const char *precision;    /* "bf16" or "fp16" */
} AdviseRequest;

/* Builds, estimates, simulates and ranks the candidates. *out_candidates (malloc'd, the
 * caller frees) holds *out_n of them, best first. 0, or -1 with err set (a candidate that
 * cannot be estimated or simulated). */
int advise_search(const AdviseRequest *req, Candidate **out_candidates, size_t *out_n, Err *err);

/* Candidates within this share of the fastest one's throughput count as equally fast ... */
#define ADVISE_NEAR_EQUAL_FRACTION 0.02
/* ... and when the fastest leaves less than this share of the GPU's memory free, the one of
 * them with the most room is recommended (policy, docs/MODEL.md). */
#define ADVISE_TIGHT_FRACTION 0.10

/* Sorts candidates best first (the ranking above); then, when the fastest leaves under
 * ADVISE_TIGHT_FRACTION of hbm_bytes free, puts first the candidate with the most room (HBM
 * less the simulated device peak) within ADVISE_NEAR_EQUAL_FRACTION of its throughput. */
void advise_rank(Candidate *candidates, size_t n, double hbm_bytes);

#endif
