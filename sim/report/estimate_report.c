/*
 * estimate_report.c - text table and JSON for `zerosim estimate` (see estimate_report.h).
 */
#include "estimate_report.h"

#include "json_writer.h"
#include "verdict.h"

#include "../common/choices.h"
#include "../common/units.h"

static double gib(uint64_t bytes)
{
    return (double)bytes / UNITS_GIB;
}

static const char *stage_name(const TrainConfig *t)
{
    static const char *const names[] = {"DDP (ZeRO-0)", "ZeRO-1", "ZeRO-2", "ZeRO-3"};
    return names[t->zero.stage];
}

static const char *fits_word(bool fits)
{
    return fits ? "fits" : "DOES NOT FIT";
}

/* One indented table row: label, value, optional note. */
static void row(FILE *out, const char *label, double value, const char *note)
{
    fprintf(out, "  %-40s %9.2f%s%s\n", label, value, note[0] ? "   " : "", note);
}

void estimate_report_text(FILE *out, const EstimateReport *r)
{
    const ModelConfig *m = r->model;
    const TrainConfig *t = r->train;
    const Platform *p = r->platform;
    const Estimate *e = r->estimate;
    const ZeroMemory *mem = &e->mem;
    const RunSetup *s = &e->setup;

    char rec[32];
    fprintf(out, "zerosim estimate: %s with %s on %s\n\n", m->name, stage_name(t), p->name);
    Verdict v;
    verdict_of_estimate(e, r->remedy, &v);
    verdict_text(out, &v);
    fprintf(out, "\n");
    fprintf(out,
            "model        %.3f B parameters: %llu layers, hidden %llu, %llu heads (%llu kv), "
            "ffn %llu, vocab %llu\n",
            (double)e->params.total / 1e9, (unsigned long long)m->n_layers,
            (unsigned long long)m->hidden, (unsigned long long)m->n_heads,
            (unsigned long long)m->n_kv_heads, (unsigned long long)m->ffn_hidden,
            (unsigned long long)m->vocab);
    if (e->params.n_experts > 0) {
        const uint64_t ep = moe_ep_size(&e->params, s);
        fprintf(out,
                "experts      %llu routed per token of %llu in %llu MoE layers%s; %.3f B "
                "active; expert parallel %llu (%llu experts per GPU, expert data parallel "
                "%llu); capacity factor %.2f; busiest expert %.2f x its share\n",
                (unsigned long long)e->params.top_k, (unsigned long long)e->params.n_experts,
                (unsigned long long)e->params.n_moe_layers,
                m->moe.shared_ffn > 0 ? ", with shared experts" : "",
                (double)e->params.active / 1e9, (unsigned long long)ep,
                (unsigned long long)(e->params.n_experts / ep),
                (unsigned long long)(s->n_gpus / ep), moe_capacity_factor(s),
                moe_load_factor(s));
    }
    fprintf(out, "cluster      %llu x %s (%llu node%s x %llu), %.2f GiB HBM each\n",
            (unsigned long long)platform_n_gpus(p), p->gpu.model, (unsigned long long)p->n_nodes,
            p->n_nodes == 1 ? "" : "s", (unsigned long long)p->gpus_per_node,
            gib(p->gpu.hbm_bytes));
    fprintf(out,
            "training     %s, %s, optimizer %s; batch %llu = micro %llu x accumulation %llu x "
            "%llu GPUs; sequence %llu; recompute %s; flash attention %s\n",
            stage_name(t), precision_name(t->precision), t->optimizer,
            (unsigned long long)s->global_batch, (unsigned long long)s->micro_batch,
            (unsigned long long)s->grad_accum, (unsigned long long)s->n_gpus,
            (unsigned long long)s->seq_len,
            setup_recompute_name(s->recompute, s->checkpoint_every, rec, sizeof rec),
            !s->is_flash_attention                    ? "off"
            : s->flash_kernel == PLATFORM_FLASH_V2 ? "on"
                                                   : platform_flash_kernel_name(s->flash_kernel));
    if (t->zero.offload_optimizer.device != OFFLOAD_NONE ||
        t->zero.offload_param.device != OFFLOAD_NONE)
        fprintf(out, "offload      optimizer -> %s, parameters -> %s\n",
                ds_config_offload_name(t->zero.offload_optimizer.device),
                ds_config_offload_name(t->zero.offload_param.device));

    char label[64];
    fprintf(out, "\n%-42s %9s\n", "memory per GPU", "GiB");
    snprintf(label, sizeof label, "parameters (%u B/elem)", mem->param_bytes);
    row(out, label, gib(mem->gpu_params), "");
    snprintf(label, sizeof label, "gradients (%u B/elem)", mem->grad_bytes);
    row(out, label, gib(mem->gpu_grads), "");
    snprintf(label, sizeof label, "optimizer states (%u B/elem)", mem->optimizer_bytes);
    row(out, label, gib(mem->gpu_optimizer), "");
    char note[96];
    snprintf(note, sizeof note, "(paper formula: %.2f)", e->paper_model_states_bytes / UNITS_GIB);
    row(out, "= model states", gib(mem->gpu_model_states), note);
    row(out, "activations (micro-batch peak)", gib(e->gpu_activations), "");
    row(out, "buffers (buckets, gathered params)", gib(mem->gpu_buffers), "");
    row(out, "= peak of model states, act., buffers", gib(e->gpu_peak), "");
    row(out, "optimizer step copies (fp32, at step)", gib(mem->gpu_step_copies), "");
    row(out, "cuBLAS workspaces", gib(e->runtime.cublas_workspace_bytes), "");
    row(out, "= allocated peak", gib(e->gpu_allocated_peak), "(act. or step copies)");
    if (e->gpu_load_bytes > 0)
        row(out, "model load (--zero-init off)", gib(e->gpu_load_bytes),
            "(the whole 16-bit model, before ZeRO-3 partitions it)");
    if (e->runtime.is_counted) {
        row(out, "CUDA context", gib(e->runtime.cuda_context_bytes),
            e->runtime.is_eager_loading ? "eager module loading" : "lazy module loading");
        row(out, "NCCL buffers", gib(e->runtime.nccl_bytes), "");
    } else {
        row(out, "CUDA context, NCCL buffers", 0.0, "(no runtime section: not counted)");
    }
    snprintf(note, sizeof note, "of %.2f, %.2f kept free: %s", gib(e->gpu_capacity),
             gib(e->gpu_headroom), fits_word(e->fits_gpu));
    row(out, "= device peak (no allocator rounding)", gib(e->gpu_device_peak), note);
    snprintf(note, sizeof note, "of %.2f: %s", gib(e->cpu_capacity), fits_word(e->fits_cpu));
    fprintf(out, "%-42s %9.2f   %s\n", "host memory per node", gib(e->cpu_peak), note);
    if (e->nvme_peak > 0 || e->nvme_capacity > 0) {
        snprintf(note, sizeof note, "of %.2f: %s", gib(e->nvme_capacity), fits_word(e->fits_nvme));
        fprintf(out, "%-42s %9.2f   %s\n", "NVMe per node", gib(e->nvme_peak), note);
    }
    if (e->has_ds_estimate)
        fprintf(out,
                "DeepSpeed's estimator (model states only, host x%.1f): GPU %.2f GiB, "
                "host %.2f GiB per node\n",
                DS_ESTIMATOR_BUFFER_FACTOR, gib(e->ds_estimate.gpu_bytes),
                gib(e->ds_estimate.cpu_bytes));

    const CommVolume *c = &e->comm;
    fprintf(out, "\n%-42s %9s\n", "communication per rank per step", "GB");
    row(out, "all-reduce", (double)c->all_reduce / 1e9, "");
    row(out, "all-gather", (double)c->all_gather / 1e9, "");
    row(out, "reduce-scatter", (double)c->reduce_scatter / 1e9, "");
    snprintf(note, sizeof note, "(%.2f x Psi x %u B)", c->total_in_psi, mem->param_bytes);
    row(out, "= total", (double)c->total / 1e9, note);
    if (c->all_to_all > 0)
        row(out, "all-to-all (MoE tokens, apart)", (double)c->all_to_all / 1e9, "");

    /* PFLOP up to 1e3, then EFLOP, so the numbers stay short. */
    const bool is_exa = e->flops.hardware >= 1e21;
    const double scale = is_exa ? 1e18 : 1e15;
    fprintf(out, "\nwork per step: %.3f %s executed (%.3f model, %.3f by Megatron's formula)\n",
            e->flops.hardware / scale, is_exa ? "EFLOP" : "PFLOP", e->flops.model / scale,
            e->flops.megatron / scale);
    fprintf(out,
            "compute-bound step time: %.3f s (the layers' kernels at their roofline times on "
            "%s, no communication)\n",
            e->compute_bound_step_s, p->gpu.model);
    estimate_report_kernels_text(out, e);
    estimate_report_defaults_text(out, r);
}

