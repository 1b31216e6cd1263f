/*
 * advise.c - candidates, the micro-batch and checkpointing search, simulation in child
 * processes (several at once, long accumulations extrapolated), ranking (see advise.h).
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */

#include "advise.h"

#include "advise_config.h"
#include "child.h"

#include "../engine/engine.h"
#include "../model/estimate.h"
#include "../model/params.h"
#include "../report/breakdown.h"
#include "../report/run_report.h"
#include "../schedule/symmetric.h"
#include "../schedule/zero_schedule.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Shape {
    int stage;
    OffloadDevice optimizer, param;
} Shape;

static const Shape shapes[] = {
    {0, OFFLOAD_NONE, OFFLOAD_NONE}, {1, OFFLOAD_NONE, OFFLOAD_NONE},
    {2, OFFLOAD_NONE, OFFLOAD_NONE}, {3, OFFLOAD_NONE, OFFLOAD_NONE},
    {2, OFFLOAD_CPU, OFFLOAD_NONE},  {3, OFFLOAD_CPU, OFFLOAD_NONE},
    {3, OFFLOAD_CPU, OFFLOAD_CPU},   {3, OFFLOAD_NVME, OFFLOAD_NVME},
};

/* The most widened-prefetch siblings tried: of the fastest ZeRO-3 candidates, so the cost of
 * advise grows by a few simulations at most. */
#define MAX_PREFETCH_SIBLINGS 3
#define MAX_EPS 3 /* expert-parallel sizes searched: none, a node, the widest */

static EstimateOptions setup_of(const Candidate *c, uint64_t seq_len)
{
    return (EstimateOptions){.seq_len = seq_len,
                             .recompute = c->is_checkpointed ? RECOMPUTE_FULL : RECOMPUTE_NONE,
                             .checkpoint_every = c->checkpoint_every ? c->checkpoint_every : 1,
                             .is_flash_attention = true,
                             .headroom_fraction = ESTIMATE_DEFAULT_HEADROOM_FRACTION,
                             .ep_size = c->ep_size};
}

/* The expert-parallel sizes searched for a mixture of experts (docs/MODEL.md, "Mixtures of
 * experts"): none (1), the GPUs of a node (the all-to-all stays on NVLink), and the widest
 * power of two dividing both the experts and the GPUs (the fewest experts per GPU, the
 * all-to-all across nodes); each a divisor of the experts and the GPU count. Returns how many
 * (1 for a dense model). */
static size_t ep_sizes(const AdviseRequest *req, uint64_t out[MAX_EPS])
{
    const uint64_t n_gpus = platform_n_gpus(req->platform), experts = req->model->moe.n_experts;
    size_t n = 0;
    out[n++] = 1;
    if (experts == 0)
        return n;
    uint64_t widest = 1;
    while (widest * 2 <= n_gpus && n_gpus % (widest * 2) == 0 && experts % (widest * 2) == 0)
        widest *= 2;
    const uint64_t g = req->platform->gpus_per_node;
    if (g > 1 && g < widest && experts % g == 0 && n_gpus % g == 0)
        out[n++] = g;
    if (widest > 1)
        out[n++] = widest;
    return n;
}

