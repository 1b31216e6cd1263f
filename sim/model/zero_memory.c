/*
 * zero_memory.c - model-state bytes per GPU, CPU and NVMe by ZeRO stage (see zero_memory.h).
 */
#include "zero_memory.h"

#include "zero3_walk.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

double zero_memory_paper_bytes(int stage, double psi, double n)
{
    switch (stage) {
    case 0: return 16.0 * psi;
    case 1: return 4.0 * psi + 12.0 * psi / n;
    case 2: return 2.0 * psi + 14.0 * psi / n;
    default: return 16.0 * psi / n;
    }
}

/* Buffers DeepSpeed allocates on the GPU beside the model states. */
unsigned zero_memory_reduce_buffer_bytes(const ZeroMemory *m)
{
    return m->grad_bytes + (m->grad_comm_bytes != m->grad_bytes ? m->grad_comm_bytes : 0u);
}

static uint64_t gpu_buffers(const ZeroConfig *z, const ModelParams *params, uint64_t n_layers,
                            uint64_t ep, uint64_t psi, uint64_t persistent, const ZeroMemory *m,
                            uint64_t n_gpus)
{
    const unsigned reduce_bytes = zero_memory_reduce_buffer_bytes(m);
    uint64_t bucket = min_u64(z->reduce_bucket_size, psi) * reduce_bytes;
    /* the embedding or output projection, gathered (and its gradient made) alone */
    uint64_t end_module = params->embedding > params->lm_head ? params->embedding : params->lm_head;
    if (z->stage < 3) {
        /* Stage 1-2: the backward's contiguous gradient (ipg) buffers, reduce_bucket_size
         * elements of the 16-bit gradients' dtype each, two alternating with overlap_comm,
         * under contiguous_gradients (always modelled: ds_config.c) on any GPU count
         * (stage_1_and_2.py v0.19.5 setup_buckets, freed by _release_ipg_buffers). Stage 0
         * is the engine's own all-reduce (engine.py allreduce_gradients ->
         * buffered_allreduce_fallback -> allreduce_no_retain -> allreduce_and_copy): no ipg
         * buffer, each bucket flattened (allreduce_bucket: self.flatten, and its
         * communication-type copy) and copied back before the next, whatever overlap_comm.
         * Beside them, on more than one GPU, the bucket being reduced (average_tensor's
         * flattened slices: allreduce_bucket). ZeRO-2 also holds the largest module's full
         * gradient between its backward kernel and the hook that copies it into the bucket
         * (reduce_independent_p_g_buckets_and_remove_grads). */
        uint64_t ipg = 0;
        if (z->stage >= 1)
            ipg = (z->overlap_comm ? 2 : 1) * z->reduce_bucket_size * m->grad_bytes;
        if (n_gpus == 1)
            return ipg;
        uint64_t transient = 0;
        if (z->stage == 2) {
            transient = params->largest_layer_module;
            if (end_module > transient)
                transient = end_module;
        }
        if (z->stage == 0) /* engine.py allreduce_no_retain: one flattened bucket at a time */
            return bucket;
        return ipg + bucket + transient * m->grad_bytes;
    }
    /* Stage 3 (DeepSpeed from 0.6): under contiguous_gradients one ipg buffer of
     * reduce_bucket_size elements in the communication dtype, held for the run on any GPU
     * count (stage3.py __init__ "# IPG", IPGBucketZ3, v0.19.5). */
    const uint64_t ipg3 =
        z->contiguous_gradients ? z->reduce_bucket_size * (uint64_t)m->grad_comm_bytes : 0;
    /* Stage 3: the most gathered parameters alive at once in either pass (the module
     * computing and what DeepSpeed prefetches; in backward with the module's gradients:
     * zero3_walk.h), or the embedding or output projection alone when more, all 16-bit;
     * and the gradient bucket being reduced. A mixture of experts keeps the layer-level
     * bound: the largest layer as a rank gathers it (its local experts only) plus the
     * prefetch window, within stage3_max_live_parameters (the walk does not yet cover the
     * experts' modules). */
    if (params->n_moe_layers > 0) {
        uint64_t unit = params->per_layer + params->dense_mlp;
        const uint64_t moe_layer = params->per_layer + params->moe_replicated +
                                   params->n_experts / ep * params->expert;
        if (params->n_moe_layers == n_layers || moe_layer > unit)
            unit = moe_layer;
        if (end_module > unit)
            unit = end_module;
        uint64_t live = min_u64(unit + z->prefetch_bucket_size, z->max_live_parameters);
        live = min_u64(live, psi);
        return (live + persistent) * m->param_bytes + (n_gpus > 1 ? bucket : 0) + ipg3;
    }
    double live = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        Zero3Walk w;
        zero3_walk(params->layer, params->n_layer_modules, z->param_persistence_threshold,
                   z->prefetch_bucket_size, z->max_live_parameters, pass == 1, m->param_bytes,
                   m->grad_bytes, &w);
        if (w.live_peak_bytes > live)
            live = w.live_peak_bytes;
    }
    const double end_bytes = (double)end_module * (m->param_bytes + m->grad_bytes);
    if (end_bytes > live)
        live = end_bytes;
    /* Persistent parameters stay gathered beside their partition (DeepSpeed keeps both). */
    return (uint64_t)(live + 0.5) + persistent * m->param_bytes + (n_gpus > 1 ? bucket : 0) +
           ipg3;
}

