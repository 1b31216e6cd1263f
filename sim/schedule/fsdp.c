/*
 * fsdp.c - FSDP strategies mapped onto the ZeRO schedules (see fsdp.h).
 */
#include "fsdp.h"

#include "../common/choices.h"

_Static_assert(PRECISION_FP32 == 0 && PRECISION_FP16 == 1 && PRECISION_BF16 == 2,
               "choices_fsdp_param_dtype lists the dtypes in Precision order");

/* The names are common/choices.h's table, in FsdpStrategy order. */
_Static_assert(FSDP_NONE == 0 && FSDP_FULL_SHARD == 1 && FSDP_SHARD_GRAD_OP == 2 &&
                   FSDP_NO_SHARD == 3 && FSDP_HYBRID_SHARD == 4,
               "choices_fsdp lists the strategies in FsdpStrategy order");

int fsdp_parse(const char *name, FsdpStrategy *out)
{
    int s = choices_parse(&choices_fsdp, name);
    if (s <= FSDP_NONE) /* "none" is no FSDP, expressed by leaving --fsdp out */
        return -1;
    *out = (FsdpStrategy)s;
    return 0;
}

const char *fsdp_name(FsdpStrategy s)
{
    return choices_name(&choices_fsdp, (int)s);
}

int fsdp_apply(FsdpStrategy s, bool backward_prefetch, uint64_t gpus_per_node, TrainConfig *train,
               ScheduleOptions *opts, Err *err)
{
    ZeroConfig *z = &train->zero;
    if (z->offload_optimizer.device != OFFLOAD_NONE || z->offload_param.device != OFFLOAD_NONE)
        return err_set(err,
                       "%s: zero_optimization.offload_*: expected no offload with --fsdp "
                       "(FSDP's CPUOffload is not modelled), got optimizer \"%s\", params \"%s\"",
                       train->file, ds_config_offload_name(z->offload_optimizer.device),
                       ds_config_offload_name(z->offload_param.device));
    z->stage = s == FSDP_NO_SHARD ? 0 : 3;
    z->overlap_comm = true;
    z->reduce_scatter = true;
    z->multi_rank_bucket_allreduce = false;
    z->reduce_bucket_size = 1;                /* each unit's gradients reduced on their own */
    z->prefetch_bucket_size = UINT64_MAX / 4; /* the whole next unit */
    z->max_live_parameters = UINT64_MAX / 4;
    z->param_persistence_threshold = 0; /* FSDP shards every parameter */
    z->shard_size = s == FSDP_HYBRID_SHARD ? gpus_per_node : 0;
    opts->fsdp = s;
    opts->fsdp_backward_prefetch = backward_prefetch;
    strlist_addf(&train->defaults_used,
                 "--fsdp %s: %s, one unit per layer, gradients reduced "
                 "per unit in every micro-batch, backward prefetch %s%s",
                 fsdp_name(s), s == FSDP_NO_SHARD ? "all-reduce (DDP)" : "ZeRO-3 schedule",
                 backward_prefetch ? "on" : "off",
                 s == FSDP_HYBRID_SHARD ? ", sharded inside each node" : "");
    return 0;
}

int fsdp_apply_param_dtype(Precision param_dtype, TrainConfig *train, ScheduleOptions *opts,
                           Err *err)
{
    if (param_dtype != PRECISION_FP32 && param_dtype != train->precision)
        return err_set(err,
                       "%s: %s: expected --fsdp-param-dtype fp32 or the config's training "
                       "precision (%s), got %s",
                       train->file,
                       train->precision == PRECISION_FP32   ? "fp16/bf16 (neither enabled)"
                       : train->precision == PRECISION_BF16 ? "bf16.enabled"
                                                            : "fp16.enabled",
                       precision_name(train->precision), precision_name(param_dtype));
    opts->fsdp_param_bytes = param_dtype == PRECISION_FP32 ? 4u : 2u;
    if (!fsdp_has_autocast_casts(opts, train)) {
        strlist_addf(&train->defaults_used,
                     "FSDP MixedPrecision param_dtype %s: parameters gathered and used in the "
                     "training precision",
                     precision_name(param_dtype));
        return 0;
    }
    /* _flat_param.py FlatParamHandle._init_param_reduce_dtypes: without a param_dtype the
     * reduce dtype is MixedPrecision.reduce_dtype or the parameter's own (fp32) */
    const bool reduce_given = train->comm_grad_bytes != 0;
    if (!reduce_given)
        train->comm_grad_bytes = 4;
    strlist_addf(&train->defaults_used,
                 "FSDP MixedPrecision param_dtype fp32: fp32 units gathered (4 bytes per "
                 "parameter), cast to %s by autocast at each use, reduce_dtype %s%s",
                 precision_name(train->precision), train->comm_grad_bytes == 4 ? "fp32" : "16-bit",
                 reduce_given ? " (communication_data_type)" : " (the parameter dtype)");
    return 0;
}