/* Estimates candidate c; fills fits, runs_out, shortfall and the estimated GPU peak. */
static int estimate(Candidate *c, const AdviseRequest *req, Err *err)
{
    TrainConfig train;
    if (advise_config_parse(c, req->precision, &train, err))
        return -1;
    EstimateOptions opts = setup_of(c, req->seq_len);
    Estimate e;
    int rc = estimate_build(req->model, &train, req->platform, &opts, &e, err);
    ds_config_fini(&train);
    if (rc)
        return -1;
    c->fits = e.fits;
    c->gpu_bytes = (double)e.gpu_device_peak;
    /* the GPU peak without activations (estimate.c's device peak with none held) */
    const uint64_t states = e.mem.gpu_model_states + e.mem.gpu_buffers + e.mem.gpu_step_copies +
                            e.runtime.cublas_workspace_bytes + e.runtime.outside_bytes;
    c->gpu_states_bytes = (double)states;
    c->bound_step_s = e.compute_bound_step_s;
    snprintf(c->limit, sizeof c->limit, "%s",
             e.fits_gpu                                        ? ""
             : states + e.gpu_headroom > e.gpu_capacity ? "states"
                                                               : "activations");
    const char *what = !e.fits_gpu ? "gpu" : !e.fits_cpu ? "cpu" : !e.fits_nvme ? "nvme" : "";
    snprintf(c->runs_out, sizeof c->runs_out, "%s", what);
    c->shortfall_bytes = !e.fits_gpu    ? (double)(e.gpu_device_peak + e.gpu_headroom) -
                                              (double)e.gpu_capacity
                         : !e.fits_cpu  ? (double)(e.cpu_peak - e.cpu_capacity)
                         : !e.fits_nvme ? (double)(e.nvme_peak - e.nvme_capacity)
                                        : 0.0;
    return 0;
}

/* What a child process hands back about one simulated candidate. */
typedef struct SimResult {
    int ok;
    AdviseSample s;
    char err[ERR_MSG_MAX];
} SimResult;

typedef struct SimJob {
    const Candidate *candidate;
    const AdviseRequest *req;
    uint64_t grad_accum; /* simulated instead of the candidate's (0: its own) */
} SimJob;

/* In a child process: build, run and summarise one candidate. */
static void simulate_child(void *arg, void *result)
{
    const SimJob *job = arg;
    Candidate shape = *job->candidate;
    if (job->grad_accum)
        shape.grad_accum = job->grad_accum;
    const Candidate *c = &shape;
    const AdviseRequest *req = job->req;
    SimResult *out = result;
    Err err = {0};
    TrainConfig train;
    Estimate est;
    Graph *g = NULL;
    EngineResult r = {0};
    EstimateOptions opts = setup_of(c, req->seq_len);
    ScheduleOptions sched = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1, .has_activations = true};
    EngineOptions eng = {.algo = COLL_ALGO_AUTO};
    if (advise_config_parse(c, req->precision, &train, &err))
        goto done;
    /* the mode `zerosim run` chooses: beyond four nodes, two stand for all of them */
    Platform simulated;
    symmetric_choose(req->platform, SIM_MODE_AUTO, &simulated, &sched);
    if (estimate_build(req->model, &train, req->platform, &opts, &est, &err)) {
        ds_config_fini(&train);
        goto done;
    }
    eng.gpu_outside_bytes = (double)est.runtime.outside_bytes;
    eng.gpu_headroom_bytes = (double)est.gpu_headroom;
    if ((g = zero_schedule_build(req->model, &train, req->platform, &est.setup, &sched, &err)) ==
            NULL ||
        engine_init(&simulated, train.precision, &err) || engine_run(g, &eng, &r, &err)) {
        ds_config_fini(&train);
        goto done;
    }
    RunReport report = {.inputs = {req->model, &train, req->platform, &est, NULL},
                        .graph = g,
                        .result = &r,
                        .n_steps = 1};
    breakdown_rank(g, &r, 0, &report.breakdown);
    RunMetrics m;
    run_report_metrics(&report, &m);
    out->ok = 1;
    out->s.step_s = m.step_s;
    out->s.tokens_per_s = m.tokens_per_s;
    out->s.tflops_per_gpu = m.tflops_per_gpu;
    out->s.gpu_peak = memory_gpu_device_peak_bytes(m.gpu_peak);
    for (int k = 0; k < COLL_N_KINDS; k++)
        out->s.bytes += r.coll_bytes[0][k];
    memcpy(out->s.time_s, report.breakdown.time_s, sizeof out->s.time_s);
    engine_result_fini(&r);
    ds_config_fini(&train);
done:
    graph_destroy(g);
    if (err.is_set)
        snprintf(out->err, sizeof out->err, "%s", err.msg);
}

static const char *sim_what(const Candidate *c)
{
    return c->zero_stage == 3 ? "advise: simulating ZeRO-3" : "advise: simulating a candidate";
}

/* Takes a child's result into its candidate: the bottleneck is the largest share of the
 * step's breakdown. */
