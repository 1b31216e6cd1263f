/*
 * advice.h - `zerosim advise` output: the candidates ranked, and why the winner wins.
 *
 * A candidate is one way to train the model on the cluster (ZeRO stage, what is offloaded,
 * micro-batch, activation checkpointing) with what the analytic estimate and, when it fits,
 * the simulation say about it; the search and the ranking are study/advise.h's. The
 * recommendation (the first candidate) is explained in the terms of the
 * seed chapter's selection guide (ZeRO-1 when parameters and gradients fit a GPU, ZeRO-2 when
 * parameters fit, ZeRO-3 when they do not, offload for few GPUs and large models, at the price
 * of PCIe transfers).
 */
#ifndef ZEROSIM_REPORT_ADVICE_H
#define ZEROSIM_REPORT_ADVICE_H

#include "../inputs/ds_config.h"
#include "../inputs/model_config.h"
#include "../inputs/platform.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Candidate {
    int zero_stage;
    OffloadDevice offload_optimizer;
    OffloadDevice offload_param;
    uint64_t micro_batch;
    uint64_t grad_accum;
    bool is_checkpointed; /* full activation checkpointing */
    uint64_t ep_size;     /* expert parallelism of a mixture of experts (0 or 1: none) */
    /* analytic estimate */
    bool fits;
    char runs_out[16];      /* "gpu", "cpu", "nvme" or "" */
    double shortfall_bytes; /* need - capacity of what runs out */
    double gpu_bytes;       /* estimated peak per GPU */
    /* simulation (when it fits) */
    bool is_simulated;
    double step_s;
    double tokens_per_s;
    double tflops_per_gpu;
    double sim_gpu_peak_bytes;
    double bytes_per_rank; /* sent per step */
    char bottleneck[40];   /* the largest share of the step */
    double bottleneck_share;
} Candidate;

typedef struct Advice {
    const ModelConfig *model;
    const Platform *platform;
    double psi; /* parameters */
    uint64_t seq_len;
    uint64_t global_batch; /* 0 when the user gave none */
    Candidate *candidates; /* ranked, best first */
    size_t n_candidates;
} Advice;

/* The ranked table and the recommendation paragraph. */
void advice_text(FILE *out, const Advice *a);

/* {"candidates": [...], "recommended": {...} or null, "explanation": "..."}. */
void advice_json(FILE *out, const Advice *a);

#endif
