/*
 * verdict.c - the verdict lines and the "verdict" JSON object (see verdict.h).
 */
#include "verdict.h"

#include "../common/units.h"

static double gib(double bytes)
{
    return bytes / UNITS_GIB;
}

static const char *const space_names[] = {"", "GPU", "host", "NVMe"};
static const char *const space_keys[] = {"", "gpu", "cpu", "nvme"};

void verdict_of_estimate(const Estimate *e, const Remedy *remedy, Verdict *out)
{
    *out = (Verdict){0};
    out->runs_out = !e->fits_gpu    ? VERDICT_GPU
                    : !e->fits_cpu  ? VERDICT_CPU
                    : !e->fits_nvme ? VERDICT_NVME
                                    : VERDICT_FITS;
    const ZeroMemory *m = &e->mem;
    out->model_states_bytes = (double)m->gpu_model_states;
    out->activations_bytes = (double)e->gpu_activations;
    /* buffers, workspaces, runtime, and the step's copies when they outgrow the activations */
    out->other_bytes = (double)e->gpu_device_peak - out->model_states_bytes -
                       out->activations_bytes;
    out->cpu_needed_bytes = (double)e->cpu_peak;
    out->cpu_capacity_bytes = (double)e->cpu_capacity;
    out->nvme_needed_bytes = (double)e->nvme_peak;
    out->nvme_capacity_bytes = (double)e->nvme_capacity;
    switch (out->runs_out) {
    case VERDICT_FITS:
    case VERDICT_GPU:
        out->needed_bytes = (double)e->gpu_device_peak;
        out->capacity_bytes = (double)e->gpu_capacity;
        out->headroom_bytes = (double)e->gpu_headroom;
        break;
    case VERDICT_CPU:
        out->needed_bytes = (double)e->cpu_peak;
        out->capacity_bytes = (double)e->cpu_capacity;
        break;
    case VERDICT_NVME:
        out->needed_bytes = (double)e->nvme_peak;
        out->capacity_bytes = (double)e->nvme_capacity;
        break;
    }
    out->remedy = out->runs_out == VERDICT_FITS ? NULL : remedy;
}

static double usable(const Verdict *v)
{
    return v->capacity_bytes - v->headroom_bytes;
}

