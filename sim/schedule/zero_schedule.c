/*
 * zero_schedule.c - event graphs of DDP and ZeRO-1/2/3 steps (see zero_schedule.h).
 *
 * Ranks are symmetric, so the builder walks the step once and emits each op for every rank:
 * per-rank state is kept in arrays indexed by rank (the last compute op, the reduce buckets
 * in flight, what the next op must wait for). Collectives span all ranks (one data-parallel
 * group), so one graph_collective() call gives every rank its op.
 */
#include "zero_schedule.h"

#include "cost.h"

#include "../common/xalloc.h"
#include "../model/activations.h"
#include "../model/params.h"
#include "../model/zero_memory.h"

#include <stdio.h>
#include <string.h>

typedef struct Builder {
    Graph *g;
    const ModelConfig *model;
    const TrainConfig *train;
    const ScheduleOptions *opts;
    const ZeroConfig *z;
    uint32_t n_ranks;
    uint32_t world;          /* the group of all ranks */
    bool is_textbook;
    ModelParams params;
    ZeroMemory mem;
    ActivationBytes act;
    StepCost cost;
    double *unit_params;     /* per layer unit: its parameters (first/last carry embeddings) */
    double *unit_gathered;   /* per unit: 16-bit bytes ZeRO-3 gathers (persistent excluded) */
    OpId *ops;               /* scratch: one op per rank from graph_collective */
    OpId *last_compute;      /* per rank: last op on the compute stream, or GRAPH_NO_OP */
    OpId *wait_gather;       /* per rank: the next compute op waits for this gather */
    OpId *wait_bucket;       /* per rank: ... and for this gradient bucket */
    OpId *last_reduce;       /* per rank: last op on the reduce stream */
    OpId *last_gather;       /* per rank: last op on the gather stream */
    OpId *bucket_prev;       /* per rank: the bucket before the last one (two buffers) */
    OpId *bucket_last;
    double bucket_elems;     /* gradients waiting in the current bucket */
    uint32_t label_fwd_base, label_bwd_base; /* labels "fwd L<i>" and "bwd L<i>" */
} Builder;

static void depend(Builder *b, OpId before, OpId after)
{
    if (before != GRAPH_NO_OP)
        graph_depend(b->g, before, after);
}

/* Appends a GPU compute op on every rank, after whatever each rank must wait for. */
static void compute_all(Builder *b, double amount, uint32_t label)
{
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId id = graph_compute(b->g, r, STREAM_COMPUTE, DEVICE_GPU, amount, label);
        depend(b, b->wait_gather[r], id);
        depend(b, b->wait_bucket[r], id);
        b->wait_gather[r] = b->wait_bucket[r] = GRAPH_NO_OP;
        b->last_compute[r] = id;
    }
}

/* A collective over all ranks on `stream`, each rank's op after `after[r]` (may be NULL),
 * with a buffer of `buffer_bytes` (0: none) allocated on the stream around it. Leaves the
 * ops in b->ops. */
static void collective_all(Builder *b, CollectiveKind kind, StreamKind stream, double bytes,
                           const OpId *after, MemCategory category, double buffer_bytes,
                           uint32_t label)
{
    uint32_t *buffers = NULL;
    if (buffer_bytes > 0) {
        buffers = xmalloc(b->n_ranks * sizeof *buffers);
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            OpId a = graph_alloc(b->g, r, stream, MEM_GPU, category, buffer_bytes, &buffers[r]);
            if (after)
                depend(b, after[r], a);
        }
    }
    graph_collective(b->g, kind, b->world, stream, bytes, 0, label, b->ops);
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        if (after && !buffers)
            depend(b, after[r], b->ops[r]);
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
    if (b->z->stage == 3)
        return COLL_REDUCE_SCATTER;
    if (b->is_textbook)
        return b->z->stage == 1 ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER;
    return b->z->reduce_scatter && !b->z->multi_rank_bucket_allreduce ? COLL_REDUCE_SCATTER
                                                                       : COLL_ALL_REDUCE;
}

/* Reduces the gradients gathered so far in one bucket, after each rank's last compute op.
 * With overlap the reduce stream runs it while compute goes on, at most two buckets in
 * flight (DeepSpeed's two alternating buffers); without, compute waits for it. */
