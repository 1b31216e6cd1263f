/*
 * run_report.c - text and JSON for `zerosim run` (see run_report.h).
 */
#include "run_report.h"

#include "../common/units.h"
#include "../model/nccl_model.h"
#include "verdict.h"

#include <string.h>

static double gib(double bytes)
{
    return bytes / UNITS_GIB;
}

void run_report_metrics(const RunReport *r, RunMetrics *out)
{
    const Estimate *e = r->inputs.estimate;
    const Platform *p = r->inputs.platform;
    const double n_gpus = (double)platform_n_gpus(p);
    out->step_s = r->result->makespan_s / r->n_steps;
    out->tokens_per_s = (double)e->setup.global_batch * (double)e->setup.seq_len / out->step_s;
    out->tflops_per_gpu = e->flops.megatron / out->step_s / n_gpus / UNITS_TFLOPS;
    out->mfu = e->flops.model / out->step_s /
               (n_gpus * platform_peak_flops_per_s(p, r->inputs.train->precision));
    uint32_t rank = 0;
    out->gpu_peak = memory_max_peak(r->result->memory, MEM_GPU, &out->peak_rank);
    out->cpu_peak = memory_max_peak(r->result->memory, MEM_CPU, &rank);
    out->nvme_peak = memory_max_peak(r->result->memory, MEM_NVME, &rank);
    out->oom = memory_first_oom(r->result->memory, &out->oom_rank, &out->oom_space);
}

/* The simulated verdict: the first out-of-memory (which memory, rank, when, by how much),
 * else the GPU with the highest device peak. */
void run_report_verdict(const RunReport *r, const RunMetrics *m, Verdict *out)
{
    *out = (Verdict){0};
    const MemAccount *g = m->oom && m->oom_space == MEM_GPU ? m->oom : m->gpu_peak;
    out->model_states_bytes = g->at_peak[MEM_PARAMS] + g->at_peak[MEM_GRADS] +
                              g->at_peak[MEM_OPTIMIZER];
    out->activations_bytes = g->at_peak[MEM_ACTIVATIONS];
    out->other_bytes =
        memory_gpu_device_peak_bytes(g) - out->model_states_bytes - out->activations_bytes;
    out->cpu_needed_bytes = m->cpu_peak->peak_bytes;
    out->cpu_capacity_bytes = m->cpu_peak->capacity_bytes;
    out->nvme_needed_bytes = m->nvme_peak->peak_bytes;
    out->nvme_capacity_bytes = m->nvme_peak->capacity_bytes;
    out->remedy = r->inputs.remedy;
    if (m->oom == NULL) {
        out->runs_out = VERDICT_FITS;
        out->needed_bytes = memory_gpu_device_peak_bytes(g);
        out->capacity_bytes = g->capacity_bytes;
        out->headroom_bytes = g->headroom_bytes;
        out->remedy = NULL;
        return;
    }
    out->runs_out = m->oom_space == MEM_GPU   ? VERDICT_GPU
                    : m->oom_space == MEM_CPU ? VERDICT_CPU
                                              : VERDICT_NVME;
    out->has_rank = true;
    out->rank = m->oom_rank;
    out->time_s = m->oom->oom_time_s;
    /* what the step needs there (its peak), not the usage when it first ran over */
    out->needed_bytes = m->oom_space == MEM_GPU ? memory_gpu_device_peak_bytes(m->oom)
                                                : m->oom->peak_bytes;
    out->capacity_bytes = m->oom->capacity_bytes;
    out->headroom_bytes = m->oom_space == MEM_GPU ? m->oom->headroom_bytes : 0.0;
}

static void line(FILE *out, const char *label, double value, double total)
{
    if (value <= 0 && total > 0)
        return;
    fprintf(out, "  %-34s %10.4f %7.1f%%\n", label, value, total > 0 ? 100.0 * value / total : 0);
}

static double mem_sum(const double *by_category)
{
    double sum = 0.0;
    for (int c = 0; c < MEM_N_CATEGORIES; c++)
        sum += by_category[c];
    return sum;
}

static void row(FILE *out, const char *label, double value)
{
    fprintf(out, "  %-34s %10.2f\n", label, value);
}

