/*
 * zero_schedule.c - event graphs of DDP and ZeRO-1/2/3 steps (see zero_schedule.h).
 *
 * Ranks are symmetric, so the builder (builder.h) walks the step once and emits each op for
 * every rank: per-rank state is kept in arrays indexed by rank (the last compute op, the
 * reduce buckets in flight, what the next op must wait for). Collectives run over group sets
 * (the world, shard groups, replica groups), one instance per group.
 */
#include "zero_schedule.h"

#include "builder.h"
#include "fsdp.h"

#include "../common/choices.h"
#include "../model/moe.h"

_Static_assert(SCHEDULE_DEEPSPEED == 0 && SCHEDULE_TEXTBOOK == 1,
               "choices_schedule lists the variants in ScheduleVariant order");
#include "../common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void builder_depend(Builder *b, OpId before, OpId after)
{
    if (before != GRAPH_NO_OP)
        graph_depend(b->g, before, after);
}

/* Appends a GPU compute op on every rank, after whatever each rank must wait for. */
static void compute_all(Builder *b, OpPurpose purpose, double amount, uint32_t label)
{
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId id = graph_compute(b->g, r, STREAM_COMPUTE, DEVICE_GPU, purpose, amount, label);
        builder_depend(b, b->wait_gather[r], id);
        builder_depend(b, b->wait_bucket[r], id);
        builder_depend(b, b->wait_copy[r], id);
        b->wait_gather[r] = b->wait_bucket[r] = b->wait_copy[r] = GRAPH_NO_OP;
        b->last_compute[r] = id;
    }
}

static void collective_set(Builder *b, const GroupSet *set, CollectiveKind kind, StreamKind stream,
                           double bytes, uint32_t n_calls, uint32_t label);

static bool is_moe_layer(const Builder *b, uint32_t u)
{
    return model_config_is_moe_layer(b->model, u);
}

/* A MoE layer's token exchange (model/moe.h): the dispatch all-to-all over the rank's
 * expert-parallel group, then the combine, on the compute stream between the kernels that
 * produce and consume them, as DeepSpeed-MoE runs its _AllToAll in the layer's forward (and
 * backward runs both again on the gradients). */
static void all_to_all_pair(Builder *b)
{
    if (b->ep < 2 || b->a2a_bytes <= 0)
        return;
    const uint32_t labels[2] = {b->label_a2a_dispatch, b->label_a2a_combine};
    for (int k = 0; k < 2; k++) {
        collective_set(b, &b->ep_groups, COLL_ALL_TO_ALL, STREAM_COMPUTE, b->a2a_bytes, 1,
                       labels[k]);
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            builder_depend(b, b->wait_gather[r], b->ops[r]);
            b->wait_gather[r] = GRAPH_NO_OP;
            b->last_compute[r] = b->ops[r];
        }
    }
}

/* One instance per group of the set, standing for n_calls NCCL calls of bytes / n_calls;
 * b->ops[rank] gets each rank's op. */
static void collective_set(Builder *b, const GroupSet *set, CollectiveKind kind, StreamKind stream,
                           double bytes, uint32_t n_calls, uint32_t label)
{
    OpId *member_ops = b->scratch;
    for (uint32_t k = 0; k < set->n_groups; k++) {
        uint32_t n;
        const uint32_t *members = graph_group(b->g, set->groups[k], &n);
        uint32_t instance = graph_collective(b->g, kind, set->groups[k], stream, bytes, members[0],
                                             label, member_ops);
        if (set->n_logical > n)
            graph_collective_set_logical(b->g, instance, set->n_logical);
        if (n_calls > 1)
            graph_collective_set_calls(b->g, instance, n_calls);
        if (b->opts->fsdp != FSDP_NONE && kind == COLL_REDUCE_SCATTER && set == &b->shards)
            /* FSDP prepares each reduce-scatter's input first (fsdp.h) */
            graph_collective_set_overhead(
                b->g, instance,
                fsdp_reduce_prep_s(&b->cost.gpu, b->opts->is_fsdp2, bytes,
                                   b->opts->fsdp_param_bytes ? b->opts->fsdp_param_bytes
                                                             : b->mem.grad_bytes,
                                   b->mem.grad_comm_bytes));
        if (b->is_list_api && set == &b->shards &&
            (kind == COLL_ALL_GATHER || kind == COLL_REDUCE_SCATTER)) {
            /* DeepSpeed before 0.6: each call on c10d's list of one tensor per rank */
            const double calls = n_calls > 1 ? (double)n_calls : 1.0;
            graph_collective_set_overhead(
                b->g, instance,
                calls * kernels_c10d_list_copies_s(&b->cost.gpu, kind == COLL_ALL_GATHER,
                                                   bytes / calls, (double)b->n_shard));
        }
        if (b->opts->is_list_param_gather && (b->z->stage == 1 || b->z->stage == 2) &&
            !b->is_textbook && b->opts->fsdp == FSDP_NONE && set == &b->world &&
            kind == COLL_ALL_GATHER) {
            /* the step's parameter all-gather before 0.13: dist.all_gather(shard_list, ...)
             * per shard of allgather_bucket_size on c10d's list API, whose outputs are
             * views of the partitions: the copies out of NCCL's flat buffer, one per rank
             * (each byte read and written once), and no zero-fill, the reduce-scatter's
             * count of kernels_c10d_list_copies_s */
            const double calls = n_calls > 1 ? (double)n_calls : 1.0;
            const double ranks = set->n_logical > n ? (double)set->n_logical : (double)n;
            graph_collective_set_overhead(
                b->g, instance,
                calls * kernels_c10d_list_copies_s(&b->cost.gpu, false, bytes / calls, ranks));
        }
        if (b->is_grad_fallback && kind == COLL_ALL_REDUCE &&
            set == (b->z->stage == 3 ? &b->shards : &b->world)) {
            /* without contiguous_gradients (ZeRO-3 before 0.6, ZeRO-1: stage3.py and
             * stage2.py allreduce_bucket, allreduce_and_copy): per call a flatten of the
             * bucket (torch.cat) and the div_ by the world size before NCCL, one copy_ per
             * gradient tensor back out of it after: the bucket's bytes read and written
             * three times */
            const double calls = n_calls > 1 ? (double)n_calls : 1.0;
            KernelPass pass = {.memory_s = kernels_memory_s(&b->cost.gpu, 6.0 * bytes),
                               .n_kernels = 2.0 * calls + (double)b->bucket_tensors};
            graph_collective_set_overhead(b->g, instance, kernels_pass_s(&b->cost.gpu, &pass));
        }
        for (uint32_t i = 0; i < n; i++)
            b->ops[members[i]] = member_ops[i];
    }
}

/* The largest single parameter tensor of a unit (elements): one of the layer's weights or
 * biases, the first unit's token or position embedding, the last unit's output projection;
 * with_persistent false leaves out those ZeRO-3 keeps gathered. */
static double largest_tensor(const Builder *b, uint32_t u, bool with_persistent)
{
    const ModelParams *p = &b->params;
    const uint32_t L = (uint32_t)b->model->n_layers;
    const uint64_t floor = with_persistent ? 0 : b->z->param_persistence_threshold;
    uint64_t largest = 0;
    for (size_t i = 0; i < p->n_layer_modules; i++) {
        const uint64_t t = p->layer[i].weight > p->layer[i].bias ? p->layer[i].weight
                                                                  : p->layer[i].bias;
        if (t > largest)
            largest = t;
    }
    if (u == 0 && p->embedding - p->embed_norm > largest)
        largest = p->embedding - p->embed_norm;
    if (u == 0 && p->position > largest)
        largest = p->position;
    if (u == L - 1 && p->lm_head > largest)
        largest = p->lm_head;
    return largest > floor ? (double)largest : 0.0;
}

/* DeepSpeed before 0.6 called c10d's list API once per parameter (partition_parameters.py
 * _allgather_param, _reduce_scatter_gradient). ProcessGroupNCCL::allgather and
 * reduce_scatter run NCCL on a flat tensor of the whole call that they allocate through the
 * caching allocator (flatten_for_scatter_gather -> newLikeFlat: world size x the per-rank
 * tensor), alive until the copies out of it (or into it) are done: beside the op's own
 * buffers, one call's flat tensor, the largest parameter's (`largest` elements of
 * elem_bytes), at most the op's bytes. Allocated on `stream` after `after[r]` (may be NULL);
 * list_flat_release() frees it once the collective's ops (b->ops) are done. */
static bool list_flat_alloc(Builder *b, StreamKind stream, double largest, double elem_bytes,
                            double op_bytes, const OpId *after)
{
    double bytes = largest * elem_bytes;
    if (bytes > op_bytes)
        bytes = op_bytes;
    if (!b->is_list_api || bytes <= 0)
        return false;
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId a = graph_alloc(b->g, r, stream, MEM_GPU, MEM_BUFFERS, bytes, &b->flat_buffers[r]);
        if (after)
            builder_depend(b, after[r], a);
    }
    return true;
}

static void list_flat_release(Builder *b, StreamKind stream)
{
    for (uint32_t r = 0; r < b->n_ranks; r++)
        graph_free(b->g, r, stream, b->flat_buffers[r]);
}

/* A collective over a group set on `stream` standing for n_calls NCCL calls, each rank's op
 * after `after[r]` (may be NULL), with a buffer of `buffer_bytes` (0: none) allocated on the
 * stream around it. Leaves the ops in b->ops. */
static void collective_all_flat(Builder *b, const GroupSet *set, CollectiveKind kind,
                                StreamKind stream, double bytes, uint32_t n_calls,
                                const OpId *after, MemCategory category, double buffer_bytes,
                                uint32_t label, double largest_elems);

static void collective_all(Builder *b, const GroupSet *set, CollectiveKind kind, StreamKind stream,
                           double bytes, uint32_t n_calls, const OpId *after, MemCategory category,
                           double buffer_bytes, uint32_t label)
{
    collective_all_flat(b, set, kind, stream, bytes, n_calls, after, category, buffer_bytes,
                        label, b->largest_tensor);
}

/* collective_all whose calls' largest tensor (c10d's flat tensor under the list API) is
 * largest_elems. */