static int take_result(Candidate *c, const SimResult *res, Err *err)
{
    if (!res->ok)
        return err_set(err, "%s: %s", sim_what(c),
                       res->err[0] ? res->err : "the simulation process failed");
    c->is_simulated = true;
    c->step_s = res->s.step_s;
    c->tokens_per_s = res->s.tokens_per_s;
    c->tflops_per_gpu = res->s.tflops_per_gpu;
    c->sim_gpu_peak_bytes = res->s.gpu_peak;
    c->bytes_per_rank = res->s.bytes;
    Breakdown b = {.total_s = res->s.step_s};
    memcpy(b.time_s, res->s.time_s, sizeof b.time_s);
    const BreakdownCategory largest = breakdown_largest(&b);
    snprintf(c->bottleneck, sizeof c->bottleneck, "%s", breakdown_category(largest)->short_name);
    c->bottleneck_share = res->s.step_s > 0 ? res->s.time_s[largest] / res->s.step_s : 0.0;
    c->exposed_gather_s = res->s.time_s[BD_ALL_GATHER];
    return 0;
}

/* Beyond this many micro-batches per step, a candidate is simulated at 1 and 2 and
 * extrapolated (advise_extrapolate): 3 micro-batches simulated instead of k. */
#define EXTRAPOLATE_ABOVE 3

void advise_extrapolate(const AdviseSample *one, const AdviseSample *two, uint64_t k,
                        AdviseSample *out)
{
    const AdviseSample t1 = *one, t2 = *two; /* out may be either */
    const double extra = (double)k - 2.0;
    *out = t2;
    out->step_s = t2.step_s + extra * (t2.step_s - t1.step_s);
    out->bytes = t2.bytes + extra * (t2.bytes - t1.bytes);
    for (int c = 0; c < BD_N; c++)
        out->time_s[c] = t2.time_s[c] + extra * (t2.time_s[c] - t1.time_s[c]);
    /* throughputs: k/2 of the work in the extrapolated time */
    const double scale = (double)k / 2.0 * t2.step_s / out->step_s;
    out->tokens_per_s = t2.tokens_per_s * scale;
    out->tflops_per_gpu = t2.tflops_per_gpu * scale;
    out->gpu_peak = t1.gpu_peak > t2.gpu_peak ? t1.gpu_peak : t2.gpu_peak;
}

/* The most simulations run at once: one per online CPU (each is single-threaded), bounded. */
#define MAX_JOBS 16

static size_t n_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : (size_t)n;
}

/* Candidate indices in order of their compute-bound step (the fastest they could be); qsort
 * has no context argument in C11, so the array sorted against is set just before (advise
 * runs in one thread). */
static const Candidate *sort_base;
static int by_bound(const void *pa, const void *pb)
{
    const Candidate *a = &sort_base[*(const size_t *)pa], *b = &sort_base[*(const size_t *)pb];
    return a->bound_step_s < b->bound_step_s ? -1 : a->bound_step_s > b->bound_step_s;
}

/* Simulates the candidates cands[from .. to) that fit, several children at once, in order of
 * their compute-bound step; one whose bound (its kernels alone, nothing exposed) is already
 * slower than the fastest simulated so far by more than the near-equal band cannot be
 * recommended, and is not simulated (it keeps is_simulated false). A candidate of more than
 * EXTRAPOLATE_ABOVE micro-batches runs as two children, at 1 and 2, extrapolated. *done counts
 * the candidates started, of total, for the progress callback. Every started child is
 * finished, even after an error. */