void run_report_text(FILE *out, const RunReport *r)
{
    const EstimateReport *in = &r->inputs;
    const Platform *p = in->platform;
    const Estimate *e = in->estimate;
    const EngineResult *res = r->result;
    const Breakdown *b = &r->breakdown;
    RunMetrics m;
    run_report_metrics(r, &m);
    char rec[32];

    fprintf(out, "zerosim run: %s with ZeRO-%d on %s, %llu GPUs (%llu node%s x %llu)\n",
            in->model->name, in->train->zero.stage, p->name, (unsigned long long)platform_n_gpus(p),
            (unsigned long long)p->n_nodes, p->n_nodes == 1 ? "" : "s",
            (unsigned long long)p->gpus_per_node);
    char release[16], nccl[32] = "";
    if (r->comm_model == NULL || strcmp(r->comm_model, "nccl") == 0)
        snprintf(nccl, sizeof nccl, ", NCCL %s",
                 nccl_model_release_name(p, release, sizeof release));
    fprintf(
        out,
        "schedule %s, collectives %s (%s model%s), %u step%s; batch %llu = micro %llu x "
        "accumulation %llu x %llu GPUs, sequence %llu, recompute %s, %s\n\n",
        r->schedule, r->algo, r->comm_model ? r->comm_model : "nccl", nccl, r->n_steps,
        r->n_steps == 1 ? "" : "s", (unsigned long long)e->setup.global_batch,
        (unsigned long long)e->setup.micro_batch, (unsigned long long)e->setup.grad_accum,
        (unsigned long long)e->setup.n_gpus, (unsigned long long)e->setup.seq_len,
        setup_recompute_name(e->setup.recompute, e->setup.checkpoint_every, rec, sizeof rec),
        precision_name(in->train->precision));

    Verdict v;
    run_report_verdict(r, &m, &v);
    verdict_text(out, &v);
    fprintf(out, "\n");
    fprintf(out, "step time        %.4f s   (compute-bound lower bound %.4f s)\n", m.step_s,
            e->compute_bound_step_s);
    fprintf(out,
            "throughput       %.0f tokens/s, %.1f TFLOP/s per GPU (Megatron formula), "
            "MFU %.1f%%\n",
            m.tokens_per_s, m.tflops_per_gpu, 100.0 * m.mfu);

    fprintf(out, "\n%-36s %10s %8s\n", "time per step, rank 0", "s", "share");
    const double k = (double)r->n_steps, total = b->total_s / k;
    double busy_s = 0.0;
    for (int c = 0; c < BD_N; c++) {
        line(out, breakdown_category((BreakdownCategory)c)->text, b->time_s[c] / k, total);
        busy_s += b->busy_s[c];
    }
    if (busy_s > 0)
        fprintf(out,
                "  offload work per step, busy / exposed s: PCIe H2D %.3f / %.3f, D2H "
                "%.3f / %.3f, NVMe read %.3f / %.3f, write %.3f / %.3f, CPU optimizer %.3f / "
                "%.3f\n",
                b->busy_s[BD_H2D] / k, b->time_s[BD_H2D] / k, b->busy_s[BD_D2H] / k,
                b->time_s[BD_D2H] / k, b->busy_s[BD_NVME_READ] / k, b->time_s[BD_NVME_READ] / k,
                b->busy_s[BD_NVME_WRITE] / k, b->time_s[BD_NVME_WRITE] / k,
                b->busy_s[BD_CPU_OPTIMIZER] / k, b->time_s[BD_CPU_OPTIMIZER] / k);
    estimate_report_kernels_text(out, e);

    const MemAccount *g = m.gpu_peak;
    const RuntimeMemory *rt = &e->runtime;
    fprintf(out, "\n%-36s %10s\n", "memory per GPU (simulated)", "GiB");
    static const char *const rows[MEM_N_CATEGORIES] = {
        "parameters",  "gradients", "optimizer states", "activations",
        "buffers (buckets, gathered params)", "optimizer step copies (fp32)",
        "cuBLAS workspaces"};
    for (int c = 0; c < MEM_N_CATEGORIES; c++)
        if (c < MEM_STEP_COPIES || g->at_peak[c] > 0)
            row(out, rows[c], gib(g->at_peak[c]));
    fprintf(out, "  %-34s %10.2f   at %.4f s on rank %u (estimate: %.2f)\n", "= allocated peak",
            gib(g->peak_bytes), g->peak_time_s, m.peak_rank, gib((double)e->gpu_allocated_peak));
    fprintf(out, "  %-34s %10.2f   at %.4f s (%s: %.2f over the %.2f allocated then)\n",
            "reserved peak", gib(g->reserved_peak_bytes), g->reserved_peak_time_s,
            g->is_expandable ? "expandable segments" : "fixed segments",
            gib(g->reserved_peak_bytes - mem_sum(g->at_reserved_peak)),
            gib(mem_sum(g->at_reserved_peak)));
    if (e->gpu_load_bytes > 0)
        fprintf(out, "  %-34s %10.2f   the whole 16-bit model before ZeRO-3 partitions it, at "
                     "0 s (--zero-init off)\n",
                "model load", gib((double)e->gpu_load_bytes));
    if (rt->is_counted) {
        fprintf(out, "  %-34s %10.2f   %s module loading\n", "CUDA context",
                gib((double)rt->cuda_context_bytes), rt->is_eager_loading ? "eager" : "lazy");
        /* the communicators, and the algorithms whose connections hold the bytes */
        const RuntimeNcclBytes *nb = &rt->nccl;
        const struct {
            const char *name;
            uint64_t bytes;
        } algos[] = {{"ring", nb->ring_bytes},
                     {"tree", nb->tree_bytes},
                     {"nvls", nb->nvls_bytes},
                     {"nvls_tree", nb->nvls_tree_bytes}};
        fprintf(out, "  %-34s %10.2f   %llu comm. x %llu ch.", "NCCL buffers",
                gib((double)rt->nccl_bytes), (unsigned long long)rt->n_communicators,
                (unsigned long long)runtime_nccl_channels(p));
        const char *sep = ": ";
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
            if (algos[a].bytes == 0)
                continue;
            fprintf(out, "%s%s %.2f", sep, algos[a].name, gib((double)algos[a].bytes));
            sep = ", ";
        }
        fputc('\n', out);
    } else {
        fprintf(out, "  (the platform has no runtime section: CUDA context and NCCL buffers are "
                     "not counted)\n");
    }
    fprintf(out, "  %-34s %10.2f   of %.2f with %.2f kept free (--headroom)\n",
            "= device peak (reserved + outside)", gib(memory_gpu_device_peak_bytes(g)),
            gib(g->capacity_bytes), gib(g->headroom_bytes));
    fprintf(out, "  %-34s %10.2f   host per node (estimate: %.2f)\n", "host memory peak",
            gib(m.cpu_peak->peak_bytes), gib((double)e->cpu_peak));
    if (m.nvme_peak->peak_bytes > 0)
        fprintf(out, "  %-34s %10.2f   NVMe per node (estimate: %.2f)\n", "NVMe peak",
                gib(m.nvme_peak->peak_bytes), gib((double)e->nvme_peak));
    if (e->has_ds_estimate)
        fprintf(out,
                "  DeepSpeed's estimator (model states only): GPU %.2f GiB, host %.2f GiB per "
                "node\n",
                gib((double)e->ds_estimate.gpu_bytes), gib((double)e->ds_estimate.cpu_bytes));

    fprintf(out, "\n%-36s %10s\n", "bytes sent per rank per step", "GB");
    static const char *const colls[] = {"all-reduce", "all-gather", "reduce-scatter", "broadcast",
                                        "all-to-all"};
    _Static_assert(sizeof colls / sizeof colls[0] == COLL_N_KINDS, "a name per collective");
    for (int c = 0; c < COLL_N_KINDS; c++)
        if (res->coll_bytes[0][c] > 0)
            row(out, colls[c], res->coll_bytes[0][c] / k / 1e9);
    for (int c = 0; c < LINK_N_CLASSES; c++)
        if (res->link_bytes[0][c] > 0) {
            char label[48];
            snprintf(label, sizeof label, "over %s", topology_link_class_name((LinkClass)c));
            row(out, label, res->link_bytes[0][c] / k / 1e9);
        }
    fprintf(out,
            "\nsimulation: %s mode, %u of %llu GPUs simulated, %u ops, %llu activities in "
            "%.2f s (graph built in %.2f s, %.0f activities/s)\n",
            r->mode, r->simulated_gpus, (unsigned long long)platform_n_gpus(p),
            graph_n_ops(r->graph), (unsigned long long)res->n_activities, res->wall_s,
            r->build_wall_s, res->wall_s > 0 ? res->n_activities / res->wall_s : 0);
    if (r->mode_reason)
        fprintf(out, "  full mode because %s\n", r->mode_reason);
    estimate_report_defaults_text(out, in);
}

