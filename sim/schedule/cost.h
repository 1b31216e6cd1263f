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

/* The framework's host work in each pass beside the kernel launches (docs/MODEL.md,
 * "Framework hooks"), for the kernel model's KernelPass.host_s / host_serial_s:
 *  - DeepSpeed ZeRO-3's parameter coordinator (partitioned_param_coordinator.py
 *    fetch_sub_module / release_sub_module, run by the pre- and post-hooks of every submodule
 *    with parameters) walks each parameter it gathers and releases: status bookkeeping, the
 *    all-gather's views (narrow) in and the partitioned data back out, record_stream. So each
 *    pass costs param_host_s per non-persistent parameter tensor; the forward hooks fire again
 *    when full recomputation re-runs a layer. In backward each parameter's gradient hook
 *    (stage3.py reduce_partition_and_remove_grads -> __add_grad_to_ipg_bucket) launches one
 *    copy into the contiguous bucket. Current DeepSpeed's host waits only on its own fetch
 *    events (at most __max_ongoing_fetch_events = 2 outstanding all-gathers, on the gather
 *    stream), never on compute, so this work overlaps the GPU; before 0.6.0 each module's
 *    fetch ended in torch.cuda.synchronize() (_synchronize_communication), so it does not
 *    (is_serial).
 *  - FSDP1 (FlatParamHandle) swaps each original parameter of a unit to its view of the
 *    unsharded flat parameter and back (unshard -> _use_unsharded_views, reshard ->
 *    _use_sharded_views, pre_unshard -> _writeback_orig_params) once per gather: the same
 *    per-parameter cost per pass that gathers the unit; its gradient hook is per unit. */
typedef struct CostHost {
    double layer_tensors;     /* parameter tensors one pass of a dense layer gathers */
    double moe_layer_tensors; /* ... of a MoE layer (its local experts' included) */
    double head_tensors;      /* ... of the model's ends (embedding, final norm, head) */
    double layer_grads;       /* gradient copies launched by one layer's backward hooks */
    double moe_layer_grads;
    double head_grads;
    double param_host_s;  /* platform cpu.param_host_s */
    bool is_serial;       /* behind a device synchronisation (DeepSpeed before 0.6.0) */
    bool has_recompute;   /* a fully recomputed layer runs its hooks again (DeepSpeed) */
    bool has_backward;    /* the backward pass gathers again (not SHARD_GRAD_OP) */
} CostHost;

/* DeepSpeed ZeRO-3's coordinator on params: the tensors above threshold elements (the
 * persistent ones stay gathered and are skipped) of each layer, of a MoE layer's router,
 * shared experts and n_experts / ep local experts, and of the ends; every tensor's gradient
 * hook. per_parameter: the generation before 0.6.0. The dense MLP of a mixture's dense
 * layers is not counted (its modules are not listed). */
void cost_host_zero3(const ModelParams *params, uint64_t threshold, uint64_t ep,
                     bool per_parameter, double param_host_s, CostHost *out);

/* FSDP1's unit of one layer: every parameter tensor of the layer (FSDP shards them all); the
 * embedding and head in the root unit; regathers: the backward gathers the unit again. */
void cost_host_fsdp1(const ModelParams *params, bool regathers, double param_host_s,
                     CostHost *out);

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
    CostHost host;              /* the framework's host work added to each pass */
} StepCost;

/* Which pass of cost_pass_s. */
typedef enum CostPass {
    COST_LAYER_FWD,
    COST_LAYER_BWD,
    COST_MOE_LAYER_FWD,
    COST_MOE_LAYER_BWD,
    COST_HEAD_FWD,
    COST_HEAD_BWD
} CostPass;

/* Costs for one micro-batch of setup on platform p, with no framework host work. */
void cost_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
               const TrainConfig *train, const Platform *p, StepCost *out);

/* ... with the framework's host work `host` (NULL: none) in each pass. */
void cost_step_hosted(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
                      const TrainConfig *train, const Platform *p, const CostHost *host,
                      StepCost *out);

/* Seconds of `pass` (a layer's or the ends' kernels, possibly with more kernels added by the
 * caller) as `kind` of cost->host's passes: with its framework host work. */
double cost_pass_s(const StepCost *cost, const KernelPass *pass, CostPass kind);

#endif
