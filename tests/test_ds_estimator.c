/*
 * test_ds_estimator.c - DeepSpeed's estimate_zero{2,3}_model_states_mem_needs, reproduced.
 *
 * Oracles: the "ds-estimator-zero3" and "ds-estimator-zero2" cases of
 * tests/validation/cases.json (a 2851M-parameter model, largest layer 32M, one node of 8 GPUs,
 * additional_buffer_factor 1.5, zero_init), whose expected values are GiB (2^30) rounded to two
 * decimals as DeepSpeed prints them: each must match within 0.5%, or within the rounding of the
 * printed value where that is wider (0.12 GiB stands for 0.1192). The remaining branches
 * (no zero_init, several nodes, small clusters where max() picks the other term) are checked
 * against the DeepSpeed arithmetic written out by hand, including its int() truncations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/ds_estimator.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CASES_JSON ZEROSIM_SOURCE_DIR "/tests/validation/cases.json"
#define GIB 1073741824.0

static cJSON *load_case(cJSON **root, const char *id)
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
    *root = cJSON_Parse(text);
    free(text);
    assert_non_null(*root);
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(*root, "analytic"))
    {
        const cJSON *cid = cJSON_GetObjectItemCaseSensitive(item, "id");
        if (cJSON_IsString(cid) && strcmp(cid->valuestring, id) == 0)
            return (cJSON *)item;
    }
    fail_msg("case %s not in %s", id, CASES_JSON);
    return NULL;
}

static double number(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v))
        fail_msg("missing number %s", key);
    return v->valuedouble;
}

/* Within 0.5%, or within half a unit of the printed value's second decimal. */
static void check_gib(const char *what, uint64_t got_bytes, const cJSON *expected, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(expected, key);
    if (v == NULL)
        return;
    double got = (double)got_bytes / GIB, want = v->valuedouble;
    double tol = fmax(0.005 * want, 0.005);
    if (fabs(got - want) > tol)
        fail_msg("%s %s: %.4f GiB vs expected %.2f", what, key, got, want);
}

static void test_ds_estimator_zero3_matches_cases(void **state)
{
    (void)state;
    cJSON *root;
    const cJSON *c = load_case(&root, "ds-estimator-zero3");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(c, "inputs");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(c, "expected_GiB");
    const uint64_t p = (uint64_t)number(in, "total_params");
    const uint64_t l = (uint64_t)number(in, "largest_layer_params");
    const uint64_t g = (uint64_t)number(in, "gpus_per_node");
    const uint64_t nodes = (uint64_t)number(in, "num_nodes");
    const double abf = number(in, "additional_buffer_factor");
    const bool zero_init = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "zero_init"));
    assert_true(zero_init);

    static const struct {
        const char *key;
        bool offload, offload_params;
    } branches[] = {
        {"no_offload", false, false},
        {"offload_optimizer_cpu", true, false},
        {"offload_optimizer_and_param_cpu", true, true},
    };
    for (size_t i = 0; i < 3; i++) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(exp, branches[i].key);
        assert_non_null(e);
        DsEstimate d = ds_estimator_zero3(p, l, g, nodes, branches[i].offload,
                                          branches[i].offload_params, zero_init, abf);
        check_gib(branches[i].key, d.gpu_bytes, e, "gpu");
        check_gib(branches[i].key, d.cpu_bytes, e, "cpu");
    }
    cJSON_Delete(root);
}

static void test_ds_estimator_zero2_matches_cases(void **state)
{
    (void)state;
    cJSON *root;
    const cJSON *c = load_case(&root, "ds-estimator-zero2");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(c, "inputs");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(c, "expected_GiB");
    const uint64_t p = (uint64_t)number(in, "total_params");
    const uint64_t g = (uint64_t)number(in, "gpus_per_node");
    const uint64_t nodes = (uint64_t)number(in, "num_nodes");
    const double abf = number(in, "additional_buffer_factor");

    const cJSON *e = cJSON_GetObjectItemCaseSensitive(exp, "no_offload");
    assert_non_null(e);
    DsEstimate d = ds_estimator_zero2(p, g, nodes, false, abf);
    check_gib("no_offload", d.gpu_bytes, e, "gpu");
    check_gib("no_offload", d.cpu_bytes, e, "cpu");

    e = cJSON_GetObjectItemCaseSensitive(exp, "offload_optimizer_cpu");
    assert_non_null(e);
    d = ds_estimator_zero2(p, g, nodes, true, abf);
    check_gib("offload_optimizer_cpu", d.gpu_bytes, e, "gpu");
    check_gib("offload_optimizer_cpu", d.cpu_bytes, e, "cpu");
    cJSON_Delete(root);
}

