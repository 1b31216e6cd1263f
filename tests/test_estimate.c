/*
 * test_estimate.c - `zerosim estimate` end to end from the shipped presets.
 *
 * The acceptance cases: GPT-3 175B under ZeRO-3 on 1024 A100s holds exactly 16 Psi / 1024
 * bytes of model states per GPU (ZeRO Table 1; Psi is a multiple of h = 12288 and so of 1024,
 * leaving no partition padding); a 1.5B GPT-2 under ZeRO-2 on one 8-GPU DGX A100 fits in
 * 80 GiB at sequence length 1024; GPT-3 175B under plain data parallelism (16 Psi = 2.8 TB per
 * GPU) does not. Options mirror the CLI's defaults (no recomputation, flash attention on).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/estimate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Inputs {
    ModelConfig model;
    TrainConfig train;
    Platform platform;
} Inputs;

static void load(Inputs *in, const char *model, const char *config, const char *platform,
                 uint64_t gpus)
{
    Err err = {0};
    int rc = model_config_load(&in->model, model, ZEROSIM_SOURCE_DIR, &err) ||
             ds_config_load(&in->train, config, ZEROSIM_SOURCE_DIR, &err) ||
             platform_load(&in->platform, platform, ZEROSIM_SOURCE_DIR, &err) ||
             platform_resize(&in->platform, gpus, 0, &err);
    if (rc != 0)
        assert_int_equal(rc, 0);
    assert_int_equal(platform_n_gpus(&in->platform), gpus);
}

static void fini(Inputs *in)
{
    model_config_fini(&in->model);
    ds_config_fini(&in->train);
}

static void build(Inputs *in, const EstimateOptions *opts, Estimate *est)
{
    Err err = {0};
    int rc = estimate_build(&in->model, &in->train, &in->platform, opts, est, &err);
    if (rc != 0)
        assert_int_equal(rc, 0);
}

/* --flash-attention v3 needs the platform's FlashAttention-3 rates: dgx-h100 has them, the
 * A100 (no Hopper kernels) refuses it with the platform named. */
static void test_estimate_build_flash3_needs_its_rates(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "llama-3-8b", "zero2", "dgx-h100", 8);
    EstimateOptions opts = {.seq_len = 8192, .recompute = RECOMPUTE_NONE,
                            .is_flash_attention = true, .flash_kernel = PLATFORM_FLASH_V3};
    Estimate v3, v2;
    build(&in, &opts, &v3);
    assert_true(v3.setup.flash_kernel == PLATFORM_FLASH_V3);
    opts.flash_kernel = PLATFORM_FLASH_V2;
    build(&in, &opts, &v2);
    /* FlashAttention-3's published rates are about twice FlashAttention-2's on H100 */
    assert_true(v3.compute_kernels.attention_s < 0.6 * v2.compute_kernels.attention_s);
    fini(&in);
    load(&in, "llama-3-8b", "zero2", "dgx-a100-80g", 8);
    opts.flash_kernel = PLATFORM_FLASH_V3;
    Err err = {0};
    assert_int_equal(estimate_build(&in.model, &in.train, &in.platform, &opts, &v3, &err), -1);
    assert_string_equal(err.msg, "--flash-attention v3: expected a platform whose "
                                 "gpu.flash_attention table has FlashAttention-3 (\"v3\") rows, "
                                 "got dgx-a100-80g (A100-SXM4-80GB), which has none: "
                                 "FlashAttention-3 runs on Hopper GPUs; use on (FlashAttention-2)");
    fini(&in);
}

/* --flash-attention triton runs at the platform's Triton rows (dgx-a100-80g: FlashAttention-2
 * paper Figure 4's Triton bars), not at the CUDA kernel's: at 2048 tokens, head dim 128 and
 * the causal mask both are published points, 68 and 69 TFLOP/s forward and backward
 * together, so every attention kernel takes 69/68 of the CUDA kernel's time. A platform
 * without Triton rows (dgx-h100: none published) refuses it with the platform named. */
static void test_estimate_build_flash_triton_at_its_rates(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "llama-3-8b", "zero2", "dgx-a100-80g", 8);
    EstimateOptions opts = {.seq_len = 2048, .recompute = RECOMPUTE_NONE,
                            .is_flash_attention = true, .flash_kernel = PLATFORM_FLASH_TRITON};
    Estimate triton, v1;
    build(&in, &opts, &triton);
    opts.flash_kernel = PLATFORM_FLASH_V1;
    build(&in, &opts, &v1);
    assert_true(v1.compute_kernels.attention_s > 0);
    const double want = v1.compute_kernels.attention_s * 69.0 / 68.0;
    assert_true(fabs(triton.compute_kernels.attention_s - want) <= 1e-12 * want);
    fini(&in);
    load(&in, "llama-3-8b", "zero2", "dgx-h100", 8);
    opts.flash_kernel = PLATFORM_FLASH_TRITON;
    Err err = {0};
    assert_int_equal(estimate_build(&in.model, &in.train, &in.platform, &opts, &triton, &err),
                     -1);
    assert_string_equal(err.msg, "--flash-attention triton: expected a platform whose "
                                 "gpu.flash_attention table has Triton FlashAttention "
                                 "(\"triton\") rows, got dgx-h100 (H100-SXM5-80GB), which has "
                                 "none: its rates are published for the A100 only; use v1 (the "
                                 "CUDA kernel of the same algorithm)");
    fini(&in);
}

