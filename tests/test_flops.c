/*
 * test_flops.c - step FLOPs against Megatron's closed form and PaLM's model-FLOPs definition.
 *
 * Oracles: Narayanan et al. 2021 eq. 3, 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) with full
 * recomputation (72 B s l h^2 (1 + s/(6h) + V/(12 l h)) without); Chowdhery et al. 2022
 * (PaLM) appendix B, 6 N + 12 l h s FLOPs per token. The formula is checked exactly on shapes
 * whose terms are binary fractions, and on GPT-3 to rounding. zerosim's generalised hardware
 * count must reduce to the Megatron form on a GPT-shaped model (MHA, f = 4h, tied embeddings;
 * biases, norms and position tables are not GEMM work and do not count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/flops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static ModelConfig gpt(uint64_t h, uint64_t layers, uint64_t heads, uint64_t vocab,
                       uint64_t max_seq)
{
    ModelConfig c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "test-gpt");
    c.family = MODEL_FAMILY_GPT2;
    c.hidden = h;
    c.n_layers = layers;
    c.n_heads = heads;
    c.n_kv_heads = heads;
    c.head_dim = h / heads;
    c.ffn_hidden = 4 * h;
    c.vocab = vocab;
    c.max_seq = max_seq;
    c.is_gated_mlp = false;
    c.embed_dim = h;
    c.norm = NORM_WEIGHT; /* no biases, no position table: two h-wide norms per layer */
    c.n_layer_norms = 2;
    c.has_final_norm = true;
    c.is_tied = true;
    c.is_qkv_fused = true;
    return c;
}

static RunSetup setup_of(uint64_t seq, uint64_t global_batch, Recompute r)
{
    return (RunSetup){.seq_len = seq,
                      .micro_batch = 1,
                      .grad_accum = 1,
                      .global_batch = global_batch,
                      .n_gpus = global_batch,
                      .recompute = r,
                      .is_flash_attention = false,
                      .act_bytes = 2};
}

static void assert_rel(double got, double want, double tol)
{
    if (fabs(got - want) > tol * fabs(want))
        fail_msg("%.17g vs %.17g (rel %.3g)", got, want, fabs(got - want) / fabs(want));
}

/* Shapes where s/(6h) and V/(16 l h) are exact binary fractions: no rounding anywhere. */
static void test_flops_megatron_formula_exact(void **state)
{
    (void)state;
    /* h 1024, s 6144: s/6h = 1; l 16, V 131072: V/16lh = 0.5 */
    double b = 8, s = 6144, l = 16, h = 1024, v = 131072;
    assert_true(flops_megatron_formula(b, s, l, h, v, true) == 96 * b * s * l * h * h * 2.5);
    /* l 12, V 73728: V/12lh = 0.5 */
    l = 12, v = 73728;
    assert_true(flops_megatron_formula(b, s, l, h, v, false) == 72 * b * s * l * h * h * 2.5);
}

/* GPT-3 175B, batch 1536, s 2048: the formula as written, and its expansion in exact integer
 * arithmetic 96 B s l h^2 + 16 B s^2 l h + 6 B s h V. */
static void test_flops_megatron_formula_gpt3(void **state)
{
    (void)state;
    const double b = 1536, s = 2048, l = 96, h = 12288, v = 50257;
    double f = flops_megatron_formula(b, s, l, h, v, true);
    assert_rel(f, 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h)), 1e-15);
    /* in units of B s h: 96 l h + 16 s l + 6 V, exact in 64-bit integers */
    const uint64_t per_bsh = 96ull * 96 * 12288 + 16ull * 2048 * 96 + 6ull * 50257;
    assert_rel(f, (double)per_bsh * b * s * h, 1e-15);
    /* without recomputation: 72 l h + 12 s l + 6 V */
    const uint64_t per_bsh_72 = 72ull * 96 * 12288 + 12ull * 2048 * 96 + 6ull * 50257;
    assert_rel(flops_megatron_formula(b, s, l, h, v, false), (double)per_bsh_72 * b * s * h, 1e-15);
}

