/*
 * estimate.c - one analytic estimate from the model/ pieces (see estimate.h).
 */
#include "estimate.h"

#include <string.h>

int estimate_build(const ModelConfig *model, TrainConfig *train, const Platform *platform,
                   const EstimateOptions *opts, Estimate *out, Err *err)
{
    memset(out, 0, sizeof *out);
    const uint64_t n_gpus = platform_n_gpus(platform);
    BatchPlan batch;
    if (ds_config_resolve_batch(train, n_gpus, &batch, err))
        return -1;

    const uint64_t shard = train->zero.shard_size;
    if (train->zero.stage == 3 && shard > 0 && shard < n_gpus && n_gpus % shard != 0)
        return err_set(err,
                       "%s: zero_optimization.mics_shard_size: expected a divisor of the "
                       "GPU count %llu, got %llu",
                       train->file, (unsigned long long)n_gpus, (unsigned long long)shard);
    RunSetup *setup = &out->setup;
    setup->seq_len = opts->seq_len ? opts->seq_len : model_config_default_seq_len(model);
    /* The s x s score matrices count tokens x heads x s bytes; keep every byte count far from
     * 2^64 (a micro-batch this large is a typo, not a plan). */
    double score_bytes = 5.0 * (double)setup->seq_len * (double)setup->seq_len *
                         (double)batch.micro_batch * (double)model->n_heads;
    if (score_bytes > 1e18)
        return err_set(err,
                       "--seq-len %llu with micro-batch %llu and %llu heads: expected under "
                       "1e18 bytes of attention scores per layer, got %.3g",
                       (unsigned long long)setup->seq_len, (unsigned long long)batch.micro_batch,
                       (unsigned long long)model->n_heads, score_bytes);
    setup->micro_batch = batch.micro_batch;
    setup->grad_accum = batch.grad_accum;
    setup->global_batch = batch.global_batch;
    setup->n_gpus = n_gpus;
    setup->recompute = opts->recompute;
    setup->checkpoint_every = opts->checkpoint_every ? opts->checkpoint_every : 1;
    setup->is_flash_attention = opts->is_flash_attention;
    setup->flash_kernel = opts->is_flash_attention ? opts->flash_kernel : PLATFORM_FLASH_V2;
    /* FlashAttention-3 (Hopper only) and the Triton kernel (published for A100 only) have no
     * rate to fall back on: they need the platform's own rows */
    const bool is_v3 = setup->flash_kernel == PLATFORM_FLASH_V3;
    if ((is_v3 || setup->flash_kernel == PLATFORM_FLASH_TRITON) &&
        !platform_has_flash_kernel(platform, setup->flash_kernel)) {
        const char *name = platform_flash_kernel_name(setup->flash_kernel);
        return err_set(err,
                       "--flash-attention %s: expected a platform whose gpu.flash_attention "
                       "table has %s (\"%s\") rows, got %s (%s), which has none: %s",
                       name, is_v3 ? "FlashAttention-3" : "Triton FlashAttention", name,
                       platform->name, platform->gpu.model,
                       is_v3 ? "FlashAttention-3 runs on Hopper GPUs; use on (FlashAttention-2)"
                             : "its rates are published for the A100 only; use v1 (the CUDA "
                               "kernel of the same algorithm)");
    }
    setup->loss = opts->loss;
    setup->elementwise = opts->elementwise;
    if (setup->elementwise == ELEMENTWISE_LIGER && !kernels_liger_patches(model))
        return err_set(err,
                       "--elementwise liger: expected a model of a family Liger-Kernel patches "
                       "(Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE, Gemma, Phi-3, OLMo 2, "
                       "Granite, gpt-oss), got %s (%s): use fused or eager",
                       model->name, model_config_family_name(model->family));
    setup->act_bytes = ds_config_param_bytes(train);
    setup->is_fp16 = train->precision == PRECISION_FP16;
    setup->ep_size = opts->ep_size > 1 ? opts->ep_size : 1;
    setup->capacity_factor = opts->capacity_factor > 0 ? opts->capacity_factor : 1.0;
    setup->moe_imbalance = opts->moe_imbalance > 1.0 ? opts->moe_imbalance : 1.0;

    params_count(model, &out->params);
    /* selective_op.h lists a dense layer's projections; a mixture of experts' routed MLP and
     * multi-head latent attention run other mms, which it does not describe */
    if (setup->recompute == RECOMPUTE_SELECTIVE_OP &&
        (model->moe.n_experts > 0 || model->mla.kv_lora_rank > 0))
        return err_set(err,
                       "--activation-checkpointing selective-op: expected a model with dense "
                       "layers (torchtitan's op-level policy is modelled for them), got %s "
                       "with %s: use full, every:N or selective",
                       model->name, model->moe.n_experts > 0 ? "experts" : "latent attention");
    if (setup->ep_size > 1 &&
        (model->moe.n_experts == 0 || model->moe.n_experts % setup->ep_size != 0 ||
         n_gpus % setup->ep_size != 0))
        return err_set(err,
                       "--ep-size %llu: expected a divisor of the model's experts (%llu) and "
                       "of the GPU count %llu%s",
                       (unsigned long long)setup->ep_size,
                       (unsigned long long)model->moe.n_experts, (unsigned long long)n_gpus,
                       model->moe.n_experts == 0 ? " (a dense model has none: give 1)" : "");
    flops_step(model, &out->params, setup, &out->flops);
    activations_bytes(model, setup, &out->act);
    if (opts->has_fsdp_autocast_casts) {
        /* fp32 FSDP parameters under 16-bit autocast: autograd keeps each GEMM's cast weight
         * for its backward (kernels.h kernels_weight_cast_elems), in every layer whose forward
         * it keeps, the logits weight's with the output layer, and a recomputed layer's
         * again while its backward runs */
        double layer, head;
        kernels_weight_cast_elems(&out->params, &layer, &head);
        const uint64_t L = model->n_layers;
        const uint64_t kept = setup->recompute == RECOMPUTE_SELECTIVE_OP ? 0
                              : setup->recompute == RECOMPUTE_FULL
                                  ? L - setup_n_checkpointed(setup, L)
                                  : L;
        const double casts = ((double)kept + (kept < L ? 1.0 : 0.0)) * layer + head;
        out->act.peak += (uint64_t)(casts * (double)setup->act_bytes);
    }
    zero_memory_ep(train, &out->params, model->n_layers, n_gpus, setup->ep_size, &out->mem);
    out->all_to_all_bytes = moe_all_to_all_step_bytes(model, &out->params, setup);
    /* FSDP with MixedPrecision keeps the sharded flat parameter and its reduced gradient in
     * fp32 (torch/distributed/fsdp/_flat_param.py FlatParamHandle: _local_shard in the
     * original dtype, _mp_shard for the low-precision copy; _runtime_utils.py _reduce_grad
     * casts the reduced shard back to the parameter's dtype), and the optimizer steps those:
     * the wrappers' working copies are DeepSpeed's alone. */
    if (opts->is_fsdp)
        out->mem.gpu_step_copies = 0;
    /* FSDP holds the unit it computes and the one it prefetches unsharded (FlatParamHandle's
     * _full_param_padded; BACKWARD_PRE prefetch), and a unit's unsharded gradient before its
     * reduce-scatter (_runtime_utils.py _post_backward_hook): not DeepSpeed's prefetch window,
     * which fsdp_apply() opens to the whole model for the schedule's sake. */
    if (opts->is_fsdp && train->zero.stage == 3) {
        uint64_t unit = out->params.per_layer;
        if (out->params.embedding > unit)
            unit = out->params.embedding;
        if (out->params.lm_head > unit)
            unit = out->params.lm_head;
        /* gathered in MixedPrecision.param_dtype; the gradient autograd leaves on the flat
         * parameter is in that dtype too, beside its cast to the reduce dtype when they differ
         * (_runtime_utils.py _post_backward_hook: flat_param.grad.to(handle._reduce_dtype)) */
        const uint64_t param_b = opts->fsdp_param_bytes ? opts->fsdp_param_bytes
                                                        : out->mem.param_bytes;
        const uint64_t grad_b = opts->has_fsdp_autocast_casts ? 4u : out->mem.grad_bytes;
        const uint64_t comm_b = out->mem.grad_comm_bytes;
        out->mem.gpu_buffers =
            2 * unit * param_b + unit * (grad_b + (comm_b != grad_b ? comm_b : 0));
    }
    comm_volume(train, &out->params, &out->mem, n_gpus, batch.grad_accum, &out->comm);
    if (opts->is_fsdp && train->zero.stage == 3 && opts->fsdp_param_bytes &&
        opts->fsdp_param_bytes != out->mem.param_bytes) {
        /* FSDP's all-gathers move MixedPrecision.param_dtype's bytes */
        out->comm.all_gather = (uint64_t)((double)out->comm.all_gather * opts->fsdp_param_bytes /
                                              out->mem.param_bytes +
                                          0.5);
        out->comm.total = out->comm.all_reduce + out->comm.all_gather + out->comm.reduce_scatter;
        out->comm.total_in_psi =
            out->params.total
                ? (double)out->comm.total / ((double)out->params.total * out->mem.param_bytes)
                : 0.0;
    }
    out->comm.all_to_all = (uint64_t)(out->all_to_all_bytes + 0.5);
    out->paper_model_states_bytes =
        zero_memory_paper_bytes(train->zero.stage, (double)out->params.total, (double)n_gpus);

    const ZeroConfig *z = &train->zero;
    const bool opt_offload = z->offload_optimizer.device != OFFLOAD_NONE;
    const bool param_offload = z->offload_param.device != OFFLOAD_NONE;
    if (z->stage == 1 || z->stage == 2) {
        out->has_ds_estimate = true;
        out->ds_estimate =
            ds_estimator_zero2(out->params.total, platform->gpus_per_node, platform->n_nodes,
                               opt_offload, DS_ESTIMATOR_BUFFER_FACTOR);
    } else if (z->stage == 3) {
        out->has_ds_estimate = true;
        out->ds_estimate = ds_estimator_zero3(
            out->params.total, out->params.largest_module, platform->gpus_per_node,
            platform->n_nodes, opt_offload, param_offload, true, DS_ESTIMATOR_BUFFER_FACTOR);
    }

    /* DeepSpeed's cpu_checkpointing moves the full-recompute checkpoints to host memory. */
    uint64_t cpu_act = 0;
    out->gpu_activations = out->act.peak;
    if (train->cpu_checkpointing && setup->recompute == RECOMPUTE_FULL) {
        out->gpu_activations -= out->act.checkpoints;
        cpu_act = out->act.checkpoints;
    }

    const ZeroMemory *m = &out->mem;
    const uint64_t gpn = platform->gpus_per_node;
    out->gpu_peak = m->gpu_model_states + m->gpu_buffers + out->gpu_activations;
    out->cpu_peak =
        gpn * (m->cpu_params + m->cpu_grads + m->cpu_optimizer + m->cpu_buffers + cpu_act);
    out->nvme_peak = gpn * (m->nvme_params + m->nvme_grads + m->nvme_optimizer);
    out->gpu_capacity = platform->gpu.hbm_bytes;
    out->cpu_capacity = platform->cpu.dram_bytes;
    out->nvme_capacity = platform->nvme.n_drives * platform->nvme.capacity_bytes_per_drive;
    runtime_memory_ep(platform, z, opts->is_fsdp ? RUNTIME_FSDP : RUNTIME_DEEPSPEED, n_gpus,
                      setup->ep_size, &out->runtime);
    const uint64_t working = m->gpu_step_copies > out->gpu_activations ? m->gpu_step_copies
                                                                       : out->gpu_activations;
    out->gpu_allocated_peak = m->gpu_model_states + m->gpu_buffers + working +
                              out->runtime.cublas_workspace_bytes;
    /* Without deepspeed.zero.Init (a model built whole, then handed to deepspeed.initialize)
     * every GPU first holds the whole 16-bit model: engine.py moves the module to the device
     * and stage3.py partitions it there, freeing each full tensor after its partition is made
     * and emptying the cache; the peak stays in the allocator's reserve. */
    out->gpu_load_bytes = z->stage == 3 && opts->is_loaded_whole && !opts->is_fsdp
                              ? out->params.total * ds_config_param_bytes(train)
                              : 0;
    const uint64_t held = out->gpu_allocated_peak > out->gpu_load_bytes ? out->gpu_allocated_peak
                                                                        : out->gpu_load_bytes;
    out->gpu_device_peak = held + out->runtime.outside_bytes;
    out->gpu_headroom = (uint64_t)(opts->headroom_fraction * (double)out->gpu_capacity);
    out->fits_gpu = out->gpu_device_peak + out->gpu_headroom <= out->gpu_capacity;
    out->fits_cpu = out->cpu_peak <= out->cpu_capacity;
    out->fits_nvme = out->nvme_peak <= out->nvme_capacity;
    out->fits = out->fits_gpu && out->fits_cpu && out->fits_nvme;

    /* the kernel model's forward and backward with no communication (model/kernels.h) */
    KernelGpu gpu;
    kernels_gpu(platform, train->precision, &gpu);
    kernels_step_time(model, setup, &gpu, &out->compute_kernels);
    out->compute_bound_step_s = out->compute_kernels.total_s;
    out->matmul_ceiling_flops_per_s = gpu.matmul_flops_per_s;
    return 0;
}
