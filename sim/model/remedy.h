/*
 * remedy.h - when a configuration does not fit: the cheapest change that would, found by
 * re-estimating variants of it.
 *
 * The analytic estimate (estimate.h) is cheap, so the variants a user would try are estimated
 * one by one, the memory model deciding which fit: a smaller micro-batch at the same global
 * batch (more accumulation), activation checkpointing (selective, every N-th layer, every
 * layer), the next ZeRO stages and offload, and their combinations. Among those that fit the
 * cheapest wins: first by the speed order of DeepSpeed's stages and offloads (HF
 * Transformers' DeepSpeed guide, "How to Choose Which ZeRO Stage and Offloads To Perform For
 * Best Performance": stage 0 > 1 > 2 > 2 + offload > 3 > 3 + offloads; stages 1 and 2 keep
 * DDP's 2 Psi communication volume, ZeRO paper sec. 7, so they rank with the user's own
 * stage), then by the kernel model's compute-bound step time, which prices recomputation and
 * smaller GEMMs. The model does no I/O: the config variants come from a callback (the CLI
 * re-reads the user's ds_config with the new stage and offload, inputs/ds_config.h).
 * Used by the estimate and run reports' verdicts; docs/MODEL.md, "What would fit".
 */
#ifndef ZEROSIM_MODEL_REMEDY_H
#define ZEROSIM_MODEL_REMEDY_H

#include "estimate.h"

/* One variant: the config's shape and batch split, and the recomputation. */
typedef struct RemedyVariant {
    DsShape shape;
    uint64_t micro_batch, grad_accum; /* same global batch as the user's */
    Recompute recompute;
    uint32_t checkpoint_every; /* RECOMPUTE_FULL: every N-th layer (1: all) */
} RemedyVariant;

/* Fills *out with the user's config changed to v's shape and batch split (ds_config_apply
 * done); 0, or -1 with err set. The caller finalises *out in every case. */
typedef int (*RemedyConfigFn)(void *ctx, const RemedyVariant *v, TrainConfig *out, Err *err);

typedef struct Remedy {
    bool is_found;
    RemedyVariant variant;          /* what to run */
    bool changes_shape;             /* stage or offload differ from the user's */
    bool changes_batch;             /* micro-batch and accumulation differ */
    bool changes_recompute;         /* checkpointing differs */
    uint64_t gpu_free_bytes;        /* left under the GPU's usable memory (less headroom) */
    uint64_t cpu_free_bytes;        /* left of host memory per node */
    double compute_bound_step_s;    /* the variant's, and the user's config's: */
    double current_compute_bound_step_s;
    uint32_t n_estimated;           /* variants estimated */
} Remedy;

/* The speed tier of a shape in the guide's order (0: DDP, ZeRO-1 and ZeRO-2 without offload,
 * then 2 + optimizer offload, 3, 3 + optimizer offload, 3 + both, 3 on NVMe). */
int remedy_shape_tier(const DsShape *s);

/* Searches variants of the configuration that `current` estimates (train, opts as given to
 * estimate_build), each judged as the estimate judges it with `extra_gpu_bytes` more left
 * free on the GPU (0 for `zerosim estimate`; `zerosim run` passes what its allocator replay
 * found above the analytic peak). config_fn NULL: only the batch split and recomputation
 * vary (no config file to re-read: FSDP). Fills *out (is_found false when nothing tried
 * fits). 0, or -1 with err set when a variant's config fails to load. */
int remedy_find(const ModelConfig *model, const TrainConfig *train, const Platform *platform,
                const EstimateOptions *opts, const Estimate *current, uint64_t extra_gpu_bytes,
                RemedyConfigFn config_fn, void *ctx, Remedy *out, Err *err);

/* The changes as command-line options and config edits ("--micro-batch 2 --grad-accum 4
 * and zero_optimization.stage = 3"), into buf; returns buf. */
const char *remedy_describe(const Remedy *r, char *buf, size_t buf_size);

#endif