static void kernel_line(FILE *out, const char *label, double s, double total)
{
    if (s > 0)
        fprintf(out, "  %-38s %9.4f %6.1f%%\n", label, s, total > 0 ? 100.0 * s / total : 0.0);
}

void estimate_report_kernels_text(FILE *out, const Estimate *e)
{
    const KernelTime *k = &e->compute_kernels;
    const double total = k->total_s;
    fprintf(out, "\n%-40s %9s %7s\n", "compute-bound step by kernel family", "s", "share");
    if (k->gemm_s > 0)
        fprintf(out, "  %-38s %9.4f %6.1f%%   %.1f TFLOP/s of its %.1f ceiling\n", "GEMMs",
                k->gemm_s, total > 0 ? 100.0 * k->gemm_s / total : 0.0,
                k->gemm_flops / k->gemm_s / 1e12, e->matmul_ceiling_flops_per_s / 1e12);
    kernel_line(out, "fused attention", k->attention_s, total);
    kernel_line(out, "element-wise and reductions", k->memory_s, total);
    kernel_line(out, "host issue beyond the GPU's kernels", k->launch_bound_s, total);
    kernel_line(out, "host work behind synchronisations", k->host_serial_s, total);
    fprintf(out, "  %-38s %9.4f           %.0f kernels\n", "= compute-bound step", total,
            k->n_kernels);
}

