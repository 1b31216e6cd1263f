/*
 * remedy.c - the cheapest variant of a configuration that fits (see remedy.h).
 *
 * Variants are the user's shape and the shapes that save more memory (never less: a shape
 * is tried only if its stage and both offload devices are at least the user's), times every
 * micro-batch that divides the user's (accumulation grows to keep the global batch), times
 * the user's recomputation and every stronger one. For one shape and batch split, memory
 * falls and compute rises as more layers are checkpointed, so every:N is scanned from the
 * fewest checkpointed layers down and stops at the first that fits.
 */
#include "remedy.h"

#include "../common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shapes that save more memory than DDP, in the guide's speed order. */
static const DsShape ladder[] = {
    {1, OFFLOAD_NONE, OFFLOAD_NONE}, {2, OFFLOAD_NONE, OFFLOAD_NONE},
    {2, OFFLOAD_CPU, OFFLOAD_NONE},  {3, OFFLOAD_NONE, OFFLOAD_NONE},
    {3, OFFLOAD_CPU, OFFLOAD_NONE},  {3, OFFLOAD_CPU, OFFLOAD_CPU},
    {3, OFFLOAD_NVME, OFFLOAD_NVME},
};

int remedy_shape_tier(const DsShape *s)
{
    if (s->stage <= 2)
        return s->optimizer == OFFLOAD_NONE ? 0 : 1;
    const bool nvme = s->optimizer == OFFLOAD_NVME || s->param == OFFLOAD_NVME;
    return 2 + (s->optimizer != OFFLOAD_NONE) + (s->param != OFFLOAD_NONE) + nvme;
}

static bool same_shape(const DsShape *a, const DsShape *b)
{
    return a->stage == b->stage && a->optimizer == b->optimizer && a->param == b->param;
}

/* Whether s keeps at least as little on the GPU as cur, on every axis. */
static bool saves_more(const DsShape *s, const DsShape *cur)
{
    return s->stage >= cur->stage && s->optimizer >= cur->optimizer && s->param >= cur->param;
}

enum { N_TIERS = 6, MAX_CHANGES = 3 };

/* Within this share of the cheapest compute-bound step, fewer changes win: the rule
 * for advise ("when two candidates are within a few percent prefer the simpler one"), a
 * presentation choice, not a cost. */
#define REMEDY_SIMPLER_WITHIN 0.05

typedef struct Search {
    const ModelConfig *model;
    const Platform *platform;
    const EstimateOptions *opts;
    const Estimate *current;
    uint64_t extra_gpu_bytes;
    DsShape user_shape;
    Remedy *out;
    Remedy best[N_TIERS][MAX_CHANGES + 1]; /* the cheapest by tier and number of changes */
} Search;

static bool fits(const Search *s, const Estimate *e)
{
    return e->fits_cpu && e->fits_nvme &&
           e->gpu_device_peak + e->gpu_headroom + s->extra_gpu_bytes <= e->gpu_capacity;
}

/* Estimates variant v on config t; keeps it when it fits and is the cheapest of its tier and
 * number of changes so far. Returns 1 when it fits, 0 when not (or when the estimate refuses
 * the variant). */
static int try_variant(Search *s, TrainConfig *t, const RemedyVariant *v)
{
    EstimateOptions o = *s->opts;
    o.recompute = v->recompute;
    o.checkpoint_every = v->checkpoint_every;
    Estimate e;
    /* a variant the estimate refuses (e.g. a MiCS shard size that does not divide the GPUs)
     * is not a remedy: skip it */
    Err ignored = {0};
    if (estimate_build(s->model, t, s->platform, &o, &e, &ignored))
        return 0;
    s->out->n_estimated++;
    if (!fits(s, &e))
        return 0;
    const RunSetup *cur = &s->current->setup;
    Remedy r = {.is_found = true, .variant = *v};
    r.changes_shape = !same_shape(&v->shape, &s->user_shape);
    r.changes_batch = v->micro_batch != cur->micro_batch;
    r.changes_recompute =
        v->recompute != cur->recompute ||
        (v->recompute == RECOMPUTE_FULL && v->checkpoint_every != cur->checkpoint_every);
    const int n_changes = r.changes_shape + r.changes_batch + r.changes_recompute;
    const int tier = remedy_shape_tier(&v->shape);
    r.gpu_free_bytes = e.gpu_capacity - e.gpu_headroom - s->extra_gpu_bytes - e.gpu_device_peak;
    r.cpu_free_bytes = e.cpu_capacity - e.cpu_peak;
    r.compute_bound_step_s = e.compute_bound_step_s;
    Remedy *slot = &s->best[tier][n_changes];
    if (!slot->is_found || r.compute_bound_step_s < slot->compute_bound_step_s)
        *slot = r;
    return 1;
}

/* The remedy: the fastest tier that has one, then the fewest changes within
 * REMEDY_SIMPLER_WITHIN of that tier's cheapest compute-bound step. */
static void choose(Search *s)
{
    for (int tier = 0; tier < N_TIERS; tier++) {
        double cheapest = 0.0;
        bool any = false;
        for (int n = 0; n <= MAX_CHANGES; n++)
            if (s->best[tier][n].is_found &&
                (!any || s->best[tier][n].compute_bound_step_s < cheapest)) {
                cheapest = s->best[tier][n].compute_bound_step_s;
                any = true;
            }
        if (!any)
            continue;
        for (int n = 0; n <= MAX_CHANGES; n++) {
            const Remedy *r = &s->best[tier][n];
            if (r->is_found && r->compute_bound_step_s <= cheapest * (1 + REMEDY_SIMPLER_WITHIN)) {
                const uint32_t n_estimated = s->out->n_estimated;
                const double now = s->out->current_compute_bound_step_s;
                *s->out = *r;
                s->out->n_estimated = n_estimated;
                s->out->current_compute_bound_step_s = now;
                return;
            }
        }
    }
}