static void flush_bucket(Builder *b, bool is_overlapped)
{
    if (b->bucket_elems <= 0)
        return;
    double bytes = b->bucket_elems * b->mem.grad_bytes;
    b->bucket_elems = 0;
    if (b->n_ranks == 1)
        return;
    collective_all(b, bucket_kind(b), STREAM_REDUCE, bytes, b->last_compute, MEM_BUFFERS,
                   bytes, graph_label(b->g, "grad bucket"));
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        b->bucket_prev[r] = b->bucket_last[r];
        b->bucket_last[r] = b->ops[r];
        /* The buffer being refilled next is the one the bucket before this used. */
        b->wait_bucket[r] = is_overlapped ? b->bucket_prev[r] : b->ops[r];
    }
}

/* Backward produced the gradients of one unit: bucket them as DeepSpeed does, flushing when
 * the next gradients would overflow reduce_bucket_size. */
static void add_gradients(Builder *b, double elems, bool is_overlapped)
{
    double limit = (double)b->z->reduce_bucket_size;
    if (b->is_textbook)
        limit = 1e300; /* one bucket: the whole gradient after backward */
    if (b->bucket_elems > 0 && b->bucket_elems + elems > limit)
        flush_bucket(b, is_overlapped);
    b->bucket_elems += elems;
}

/* ---- ZeRO-3 parameter gathering ---- */

/* Gathers unit u's parameters before their use by compute op #k of the micro-batch. The
 * prefetched part (up to stage3_prefetch_bucket_size elements) may start once op k-2 is
 * done, so it overlaps op k-1; the rest is fetched on demand once op k-1 is done. Each part
 * lives in a MEM_BUFFERS allocation freed after use. */