void estimate_report_kernels_json(JsonWriter *w, const Estimate *e)
{
    const KernelTime *k = &e->compute_kernels;
    json_key(w, "compute_by_kernel");
    json_begin_object(w);
    json_kv_double(w, "gemm_s", k->gemm_s);
    json_kv_double(w, "gemm_flops", k->gemm_flops);
    json_kv_double(w, "gemm_flops_per_s", k->gemm_s > 0 ? k->gemm_flops / k->gemm_s : 0.0);
    json_kv_double(w, "matmul_ceiling_flops_per_s", e->matmul_ceiling_flops_per_s);
    json_kv_double(w, "attention_s", k->attention_s);
    json_kv_double(w, "memory_s", k->memory_s);
    json_kv_double(w, "launch_bound_s", k->launch_bound_s);
    json_kv_double(w, "host_serial_s", k->host_serial_s);
    json_kv_double(w, "n_kernels", k->n_kernels);
    json_kv_double(w, "total_s", k->total_s);
    json_end_object(w);
}

void estimate_report_defaults_text(FILE *out, const EstimateReport *r)
{
    const StrList *defaults[] = {r->setup_defaults, &r->model->defaults_used,
                                 &r->train->defaults_used};
    const char *title = "\ndefaults applied:    ";
    for (size_t k = 0; k < sizeof defaults / sizeof defaults[0]; k++) {
        if (defaults[k] == NULL)
            continue;
        for (size_t i = 0; i < defaults[k]->n_items; i++) {
            fprintf(out, "%s%s\n", title, defaults[k]->items[i]);
            title = "                     ";
        }
    }
}

static void json_list(JsonWriter *w, const StrList *list)
{
    for (size_t i = 0; i < list->n_items; i++)
        json_string(w, list->items[i]);
}

void estimate_report_json_flops(JsonWriter *w, const StepFlops *f)
{
    json_key(w, "flops");
    json_begin_object(w);
    json_kv_double(w, "per_step", f->hardware);
    json_kv_double(w, "model_per_step", f->model);
    json_kv_double(w, "megatron_per_step", f->megatron);
    json_end_object(w);
}