/* Full recompute on a GPT shape: hardware FLOPs reduce to the 96 form. */
static void test_flops_step_hardware_equals_megatron_with_full_recompute(void **state)
{
    (void)state;
    ModelConfig c = gpt(12288, 96, 96, 50257, 2048);
    ModelParams p;
    params_count(&c, &p);
    assert_int_equal(p.gemm_per_layer, 12ull * 12288 * 12288);
    RunSetup su = setup_of(2048, 1536, RECOMPUTE_FULL);
    StepFlops f;
    flops_step(&c, &p, &su, &f);
    double megatron = flops_megatron_formula(1536, 2048, 96, 12288, 50257, true);
    assert_rel(f.hardware, megatron, 1e-9);
    assert_rel(f.megatron, megatron, 1e-15);
    /* per token: a layer forward is 24 h^2 + 4 s h, the logits 2 h V */
    assert_true(f.layer_fwd_per_token == 24.0 * 12288 * 12288 + 4.0 * 2048 * 12288);
    assert_true(f.attn_core_per_token == 4.0 * 2048 * 12288);
    assert_true(f.logits_fwd_per_token == 2.0 * 12288 * 50257);
}

/* Smaller GPT (GPT-2 XL shape, 25 heads of 64) and a batch of 512 at s = 1024. */
static void test_flops_step_hardware_equals_megatron_gpt2_xl(void **state)
{
    (void)state;
    ModelConfig c = gpt(1600, 48, 25, 50257, 1024);
    ModelParams p;
    params_count(&c, &p);
    RunSetup su = setup_of(1024, 512, RECOMPUTE_FULL);
    StepFlops f;
    flops_step(&c, &p, &su, &f);
    assert_rel(f.hardware, flops_megatron_formula(512, 1024, 48, 1600, 50257, true), 1e-9);
}

/* Biases, LayerNorm biases and a learned position table are not GEMM work: the shipped
 * gpt3-175b preset (which has all three) still gives the Megatron count. */
static void test_flops_step_biases_add_no_gemm_flops(void **state)
{
    (void)state;
    ModelConfig c;
    Err err = {0};
    assert_int_equal(model_config_load(&c, "gpt3-175b", ZEROSIM_SOURCE_DIR, &err), 0);
    assert_true(c.has_qkv_bias && c.has_out_bias && c.has_mlp_bias);
    ModelParams p;
    params_count(&c, &p);
    RunSetup su = setup_of(2048, 1536, RECOMPUTE_FULL);
    StepFlops f;
    flops_step(&c, &p, &su, &f);
    assert_rel(f.hardware, flops_megatron_formula(1536, 2048, 96, 12288, 50257, true), 1e-9);
    model_config_fini(&c);
}

/* No recomputation: the 72 form; selective: the 72 form plus the attention core forward
 * (4 s h per token per layer) once more. */
static void test_flops_step_hardware_without_and_selective_recompute(void **state)
{
    (void)state;
    ModelConfig c = gpt(12288, 96, 96, 50257, 2048);
    ModelParams p;
    params_count(&c, &p);
    const double tokens = 1536.0 * 2048;
    double m72 = flops_megatron_formula(1536, 2048, 96, 12288, 50257, false);

    RunSetup su = setup_of(2048, 1536, RECOMPUTE_NONE);
    StepFlops f;
    flops_step(&c, &p, &su, &f);
    assert_rel(f.hardware, m72, 1e-9);
    assert_rel(f.megatron, m72, 1e-15);

    su.recompute = RECOMPUTE_SELECTIVE;
    flops_step(&c, &p, &su, &f);
    assert_rel(f.hardware, m72 + tokens * 96 * 4.0 * 2048 * 12288, 1e-9);
    assert_true(f.hardware < flops_megatron_formula(1536, 2048, 96, 12288, 50257, true));
}

