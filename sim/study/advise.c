/*
 * advise.c - candidates, the micro-batch search, simulation in child processes, ranking
 * (see advise.h).
 */
#include "advise.h"

#include "advise_config.h"
#include "child.h"

#include "../engine/engine.h"
#include "../model/estimate.h"
#include "../report/breakdown.h"
#include "../report/run_report.h"
#include "../schedule/symmetric.h"
#include "../schedule/zero_schedule.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static EstimateOptions setup_of(const Candidate *c, uint64_t seq_len)
{
    return (EstimateOptions){.seq_len = seq_len,
                             .recompute = c->is_checkpointed ? RECOMPUTE_FULL : RECOMPUTE_NONE,
                             .checkpoint_every = 1,
                             .is_flash_attention = true,
                             .headroom_fraction = ESTIMATE_DEFAULT_HEADROOM_FRACTION,
                             .ep_size = c->ep_size};
}

/* The expert-parallel sizes searched for a mixture of experts (docs/MODEL.md, "Mixtures of
 * experts"): none (1), the GPUs of a node (the all-to-all stays on NVLink), and the widest
 * power of two dividing both the experts and the GPUs (the fewest experts per GPU, the
 * all-to-all across nodes); each a divisor of the experts and the GPU count. Returns how many
 * (1 for a dense model). */
static size_t ep_sizes(const AdviseRequest *req, uint64_t out[3])
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
    double step_s, tokens_per_s, tflops_per_gpu, gpu_peak, bytes;
    char bottleneck[40];
    double share;
    char err[ERR_MSG_MAX];
} SimResult;

typedef struct SimJob {
    const Candidate *candidate;
    const AdviseRequest *req;
} SimJob;

/* In a child process: build, run and summarise one candidate. */
static void simulate_child(void *arg, void *result)
{
    const SimJob *job = arg;
    const Candidate *c = job->candidate;
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
    out->step_s = m.step_s;
    out->tokens_per_s = m.tokens_per_s;
    out->tflops_per_gpu = m.tflops_per_gpu;
    out->gpu_peak = memory_gpu_device_peak_bytes(m.gpu_peak);
    for (int k = 0; k < COLL_N_KINDS; k++)
        out->bytes += r.coll_bytes[0][k];
    BreakdownCategory largest = breakdown_largest(&report.breakdown);
    snprintf(out->bottleneck, sizeof out->bottleneck, "%s",
             breakdown_category(largest)->short_name);
    const double total = report.breakdown.total_s;
    out->share = total > 0 ? report.breakdown.time_s[largest] / total : 0.0;
    engine_result_fini(&r);
    ds_config_fini(&train);
done:
    graph_destroy(g);
    if (err.is_set)
        snprintf(out->err, sizeof out->err, "%s", err.msg);
}

static int simulate(Candidate *c, const AdviseRequest *req, Err *err)
{
    SimJob job = {c, req};
    SimResult res;
    const char *what = c->zero_stage == 3 ? "advise: simulating ZeRO-3"
                                          : "advise: simulating a candidate";
    if (child_call(simulate_child, &job, &res, sizeof res, what, err))
        return -1;
    if (!res.ok)
        return err_set(err, "%s: %s", what,
                       res.err[0] ? res.err : "the simulation process failed");
    c->is_simulated = true;
    c->step_s = res.step_s;
    c->tokens_per_s = res.tokens_per_s;
    c->tflops_per_gpu = res.tflops_per_gpu;
    c->sim_gpu_peak_bytes = res.gpu_peak;
    c->bytes_per_rank = res.bytes;
    snprintf(c->bottleneck, sizeof c->bottleneck, "%s", res.bottleneck);
    c->bottleneck_share = res.share;
    return 0;
}

/* The candidate of one shape at the largest power-of-two micro-batch that fits (and divides
 * the per-GPU share of the global batch); else at micro-batch 1, which says by how much it
 * does not fit. */
static int search_micro_batch(const Shape *s, bool is_checkpointed, uint64_t ep_size,
                              const AdviseRequest *req, Candidate *out, Err *err)
{
    const uint64_t n = platform_n_gpus(req->platform);
    const uint64_t batch = req->global_batch;
    Candidate c = {.zero_stage = s->stage,
                   .offload_optimizer = s->optimizer,
                   .offload_param = s->param,
                   .is_checkpointed = is_checkpointed,
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

int advise_search(const AdviseRequest *req, Candidate **out_candidates, size_t *out_n, Err *err)
{
    const size_t n_shapes = sizeof shapes / sizeof shapes[0];
    uint64_t eps[3];
    const size_t n_eps = ep_sizes(req, eps);
    Candidate *cands = calloc(2 * n_shapes * n_eps, sizeof *cands);
    size_t n = 0;
    *out_candidates = NULL;
    *out_n = 0;
    if (cands == NULL)
        return err_set(err, "advise: out of memory");
    for (size_t s = 0; s < n_shapes; s++) {
        if (shapes[s].optimizer == OFFLOAD_NVME && req->platform->nvme.n_drives == 0)
            continue;
        for (size_t e = 0; e < n_eps; e++)
            for (int ckpt = 0; ckpt < 2; ckpt++)
                if (search_micro_batch(&shapes[s], ckpt, eps[e], req, &cands[n++], err))
                    goto fail;
    }
    for (size_t i = 0; i < n; i++)
        if (cands[i].fits && simulate(&cands[i], req, err))
            goto fail;
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
        if (a->tokens_per_s != b->tokens_per_s)
            return a->tokens_per_s > b->tokens_per_s ? -1 : 1;
        return a->gpu_bytes < b->gpu_bytes ? -1 : a->gpu_bytes > b->gpu_bytes;
    }
    return a->shortfall_bytes < b->shortfall_bytes ? -1 : a->shortfall_bytes > b->shortfall_bytes;
}

void advise_rank(Candidate *candidates, size_t n, double hbm_bytes)
{
    qsort(candidates, n, sizeof *candidates, compare);
    /* When the fastest leaves less than ADVISE_TIGHT_FRACTION of the GPU free, the one with
     * the most room among the fitting candidates within ADVISE_NEAR_EQUAL_FRACTION of it goes
     * first: a run that fits by a few hundred MiB is one PyTorch release or one longer batch
     * away from out-of-memory. */
    if (n < 2 || !candidates[0].fits || !candidates[0].is_simulated ||
        hbm_bytes - candidates[0].sim_gpu_peak_bytes >= ADVISE_TIGHT_FRACTION * hbm_bytes)
        return; /* the fastest has room enough */
    const double floor = candidates[0].tokens_per_s * (1.0 - ADVISE_NEAR_EQUAL_FRACTION);
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        const Candidate *c = &candidates[i];
        if (!c->fits || !c->is_simulated || c->tokens_per_s < floor)
            break; /* sorted: the rest are slower */
        if (c->sim_gpu_peak_bytes < candidates[best].sim_gpu_peak_bytes)
            best = i;
    }
    if (best > 0) {
        Candidate chosen = candidates[best];
        memmove(&candidates[1], &candidates[0], best * sizeof *candidates);
        candidates[0] = chosen;
    }
}
