/*
 * test_comm_volume.c - per-rank communication volume against the ZeRO paper's section 7.
 *
 * With ring collectives a rank sends (N-1)/N of an all-gather or reduce-scatter and twice that
 * of an all-reduce. Per step, in units of Psi 16-bit elements: DDP 2 (all-reduce of gradients),
 * ZeRO-1 and ZeRO-2 2 (reduce-scatter + all-gather), ZeRO-3 3 (two all-gathers + one
 * reduce-scatter) - the "comm-volume" case of tests/validation/cases.json, reached as N grows;
 * here the (N-1)/N factor is accounted exactly. Psi is chosen divisible by N so that every byte
 * count is an exact integer. One GPU moves nothing; stage 2 and 3 communicate in every
 * micro-batch, stage 0 and 1 once per step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/comm_volume.h"
#include "model/params.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CASES_JSON ZEROSIM_SOURCE_DIR "/tests/validation/cases.json"

/* 1024 x 7324219: about 7.5e9 and divisible by every N used here. */
static const uint64_t PSI = 7500000256ull;

static TrainConfig train(int stage, Precision precision)
{
    TrainConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.precision = precision;
    strcpy(cfg.optimizer, "adam");
    cfg.optimizer_n_states = 2;
    cfg.zero.stage = stage;
    cfg.zero.overlap_comm = true;
    cfg.zero.reduce_bucket_size = 500000000;
    cfg.zero.prefetch_bucket_size = 50000000;
    cfg.zero.max_live_parameters = 1000000000;
    cfg.zero.param_persistence_threshold = 0;
    cfg.zero.sub_group_size = 1000000000;
    cfg.zero.offload_optimizer.ratio = 1.0;
    cfg.zero.offload_param.ratio = 1.0;
    return cfg;
}

static CommVolume volume(int stage, Precision precision, uint64_t psi, uint64_t n,
                         uint64_t grad_accum)
{
    TrainConfig cfg = train(stage, precision);
    ModelParams p;
    memset(&p, 0, sizeof p);
    p.total = psi;
    ZeroMemory m;
    zero_memory(&cfg, &p, 1, n, &m);
    CommVolume v;
    comm_volume(&cfg, &p, &m, n, grad_accum, &v);
    return v;
}