/* Model FLOPs (PaLM): 6 N tokens + 12 l h s tokens, whatever the recomputation. */
static void test_flops_step_model_flops_palm(void **state)
{
    (void)state;
    ModelConfig c = gpt(12288, 96, 96, 50257, 2048);
    ModelParams p;
    params_count(&c, &p);
    /* tied, no biases, no positions: N = 96 (12 h^2 + 2 h) + V h + h */
    const uint64_t h = 12288;
    assert_int_equal(p.total, 96 * (12 * h * h + 2 * h) + 50257 * h + h);
    const double tokens = 1536.0 * 2048;
    const double want = 6.0 * (double)p.total * tokens + 12.0 * 96 * 12288 * 2048 * tokens;
    for (int r = RECOMPUTE_NONE; r <= RECOMPUTE_FULL; r++) {
        RunSetup su = setup_of(2048, 1536, (Recompute)r);
        StepFlops f;
        flops_step(&c, &p, &su, &f);
        assert_rel(f.model, want, 1e-12);
    }
}

/* Grouped-query attention and a gated MLP (Llama-2-70B: h 8192, 64 heads of 128, 8 KV heads,
 * f 28672): a layer forward is 2 (h (q + 2 kv) + q h + 3 h f) + 4 s q per token. */
static void test_flops_step_gqa_gated_layer(void **state)
{
    (void)state;
    ModelConfig c = gpt(8192, 80, 64, 32000, 4096);
    c.family = MODEL_FAMILY_LLAMA;
    c.n_kv_heads = 8;
    c.head_dim = 128;
    c.ffn_hidden = 28672;
    c.is_gated_mlp = true;
    c.is_qkv_fused = false;
    c.is_tied = false;
    ModelParams p;
    params_count(&c, &p);
    const uint64_t gemm = 8192ull * (8192 + 2 * 1024) + 8192ull * 8192 + 3ull * 8192 * 28672;
    assert_int_equal(p.gemm_per_layer, gemm);
    RunSetup su = setup_of(4096, 1024, RECOMPUTE_NONE);
    StepFlops f;
    flops_step(&c, &p, &su, &f);
    assert_true(f.layer_fwd_per_token == 2.0 * (double)gemm + 4.0 * 4096 * 8192);
    const double tokens = 1024.0 * 4096;
    assert_rel(f.hardware, tokens * (80 * 3 * f.layer_fwd_per_token + 6.0 * 8192 * 32000), 1e-12);
}

/* Sliding windows: with FlashAttention a windowed layer attends to w keys per query, so
 * Gemma 2's alternation (13 of 26 layers at w = 1024, s = 4096) averages 2560 keys; unfused
 * attention multiplies the whole masked s x s. */
static void test_flops_step_sliding_windows(void **state)
{
    (void)state;
    ModelConfig c = gpt(2048, 26, 16, 32000, 8192);
    c.sliding_window = 1024;
    c.n_sliding_layers = 13;
    ModelParams p;
    params_count(&c, &p);
    RunSetup su = setup_of(4096, 8, RECOMPUTE_NONE);
    StepFlops f;
    flops_step(&c, &p, &su, &f);
    assert_true(f.attn_core_per_token == 4.0 * 4096 * 2048); /* unfused: no saving */
    su.is_flash_attention = true;
    flops_step(&c, &p, &su, &f);
    assert_true(f.attn_core_per_token == 4.0 * (13 * 4096.0 + 13 * 1024.0) / 26 * 2048);
    /* a window longer than the sequence changes nothing */
    c.sliding_window = 8192;
    flops_step(&c, &p, &su, &f);
    assert_true(f.attn_core_per_token == 4.0 * 4096 * 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flops_megatron_formula_exact),
        cmocka_unit_test(test_flops_megatron_formula_gpt3),
        cmocka_unit_test(test_flops_step_hardware_equals_megatron_with_full_recompute),
        cmocka_unit_test(test_flops_step_hardware_equals_megatron_gpt2_xl),
        cmocka_unit_test(test_flops_step_biases_add_no_gemm_flops),
        cmocka_unit_test(test_flops_step_hardware_without_and_selective_recompute),
        cmocka_unit_test(test_flops_step_model_flops_palm),
        cmocka_unit_test(test_flops_step_gqa_gated_layer),
        cmocka_unit_test(test_flops_step_sliding_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
