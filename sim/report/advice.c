/*
 * advice.c - the ranked ZeRO configurations, as a table and explained (see advice.h).
 */
#include "advice.h"

#include "json_writer.h"

#include "../common/units.h"

#include <stdlib.h>
#include <string.h>

static const char *name(const Candidate *c, char *buf, size_t n)
{
    static const char *const stages[] = {"DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3"};
    if (c->offload_param == OFFLOAD_NVME || c->offload_optimizer == OFFLOAD_NVME)
        snprintf(buf, n, "%s + NVMe (Infinity)", stages[c->zero_stage]);
    else if (c->offload_optimizer == OFFLOAD_CPU && c->offload_param == OFFLOAD_CPU)
        snprintf(buf, n, "%s + CPU offload (opt+params)", stages[c->zero_stage]);
    else if (c->offload_optimizer == OFFLOAD_CPU)
        snprintf(buf, n, "%s + CPU offload", stages[c->zero_stage]);
    else
        snprintf(buf, n, "%s", stages[c->zero_stage]);
    if (c->ep_size > 1) { /* a mixture of experts split over ep_size GPUs */
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, ", EP %llu", (unsigned long long)c->ep_size);
    }
    return buf;
}

/* A mixture of experts: what the chosen expert parallelism trades (docs/MODEL.md, "Mixtures
 * of experts"): expert memory against all-to-all traffic inside or across nodes. */
static void explain_ep(const Advice *a, const Candidate *best, char *out, size_t n)
{
    if (n == 0 || a->model->moe.n_experts == 0)
        return;
    const uint64_t g = a->platform->gpus_per_node;
    if (best->ep_size > 1)
        snprintf(out, n,
                 " Experts split over %llu GPUs (--ep-size %llu; DeepSpeed-MoE's ep_size): each "
                 "holds %llu of the %llu experts per MoE layer, their gradients and ZeRO shards "
                 "stay among the %llu GPUs holding the same ones, and every MoE layer exchanges "
                 "its tokens by all-to-all %s.",
                 (unsigned long long)best->ep_size, (unsigned long long)best->ep_size,
                 (unsigned long long)(a->model->moe.n_experts / best->ep_size),
                 (unsigned long long)a->model->moe.n_experts,
                 (unsigned long long)(platform_n_gpus(a->platform) / best->ep_size),
                 best->ep_size <= g ? "over NVLink inside the node"
                                    : "across nodes, over the NICs");
    else
        snprintf(out, n,
                 " Every GPU holds every expert (no expert parallelism): no all-to-all, at the "
                 "price of the experts' replicated states%s.",
                 best->zero_stage == 3 ? " (none under ZeRO-3, which shards them anyway)" : "");
}

static double gib(double bytes)
{
    return bytes / UNITS_GIB;
}