/* Every recomputation at least as strong as the user's, on one shape and batch split. */
static int try_recomputes(Search *s, TrainConfig *t, RemedyVariant v)
{
    const RunSetup *cur = &s->current->setup;
    const uint64_t n_layers = s->model->n_layers;
    v.recompute = cur->recompute;
    v.checkpoint_every = cur->checkpoint_every;
    if (try_variant(s, t, &v))
        return 0; /* fits as it is: more recomputation only costs */
    if (cur->recompute == RECOMPUTE_NONE) {
        v.recompute = RECOMPUTE_SELECTIVE;
        v.checkpoint_every = 1;
        try_variant(s, t, &v);
    }
    /* full recomputation of every N-th layer, fewest checkpointed layers first */
    uint32_t top = cur->recompute == RECOMPUTE_FULL ? cur->checkpoint_every - 1
                                                    : (uint32_t)n_layers;
    for (uint32_t every = top; every >= 1; every--) {
        v.recompute = RECOMPUTE_FULL;
        v.checkpoint_every = every;
        if (try_variant(s, t, &v))
            return 0;
    }
    return 0;
}

/* The user's config with another batch split, for the user's own shape. */
static void copy_with_batch(const TrainConfig *train, const RemedyVariant *v,
                            uint64_t global_batch, TrainConfig *out)
{
    *out = *train;
    strlist_init(&out->defaults_used); /* estimate_build appends; the user's stays intact */
    out->train_batch_size = global_batch;
    out->micro_batch_per_gpu = v->micro_batch;
    out->grad_accum_steps = v->grad_accum;
}

static int search(Search *s, const TrainConfig *train, RemedyConfigFn config_fn, void *ctx,
                  Err *err)
{
    const RunSetup *cur = &s->current->setup;
    const size_t n_ladder = sizeof ladder / sizeof ladder[0];
    for (size_t k = 0; k <= n_ladder; k++) {
        /* k == 0: the user's shape; then each ladder shape that saves more */
        const DsShape shape = k == 0 ? s->user_shape : ladder[k - 1];
        if (k > 0 && (config_fn == NULL || same_shape(&shape, &s->user_shape) ||
                      !saves_more(&shape, &s->user_shape)))
            continue;
        for (uint64_t mb = cur->micro_batch; mb >= 1; mb--) {
            if (cur->micro_batch % mb != 0)
                continue;
            RemedyVariant v = {.shape = shape,
                               .micro_batch = mb,
                               .grad_accum = cur->grad_accum * (cur->micro_batch / mb)};
            TrainConfig t;
            int rc;
            if (k == 0) {
                copy_with_batch(train, &v, cur->global_batch, &t);
                rc = try_recomputes(s, &t, v);
                strlist_fini(&t.defaults_used);
            } else {
                rc = config_fn(ctx, &v, &t, err);
                if (rc == 0)
                    rc = try_recomputes(s, &t, v);
                ds_config_fini(&t);
            }
            if (rc)
                return -1;
        }
    }
    return 0;
}

int remedy_find(const ModelConfig *model, const TrainConfig *train, const Platform *platform,
                const EstimateOptions *opts, const Estimate *current, uint64_t extra_gpu_bytes,
                RemedyConfigFn config_fn, void *ctx, Remedy *out, Err *err)
{
    memset(out, 0, sizeof *out);
    out->current_compute_bound_step_s = current->compute_bound_step_s;
    Search *s = xcalloc(1, sizeof *s);
    *s = (Search){.model = model,
                .platform = platform,
                .opts = opts,
                .current = current,
                .extra_gpu_bytes = extra_gpu_bytes,
                .user_shape = {train->zero.stage, train->zero.offload_optimizer.device,
                               train->zero.offload_param.device},
                .out = out};
    int rc = search(s, train, config_fn, ctx, err);
    if (rc == 0)
        choose(s);
    free(s);
    return rc;
}

const char *remedy_describe(const Remedy *r, char *buf, size_t buf_size)
{
    size_t n = 0;
    buf[0] = '\0';
    const RemedyVariant *v = &r->variant;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (n < buf_size)                                                                          \
            n += (size_t)snprintf(buf + n, buf_size - n, __VA_ARGS__);                             \
    } while (0)
    if (r->changes_recompute) {
        char rec[32];
        ADD("--activation-checkpointing %s",
            setup_recompute_name(v->recompute, v->checkpoint_every, rec, sizeof rec));
    }
    if (r->changes_batch)
        ADD("%s--micro-batch %llu --grad-accum %llu", n ? " " : "",
            (unsigned long long)v->micro_batch, (unsigned long long)v->grad_accum);
    if (r->changes_shape) {
        ADD("%szero_optimization.stage = %d", n ? " and " : "", v->shape.stage);
        if (v->shape.optimizer != OFFLOAD_NONE)
            ADD(", offload_optimizer.device = %s", ds_config_offload_name(v->shape.optimizer));
        if (v->shape.param != OFFLOAD_NONE)
            ADD(", offload_param.device = %s", ds_config_offload_name(v->shape.param));
    }
#undef ADD
    return buf;
}