/* --zero-init off under ZeRO-3: each GPU first holds the whole 16-bit model (2 Psi bytes),
 * which sets the device peak when the step needs less; under ZeRO-2 the step holds the
 * whole model anyway and the option changes nothing. */
static void test_estimate_build_model_load_without_zero_init(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "llama-2-7b", "zero3", "dgx-a100-80g", 64);
    EstimateOptions opts = {.seq_len = 512, .recompute = RECOMPUTE_FULL,
                            .is_flash_attention = true, .is_loaded_whole = true};
    Estimate est;
    build(&in, &opts, &est);
    assert_int_equal(est.gpu_load_bytes, 2 * est.params.total);
    assert_true(est.gpu_load_bytes > est.gpu_allocated_peak);
    assert_int_equal(est.gpu_device_peak, est.gpu_load_bytes + est.runtime.outside_bytes);
    opts.is_loaded_whole = false;
    Estimate with_init;
    build(&in, &opts, &with_init);
    assert_int_equal(with_init.gpu_load_bytes, 0);
    assert_int_equal(with_init.gpu_device_peak,
                     with_init.gpu_allocated_peak + with_init.runtime.outside_bytes);
    fini(&in);
    load(&in, "llama-2-7b", "zero2", "dgx-a100-80g", 8);
    opts.is_loaded_whole = true;
    build(&in, &opts, &est);
    assert_int_equal(est.gpu_load_bytes, 0);
    fini(&in);
}

/* --elementwise liger patches the families Liger-Kernel lists only: GPT-2 is refused, by
 * name. */
static void test_estimate_build_liger_needs_an_rmsnorm_family(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "gpt2-1.5b", "zero2", "dgx-a100-80g", 8);
    EstimateOptions opts = {.recompute = RECOMPUTE_NONE, .elementwise = ELEMENTWISE_LIGER};
    Estimate est;
    Err err = {0};
    assert_int_equal(estimate_build(&in.model, &in.train, &in.platform, &opts, &est, &err), -1);
    assert_non_null(strstr(err.msg, "--elementwise liger: expected a model of a family "
                                    "Liger-Kernel patches"));
    assert_non_null(strstr(err.msg, "got gpt2-1.5b (GPT-2): use fused or eager"));
    fini(&in);
    /* Mixtral is patched (apply_liger_kernel_to_mixtral); DeepSeek-V3's RMSNorm family has no
     * entry in Liger's MODEL_TYPE_TO_APPLY_LIGER_FN at the release read */
    load(&in, "mixtral-8x7b", "zero2", "dgx-a100-80g", 8);
    Estimate mixtral;
    build(&in, &opts, &mixtral);
    fini(&in);
    load(&in, "deepseek-v3", "zero3", "dgx-a100-80g", 8);
    err = (Err){0};
    assert_int_equal(estimate_build(&in.model, &in.train, &in.platform, &opts, &est, &err), -1);
    assert_non_null(strstr(err.msg, "got deepseek-v3 (DeepSeek): use fused or eager"));
    fini(&in);
}

