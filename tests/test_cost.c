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
    RunSetup s = {.seq_len = 4096,
                  .micro_batch = 1,
                  .grad_accum = 1,
                  .recompute = RECOMPUTE_NONE,
                  .checkpoint_every = 1,
                  .is_flash_attention = true,
                  .act_bytes = 2};
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
    RunSetup s = {.seq_len = 4096,
                  .micro_batch = 1,
                  .grad_accum = 1,
                  .recompute = RECOMPUTE_FULL,
                  .checkpoint_every = 1,
                  .is_flash_attention = true,
                  .act_bytes = 2};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_step_converts_kernel_times),
        cmocka_unit_test(test_cost_step_recompute_and_fp16),
        cmocka_unit_test(test_cost_recompute_ops_in_schedule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
