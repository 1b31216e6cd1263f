/*
 * test_calibration_layer.c - zerosim-calibrate --layer without a GPU: one layer's kernel plan
 * at a model's shapes, zerosim's prediction for it, and the comparison table
 * (calibrate/layer.c). The GPU run itself (gpu_layer.cu) needs a device and is not tested
 * here.
 *
 * Hand-computed values for Llama-3-8B (h 4096, 32 heads of 128, 8 KV heads, SwiGLU f 14336)
 * at 1 x 4096 tokens: the linears' forward FLOPs are 2 x 218,103,808 weights x 4096 tokens,
 * the attention core's 4 s (a d) x T = 4 x 4096^3; the plan must also agree with flops.c and
 * the totals with cost.c, which the simulator uses.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "calibrate/layer.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/flops.h"
#include "model/params.h"
#include "schedule/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir(void)
{
    const char *d = getenv("ZEROSIM_DATA_DIR");
    return d != NULL ? d : ZEROSIM_SOURCE_DIR;
}

static const LayerKernel *find(const LayerPlan *p, const char *name)
{
    for (size_t i = 0; i < p->n_kernels; i++)
        if (strcmp(p->kernels[i].name, name) == 0)
            return &p->kernels[i];
    fail_msg("no kernel %s", name);
    return NULL;
}

static void load(const char *model, ModelConfig *cfg)
{
    Err err = {0};
    memset(cfg, 0, sizeof *cfg);
    if (model_config_load(cfg, model, data_dir(), &err))
        fail_msg("%s", err.msg);
}

static void test_llama3_8b_plan(void **state)
{
    (void)state;
    ModelConfig cfg;
    load("llama-3-8b", &cfg);
    LayerPlan p;
    Err err = {0};
    assert_int_equal(layer_plan(&cfg, 1, 4096, &p, &err), 0);
    /* 7 linears x 3 GEMMs, 6 attention products, 6 memory-bound kernels x 2 passes. */
    assert_int_equal(p.n_kernels, 21 + 6 + 12);
    assert_true(p.gemm_flops_fwd == 2.0 * 218103808.0 * 4096.0);
    assert_true(p.attn_flops_fwd == 4.0 * 4096.0 * 4096.0 * 4096.0);
    const LayerKernel *q = find(&p, "q_proj fwd");
    assert_true(q->m == 4096 && q->n == 4096 && q->k == 4096 && q->gemm_op == 'f');
    const LayerKernel *kd = find(&p, "k_proj dgrad");
    assert_true(kd->m == 4096 && kd->n == 4096 && kd->k == 1024 && kd->gemm_op == 'd');
    const LayerKernel *gw = find(&p, "gate_proj wgrad");
    assert_true(gw->m == 14336 && gw->n == 4096 && gw->k == 4096 && gw->gemm_op == 'w');
    const LayerKernel *qk = find(&p, "attn QK^T fwd");
    assert_true(qk->batch == 32 && qk->m == 4096 && qk->n == 4096 && qk->k == 128);
    assert_true(qk->flops == 2.0 * 32 * 4096.0 * 4096 * 128);
    const LayerKernel *n = find(&p, "input_norm fwd");
    assert_true(n->read_bytes == 4096.0 * 4096 * 2 && n->write_bytes == 4096.0 * 4096 * 2);
    const LayerKernel *sw = find(&p, "swiglu bwd");
    assert_true(sw->read_bytes == 2 * 2 * 4096.0 * 14336 * 2);
    const LayerKernel *sm = find(&p, "softmax fwd");
    assert_true(sm->read_bytes == 32.0 * 4096 * 4096 * 2);
    /* Backward: twice the forward work. */
    double fwd = 0, bwd = 0;
    for (size_t i = 0; i < p.n_kernels; i++)
        *(p.kernels[i].is_backward ? &bwd : &fwd) += p.kernels[i].flops;
    assert_true(fwd == p.gemm_flops_fwd + p.attn_flops_fwd);
    assert_true(bwd == 2 * fwd);
    /* The same FLOPs as the simulator's accounting. */
    ModelParams params;
    params_count(&cfg, &params);
    RunSetup setup = {
        .seq_len = 4096, .micro_batch = 1, .global_batch = 1, .n_gpus = 1, .act_bytes = 2};
    StepFlops f;
    flops_step(&cfg, &params, &setup, &f);
    assert_true(fabs(f.layer_fwd_per_token * 4096.0 - fwd) <= 1e-9 * fwd);
    assert_true(fabs(f.attn_core_per_token * 4096.0 - p.attn_flops_fwd) <= 1e-9 * fwd);
    model_config_fini(&cfg);
}

static void test_gpt2_plan_is_ungated(void **state)
{
    (void)state;
    ModelConfig cfg;
    load("gpt2-1.5b", &cfg);
    LayerPlan p;
    Err err = {0};
    assert_int_equal(layer_plan(&cfg, 2, 1024, &p, &err), 0);
    size_t linears = cfg.is_qkv_fused ? 4 : 6;
    assert_int_equal(p.n_kernels, 3 * linears + 6 + 12);
    const LayerKernel *g = find(&p, "gelu fwd");
    assert_true(g->read_bytes == 2048.0 * (double)cfg.ffn_hidden * 2);
    for (size_t i = 0; i < p.n_kernels; i++)
        assert_null(strstr(p.kernels[i].name, "swiglu"));
    assert_int_equal(p.tokens, 2048);
    model_config_fini(&cfg);
}

