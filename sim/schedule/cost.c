/*
 * cost.c - per-layer work of a step in engine units, from the kernel model, with the
 * framework's host work per pass (see cost.h).
 */
#include "cost.h"

/* The model's ends above `threshold` elements: the token embedding (with OPT's project_in or
 * BLOOM's embedding norm counted as one), a learned position table, the final norm and an
 * untied head. */
static double end_tensors(const ModelParams *params, uint64_t threshold)
{
    const uint64_t ends[4] = {params->embedding, params->position, params->final_norm,
                              params->lm_head};
    double n = 0.0;
    for (int k = 0; k < 4; k++)
        n += (double)(ends[k] > threshold);
    return n;
}

void cost_host_zero3(const ModelParams *params, uint64_t threshold, uint64_t ep,
                     bool per_parameter, double param_host_s, CostHost *out)
{
    *out = (CostHost){.param_host_s = param_host_s,
                      .is_serial = per_parameter,
                      .has_recompute = true,
                      .has_backward = true};
    for (size_t i = 0; i < params->n_layer_modules; i++) {
        out->layer_tensors += params_module_tensors(&params->layer[i], threshold);
        out->layer_grads += params_module_tensors(&params->layer[i], 0);
    }
    out->moe_layer_tensors = out->layer_tensors;
    out->moe_layer_grads = out->layer_grads;
    const double local = ep > 0 ? (double)(params->n_experts / ep) : 0.0;
    for (size_t i = 0; i < params->n_moe_modules; i++) {
        const ParamModule *m = &params->moe[i];
        const double copies = m->is_expert ? local : 1.0;
        out->moe_layer_tensors += copies * params_module_tensors(m, threshold);
        out->moe_layer_grads += copies * params_module_tensors(m, 0);
    }
    out->head_tensors = end_tensors(params, threshold);
    out->head_grads = end_tensors(params, 0);
}

void cost_host_fsdp1(const ModelParams *params, bool regathers, double param_host_s,
                     CostHost *out)
{
    *out = (CostHost){.param_host_s = param_host_s, .has_backward = regathers};
    for (size_t i = 0; i < params->n_layer_modules; i++)
        out->layer_tensors += params_module_tensors(&params->layer[i], 0);
    out->moe_layer_tensors = out->layer_tensors;
    out->head_tensors = end_tensors(params, 0);
}

double cost_pass_s(const StepCost *cost, const KernelPass *pass, CostPass kind)
{
    const CostHost *h = &cost->host;
    const bool is_bwd = kind == COST_LAYER_BWD || kind == COST_MOE_LAYER_BWD ||
                        kind == COST_HEAD_BWD;
    const double tensors[] = {h->layer_tensors,     h->layer_tensors, h->moe_layer_tensors,
                              h->moe_layer_tensors, h->head_tensors,  h->head_tensors};
    const double grads[] = {0.0, h->layer_grads, 0.0, h->moe_layer_grads, 0.0, h->head_grads};
    KernelPass p = *pass;
    /* each gathered tensor is walked when fetched and when released, in every pass that
     * gathers (param_host_s is the cost of both) */
    const double host_s = is_bwd && !h->has_backward ? 0.0 : tensors[kind] * h->param_host_s;
    if (h->is_serial)
        p.host_serial_s += host_s;
    else
        p.host_s += host_s;
    p.n_kernels += grads[kind]; /* the gradient hooks' copies, launched by the host */
    return kernels_pass_s(&cost->gpu, &p);
}

/* The recomputation before a layer's backward: the forward again (with its hooks, where the
 * framework's forward hooks fire again), the attention core, or op-level's unsaved kernels. */
static double recompute_s(const StepCost *cost, const RunSetup *setup, const LayerKernels *k,
                          CostPass fwd)
{
    switch (setup->recompute) {
    case RECOMPUTE_FULL:
        return cost->host.has_recompute ? cost_pass_s(cost, &k->fwd, fwd)
                                        : kernels_pass_s(&cost->gpu, &k->fwd);
    case RECOMPUTE_SELECTIVE:
        return kernels_pass_s(&cost->gpu, &k->attn_core);
    case RECOMPUTE_SELECTIVE_OP:
        return kernels_pass_s(&cost->gpu, &k->recompute_op);
    default:
        return 0.0;
    }
}

void cost_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
               const TrainConfig *train, const Platform *p, StepCost *out)
{
    cost_step_hosted(cfg, params, setup, train, p, NULL, out);
}

void cost_step_hosted(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
                      const TrainConfig *train, const Platform *p, const CostHost *host,
                      StepCost *out)
{
    (void)params;
    /* the engine's GPU speed (engine/platform_xml.c): one second of GPU time is this much */
    const double rate = platform_peak_flops_per_s(p, train->precision) * p->gpu.gemm_efficiency;
    KernelGpu gpu;
    kernels_gpu(p, train->precision, &gpu);
    out->gpu = gpu;
    out->host = host ? *host : (CostHost){0};
    out->gpu_flops_per_s = rate;
    out->moe_layer_fwd = out->moe_layer_bwd = out->moe_layer_recompute = 0.0;
    const LayerKernels *k = &out->kernels;
    if (cfg->moe.n_experts > 0) {
        /* a mixture of experts: the dense layers here, the MoE layers below */
        kernels_layer_of(cfg, setup, &gpu, false, &out->kernels);
        LayerKernels moe;
        kernels_layer_of(cfg, setup, &gpu, true, &moe);
        out->moe_layer_fwd = cost_pass_s(out, &moe.fwd, COST_MOE_LAYER_FWD) * rate;
        out->moe_layer_bwd = cost_pass_s(out, &moe.bwd, COST_MOE_LAYER_BWD) * rate;
        /* the MoE block's op-level policy is not modelled: only full and selective */
        out->moe_layer_recompute = setup->recompute == RECOMPUTE_SELECTIVE_OP
                                       ? 0.0
                                       : recompute_s(out, setup, &moe, COST_MOE_LAYER_FWD) * rate;
    } else {
        kernels_layer(cfg, setup, &gpu, &out->kernels);
    }
    out->layer_fwd = cost_pass_s(out, &k->fwd, COST_LAYER_FWD) * rate;
    out->layer_bwd = cost_pass_s(out, &k->bwd, COST_LAYER_BWD) * rate;
    out->layer_recompute =
        cfg->moe.n_experts > 0 && setup->recompute == RECOMPUTE_SELECTIVE_OP
            ? 0.0
            : recompute_s(out, setup, k, COST_LAYER_FWD) * rate;
    out->head_fwd = cost_pass_s(out, &k->head_fwd, COST_HEAD_FWD) * rate;
    out->head_bwd = cost_pass_s(out, &k->head_bwd, COST_HEAD_BWD) * rate;
    /* DeepSpeed's step (runtime/zero/stage_1_and_2.py, stage3.py: step()) first checks the
     * fp16 gradients for overflow (CheckOverflow) and takes the global gradient norm for
     * clipping, each a pass reading the 16-bit gradient partition; FSDP's clip_grad_norm_
     * reads them once. Then fused Adam (FusedAdam / multi_tensor_adam) streams its state. */
    const double grad_passes = train->precision == PRECISION_FP16 ? 2.0 : 1.0;
    const double grad_bytes = train->precision == PRECISION_FP32 ? 4.0 : 2.0;
    const double adam_bytes = train->precision == PRECISION_FP32 ? 4.0 + 8.0 + 8.0 * 2 : 28.0;
    out->optimizer_per_param = kernels_memory_s(&gpu, adam_bytes + grad_passes * grad_bytes) * rate;
}