static double expected_in_psi(int stage)
{
    FILE *f = fopen(CASES_JSON, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    static const char *const names[] = {"ddp", "zero1", "zero2", "zero3"};
    double want = -1;
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(root, "analytic"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
        if (cJSON_IsString(id) && strcmp(id->valuestring, "comm-volume") == 0) {
            const cJSON *exp = cJSON_GetObjectItemCaseSensitive(item, "expected");
            want = cJSON_GetObjectItemCaseSensitive(exp, names[stage])->valuedouble;
        }
    }
    cJSON_Delete(root);
    assert_true(want > 0);
    return want;
}

/* 2, 2, 2, 3 Psi at N = 1024, times exactly (N-1)/N, and within 0.5% of the large-N limit. */
static void test_comm_volume_in_psi_matches_zero_paper(void **state)
{
    (void)state;
    const uint64_t n = 1024;
    for (int stage = 0; stage <= 3; stage++) {
        CommVolume v = volume(stage, PRECISION_BF16, PSI, n, 1);
        double want = expected_in_psi(stage);
        assert_true(fabs(v.total_in_psi - want * (double)(n - 1) / (double)n) < 1e-12 * want);
        assert_true(fabs(v.total_in_psi - want) / want < 0.005);
        /* bytes: want x 2 Psi x (N-1)/N exactly */
        assert_int_equal(v.total, (uint64_t)want * 2 * (PSI / n) * (n - 1));
        assert_int_equal(v.total, v.all_reduce + v.all_gather + v.reduce_scatter);
    }
}

/* Which collective carries the bytes: DDP all-reduces; ZeRO-1/2 reduce-scatter gradients and
 * all-gather parameters once each; ZeRO-3 gathers twice (forward and backward). */
static void test_comm_volume_splits_by_collective(void **state)
{
    (void)state;
    const uint64_t n = 64, share = 2 * (PSI / n) * (n - 1); /* (N-1)/N of 2 Psi bytes */
    CommVolume v = volume(0, PRECISION_BF16, PSI, n, 1);
    assert_int_equal(v.all_reduce, 2 * share);
    assert_int_equal(v.all_gather + v.reduce_scatter, 0);
    for (int stage = 1; stage <= 2; stage++) {
        v = volume(stage, PRECISION_BF16, PSI, n, 1);
        assert_int_equal(v.all_reduce, 0);
        assert_int_equal(v.reduce_scatter, share);
        assert_int_equal(v.all_gather, share);
    }
    v = volume(3, PRECISION_BF16, PSI, n, 1);
    assert_int_equal(v.all_reduce, 0);
    assert_int_equal(v.reduce_scatter, share);
    assert_int_equal(v.all_gather, 2 * share);
}

/* One GPU has no peers: nothing is sent at any stage. */
static void test_comm_volume_single_gpu_moves_nothing(void **state)
{
    (void)state;
    for (int stage = 0; stage <= 3; stage++) {
        CommVolume v = volume(stage, PRECISION_BF16, PSI, 1, 4);
        assert_int_equal(v.total, 0);
        assert_true(v.total_in_psi == 0.0);
    }
}

/* Gradient accumulation: stage 0/1 reduce once at the boundary; stage 2 reduce-scatters every
 * micro-batch but gathers updated parameters once; stage 3 does everything per micro-batch. */
static void test_comm_volume_grad_accum_scales_stage2_and_3(void **state)
{
    (void)state;
    const uint64_t n = 16, ga = 8;
    for (int stage = 0; stage <= 1; stage++) {
        CommVolume one = volume(stage, PRECISION_BF16, PSI, n, 1);
        CommVolume many = volume(stage, PRECISION_BF16, PSI, n, ga);
        assert_int_equal(many.total, one.total);
    }
    CommVolume one = volume(2, PRECISION_BF16, PSI, n, 1);
    CommVolume many = volume(2, PRECISION_BF16, PSI, n, ga);
    assert_int_equal(many.reduce_scatter, ga * one.reduce_scatter);
    assert_int_equal(many.all_gather, one.all_gather);
    one = volume(3, PRECISION_BF16, PSI, n, 1);
    many = volume(3, PRECISION_BF16, PSI, n, ga);
    assert_int_equal(many.reduce_scatter, ga * one.reduce_scatter);
    assert_int_equal(many.all_gather, ga * one.all_gather);
    assert_int_equal(many.total, ga * one.total);
}

/* fp32 training moves 4-byte elements: twice the bytes, the same multiples of Psi. */
static void test_comm_volume_fp32_doubles_bytes(void **state)
{
    (void)state;
    const uint64_t n = 1024;
    for (int stage = 0; stage <= 3; stage++) {
        CommVolume half = volume(stage, PRECISION_FP16, PSI, n, 1);
        CommVolume full = volume(stage, PRECISION_FP32, PSI, n, 1);
        assert_int_equal(full.total, 2 * half.total);
        assert_true(fabs(full.total_in_psi - half.total_in_psi) < 1e-12);
    }
}

/* communication_data_type fp32 in bf16 training: the gradient reductions move 4-byte elements
 * (ZeRO-2: Psi reduce-scattered at 4 B, Psi all-gathered at 2 B), the weights' gathers stay at
 * 2 B; the bucket being reduced holds the bf16 bucket and its fp32 copy, beside the two bf16
 * ipg buffers (overlap_comm): 5e8 x (2 + 4) + 2 x 5e8 x 2. */
static void test_comm_volume_fp32_communication_type(void **state)
{
    (void)state;
    const uint64_t n = 8;
    TrainConfig cfg = train(2, PRECISION_BF16);
    cfg.comm_grad_bytes = 4;
    ModelParams p;
    memset(&p, 0, sizeof p);
    p.total = PSI;
    ZeroMemory m;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.grad_bytes, 2);
    assert_int_equal(m.grad_comm_bytes, 4);
    assert_int_equal(m.gpu_buffers, 500000000ull * (2 + 4) + 2 * 500000000ull * 2);
    CommVolume v;
    comm_volume(&cfg, &p, &m, n, 1, &v);
    CommVolume plain = volume(2, PRECISION_BF16, PSI, n, 1);
    assert_int_equal(v.reduce_scatter, 2 * plain.reduce_scatter);
    assert_int_equal(v.all_gather, plain.all_gather);
}

/* ZeRO-3 does not gather persistent parameters per layer: GPT-2 XL at threshold 1e5 keeps its
 * norms and biases (48 x 13 h + 2 h elements) resident, so only Psi minus those is gathered,
 * twice; the persistent ones are all-gathered once after the step (DeepSpeed's _post_step). */
static void test_comm_volume_zero3_skips_persistent_params(void **state)
{
    (void)state;
    ModelConfig mc;
    Err err = {0};
    assert_int_equal(model_config_load(&mc, "gpt2-1.5b", ZEROSIM_SOURCE_DIR, &err), 0);
    ModelParams p;
    params_count(&mc, &p);
    const uint64_t h = 1600, n = 8;
    TrainConfig cfg = train(3, PRECISION_BF16);
    cfg.zero.param_persistence_threshold = 100000;
    ZeroMemory m;
    zero_memory(&cfg, &p, mc.n_layers, n, &m);
    assert_int_equal(m.persistent_elems, 48 * 13 * h + 2 * h);
    CommVolume v;
    comm_volume(&cfg, &p, &m, n, 1, &v);
    const double persistent = (double)(48 * 13 * h + 2 * h) * 2.0;
    const double gathered = (double)p.total * 2.0 - persistent;
    assert_true(fabs((double)v.all_gather - (2.0 * gathered + persistent) * 7.0 / 8.0) <= 3.0);
    assert_true(fabs((double)v.reduce_scatter - (double)p.total * 2.0 * 7.0 / 8.0) <= 1.0);
    assert_true(v.total_in_psi < 3.0 * 7.0 / 8.0);
    model_config_fini(&mc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_volume_in_psi_matches_zero_paper),
        cmocka_unit_test(test_comm_volume_splits_by_collective),
        cmocka_unit_test(test_comm_volume_single_gpu_moves_nothing),
        cmocka_unit_test(test_comm_volume_grad_accum_scales_stage2_and_3),
        cmocka_unit_test(test_comm_volume_fp32_doubles_bytes),
        cmocka_unit_test(test_comm_volume_fp32_communication_type),
        cmocka_unit_test(test_comm_volume_zero3_skips_persistent_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
