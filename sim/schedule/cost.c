/*
 * cost.c - per-layer work of a step in engine units, from the kernel model (see cost.h).
 */
#include "cost.h"

void cost_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
               const TrainConfig *train, const Platform *p, StepCost *out)
{
    (void)params;
    /* the engine's GPU speed (engine/platform_xml.c): one second of GPU time is this much */
    const double rate = platform_peak_flops_per_s(p, train->precision) * p->gpu.gemm_efficiency;
    KernelGpu gpu;
    kernels_gpu(p, train->precision, &gpu);
    out->gpu = gpu;
    kernels_layer(cfg, setup, &gpu, &out->kernels);
    const LayerKernels *k = &out->kernels;
    out->gpu_flops_per_s = rate;
    out->layer_fwd = kernels_pass_s(&gpu, &k->fwd) * rate;
    out->layer_bwd = kernels_pass_s(&gpu, &k->bwd) * rate;
    out->layer_recompute = setup->recompute == RECOMPUTE_FULL ? out->layer_fwd
                           : setup->recompute == RECOMPUTE_SELECTIVE
                               ? kernels_pass_s(&gpu, &k->attn_core) * rate
                           : setup->recompute == RECOMPUTE_SELECTIVE_OP
                               ? kernels_pass_s(&gpu, &k->recompute_op) * rate
                               : 0.0;
    if (cfg->moe.n_experts > 0) {
        /* a mixture of experts: the dense layers above, the MoE layers here */
        kernels_layer_of(cfg, setup, &gpu, false, &out->kernels);
        out->layer_fwd = kernels_pass_s(&gpu, &k->fwd) * rate;
        out->layer_bwd = kernels_pass_s(&gpu, &k->bwd) * rate;
        out->layer_recompute = setup->recompute == RECOMPUTE_FULL ? out->layer_fwd
                               : setup->recompute == RECOMPUTE_SELECTIVE
                                   ? kernels_pass_s(&gpu, &k->attn_core) * rate
                                   : 0.0;
        LayerKernels moe;
        kernels_layer_of(cfg, setup, &gpu, true, &moe);
        out->moe_layer_fwd = kernels_pass_s(&gpu, &moe.fwd) * rate;
        out->moe_layer_bwd = kernels_pass_s(&gpu, &moe.bwd) * rate;
        out->moe_layer_recompute = setup->recompute == RECOMPUTE_FULL ? out->moe_layer_fwd
                                   : setup->recompute == RECOMPUTE_SELECTIVE
                                       ? kernels_pass_s(&gpu, &moe.attn_core) * rate
                                       : 0.0;
    }
    out->head_fwd = kernels_pass_s(&gpu, &k->head_fwd) * rate;
    out->head_bwd = kernels_pass_s(&gpu, &k->head_bwd) * rate;
    /* DeepSpeed's step (runtime/zero/stage_1_and_2.py, stage3.py: step()) first checks the
     * fp16 gradients for overflow (CheckOverflow) and takes the global gradient norm for
     * clipping, each a pass reading the 16-bit gradient partition; FSDP's clip_grad_norm_
     * reads them once. Then fused Adam (FusedAdam / multi_tensor_adam) streams its state. */
    const double grad_passes = train->precision == PRECISION_FP16 ? 2.0 : 1.0;
    const double grad_bytes = train->precision == PRECISION_FP32 ? 4.0 : 2.0;
    const double adam_bytes = train->precision == PRECISION_FP32 ? 4.0 + 8.0 + 8.0 * 2 : 28.0;
    out->optimizer_per_param = kernels_memory_s(&gpu, adam_bytes + grad_passes * grad_bytes) * rate;
}