static void collective_all_flat(Builder *b, const GroupSet *set, CollectiveKind kind,
                                StreamKind stream, double bytes, uint32_t n_calls,
                                const OpId *after, MemCategory category, double buffer_bytes,
                                uint32_t label, double largest_elems)
{
    uint32_t *buffers = NULL;
    if (buffer_bytes > 0) {
        buffers = xmalloc(b->n_ranks * sizeof *buffers);
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            OpId a = graph_alloc(b->g, r, stream, MEM_GPU, category, buffer_bytes, &buffers[r]);
            if (after)
                builder_depend(b, after[r], a);
        }
    }
    const bool has_flat =
        set == &b->shards && (kind == COLL_ALL_GATHER || kind == COLL_REDUCE_SCATTER) &&
        list_flat_alloc(b, stream, largest_elems,
                        kind == COLL_REDUCE_SCATTER ? b->mem.grad_comm_bytes : b->mem.param_bytes,
                        bytes, after);
    collective_set(b, set, kind, stream, bytes, n_calls, label);
    if (has_flat)
        list_flat_release(b, stream);
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        if (after && !buffers && !has_flat)
            builder_depend(b, after[r], b->ops[r]);
        OpId *last = stream == STREAM_GATHER ? &b->last_gather[r] : &b->last_reduce[r];
        *last = b->ops[r];
    }
    if (buffers) {
        for (uint32_t r = 0; r < b->n_ranks; r++)
            graph_free(b->g, r, stream, buffers[r]);
        free(buffers);
    }
}

/* ---- gradient buckets ---- */

/* The collective a gradient bucket uses in this configuration. */
static CollectiveKind bucket_kind(const Builder *b)
{
    if (b->z->stage == 0)
        return COLL_ALL_REDUCE;
    if (b->is_grad_fallback) /* buffered_reduce_fallback all-reduces the whole bucket */
        return COLL_ALL_REDUCE;
    if (b->z->stage == 3)
        return COLL_REDUCE_SCATTER;
    if (b->is_textbook)
        return b->z->stage == 1 ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER;
    return b->z->reduce_scatter && !b->z->multi_rank_bucket_allreduce ? COLL_REDUCE_SCATTER
                                                                      : COLL_ALL_REDUCE;
}

/* The backward's contiguous gradient (ipg) buffers, reduce_bucket_size 16-bit elements each,
 * two with overlap_comm (alternating), allocated where DeepSpeed's code allocates them:
 *  - ZeRO-1/2 (stage_1_and_2.py, v0.19.5: setup_buckets, called by the first gradient hook
 *    of a backward, process_gradients; v0.18 and before in backward_prologue /
 *    backward()): per communication dtype, buffers of self.dtype (the 16-bit gradients'),
 *    under contiguous_gradients (DeepSpeed's default, forced by cpu_offload; zerosim models
 *    stages 1-2 with it: ds_config.c), on any number of GPUs; independent_gradient_partition_epilogue -> _release_ipg_buffers frees them
 *    after the last bucket. ZeRO-1 runs that epilogue only at the accumulation boundary
 *    (engine.py allreduce_gradients -> reduce_gradients), so its buffers, set up in the first
 *    micro-batch's backward, stay until the boundary's reduction (ready_for_gradients stays
 *    true in between). A parameter above reduce_bucket_size (extra_large_param_to_reduce) is
 *    reduced from its own gradient, outside the buffers;
 *  - ZeRO-3 before 0.6 (stage3.py at v0.3.14, per-parameter generation: b->is_list_api):
 *    backward() allocates ipg_buffer (torch.half) before the loss's backward, the epilogue
 *    frees it; a parameter above reduce_bucket_size is reduced from its own full param.grad,
 *    and without contiguous_gradients every gradient is (buffered_reduce_fallback);
 *    reduce_ipg_grads then keeps the bucket's parameters in previous_reduced_grads, whose
 *    full gradients the next reduce_ipg_grads' partition_previous_reduced_grads
 *    (param.partition_gradients) frees after reduction_stream.synchronize(): the last
 *    reduced bucket's full gradients live past its reduction, until the next bucket's or the
 *    epilogue's.
 * (ZeRO-3 from 0.6 holds one buffer for the whole run instead: ipg_run_begin.)
 * At layer granularity a flush stands for several of DeepSpeed's buckets; what outlives it is
 * the last of them: with contiguous_gradients its largest parameter above reduce_bucket_size
 * (a layer-level bound: the one reduced last is held, the largest is counted), without it up
 * to one bucket of reduce_bucket_size elements, or the largest parameter when bigger, within
 * the gradients flushed. The computing module's own gradient is the gather walk's
 * (live_bytes). */
static bool has_backward_ipg(const Builder *b)
{
    if (b->is_grad_fallback)
        return false;
    if (b->is_list_api)
        return true;
    /* stage 2 is modelled with contiguous_gradients true (ds_config.c) */
    return (b->z->stage == 1 || b->z->stage == 2) && !b->is_textbook &&
           b->opts->fsdp == FSDP_NONE;
}

static void grad_holds_begin(Builder *b)
{
    b->has_held = false;
    b->bucket_large = b->bucket_max_tensor = 0;
    if (b->n_ipg > 0 || !has_backward_ipg(b))
        return; /* ZeRO-1 between boundaries: still set up */
    const double bytes = (double)b->z->reduce_bucket_size * (double)b->mem.grad_bytes;
    if (bytes <= 0)
        return;
    b->n_ipg = b->z->overlap_comm ? 2u : 1u;
    for (uint32_t k = 0; k < b->n_ipg; k++)
        for (uint32_t r = 0; r < b->n_ranks; r++)
            graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_BUFFERS, bytes,
                        &b->ipg_buffers[(size_t)r * 2 + k]);
}

/* ZeRO-3 from 0.6 (stage3.py DeepSpeedZeroOptimizer_Stage3.__init__, "# IPG"; v0.19.5: one
 * IPGBucketZ3 per communication dtype, its buffer torch.empty(reduce_bucket_size,
 * dtype=<the communication dtype>), from v0.17.2; v0.6.0-v0.17.1 of self.dtype, the same
 * bytes unless communication_data_type differs from the 16-bit type):
 * under contiguous_gradients one buffer of reduce_bucket_size elements, allocated with the
 * optimizer and held for the whole run, whatever the GPU count, no second one with
 * overlap_comm (the copies into it and the reductions from it share
 * reduce_and_partition_stream). A parameter above reduce_bucket_size keeps its own
 * param.grad (__add_grad_to_ipg_bucket copies only what fits). Allocated before the first
 * step's ops (begin) and freed after the last (!begin). */
static void ipg_run(Builder *b, bool begin)
{
    if (begin) {
        b->has_ipg_run = false;
        const double bytes = (double)b->z->reduce_bucket_size * (double)b->mem.grad_comm_bytes;
        if (b->z->stage != 3 || b->is_list_api || b->is_textbook || b->opts->fsdp != FSDP_NONE ||
            !b->z->contiguous_gradients || bytes <= 0)
            return;
        for (uint32_t r = 0; r < b->n_ranks; r++)
            graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_BUFFERS, bytes, &b->ipg_run[r]);
        b->has_ipg_run = true;
        return;
    }
    for (uint32_t r = 0; r < b->n_ranks && b->has_ipg_run; r++)
        graph_free(b->g, r, STREAM_COMPUTE, b->ipg_run[r]);
    b->has_ipg_run = false;
}

/* The flush of `elems` gradients: the previous bucket's held gradients freed (its
 * partition_previous_reduced_grads, behind the reduce stream), this one's held. */
static void grad_holds_swap(Builder *b, double elems)
{
    if (!b->is_list_api)
        return;
    if (b->has_held)
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            OpId f = graph_free(b->g, r, STREAM_REDUCE, b->held_grads[r]);
            builder_depend(b, b->last_compute[r], f);
        }
    b->has_held = false;
    double held = b->bucket_large;
    if (b->is_grad_fallback) {
        const double limit = (double)b->z->reduce_bucket_size;
        held = b->bucket_max_tensor > limit ? b->bucket_max_tensor : limit;
        if (held > elems)
            held = elems;
    }
    if (held <= 0)
        return;
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId a = graph_alloc(b->g, r, STREAM_REDUCE, MEM_GPU, MEM_BUFFERS,
                             held * b->mem.grad_bytes, &b->held_grads[r]);
        builder_depend(b, b->last_compute[r], a);
    }
    b->has_held = true;
}

/* The epilogue, after the micro-batch's last bucket: the held gradients partitioned and the
 * ipg buffers released, behind the reduce stream (ZeRO-1: at the boundary only). */
static void grad_holds_end(Builder *b, bool is_boundary)
{
    if (b->z->stage == 1 && !is_boundary)
        return;
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        for (uint32_t k = 0; k < b->n_ipg; k++) {
            OpId f = graph_free(b->g, r, STREAM_REDUCE, b->ipg_buffers[(size_t)r * 2 + k]);
            builder_depend(b, b->last_compute[r], f);
        }
        if (b->has_held) {
            OpId f = graph_free(b->g, r, STREAM_REDUCE, b->held_grads[r]);
            builder_depend(b, b->last_compute[r], f);
        }
    }
    b->n_ipg = 0;
    b->has_held = false;
}

/* ZeRO-3 from 0.6 with the optimizer on the CPU copies each reduced gradient partition into
 * the host's fp32 gradients with a blocking copy (stage3.py __partition_grads:
 * fp32_grad_tensor.copy_(grad_buffer), no non_blocking, from v0.6.0 to v0.16.4 and after;
 * PyTorch's copy_ to the host then synchronises the stream it runs on, the
 * reduce-and-partition stream), inside backward's gradient hook: the host launches nothing
 * more until the bucket's reduction and its copy are done, so the next backward kernels wait
 * for them. Before 0.6 the copy was non_blocking (v0.5.10: copy_(src_tensor,
 * non_blocking=True)); NVMe swaps the gradients out through the swapper instead. The copy
 * follows the bucket's reduction, so waiting for it also waits for what wait_bucket held. */
static void block_on_host_copy(Builder *b)
{
    if (b->z->stage != 3 || b->is_list_api || b->is_textbook ||
        b->z->offload_optimizer.device != OFFLOAD_CPU)
        return;
    for (uint32_t r = 0; r < b->n_ranks; r++)
        b->wait_bucket[r] = b->last_d2h[r];
}

/* Reduces the gradients gathered so far in one bucket, after each rank's last compute op.
 * With overlap the reduce stream runs it while compute goes on, at most two buckets in
 * flight (DeepSpeed's two alternating buffers); without, compute waits for it. */