/* The acceptance: gpt3-175b, zero3, dgx-a100-80g resized to 1024 GPUs. */
static void test_estimate_build_gpt3_zero3_1024_gpus_is_16psi_over_n(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "gpt3-175b", "zero3", "dgx-a100-80g", 1024);
    EstimateOptions opts = {.seq_len = 0, .recompute = RECOMPUTE_NONE, .is_flash_attention = true};
    Estimate est;
    build(&in, &opts, &est);

    const uint64_t h = 12288, psi = est.params.total;
    assert_int_equal(psi, 96 * (12 * h * h + 13 * h) + 50257 * h + 2048 * h + 2 * h);
    assert_int_equal(psi % 1024, 0);
    assert_int_equal(est.mem.gpu_model_states, 16 * psi / 1024);
    assert_true(est.paper_model_states_bytes == (double)(16 * psi / 1024));
    assert_int_equal(est.mem.gpu_params, 2 * psi / 1024);
    assert_int_equal(est.mem.gpu_grads, 2 * psi / 1024);
    assert_int_equal(est.mem.gpu_optimizer, 12 * psi / 1024);

    /* the batch from zero3.json (micro 4, accumulation 1) over 1024 ranks, s = n_positions */
    assert_int_equal(est.setup.n_gpus, 1024);
    assert_int_equal(est.setup.micro_batch, 4);
    assert_int_equal(est.setup.grad_accum, 1);
    assert_int_equal(est.setup.global_batch, 4096);
    assert_int_equal(est.setup.seq_len, 2048);
    assert_int_equal(est.setup.act_bytes, 2);

    /* DeepSpeed's ZeRO-3 estimator beside it: 4 L + int(18 P / G) */
    assert_true(est.has_ds_estimate);
    DsEstimate ds = ds_estimator_zero3(psi, est.params.largest_module, 8, 128, false, false, true,
                                       DS_ESTIMATOR_BUFFER_FACTOR);
    assert_int_equal(est.ds_estimate.gpu_bytes, ds.gpu_bytes);
    assert_int_equal(est.ds_estimate.cpu_bytes, ds.cpu_bytes);

    /* ZeRO-3 at 1024 ranks moves 3 Psi x (N-1)/N, less the resident vectors */
    assert_true(est.comm.total_in_psi < 3.0 && est.comm.total_in_psi > 2.99);
    fini(&in);
}

/* GPT-2 1.5B, zero2, 8 GPUs of 80 GiB, s = 1024: fits, with room to spare. */
static void test_estimate_build_gpt2_1_5b_zero2_fits_on_dgx(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "gpt2-1.5b", "zero2", "dgx-a100-80g", 8);
    EstimateOptions opts = {.seq_len = 1024, .recompute = RECOMPUTE_NONE, .is_flash_attention = true};
    Estimate est;
    build(&in, &opts, &est);
    const uint64_t psi = est.params.total, part = (psi + 7) / 8;
    assert_int_equal(est.mem.gpu_model_states, 2 * psi + 14 * part);
    assert_int_equal(est.gpu_peak,
                     est.mem.gpu_model_states + est.mem.gpu_buffers + est.gpu_activations);
    assert_int_equal(est.gpu_activations, est.act.peak);
    /* A100-SXM4-80GB: what CUDA can allocate, not the 80 GiB (dgx-a100-80g.json) */
    assert_int_equal(est.gpu_capacity, 85100068864ull);
    assert_true(est.fits_gpu);
    assert_true(est.fits);
    assert_true(est.has_ds_estimate);

    /* still fits without flash attention (the s x s scores kept: ~36 GB of activations) */
    opts.is_flash_attention = false;
    build(&in, &opts, &est);
    assert_true(est.act.attn_scores > 0);
    assert_true(est.fits_gpu);
    fini(&in);
}

/* The realistic GPU side of gpt2-1.5b ZeRO-2 on 8 A100s (dgx-a100-80g's runtime section):
 * step copies (2 + 4) x ceil(Psi/8); two cuBLAS workspaces of 8,519,680 B; the context
 * 266,076,160 B and one communicator's ring, 24 channels x 12 MiB (runtime_memory.h), outside
 * the allocator; the verdict keeps 5% of the 85,100,068,864 bytes CUDA can allocate free. FSDP steps in place: no copies. */
static void test_estimate_build_device_peak_and_headroom(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "gpt2-1.5b", "zero2", "dgx-a100-80g", 8);
    EstimateOptions opts = {.seq_len = 1024,
                            .recompute = RECOMPUTE_NONE,
                            .is_flash_attention = true,
                            .headroom_fraction = 0.05};
    Estimate est;
    build(&in, &opts, &est);
    const uint64_t psi = est.params.total, part = (psi + 7) / 8;
    assert_int_equal(est.mem.gpu_step_copies, 6 * part);
    assert_int_equal(est.runtime.cublas_workspace_bytes, 2 * 8519680ull);
    /* one communicator, 2 x 12 execution channels of dgx-a100-80g's nccl section, its ring */
    assert_int_equal(est.runtime.outside_bytes, 266076160ull + 24 * 12582912ull);
    const uint64_t working =
        est.gpu_activations > 6 * part ? est.gpu_activations : 6 * part;
    assert_int_equal(est.gpu_allocated_peak, est.mem.gpu_model_states + est.mem.gpu_buffers +
                                                 working + 2 * 8519680ull);
    assert_int_equal(est.gpu_device_peak, est.gpu_allocated_peak + est.runtime.outside_bytes);
    assert_int_equal(est.gpu_headroom, (uint64_t)(0.05 * 85100068864.0));
    assert_true(est.fits_gpu);
    /* a headroom that leaves less than the device peak turns the verdict */
    opts.headroom_fraction = 1.0 - (double)est.gpu_device_peak / (double)(80ull << 30) + 1e-3;
    build(&in, &opts, &est);
    assert_false(est.fits_gpu);
    opts.headroom_fraction = 0.0;
    opts.is_fsdp = true;
    build(&in, &opts, &est);
    assert_int_equal(est.mem.gpu_step_copies, 0);
    fini(&in);
}

