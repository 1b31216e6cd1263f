/*
 * advice.h - `zerosim advise` output: the candidates ranked, and why the winner wins.
 *
 * A candidate is one way to train the model on the cluster (ZeRO stage, what is offloaded,
 * micro-batch, activation checkpointing, ZeRO-3's prefetch window) with what the analytic
 * estimate and, when it fits, the simulation say about it; the search and the ranking are
 * study/advise.h's. Every candidate runs the same global batch, so step times compare. The
 * recommendation (the first candidate) is explained in the terms of the seed chapter's
 * selection guide (ZeRO-1 when parameters and gradients fit a GPU, ZeRO-2 when parameters fit,
 * ZeRO-3 when they do not, offload for few GPUs and large models, at the price of PCIe
 * transfers; the simplest that fits when speeds are close), with what stops the simpler
 * stages (their model states, or the activations of one micro-batch).
 */
#ifndef ZEROSIM_REPORT_ADVICE_H
#define ZEROSIM_REPORT_ADVICE_H

#include "../inputs/ds_config.h"
#include "../inputs/model_config.h"
#include "../inputs/platform.h"

#include <stddef.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Candidates within this share of the fastest one's throughput count as equally fast: the
 * differences zerosim resolves are larger (docs/VALIDATION.md's step-time errors run to tens
 * of percent against published runs), so among them the simplest is recommended ... */
#define ADVICE_NEAR_EQUAL_FRACTION 0.03
/* ... and one that leaves at least this share of the GPU's memory free is preferred to one
 * that does not (policy, docs/MODEL.md "advise": a run that fits by a few hundred MiB is one
 * PyTorch release or one longer batch away from out-of-memory). */
#define ADVICE_TIGHT_FRACTION 0.10

/* Why the first candidate is first. */
typedef enum AdviceChoice {
    ADVICE_FASTEST, /* the highest throughput */
    ADVICE_SIMPLER, /* within ADVISE_NEAR_EQUAL_FRACTION of the fastest and simpler */
    ADVICE_ROOM,    /* within it, as simple, and with more memory to spare */
} AdviceChoice;

typedef struct Candidate {
    int zero_stage;
    OffloadDevice offload_optimizer;
    OffloadDevice offload_param;
    uint64_t micro_batch;
    uint64_t grad_accum;
    bool is_checkpointed;      /* full activation checkpointing ... */
    uint32_t checkpoint_every; /* ... of every layer (1) or every N-th (every:N) */
    uint64_t max_live_parameters;  /* stage 3 prefetch window, elements; 0: DeepSpeed's */
    uint64_t prefetch_bucket_size; /* default (set together) */
    uint64_t ep_size;          /* expert parallelism of a mixture of experts (0 or 1: none) */
    /* analytic estimate */
    bool fits;
    char runs_out[16];      /* "gpu", "cpu", "nvme" or "" */
    char limit[16];         /* on a GPU that runs out: "states" when model states, buffers
                               and runtime alone pass it, else "activations" */
    double shortfall_bytes; /* need - capacity of what runs out */
    double gpu_bytes;       /* estimated peak per GPU */
    double gpu_states_bytes; /* the same without activations (model states, buffers,
                                optimizer working copies, runtime) */
    double bound_step_s;     /* its kernels alone over the global batch: the fastest its step
                                can be (a candidate that fits but whose bound is slower than
                                the fastest simulated one is not simulated) */
    /* simulation (when it fits) */
    bool is_simulated;
    double step_s;
    double tokens_per_s;
    double tflops_per_gpu;
    double sim_gpu_peak_bytes;
    double bytes_per_rank; /* sent per step */
    char bottleneck[40];   /* the largest share of the step */
    double bottleneck_share;
    double exposed_gather_s; /* all-gather time the compute stream waited for */
    AdviceChoice chosen_for; /* of the first candidate, set by advise_rank */
} Candidate;

typedef struct Advice {
    const ModelConfig *model;
    const Platform *platform;
    double psi; /* parameters */
    uint64_t seq_len;
    uint64_t global_batch; /* 0 when the user gave none */
    Candidate *candidates; /* ranked, best first */
    size_t n_candidates;
    uint64_t common_batch; /* the global batch every candidate ran (0: unknown) */
} Advice;

/* The candidate's name: "ZeRO-3 + CPU offload", with "(prefetch x2)" for a widened ZeRO-3
 * prefetch window; buf is returned. */
const char *advice_name(const Candidate *c, char *buf, size_t n);

/* Its checkpointing as the option spells it: "none", "full" or "every:N". */
const char *advice_checkpointing(const Candidate *c, char *buf, size_t n);

/* How simple it is to run, the selection guide's order: DDP, ZeRO-1, -2, -3, then offload
 * (optimizer, then parameters, then NVMe); within one, no checkpointing before every:N before
 * full, DeepSpeed's prefetch window before a widened one. Lower is simpler. */
unsigned advice_complexity(const Candidate *c);

/* The ranked table and the recommendation paragraph. */
void advice_text(FILE *out, const Advice *a);

/* {"candidates": [...], "recommended": {...} or null, "explanation": "..."}. */
void advice_json(FILE *out, const Advice *a);

#endif