/* "of which activations 308.19, model states 2.54, other 3.30" (GPU only), largest first. */
static void gpu_parts(FILE *out, const Verdict *v)
{
    const char *names[3] = {"model states", "activations", "buffers, copies and runtime"};
    double bytes[3] = {v->model_states_bytes, v->activations_bytes, v->other_bytes};
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (bytes[order[j]] > bytes[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    fprintf(out, "; %s %.2f, %s %.2f, %s %.2f", names[order[0]], gib(bytes[order[0]]),
            names[order[1]], gib(bytes[order[1]]), names[order[2]], gib(bytes[order[2]]));
}

void verdict_text(FILE *out, const Verdict *v)
{
    if (v->runs_out == VERDICT_FITS) {
        fprintf(out, "verdict      fits: %.2f GiB per GPU of %.2f usable", gib(v->needed_bytes),
                gib(usable(v)));
        if (v->headroom_bytes > 0)
            fprintf(out, " (%.2f less %.2f kept free)", gib(v->capacity_bytes),
                    gib(v->headroom_bytes));
        fprintf(out, ", %.2f to spare; host %.2f of %.2f GiB per node",
                gib(usable(v) - v->needed_bytes), gib(v->cpu_needed_bytes),
                gib(v->cpu_capacity_bytes));
        if (v->nvme_needed_bytes > 0)
            fprintf(out, ", NVMe %.2f of %.2f", gib(v->nvme_needed_bytes),
                    gib(v->nvme_capacity_bytes));
        fprintf(out, "\n");
        return;
    }
    const char *where = v->runs_out == VERDICT_GPU ? "every GPU" : "every node";
    char at[64];
    if (v->has_rank) {
        snprintf(at, sizeof at, "%s %u (first over at %.4f s)",
                 v->runs_out == VERDICT_GPU ? "rank" : "the node of rank", v->rank, v->time_s);
        where = at;
    }
    fprintf(out, "verdict      DOES NOT FIT: %s memory runs out on %s: %.2f GiB needed, %.2f usable",
            space_names[v->runs_out], where, gib(v->needed_bytes), gib(usable(v)));
    if (v->headroom_bytes > 0)
        fprintf(out, " (%.2f less %.2f kept free)", gib(v->capacity_bytes),
                gib(v->headroom_bytes));
    fprintf(out, ", %.2f short", gib(v->needed_bytes - usable(v)));
    if (v->runs_out == VERDICT_GPU)
        gpu_parts(out, v);
    fprintf(out, "\n");
    const Remedy *r = v->remedy;
    if (r == NULL)
        return;
    if (!r->is_found) {
        fprintf(out,
                "hint         none of the %u variants estimated fits (smaller micro-batches, "
                "activation checkpointing, later ZeRO stages, offload)\n",
                r->n_estimated);
        return;
    }
    char change[256];
    remedy_describe(r, change, sizeof change);
    fprintf(out, "hint         change to %s: fits with %.2f GiB per GPU to spare", change,
            gib((double)r->gpu_free_bytes));
    if (r->variant.shape.optimizer != OFFLOAD_NONE || r->variant.shape.param != OFFLOAD_NONE)
        fprintf(out, " and %.2f GiB of host memory per node", gib((double)r->cpu_free_bytes));
    fprintf(out,
            "; compute-bound step %.3f s (now %.3f s); the cheapest of %u variants estimated "
            "(micro-batch at the same global batch, checkpointing, ZeRO stage, offload)\n",
            r->compute_bound_step_s, r->current_compute_bound_step_s, r->n_estimated);
}

void verdict_json(JsonWriter *w, const Verdict *v)
{
    json_key(w, "verdict");
    json_begin_object(w);
    json_kv_bool(w, "fits", v->runs_out == VERDICT_FITS);
    json_key(w, "runs_out");
    if (v->runs_out == VERDICT_FITS)
        json_null(w);
    else
        json_string(w, space_keys[v->runs_out]);
    json_key(w, "rank");
    if (v->has_rank && v->runs_out != VERDICT_FITS)
        json_u64(w, v->rank);
    else
        json_null(w);
    json_key(w, "time_s");
    if (v->has_rank && v->runs_out != VERDICT_FITS)
        json_double(w, v->time_s);
    else
        json_null(w);
    json_kv_double(w, "needed_bytes", v->needed_bytes);
    json_kv_double(w, "usable_bytes", usable(v));
    json_kv_double(w, "short_bytes",
                   v->runs_out == VERDICT_FITS ? 0.0 : v->needed_bytes - usable(v));
    json_key(w, "hint");
    const Remedy *r = v->remedy;
    if (r == NULL || !r->is_found) {
        json_null(w);
    } else {
        char buf[256];
        json_begin_object(w);
        json_kv_string(w, "change", remedy_describe(r, buf, sizeof buf));
        json_kv_u64(w, "zero_stage", (uint64_t)r->variant.shape.stage);
        json_kv_string(w, "offload_optimizer", ds_config_offload_name(r->variant.shape.optimizer));
        json_kv_string(w, "offload_param", ds_config_offload_name(r->variant.shape.param));
        json_kv_u64(w, "micro_batch", r->variant.micro_batch);
        json_kv_u64(w, "grad_accum", r->variant.grad_accum);
        json_kv_string(w, "activation_checkpointing",
                       setup_recompute_name(r->variant.recompute, r->variant.checkpoint_every,
                                            buf, sizeof buf));
        json_kv_u64(w, "gpu_free_bytes", r->gpu_free_bytes);
        json_kv_u64(w, "cpu_free_bytes", r->cpu_free_bytes);
        json_kv_double(w, "compute_bound_step_s", r->compute_bound_step_s);
        json_kv_double(w, "current_compute_bound_step_s", r->current_compute_bound_step_s);
        json_end_object(w);
    }
    json_key(w, "variants_estimated");
    if (r == NULL)
        json_null(w);
    else
        json_u64(w, r->n_estimated);
    json_end_object(w);
}