/* FSDP (zero3 with is_fsdp): two unsharded units and one unit's gradient, 16-bit each; for
 * gpt2-1.5b the tied embedding (50257 x 1600) is the largest unit. */
static void test_estimate_build_fsdp_buffers_are_two_units_and_a_gradient(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "gpt2-1.5b", "zero3", "dgx-a100-80g", 8);
    EstimateOptions opts = {.seq_len = 1024, .is_flash_attention = true, .is_fsdp = true};
    Estimate est;
    build(&in, &opts, &est);
    uint64_t unit = est.params.per_layer;
    if (est.params.embedding > unit)
        unit = est.params.embedding;
    if (est.params.lm_head > unit)
        unit = est.params.lm_head;
    assert_int_equal(unit, 50257ull * 1600);
    assert_int_equal(est.mem.gpu_buffers, 2 * unit * 2 + unit * 2);
    assert_int_equal(est.mem.gpu_step_copies, 0);
    fini(&in);
}

/* GPT-3 175B under DDP (zero0) on 8 GPUs: 16 Psi = 2.8 TB per GPU cannot fit. */
static void test_estimate_build_gpt3_zero0_does_not_fit(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "gpt3-175b", "zero0", "dgx-a100-80g", 8);
    EstimateOptions opts = {.seq_len = 0, .recompute = RECOMPUTE_FULL, .is_flash_attention = true};
    Estimate est;
    build(&in, &opts, &est);
    assert_int_equal(est.mem.gpu_model_states, 16 * est.params.total);
    assert_true(est.paper_model_states_bytes == 16.0 * (double)est.params.total);
    assert_false(est.has_ds_estimate);
    assert_true(est.gpu_peak > est.gpu_capacity);
    assert_false(est.fits_gpu);
    assert_false(est.fits);
    fini(&in);
}

/* The composed record agrees with its parts: Megatron FLOPs with full recompute and the
 * compute-bound step time is one GPU's kernels (kernels_step_s) over its micro-batches. */
static void test_estimate_build_composes_flops_and_time(void **state)
{
    (void)state;
    Inputs in;
    load(&in, "gpt3-175b", "zero3", "dgx-a100-80g", 1024);
    EstimateOptions opts = {.seq_len = 2048, .recompute = RECOMPUTE_FULL, .is_flash_attention = false};
    Estimate est;
    build(&in, &opts, &est);
    const double megatron = flops_megatron_formula(4096, 2048, 96, 12288, 50257, true);
    assert_true(est.flops.megatron == megatron);
    assert_true(est.flops.hardware > 0.999999999 * megatron &&
                est.flops.hardware < 1.000000001 * megatron);
    /* every layer recomputed: per micro-batch 96 x (2 forwards + backward) and the ends */
    KernelGpu gpu;
    kernels_gpu(&in.platform, in.train.precision, &gpu);
    LayerKernels k;
    kernels_layer(&in.model, &est.setup, &gpu, &k);
    const double micro = 96.0 * (2.0 * kernels_pass_s(&gpu, &k.fwd) + kernels_pass_s(&gpu, &k.bwd)) +
                         kernels_pass_s(&gpu, &k.head_fwd) + kernels_pass_s(&gpu, &k.head_bwd);
    assert_true(fabs(est.compute_bound_step_s - (double)est.setup.grad_accum * micro) <=
                1e-12 * est.compute_bound_step_s);
    /* and no faster than one GPU's share of the hardware FLOPs at the matmul ceiling */
    assert_true(est.compute_bound_step_s > est.flops.hardware / 1024.0 / gpu.matmul_flops_per_s);
    fini(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_build_gpt3_zero3_1024_gpus_is_16psi_over_n),
        cmocka_unit_test(test_estimate_build_flash3_needs_its_rates),
        cmocka_unit_test(test_estimate_build_flash_triton_at_its_rates),
        cmocka_unit_test(test_estimate_build_liger_needs_an_rmsnorm_family),
        cmocka_unit_test(test_estimate_build_model_load_without_zero_init),
        cmocka_unit_test(test_estimate_build_gpt2_1_5b_zero2_fits_on_dgx),
        cmocka_unit_test(test_estimate_build_gpt3_zero0_does_not_fit),
        cmocka_unit_test(test_estimate_build_device_peak_and_headroom),
        cmocka_unit_test(test_estimate_build_fsdp_buffers_are_two_units_and_a_gradient),
        cmocka_unit_test(test_estimate_build_composes_flops_and_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