static int simulate_range(Candidate *cands, size_t from, size_t to, size_t *done, size_t total,
                          const AdviseRequest *req, Err *err)
{
    enum { MAX_CANDIDATES = 3 * MAX_EPS * sizeof shapes / sizeof shapes[0] + MAX_PREFETCH_SIBLINGS };
    ChildCall calls[MAX_JOBS];
    size_t slot_task[MAX_JOBS];           /* running: the task in each slot */
    size_t order[MAX_CANDIDATES];         /* candidates by bound */
    size_t task_cand[2 * MAX_CANDIDATES]; /* tasks: a candidate and the accumulation it runs */
    uint64_t task_accum[2 * MAX_CANDIDATES];
    SimResult first[MAX_CANDIDATES]; /* the accumulation-1 half of a pair, by candidate slot */
    int n_parts_left[MAX_CANDIDATES];
    size_t n_order = 0, n_tasks = 0;
    for (size_t i = from; i < to; i++)
        if (cands[i].fits)
            order[n_order++] = i;
    sort_base = cands;
    qsort(order, n_order, sizeof *order, by_bound);
    for (size_t k = 0; k < n_order; k++) {
        const bool split = cands[order[k]].grad_accum > EXTRAPOLATE_ABOVE;
        n_parts_left[k] = split ? 2 : 1;
        for (int part = 0; part < (split ? 2 : 1); part++) {
            task_cand[n_tasks] = k;
            task_accum[n_tasks++] = split ? (uint64_t)(1 + part) : 0;
        }
    }
    double best_step_s = 0.0; /* the fastest finished so far (0: none yet) */
    for (size_t i = 0; i < from; i++)
        if (cands[i].is_simulated && (best_step_s == 0.0 || cands[i].step_s < best_step_s))
            best_step_s = cands[i].step_s;
    const size_t jobs = n_jobs();
    size_t next = 0, n_running = 0, head = 0;
    int rc = 0;
    for (;;) {
        while (rc == 0 && n_running < jobs && next < n_tasks) {
            const size_t k = task_cand[next];
            Candidate *c = &cands[order[k]];
            if (task_accum[next] <= 1) { /* a candidate's first task */
                if (req->progress)
                    req->progress(req->progress_ctx, (*done)++, total, c);
                if (best_step_s > 0.0 &&
                    c->bound_step_s * (1.0 - ADVICE_NEAR_EQUAL_FRACTION) > best_step_s) {
                    next += (size_t)n_parts_left[k]; /* cannot come within the band */
                    continue;
                }
            }
            SimJob job = {c, req, task_accum[next]};
            SimResult scratch;
            const size_t slot = (head + n_running) % jobs;
            if (child_start(&calls[slot], simulate_child, &job, sizeof scratch, &scratch,
                            sim_what(c), err)) {
                rc = -1;
                break;
            }
            slot_task[slot] = next++;
            n_running++;
        }
        if (n_running == 0)
            return rc;
        SimResult res;
        const size_t task = slot_task[head], k = task_cand[task];
        Candidate *c = &cands[order[k]];
        if (child_finish(&calls[head], &res, sizeof res, sim_what(c), err))
            rc = -1;
        head = (head + 1) % jobs;
        n_running--;
        if (rc != 0)
            continue;
        if (task_accum[task] == 1) { /* the first half of a pair: keep it */
            first[k] = res;
            if (!res.ok)
                rc = take_result(c, &res, err);
            continue;
        }
        if (task_accum[task] == 2 && res.ok && first[k].ok)
            advise_extrapolate(&first[k].s, &res.s, c->grad_accum, &res.s);
        if (take_result(c, &res, err))
            rc = -1;
        else if (best_step_s == 0.0 || c->step_s < best_step_s)
            best_step_s = c->step_s;
    }
}

/* The candidate of one shape, checkpointing and expert parallelism at the largest power-of-two
 * micro-batch that fits (and divides the per-GPU share of the global batch); else at
 * micro-batch 1, which says by how much it does not fit. */
static int search_micro_batch(const Shape *s, uint32_t checkpoint_every, uint64_t ep_size,
                              const AdviseRequest *req, Candidate *out, Err *err)
{
    const uint64_t n = platform_n_gpus(req->platform);
    const uint64_t batch = req->global_batch;
    Candidate c = {.zero_stage = s->stage,
                   .offload_optimizer = s->optimizer,
                   .offload_param = s->param,
                   .is_checkpointed = checkpoint_every > 0,
                   .checkpoint_every = checkpoint_every,
                   .ep_size = ep_size};
    bool found = false;
    for (uint64_t mb = 1; mb <= req->max_micro_batch; mb *= 2) {
        uint64_t share = batch ? batch / n : mb;
        if (share % mb != 0)
            break;
        c.micro_batch = mb;
        c.grad_accum = share / mb;
        if (estimate(&c, req, err))
            return -1;
        if (!c.fits)
            break;
        *out = c;
        found = true;
    }
    if (found)
        return 0;
    c.micro_batch = 1;
    c.grad_accum = batch ? batch / n : 1;
    if (estimate(&c, req, err))
        return -1;
    *out = c;
    return 0;
}

