/*
 * advice.c - the ranked ZeRO configurations, as a table and explained (see advice.h).
 */
#include "advice.h"

#include "json_writer.h"

#include "../common/units.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The explanation paragraph's longest form, with room to spare. */
#define ADVICE_TEXT_MAX 4096

const char *advice_name(const Candidate *c, char *buf, size_t n)
{
    static const char *const stages[] = {"DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3"};
    const char *window = c->max_live_parameters ? " + prefetch" : "";
    if (c->offload_param == OFFLOAD_NVME || c->offload_optimizer == OFFLOAD_NVME)
        snprintf(buf, n, "%s + NVMe (Infinity)%s", stages[c->zero_stage], window);
    else if (c->offload_optimizer == OFFLOAD_CPU && c->offload_param == OFFLOAD_CPU)
        snprintf(buf, n, "%s + CPU offload (opt+params)%s", stages[c->zero_stage], window);
    else if (c->offload_optimizer == OFFLOAD_CPU)
        snprintf(buf, n, "%s + CPU offload%s", stages[c->zero_stage], window);
    else
        snprintf(buf, n, "%s%s", stages[c->zero_stage], window);
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

const char *advice_checkpointing(const Candidate *c, char *buf, size_t n)
{
    if (!c->is_checkpointed)
        snprintf(buf, n, "none");
    else if (c->checkpoint_every > 1)
        snprintf(buf, n, "every:%u", c->checkpoint_every);
    else
        snprintf(buf, n, "full");
    return buf;
}

unsigned advice_complexity(const Candidate *c)
{
    /* the selection guide's order: the lowest stage that fits, offload only when none does */
    unsigned shape = (unsigned)c->zero_stage;
    if (c->offload_optimizer == OFFLOAD_NVME || c->offload_param == OFFLOAD_NVME)
        shape = 7;
    else if (c->offload_param == OFFLOAD_CPU)
        shape = 6;
    else if (c->offload_optimizer == OFFLOAD_CPU)
        shape = c->zero_stage == 3 ? 5 : 4;
    /* full checkpointing is one switch (HF's gradient_checkpointing_enable); every:N is a
     * choice of layers on top of it */
    unsigned ckpt = !c->is_checkpointed ? 0 : c->checkpoint_every > 1 ? 2 : 1;
    return shape * 8 + ckpt * 2 + (c->max_live_parameters ? 1u : 0u);
}

static const char *name(const Candidate *c, char *buf, size_t n)
{
    return advice_name(c, buf, n);
}

static double gib(double bytes)
{
    return bytes / UNITS_GIB;
}

/* Its checkpointing in a sentence: "no", "full" or "every:N" (before "checkpointing"). */
static const char *ck_phrase(const Candidate *c, char *buf, size_t n)
{
    return c->is_checkpointed ? advice_checkpointing(c, buf, n) : "no";
}

/* Appends to out (size n, *used so far), never past its end. */
static void add(char *out, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *out, size_t n, size_t *used, const char *fmt, ...)
{
    if (*used >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *used, n - *used, fmt, ap);
    va_end(ap);
    *used += k > 0 ? (size_t)k : 0;
}

/* Why candidate c does not fit, in the guide's terms: its model states alone, or the
 * activations beside them. */
static void add_misfit(char *out, size_t n, size_t *used, const Candidate *c, double hbm)
{
    char ck[24];
    if (strcmp(c->runs_out, "gpu") != 0)
        add(out, n, used, "runs out of %s memory by %.1f GiB", c->runs_out,
            gib(c->shortfall_bytes));
    else if (strcmp(c->limit, "states") == 0)
        add(out, n, used, "its model states alone need %.1f GiB of a GPU's %.1f GiB",
            gib(c->gpu_states_bytes), gib(hbm));
    else
        add(out, n, used,
            "its model states fit (%.1f GiB of %.1f GiB) but not the activations of "
            "micro-batch %llu with %s checkpointing (%.1f GiB short)",
            gib(c->gpu_states_bytes), gib(hbm), (unsigned long long)c->micro_batch,
            ck_phrase(c, ck, sizeof ck), gib(c->shortfall_bytes));
}

/* The simpler configurations (lower in the guide's order) none of whose candidates fit, and
 * why the closest of each does not. */
static void add_simpler_misfits(char *out, size_t n, size_t *used, const Advice *a,
                                const Candidate *best)
{
    const unsigned best_shape = advice_complexity(best) / 8;
    const double hbm = (double)a->platform->gpu.hbm_bytes;
    bool first = true;
    char nm[64];
    for (unsigned shape = 0; shape < best_shape; shape++) {
        const Candidate *closest = NULL;
        bool any_fits = false;
        for (size_t i = 0; i < a->n_candidates; i++) {
            const Candidate *c = &a->candidates[i];
            if (advice_complexity(c) / 8 != shape)
                continue;
            any_fits |= c->fits;
            if (!c->fits && (closest == NULL || c->shortfall_bytes < closest->shortfall_bytes))
                closest = c;
        }
        if (any_fits || closest == NULL)
            continue; /* it fits and is slower, or it was not a candidate here */
        add(out, n, used, "%s%s: ", first ? " Simpler configurations do not fit: " : "; ",
            name(closest, nm, sizeof nm));
        add_misfit(out, n, used, closest, hbm);
        first = false;
    }
    if (!first)
        add(out, n, used, ".");
}

/* The fastest candidate, when the recommendation is not it. */
static const Candidate *fastest_other(const Advice *a)
{
    const Candidate *f = NULL;
    for (size_t i = 1; i < a->n_candidates; i++) {
        const Candidate *c = &a->candidates[i];
        if (c->fits && c->is_simulated && (f == NULL || c->tokens_per_s > f->tokens_per_s))
            f = c;
    }
    return f;
}

/* The paragraph: why the first candidate, in the chapter's terms. */
static void explain(const Advice *a, char *out, size_t n)
{
    const Candidate *best = a->n_candidates ? &a->candidates[0] : NULL;
    const double hbm = (double)a->platform->gpu.hbm_bytes;
    const double params = 2.0 * a->psi, params_grads = 4.0 * a->psi;
    char nm[64], nm2[64], ck[24];
    size_t used = 0;
    out[0] = '\0';
    if (best == NULL || !best->fits) {
        add(out, n,
            &used, "Nothing fits: even the closest candidate (%s) runs out of %s memory by "
            "%.1f GiB",
            best ? name(best, nm, sizeof nm) : "none", best ? best->runs_out : "GPU",
            best ? gib(best->shortfall_bytes) : 0.0);
        if (best && strcmp(best->runs_out, "gpu") == 0) {
            add(out, n, &used, ": ");
            add_misfit(out, n, &used, best, hbm);
        }
        add(out, n, &used,
            ". Add GPUs (ZeRO-3 divides all model states by the GPU count), offload to NVMe, "
            "or shorten the sequence or micro-batch.");
        return;
    }
    add(out, n, &used, "Recommended: %s, micro-batch %llu", name(best, nm, sizeof nm),
        (unsigned long long)best->micro_batch);
    if (best->is_checkpointed)
        add(out, n, &used, ", %s activation checkpointing", advice_checkpointing(best, ck, sizeof ck));
    if (best->grad_accum > 1)
        add(out, n, &used, " with %llu-step gradient accumulation",
            (unsigned long long)best->grad_accum);
    add(out, n, &used, ", %.0f tokens/s (%.1f TFLOP/s per GPU", best->tokens_per_s,
        best->tflops_per_gpu);
    if (a->common_batch)
        add(out, n, &used, "; %.3f s per global batch of %llu", best->step_s,
            (unsigned long long)a->common_batch);
    add(out, n, &used, "). ");
    if (best->max_live_parameters)
        add(out, n, &used,
            "Its prefetch window (stage3_prefetch_bucket_size %llu, stage3_max_live_parameters "
            "%llu elements: the next layer arrives while one computes) is wider than "
            "DeepSpeed's defaults. ",
            (unsigned long long)best->prefetch_bucket_size,
            (unsigned long long)best->max_live_parameters);
    if (best->is_simulated)
        add(out, n, &used,
            "It leaves %.1f GiB of the GPU's %.1f GiB free (device peak "
            "%.1f GiB: the caching allocator's reserve plus the CUDA "
            "context and NCCL buffers). ",
            gib(hbm - best->sim_gpu_peak_bytes), gib(hbm), gib(best->sim_gpu_peak_bytes));
    const Candidate *fast = best->chosen_for != ADVICE_FASTEST ? fastest_other(a) : NULL;
    if (fast && best->chosen_for == ADVICE_SIMPLER)
        add(out, n, &used,
            "The fastest, %s (%s checkpointing), is only %.1f%% faster, within the %.0f%% "
            "zerosim does not resolve, so the simpler configuration is recommended (the guide: "
            "the lowest stage that fits). ",
            name(fast, nm2, sizeof nm2), ck_phrase(fast, ck, sizeof ck),
            100.0 * (fast->tokens_per_s / best->tokens_per_s - 1.0),
            100.0 * ADVICE_NEAR_EQUAL_FRACTION);
    else if (fast)
        add(out, n, &used,
            "The fastest, %s, is only %.1f%% faster and leaves %.1f GiB free, under %.0f%% of "
            "the GPU: this one has memory to spare. ",
            name(fast, nm2, sizeof nm2), 100.0 * (fast->tokens_per_s / best->tokens_per_s - 1.0),
            gib(hbm - fast->sim_gpu_peak_bytes), 100.0 * ADVICE_TIGHT_FRACTION);
    const char *tail = "the largest share of the step is";
    bool plain_fits = false; /* the same stage without offload */
    for (size_t i = 1; i < a->n_candidates; i++)
        plain_fits |= a->candidates[i].fits && a->candidates[i].zero_stage == best->zero_stage &&
                      a->candidates[i].offload_optimizer == OFFLOAD_NONE &&
                      a->candidates[i].offload_param == OFFLOAD_NONE;
    const bool offloads =
        best->offload_optimizer != OFFLOAD_NONE || best->offload_param != OFFLOAD_NONE;
    if (offloads && plain_fits)
        add(out, n, &used,
            "ZeRO-%d fits without offload too; moving %s off the GPU buys memory at the price "
            "of PCIe transfers%s (the guide's offload trade); %s %s (%.0f%%).",
            best->zero_stage,
            best->offload_param != OFFLOAD_NONE ? "optimizer states and parameters"
                                                : "the optimizer states",
            best->offload_optimizer == OFFLOAD_NVME ? " and NVMe traffic" : "", tail,
            best->bottleneck, 100.0 * best->bottleneck_share);
    else if (offloads)
        add(out, n, &used,
            "The model states do not fit the GPUs' %.1f GiB without moving them "
            "off the GPU: the selection guide's case for offload (few GPUs, large model). "
            "It costs PCIe transfers%s; %s %s (%.0f%%).",
            gib(hbm), best->offload_optimizer == OFFLOAD_NVME ? " and NVMe traffic" : "", tail,
            best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 3 && params > hbm)
        add(out, n, &used,
            "The 16-bit parameters alone (2 Psi = %.1f GiB) exceed a GPU's %.1f "
            "GiB, so only ZeRO-3 shards them (the guide: parameters do not fit); it moves "
            "3 Psi per step instead of 2; %s %s (%.0f%%).",
            gib(params), gib(hbm), tail, best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 3)
        add(out, n, &used,
            "The parameters would fit a GPU (2 Psi = %.1f GiB of %.1f GiB), but "
            "ZeRO-3 leaves room for a larger micro-batch or hides its 50%% extra "
            "communication behind compute on this network; %s %s (%.0f%%).",
            gib(params), gib(hbm), tail, best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 2)
        add(out, n, &used,
            "The parameters fit a GPU (2 Psi = %.1f GiB of %.1f GiB), so sharding "
            "optimizer states and gradients is enough (the guide's ZeRO-2 case) and "
            "ZeRO-3's 50%% more communication is avoided; %s %s (%.0f%%).",
            gib(params), gib(hbm), tail, best->bottleneck, 100.0 * best->bottleneck_share);
    else if (best->zero_stage == 1)
        add(out, n, &used,
            "Parameters and gradients fit a GPU (4 Psi = %.1f GiB of %.1f GiB): "
            "sharding the optimizer states (12 Psi) is enough, at DDP's communication "
            "(the guide's ZeRO-1 case); %s %s (%.0f%%).",
            gib(params_grads), gib(hbm), tail, best->bottleneck, 100.0 * best->bottleneck_share);
    else
        add(out, n, &used,
            "Everything fits without sharding (16 Psi = %.1f GiB), so plain data "
            "parallelism is simplest: ZeRO would only add communication; %s %s (%.0f%%).",
            gib(16.0 * a->psi), tail, best->bottleneck, 100.0 * best->bottleneck_share);
    add_simpler_misfits(out, n, &used, a, best);
}

void advice_text(FILE *out, const Advice *a)
{
    fprintf(out, "zerosim advise: %s (%.2f B parameters) on %s, %llu GPUs, sequence %llu\n",
            a->model->name, a->psi / 1e9, a->platform->name,
            (unsigned long long)platform_n_gpus(a->platform), (unsigned long long)a->seq_len);
    if (a->common_batch)
        fprintf(out,
                "every candidate runs a global batch of %llu sequences (micro-batch x "
                "accumulation x GPUs; %s), so step times compare\n",
                (unsigned long long)a->common_batch,
                a->global_batch ? "--global-batch"
                                : "the largest micro-batch any candidate fits, on every GPU");
    fputc('\n', out);
    fprintf(out, "%-2s %-44s %5s %-8s %5s %-32s %9s %9s %8s %8s %8s  %s\n", "#", "configuration",
            "micro", "ckpt", "accum", "fits", "step s", "tokens/s", "TFLOP/s", "GPU GiB",
            "GB/rank", "bottleneck");
    char nm[64], ck[24];
    for (size_t i = 0; i < a->n_candidates; i++) {
        const Candidate *c = &a->candidates[i];
        char fits[48];
        if (c->fits)
            snprintf(fits, sizeof fits, "yes");
        else if (c->limit[0])
            snprintf(fits, sizeof fits, "no: %s +%.1f GiB (%s)", c->runs_out,
                     gib(c->shortfall_bytes), c->limit);
        else
            snprintf(fits, sizeof fits, "no: %s +%.1f GiB", c->runs_out, gib(c->shortfall_bytes));
        if (c->is_simulated)
            fprintf(out,
                    "%-2zu %-44s %5llu %-8s %5llu %-32s %9.3f %9.0f %8.1f %8.1f %8.1f  %s %.0f%%\n",
                    i + 1, name(c, nm, sizeof nm), (unsigned long long)c->micro_batch,
                    advice_checkpointing(c, ck, sizeof ck), (unsigned long long)c->grad_accum,
                    fits, c->step_s, c->tokens_per_s, c->tflops_per_gpu,
                    gib(c->sim_gpu_peak_bytes), c->bytes_per_rank / 1e9, c->bottleneck,
                    100.0 * c->bottleneck_share);
        else if (c->fits) { /* not simulated: its compute alone is too slow (advise.h) */
            char bound[24];
            snprintf(bound, sizeof bound, ">=%.3f", c->bound_step_s);
            fprintf(out,
                    "%-2zu %-44s %5llu %-8s %5llu %-32s %9s %9s %8s %8.1f %8s  compute alone "
                    "slower\n",
                    i + 1, name(c, nm, sizeof nm), (unsigned long long)c->micro_batch,
                    advice_checkpointing(c, ck, sizeof ck), (unsigned long long)c->grad_accum,
                    fits, bound, "-", "-", gib(c->gpu_bytes), "-");
        } else
            fprintf(out, "%-2zu %-44s %5llu %-8s %5llu %-32s %9s %9s %8s %8.1f %8s  -\n", i + 1,
                    name(c, nm, sizeof nm), (unsigned long long)c->micro_batch,
                    advice_checkpointing(c, ck, sizeof ck), (unsigned long long)c->grad_accum,
                    fits, "-", "-", "-", gib(c->gpu_bytes), "-");
    }
    char text[ADVICE_TEXT_MAX];
    explain(a, text, sizeof text);
    if (a->n_candidates && a->candidates[0].fits) {
        size_t used = strlen(text);
        explain_ep(a, &a->candidates[0], text + used, sizeof text - used);
    }
    fprintf(out, "\n%s\n", text);
}

void advice_json(FILE *out, const Advice *a)
{
    char ck[24];
    JsonWriter w;
    json_writer_init(&w, out, true);
    json_begin_object(&w);
    json_kv_string(&w, "command", "advise");
    json_kv_string(&w, "model", a->model->name);
    json_kv_double(&w, "params", a->psi);
    json_kv_string(&w, "platform", a->platform->name);
    json_kv_u64(&w, "gpus", platform_n_gpus(a->platform));
    json_kv_u64(&w, "seq_len", a->seq_len);
    json_kv_u64(&w, "global_batch", a->common_batch);
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
        json_kv_string(&w, "activation_checkpointing", advice_checkpointing(c, ck, sizeof ck));
        if (c->max_live_parameters) {
            json_kv_u64(&w, "stage3_prefetch_bucket_size", c->prefetch_bucket_size);
            json_kv_u64(&w, "stage3_max_live_parameters", c->max_live_parameters);
        }
        json_kv_u64(&w, "ep_size", c->ep_size > 1 ? c->ep_size : 1);
        json_kv_bool(&w, "fits", c->fits);
        json_kv_string(&w, "runs_out", c->runs_out);
        json_kv_string(&w, "limit", c->limit);
        json_kv_double(&w, "estimate_gpu_states_bytes", c->gpu_states_bytes);
        json_kv_double(&w, "compute_bound_step_s", c->bound_step_s);
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
            json_kv_double(&w, "exposed_all_gather_s", c->exposed_gather_s);
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
        json_kv_u64(&w, "grad_accum", best->grad_accum);
        json_kv_string(&w, "activation_checkpointing", advice_checkpointing(best, ck, sizeof ck));
        if (best->max_live_parameters) {
            json_kv_u64(&w, "stage3_prefetch_bucket_size", best->prefetch_bucket_size);
            json_kv_u64(&w, "stage3_max_live_parameters", best->max_live_parameters);
        }
        json_kv_u64(&w, "ep_size", best->ep_size > 1 ? best->ep_size : 1);
        static const char *const why[] = {"fastest", "simpler", "room"};
        json_kv_string(&w, "chosen_for", why[best->chosen_for]);
        json_end_object(&w);
    } else {
        json_null(&w);
    }
    char text[ADVICE_TEXT_MAX];
    explain(a, text, sizeof text);
    if (best) {
        size_t used = strlen(text);
        explain_ep(a, best, text + used, sizeof text - used);
    }
    json_kv_string(&w, "explanation", text);
    json_end_object(&w);
}