uint64_t zero_step_copies_bytes(const TrainConfig *cfg, uint64_t psi, uint64_t part)
{
    const ZeroConfig *z = &cfg->zero;
    const bool mixed = cfg->precision != PRECISION_FP32;
    if (z->offload_optimizer.device != OFFLOAD_NONE)
        return 0; /* the fp32 gradient partition is made on the host */
    if (z->stage == 0)
        return mixed ? 8 * psi : 0; /* FP16_Optimizer.step: fp32 casts, then their flat copy */
    const uint64_t grad_bytes = mixed ? 2 : 4;
    const uint64_t elems = z->stage == 3 ? min_u64(z->sub_group_size, part) : part;
    /* flatten (grad_bytes) + cast to fp32 (4; the same tensor in fp32 training) */
    return elems * (grad_bytes + (mixed ? 4 : 0));
}

uint64_t zero_shard_gpus(const ZeroConfig *z, uint64_t n_gpus)
{
    return z->stage == 3 && z->shard_size > 0 && z->shard_size < n_gpus ? z->shard_size : n_gpus;
}

uint64_t zero_offloaded_elems(const ZeroConfig *z, uint64_t part)
{
    if (z->offload_optimizer.device == OFFLOAD_NONE)
        return 0;
    if (z->stage != 3 || z->offload_optimizer.device != OFFLOAD_CPU ||
        z->offload_optimizer.ratio >= 1.0 || part == 0)
        return part;
    const uint64_t sub = min_u64(z->sub_group_size, part);
    const uint64_t n_sub = (part + sub - 1) / sub;
    const uint64_t on_gpu = (uint64_t)((1.0 - z->offload_optimizer.ratio) * (double)n_sub);
    return on_gpu >= n_sub ? 0 : part - on_gpu * sub;
}

void zero_memory(const TrainConfig *cfg, const ModelParams *params, uint64_t n_layers,
                 uint64_t n_gpus, ZeroMemory *out)
{
    zero_memory_ep(cfg, params, n_layers, n_gpus, 1, out);
}