/* The paragraph: why the first candidate, in the chapter's terms. */
static void explain(const Advice *a, char *out, size_t n)
{
    const Candidate *best = a->n_candidates ? &a->candidates[0] : NULL;
    const double hbm = (double)a->platform->gpu.hbm_bytes;
    const double params = 2.0 * a->psi, params_grads = 4.0 * a->psi;
    char nm[64];
    if (best == NULL || !best->fits) {
        snprintf(out, n,
                 "Nothing fits: even the closest candidate (%s) runs out of %s memory by "
                 "%.1f GiB. Add GPUs (ZeRO-3 divides all model states by the GPU count), offload "
                 "to NVMe, or shorten the sequence or micro-batch.",
                 best ? name(best, nm, sizeof nm) : "none", best ? best->runs_out : "GPU",
                 best ? gib(best->shortfall_bytes) : 0.0);
        return;
    }
    size_t used = (size_t)snprintf(out, n,
                                   "Recommended: %s, micro-batch %llu%s%s, %.0f tokens/s "
                                   "(%.1f TFLOP/s per GPU). ",
                                   name(best, nm, sizeof nm), (unsigned long long)best->micro_batch,
                                   best->is_checkpointed ? ", full activation checkpointing" : "",
                                   best->grad_accum > 1 ? " with gradient accumulation" : "",
                                   best->tokens_per_s, best->tflops_per_gpu);
    if (used < n && best->is_simulated)
        used += (size_t)snprintf(out + used, n - used,
                                 "It leaves %.1f GiB of the GPU's %.0f GiB free (device peak "
                                 "%.1f GiB: the caching allocator's reserve plus the CUDA "
                                 "context and NCCL buffers). ",
                                 gib(hbm - best->sim_gpu_peak_bytes), gib(hbm),
                                 gib(best->sim_gpu_peak_bytes));
    if (used >= n)
        return;
    char *p = out + used;
    size_t left = n - used;
    if (best->offload_optimizer != OFFLOAD_NONE || best->offload_param != OFFLOAD_NONE)
        snprintf(p, left,
                 "The model states do not fit the GPUs' %.0f GiB without moving them "
                 "off the GPU: the selection guide's case for offload (few GPUs, large model). "
                 "It costs PCIe transfers%s; the largest share of the step is %s (%.0f%%).",
                 gib(hbm), best->offload_optimizer == OFFLOAD_NVME ? " and NVMe traffic" : "",
                 best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 3 && params > hbm)
        snprintf(p, left,
                 "The 16-bit parameters alone (2 Psi = %.1f GiB) exceed a GPU's %.0f "
                 "GiB, so only ZeRO-3 shards them (the guide: parameters do not fit); it moves "
                 "3 Psi per step instead of 2; the largest share of the step is %s (%.0f%%).",
                 gib(params), gib(hbm), best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 3)
        snprintf(p, left,
                 "The parameters would fit a GPU (2 Psi = %.1f GiB of %.0f GiB), but "
                 "ZeRO-3 leaves room for a larger micro-batch or hides its 50%% extra "
                 "communication behind compute on this network; the largest share of the step is "
                 "%s (%.0f%%).",
                 gib(params), gib(hbm), best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 2)
        snprintf(p, left,
                 "The parameters fit a GPU (2 Psi = %.1f GiB of %.0f GiB), so sharding "
                 "optimizer states and gradients is enough (the guide's ZeRO-2 case) and "
                 "ZeRO-3's 50%% more communication is avoided; the largest share of the step is %s "
                 "(%.0f%%).",
                 gib(params), gib(hbm), best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 1)
        snprintf(p, left,
                 "Parameters and gradients fit a GPU (4 Psi = %.1f GiB of %.0f GiB): "
                 "sharding the optimizer states (12 Psi) is enough, at DDP's communication "
                 "(the guide's ZeRO-1 case); the largest share of the step is %s (%.0f%%).",
                 gib(params_grads), gib(hbm), best->bottleneck, 100.0 * best->bottleneck_share);
    else
        snprintf(p, left,
                 "Everything fits without sharding (16 Psi = %.1f GiB), so plain data "
                 "parallelism is fastest: ZeRO would only add communication; the largest share of "
                 "the step is %s (%.0f%%).",
                 gib(16.0 * a->psi), best->bottleneck, 100.0 * best->bottleneck_share);
}

void advice_text(FILE *out, const Advice *a)
{
    fprintf(out, "zerosim advise: %s (%.2f B parameters) on %s, %llu GPUs, sequence %llu%s\n\n",
            a->model->name, a->psi / 1e9, a->platform->name,
            (unsigned long long)platform_n_gpus(a->platform), (unsigned long long)a->seq_len,
            a->global_batch ? "" : ", largest micro-batch that fits");
    fprintf(out, "%-2s %-33s %5s %4s %5s %-22s %9s %8s %9s %8s  %s\n", "#", "configuration",
            "micro", "ckpt", "accum", "fits", "step s", "TFLOP/s", "GPU GiB", "GB/rank",
            "bottleneck");
    char nm[64];
    for (size_t i = 0; i < a->n_candidates; i++) {
        const Candidate *c = &a->candidates[i];
        char fits[40];
        if (c->fits)
            snprintf(fits, sizeof fits, "yes");
        else
            snprintf(fits, sizeof fits, "no: %s +%.1f GiB", c->runs_out, gib(c->shortfall_bytes));
        if (c->is_simulated)
            fprintf(out, "%-2zu %-33s %5llu %4s %5llu %-22s %9.3f %8.1f %9.1f %8.1f  %s %.0f%%\n",
                    i + 1, name(c, nm, sizeof nm), (unsigned long long)c->micro_batch,
                    c->is_checkpointed ? "full" : "none", (unsigned long long)c->grad_accum, fits,
                    c->step_s, c->tflops_per_gpu, gib(c->sim_gpu_peak_bytes),
                    c->bytes_per_rank / 1e9, c->bottleneck, 100.0 * c->bottleneck_share);
        else
            fprintf(out, "%-2zu %-33s %5llu %4s %5llu %-22s %9s %8s %9.1f %8s  -\n", i + 1,
                    name(c, nm, sizeof nm), (unsigned long long)c->micro_batch,
                    c->is_checkpointed ? "full" : "none", (unsigned long long)c->grad_accum, fits,
                    "-", "-", gib(c->gpu_bytes), "-");
    }
    char text[1536];
    explain(a, text, sizeof text);
    if (a->n_candidates && a->candidates[0].fits) {
        size_t used = strlen(text);
        explain_ep(a, &a->candidates[0], text + used, sizeof text - used);
    }
    fprintf(out, "\n%s\n", text);
}

