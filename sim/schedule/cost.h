/*
 * cost.h - how long each piece of a training step takes on one GPU, as work for the engine.
 *
 * The times come from the kernel model (model/kernels.h): each layer's forward, backward and
 * recomputation as the kernels the model's family runs, each timed by its roofline (GEMMs at
 * the achievable matmul rate with tile and wave quantization, element-wise kernels at
 * achievable HBM bandwidth, FlashAttention at its published throughput) and never faster
 * than the host can launch them. The engine runs a GPU op of `amount` at the GPU host's
 * speed (dense peak x gemm_efficiency, engine/platform_xml.c), so a time t becomes
 * t x gpu_flops_per_s engine units: the engine's speed is only the unit, the kernel model
 * decides the time. The end of the step is memory-bound too: the gradient-norm pass (and
 * fp16's overflow check) read each 16-bit gradient of the partition, fused Adam reads and
 * writes ~28 bytes per parameter in mixed precision (fp16 gradient 2, fp32 master 4+4,
 * momentum 4+4, variance 4+4, fp16 weight 2).
 */
#ifndef ZEROSIM_SCHEDULE_COST_H
#define ZEROSIM_SCHEDULE_COST_H

#include "../inputs/ds_config.h"
#include "../inputs/platform.h"
#include "../model/activations.h"
#include "../model/flops.h"
#include "../model/kernels.h"

typedef struct StepCost {
    double gpu_flops_per_s; /* engine units per second of GPU time */
    double layer_fwd;       /* one layer, one micro-batch, in engine units */
    double layer_bwd;       /* its backward kernels */
    double layer_recompute; /* re-run before backward: the full forward, or the attention
                               core with selective recomputation */
    double head_fwd;        /* embedding, final norm, logits and loss, one micro-batch */
    double head_bwd;
    double optimizer_per_param; /* GPU end-of-step work per parameter updated */
    double moe_layer_fwd;       /* a MoE layer's passes (mixtures of experts; else 0) */
    double moe_layer_bwd;
    double moe_layer_recompute;
    LayerKernels kernels;       /* the passes the above come from, in seconds */
    KernelGpu gpu;              /* the kernel model's GPU, for work outside the layers */
} StepCost;

/* Costs for one micro-batch of setup on platform p. */
void cost_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
               const TrainConfig *train, const Platform *p, StepCost *out);

#endif