void zero_memory_ep(const TrainConfig *cfg, const ModelParams *params, uint64_t n_layers,
                    uint64_t n_gpus, uint64_t ep_size, ZeroMemory *out)
{
    *out = (ZeroMemory){0};
    const ZeroConfig *z = &cfg->zero;
    const uint64_t ep = ep_size > 1 && params->n_experts > 0 ? ep_size : 1;
    /* what a rank holds unsharded: the non-expert parameters and its share of the experts */
    const uint64_t experts_local = params->experts_total / ep;
    const uint64_t dense = params->total - params->experts_total;
    const uint64_t psi = dense + experts_local;
    const bool mixed = cfg->precision != PRECISION_FP32;
    const uint64_t n_shard = zero_shard_gpus(z, n_gpus);
    /* experts are partitioned inside their expert-data-parallel group (n_gpus / ep ranks) */
    uint64_t n_expert_shard = n_shard / ep;
    if (n_expert_shard == 0)
        n_expert_shard = 1;
    const uint64_t expert_part = (experts_local + n_expert_shard - 1) / n_expert_shard;
    const uint64_t part = ep > 1 ? (dense + n_shard - 1) / n_shard + expert_part
                                 : (psi + n_shard - 1) / n_shard;

    out->partition_elems = part;
    out->local_elems = psi;
    out->expert_partition_elems = ep > 1 ? expert_part : 0;
    out->param_bytes = mixed ? 2 : 4;
    out->grad_bytes = mixed ? 2 : 4;
    out->grad_comm_bytes = cfg->comm_grad_bytes ? cfg->comm_grad_bytes : out->grad_bytes;
    /* Mixed precision keeps an fp32 master copy and fp32 optimizer states (ZeRO, Sec. 3.1);
     * DeepSpeed's bf16 section can keep either in bf16 (bf16_master_weights_and_grads,
     * bf16_optimizer_states: 2 bytes each, DeepSpeedExamples bf16_master_weight README). */
    const bool is_bf16 = cfg->precision == PRECISION_BF16;
    const unsigned master_bytes = mixed ? (is_bf16 && cfg->is_bf16_master ? 2u : 4u) : 0u;
    const unsigned state_bytes = is_bf16 && cfg->is_bf16_optimizer_states ? 2u : 4u;
    out->optimizer_bytes = master_bytes + state_bytes * (unsigned)cfg->optimizer_n_states;

    const uint64_t p = out->param_bytes, g = out->grad_bytes, k = out->optimizer_bytes;
    out->gpu_params = z->stage >= 3 ? p * part : p * psi;
    out->gpu_grads = z->stage >= 2 ? g * part : g * psi;
    out->gpu_optimizer = z->stage >= 1 ? k * part : k * psi;

    if (z->stage == 3)
        out->persistent_elems = params_persistent(params, n_layers, z->param_persistence_threshold);

    const OffloadConfig *oo = &z->offload_optimizer;
    if (oo->device != OFFLOAD_NONE) {
        /* ZeRO-3's partial offload keeps whole sub-groups of the optimizer on the GPU. */
        uint64_t offloaded = zero_offloaded_elems(z, part);
        uint64_t kept = part - offloaded;
        out->offloaded_elems = offloaded;
        out->gpu_optimizer = k * kept;
        /* The fp32 gradient partition lives beside the optimizer on the host; the GPU keeps
         * only the reduction buckets (stage 2/3; stage 1 keeps its full 16-bit gradients),
         * and, for the sub-groups partial offload keeps there, their fp32 gradients (stage3.py
         * allocates each sub-group's gradient buffer on its optimizer's device). */
        out->cpu_grads = 4 * offloaded;
        if (z->stage >= 2)
            out->gpu_grads = 4 * kept;
        if (oo->device == OFFLOAD_CPU) {
            out->cpu_optimizer = k * offloaded;
        } else {
            /* ZeRO-Infinity swaps the fp32 gradients out with the states (DeepSpeed's
             * PartitionedOptimizerSwapper.swap_out_gradients). */
            out->nvme_optimizer = k * offloaded;
            out->nvme_grads = out->cpu_grads;
            out->cpu_grads = 0;
            /* Pinned swap buffers (DeepSpeed's OptimizerSwapper): buffer_count fp32 tensors,
             * each the size of the largest sub-group. */
            uint64_t sub_group = min_u64(z->sub_group_size, offloaded);
            out->cpu_buffers += oo->buffer_count * sub_group * 4;
        }
    }
    const OffloadConfig *op = &z->offload_param;
    if (op->device != OFFLOAD_NONE) {
        out->gpu_params = 0;
        if (op->device == OFFLOAD_CPU) {
            out->cpu_params = p * part;
        } else {
            out->nvme_params = p * part;
            out->cpu_buffers += op->buffer_count * op->buffer_size * p;
        }
    }
    out->gpu_model_states = out->gpu_params + out->gpu_grads + out->gpu_optimizer;
    out->gpu_buffers =
        gpu_buffers(z, params, n_layers, ep, psi, out->persistent_elems, out, n_gpus);
    out->gpu_step_copies = zero_step_copies_bytes(cfg, psi, part);
}