static void flush_bucket(Builder *b, bool is_overlapped)
{
    if (b->bucket_elems <= 0)
        return;
    const double elems = b->bucket_elems;
    double bytes = elems * b->mem.grad_comm_bytes; /* in the communication type */
    b->bucket_elems = 0;
    if (b->n_ranks == 1) {
        b->bucket_tensors = 0;
        if (offload_has_optimizer(b)) {
            offload_gradients(b, elems, b->last_compute);
            block_on_host_copy(b);
        }
        return;
    }
    const GroupSet *set = b->z->stage == 3 ? &b->shards : &b->world;
    /* A layer's gradients go out module by module: the bucket buffer holds reduce_bucket_size
     * elements, or the largest module when that is bigger. DeepSpeed before 0.6 with
     * contiguous_gradients reduces from backward()'s ipg buffers instead (grad_holds_begin),
     * and holds the bucket's full gradients until the next reduction (grad_holds_swap). */
    double largest = (double)b->params.largest_module, limit = (double)b->z->reduce_bucket_size;
    double buffer = (limit > largest ? limit : largest) * b->mem.grad_comm_bytes;
    if (b->is_list_api && !b->is_grad_fallback)
        buffer = 0.0;
    grad_holds_swap(b, elems);
    /* the NCCL calls DeepSpeed made for these gradients (param_bucket), the last partial one
     * included */
    uint32_t n_calls = b->bucket_calls + (b->bucket_fill > 0 ? 1u : 0u);
    b->bucket_calls = 0;
    b->bucket_fill = 0;
    collective_all(b, set, bucket_kind(b), STREAM_REDUCE, bytes, n_calls, b->last_compute,
                   MEM_BUFFERS, bytes < buffer ? bytes : buffer, graph_label(b->g, "grad bucket"));
    b->bucket_large = b->bucket_max_tensor = 0;
    b->bucket_tensors = 0;
    if (b->z->stage == 3 && b->replicas.n_groups > 0) /* the shard, across the replicas */
        collective_all(b, &b->replicas, COLL_ALL_REDUCE, STREAM_REDUCE, bytes / b->n_shard, 1, NULL,
                       MEM_BUFFERS, 0, graph_label(b->g, "grad replicas"));
    if (offload_has_optimizer(b))
        offload_gradients(b, elems, b->ops);
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        b->bucket_prev[r] = b->bucket_last[r];
        b->bucket_last[r] = b->ops[r];
        /* The buffer being refilled next is the one the bucket before this used. */
        b->wait_bucket[r] = is_overlapped ? b->bucket_prev[r] : b->ops[r];
    }
    block_on_host_copy(b);
}

/* The expert gradients gathered so far, reduced over each rank's expert-data-parallel group
 * only (DeepSpeed-MoE keeps experts in their own parameter groups, reduced over
 * expert_data_parallel_group: stage_1_and_2.py real_dp_process_group), on the reduce stream
 * after the ranks' last compute. */
static void flush_expert_bucket(Builder *b)
{
    if (b->expert_bucket <= 0)
        return;
    const double elems = b->expert_bucket;
    b->expert_bucket = 0;
    uint32_t n;
    graph_group(b->g, b->expert_dp.groups[0], &n);
    if (b->expert_dp.n_logical < 2)
        return;
    collective_all(b, &b->expert_dp, bucket_kind(b), STREAM_REDUCE, elems * b->mem.grad_bytes, 1,
                   b->last_compute, MEM_BUFFERS, 0, graph_label(b->g, "expert grads"));
    for (uint32_t r = 0; r < b->n_ranks; r++)
        b->wait_bucket[r] = b->ops[r];
}

/* One parameter's gradient enters DeepSpeed's bucket (stage_1_and_2.py and stage3.py
 * reduce_independent_p_g_buckets_and_remove_grads / __add_grad_to_ipg_bucket): the bucket is
 * reduced first when this gradient would overflow reduce_bucket_size, so a parameter larger
 * than the bucket makes a call of its own. Counts the calls within the current op. */
static void param_bucket(Builder *b, double elems)
{
    if (elems <= 0)
        return;
    b->bucket_tensors++;
    if (elems > b->bucket_max_tensor)
        b->bucket_max_tensor = elems;
    if (elems > (double)b->z->reduce_bucket_size && elems > b->bucket_large)
        b->bucket_large = elems;
    if (b->is_list_api && !b->is_grad_fallback) { /* before 0.6: one reduce-scatter per
                                                     parameter (contiguous_gradients) */
        b->bucket_calls++;
        return;
    }
    if (b->bucket_fill > 0 && b->bucket_fill + elems > (double)b->z->reduce_bucket_size) {
        b->bucket_calls++;
        b->bucket_fill = 0;
    }
    b->bucket_fill += elems;
}

/* Backward produced the gradients of unit u: bucket them as DeepSpeed does, flushing when the
 * next gradients would overflow reduce_bucket_size; the op of a flush stands for the
 * parameter-level calls DeepSpeed made (one per bucket, a large parameter alone in its own). */
static void add_gradients(Builder *b, uint32_t u, bool is_overlapped)
{
    const double elems = b->unit_params[u];
    if (b->unit_expert[u] > 0) { /* their own group, their own reduction */
        b->expert_bucket += b->unit_expert[u];
        flush_expert_bucket(b);
    }
    double limit = (double)b->z->reduce_bucket_size;
    if (b->is_textbook)
        limit = 1e300; /* one bucket: the whole gradient after backward */
    if (b->bucket_elems > 0 && b->bucket_elems + elems > limit)
        flush_bucket(b, is_overlapped);
    b->bucket_elems += elems;
    if (b->is_textbook || b->opts->fsdp != FSDP_NONE)
        return; /* one call per bucket; FSDP reduce-scatters each unit's flat gradient once */
    /* backward meets the layer's parameters last module first */
    const ModelParams *p = &b->params;
    const uint32_t L = (uint32_t)b->model->n_layers;
    if (u == L - 1) {
        param_bucket(b, (double)(p->lm_head > 0 ? p->lm_head : 0));
        param_bucket(b, (double)p->final_norm);
    }
    for (size_t i = p->n_layer_modules; i-- > 0;) {
        param_bucket(b, (double)p->layer[i].bias);
        param_bucket(b, (double)p->layer[i].weight);
    }
    if (u == 0)
        param_bucket(b, (double)(p->embedding + p->position));
}

/* ---- ZeRO-3 parameter gathering ---- */

/* The output projection's weight under DeepSpeed's ZeRO-3 when the loss reads it itself
 * (Liger's fused linear cross-entropy takes self.lm_head.weight; lm_head's forward never
 * runs): ZeROOrderedDict.__getitem__ (parameter_offload.py) gathers it on access and
 * registers it with the module running, the top one; at that module's post-forward
 * __params_to_release (partitioned_param_coordinator.py) keeps it, the top module's
 * pre-backward being next in the trace and within stage3_max_reuse_distance; nothing in
 * backward releases it (the top module's post-backward never fires: input_ids need no
 * gradient), so it stays gathered until step() -> _partition_all_parameters ->
 * release_and_reset_all. The first step, without a trace, releases it at the post-forward
 * like any parameter. Its gradient is the loss's own grad_weight, counted with the
 * activations (model/activations.c). */
static double head_bytes(const Builder *b)
{
    return (double)params_output_projection(&b->params) * (double)b->mem.param_bytes; /* 16-bit */
}

/* Unit u's gathered bytes in a pass: the last unit's without a held output projection. */
static double unit_gathered_now(const Builder *b, uint32_t u)
{
    const uint32_t L = (uint32_t)b->model->n_layers;
    return b->unit_gathered[u] - (u == L - 1 && b->is_head_held ? head_bytes(b) : 0.0);
}

/* The head's weight stays gathered from here (the forward's last unit) ... */
static void head_hold_begin(Builder *b)
{
    if (!b->holds_head || b->is_tracing || b->is_head_held)
        return;
    for (uint32_t r = 0; r < b->n_ranks; r++)
        graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_BUFFERS, head_bytes(b),
                    &b->head_held[r]);
    b->is_head_held = true;
}

/* ... to the step at the accumulation boundary. */
static void head_hold_end(Builder *b)
{
    if (!b->is_head_held)
        return;
    for (uint32_t r = 0; r < b->n_ranks; r++)
        graph_free(b->g, r, STREAM_COMPUTE, b->head_held[r]);
    b->is_head_held = false;
}

/* GPU memory a gathered part of unit u holds in a pass. FSDP holds whole units. DeepSpeed
 * holds, at its peak, the walk's live bytes (the module computing, what is prefetched and,
 * in backward, the module's gradients: model/zero3_walk.h), or the first unit's embedding
 * and the last unit's output projection alone when they are more; while unit u computes,
 * its two parts and the next unit's prefetched part are allocated here, so each part holds
 * its share of that peak over the (1 + prefetched share) units allocated at once. The
 * textbook variant and mixtures of experts keep the layer-level bound of half of
 * stage3_max_live_parameters per part. */
static double live_bytes(const Builder *b, uint32_t u, int pass, double part_bytes)
{
    if (b->opts->fsdp != FSDP_NONE)
        return part_bytes;
    if (b->is_textbook || b->params.n_experts > 0) { /* MoE: as zero_memory.c says */
        double cap = (double)b->z->max_live_parameters * b->mem.param_bytes / 2.0;
        return part_bytes < cap ? part_bytes : cap;
    }
    const ModelParams *p = &b->params;
    const uint32_t L = (uint32_t)b->model->n_layers;
    double need = b->live_peak_bytes[pass];
    double alone = 0.0; /* elements of the embedding or output projection module */
    if (u == 0)
        alone = (double)(p->embedding + p->position);
    if (u == L - 1 && !b->is_head_held && (double)params_output_projection(p) > alone)
        alone = (double)params_output_projection(p);
    double alone_bytes = alone * (b->mem.param_bytes + (pass == 1 ? b->mem.grad_bytes : 0u));
    if (alone_bytes > need)
        need = alone_bytes;
    double window = (1.0 + b->prefetch_fraction[pass]) * unit_gathered_now(b, u);
    return window > need ? part_bytes * need / window : part_bytes;
}

/* The submodule fetches of one MoE layer's local experts: DeepSpeed's coordinator fetches
 * every leaf module with parameters on its own (fetch_sub_module per nn.Linear), and each
 * expert of an HF MoE block is its own modules (MixtralBlockSparseTop2MLP's w1, w2, w3;
 * Qwen3MoeMLP's and DeepseekV3MLP's gate, up and down projections). */
