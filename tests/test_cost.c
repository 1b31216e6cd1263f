/*
 * test_cost.c - schedule/cost.c: the kernel model's pass times in engine units, which pass
 * each recomputation mode re-runs, and the end-of-step passes per parameter, by hand on the
 * shipped A100 platform.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "schedule/cost.h"
#include "schedule/fsdp.h"
#include "schedule/zero_schedule.h"

#include <string.h>

static void assert_rel(double got, double want)
{
    if (fabs(got - want) > 1e-12 * fabs(want))
        fprintf(stderr, "got %.17g, want %.17g\n", got, want);
    assert_true(fabs(got - want) <= 1e-12 * fabs(want));
}

static void load(ModelConfig *m, Platform *p)
{
    Err err = {0};
    assert_int_equal(model_config_load(m, "llama-2-7b", ZEROSIM_SOURCE_DIR, &err), 0);
    assert_int_equal(platform_load(p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
}

/* One sequence of 4096 tokens of 16-bit activations with FlashAttention, no accumulation. */
static RunSetup setup_4096(Recompute recompute)
{
    return (RunSetup){.seq_len = 4096,
                      .micro_batch = 1,
                      .grad_accum = 1,
                      .recompute = recompute,
                      .checkpoint_every = 1,
                      .is_flash_attention = true,
                      .act_bytes = 2};
}

/* Engine units are seconds times the engine's GPU speed (peak x gemm_efficiency). */
static void test_cost_step_converts_kernel_times(void **state)
{
    (void)state;
    ModelConfig m;
    Platform p;
    load(&m, &p);
    ModelParams params;
    params_count(&m, &params);
    TrainConfig t = {.precision = PRECISION_BF16};
    RunSetup s = setup_4096(RECOMPUTE_NONE);
    StepCost c;
    cost_step(&m, &params, &s, &t, &p, &c);
    const double rate = 312e12 * 0.8;
    assert_rel(c.gpu_flops_per_s, rate);
    KernelGpu g;
    kernels_gpu(&p, PRECISION_BF16, &g);
    assert_rel(c.layer_fwd, kernels_pass_s(&g, &c.kernels.fwd) * rate);
    assert_rel(c.layer_bwd, kernels_pass_s(&g, &c.kernels.bwd) * rate);
    assert_rel(c.head_fwd, kernels_pass_s(&g, &c.kernels.head_fwd) * rate);
    assert_true(c.layer_recompute == 0.0);
    /* bf16: one gradient-norm pass (2 bytes) and Adam's 28 bytes per parameter at
     * 2.039 TB/s x 0.87 */
    assert_rel(c.optimizer_per_param, 30.0 / (2.039e12 * 0.87) * rate);
    model_config_fini(&m);
}

/* Full recomputation re-runs the forward, selective the attention core; fp16 adds the
 * overflow check's pass over the gradients. */
static void test_cost_step_recompute_and_fp16(void **state)
{
    (void)state;
    ModelConfig m;
    Platform p;
    load(&m, &p);
    ModelParams params;
    params_count(&m, &params);
    TrainConfig t = {.precision = PRECISION_FP16};
    RunSetup s = setup_4096(RECOMPUTE_FULL);
    StepCost full, sel;
    cost_step(&m, &params, &s, &t, &p, &full);
    assert_rel(full.layer_recompute, full.layer_fwd);
    s.recompute = RECOMPUTE_SELECTIVE;
    cost_step(&m, &params, &s, &t, &p, &sel);
    KernelGpu g;
    kernels_gpu(&p, PRECISION_FP16, &g);
    assert_rel(sel.layer_recompute,
               kernels_pass_s(&g, &sel.kernels.attn_core) * sel.gpu_flops_per_s);
    assert_true(sel.layer_recompute < sel.layer_fwd);
    assert_rel(full.optimizer_per_param, 32.0 / (2.039e12 * 0.87) * full.gpu_flops_per_s);
    model_config_fini(&m);
}

/* In the step's graph every checkpointed layer's backward is preceded by a recompute op
 * (PURPOSE_RECOMPUTE) of the cost's layer_recompute; every other layer has none. */