/* The same case in exact bytes: the DeepSpeed arithmetic for P = 2851e6, L = 32e6, 8 GPUs. */
static void test_ds_estimator_zero3_exact_bytes(void **state)
{
    (void)state;
    const uint64_t p = 2851000000ull, l = 32000000ull;
    DsEstimate d = ds_estimator_zero3(p, l, 8, 1, false, false, true, 1.5);
    assert_int_equal(d.gpu_bytes, 4 * l + 18 * p / 8); /* 6542750000 */
    assert_int_equal(d.cpu_bytes, 1536000000ull);      /* 4 L g abf */
    d = ds_estimator_zero3(p, l, 8, 1, true, false, true, 1.5);
    assert_int_equal(d.gpu_bytes, 4 * l + 2 * p / 8);
    assert_int_equal(d.cpu_bytes, 68424000000ull); /* 16 P abf */
    d = ds_estimator_zero3(p, l, 8, 1, true, true, true, 1.5);
    assert_int_equal(d.gpu_bytes, 4 * l);
    assert_int_equal(d.cpu_bytes, 76977000000ull); /* 18 P abf */
}

/* Without zero_init the host holds the whole model per process: P max(4 g, 18/nodes) abf. */
static void test_ds_estimator_zero3_without_zero_init(void **state)
{
    (void)state;
    const uint64_t p = 2851000000ull, l = 32000000ull;
    /* 8 GPUs a node: 4 g = 32 beats 18 and 16 */
    DsEstimate d = ds_estimator_zero3(p, l, 8, 1, true, true, false, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 32 * 1.5));
    d = ds_estimator_zero3(p, l, 8, 1, true, false, false, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 32 * 1.5));
    d = ds_estimator_zero3(p, l, 8, 1, false, false, false, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 4 * 8 * 1.5));
    /* 2 GPUs on 1 node: 18 and 16 beat 4 g = 8 */
    d = ds_estimator_zero3(p, l, 2, 1, true, true, false, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 18 * 1.5));
    d = ds_estimator_zero3(p, l, 2, 1, true, false, false, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 16 * 1.5));
}

/* Several nodes: the GPU share divides by all GPUs, the host share by nodes, and int()
 * truncates the GPU share (7 GPUs, P = 1e9: 18 P / 7 = 2571428571.43). */
static void test_ds_estimator_zero3_multi_node_and_truncation(void **state)
{
    (void)state;
    DsEstimate d = ds_estimator_zero3(4000000000ull, 100000000ull, 8, 4, false, false, true, 1.5);
    assert_int_equal(d.gpu_bytes, 400000000ull + 18ull * 4000000000ull / 32);
    d = ds_estimator_zero3(4000000000ull, 100000000ull, 8, 4, true, true, true, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(4e9 * 18 / 4 * 1.5));
    d = ds_estimator_zero3(1000000000ull, 0, 7, 1, false, false, true, 1.0);
    assert_int_equal(d.gpu_bytes, 2571428571ull);
}

/* ZeRO-2 by hand, including max(4 G, 16) with G all GPUs and truncation of 18 P / G. */
static void test_ds_estimator_zero2_branches_by_hand(void **state)
{
    (void)state;
    const uint64_t p = 2851000000ull;
    DsEstimate d = ds_estimator_zero2(p, 8, 1, false, 1.5);
    assert_int_equal(d.gpu_bytes, 2 * p + 18 * p / 8); /* 12116750000 */
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 4 * 8 * 1.5));
    d = ds_estimator_zero2(p, 8, 1, true, 1.5);
    assert_int_equal(d.gpu_bytes, 2 * p);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 32 * 1.5));
    /* 2 GPUs: max(8, 16) = 16; 4 nodes of 8: max(128, 16) = 128 */
    d = ds_estimator_zero2(p, 2, 1, true, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 16 * 1.5));
    d = ds_estimator_zero2(p, 8, 4, true, 1.5);
    assert_int_equal(d.cpu_bytes, (uint64_t)(2851e6 * 128 * 1.5));
    d = ds_estimator_zero2(1000000000ull, 7, 1, false, 1.5);
    assert_int_equal(d.gpu_bytes, 2000000000ull + 2571428571ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ds_estimator_zero3_matches_cases),
        cmocka_unit_test(test_ds_estimator_zero2_matches_cases),
        cmocka_unit_test(test_ds_estimator_zero3_exact_bytes),
        cmocka_unit_test(test_ds_estimator_zero3_without_zero_init),
        cmocka_unit_test(test_ds_estimator_zero3_multi_node_and_truncation),
        cmocka_unit_test(test_ds_estimator_zero2_branches_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