static uint32_t expert_fetch_calls(const Builder *b)
{
    uint32_t per_expert = 0;
    for (size_t i = 0; i < b->params.n_moe_modules; i++)
        per_expert += b->params.moe[i].is_expert;
    return (uint32_t)(b->params.n_experts / b->ep) * per_expert;
}

/* Gathers unit u's parameters before their use by compute op #k of the micro-batch. The
 * prefetched share (prefetch_fraction) may start once op k-2 is done, overlapping op k-1; the
 * rest is fetched on demand once op k-1 is done. Each part lives in a MEM_BUFFERS allocation
 * freed after use. */
static void gather_unit(Builder *b, uint32_t u, bool is_fwd, const OpId *before_prev,
                        const OpId *prev, uint32_t *out_buffers, uint32_t *out_n_buffers,
                        OpId *out_ready)
{
    const int pass = is_fwd ? 0 : 1;
    char label[48];
    snprintf(label, sizeof label, "%s L%u", is_fwd ? "gather fwd" : "gather bwd", u);
    uint32_t lab = graph_label(b->g, label);
    double total = unit_gathered_now(b, u);
    /* DeepSpeed's first step has no trace to prefetch from: everything comes on demand */
    double early = b->is_tracing ? 0.0 : b->prefetch_fraction[pass];
    double parts[2] = {total * early, total * (1.0 - early)};
    const OpId *after[2] = {before_prev, prev};
    /* NCCL calls per part: the layer's fetches, the first unit's embedding and the last
     * unit's head one more each (in the part that is prefetched, if any) */
    uint32_t calls[2] = {b->is_tracing ? 0 : b->calls_early[pass],
                         b->is_tracing ? b->calls_traced[pass] : b->calls_late[pass]};
    const uint32_t L = (uint32_t)b->model->n_layers;
    uint32_t extra = (u == 0 ? 1u : 0u) + (u == L - 1 && L > 1 && !b->is_head_held ? 1u : 0u);
    /* a MoE layer whose experts come with the rest (no expert parallelism): its router,
     * shared experts and every expert's modules are fetches of their own */
    if (b->ep == 1 && b->params.n_experts > 0 && is_moe_layer(b, u) &&
        b->opts->fsdp == FSDP_NONE && !b->is_textbook) {
        extra += expert_fetch_calls(b);
        for (size_t i = 0; i < b->params.n_moe_modules; i++)
            extra += !b->params.moe[i].is_expert &&
                     b->params.moe[i].weight > b->z->param_persistence_threshold;
    }
    calls[parts[0] > 0 ? 0 : 1] += extra;
    *out_n_buffers = 0;
    for (uint32_t r = 0; r < b->n_ranks; r++)
        out_ready[r] = GRAPH_NO_OP;
    const bool offloaded = b->z->offload_param.device != OFFLOAD_NONE;
    OpId *fetched = offloaded ? xmalloc(b->n_ranks * sizeof *fetched) : NULL;
    for (int k = 0; k < 2; k++) {
        if (parts[k] <= 0)
            continue;
        if (offloaded) {
            /* this rank's shard of the part comes from the host (or NVMe) first */
            offload_fetch_shard(b, parts[k] / b->n_shard, after[k], fetched);
            after[k] = fetched;
            if (b->n_shard == 1) {
                for (uint32_t r = 0; r < b->n_ranks; r++)
                    out_ready[r] = fetched[r];
                continue;
            }
        }
        if (b->n_shard == 1)
            continue;
        uint32_t *bufs = out_buffers + (size_t)(*out_n_buffers) * b->n_ranks;
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            OpId a = graph_alloc(b->g, r, STREAM_GATHER, MEM_GPU, MEM_BUFFERS,
                                 live_bytes(b, u, pass, parts[k]), &bufs[r]);
            if (after[k])
                builder_depend(b, after[k][r], a);
            if (b->is_list_api) /* torch.cuda.synchronize() drains the reduce stream too */
                builder_depend(b, b->last_reduce[r], a);
        }
        const bool has_flat = list_flat_alloc(b, STREAM_GATHER, largest_tensor(b, u, false),
                                              b->mem.param_bytes, parts[k], after[k]);
        collective_set(b, &b->shards, COLL_ALL_GATHER, STREAM_GATHER, parts[k], calls[k], lab);
        if (has_flat)
            list_flat_release(b, STREAM_GATHER);
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            b->last_gather[r] = b->ops[r];
            out_ready[r] = b->ops[r]; /* stream order: the later part implies the earlier */
        }
        (*out_n_buffers)++;
    }
    free(fetched);
    /* a MoE layer's local experts come from their expert-data-parallel group, one coalesced
     * fetch per expert module, on the gather stream after the rest */
    const double experts = b->unit_expert[u] * b->mem.param_bytes;
    if (experts > 0 && b->expert_dp.n_logical > 1 && b->z->offload_param.device == OFFLOAD_NONE) {
        uint32_t *bufs = out_buffers + (size_t)(*out_n_buffers) * b->n_ranks;
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            OpId a = graph_alloc(b->g, r, STREAM_GATHER, MEM_GPU, MEM_BUFFERS, experts, &bufs[r]);
            builder_depend(b, prev[r], a);
        }
        collective_set(b, &b->expert_dp, COLL_ALL_GATHER, STREAM_GATHER, experts,
                       expert_fetch_calls(b), lab);
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            b->last_gather[r] = b->ops[r];
            out_ready[r] = b->ops[r];
        }
        (*out_n_buffers)++;
    }
}

static void release_gathered(Builder *b, const uint32_t *buffers, uint32_t n_buffers)
{
    for (uint32_t k = 0; k < n_buffers; k++)
        for (uint32_t r = 0; r < b->n_ranks; r++)
            graph_free(b->g, r, STREAM_COMPUTE, buffers[(size_t)k * b->n_ranks + r]);
}

/* ---- one micro-batch ---- */

/* One micro-batch's state while its layers are laid out: what each pass decides once, and
 * the per-rank buffers and history the layers share. */
typedef struct MicroBatch {
    bool reduces_now;             /* gradients reduced in this micro-batch */
    bool buckets_during_backward; /* buckets flushed as the backward produces them */
    bool is_overlapped;           /* buckets on the reduce stream, alternating */
    bool regathers;               /* ZeRO-3 gathers again for backward (not SHARD_GRAD_OP) */
    bool prefetches_backward;
    bool keep_acts;
    bool to_host; /* DeepSpeed's cpu_checkpointing of full recomputation */
    uint32_t *act_buf;    /* per layer and rank: its stored activations */
    uint32_t *gathered;   /* per layer, 2 parts, per rank: gathered parameter buffers */
    uint32_t *n_gathered; /* per layer */
    OpId *ready;          /* per rank */
    OpId *hist[2];        /* per rank: compute op k-2 and k-1 */
    OpId *ckpt_copy;      /* per layer and rank: the checkpoint's copy to the host */
    uint32_t *head_buf;   /* per rank: the output layer's activations (cpu_checkpointing) */
    uint32_t ckpt_out_label, ckpt_in_label;
} MicroBatch;

static void micro_batch_init(MicroBatch *m, Builder *b, bool is_boundary)
{
    const uint32_t L = (uint32_t)b->model->n_layers, n = b->n_ranks;
    const bool stage3 = b->z->stage == 3;
    const FsdpStrategy fsdp = b->opts->fsdp;
    /* DeepSpeed stages 0-1 communicate at the boundary only, stages 2-3 and FSDP (without
     * no_sync) in every micro-batch. Stage 0, stage 1 without overlap_comm and the textbook
     * variants but ZeRO-3 reduce after the whole backward. */
    m->reduces_now = b->z->stage >= 2 || is_boundary || fsdp != FSDP_NONE;
    m->buckets_during_backward =
        fsdp != FSDP_NONE ||
        (!b->is_textbook &&
         (stage3 || (b->z->stage >= 1 && b->z->overlap_comm) || b->z->stage == 2));
    m->is_overlapped = stage3 || b->z->overlap_comm || fsdp != FSDP_NONE;
    /* SHARD_GRAD_OP keeps each unit gathered from its forward to its backward. */
    m->regathers = !(fsdp == FSDP_SHARD_GRAD_OP);
    m->prefetches_backward = fsdp == FSDP_NONE || b->opts->fsdp_backward_prefetch;
    m->keep_acts = b->opts->has_activations;
    m->to_host = b->train->cpu_checkpointing && b->setup->recompute == RECOMPUTE_FULL;
    m->act_buf = xmalloc((size_t)(L + 1) * n * sizeof *m->act_buf);
    m->gathered = xmalloc((size_t)3 * L * n * sizeof *m->gathered);
    m->n_gathered = xcalloc(L, sizeof *m->n_gathered);
    m->ready = xmalloc(n * sizeof *m->ready);
    m->hist[0] = xmalloc(n * sizeof *m->hist[0]);
    m->hist[1] = xmalloc(n * sizeof *m->hist[1]);
    for (uint32_t r = 0; r < n; r++)
        m->hist[0][r] = m->hist[1][r] = b->last_compute[r];
    m->ckpt_copy = m->to_host ? xmalloc((size_t)L * n * sizeof *m->ckpt_copy) : NULL;
    m->head_buf = m->to_host ? xmalloc(n * sizeof *m->head_buf) : NULL;
    m->ckpt_out_label = graph_label(b->g, "checkpoint to host");
    m->ckpt_in_label = graph_label(b->g, "checkpoint to gpu");
}

static void micro_batch_fini(MicroBatch *m)
{
    free(m->act_buf);
    free(m->ckpt_copy);
    free(m->head_buf);
    free(m->gathered);
    free(m->n_gathered);
    free(m->ready);
    free(m->hist[0]);
    free(m->hist[1]);
}

/* The 16-bit copies autocast makes of FSDP's fp32 parameters that autograd keeps for a
 * layer's backward (model/kernels.h kernels_weight_cast_elems), and those of the logits
 * weight, kept with the last layer (the output layer is never checkpointed); 0 without those
 * casts. */
static double cast_bytes(const Builder *b, bool is_head)
{
    if (!fsdp_has_autocast_casts(b->opts, b->train))
        return 0.0;
    double layer, head;
    kernels_weight_cast_elems(&b->params, &layer, &head);
    return (is_head ? head : layer) * (double)b->setup->act_bytes;
}

/* Layer u's forward kernels and the activations they keep for backward (on the GPU, or the
 * checkpoint copied to the host). */