static void test_cost_recompute_ops_in_schedule(void **state)
{
    (void)state;
    ModelConfig m;
    Platform p;
    load(&m, &p);
    Err err = {0};
    TrainConfig t;
    const char *cfg = "{\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 2, "
                      "\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 2}}";
    assert_int_equal(ds_config_parse(&t, "ds.json", cfg, strlen(cfg), &err), 0);
    assert_int_equal(platform_resize(&p, 2, 0, &err), 0);
    RunSetup s = {.seq_len = 1024,
                  .micro_batch = 1,
                  .grad_accum = 2,
                  .global_batch = 4,
                  .n_gpus = 2,
                  .recompute = RECOMPUTE_FULL,
                  .checkpoint_every = 2,
                  .is_flash_attention = true,
                  .act_bytes = 2};
    ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1};
    Graph *g = zero_schedule_build(&m, &t, &p, &s, &opts, &err);
    assert_non_null(g);
    ModelParams params;
    params_count(&m, &params);
    StepCost c;
    cost_step(&m, &params, &s, &t, &p, &c);
    const Op *ops = graph_ops(g);
    uint32_t n = 0;
    for (uint32_t i = 0; i < graph_n_ops(g); i++) {
        if (ops[i].rank != 0 || ops[i].kind != OP_COMPUTE || ops[i].purpose != PURPOSE_RECOMPUTE)
            continue;
        n++;
        assert_rel(ops[i].amount, c.layer_recompute);
    }
    /* every other one of 32 layers, in each of 2 micro-batches */
    assert_int_equal(n, 16 * 2);
    graph_destroy(g);
    ds_config_fini(&t);
    model_config_fini(&m);
}

/* DeepSpeed ZeRO-3's coordinator on Llama-2-7B (docs/MODEL.md, "Framework hooks"): a layer's
 * q, k, v, o, gate, up and down weights (16.8M and 45.1M elements, no biases) are fetched,
 * its two RMSNorm vectors of 4,096 stay resident under the 1e5 persistence threshold: 7
 * tensors walked per pass, 9 gradient hooks in backward. The ends: the 32,000 x 4,096
 * embedding and the untied head fetched (the final norm resident), 3 gradient hooks. */
static void test_cost_host_zero3_counts_llama(void **state)
{
    (void)state;
    ModelConfig m;
    Platform p;
    load(&m, &p);
    ModelParams params;
    params_count(&m, &params);
    CostHost h;
    cost_host_zero3(&params, 100000, 1, false, 2e-5, &h);
    assert_true(h.layer_tensors == 7.0 && h.layer_grads == 9.0);
    assert_true(h.head_tensors == 2.0 && h.head_grads == 3.0);
    assert_true(!h.is_serial && h.has_recompute && h.has_backward);
    cost_host_zero3(&params, 100000, 1, true, 2e-5, &h);
    assert_true(h.is_serial);
    /* FSDP1's unit walks every tensor of the layer: 9; the root unit's ends 3 */
    cost_host_fsdp1(&params, false, 2e-5, &h);
    assert_true(h.layer_tensors == 9.0 && h.head_tensors == 3.0 && h.layer_grads == 0.0);
    assert_true(!h.has_backward && !h.has_recompute);
    model_config_fini(&m);
}

/* A MoE layer walks its router and every local expert's modules: Qwen3-30B-A3B's 128 experts
 * of 3 projections (gate, up, down, no biases) and its router (2,048 x 128 = 262,144 > 1e5)
 * beside the attention's q, k, v, o (its q/k norms of 128 and layer norms of 2,048 resident):
 * 4 + 1 + 384 = 389 fetched; with --ep-size 4, 32 local experts: 4 + 1 + 96 = 101. The
 * gradient hooks: the 4 norms too, 393 and 105. */
static void test_cost_host_zero3_counts_moe(void **state)
{
    (void)state;
    ModelConfig m;
    Err err = {0};
    assert_int_equal(model_config_load(&m, "qwen3-30b-a3b", ZEROSIM_SOURCE_DIR, &err), 0);
    ModelParams params;
    params_count(&m, &params);
    CostHost h;
    cost_host_zero3(&params, 100000, 1, false, 2e-5, &h);
    assert_true(h.layer_tensors == 4.0);
    assert_true(h.moe_layer_tensors == 389.0);
    assert_true(h.moe_layer_grads == 393.0);
    cost_host_zero3(&params, 100000, 4, false, 2e-5, &h);
    assert_true(h.moe_layer_tensors == 101.0 && h.moe_layer_grads == 105.0);
    model_config_fini(&m);
}

/* With 10 ms per parameter (far above the shipped 20 us, so that the host binds), a Llama-2-7B
 * layer's forward takes its launches plus 7 x 10 ms, its backward its launches and the 9
 * gradient copies plus 7 x 10 ms, full recomputation the forward again; behind DeepSpeed
 * 0.3's synchronisation, GPU time plus 70 ms. At the shipped 20 us (0.14 ms a pass) the
 * GPU's kernels hide it: the pass is the kernels' time. */
