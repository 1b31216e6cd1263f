/*
 * setup.h - the per-run choices that are properties of the training code, not of its files.
 *
 * Sequence length, activation recomputation and flash attention belong to the model code a
 * user runs, so they come from the command line; batch sizes come from ds_config and are
 * resolved against the GPU count. Shared by every analytic module.
 */
#ifndef ZEROSIM_MODEL_SETUP_H
#define ZEROSIM_MODEL_SETUP_H

#include <stdbool.h>
#include <stdint.h>

typedef enum Recompute {
    RECOMPUTE_NONE,      /* every activation kept for backward */
    RECOMPUTE_SELECTIVE, /* attention core recomputed (Korthikanti et al. 2022, sec. 5) */
    RECOMPUTE_FULL,      /* only each layer's input kept; the layer is re-run in backward */
} Recompute;

typedef struct RunSetup {
    uint64_t seq_len;
    uint64_t micro_batch;  /* sequences per GPU per forward/backward */
    uint64_t grad_accum;   /* micro-batches per optimizer step */
    uint64_t global_batch; /* sequences per step over all GPUs */
    uint64_t n_gpus;       /* data-parallel size */
    Recompute recompute;
    bool is_flash_attention;
    unsigned act_bytes;    /* bytes per activation element: 2 (fp16/bf16) or 4 (fp32) */
} RunSetup;

/* "none", "selective", "full". */
const char *setup_recompute_name(Recompute r);

/* Parses a recompute name; returns -1 when unknown. */
int setup_recompute_parse(const char *name, Recompute *out);

#endif