static void forward_layer(Builder *b, MicroBatch *m, uint32_t u)
{
    const uint32_t L = (uint32_t)b->model->n_layers, n = b->n_ranks;
    const bool is_moe = is_moe_layer(b, u);
    double amount = (is_moe ? b->cost.moe_layer_fwd : b->cost.layer_fwd) +
                    (u == L - 1 ? b->cost.head_fwd : 0.0);
    compute_all(b, PURPOSE_FORWARD, amount, b->label_fwd_base + u);
    if (is_moe)
        all_to_all_pair(b);
    if (m->keep_acts && m->to_host && setup_is_checkpointed(b->setup, u)) {
        /* DeepSpeed's cpu_checkpointing: the checkpoint goes to host memory */
        double bytes = (double)b->act.checkpoint_per_layer;
        for (uint32_t r = 0; r < n; r++) {
            OpId a = graph_alloc(b->g, r, STREAM_D2H, MEM_CPU, MEM_ACTIVATIONS, bytes,
                                 &m->act_buf[(size_t)u * n + r]);
            builder_depend(b, b->last_compute[r], a);
            m->ckpt_copy[(size_t)u * n + r] =
                graph_copy(b->g, r, STREAM_D2H, COPY_D2H, bytes, m->ckpt_out_label);
        }
        if (u == L - 1)
            for (uint32_t r = 0; r < n; r++)
                graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS,
                            (double)b->act.output_layer, &m->head_buf[r]);
    } else if (m->keep_acts) {
        /* a layer whose forward autograd keeps holds its weights' casts (a checkpointed or
         * op-level layer makes them again when recomputed) */
        const bool keeps_casts = !setup_is_checkpointed(b->setup, u) &&
                                 b->setup->recompute != RECOMPUTE_SELECTIVE_OP;
        double bytes = (double)(setup_is_checkpointed(b->setup, u) ? b->act.checkpoint_per_layer
                                                                   : b->act.layer_stored) +
                       (u == L - 1 ? (double)b->act.output_layer + cast_bytes(b, true) : 0.0) +
                       (keeps_casts ? cast_bytes(b, false) : 0.0);
        for (uint32_t r = 0; r < n; r++)
            graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS, bytes,
                        &m->act_buf[(size_t)u * n + r]);
    }
}

/* The full 16-bit gradient of unit u's largest module, alive from its backward kernel until
 * DeepSpeed's gradient hook copies it into the contiguous bucket and frees it (ZeRO-2:
 * stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_grads; the bucket buffers are
 * counted apart). Stage 0 and 1 keep full gradients anyway, stage 3 counts it in its gather
 * walk, FSDP in its unit's reduce-scatter input, a single GPU reduces nothing. */
static double grad_transient_bytes(const Builder *b, uint32_t u)
{
    if (b->z->stage != 2 || b->is_textbook || b->opts->fsdp != FSDP_NONE || b->n_gpus < 2)
        return 0.0;
    const ModelParams *p = &b->params;
    double largest = (double)p->largest_layer_module;
    const uint32_t L = (uint32_t)b->model->n_layers;
    if (u == L - 1 && (double)params_output_projection(p) > largest)
        largest = (double)params_output_projection(p);
    if (u == 0 && (double)p->embedding > largest)
        largest = (double)p->embedding;
    return largest * b->mem.grad_bytes;
}

/* DeepSpeed before 0.6: what layer u's recomputation released (regather_plan), all-gathered
 * again, one call per tensor, after the recomputation and, behind the host synchronisation of
 * _allgather_param, after the reduce stream; the backward kernels wait for it. The layer's
 * gathered buffer is held through (the release and the new gather of the same bytes leave
 * the peak as it is). */
static void regather_after_recompute(Builder *b, uint32_t u)
{
    char label[48];
    snprintf(label, sizeof label, "regather bwd L%u", u);
    collective_all_flat(b, &b->shards, COLL_ALL_GATHER, STREAM_GATHER,
                        b->regather_elems * b->mem.param_bytes, b->regather_calls,
                        b->last_compute, MEM_BUFFERS, 0, graph_label(b->g, label),
                        b->regather_largest);
    for (uint32_t r = 0; r < b->n_ranks; r++) { /* a gather leaves the reduce stream as it was */
        builder_depend(b, b->last_reduce[r], b->ops[r]);
        b->wait_gather[r] = b->ops[r];
    }
}

/* Layer u's backward: the checkpoint back from the host, the recomputation, the backward
 * kernels, the activations released, and its gradients into the buckets. */
static void backward_layer(Builder *b, MicroBatch *m, uint32_t u)
{
    const uint32_t L = (uint32_t)b->model->n_layers, n = b->n_ranks;
    uint32_t *work = NULL;
    const bool is_checkpointed = setup_is_checkpointed(b->setup, u);
    if (m->keep_acts && m->to_host && is_checkpointed) {
        /* ... and comes back before the layer is recomputed, prefetched one op ahead */
        for (uint32_t r = 0; r < n; r++) {
            OpId back = graph_copy(b->g, r, STREAM_H2D, COPY_H2D,
                                   (double)b->act.checkpoint_per_layer, m->ckpt_in_label);
            builder_depend(b, m->ckpt_copy[(size_t)u * n + r], back);
            builder_depend(b, m->hist[0][r], back);
            b->wait_copy[r] = back;
        }
    }
    const bool is_op_level = b->setup->recompute == RECOMPUTE_SELECTIVE_OP;
    if (m->keep_acts && (is_checkpointed || is_op_level)) {
        /* full recomputation rebuilds this layer's activations first; op-level selective
         * checkpointing rebuilds what the layer did not save */
        /* with the backward's gradients (activations.h), allocated with it to keep the
         * graph small: they are alive only in backward, which follows at once */
        const double rebuilt = (is_op_level ? (double)(b->act.layer_full - b->act.layer_stored)
                                            : (double)b->act.layer_full) +
                               (double)b->act.backward_extra +
                               cast_bytes(b, false); /* the recomputed casts */
        work = xmalloc(n * sizeof *work);
        for (uint32_t r = 0; r < n; r++)
            graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS, rebuilt, &work[r]);
    }
    /* the recomputation is its own op, before the layer's backward kernels */
    const bool is_moe = is_moe_layer(b, u);
    double recompute = b->setup->recompute == RECOMPUTE_FULL && !is_checkpointed ? 0.0
                       : is_moe ? b->cost.moe_layer_recompute
                                : b->cost.layer_recompute;
    if (recompute > 0)
        compute_all(b, PURPOSE_RECOMPUTE, recompute, b->label_recompute_base + u);
    if (recompute > 0 && is_checkpointed && b->regather_elems > 0 && b->n_shard > 1)
        regather_after_recompute(b, u);
    /* a recomputed MoE layer exchanges its tokens again */
    if (recompute > 0 && is_moe && b->setup->recompute == RECOMPUTE_FULL)
        all_to_all_pair(b);
    /* the gradients the backward holds beside the saved activations (activations.h; with
     * the rebuilt activations when there are some), and the full gradient of the module
     * computing before DeepSpeed's hook moves it into the bucket (stage 2; stage 3 counts it
     * with the gathered parameters) */
    const double held_bytes[2] = {m->keep_acts && !work ? (double)b->act.backward_extra : 0.0,
                                  m->keep_acts ? grad_transient_bytes(b, u) : 0.0};
    const MemCategory held_category[2] = {MEM_ACTIVATIONS, MEM_BUFFERS};
    uint32_t *held =
        held_bytes[0] > 0 || held_bytes[1] > 0 ? xmalloc(2 * n * sizeof *held) : NULL;
    for (int k = 0; k < 2; k++)
        for (uint32_t r = 0; r < n && held_bytes[k] > 0; r++)
            graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, held_category[k], held_bytes[k],
                        &held[(size_t)k * n + r]);
    double amount = (is_moe ? b->cost.moe_layer_bwd : b->cost.layer_bwd) +
                    (u == L - 1 ? b->cost.head_bwd : 0.0);
    compute_all(b, PURPOSE_BACKWARD, amount, b->label_bwd_base + u);
    for (int k = 0; k < 2; k++)
        for (uint32_t r = 0; r < n && held_bytes[k] > 0; r++)
            graph_free(b->g, r, STREAM_COMPUTE, held[(size_t)k * n + r]);
    free(held);
    if (is_moe) /* the gradients of the combine and of the dispatch */
        all_to_all_pair(b);
    for (uint32_t r = 0; r < n && m->keep_acts; r++) {
        if (work)
            graph_free(b->g, r, STREAM_COMPUTE, work[r]);
        graph_free(b->g, r, STREAM_COMPUTE, m->act_buf[(size_t)u * n + r]);
        if (m->to_host && is_checkpointed && u == L - 1)
            graph_free(b->g, r, STREAM_COMPUTE, m->head_buf[r]);
    }
    free(work);
    if (m->reduces_now && m->buckets_during_backward)
        add_gradients(b, u, m->is_overlapped);
    else if (m->reduces_now) {
        b->bucket_elems += b->unit_params[u];
        b->expert_bucket += b->unit_expert[u];
    }
}

/* The gradients left after backward: the last bucket, or every bucket one after another on
 * the reduce stream when nothing was reduced during backward. */
static void reduce_after_backward(Builder *b, const MicroBatch *m)
{
    if (!m->reduces_now)
        return;
    flush_expert_bucket(b);
    if (m->buckets_during_backward) {
        flush_bucket(b, m->is_overlapped);
        return;
    }
    double total = b->bucket_elems;
    double limit = b->is_textbook ? total : (double)b->z->reduce_bucket_size;
    /* a bucket holds at least one parameter: one larger than reduce_bucket_size (or any,
     * with 0) is reduced alone (stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_grads) */
    if (limit < (double)b->params.largest_module)
        limit = (double)b->params.largest_module;
    b->bucket_elems = 0;
    while (total > 0) {
        double part = total < limit ? total : limit;
        b->bucket_elems = part;
        flush_bucket(b, true);
        total -= part;
    }
}