void advice_json(FILE *out, const Advice *a)
{
    JsonWriter w;
    json_writer_init(&w, out, true);
    json_begin_object(&w);
    json_kv_string(&w, "command", "advise");
    json_kv_string(&w, "model", a->model->name);
    json_kv_double(&w, "params", a->psi);
    json_kv_string(&w, "platform", a->platform->name);
    json_kv_u64(&w, "gpus", platform_n_gpus(a->platform));
    json_kv_u64(&w, "seq_len", a->seq_len);
    json_key(&w, "candidates");
    json_begin_array(&w);
    for (size_t i = 0; i < a->n_candidates; i++) {
        const Candidate *c = &a->candidates[i];
        json_begin_object(&w);
        json_kv_u64(&w, "rank", i + 1);
        json_kv_u64(&w, "zero_stage", (uint64_t)c->zero_stage);
        json_kv_string(&w, "offload_optimizer", ds_config_offload_name(c->offload_optimizer));
        json_kv_string(&w, "offload_param", ds_config_offload_name(c->offload_param));
        json_kv_u64(&w, "micro_batch", c->micro_batch);
        json_kv_u64(&w, "grad_accum", c->grad_accum);
        json_kv_string(&w, "activation_checkpointing", c->is_checkpointed ? "full" : "none");
        json_kv_u64(&w, "ep_size", c->ep_size > 1 ? c->ep_size : 1);
        json_kv_bool(&w, "fits", c->fits);
        json_kv_string(&w, "runs_out", c->runs_out);
        json_kv_double(&w, "shortfall_bytes", c->shortfall_bytes);
        json_kv_double(&w, "estimate_gpu_peak_bytes", c->gpu_bytes);
        json_kv_bool(&w, "simulated", c->is_simulated);
        if (c->is_simulated) {
            json_kv_double(&w, "step_s", c->step_s);
            json_kv_double(&w, "tokens_per_s", c->tokens_per_s);
            json_kv_double(&w, "tflops_per_gpu", c->tflops_per_gpu);
            json_kv_double(&w, "gpu_peak_bytes", c->sim_gpu_peak_bytes);
            json_kv_double(&w, "bytes_per_rank", c->bytes_per_rank);
            json_kv_string(&w, "bottleneck", c->bottleneck);
            json_kv_double(&w, "bottleneck_share", c->bottleneck_share);
        }
        json_end_object(&w);
    }
    json_end_array(&w);
    json_key(&w, "recommended");
    const Candidate *best = a->n_candidates && a->candidates[0].fits ? &a->candidates[0] : NULL;
    if (best) {
        json_begin_object(&w);
        json_kv_u64(&w, "zero_stage", (uint64_t)best->zero_stage);
        json_kv_string(&w, "offload_optimizer", ds_config_offload_name(best->offload_optimizer));
        json_kv_string(&w, "offload_param", ds_config_offload_name(best->offload_param));
        json_kv_u64(&w, "micro_batch", best->micro_batch);
        json_kv_string(&w, "activation_checkpointing", best->is_checkpointed ? "full" : "none");
        json_kv_u64(&w, "ep_size", best->ep_size > 1 ? best->ep_size : 1);
        json_end_object(&w);
    } else {
        json_null(&w);
    }
    char text[1536];
    explain(a, text, sizeof text);
    if (best) {
        size_t used = strlen(text);
        explain_ep(a, best, text + used, sizeof text - used);
    }
    json_kv_string(&w, "explanation", text);
    json_end_object(&w);
}
