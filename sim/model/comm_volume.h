/*
 * comm_volume.h - bytes each rank sends per step, per collective type.
 *
 * The ZeRO paper's accounting (sec. 7): with ring algorithms a rank sends (N-1)/N x S for an
 * all-gather or reduce-scatter of S bytes and 2 (N-1)/N x S for an all-reduce. DDP all-reduces
 * the gradients (2 Psi); ZeRO-1 and -2 reduce-scatter the gradients and all-gather the updated
 * parameters (Psi + Psi = 2 Psi); ZeRO-3 all-gathers parameters before forward and again before
 * backward and reduce-scatters gradients (3 Psi). Parameters ZeRO-3 keeps resident are not
 * gathered. Where DeepSpeed communicates per micro-batch (stage 2 and 3 reduce gradients in
 * every backward, stage 3 gathers in every pass; stage 0 and 1 reduce once at the boundary) the
 * volume scales with gradient accumulation. MiCS / HYBRID_SHARD gathers and reduce-scatters
 * inside shard groups and all-reduces the gradient shards across them.
 */
#ifndef ZEROSIM_MODEL_COMM_VOLUME_H
#define ZEROSIM_MODEL_COMM_VOLUME_H

#include "zero_memory.h"

typedef struct CommVolume {
    uint64_t all_reduce; /* bytes sent per rank per step */
    uint64_t all_gather;
    uint64_t reduce_scatter;
    uint64_t all_to_all; /* a mixture of experts' token exchange (model/moe.h; estimate.c) */
    uint64_t total;
    double total_in_psi; /* total / (Psi x bytes per 16-bit element): 2, 2, 2, 3 */
} CommVolume;

/* Per-rank bytes for one optimizer step of `grad_accum` micro-batches on `n_gpus` ranks. */
void comm_volume(const TrainConfig *cfg, const ModelParams *params, const ZeroMemory *mem,
                 uint64_t n_gpus, uint64_t grad_accum, CommVolume *out);

#endif