static void micro_batch(Builder *b, bool is_boundary)
{
    const uint32_t L = (uint32_t)b->model->n_layers, n = b->n_ranks;
    const bool stage3 = b->z->stage == 3;
    MicroBatch m;
    micro_batch_init(&m, b, is_boundary);
    for (uint32_t k = 0; k < 2 * L; k++) {
        const bool is_fwd = k < L;
        const uint32_t u = is_fwd ? k : 2 * L - 1 - k;
        uint32_t *unit_bufs = m.gathered + (size_t)3 * u * n;
        if (stage3 && (is_fwd || m.regathers)) {
            /* on demand (after op k-1) for the textbook ZeRO-3 and FSDP without backward
             * prefetch; else the prefetched part may start after op k-2 */
            bool on_demand = b->is_textbook || (!is_fwd && !m.prefetches_backward);
            gather_unit(b, u, is_fwd, on_demand ? m.hist[1] : m.hist[0], m.hist[1], unit_bufs,
                        &m.n_gathered[u], m.ready);
            for (uint32_t r = 0; r < n; r++)
                if (m.ready[r] != GRAPH_NO_OP)
                    b->wait_gather[r] = m.ready[r];
        }
        if (k == L && (m.reduces_now || b->z->stage == 1))
            grad_holds_begin(b); /* backward() */
        if (is_fwd)
            forward_layer(b, &m, u);
        else
            backward_layer(b, &m, u);
        /* released after use: after each pass, or after backward when kept across */
        if (stage3 && (m.regathers || !is_fwd)) {
            release_gathered(b, unit_bufs, m.n_gathered[u]);
            m.n_gathered[u] = 0;
        }
        if (is_fwd && u == L - 1)
            head_hold_begin(b);
        memcpy(m.hist[0], m.hist[1], n * sizeof *m.hist[0]);
        memcpy(m.hist[1], b->last_compute, n * sizeof *m.hist[1]);
    }
    reduce_after_backward(b, &m);
    if (m.reduces_now)
        grad_holds_end(b, is_boundary);
    if (is_boundary)
        head_hold_end(b);
    micro_batch_fini(&m);
}

/* ---- the step ---- */

/* Copy kernels of one persistent tensor of `elems` elements gathered by the list call of
 * DeepSpeed before 0.6 (partition_parameters.py _allgather_params): each rank's partition is
 * ceil(elems / n_ranks) elements (the tensor padded to a multiple of the ranks, _aligned_size),
 * and one copy_ per rank whose partition starts inside the tensor moves it into place. */
static double persistent_copies(uint64_t elems, double n_ranks)
{
    if (elems == 0)
        return 0.0;
    const double part = ceil((double)elems / n_ranks);
    return ceil((double)elems / part);
}

/* DeepSpeed before 0.6 all-gathers the persistent parameters after the step
 * (stage3.py _post_step -> partition_parameters.py _all_gather, async_op False ->
 * _allgather_params): one all_gather into a flat buffer, then for every parameter, for every
 * rank i whose partition starts inside it, `narrow` views and a `copy_` of that partition
 * into the parameter, issued one by one from Python: n_persistent x ~N kernels, at the
 * launch floor each (their bytes are read and written once). Seconds; 0 for the current
 * generation, which gathers them in one coalesced call. */
static double post_step_copies_s(const Builder *b)
{
    if (!b->is_list_api || b->n_shard < 2)
        return 0.0;
    const ModelParams *p = &b->params;
    const uint64_t t = b->z->param_persistence_threshold;
    const double n = (double)b->n_shard;
    double layer = 0.0;
    for (size_t i = 0; i < p->n_layer_modules; i++) {
        if (p->layer[i].weight <= t)
            layer += persistent_copies(p->layer[i].weight, n);
        if (p->layer[i].bias <= t)
            layer += persistent_copies(p->layer[i].bias, n);
    }
    double kernels = layer * (double)b->model->n_layers;
    /* the norms around the layers: vectors of h (BLOOM's embedding norm, the final norm);
     * the embeddings and an untied head exceed any threshold that makes sense */
    const uint64_t h = p->hidden;
    const uint64_t vectors = h > 0 ? (p->embed_norm + p->final_vectors) / h : 0;
    if (h <= t)
        kernels += (double)vectors * persistent_copies(h, n);
    KernelPass pass = {.memory_s = kernels_memory_s(&b->cost.gpu,
                                                    2.0 * (double)b->mem.persistent_elems *
                                                        b->mem.param_bytes),
                       .n_kernels = kernels};
    return kernels_pass_s(&b->cost.gpu, &pass);
}

/* After the last micro-batch: the optimizer steps each rank's partition once every gradient
 * is reduced; stages 1-2 then all-gather the updated parameters, which the next forward
 * needs. */
static void boundary(Builder *b)
{
    const uint32_t n = b->n_ranks;
    double elems = b->z->stage == 0 ? (double)b->params.total : (double)b->mem.partition_elems;
    for (uint32_t r = 0; r < n; r++)
        b->wait_bucket[r] = b->last_reduce[r];
    if (offload_has_optimizer(b)) {
        /* ZeRO-3's partial offload steps the sub-groups kept on the GPU there, while the host
         * steps the rest; with parameters offloaded too, the GPU's part of the update goes
         * back to the host. */
        const double kept = elems - (double)b->mem.offloaded_elems;
        if (kept > 0)
            compute_all(b, PURPOSE_OPTIMIZER, kept * b->cost.optimizer_per_param,
                        graph_label(b->g, "optimizer step (gpu part)"));
        offload_optimizer_step(b);
        if (kept > 0 && b->z->offload_param.device != OFFLOAD_NONE)
            offload_updated_params(b, kept);
        /* the GPU waits for the parameters the host sends back (for those of the step
         * before, with the delayed parameter update) */
        for (uint32_t r = 0; r < n; r++)
            b->wait_gather[r] =
                b->opts->delayed_param_update ? b->older_update[r] : b->pending_update[r];
        compute_all(b, PURPOSE_SYNC, 0.0, graph_label(b->g, "parameters updated"));
    } else {
        /* the optimizer wrapper's fp32 working copies live through the step (zero_memory.h) */
        const double copies = b->opts->has_activations && b->opts->fsdp == FSDP_NONE
                                  ? (double)b->mem.gpu_step_copies
                                  : 0.0; /* FSDP steps its fp32 shards in place (estimate.c) */
        uint32_t *copy_bufs = copies > 0 ? xmalloc(n * sizeof *copy_bufs) : NULL;
        for (uint32_t r = 0; r < n && copy_bufs; r++)
            graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_STEP_COPIES, copies, &copy_bufs[r]);
        compute_all(b, PURPOSE_OPTIMIZER, elems * b->cost.optimizer_per_param,
                    graph_label(b->g, "optimizer step"));
        for (uint32_t r = 0; r < n && copy_bufs; r++)
            graph_free(b->g, r, STREAM_COMPUTE, copy_bufs[r]);
        free(copy_bufs);
        if (b->z->offload_param.device != OFFLOAD_NONE)
            offload_updated_params(b, (double)b->mem.partition_elems);
    }
    /* ZeRO-3's persistent parameters were updated shard by shard: DeepSpeed all-gathers
     * them once, synchronously, after the step (stage3.py _post_step). */
    const double persistent = (double)b->mem.persistent_elems * b->mem.param_bytes;
    if (b->z->stage == 3 && b->n_shard > 1 && persistent > 0) {
        collective_all(b, &b->shards, COLL_ALL_GATHER, STREAM_GATHER, persistent, 1,
                       b->last_compute, MEM_BUFFERS, 0, graph_label(b->g, "gather persistent"));
        for (uint32_t r = 0; r < n; r++)
            b->wait_gather[r] = b->ops[r];
        /* ... and before 0.6 copies them into place one rank's partition at a time, on the
         * compute stream inside optimizer.step() */
        const double copies_s = post_step_copies_s(b);
        if (copies_s > 0)
            compute_all(b, PURPOSE_OPTIMIZER, copies_s * b->cost.gpu_flops_per_s,
                        graph_label(b->g, "persistent copies"));
    }
    if ((b->z->stage == 1 || b->z->stage == 2) && n > 1) {
        /* experts split over ep ranks are gathered inside their expert-data-parallel group */
        const double local = (double)moe_local_expert_params(&b->params, b->ep);
        const double split = b->ep > 1 ? local : 0.0;
        collective_all(b, &b->world, COLL_ALL_GATHER, STREAM_GATHER,
                       ((double)b->params.total - (b->ep > 1 ? (double)b->params.experts_total : 0.0)) *
                           b->mem.param_bytes,
                       1, b->last_compute, MEM_BUFFERS, 0, graph_label(b->g, "gather params"));
        if (split > 0 && b->expert_dp.n_logical > 1)
            collective_all(b, &b->expert_dp, COLL_ALL_GATHER, STREAM_GATHER,
                           split * b->mem.param_bytes, 1, b->last_compute, MEM_BUFFERS, 0,
                           graph_label(b->g, "gather experts"));
        for (uint32_t r = 0; r < n; r++)
            b->wait_gather[r] = b->ops[r];
    }
}

/* Bytes per gathered parameter: FSDP's MixedPrecision.param_dtype (fsdp.h), else the
 * training precision's. */
static unsigned unit_param_bytes(const ScheduleOptions *opts, const ZeroMemory *mem)
{
    return opts->fsdp != FSDP_NONE && opts->fsdp_param_bytes ? opts->fsdp_param_bytes
                                                             : mem->param_bytes;
}

/* Per-unit parameters: layer u, with the embedding (and learned positions) on the first unit
 * and the final norm and output projection (or the tied embedding, used again) on the last. */
static void split_units(Builder *b)
{
    const uint32_t L = (uint32_t)b->model->n_layers;
    const ModelParams *p = &b->params;
    uint64_t persistent_layer = params_persistent(p, 1, b->z->param_persistence_threshold) -
                                params_persistent(p, 0, b->z->param_persistence_threshold);
    b->unit_params = xmalloc(L * sizeof *b->unit_params);
    b->unit_gathered = xmalloc(L * sizeof *b->unit_gathered);
    b->unit_expert = xcalloc(L, sizeof *b->unit_expert);
    const double gather_bytes = (double)unit_param_bytes(b->opts, &b->mem);
    for (uint32_t u = 0; u < L; u++) {
        double own = (double)p->per_layer, gathered = (double)(p->per_layer - persistent_layer);
        if (p->n_experts > 0 && is_moe_layer(b, u)) {
            /* the block's router and shared experts like attention; its local experts apart,
             * or with the rest when every rank holds every expert */
            const double local = (double)(p->n_experts / b->ep * p->expert);
            const double moe_persistent =
                (double)(params_persistent(p, 1, b->z->param_persistence_threshold) -
                         params_persistent(p, 0, b->z->param_persistence_threshold)) -
                (double)persistent_layer;
            own += (double)p->moe_replicated;
            gathered += (double)p->moe_replicated - moe_persistent;
            if (b->ep > 1) {
                b->unit_expert[u] = local;
            } else {
                own += local;
                gathered += local;
            }
        } else if (p->n_experts > 0) {
            own += (double)p->dense_mlp;
            gathered += (double)p->dense_mlp;
        }
        if (u == 0) {
            own += (double)(p->embedding + p->position);
            gathered += (double)(p->embedding + p->position);
        }
        if (u == L - 1) {
            /* the final norm unless resident; the output projection, or the tied embedding
             * gathered again (it was released after the first layer) */
            own += (double)(p->final_norm + p->lm_head);
            bool norm_resident = b->model->hidden <= b->z->param_persistence_threshold;
            gathered += (double)(norm_resident ? 0 : p->final_norm) +
                        (double)params_output_projection(p);
        }
        b->unit_params[u] = own;
        b->unit_gathered[u] = gathered * gather_bytes;
    }
}