static void gather_unit(Builder *b, uint32_t u, const OpId *before_prev, const OpId *prev,
                        uint32_t *out_buffers, uint32_t *out_n_buffers, OpId *out_ready,
                        const char *what)
{
    char label[48];
    snprintf(label, sizeof label, "%s L%u", what, u);
    uint32_t lab = graph_label(b->g, label);
    double total = b->unit_gathered[u];
    double prefetch = b->is_textbook ? 0.0
                                     : (double)b->z->prefetch_bucket_size * b->mem.param_bytes;
    double parts[2] = {total < prefetch ? total : prefetch, 0};
    parts[1] = total - parts[0];
    const OpId *after[2] = {before_prev, prev};
    *out_n_buffers = 0;
    for (uint32_t r = 0; r < b->n_ranks; r++)
        out_ready[r] = GRAPH_NO_OP;
    for (int k = 0; k < 2; k++) {
        if (parts[k] <= 0)
            continue;
        if (b->n_ranks == 1)
            continue;
        uint32_t *bufs = out_buffers + (size_t)(*out_n_buffers) * b->n_ranks;
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            OpId a = graph_alloc(b->g, r, STREAM_GATHER, MEM_GPU, MEM_BUFFERS, parts[k],
                                 &bufs[r]);
            if (after[k])
                depend(b, after[k][r], a);
        }
        graph_collective(b->g, COLL_ALL_GATHER, b->world, STREAM_GATHER, parts[k], 0, lab,
                         b->ops);
        for (uint32_t r = 0; r < b->n_ranks; r++) {
            b->last_gather[r] = b->ops[r];
            out_ready[r] = b->ops[r]; /* stream order: the later part implies the earlier */
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

static void micro_batch(Builder *b, bool is_boundary)
{
    const uint32_t L = (uint32_t)b->model->n_layers, n = b->n_ranks;
    const bool stage3 = b->z->stage == 3;
    /* Stage 0 and 1 communicate at the boundary only; stage 0 (and stage 1 without
     * overlap_comm, and every textbook variant but ZeRO-3) after the whole backward. */
    const bool reduces_now = b->z->stage >= 2 || is_boundary;
    const bool buckets_during_backward =
        !b->is_textbook && (stage3 || (b->z->stage >= 1 && b->z->overlap_comm) ||
                            b->z->stage == 2);
    const bool is_overlapped = stage3 || b->z->overlap_comm;
    uint32_t *act_buf = xmalloc((size_t)(L + 1) * n * sizeof *act_buf);
    uint32_t *gathered = xmalloc((size_t)2 * n * sizeof *gathered);
    OpId *ready = xmalloc(n * sizeof *ready);
    OpId *hist[2];
    hist[0] = xmalloc(n * sizeof *hist[0]); /* compute op k-2 */
    hist[1] = xmalloc(n * sizeof *hist[1]); /* compute op k-1 */
    for (uint32_t r = 0; r < n; r++)
        hist[0][r] = hist[1][r] = b->last_compute[r];
    const bool keep_acts = b->opts->has_activations;

    for (uint32_t k = 0; k < 2 * L; k++) {
        const bool is_fwd = k < L;
        const uint32_t u = is_fwd ? k : 2 * L - 1 - k;
        uint32_t n_gathered = 0;
        if (stage3) {
            /* textbook ZeRO-3: fetch on demand only, once the previous op is done */
            gather_unit(b, u, b->is_textbook ? hist[1] : hist[0], hist[1], gathered, &n_gathered,
                        ready, is_fwd ? "gather fwd" : "gather bwd");
            for (uint32_t r = 0; r < n; r++)
                if (ready[r] != GRAPH_NO_OP)
                    b->wait_gather[r] = ready[r];
        }
        uint32_t label = (is_fwd ? b->label_fwd_base : b->label_bwd_base) + u;
        if (is_fwd) {
            double amount = b->cost.layer_fwd + (u == L - 1 ? b->cost.head_fwd : 0.0);
            compute_all(b, amount, label);
            if (keep_acts) {
                double bytes = (double)(b->act.checkpoints > 0
                                            ? b->act.checkpoints / L
                                            : b->act.layer_stored) +
                               (u == L - 1 ? (double)b->act.output_layer : 0.0);
                for (uint32_t r = 0; r < n; r++)
                    graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS, bytes,
                                &act_buf[(size_t)u * n + r]);
            }
        } else {
            uint32_t *work = NULL;
            if (keep_acts && b->act.checkpoints > 0) {
                /* full recomputation rebuilds this layer's activations first */
                work = xmalloc(n * sizeof *work);
                for (uint32_t r = 0; r < n; r++)
                    graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS,
                                (double)b->act.layer_full, &work[r]);
            }
            double amount = b->cost.layer_recompute + b->cost.layer_bwd +
                            (u == L - 1 ? b->cost.head_bwd : 0.0);
            compute_all(b, amount, label);
            for (uint32_t r = 0; r < n && keep_acts; r++) {
                if (work)
                    graph_free(b->g, r, STREAM_COMPUTE, work[r]);
                graph_free(b->g, r, STREAM_COMPUTE, act_buf[(size_t)u * n + r]);
            }
            free(work);
            if (reduces_now && buckets_during_backward)
                add_gradients(b, b->unit_params[u], is_overlapped);
            else if (reduces_now)
                b->bucket_elems += b->unit_params[u];
        }
        if (stage3)
            release_gathered(b, gathered, n_gathered);
        memcpy(hist[0], hist[1], n * sizeof *hist[0]);
        memcpy(hist[1], b->last_compute, n * sizeof *hist[1]);
    }
    if (reduces_now) {
        if (buckets_during_backward) {
            flush_bucket(b, is_overlapped);
        } else {
            /* after backward: buckets one after another on the reduce stream */
            double total = b->bucket_elems;
            double limit = b->is_textbook ? total : (double)b->z->reduce_bucket_size;
            b->bucket_elems = 0;
            while (total > 0) {
                double part = total < limit ? total : limit;
                b->bucket_elems = part;
                flush_bucket(b, true);
                total -= part;
            }
        }
    }
    free(act_buf);
    free(gathered);
    free(ready);
    free(hist[0]);
    free(hist[1]);
}

/* ---- the step ---- */

/* After the last micro-batch: the optimizer steps each rank's partition once every gradient
 * is reduced; stages 1-2 then all-gather the updated parameters, which the next forward
 * needs. */
static void boundary(Builder *b)
{
    const uint32_t n = b->n_ranks;
    double elems = b->z->stage == 0 ? (double)b->params.total : (double)b->mem.partition_elems;
    for (uint32_t r = 0; r < n; r++)
        b->wait_bucket[r] = b->last_reduce[r];
    compute_all(b, elems * b->cost.optimizer_per_param, graph_label(b->g, "optimizer step"));
    if ((b->z->stage == 1 || b->z->stage == 2) && n > 1) {
        collective_all(b, COLL_ALL_GATHER, STREAM_GATHER,
                       (double)b->params.total * b->mem.param_bytes, b->last_compute,
                       MEM_BUFFERS, 0, graph_label(b->g, "gather params"));
        for (uint32_t r = 0; r < n; r++)
            b->wait_gather[r] = b->ops[r];
    }
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
    for (uint32_t u = 0; u < L; u++) {
        double own = (double)p->per_layer, gathered = (double)(p->per_layer - persistent_layer);
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
                        (double)(p->lm_head > 0 ? p->lm_head : p->embedding);
        }
        b->unit_params[u] = own;
        b->unit_gathered[u] = gathered * b->mem.param_bytes;
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
}