void estimate_report_json_inputs(JsonWriter *w, const EstimateReport *r)
{
    const ModelConfig *m = r->model;
    const TrainConfig *t = r->train;
    const Platform *p = r->platform;
    const Estimate *e = r->estimate;
    json_key(w, "model");
    json_begin_object(w);
    json_kv_string(w, "name", m->name);
    json_kv_u64(w, "params", e->params.total);
    json_kv_u64(w, "active_params", e->params.active);
    json_kv_u64(w, "ep_size", moe_ep_size(&e->params, &e->setup));
    json_kv_u64(w, "params_per_layer", e->params.per_layer);
    json_kv_u64(w, "largest_module_params", e->params.largest_module);
    json_kv_u64(w, "layers", m->n_layers);
    json_kv_u64(w, "hidden", m->hidden);
    json_kv_u64(w, "heads", m->n_heads);
    json_kv_u64(w, "kv_heads", m->n_kv_heads);
    json_kv_u64(w, "ffn_hidden", m->ffn_hidden);
    json_kv_u64(w, "vocab", m->vocab);
    json_end_object(w);

    json_key(w, "cluster");
    json_begin_object(w);
    json_kv_string(w, "platform", p->name);
    json_kv_string(w, "gpu", p->gpu.model);
    json_kv_u64(w, "gpus", platform_n_gpus(p));
    json_kv_u64(w, "nodes", p->n_nodes);
    json_kv_u64(w, "gpus_per_node", p->gpus_per_node);
    json_end_object(w);

    json_key(w, "config");
    json_begin_object(w);
    json_kv_string(w, "file", t->file);
    json_kv_u64(w, "zero_stage", (uint64_t)t->zero.stage);
    json_kv_string(w, "precision", precision_name(t->precision));
    json_kv_string(w, "optimizer", t->optimizer);
    json_kv_string(w, "offload_optimizer",
                   ds_config_offload_name(t->zero.offload_optimizer.device));
    json_kv_string(w, "offload_param", ds_config_offload_name(t->zero.offload_param.device));
    json_kv_u64(w, "global_batch", e->setup.global_batch);
    json_kv_u64(w, "micro_batch", e->setup.micro_batch);
    json_kv_u64(w, "grad_accum", e->setup.grad_accum);
    json_kv_u64(w, "seq_len", e->setup.seq_len);
    char rec[32];
    json_kv_string(
        w, "activation_checkpointing",
        setup_recompute_name(e->setup.recompute, e->setup.checkpoint_every, rec, sizeof rec));
    json_kv_bool(w, "flash_attention", e->setup.is_flash_attention);
    json_kv_u64(w, "flash_attention_version",
                !e->setup.is_flash_attention                    ? 0
                : e->setup.flash_kernel == PLATFORM_FLASH_V1 ? 1
                : e->setup.flash_kernel == PLATFORM_FLASH_TRITON ? 1 /* v1's algorithm */
                : e->setup.flash_kernel == PLATFORM_FLASH_V3 ? 3
                                                                : 2);
    json_kv_string(w, "flash_attention_kernel",
                   e->setup.is_flash_attention ? platform_flash_kernel_name(e->setup.flash_kernel)
                                               : "off");
    /* choices.h's tables list the names in LossKernel's and ElementwiseKernels' order */
    json_kv_string(w, "cross_entropy", choices_name(&choices_cross_entropy, (int)e->setup.loss));
    json_kv_string(w, "elementwise",
                   choices_name(&choices_elementwise, (int)e->setup.elementwise));
    json_kv_u64(w, "grad_comm_bytes", e->mem.grad_comm_bytes);
    json_key(w, "defaults_applied");
    json_begin_array(w);
    json_list(w, r->setup_defaults);
    json_list(w, &m->defaults_used);
    json_list(w, &t->defaults_used);
    json_end_array(w);
    json_key(w, "keys_not_modelled");
    json_begin_array(w);
    json_list(w, &m->not_modelled);
    json_list(w, &t->not_modelled);
    json_end_array(w);
    json_end_object(w);
}