/* How a layer's parameters arrive in each pass: the share prefetched while the module before
 * computes, the NCCL calls of each part, and how many gathered bytes are alive at once.
 *  - DeepSpeed since 0.6.0 (PartitionedParameterCoordinator, partitioned_param_coordinator.py:
 *    fetch_sub_module, __all_gather_params): each submodule's missing parameters in one
 *    coalesced all-gather, the next ones of the recorded order prefetched in another while
 *    fewer than min(stage3_max_live_parameters - available, stage3_prefetch_bucket_size)
 *    elements were taken (model/zero3_walk.h walks it). At most __max_ongoing_fetch_events
 *    = 2 fetches are waited on before the host blocks; the gather stream runs them one after
 *    another. The first step, without a trace, prefetches nothing (is_complete_trace()).
 *  - DeepSpeed before 0.6.0 (stage3.py, PartitionedParameterCoordinator.fetch_sub_module as in
 *    v0.5.10): one all_gather per parameter (partition_parameters.py _all_gather ->
 *    _allgather_param), then _synchronize_communication(): comm_stream.synchronize() and
 *    torch.cuda.synchronize(), a host synchronisation that drains the compute stream before
 *    the module runs, so nothing is fetched under the previous layer's compute.
 *  - FSDP: one all-gather of the unit's flat parameter, the whole next unit prefetched; its
 *    rate limiter (limit_all_gathers) keeps two units' all-gathers alive, as the early part's
 *    dependency on op k-2 does here.
 *  - The textbook variant and a zero prefetch bucket: one on-demand all-gather per layer. */
static void regather_plan(Builder *b);

static void fetch_plan(Builder *b)
{
    for (int pass = 0; pass < 2; pass++) {
        b->prefetch_fraction[pass] = 0.0;
        b->calls_early[pass] = 0;
        b->calls_late[pass] = b->calls_traced[pass] = 1;
        b->live_peak_bytes[pass] = 0.0;
    }
    if (b->is_textbook || b->z->stage != 3)
        return;
    for (int pass = 0; pass < 2; pass++) {
        if (b->opts->fsdp != FSDP_NONE) {
            b->prefetch_fraction[pass] = 1.0;
            b->calls_early[pass] = 1;
            b->calls_late[pass] = 0;
            b->calls_traced[pass] = 1;
            continue;
        }
        const ModelParams *p = &b->params;
        const bool per_parameter = b->opts->zero3_generation == ZERO3_GEN_PER_PARAMETER;
        Zero3Walk w;
        zero3_walk(p->layer, p->n_layer_modules, b->z->param_persistence_threshold,
                   per_parameter ? 0 : b->z->prefetch_bucket_size, b->z->max_live_parameters,
                   pass == 1, b->mem.param_bytes, b->mem.grad_bytes, &w);
        b->live_peak_bytes[pass] = w.live_peak_bytes;
        if (per_parameter) {
            b->calls_late[pass] = 0;
            for (size_t i = 0; i < p->n_layer_modules; i++)
                b->calls_late[pass] += (p->layer[i].weight > b->z->param_persistence_threshold) +
                                       (p->layer[i].bias > b->z->param_persistence_threshold);
            b->calls_traced[pass] = b->calls_late[pass];
            continue;
        }
        b->calls_early[pass] = w.calls_early;
        b->calls_late[pass] = w.calls_late;
        b->calls_traced[pass] = w.n_fetched_modules;
        b->prefetch_fraction[pass] = w.gathered_elems > 0 ? w.early_elems / w.gathered_elems : 0.0;
    }
    regather_plan(b);
}

/* DeepSpeed before 0.6 under full recomputation (stage3.py v0.3.14): the recomputed forward
 * runs the layer's module hooks again, so each module is fetched before it is recomputed
 * and, in its post-forward hook (PartitionedParameterCoordinator.release_sub_module),
 * released unless _keep_for_later(): PrefetchCoordinator.get_reuse_distance_in_numel, the
 * elements of the modules traced between this use and the next, below
 * stage3_max_reuse_distance. Between module j's recomputation and its backward come the
 * recomputation and the backward of every module after it, twice their elements; the last
 * module is kept (distance 0), the others of a large layer are released and all-gathered
 * again by their pre-backward hook. The layer's modules are taken in their listed order
 * (model/params.h: the norms first; they are resident and count 2h at most). Sets the
 * elements and tensors gathered again; none for the current generation (whose coordinator
 * keeps the same rule, not modelled there), FSDP, the textbook, mixtures of experts, other
 * checkpointing. */
static void regather_plan(Builder *b)
{
    b->regather_elems = 0.0;
    b->regather_calls = 0;
    b->regather_largest = 0.0;
    if (!b->is_list_api || b->setup->recompute != RECOMPUTE_FULL || b->params.n_experts > 0)
        return;
    const ModelParams *p = &b->params;
    const uint64_t t = b->z->param_persistence_threshold;
    double after = 0.0; /* elements of the modules after module i */
    for (size_t i = p->n_layer_modules; i-- > 0;) {
        const ParamModule *m = &p->layer[i];
        if (2.0 * after >= (double)b->z->max_reuse_distance) {
            b->regather_elems += (double)(m->weight > t ? m->weight : 0) +
                                 (double)(m->bias > t ? m->bias : 0);
            b->regather_calls += params_module_tensors(m, t);
            const double largest = (double)(m->weight > m->bias ? m->weight : m->bias);
            if (largest > t && largest > b->regather_largest)
                b->regather_largest = largest;
        }
        after += (double)(m->weight + m->bias);
    }
}

static void labels(Builder *b)
{
    char label[32];
    const uint32_t L = (uint32_t)b->model->n_layers;
    for (uint32_t u = 0; u < L; u++) {
        snprintf(label, sizeof label, "fwd L%u", u);
        uint32_t id = graph_label(b->g, label);
        if (u == 0)
            b->label_fwd_base = id;
    }
    for (uint32_t u = 0; u < L; u++) {
        snprintf(label, sizeof label, "bwd L%u", u);
        uint32_t id = graph_label(b->g, label);
        if (u == 0)
            b->label_bwd_base = id;
    }
    for (uint32_t u = 0; u < L; u++) {
        snprintf(label, sizeof label, "recompute L%u", u);
        uint32_t id = graph_label(b->g, label);
        if (u == 0)
            b->label_recompute_base = id;
    }
}

/* The world; shard groups of n_shard consecutive ranks (whole nodes under HYBRID_SHARD); and,
 * when shards do not span the world, replica groups of the ranks holding the same shard. */
static void make_groups(Builder *b, const Platform *p)
{
    (void)p;
    /* simulated sizes; the logical ones (of all n_gpus ranks) go on the sets */
    const uint32_t n = b->n_ranks, shard = b->n_shard < n ? b->n_shard : n;
    uint32_t *members = xmalloc(n * sizeof *members);
    for (uint32_t r = 0; r < n; r++)
        members[r] = r;
    b->world.groups = xmalloc(sizeof *b->world.groups);
    b->world.groups[0] = graph_add_group(b->g, members, n);
    b->world.n_groups = 1;
    b->world.n_logical = b->n_gpus;
    b->shards.n_logical = b->n_shard;
    b->replicas.n_logical = b->n_gpus / b->n_shard;
    if (shard == n) {
        b->shards.groups = xmalloc(sizeof *b->shards.groups);
        b->shards.groups[0] = b->world.groups[0];
        b->shards.n_groups = 1;
    } else {
        b->shards.n_groups = n / shard;
        b->shards.groups = xmalloc(b->shards.n_groups * sizeof *b->shards.groups);
        for (uint32_t k = 0; k < b->shards.n_groups; k++)
            b->shards.groups[k] = graph_add_group(b->g, members + (size_t)k * shard, shard);
        b->replicas.n_groups = shard;
        b->replicas.groups = xmalloc(shard * sizeof *b->replicas.groups);
        uint32_t n_replicas = n / shard;
        for (uint32_t i = 0; i < shard; i++) {
            for (uint32_t k = 0; k < n_replicas; k++)
                members[k] = k * shard + i;
            b->replicas.groups[i] = graph_add_group(b->g, members, n_replicas);
        }
    }
    free(members);
}

/* Expert parallelism (model/moe.h, DeepSpeed's groups.py): expert-parallel groups of ep
 * consecutive ranks, and expert-data-parallel groups of the ranks at the same place in each;
 * in symmetric mode these stand for n_gpus / ep members. */