/* every:N checkpointing: at the largest micro-batch above the one that fits without
 * checkpointing (none's) and no larger than full checkpointing's, the largest N that fits
 * (the fewest layers recomputed for that micro-batch); *out_found false when no N >= 2 fits at
 * any. Memory falls as N shrinks (more layers keep only their input: layers 0, N, 2N, ... are
 * checkpointed, model/setup.c), so the largest N is found by bisection. */
static int search_every(const Candidate *full, const Candidate *none, const AdviseRequest *req,
                        Candidate *out, bool *out_found, Err *err)
{
    *out_found = false;
    const uint32_t L = (uint32_t)req->model->n_layers;
    const uint64_t floor_mb = none->fits ? none->micro_batch : 0;
    if (!full->fits || L < 3 || floor_mb >= full->micro_batch)
        return 0;
    const uint64_t n = platform_n_gpus(req->platform);
    Candidate c = *full;
    for (uint64_t mb = full->micro_batch; mb > floor_mb; mb /= 2) {
        c.micro_batch = mb;
        c.grad_accum = req->global_batch ? req->global_batch / n / mb : 1;
        uint32_t lo = 1, hi = L; /* every:1 (full) fits at full's micro-batch and below */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo + 1) / 2;
            c.checkpoint_every = mid;
            if (estimate(&c, req, err))
                return -1;
            if (c.fits)
                lo = mid;
            else
                hi = mid - 1;
        }
        if (lo < 2)
            continue;
        c.checkpoint_every = lo;
        if (estimate(&c, req, err))
            return -1;
        *out = c;
        *out_found = true;
        return 0;
    }
    return 0;
}

/* Every candidate at the same global batch: the request's, else the GPUs times the largest
 * micro-batch that fits any candidate (each micro-batch is a power of two no larger, so it
 * divides the share); accumulation makes up the rest. Returns the global batch. */
static uint64_t common_batch(Candidate *cands, size_t n, const AdviseRequest *req)
{
    const uint64_t gpus = platform_n_gpus(req->platform);
    uint64_t batch = req->global_batch;
    if (batch == 0) {
        uint64_t largest = 1;
        for (size_t i = 0; i < n; i++)
            if (cands[i].fits && cands[i].micro_batch > largest)
                largest = cands[i].micro_batch;
        batch = largest * gpus;
    }
    for (size_t i = 0; i < n; i++)
        cands[i].grad_accum = batch / gpus / cands[i].micro_batch;
    return batch;
}

/* Rounds up to a multiple of 1e6 elements: a value a user would write in a config. */
static uint64_t round_elements(uint64_t n)
{
    const uint64_t step = 1000000;
    return (n + step - 1) / step * step;
}

/* A ZeRO-3 candidate gets a sibling when its compute waited this share of the step on
 * all-gathers: below it, prefetching more could gain at most that much. */
#define PREFETCH_MIN_GATHER_SHARE 0.01
/* ... and keeps it when it is faster than its parent by more than this (simulation noise). */
#define SIBLING_MIN_GAIN 0.001

/* The widened sibling of a simulated ZeRO-3 candidate: DeepSpeed prefetches up to
 * min(stage3_max_live_parameters - available, stage3_prefetch_bucket_size) elements ahead
 * (partitioned_param_coordinator.py, fetch_sub_module), so a bucket of one layer and a live
 * budget of two let the next layer arrive while one computes. false when the defaults already
 * allow it or the sibling does not fit. */
