/*
 * cost.c - per-layer work of a step in engine units (see cost.h).
 *
 * Memory-bound traffic per layer: element-wise kernels write every stored activation once in
 * forward and read it once in backward, and the norms, activation functions and dropouts read
 * and write their inputs: about twice the layer's activation bytes in forward and twice again
 * in backward. It is a small share of a large layer's time and a large one of a small layer's.
 */
#include "cost.h"

void cost_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
               const TrainConfig *train, const Platform *p, StepCost *out)
{
    const double rate = platform_peak_flops_per_s(p, train->precision) * p->gpu.gemm_efficiency;
    const double tokens = (double)setup->micro_batch * (double)setup->seq_len;
    StepFlops f;
    RunSetup one = *setup;
    one.global_batch = setup->micro_batch; /* flops_step counts a whole batch: use one GPU's */
    flops_step(cfg, params, &one, &f);
    ActivationBytes act;
    activations_bytes(cfg, setup, &act);
    const double bytes_to_flops = rate / p->gpu.hbm_bw_bytes_per_s;

    /* Attention kernels run at their own efficiency: in engine FLOPs (at the GEMM rate) they
     * count gemm_efficiency / attention_efficiency times their real FLOPs. */
    const double attn_scale = p->gpu.gemm_efficiency / p->gpu.attention_efficiency;
    const double attn = f.attn_core_per_token * tokens * attn_scale;
    const double gemm_attn = (f.layer_fwd_per_token - f.attn_core_per_token) * tokens + attn;
    const double traffic = 2.0 * (double)act.layer_full * bytes_to_flops;
    out->gpu_flops_per_s = rate;
    out->layer_fwd = gemm_attn + traffic;
    out->layer_bwd = 2.0 * gemm_attn + 2.0 * traffic;
    out->layer_recompute = setup->recompute == RECOMPUTE_FULL        ? out->layer_fwd
                           : setup->recompute == RECOMPUTE_SELECTIVE ? attn
                                                                     : 0.0;
    out->head_fwd = f.logits_fwd_per_token * tokens + (double)act.output_layer * bytes_to_flops;
    out->head_bwd =
        2.0 * f.logits_fwd_per_token * tokens + (double)act.output_layer * bytes_to_flops;
    const double adam_bytes = train->precision == PRECISION_FP32 ? 4.0 + 8.0 + 8.0 * 2 : 28.0;
    out->optimizer_per_param = adam_bytes * bytes_to_flops;
}