bool fsdp_has_autocast_casts(const ScheduleOptions *opts, const TrainConfig *train)
{
    return opts->fsdp != FSDP_NONE && opts->fsdp_param_bytes == 4 &&
           train->precision != PRECISION_FP32;
}

static KernelPass pass_sum(const KernelPass *a, const KernelPass *b)
{
    return (KernelPass){.gemm_s = a->gemm_s + b->gemm_s,
                        .gemm_flops = a->gemm_flops + b->gemm_flops,
                        .attention_s = a->attention_s + b->attention_s,
                        .memory_s = a->memory_s + b->memory_s,
                        .n_kernels = a->n_kernels + b->n_kernels,
                        .host_s = a->host_s + b->host_s,
                        .host_serial_s = a->host_serial_s + b->host_serial_s};
}

void fsdp2_cost_copy_out(const ModelParams *p, unsigned param_bytes, bool regathers,
                         StepCost *cost)
{
    const KernelGpu *g = &cost->gpu;
    const double rate = cost->gpu_flops_per_s;
    /* the unit read from the all-gather's output and written into the parameters */
    const double layer_s = kernels_memory_s(g, 2.0 * (double)p->per_layer * param_bytes);
    const double head = (double)params_output_projection(p) + (double)p->final_norm;
    const double head_s = kernels_memory_s(g, 2.0 * head * param_bytes);
    cost->layer_fwd += layer_s * rate;
    cost->head_fwd += head_s * rate;
    if (regathers) {
        cost->layer_bwd += layer_s * rate;
        cost->head_bwd += head_s * rate;
    }
}

double fsdp_reduce_prep_s(const KernelGpu *g, bool is_fsdp2, double bytes, unsigned grad_bytes,
                          unsigned reduce_bytes)
{
    if (bytes <= 0 || reduce_bytes == 0)
        return 0.0;
    const double elems = bytes / reduce_bytes;
    KernelPass pass = {.n_kernels = 0};
    if (is_fsdp2 || grad_bytes != reduce_bytes) { /* the copy-in, or FSDP1's cast */
        pass.memory_s += kernels_memory_s(g, elems * (grad_bytes + reduce_bytes));
        pass.n_kernels += 1;
    }
    if (!is_fsdp2) { /* FSDP1's predivide, in place */
        pass.memory_s += kernels_memory_s(g, elems * 2.0 * reduce_bytes);
        pass.n_kernels += 1;
    }
    return kernels_pass_s(g, &pass);
}

void fsdp_cost_autocast(const ModelParams *p, const RunSetup *setup, StepCost *cost)
{
    const KernelGpu *g = &cost->gpu;
    const LayerKernels *k = &cost->kernels;
    const double rate = cost->gpu_flops_per_s, e = (double)setup->act_bytes;
    KernelPass layer, head; /* fp32 -> 16-bit and 16-bit -> fp32 move the same bytes */
    kernels_weight_casts(p, g, 4.0, e, &layer, &head);
    KernelPass fwd = pass_sum(&k->fwd, &layer), bwd = pass_sum(&k->bwd, &layer);
    KernelPass head_fwd = pass_sum(&k->head_fwd, &head), head_bwd = pass_sum(&k->head_bwd, &head);
    cost->layer_fwd = cost_pass_s(cost, &fwd, COST_LAYER_FWD) * rate;
    cost->layer_bwd = cost_pass_s(cost, &bwd, COST_LAYER_BWD) * rate;
    cost->head_fwd = cost_pass_s(cost, &head_fwd, COST_HEAD_FWD) * rate;
    cost->head_bwd = cost_pass_s(cost, &head_bwd, COST_HEAD_BWD) * rate;
    if (setup->recompute == RECOMPUTE_FULL) {
        /* the recomputed forward runs inside the unit's backward: no gather, no hooks */
        cost->layer_recompute = kernels_pass_s(g, &fwd) * rate;
    } else if (setup->recompute == RECOMPUTE_SELECTIVE_OP) {
        KernelPass re = pass_sum(&k->recompute_op, &layer);
        cost->layer_recompute = kernels_pass_s(g, &re) * rate;
    } /* selective recomputation re-runs the attention core, which has no weights */
}