static int prefetch_sibling(const Candidate *c, const AdviseRequest *req, Candidate *out,
                            bool *out_found, Err *err)
{
    *out_found = false;
    TrainConfig train;
    if (advise_config_parse(c, req->precision, &train, err))
        return -1;
    const uint64_t live = train.zero.max_live_parameters;
    const uint64_t bucket = train.zero.prefetch_bucket_size;
    ds_config_fini(&train);
    ModelParams p;
    params_count(req->model, &p);
    Candidate s = *c;
    s.prefetch_bucket_size = round_elements(p.per_layer);
    s.max_live_parameters = round_elements(2 * p.per_layer);
    /* nothing of the parent's simulation carries over */
    s.is_simulated = false;
    s.step_s = s.tokens_per_s = s.tflops_per_gpu = s.sim_gpu_peak_bytes = 0.0;
    s.bytes_per_rank = s.bottleneck_share = s.exposed_gather_s = 0.0;
    s.bottleneck[0] = '\0';
    if (s.prefetch_bucket_size <= bucket && s.max_live_parameters <= live)
        return 0;
    if (s.prefetch_bucket_size < bucket)
        s.prefetch_bucket_size = bucket;
    if (s.max_live_parameters < live)
        s.max_live_parameters = live;
    if (estimate(&s, req, err))
        return -1;
    if (!s.fits)
        return 0;
    *out = s;
    *out_found = true;
    return 0;
}

static int by_throughput(const void *pa, const void *pb)
{
    const Candidate *a = *(const Candidate *const *)pa, *b = *(const Candidate *const *)pb;
    return a->tokens_per_s > b->tokens_per_s ? -1 : a->tokens_per_s < b->tokens_per_s;
}

int advise_search(const AdviseRequest *req, Candidate **out_candidates, size_t *out_n,
                  uint64_t *out_global_batch, Err *err)
{
    const size_t n_shapes = sizeof shapes / sizeof shapes[0];
    uint64_t eps[MAX_EPS];
    const size_t n_eps = ep_sizes(req, eps);
    Candidate *cands = calloc(3 * n_shapes * n_eps + MAX_PREFETCH_SIBLINGS, sizeof *cands);
    size_t n = 0;
    *out_candidates = NULL;
    *out_n = 0;
    *out_global_batch = 0;
    if (cands == NULL)
        return err_set(err, "advise: out of memory");
    for (size_t s = 0; s < n_shapes; s++) {
        if (shapes[s].optimizer == OFFLOAD_NVME && req->platform->nvme.n_drives == 0)
            continue;
        for (size_t e = 0; e < n_eps; e++) {
            Candidate *none = &cands[n], *full = &cands[n + 1];
            bool found;
            if (search_micro_batch(&shapes[s], 0, eps[e], req, none, err) ||
                search_micro_batch(&shapes[s], 1, eps[e], req, full, err) ||
                search_every(full, none, req, &cands[n + 2], &found, err))
                goto fail;
            n += found ? 3 : 2;
        }
    }
    *out_global_batch = common_batch(cands, n, req);
    size_t total = 0, done = 0;
    for (size_t i = 0; i < n; i++) {
        if (estimate(&cands[i], req, err)) /* at its accumulation */
            goto fail;
        total += cands[i].fits;
    }
    if (simulate_range(cands, 0, n, &done, total, req, err))
        goto fail;
    /* the fastest ZeRO-3 candidates that waited on all-gathers, widened */
    Candidate *zero3[3 * MAX_EPS * sizeof shapes / sizeof shapes[0]];
    size_t n3 = 0;
    for (size_t i = 0; i < n; i++)
        if (cands[i].is_simulated && cands[i].zero_stage == 3 &&
            cands[i].exposed_gather_s >= PREFETCH_MIN_GATHER_SHARE * cands[i].step_s)
            zero3[n3++] = &cands[i];
    qsort(zero3, n3, sizeof *zero3, by_throughput);
    const size_t n_before = n;
    double parent_tokens[MAX_PREFETCH_SIBLINGS];
    for (size_t k = 0; k < n3 && n - n_before < MAX_PREFETCH_SIBLINGS; k++) {
        bool found;
        if (prefetch_sibling(zero3[k], req, &cands[n], &found, err))
            goto fail;
        if (found)
            parent_tokens[n++ - n_before] = zero3[k]->tokens_per_s;
    }
    total += n - n_before;
    if (simulate_range(cands, n_before, n, &done, total, req, err))
        goto fail;
    /* a sibling no faster than its parent only costs memory: left out */
    size_t kept = n_before;
    for (size_t i = n_before; i < n; i++)
        if (cands[i].tokens_per_s > parent_tokens[i - n_before] * (1.0 + SIBLING_MIN_GAIN))
            cands[kept++] = cands[i];
    n = kept;
    if (req->progress)
        req->progress(req->progress_ctx, total, total, NULL);
    advise_rank(cands, n, (double)req->platform->gpu.hbm_bytes);
    *out_candidates = cands;
    *out_n = n;
    return 0;
fail:
    free(cands);
    return -1;
}