static void test_cost_pass_with_hooks(void **state)
{
    (void)state;
    ModelConfig m;
    Platform p;
    load(&m, &p);
    ModelParams params;
    params_count(&m, &params);
    TrainConfig t = {.precision = PRECISION_BF16};
    RunSetup s = setup_4096(RECOMPUTE_FULL);
    CostHost h;
    cost_host_zero3(&params, 100000, 1, false, 1e-2, &h);
    StepCost c;
    cost_step_hosted(&m, &params, &s, &t, &p, &h, &c);
    const double rate = c.gpu_flops_per_s, launch = c.gpu.launch_s;
    const KernelPass *f = &c.kernels.fwd, *b = &c.kernels.bwd;
    assert_rel(c.layer_fwd, (f->n_kernels * launch + 7 * 1e-2) * rate);
    assert_rel(c.layer_bwd, ((b->n_kernels + 9) * launch + 7 * 1e-2) * rate);
    assert_rel(c.layer_recompute, c.layer_fwd);
    assert_rel(c.head_fwd, (c.kernels.head_fwd.n_kernels * launch + 2 * 1e-2) * rate);
    cost_host_zero3(&params, 100000, 1, true, 1e-2, &h);
    cost_step_hosted(&m, &params, &s, &t, &p, &h, &c);
    assert_rel(c.layer_fwd, (kernels_pass_s(&c.gpu, f) + 7 * 1e-2) * rate);
    cost_host_zero3(&params, 100000, 1, false, 2e-5, &h);
    cost_step_hosted(&m, &params, &s, &t, &p, &h, &c);
    assert_rel(c.layer_fwd, kernels_pass_s(&c.gpu, f) * rate);
    model_config_fini(&m);
}

/* The schedule charges them: a ZeRO-3 step's forward ops carry the hooked pass, DeepSpeed's
 * and FSDP1's alike; FSDP2 and ZeRO-2 have none. */
static void test_cost_hooks_in_schedule(void **state)
{
    (void)state;
    ModelConfig m;
    Platform p;
    load(&m, &p);
    p.cpu.param_host_s = 1e-2;
    Err err = {0};
    ModelParams params;
    params_count(&m, &params);
    RunSetup s = {.seq_len = 1024,
                  .micro_batch = 1,
                  .grad_accum = 1,
                  .global_batch = 2,
                  .n_gpus = 2,
                  .recompute = RECOMPUTE_NONE,
                  .checkpoint_every = 1,
                  .is_flash_attention = true,
                  .act_bytes = 2};
    assert_int_equal(platform_resize(&p, 2, 0, &err), 0);
    const struct {
        int stage;
        FsdpStrategy fsdp;
        bool is_fsdp2;
        double tensors; /* walked by a layer's forward */
    } runs[] = {{3, FSDP_NONE, false, 7.0},
                {3, FSDP_FULL_SHARD, false, 9.0},
                {3, FSDP_FULL_SHARD, true, 0.0},
                {2, FSDP_NONE, false, 0.0}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char cfg[256];
        snprintf(cfg, sizeof cfg,
                 "{\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 1, "
                 "\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": %d}}",
                 runs[i].stage);
        TrainConfig t;
        assert_int_equal(ds_config_parse(&t, "ds.json", cfg, strlen(cfg), &err), 0);
        ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1};
        if (runs[i].fsdp != FSDP_NONE) {
            assert_int_equal(fsdp_apply(runs[i].fsdp, true, 8, &t, &opts, &err), 0);
            opts.is_fsdp2 = runs[i].is_fsdp2;
        }
        Graph *g = zero_schedule_build(&m, &t, &p, &s, &opts, &err);
        assert_non_null(g);
        StepCost c;
        cost_step(&m, &params, &s, &t, &p, &c);
        if (runs[i].is_fsdp2) /* its copy-out of each unit, no hooks */
            fsdp2_cost_copy_out(&params, 2, true, &c);
        const KernelPass *f = &c.kernels.fwd;
        const double want =
            runs[i].tensors > 0
                ? (f->n_kernels * c.gpu.launch_s + runs[i].tensors * 1e-2) * c.gpu_flops_per_s
                : c.layer_fwd;
        const Op *ops = graph_ops(g);
        uint32_t i_fwd = 0;
        while (!(ops[i_fwd].rank == 0 && ops[i_fwd].kind == OP_COMPUTE &&
                 ops[i_fwd].purpose == PURPOSE_FORWARD))
            i_fwd++;
        assert_rel(ops[i_fwd].amount, want);
        graph_destroy(g);
        ds_config_fini(&t);
    }
    model_config_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_step_converts_kernel_times),
        cmocka_unit_test(test_cost_step_recompute_and_fp16),
        cmocka_unit_test(test_cost_recompute_ops_in_schedule),
        cmocka_unit_test(test_cost_host_zero3_counts_llama),
        cmocka_unit_test(test_cost_host_zero3_counts_moe),
        cmocka_unit_test(test_cost_pass_with_hooks),
        cmocka_unit_test(test_cost_hooks_in_schedule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