static void account_json(JsonWriter *w, const char *key, const MemAccount *a)
{
    json_key(w, key);
    json_begin_object(w);
    json_kv_double(w, "peak_bytes", a->peak_bytes);
    json_kv_double(w, "peak_time_s", a->peak_time_s);
    json_kv_double(w, "capacity_bytes", a->capacity_bytes);
    json_end_object(w);
}

void run_report_json(FILE *out, const RunReport *r)
{
    const EstimateReport *in = &r->inputs;
    const Estimate *e = in->estimate;
    const EngineResult *res = r->result;
    const Breakdown *b = &r->breakdown;
    const double k = (double)r->n_steps;
    RunMetrics m;
    run_report_metrics(r, &m);
    JsonWriter w;
    json_writer_init(&w, out, true);
    json_begin_object(&w);
    json_kv_string(&w, "zerosim_version", ZEROSIM_VERSION_STRING);
    json_kv_string(&w, "command", "run");
    Verdict v;
    run_report_verdict(r, &m, &v);
    verdict_json(&w, &v);
    estimate_report_json_inputs(&w, in);
    json_key(&w, "simulation");
    json_begin_object(&w);
    json_kv_string(&w, "schedule", r->schedule);
    json_kv_string(&w, "collective_algorithm", r->algo);
    json_kv_string(&w, "comm_model", r->comm_model ? r->comm_model : "nccl");
    char release[16];
    json_kv_string(&w, "nccl_version",
                   nccl_model_release_name(r->inputs.platform, release, sizeof release));
    json_kv_u64(&w, "steps", r->n_steps);
    json_kv_string(&w, "mode", r->mode);
    if (r->mode_reason)
        json_kv_string(&w, "mode_reason", r->mode_reason);
    json_kv_u64(&w, "simulated_gpus", r->simulated_gpus);
    json_end_object(&w);

    const MemAccount *g = m.gpu_peak;
    json_key(&w, "memory");
    json_begin_object(&w);
    json_kv_double(&w, "gpu_model_states_bytes",
                   g->at_peak[MEM_PARAMS] + g->at_peak[MEM_GRADS] + g->at_peak[MEM_OPTIMIZER]);
    json_key(&w, "gpu_breakdown_bytes");
    json_begin_object(&w);
    for (int c = 0; c < MEM_N_CATEGORIES; c++)
        json_kv_double(&w, graph_category_name((MemCategory)c), g->at_peak[c]);
    json_end_object(&w);
    json_kv_double(&w, "gpu_peak_bytes", g->peak_bytes);
    json_kv_double(&w, "gpu_peak_time_s", g->peak_time_s);
    json_kv_double(&w, "gpu_reserved_peak_bytes", g->reserved_peak_bytes);
    json_kv_double(&w, "gpu_reserved_peak_time_s", g->reserved_peak_time_s);
    json_kv_string(&w, "gpu_allocator", g->is_expandable ? "expandable_segments" : "fixed_segments");
    json_key(&w, "gpu_outside_allocator_bytes");
    json_begin_object(&w);
    json_kv_bool(&w, "counted", e->runtime.is_counted);
    json_kv_u64(&w, "cuda_context", e->runtime.cuda_context_bytes);
    json_kv_string(&w, "cuda_module_loading", e->runtime.is_eager_loading ? "eager" : "lazy");
    json_kv_u64(&w, "nccl", e->runtime.nccl_bytes);
    json_kv_u64(&w, "nccl_communicators", e->runtime.n_communicators);
    json_key(&w, "nccl_by_algorithm");
    json_begin_object(&w);
    json_kv_u64(&w, "ring", e->runtime.nccl.ring_bytes);
    json_kv_u64(&w, "tree", e->runtime.nccl.tree_bytes);
    json_kv_u64(&w, "nvls", e->runtime.nccl.nvls_bytes);
    json_kv_u64(&w, "nvls_tree", e->runtime.nccl.nvls_tree_bytes);
    json_end_object(&w);
    json_end_object(&w);
    json_kv_double(&w, "gpu_load_bytes", (double)e->gpu_load_bytes);
    json_kv_double(&w, "gpu_device_peak_bytes", memory_gpu_device_peak_bytes(g));
    json_kv_double(&w, "gpu_headroom_bytes", g->headroom_bytes);
    json_kv_u64(&w, "gpu_peak_rank", m.peak_rank);
    json_kv_double(&w, "gpu_capacity_bytes", g->capacity_bytes);
    json_kv_double(&w, "cpu_peak_bytes", m.cpu_peak->peak_bytes);
    json_kv_double(&w, "nvme_peak_bytes", m.nvme_peak->peak_bytes);
    json_kv_bool(&w, "fits", m.oom == NULL);
    json_key(&w, "oom");
    if (m.oom) {
        json_begin_object(&w);
        json_kv_string(&w, "space", graph_space_name(m.oom_space));
        json_kv_u64(&w, "rank", m.oom_rank);
        json_kv_double(&w, "time_s", m.oom->oom_time_s);
        json_kv_double(&w, "bytes", m.oom->oom_bytes);
        json_kv_double(&w, "capacity_bytes", m.oom->capacity_bytes);
        json_end_object(&w);
    } else {
        json_null(&w);
    }
    account_json(&w, "cpu", m.cpu_peak);
    account_json(&w, "nvme", m.nvme_peak);
    json_kv_u64(&w, "estimate_gpu_peak_bytes", e->gpu_peak);
    json_kv_u64(&w, "estimate_gpu_allocated_peak_bytes", e->gpu_allocated_peak);
    json_kv_u64(&w, "estimate_gpu_device_peak_bytes", e->gpu_device_peak);
    json_key(&w, "deepspeed_estimator");
    if (e->has_ds_estimate) {
        json_begin_object(&w);
        json_kv_u64(&w, "gpu_bytes", e->ds_estimate.gpu_bytes);
        json_kv_u64(&w, "cpu_bytes_per_node", e->ds_estimate.cpu_bytes);
        json_end_object(&w);
    } else {
        json_null(&w);
    }
    json_end_object(&w);

    json_key(&w, "comm");
    json_begin_object(&w);
    json_key(&w, "bytes_per_rank");
    json_begin_object(&w);
    double total = 0;
    for (int c = 0; c < COLL_N_KINDS; c++) {
        json_kv_double(&w, graph_collective_name((CollectiveKind)c), res->coll_bytes[0][c] / k);
        total += res->coll_bytes[0][c] / k;
    }
    json_kv_double(&w, "total", total);
    json_end_object(&w);
    json_key(&w, "bytes_per_link_class");
    json_begin_object(&w);
    for (int c = 0; c < LINK_N_CLASSES; c++)
        json_kv_double(&w, topology_link_class_name((LinkClass)c), res->link_bytes[0][c] / k);
    json_end_object(&w);
    json_kv_u64(&w, "estimate_total_bytes", e->comm.total);
    json_end_object(&w);

    estimate_report_json_flops(&w, &e->flops);

    json_key(&w, "time");
    json_begin_object(&w);
    json_kv_double(&w, "step_s", m.step_s);
    for (int c = 0; c < BD_IDLE; c++) { /* idle follows busy_s */
        const BreakdownCategoryInfo *info = breakdown_category((BreakdownCategory)c);
        if (c == BD_ALL_REDUCE) {
            json_kv_double(&w, "exposed_comm_s", breakdown_exposed_comm_s(b) / k);
            json_key(&w, "exposed_comm_by_collective_s");
            json_begin_object(&w);
        }
        json_kv_double(&w, info->json_key, b->time_s[c] / k);
        if (c == BD_BROADCAST)
            json_end_object(&w);
    }
    json_key(&w, "busy_s");
    json_begin_object(&w);
    for (int c = 0; c < BD_N; c++)
        if (breakdown_category((BreakdownCategory)c)->busy_key != NULL)
            json_kv_double(&w, breakdown_category((BreakdownCategory)c)->busy_key,
                           b->busy_s[c] / k);
    json_end_object(&w);
    json_kv_double(&w, breakdown_category(BD_IDLE)->json_key, b->time_s[BD_IDLE] / k);
    json_kv_double(&w, "compute_bound_step_s", e->compute_bound_step_s);
    estimate_report_kernels_json(&w, e);
    json_end_object(&w);

    json_key(&w, "throughput");
    json_begin_object(&w);
    json_kv_double(&w, "tokens_per_s", m.tokens_per_s);
    json_kv_double(&w, "tflops_per_gpu", m.tflops_per_gpu);
    json_kv_double(&w, "mfu", m.mfu);
    json_end_object(&w);

    json_key(&w, "sim");
    json_begin_object(&w);
    json_kv_u64(&w, "ops", graph_n_ops(r->graph));
    json_kv_u64(&w, "events", res->n_activities);
    json_kv_double(&w, "wall_s", res->wall_s);
    json_kv_double(&w, "build_wall_s", r->build_wall_s);
    json_end_object(&w);
    json_end_object(&w);
}
