/*
 * comm_volume.c - per-rank collective bytes by ZeRO stage (see comm_volume.h).
 */
#include "comm_volume.h"

/* Bytes a rank sends in a ring all-gather or reduce-scatter of `bytes`: (N-1)/N of it. */
static uint64_t ring_share(uint64_t bytes, uint64_t n)
{
    return (uint64_t)((double)bytes * (double)(n - 1) / (double)n + 0.5);
}

/* The ZeRO accounting for `psi` parameters data-parallel over n_gpus ranks. */
static void dp_volume(const TrainConfig *cfg, uint64_t psi, uint64_t persistent,
                      const ZeroMemory *mem, uint64_t n_gpus, uint64_t grad_accum,
                      CommVolume *out);

void comm_volume(const TrainConfig *cfg, const ModelParams *params, const ZeroMemory *mem,
                 uint64_t n_gpus, uint64_t grad_accum, CommVolume *out)
{
    *out = (CommVolume){0};
    /* experts split over ep ranks: the rest over all ranks, the rank's experts over the
     * n_gpus / ep holding the same ones */
    const uint64_t dense = params->total - params->experts_total;
    const uint64_t local = mem->local_elems > dense ? mem->local_elems - dense : 0;
    if (params->n_experts > 0 && local > 0 && local < params->experts_total) {
        const uint64_t ep = params->experts_total / local;
        CommVolume experts = {0};
        dp_volume(cfg, dense, mem->persistent_elems, mem, n_gpus, grad_accum, out);
        dp_volume(cfg, local, 0, mem, n_gpus / ep, grad_accum, &experts);
        out->all_reduce += experts.all_reduce;
        out->all_gather += experts.all_gather;
        out->reduce_scatter += experts.reduce_scatter;
    } else {
        dp_volume(cfg, params->total, mem->persistent_elems, mem, n_gpus, grad_accum, out);
    }
    const uint64_t psi = params->total;
    out->total = out->all_reduce + out->all_gather + out->reduce_scatter;
    out->total_in_psi = psi ? (double)out->total / ((double)psi * mem->param_bytes) : 0.0;
}

static void dp_volume(const TrainConfig *cfg, uint64_t psi, uint64_t persistent,
                      const ZeroMemory *mem, uint64_t n_gpus, uint64_t grad_accum,
                      CommVolume *out)
{
    const uint64_t grads = psi * mem->grad_comm_bytes; /* as reduced (communication_data_type) */
    const uint64_t weights = psi * mem->param_bytes;
    switch (cfg->zero.stage) {
    case 0: out->all_reduce = 2 * ring_share(grads, n_gpus); break;
    case 1:
        out->reduce_scatter = ring_share(grads, n_gpus);
        out->all_gather = ring_share(weights, n_gpus);
        break;
    case 2:
        out->reduce_scatter = grad_accum * ring_share(grads, n_gpus);
        out->all_gather = ring_share(weights, n_gpus);
        break;
    default: {
        /* Sharded over n_shard GPUs (all, or a MiCS / HYBRID_SHARD group); the gradient
         * shards are then all-reduced across the N / n_shard replicas. */
        uint64_t n_shard = zero_shard_gpus(&cfg->zero, n_gpus);
        uint64_t gathered = (psi - persistent) * mem->param_bytes;
        out->all_gather = grad_accum * 2 * ring_share(gathered, n_shard);
        /* after the optimizer step the persistent parameters are all-gathered once
         * (DeepSpeed stage3.py _post_step: persistent_parameters[0].all_gather) */
        out->all_gather += ring_share(persistent * mem->param_bytes, n_shard);
        out->reduce_scatter = grad_accum * ring_share(grads, n_shard);
        if (n_shard < n_gpus)
            out->all_reduce = grad_accum * 2 * ring_share(grads / n_shard, n_gpus / n_shard);
        break;
    }
    }
}