static void make_expert_groups(Builder *b, const Platform *p)
{
    const uint32_t n = b->n_ranks, ep = b->ep;
    b->ep_groups.n_logical = ep;
    b->expert_dp.n_logical = b->n_gpus / ep;
    uint32_t *members = xmalloc(n * sizeof *members);
    if (ep > n) {
        /* Symmetric mode with expert-parallel groups wider than the simulated nodes: the
         * simulated ranks are one EP group standing for ep members, and the ranks at the
         * same local GPU of each simulated node stand for the expert-data-parallel ring,
         * which crosses nodes on the same rail as the real one. */
        const uint32_t g = (uint32_t)p->gpus_per_node < n ? (uint32_t)p->gpus_per_node : n;
        for (uint32_t i = 0; i < n; i++)
            members[i] = i;
        b->ep_groups.n_groups = 1;
        b->ep_groups.groups = xmalloc(sizeof *b->ep_groups.groups);
        b->ep_groups.groups[0] = graph_add_group(b->g, members, n);
        b->expert_dp.n_groups = g;
        b->expert_dp.groups = xmalloc(g * sizeof *b->expert_dp.groups);
        for (uint32_t i = 0; i < g; i++) {
            for (uint32_t k = 0; k < n / g; k++)
                members[k] = k * g + i;
            b->expert_dp.groups[i] = graph_add_group(b->g, members, n / g);
        }
        free(members);
        return;
    }
    b->ep_groups.n_groups = n / ep;
    b->ep_groups.groups = xmalloc(b->ep_groups.n_groups * sizeof *b->ep_groups.groups);
    for (uint32_t k = 0; k < b->ep_groups.n_groups; k++) {
        for (uint32_t i = 0; i < ep; i++)
            members[i] = k * ep + i;
        b->ep_groups.groups[k] = graph_add_group(b->g, members, ep);
    }
    b->expert_dp.n_groups = ep;
    b->expert_dp.groups = xmalloc(ep * sizeof *b->expert_dp.groups);
    for (uint32_t i = 0; i < ep; i++) {
        for (uint32_t k = 0; k < n / ep; k++)
            members[k] = k * ep + i;
        b->expert_dp.groups[i] = graph_add_group(b->g, members, n / ep);
    }
    free(members);
}

static void free_groups(Builder *b)
{
    free(b->ep_groups.groups);
    free(b->expert_dp.groups);
    free(b->world.groups);
    free(b->shards.groups);
    free(b->replicas.groups);
}

/* Model states for the whole run: allocated before the first op, released after the last;
 * then the cuBLAS workspaces, which the first GEMM allocates and which stay cached. */
static void model_states(Builder *b, uint32_t *bufs, bool is_alloc)
{
    const double bytes[4] = {(double)b->mem.gpu_params, (double)b->mem.gpu_grads,
                             (double)b->mem.gpu_optimizer, b->workspace_bytes};
    const MemCategory cats[4] = {MEM_PARAMS, MEM_GRADS, MEM_OPTIMIZER, MEM_WORKSPACE};
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        for (int k = 0; k < 4; k++) {
            if (bytes[k] <= 0)
                continue;
            if (is_alloc) {
                graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, cats[k], bytes[k],
                            &bufs[(size_t)r * 4 + k]);
            } else {
                OpId f = graph_free(b->g, r, STREAM_COMPUTE, bufs[(size_t)r * 4 + k]);
                builder_depend(b, b->last_gather[r], f);
                builder_depend(b, b->last_reduce[r], f);
            }
        }
    }
}

Graph *zero_schedule_build(const ModelConfig *model, const TrainConfig *train, const Platform *p,
                           const RunSetup *setup, const ScheduleOptions *opts, Err *err)
{
    Builder b = {0};
    const uint32_t n_gpus = (uint32_t)setup->n_gpus;
    const uint32_t n = opts->n_simulated_ranks ? opts->n_simulated_ranks : n_gpus;
    b.model = model;
    b.train = train;
    b.opts = opts;
    b.setup = setup;
    b.z = &train->zero;
    b.n_ranks = n;
    b.n_gpus = n_gpus;
    b.is_textbook = opts->variant == SCHEDULE_TEXTBOOK;
    b.g = graph_create(n);
    params_count(model, &b.params);
    b.ep = (uint32_t)moe_ep_size(&b.params, setup);
    const bool ep_fits = b.ep <= n ? n % b.ep == 0 : b.ep % n == 0 && n % p->gpus_per_node == 0;
    if (n_gpus % b.ep != 0 || !ep_fits || b.params.n_experts % b.ep != 0) {
        graph_destroy(b.g);
        err_set(err,
                "--ep-size %u: expected a divisor of the %u simulated GPUs, of the GPU count %u "
                "and of the %llu experts",
                b.ep, n, n_gpus, (unsigned long long)b.params.n_experts);
        return NULL;
    }
    zero_memory_ep(train, &b.params, model->n_layers, n_gpus, b.ep, &b.mem);
    b.a2a_bytes = moe_all_to_all_buffer_bytes(model, &b.params, setup);
    b.n_shard = (uint32_t)zero_shard_gpus(b.z, n_gpus);
    if (opts->has_activations) {
        RuntimeMemory rt;
        runtime_memory(p, b.z, opts->fsdp != FSDP_NONE ? RUNTIME_FSDP : RUNTIME_DEEPSPEED, n_gpus,
                       &rt);
        b.workspace_bytes = (double)rt.cublas_workspace_bytes;
    }
    if (n_gpus % b.n_shard != 0 || (b.n_shard < n && n % b.n_shard != 0)) {
        graph_destroy(b.g);
        err_set(err,
                "%s: zero_optimization.mics_shard_size: expected a divisor of the GPU count "
                "%u, got %u",
                train->file, n_gpus, b.n_shard);
        return NULL;
    }
    activations_bytes(model, setup, &b.act);
    /* the framework's host work per pass (cost.h CostHost): DeepSpeed ZeRO-3's coordinator,
     * FSDP1's per-parameter view swaps; none for FSDP2 (not modelled) or the textbook */
    CostHost host = {0};
    if (zero_schedule_has_host_hooks(b.z, opts) && opts->fsdp == FSDP_NONE)
        cost_host_zero3(&b.params, b.z->param_persistence_threshold, b.ep,
                        opts->zero3_generation == ZERO3_GEN_PER_PARAMETER, p->cpu.param_host_s,
                        &host);
    else if (zero_schedule_has_host_hooks(b.z, opts)) /* FSDP1 */
        cost_host_fsdp1(&b.params, opts->fsdp != FSDP_SHARD_GRAD_OP, p->cpu.param_host_s, &host);
    cost_step_hosted(model, &b.params, setup, train, p, &host, &b.cost);
    if (fsdp_has_autocast_casts(opts, train))
        fsdp_cost_autocast(&b.params, setup, &b.cost);
    if (opts->fsdp != FSDP_NONE && opts->is_fsdp2 && b.z->stage == 3)
        fsdp2_cost_copy_out(&b.params, unit_param_bytes(opts, &b.mem),
                            opts->fsdp != FSDP_SHARD_GRAD_OP, &b.cost);
    split_units(&b);
    b.is_list_api = b.z->stage == 3 && !b.is_textbook && opts->fsdp == FSDP_NONE &&
                    opts->zero3_generation == ZERO3_GEN_PER_PARAMETER;
    /* stage3.py before 0.6, reduce_ipg_grads: with contiguous_gradients each bucket's
     * parameters are reduce-scattered (average_tensor -> reduce_gradients_at_owner), without
     * it the bucket goes through buffered_reduce_fallback, an all-reduce of the whole; so
     * does ZeRO-1's without it (stage2.py, stage_1_and_2.py reduce_ipg_grads), as every
     * release from 0.4.4 to 0.12.x runs stage 1 (ds_config.c) */
    const bool is_stage1_zero = b.z->stage == 1 && !b.is_textbook && opts->fsdp == FSDP_NONE;
    b.is_grad_fallback = (b.is_list_api || is_stage1_zero) && !b.z->contiguous_gradients;
    b.holds_head = b.z->stage == 3 && !b.is_textbook && opts->fsdp == FSDP_NONE &&
                   !b.is_list_api && setup->loss == LOSS_FUSED_LINEAR && b.n_shard > 1;
    b.is_head_held = false;
    b.head_held = xmalloc(n * sizeof *b.head_held);
    /* the model's largest tensor, persistent ones included (a bucket or a step's gathers may
     * hold any): the first unit's or the last's */
    const double first = largest_tensor(&b, 0, true);
    const double last = largest_tensor(&b, (uint32_t)model->n_layers - 1, true);
    b.largest_tensor = first > last ? first : last;
    fetch_plan(&b);
    labels(&b);
    make_groups(&b, p);
    if (b.ep > 1) {
        make_expert_groups(&b, p);
        b.label_a2a_dispatch = graph_label(b.g, "a2a dispatch");
        b.label_a2a_combine = graph_label(b.g, "a2a combine");
    }
    OpId **arrays[] = {
        &b.ops,          &b.scratch,      &b.wait_copy,   &b.last_d2h,    &b.pending_update,
        &b.older_update, &b.last_compute, &b.wait_gather, &b.wait_bucket, &b.last_reduce,
        &b.last_gather,  &b.bucket_prev,  &b.bucket_last, &b.flat_buffers, &b.held_grads};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        *arrays[k] = xmalloc(n * sizeof **arrays[k]);
        for (uint32_t r = 0; r < n; r++)
            (*arrays[k])[r] = GRAPH_NO_OP;
    }
    b.ipg_buffers = xmalloc((size_t)n * 2 * sizeof *b.ipg_buffers);
    b.ipg_run = xmalloc(n * sizeof *b.ipg_run);
    b.n_ipg = 0;
    uint32_t *states = xmalloc((size_t)n * 4 * sizeof *states);
    uint32_t *host_states = xmalloc((size_t)n * 7 * sizeof *host_states);
    model_states(&b, states, true);
    offload_model_states(&b, host_states, true);
    ipg_run(&b, true);
    for (uint32_t step = 0; step < opts->n_steps; step++) {
        /* with several steps the first is DeepSpeed's tracing step; one step stands for the
         * steady state that published throughputs measure */
        b.is_tracing = opts->n_steps > 1 && step == 0 && b.z->stage == 3 &&
                       opts->fsdp == FSDP_NONE && !b.is_textbook;
        for (uint64_t mb = 0; mb < setup->grad_accum; mb++)
            micro_batch(&b, mb + 1 == setup->grad_accum);
        boundary(&b);
    }
    ipg_run(&b, false);
    model_states(&b, states, false);
    offload_model_states(&b, host_states, false);
    free(states);
    free(host_states);
    free(b.ipg_buffers);
    free(b.ipg_run);
    free(b.head_held);
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        free(*arrays[k]);
    free(b.unit_params);
    free(b.unit_gathered);
    free(b.unit_expert);
    free_groups(&b);
    if (graph_finalize(b.g, err)) {
        graph_destroy(b.g);
        return NULL;
    }
    return b.g;
}

bool zero_schedule_has_host_hooks(const ZeroConfig *z, const ScheduleOptions *opts)
{
    return z->stage == 3 && opts->variant != SCHEDULE_TEXTBOOK &&
           (opts->fsdp == FSDP_NONE || !opts->is_fsdp2);
}

const char *zero_schedule_variant_name(ScheduleVariant v)
{
    return choices_name(&choices_schedule, (int)v);
}