/* Model states for the whole run: allocated before the first op, released after the last. */
static void model_states(Builder *b, uint32_t *bufs, bool is_alloc)
{
    const double bytes[3] = {(double)b->mem.gpu_params, (double)b->mem.gpu_grads,
                             (double)b->mem.gpu_optimizer};
    const MemCategory cats[3] = {MEM_PARAMS, MEM_GRADS, MEM_OPTIMIZER};
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        for (int k = 0; k < 3; k++) {
            if (bytes[k] <= 0)
                continue;
            if (is_alloc) {
                graph_alloc(b->g, r, STREAM_COMPUTE, MEM_GPU, cats[k], bytes[k],
                            &bufs[(size_t)r * 3 + k]);
            } else {
                OpId f = graph_free(b->g, r, STREAM_COMPUTE, bufs[(size_t)r * 3 + k]);
                depend(b, b->last_gather[r], f);
                depend(b, b->last_reduce[r], f);
            }
        }
    }
}

static int check_supported(const TrainConfig *train, Err *err)
{
    const ZeroConfig *z = &train->zero;
    if (z->offload_optimizer.device != OFFLOAD_NONE || z->offload_param.device != OFFLOAD_NONE)
        return err_set(err, "%s: zero_optimization.offload_optimizer/offload_param: expected "
                       "\"none\" for zerosim run (the offload schedules are not simulated yet; "
                       "zerosim estimate covers their memory), got optimizer \"%s\", params "
                       "\"%s\"", train->file, ds_config_offload_name(z->offload_optimizer.device),
                       ds_config_offload_name(z->offload_param.device));
    return 0;
}

Graph *zero_schedule_build(const ModelConfig *model, const TrainConfig *train, const Platform *p,
                           const RunSetup *setup, const ScheduleOptions *opts, Err *err)
{
    if (check_supported(train, err))
        return NULL;
    Builder b = {0};
    const uint32_t n = (uint32_t)setup->n_gpus;
    b.model = model;
    b.train = train;
    b.opts = opts;
    b.z = &train->zero;
    b.n_ranks = n;
    b.is_textbook = opts->variant == SCHEDULE_TEXTBOOK;
    b.g = graph_create(n);
    params_count(model, &b.params);
    zero_memory(train, &b.params, model->n_layers, n, &b.mem);
    activations_bytes(model, setup, &b.act);
    cost_step(model, &b.params, setup, train, p, &b.cost);
    split_units(&b);
    labels(&b);
    uint32_t *world = xmalloc(n * sizeof *world);
    for (uint32_t r = 0; r < n; r++)
        world[r] = r;
    b.world = graph_add_group(b.g, world, n);
    free(world);
    OpId **arrays[] = {&b.ops, &b.last_compute, &b.wait_gather, &b.wait_bucket, &b.last_reduce,
                       &b.last_gather, &b.bucket_prev, &b.bucket_last};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        *arrays[k] = xmalloc(n * sizeof **arrays[k]);
        for (uint32_t r = 0; r < n; r++)
            (*arrays[k])[r] = GRAPH_NO_OP;
    }
    uint32_t *states = xmalloc((size_t)n * 3 * sizeof *states);
    model_states(&b, states, true);
    for (uint32_t step = 0; step < opts->n_steps; step++) {
        for (uint64_t mb = 0; mb < setup->grad_accum; mb++)
            micro_batch(&b, mb + 1 == setup->grad_accum);
        boundary(&b);
    }
    model_states(&b, states, false);
    free(states);
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        free(*arrays[k]);
    free(b.unit_params);
    free(b.unit_gathered);
    if (graph_finalize(b.g, err)) {
        graph_destroy(b.g);
        return NULL;
    }
    return b.g;
}

const char *zero_schedule_variant_name(ScheduleVariant v)
{
    return v == SCHEDULE_TEXTBOOK ? "textbook" : "deepspeed";
}