static int compare(const void *pa, const void *pb)
{
    const Candidate *a = pa, *b = pb;
    if (a->fits != b->fits)
        return a->fits ? -1 : 1;
    if (a->fits) {
        if (a->is_simulated != b->is_simulated)
            return a->is_simulated ? -1 : 1;
        if (!a->is_simulated && a->bound_step_s != b->bound_step_s)
            return a->bound_step_s < b->bound_step_s ? -1 : 1;
        if (a->tokens_per_s != b->tokens_per_s)
            return a->tokens_per_s > b->tokens_per_s ? -1 : 1;
        return a->gpu_bytes < b->gpu_bytes ? -1 : a->gpu_bytes > b->gpu_bytes;
    }
    return a->shortfall_bytes < b->shortfall_bytes ? -1 : a->shortfall_bytes > b->shortfall_bytes;
}

static double room(const Candidate *c, double hbm_bytes)
{
    return hbm_bytes - c->sim_gpu_peak_bytes;
}

/* Whether a is a better recommendation than b, both within the near-equal band. */
static bool is_preferred(const Candidate *a, const Candidate *b, double hbm_bytes,
                         bool want_room)
{
    const double tight = ADVICE_TIGHT_FRACTION * hbm_bytes;
    if (want_room) {
        bool ra = room(a, hbm_bytes) >= tight, rb = room(b, hbm_bytes) >= tight;
        if (ra != rb)
            return ra;
    }
    unsigned ka = advice_complexity(a), kb = advice_complexity(b);
    if (ka != kb)
        return ka < kb;
    return room(a, hbm_bytes) > room(b, hbm_bytes);
}

void advise_rank(Candidate *candidates, size_t n, double hbm_bytes)
{
    qsort(candidates, n, sizeof *candidates, compare);
    if (n == 0 || !candidates[0].fits || !candidates[0].is_simulated)
        return;
    candidates[0].chosen_for = ADVICE_FASTEST;
    /* The band of candidates as fast as the fastest within the model's resolution; sorted, so
     * it is a prefix. Within it: room to spare first (when some has it), then the simplest,
     * then the most room. */
    const double floor = candidates[0].tokens_per_s * (1.0 - ADVICE_NEAR_EQUAL_FRACTION);
    size_t band = 1;
    while (band < n && candidates[band].fits && candidates[band].is_simulated &&
           candidates[band].tokens_per_s >= floor)
        band++;
    bool any_room = false;
    for (size_t i = 0; i < band; i++)
        any_room |= room(&candidates[i], hbm_bytes) >= ADVICE_TIGHT_FRACTION * hbm_bytes;
    size_t best = 0;
    for (size_t i = 1; i < band; i++)
        if (is_preferred(&candidates[i], &candidates[best], hbm_bytes, any_room))
            best = i;
    if (best == 0)
        return;
    Candidate chosen = candidates[best];
    chosen.chosen_for = advice_complexity(&chosen) < advice_complexity(&candidates[0])
                            ? ADVICE_SIMPLER
                            : ADVICE_ROOM;
    memmove(&candidates[1], &candidates[0], best * sizeof *candidates);
    candidates[0] = chosen;
}