static void test_prediction_is_the_simulators(void **state)
{
    (void)state;
    ModelConfig cfg;
    load("llama-3-8b", &cfg);
    Platform pl;
    Err err = {0};
    if (platform_load(&pl, "h200-single", data_dir(), &err))
        fail_msg("%s", err.msg);
    LayerPlan p;
    assert_int_equal(layer_plan(&cfg, 1, 4096, &p, &err), 0);
    LayerPrediction pred;
    layer_predict(&cfg, &p, &pl, &pred);
    ModelParams params;
    params_count(&cfg, &params);
    RunSetup setup = {.seq_len = 4096,
                      .micro_batch = 1,
                      .grad_accum = 1,
                      .global_batch = 1,
                      .n_gpus = 1,
                      .recompute = RECOMPUTE_NONE,
                      .act_bytes = 2};
    TrainConfig train;
    memset(&train, 0, sizeof train);
    train.precision = PRECISION_BF16;
    StepCost c;
    cost_step(&cfg, &params, &setup, &train, &pl, &c);
    assert_true(pred.fwd_s == c.layer_fwd / c.gpu_flops_per_s);
    assert_true(pred.bwd_s == c.layer_bwd / c.gpu_flops_per_s);
    assert_true(pred.bwd_s > pred.fwd_s);
    /* Per kernel: GEMMs at peak x gemm_efficiency, attention at peak x attention_efficiency,
     * memory-bound kernels at HBM bandwidth. */
    double peak = platform_peak_flops_per_s(&pl, PRECISION_BF16);
    for (size_t i = 0; i < p.n_kernels; i++) {
        const LayerKernel *k = &p.kernels[i];
        double want = k->kind == LAYER_GEMM ? k->flops / (peak * pl.gpu.gemm_efficiency)
                      : k->kind == LAYER_ATTENTION
                          ? k->flops / (peak * pl.gpu.attention_efficiency)
                          : (k->read_bytes + k->write_bytes) / pl.gpu.hbm_bw_bytes_per_s;
        assert_true(pred.kernel_s[i] == want);
        assert_true(want > 0);
    }
    model_config_fini(&cfg);
}

static void test_print_with_and_without_measurement(void **state)
{
    (void)state;
    ModelConfig cfg;
    load("llama-3-8b", &cfg);
    LayerPlan p;
    Err err = {0};
    assert_int_equal(layer_plan(&cfg, 1, 2048, &p, &err), 0);
    LayerPrediction pred;
    memset(&pred, 0, sizeof pred);
    pred.fwd_s = 2e-3;
    pred.bwd_s = 4e-3;
    for (size_t i = 0; i < p.n_kernels; i++)
        pred.kernel_s[i] = 100e-6;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    layer_print(&p, &pred, NULL, 0, 0, "h200-single", f);
    fclose(f);
    assert_non_null(strstr(buf, "one layer of llama-3-8b: 1 x 2048 tokens, bf16; zerosim on "
                                "h200-single\n"));
    assert_non_null(strstr(buf, "layer forward:  measured -, zerosim (cost.c layer_fwd) 2.000 ms"));
    free(buf);

    double measured[LAYER_MAX_KERNELS];
    for (size_t i = 0; i < p.n_kernels; i++)
        measured[i] = 125e-6; /* zerosim 100 us: -20% */
    f = open_memstream(&buf, &size);
    layer_print(&p, &pred, measured, 2.5e-3, 5e-3, "h200-single", f);
    fclose(f);
    assert_non_null(strstr(buf, "125.0        100.0    -20.0%\n"));
    assert_non_null(strstr(buf, "layer forward:  measured 2.500 ms, zerosim (cost.c layer_fwd) "
                                "2.000 ms    -20.0%\n"));
    assert_non_null(strstr(buf, "layer backward: measured 5.000 ms, zerosim (cost.c layer_bwd) "
                                "4.000 ms    -20.0%\n"));
    free(buf);
    model_config_fini(&cfg);
}

static void test_too_large_for_one_gpu(void **state)
{
    (void)state;
    ModelConfig cfg;
    load("llama-3-8b", &cfg);
    LayerPlan p;
    Err err = {0};
    assert_int_equal(layer_plan(&cfg, 64, 32768, &p, &err), -1);
    assert_string_equal(err.msg, "--layer llama-3-8b: expected operands of at most 2^31 elements "
                                 "for one GPU, got 2199023255552 (lower --micro-batch or --seq)");
    model_config_fini(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama3_8b_plan),
        cmocka_unit_test(test_gpt2_plan_is_ungated),
        cmocka_unit_test(test_prediction_is_the_simulators),
        cmocka_unit_test(test_print_with_and_without_measurement),
        cmocka_unit_test(test_too_large_for_one_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