void estimate_report_json(FILE *out, const EstimateReport *r)
{
    const Platform *p = r->platform;
    const Estimate *e = r->estimate;
    const ZeroMemory *mem = &e->mem;
    JsonWriter w;
    json_writer_init(&w, out, true);
    json_begin_object(&w);
    json_kv_string(&w, "zerosim_version", ZEROSIM_VERSION_STRING);
    json_kv_string(&w, "command", "estimate");
    Verdict v;
    verdict_of_estimate(e, r->remedy, &v);
    verdict_json(&w, &v);

    estimate_report_json_inputs(&w, r);
    json_key(&w, "memory");
    json_begin_object(&w);
    json_kv_u64(&w, "gpu_model_states_bytes", mem->gpu_model_states);
    json_kv_double(&w, "paper_model_states_bytes", e->paper_model_states_bytes);
    json_key(&w, "gpu_breakdown_bytes");
    json_begin_object(&w);
    json_kv_u64(&w, "params", mem->gpu_params);
    json_kv_u64(&w, "grads", mem->gpu_grads);
    json_kv_u64(&w, "optimizer", mem->gpu_optimizer);
    json_kv_u64(&w, "activations", e->gpu_activations);
    json_kv_u64(&w, "buffers", mem->gpu_buffers);
    json_end_object(&w);
    json_kv_u64(&w, "gpu_peak_bytes", e->gpu_peak);
    json_kv_u64(&w, "gpu_step_copies_bytes", mem->gpu_step_copies);
    json_kv_u64(&w, "gpu_cublas_workspace_bytes", e->runtime.cublas_workspace_bytes);
    json_kv_u64(&w, "gpu_allocated_peak_bytes", e->gpu_allocated_peak);
    json_kv_bool(&w, "runtime_counted", e->runtime.is_counted);
    json_kv_u64(&w, "gpu_cuda_context_bytes", e->runtime.cuda_context_bytes);
    json_kv_string(&w, "cuda_module_loading", e->runtime.is_eager_loading ? "eager" : "lazy");
    json_kv_u64(&w, "gpu_nccl_bytes", e->runtime.nccl_bytes);
    json_kv_u64(&w, "gpu_load_bytes", e->gpu_load_bytes);
    json_kv_u64(&w, "gpu_device_peak_bytes", e->gpu_device_peak);
    json_kv_u64(&w, "gpu_headroom_bytes", e->gpu_headroom);
    json_kv_u64(&w, "gpu_capacity_bytes", e->gpu_capacity);
    json_key(&w, "cpu_breakdown_bytes");
    json_begin_object(&w);
    const uint64_t gpn = p->gpus_per_node;
    json_kv_u64(&w, "params", gpn * mem->cpu_params);
    json_kv_u64(&w, "grads", gpn * mem->cpu_grads);
    json_kv_u64(&w, "optimizer", gpn * mem->cpu_optimizer);
    json_kv_u64(&w, "buffers", gpn * mem->cpu_buffers);
    json_kv_u64(&w, "activations",
                e->cpu_peak - gpn * (mem->cpu_params + mem->cpu_grads + mem->cpu_optimizer +
                                     mem->cpu_buffers));
    json_end_object(&w);
    json_kv_u64(&w, "cpu_peak_bytes", e->cpu_peak);
    json_kv_u64(&w, "cpu_capacity_bytes", e->cpu_capacity);
    json_kv_u64(&w, "nvme_peak_bytes", e->nvme_peak);
    json_kv_u64(&w, "nvme_capacity_bytes", e->nvme_capacity);
    json_kv_bool(&w, "fits_gpu", e->fits_gpu);
    json_kv_bool(&w, "fits_cpu", e->fits_cpu);
    json_kv_bool(&w, "fits_nvme", e->fits_nvme);
    json_kv_bool(&w, "fits", e->fits);
    json_key(&w, "deepspeed_estimator");
    if (e->has_ds_estimate) {
        json_begin_object(&w);
        json_kv_u64(&w, "gpu_bytes", e->ds_estimate.gpu_bytes);
        json_kv_u64(&w, "cpu_bytes_per_node", e->ds_estimate.cpu_bytes);
        json_kv_double(&w, "additional_buffer_factor", DS_ESTIMATOR_BUFFER_FACTOR);
        json_end_object(&w);
    } else {
        json_null(&w);
    }
    json_key(&w, "activations_bytes");
    json_begin_object(&w);
    json_kv_u64(&w, "per_layer_stored", e->act.layer_stored);
    json_kv_u64(&w, "per_layer_full", e->act.layer_full);
    json_kv_u64(&w, "output_layer", e->act.output_layer);
    json_kv_u64(&w, "checkpoints", e->act.checkpoints);
    json_kv_u64(&w, "peak", e->act.peak);
    json_end_object(&w);
    json_end_object(&w);

    json_key(&w, "comm");
    json_begin_object(&w);
    json_key(&w, "bytes_per_rank");
    json_begin_object(&w);
    json_kv_u64(&w, "all_reduce", e->comm.all_reduce);
    json_kv_u64(&w, "all_gather", e->comm.all_gather);
    json_kv_u64(&w, "reduce_scatter", e->comm.reduce_scatter);
    json_kv_u64(&w, "all_to_all", e->comm.all_to_all);
    json_kv_u64(&w, "total", e->comm.total);
    json_end_object(&w);
    json_kv_double(&w, "total_in_psi", e->comm.total_in_psi);
    json_end_object(&w);

    estimate_report_json_flops(&w, &e->flops);

    json_key(&w, "time");
    json_begin_object(&w);
    json_kv_double(&w, "compute_bound_step_s", e->compute_bound_step_s);
    estimate_report_kernels_json(&w, e);
    json_end_object(&w);
    json_end_object(&w);
}
