/*
 * cost.h - how long each piece of a training step takes on one GPU, as work for the engine.
 *
 * The engine runs a GPU op of `amount` FLOPs at the GPU's achievable rate (dense peak x
 * gemm_efficiency). GEMMs are counted in FLOPs (flops.h's accounting); attention kernels in
 * FLOPs scaled by gemm_efficiency / attention_efficiency, since FlashAttention runs further
 * from peak than cuBLAS GEMMs (50-73% on A100 by FlashAttention-2's paper, ~35% on H100);
 * element-wise and normalisation kernels are bound by HBM bandwidth, so their bytes are
 * converted into the FLOPs that would take the same time at the achievable rate. The GPU
 * optimizer step is memory-bound too: fused Adam reads and writes ~28 bytes per parameter of
 * the partition in mixed precision (fp16 gradient 2, fp32 master 4+4, momentum 4+4, variance
 * 4+4, fp16 weight 2).
 */
#ifndef ZEROSIM_SCHEDULE_COST_H
#define ZEROSIM_SCHEDULE_COST_H

#include "../inputs/ds_config.h"
#include "../inputs/platform.h"
#include "../model/activations.h"
#include "../model/flops.h"

typedef struct StepCost {
    double gpu_flops_per_s; /* achievable rate the engine runs GPU ops at */
    double layer_fwd;       /* one layer, one micro-batch: GEMMs + attention + memory-bound */
    double layer_bwd;       /* twice the GEMM and attention work, twice the traffic */
    double layer_recompute; /* re-run before backward: the full forward, or the attention
                               core with selective recomputation */
    double head_fwd;        /* logits and loss, one micro-batch */
    double head_bwd;
    double optimizer_per_param; /* GPU optimizer work per parameter updated */
} StepCost;

/* Costs for one micro-batch of setup on platform p. */
void cost_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
               const TrainConfig *train, const Platform *p, StepCost *out);

#endif
