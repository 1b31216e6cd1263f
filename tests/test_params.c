/*
 * test_params.c - parameter counts of the shipped presets against published figures.
 *
 * Exact published totals (HuggingFace safetensors metadata, model cards) must match to the
 * parameter where the architecture is fully specified; figures published rounded ("175B")
 * must agree within 0.5% or within the rounding of the published figure when that is wider.
 * Sources: workloads/models/SOURCES.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/params.h"

#include <math.h>
#include <stdio.h>

typedef struct Published {
    const char *preset;
    double params;
    double rounding; /* half a unit of the last published digit, relative; 0 when exact */
} Published;

static const Published published[] = {
    {"gpt2-1.5b", 1557611200.0, 0},
    {"llama-2-7b", 6738415616.0, 0},
    {"llama-2-13b", 13015864320.0, 0},
    {"llama-2-70b", 68976648192.0, 0},
    {"llama-3-8b", 8030261248.0, 0},
    {"llama-3-70b", 70553706496.0, 0},
    {"llama-3-405b", 405853388800.0, 0},
    {"mistral-7b", 7241732096.0, 0},
    {"gpt-neox-20b", 20554567680.0, 0},
    {"megatron-8.3b", 8.3e9, 0.05 / 8.3},      /* Megatron-LM (Shoeybi et al. 2019) Table 1 */
    {"turing-nlg-17b", 17e9, 0.5 / 17.0},      /* Microsoft blog, Feb 2020: "17 billion" */
    {"gpt3-175b", 175e9, 0.5 / 175.0},         /* Brown et al. 2020, Table 2.1 */
    {"mt-nlg-530b", 530e9, 0.5 / 530.0},       /* Smith et al. 2022 */
    {"gpt-1t", 1008e9, 0.5 / 1008.0},          /* Narayanan et al. 2021, Table 1 */
    {"mpt-7b", 6.65e9, 0.005 / 6.65},          /* HuggingFace hub: 6.65B params */
};

static void load(const char *preset, ModelConfig *cfg)
{
    Err err = {0};
    int rc = model_config_load(cfg, preset, ZEROSIM_SOURCE_DIR, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void test_params_count_matches_published(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
        ModelConfig cfg;
        ModelParams p;
        load(published[i].preset, &cfg);
        params_count(&cfg, &p);
        double rel = fabs((double)p.total - published[i].params) / published[i].params;
        double tol = published[i].rounding > 0.005 ? published[i].rounding : 0.005;
        if (published[i].rounding == 0)
            tol = 0;
        if (rel > tol)
            fprintf(stderr, "%s: %llu vs published %.0f (%.3f%%)\n", published[i].preset,
                    (unsigned long long)p.total, published[i].params, 100 * rel);
        assert_true(rel <= tol);
        model_config_fini(&cfg);
    }
}

/* GPT-2 XL by hand: 48 (12 h^2 + 13 h) + V h + 1024 h + 2 h with h = 1600, V = 50257. */
static void test_params_count_gpt2_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load("gpt2-1.5b", &cfg);
    params_count(&cfg, &p);
    const uint64_t h = 1600;
    assert_int_equal(p.per_layer, 12 * h * h + 13 * h);
    assert_int_equal(p.total, 48 * (12 * h * h + 13 * h) + 50257 * h + 1024 * h + 2 * h);
    assert_int_equal(p.largest_module, 50257 * h); /* the token embedding */
    model_config_fini(&cfg);
}

/* The persistence threshold keeps norms and biases (vectors of h) but no matrix. */
static void test_params_persistent_counts_vectors_only(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load("gpt2-1.5b", &cfg);
    params_count(&cfg, &p);
    const uint64_t h = 1600;
    /* per layer: 2 norms (2h each), qkv bias 3h, o bias h, fc bias 4h, out bias h = 13h */
    assert_int_equal(params_persistent(&p, 48, 100000), 48 * 13 * h + 2 * h);
    assert_int_equal(params_persistent(&p, 48, 0), 0);
    model_config_fini(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_count_matches_published),
        cmocka_unit_test(test_params_count_gpt2_by_hand),
        cmocka_unit_test(test_params_persistent_counts_vectors_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
