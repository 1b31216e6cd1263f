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

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    assert_int_equal(p.largest_layer_module, 4 * h * h + 4 * h); /* c_fc and its bias */
    assert_int_equal(params_output_projection(&p), 50257 * h); /* tied: the embedding again */
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

/* ------------------------------------------------------------------- one test per family */

/* Each family's shape keys as its hub config.json gives them (the other keys of those files
 * are metadata), with the published exact total: the safetensors parameter count of the hub
 * checkpoint, or the model card's exact figure (tests/inputs/real/SOURCES.md, "Families"). */
typedef struct FamilyCase {
    const char *model; /* the hub checkpoint */
    const char *json;
    uint64_t params;
    ModelFamily family;
} FamilyCase;

static const FamilyCase family_cases[] = {
    {"EleutherAI/pythia-160m",
     "{\"model_type\": \"gpt_neox\", \"hidden_size\": 768, \"num_hidden_layers\": 12, "
     "\"num_attention_heads\": 12, \"intermediate_size\": 3072, \"vocab_size\": 50304, "
     "\"max_position_embeddings\": 2048, \"rotary_pct\": 0.25, \"use_parallel_residual\": true, "
     "\"tie_word_embeddings\": false}",
     162322944ull, MODEL_FAMILY_NEOX},
    {"facebook/opt-350m (project_in/out, no final LayerNorm)",
     "{\"model_type\": \"opt\", \"hidden_size\": 1024, \"num_hidden_layers\": 24, "
     "\"num_attention_heads\": 16, \"ffn_dim\": 4096, \"vocab_size\": 50272, "
     "\"max_position_embeddings\": 2048, \"word_embed_proj_dim\": 512, "
     "\"do_layer_norm_before\": false, \"enable_bias\": true}",
     331196416ull, MODEL_FAMILY_OPT},
    {"bigscience/bloom-560m",
     "{\"model_type\": \"bloom\", \"n_embed\": 1024, \"n_layer\": 24, \"num_attention_heads\": 16, "
     "\"vocab_size\": 250880, \"apply_residual_connection_post_layernorm\": false, "
     "\"slow_but_exact\": false, \"masked_softmax_fusion\": true}",
     559214592ull, MODEL_FAMILY_BLOOM},
    {"bigscience/bloom-7b1",
     "{\"model_type\": \"bloom\", \"hidden_size\": 4096, \"n_layer\": 30, \"n_head\": 32, "
     "\"vocab_size\": 250880}",
     7069016064ull, MODEL_FAMILY_BLOOM},
    {"tiiuae/falcon-7b (multi-query, parallel attention)",
     "{\"model_type\": \"falcon\", \"hidden_size\": 4544, \"num_hidden_layers\": 32, "
     "\"num_attention_heads\": 71, \"multi_query\": true, \"parallel_attn\": true, "
     "\"new_decoder_architecture\": false, \"bias\": false, \"alibi\": false, "
     "\"vocab_size\": 65024}",
     6921720704ull, MODEL_FAMILY_FALCON},
    {"Qwen/Qwen3-0.6B (q/k norms, head_dim 128)",
     "{\"model_type\": \"qwen3\", \"hidden_size\": 1024, \"num_hidden_layers\": 28, "
     "\"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"head_dim\": 128, "
     "\"intermediate_size\": 3072, \"vocab_size\": 151936, \"max_position_embeddings\": 40960, "
     "\"attention_bias\": false, \"tie_word_embeddings\": true, \"use_sliding_window\": false, "
     "\"sliding_window\": null, \"max_window_layers\": 28}",
     596049920ull, MODEL_FAMILY_QWEN3},
    {"google/gemma-2b (multi-query, head_dim 256)",
     "{\"model_type\": \"gemma\", \"hidden_size\": 2048, \"num_hidden_layers\": 18, "
     "\"num_attention_heads\": 8, \"num_key_value_heads\": 1, \"head_dim\": 256, "
     "\"intermediate_size\": 16384, \"vocab_size\": 256000, \"max_position_embeddings\": 8192, "
     "\"hidden_act\": \"gelu\"}",
     2506172416ull, MODEL_FAMILY_GEMMA},
    {"google/gemma-7b (16 heads x 256 > hidden 3072)",
     "{\"model_type\": \"gemma\", \"hidden_size\": 3072, \"num_hidden_layers\": 28, "
     "\"num_attention_heads\": 16, \"num_key_value_heads\": 16, \"head_dim\": 256, "
     "\"intermediate_size\": 24576, \"vocab_size\": 256000, \"max_position_embeddings\": 8192}",
     8537680896ull, MODEL_FAMILY_GEMMA},
    {"google/gemma-2-2b (four norms per layer)",
     "{\"model_type\": \"gemma2\", \"hidden_size\": 2304, \"num_hidden_layers\": 26, "
     "\"num_attention_heads\": 8, \"num_key_value_heads\": 4, \"head_dim\": 256, "
     "\"intermediate_size\": 9216, \"vocab_size\": 256000, \"sliding_window\": 4096, "
     "\"attn_logit_softcapping\": 50.0, \"final_logit_softcapping\": 30.0, "
     "\"query_pre_attn_scalar\": 256, \"cache_implementation\": \"hybrid\"}",
     2614341888ull, MODEL_FAMILY_GEMMA2},
    {"google/gemma-2-9b",
     "{\"model_type\": \"gemma2\", \"hidden_size\": 3584, \"num_hidden_layers\": 42, "
     "\"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"head_dim\": 256, "
     "\"intermediate_size\": 14336, \"vocab_size\": 256000, \"sliding_window\": 4096}",
     9241705984ull, MODEL_FAMILY_GEMMA2},
    {"google/gemma-3-1b-pt (text only: q/k norms, 5:1 sliding windows)",
     "{\"model_type\": \"gemma3_text\", \"hidden_size\": 1152, \"num_hidden_layers\": 26, "
     "\"num_attention_heads\": 4, \"num_key_value_heads\": 1, \"head_dim\": 256, "
     "\"intermediate_size\": 6912, \"vocab_size\": 262144, \"max_position_embeddings\": 32768, "
     "\"sliding_window\": 512, \"sliding_window_pattern\": 6, \"rope_local_base_freq\": 10000.0}",
     999885952ull, MODEL_FAMILY_GEMMA3},
    {"microsoft/phi-1_5 (parallel block, biased LM head)",
     "{\"model_type\": \"phi\", \"hidden_size\": 2048, \"num_hidden_layers\": 24, "
     "\"num_attention_heads\": 32, \"intermediate_size\": 8192, \"vocab_size\": 51200, "
     "\"max_position_embeddings\": 2048, \"partial_rotary_factor\": 0.5, "
     "\"qk_layernorm\": false, \"tie_word_embeddings\": false}",
     1418270720ull, MODEL_FAMILY_PHI},
    {"microsoft/Phi-3-mini-4k-instruct (fused qkv and gate_up)",
     "{\"model_type\": \"phi3\", \"hidden_size\": 3072, \"num_hidden_layers\": 32, "
     "\"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"intermediate_size\": 8192, "
     "\"vocab_size\": 32064, \"max_position_embeddings\": 4096, \"sliding_window\": 2047, "
     "\"tie_word_embeddings\": false}",
     3821079552ull, MODEL_FAMILY_PHI3},
    {"microsoft/phi-4 (phi3 layout, GQA)",
     "{\"model_type\": \"phi3\", \"hidden_size\": 5120, \"num_hidden_layers\": 40, "
     "\"num_attention_heads\": 40, \"num_key_value_heads\": 10, \"intermediate_size\": 17920, "
     "\"vocab_size\": 100352, \"max_position_embeddings\": 16384, \"sliding_window\": null, "
     "\"tie_word_embeddings\": false}",
     14659507200ull, MODEL_FAMILY_PHI3},
    {"allenai/OLMo-1B-hf (non-parametric LayerNorm, tied)",
     "{\"model_type\": \"olmo\", \"hidden_size\": 2048, \"num_hidden_layers\": 16, "
     "\"num_attention_heads\": 16, \"intermediate_size\": 8192, \"vocab_size\": 50304, "
     "\"max_position_embeddings\": 2048, \"clip_qkv\": null, \"tie_word_embeddings\": true}",
     1176764416ull, MODEL_FAMILY_OLMO},
    {"allenai/OLMo-7B-hf (untied)",
     "{\"model_type\": \"olmo\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, "
     "\"num_attention_heads\": 32, \"intermediate_size\": 11008, \"vocab_size\": 50304, "
     "\"tie_word_embeddings\": false}",
     6888095744ull, MODEL_FAMILY_OLMO},
    {"allenai/OLMo-2-1124-7B (post-norms, q/k norms over all heads)",
     "{\"model_type\": \"olmo2\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, "
     "\"num_attention_heads\": 32, \"num_key_value_heads\": 32, \"intermediate_size\": 11008, "
     "\"vocab_size\": 100352, \"max_position_embeddings\": 4096, \"tie_word_embeddings\": false}",
     7298617344ull, MODEL_FAMILY_OLMO2},
    {"bigcode/starcoder2-3b",
     "{\"model_type\": \"starcoder2\", \"hidden_size\": 3072, \"num_hidden_layers\": 30, "
     "\"num_attention_heads\": 24, \"num_key_value_heads\": 2, \"intermediate_size\": 12288, "
     "\"vocab_size\": 49152, \"max_position_embeddings\": 16384, \"sliding_window\": 4096, "
     "\"use_bias\": true, \"norm_epsilon\": 1e-05}",
     3030371328ull, MODEL_FAMILY_STARCODER2},
    {"bigcode/starcoder2-7b",
     "{\"model_type\": \"starcoder2\", \"hidden_size\": 4608, \"num_hidden_layers\": 32, "
     "\"num_attention_heads\": 36, \"num_key_value_heads\": 4, \"intermediate_size\": 18432, "
     "\"vocab_size\": 49152, \"max_position_embeddings\": 16384, \"sliding_window\": 4096, "
     "\"use_bias\": true}",
     7173923840ull, MODEL_FAMILY_STARCODER2},
};

static void test_params_count_each_family(void **state)
{
    (void)state;
    size_t n_bad = 0;
    for (size_t i = 0; i < sizeof family_cases / sizeof family_cases[0]; i++) {
        const FamilyCase *fc = &family_cases[i];
        ModelConfig cfg;
        Err err = {0};
        if (model_config_parse(&cfg, fc->model, fc->json, strlen(fc->json), &err) != 0) {
            fprintf(stderr, "%s: %s\n", fc->model, err.msg);
            n_bad++;
            model_config_fini(&cfg);
            continue;
        }
        ModelParams p;
        params_count(&cfg, &p);
        if (p.total != fc->params || cfg.family != fc->family) {
            fprintf(stderr, "%s: %s, %llu parameters, published %llu (%+.4f%%)\n", fc->model,
                    model_config_family_name(cfg.family), (unsigned long long)p.total,
                    (unsigned long long)fc->params,
                    100.0 * ((double)p.total - (double)fc->params) / (double)fc->params);
            n_bad++;
        }
        model_config_fini(&cfg);
    }
    assert_int_equal(n_bad, 0);
}

/* GPT-BigCode (SantaCoder's shape) by hand: GPT-2's layer with multi-query c_attn of
 * h x (h + 2 d) plus bias; no published exact total, so the count is worked here. */
static void test_params_count_bigcode_by_hand(void **state)
{
    (void)state;
    static const char json[] = "{\"model_type\": \"gpt_bigcode\", \"n_embd\": 2048, "
                               "\"n_layer\": 24, \"n_head\": 16, \"n_positions\": 2048, "
                               "\"vocab_size\": 49280, \"multi_query\": true}";
    ModelConfig cfg;
    Err err = {0};
    assert_int_equal(model_config_parse(&cfg, "santacoder", json, strlen(json), &err), 0);
    ModelParams p;
    params_count(&cfg, &p);
    const uint64_t h = 2048, d = 128, f = 4 * h;
    const uint64_t layer = 2 * 2 * h + h * (h + 2 * d) + (h + 2 * d) + h * h + h + h * f + f +
                           f * h + h;
    assert_int_equal(cfg.n_kv_heads, 1);
    assert_int_equal(p.per_layer, layer);
    assert_int_equal(p.total, 24 * layer + 49280 * h + 2048 * h + 2 * h);
    model_config_fini(&cfg);
}

/* OLMoE, Granite 3 and GraniteMoE by hand from their modeling files' modules, at the hub
 * shapes of allenai/OLMoE-1B-7B-0924, ibm-granite/granite-3.3-8b-base and
 * ibm-granite/granite-3.1-1b-a400m-instruct. No exact published totals were found for the
 * first and last (headlines: AI2's "6.9B total, 1.3B active", IBM's "1.3B"); Granite 3.3
 * 8B's 8,170,864,640 is its safetensors total as quoted in public test code. */
static void test_params_count_olmoe_granite_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    Err err = {0};
    /* OLMoE: q, k, v, o of h x h, q_norm of h and k_norm of kv x d (RMSNorm), two RMSNorms,
     * a router of h x 64 and 64 experts of 3 x h x 1024; untied head */
    static const char olmoe[] =
        "{\"model_type\": \"olmoe\", \"hidden_size\": 2048, \"num_hidden_layers\": 16, "
        "\"num_attention_heads\": 16, \"num_key_value_heads\": 16, "
        "\"intermediate_size\": 1024, \"num_experts\": 64, \"num_experts_per_tok\": 8, "
        "\"vocab_size\": 50304, \"tie_word_embeddings\": false}";
    assert_int_equal(model_config_parse(&cfg, "olmoe", olmoe, strlen(olmoe), &err), 0);
    params_count(&cfg, &p);
    uint64_t h = 2048, v = 50304;
    uint64_t attn = 4 * h * h + 2 * h, expert = 3 * h * 1024;
    assert_int_equal(p.expert, expert);
    assert_int_equal(p.moe_replicated, h * 64);
    assert_int_equal(p.total, 16 * (attn + 2 * h + h * 64 + 64 * expert) + 2 * v * h + h);
    assert_int_equal(p.total, 6919161856ull);
    assert_int_equal(p.active, 16 * (attn + 2 * h + h * 64 + 8 * expert) + 2 * v * h + h);
    assert_int_equal(p.active, 1282017280ull);
    model_config_fini(&cfg);
    /* Granite 3.3 8B: Llama's layer with GQA (8 of 32 heads), tied */
    static const char granite[] =
        "{\"model_type\": \"granite\", \"hidden_size\": 4096, \"num_hidden_layers\": 40, "
        "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
        "\"intermediate_size\": 12800, \"vocab_size\": 49159, \"tie_word_embeddings\": true, "
        "\"embedding_multiplier\": 12.0, \"residual_multiplier\": 0.22, "
        "\"attention_multiplier\": 0.0078125, \"logits_scaling\": 16.0}";
    assert_int_equal(model_config_parse(&cfg, "granite", granite, strlen(granite), &err), 0);
    params_count(&cfg, &p);
    h = 4096;
    const uint64_t kv = 8 * 128;
    assert_int_equal(p.total,
                     40 * (2 * h * h + 2 * h * kv + 3 * h * 12800 + 2 * h) + 49159 * h + h);
    assert_int_equal(p.total, 8170864640ull);
    model_config_fini(&cfg);
    /* GraniteMoE 1B-A400M: a router of h x 32 (router.layer), experts' input_linear 32 x 1024
     * x 1024 and output_linear 32 x 1024 x 512, tied */
    static const char granite_moe[] =
        "{\"model_type\": \"granitemoe\", \"hidden_size\": 1024, \"num_hidden_layers\": 24, "
        "\"num_attention_heads\": 16, \"num_key_value_heads\": 8, "
        "\"intermediate_size\": 512, \"num_local_experts\": 32, "
        "\"num_experts_per_tok\": 8, \"vocab_size\": 49155, \"tie_word_embeddings\": true}";
    assert_int_equal(model_config_parse(&cfg, "granitemoe", granite_moe, strlen(granite_moe),
                                        &err),
                     0);
    params_count(&cfg, &p);
    h = 1024;
    attn = 2 * h * h + 2 * h * 512;
    expert = 2 * 512 * h + h * 512;
    assert_int_equal(p.expert, expert);
    assert_int_equal(p.total, 24 * (attn + 2 * h + h * 32 + 32 * expert) + 49155 * h + h);
    assert_int_equal(p.total, 1334628352ull);
    assert_int_equal(p.active, 24 * (attn + 2 * h + h * 32 + 8 * expert) + 49155 * h + h);
    model_config_fini(&cfg);
    /* GraniteMoeShared: the shared MLP (input_linear 2s x h, output_linear h x s) is held by
     * every rank beside the router */
    static const char shared[] =
        "{\"model_type\": \"granitemoeshared\", \"hidden_size\": 1024, "
        "\"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
        "\"num_key_value_heads\": 8, \"intermediate_size\": 512, "
        "\"num_local_experts\": 32, \"num_experts_per_tok\": 8, \"vocab_size\": 49155, "
        "\"tie_word_embeddings\": true, \"shared_intermediate_size\": 1024}";
    assert_int_equal(model_config_parse(&cfg, "shared", shared, strlen(shared), &err), 0);
    params_count(&cfg, &p);
    assert_int_equal(p.moe_replicated, h * 32 + 3 * h * 1024);
    assert_int_equal(p.total, 1334628352ull + 24 * 3 * h * 1024);
    model_config_fini(&cfg);
}

/* Phi-3.5-MoE by hand (modeling_phimoe.py): q, k, v, o with biases (attention_bias), two
 * LayerNorms with bias, Mixtral's router of h x 16 and 16 experts of 3 x h x 6400, a final
 * LayerNorm, an untied lm_head with its bias (lm_head_bias): 41,873,153,344, the hub
 * safetensors' 41.873B as the Open LLM Leaderboard records it; Microsoft's card: 6.6B active. */
static void test_params_count_phimoe_by_hand(void **state)
{
    (void)state;
    static const char json[] =
        "{\"architectures\": [\"PhiMoEForCausalLM\"], \"model_type\": \"phimoe\", "
        "\"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
        "\"num_key_value_heads\": 8, \"intermediate_size\": 6400, \"num_local_experts\": 16, "
        "\"num_experts_per_tok\": 2, \"vocab_size\": 32064, \"attention_bias\": true, "
        "\"lm_head_bias\": true, \"tie_word_embeddings\": false, "
        "\"input_jitter_noise\": 0.01, \"sliding_window\": 131072}";
    ModelConfig cfg;
    Err err = {0};
    assert_int_equal(model_config_parse(&cfg, "phimoe", json, strlen(json), &err), 0);
    ModelParams p;
    params_count(&cfg, &p);
    const uint64_t h = 4096, kv = 1024, v = 32064, expert = 3 * h * 6400;
    const uint64_t attn = 2 * h * h + 2 * h * kv + 2 * h + 2 * kv, norms = 2 * 2 * h;
    assert_int_equal(p.expert, expert);
    assert_int_equal(p.total, 32 * (attn + norms + h * 16 + 16 * expert) + 2 * v * h + v + 2 * h);
    assert_int_equal(p.total, 41873153344ull);
    assert_int_equal(p.active, 32 * (attn + norms + h * 16 + 2 * expert) + 2 * v * h + v + 2 * h);
    assert_true(fabs((double)p.active - 6.6e9) / 6.6e9 < 0.01);
    model_config_fini(&cfg);
}

/* ------------------------------------------------------------ the corpus of real files */

/* tests/inputs/real/config/: config.json files as published on the HuggingFace hub, copied
 * verbatim from public repositories (tests/inputs/real/SOURCES.md). Every decoder-only model
 * is read with its exact parameter count: the hub's safetensors total (total_size / 2 for
 * 16-bit checkpoints) or the model card's exact figure, as SOURCES.md gives for each. A fine-
 * tune has its base model's count. The rest are refused in one line naming the family. */
typedef struct RealConfig {
    const char *file;
    uint64_t params;     /* published count; 0: refused */
    const char *refusal; /* the end of the message when refused */
    double tolerance;    /* relative; 0: exact */
    bool is_unverified;  /* no published exact total found: the count is zerosim's own,
                            kept so a change to it is seen, and not counted as verified */
} RealConfig;

#define LLAMA2_7B 6738415616ull   /* meta-llama/Llama-2-7b-hf safetensors */
#define LLAMA2_13B 13015864320ull /* meta-llama/Llama-2-13b-hf safetensors */
#define LLAMA2_70B 68976648192ull /* meta-llama/Llama-2-70b-hf safetensors */
#define LLAMA32_1B 1235814400ull  /* meta-llama/Llama-3.2-1B safetensors */
#define LLAMA32_3B 3212749824ull  /* meta-llama/Llama-3.2-3B index total_size 6425499648 / 2 */
#define LLAMA3_8B 8030261248ull   /* meta-llama/Meta-Llama-3-8B safetensors */
#define GPT2_LARGE 774030080ull   /* openai-community/gpt2-large safetensors */
#define QWEN25_05B 494032768ull   /* Qwen/Qwen2.5-0.5B safetensors */
#define PHI2 2779683840ull        /* microsoft/phi-2 safetensors */

static const RealConfig real_configs[] = {
    {"DeepSeek-R1-Distill-Llama-8B.crag-meta.json", LLAMA3_8B, NULL, 0, false},
    {"Llama-2-13b-hf.hpmll.json", LLAMA2_13B, NULL, 0, false},
    {"Llama-2-70b-chat-hf.hpmll.json", LLAMA2_70B, NULL, 0, false},
    {"Llama-2-7b-hf.hpmll.json", LLAMA2_7B, NULL, 0, false},
    {"Llama-3-8B-instruct.crag-meta.json", LLAMA3_8B, NULL, 0, false},
    {"Llama-3.2-1B-Instruct.ishrink.json", LLAMA32_1B, NULL, 0, false},
    {"Llama-3.2-1B.ishrink.json", LLAMA32_1B, NULL, 0, false},
    {"Llama-3.2-1B.llm-projects.json", LLAMA32_1B, NULL, 0, false},
    {"Llama-3.2-3B.ishrink.json", LLAMA32_3B, NULL, 0, false},
    {"Meta-Llama-3-8B-Instruct.crag-meta.json", LLAMA3_8B, NULL, 0, false},
    {"Qwen2.5-0.5B-Instruct.qwen-25-api.json", QWEN25_05B, NULL, 0, false},
    {"Qwen2.5-0.5B.qwen-project.json", QWEN25_05B, NULL, 0, false},
    {"TinyLlama-1.1B-Chat-v1.0.nanoquant.json", 1100048384ull, NULL, 0, false},
    {"distilgpt2.ai-text-gen.json", 81912576ull, NULL, 0, false},
    {"gpt2-large.quantumbench.json", GPT2_LARGE, NULL, 0, false},
    {"gpt2.quantumbench.json", 124439808ull, NULL, 0, false},
    {"llama-2-13b.squeezellm.json", LLAMA2_13B, NULL, 0, false},
    {"llama-2-7b.squeezellm.json", LLAMA2_7B, NULL, 0, false},
    {"opt-1.3b.squeezellm.json", 1315758080ull, NULL, 0, false},
    {"opt-13b.squeezellm.json", 12853473280ull, NULL, 0, false},
    {"opt-2.7b.squeezellm.json", 2651596800ull, NULL, 0, false},
    {"opt-30b.squeezellm.json", 29974540288ull, NULL, 0, true},
    {"opt-6.7b.squeezellm.json", 6658473984ull, NULL, 0, false},
    {"phi-2.personal-assistant.json", PHI2, NULL, 0, false},
    {"phi-2.vlm-interp.json", PHI2, NULL, 0, false},
    {"vicuna-13b-v1.3.squeezellm.json", LLAMA2_13B, NULL, 0, false}, /* Llama-1 13B shape */
    {"vicuna-7b-v1.3.squeezellm.json", LLAMA2_7B, NULL, 0, false},   /* Llama-1 7B shape */
    {"xgen-7b-8k-base.squeezellm.json", 6895702016ull, NULL, 0, true},
    {"xgen-7b-8k-inst.squeezellm.json", 6895702016ull, NULL, 0, true},
    /* GPT-J: the model card's 6,053,381,344 counts the original JAX checkpoint; the HF
     * modules hold 6,050,882,784 (-0.041%) */
    {"gpt-j-6b.dafnet.json", 6053381344ull, NULL, 0.0005, false},
    {"gpt-j-6b.fkt-ke.json", 6053381344ull, NULL, 0.0005, false},
    {"gpt2-xl.dafnet.json", 1557611200ull, NULL, 0, false},
    {"gpt2-xl.fkt-ke.json", 1557611200ull, NULL, 0, false},
    {"llama-2-7b-hf.dafnet.json", LLAMA2_7B, NULL, 0, false},
    {"llama-7b.llamatrain.json", LLAMA2_7B, NULL, 0, false}, /* Llama-1 7B: the same shape */
    {"Hunyuan-MT-7B.nanoquant.json", 0, "got \"hunyuan_v1_dense\" (not supported)", 0, false},
    /* a 2-layer, 3200-token shrink of Qwen3-Coder-30B-A3B: 2 x 623,120,640 + 2 x 3200 x 2048
     * + 2048, by hand (no published count) */
    {"Qwen3-Coder-30B-A3B-Instruct.ellm.json", 1259350528ull, NULL, 0, true},
    {"all-MiniLM-L6-v2.crag-meta.json", 0, "got \"bert\" (encoder-only BERT, not supported)", 0, false},
    {"bge-reranker-v2-m3.crag-meta.json", 0,
     "got \"xlm-roberta\" (encoder-only XLM-RoBERTa, not supported)", 0, false},
    {"bunny-phi-2-siglip-lora.vlm-interp.json", 0, "got \"bunny-phi\" (vision-language: it has mm_vision_tower; not supported)", 0, false},
    {"t5-small.kimo.json", 0, "got \"t5\" (encoder-decoder T5, not supported)", 0, false},
    {"roberta-base.fkt-ke.json", 0, "got \"roberta\" (encoder-only RoBERTa, not supported)", 0, false},
};

static void test_params_real_configs_exact(void **state)
{
    (void)state;
    size_t n_verified = 0, n_bad = 0;
    for (size_t i = 0; i < sizeof real_configs / sizeof real_configs[0]; i++) {
        const RealConfig *rc = &real_configs[i];
        char path[512];
        snprintf(path, sizeof path, "%s/tests/inputs/real/config/%s", ZEROSIM_SOURCE_DIR,
                 rc->file);
        ModelConfig cfg;
        Err err = {0};
        int ok = model_config_load(&cfg, path, ZEROSIM_SOURCE_DIR, &err);
        if (rc->params == 0) {
            size_t n = strlen(err.msg), m = strlen(rc->refusal);
            if (ok == 0 || n < m || strcmp(err.msg + n - m, rc->refusal) != 0) {
                fprintf(stderr, "%s: expected a refusal ending %s, got: %s\n", rc->file,
                        rc->refusal, ok == 0 ? "accepted" : err.msg);
                n_bad++;
            }
        } else if (ok != 0) {
            fprintf(stderr, "%s: %s\n", rc->file, err.msg);
            n_bad++;
        } else {
            ModelParams p;
            params_count(&cfg, &p);
            n_verified += !rc->is_unverified;
            double rel = fabs((double)p.total - (double)rc->params) / (double)rc->params;
            if (rc->tolerance == 0 ? p.total != rc->params : rel > rc->tolerance) {
                fprintf(stderr, "%s: %llu parameters, published %llu (%+.4f%%)\n", rc->file,
                        (unsigned long long)p.total, (unsigned long long)rc->params,
                        100.0 * ((double)p.total - (double)rc->params) / (double)rc->params);
                n_bad++;
            }
        }
        model_config_fini(&cfg);
    }
    assert_int_equal(n_bad, 0);
    assert_true(n_verified >= 30);
}

/* The MoE presets, total and active, against hand counts from the modeling files' modules
 * (docs/MODEL.md, "Mixtures of experts") and the published figures (within 0.1% where they
 * are exact, the rounding where they are headlines). */
typedef struct MoeCount {
    const char *preset;
    uint64_t total, active;   /* by hand */
    double published_total, total_rounding, published_active;
} MoeCount;

static const MoeCount moe_counts[] = {
    /* 32 x (attn 41,943,040 + norms 8,192 + router 32,768 + 8 experts x 176,160,768)
     * + 2 x 32000 x 4096 + 4096; Mistral AI: 46.7B total, 12.9B active */
    {"mixtral-8x7b", 46702792704ull, 12879925248ull, 46.7e9, 0.0, 12.9e9},
    /* 48 x (attn 18,874,368 + q/k norms 256 + norms 4,096 + router 262,144 + 128 experts x
     * 4,718,592) + 2 x 151936 x 2048 + 2048; Qwen: 30.5B total, 3.3B active */
    {"qwen3-30b-a3b", 30532122624ull, 3353032704ull, 30.5e9, 0.05 / 30.5, 3.3e9},
    /* 61 x MLA 187,121,664 + 3 dense MLPs x 396,361,728 + 58 x (256 experts x 44,040,192 +
     * shared 44,040,192 + router 1,835,008 + bias 256) + 2 x 129280 x 7168 + 7168;
     * DeepSeek-V3 report: 671B total, 37B activated */
    {"deepseek-v3", 671026419200ull, 37552297472ull, 671e9, 0.0, 37e9},
    /* 61 x MLA 101,138,432 + 1 dense MLP 396,361,728 + 60 x (384 x 44,040,192 + 44,040,192 +
     * 2,752,512 + 384) + 2 x 163840 x 7168 + 7168 = the 1,026,470,731,056 elements of the
     * moonshotai/Kimi-K2-Instruct safetensors less their 62,498,608 fp8 block scales and
     * rotary inv_freq buffers; the model card's "1T total, 32B activated" are headlines */
    {"kimi-k2", 1026408232448ull, 32861500928ull, 1026408232448.0, 0.0, 32e9},
    /* gpt-oss: 24 x (attn 26,550,080 with biases + sinks 64 + norms 5,760 + router 92,192 with
     * bias + 32 experts x 24,891,840 with biases) + 2 x 201088 x 2880 + 2880; 36 layers of
     * 128 experts (router 368,768) for the 120b. OpenAI: 21B total, 3.6B active and 117B,
     * 5.1B; its active count leaves out the input embedding (a lookup, 579,133,440), which
     * zerosim's counts, so the headline here adds it */
    {"gpt-oss-20b", 20914757184ull, 4187440704ull, 21e9, 0.5 / 21, 3.6e9 + 579133440.0},
    {"gpt-oss-120b", 116829156672ull, 5711982912ull, 117e9, 0.5 / 117, 5.1e9 + 579133440.0},
    /* DBRX: 40 x (Wqkv 6144 x 8192 + out_proj 6144 x 6144 + norms 2 x 6144 + router 6144 x 16
     * + 16 experts x 3 x 6144 x 10752) + 2 x 100352 x 6144 + 6144; the hub safetensors'
     * 131.597B (Open LLM Leaderboard), Databricks: 132B total, 36B active */
    {"dbrx", 131596523520ull, 36469708800ull, 131.597e9, 0.0005 / 131.597, 36e9},
    /* GLM-4.5-Air: 46 x attention 109,066,240 (q 4096 x 12288 and k, v 4096 x 1024, with
     * biases; o 12288 x 4096) + norms 8,192; 1 dense MLP 134,479,872; 45 x (router 524,288
     * + bias 128 + shared expert 17,301,504 + 128 experts x 17,301,504) + 2 x 151552 x 4096
     * + 4096. Z.ai: "106 billion total parameters and 12 billion active", both without the
     * MTP layer Glm4MoeForCausalLM does not build; the active headline leaves out the
     * embedding and the head (1,241,513,984 together), which the headline here adds */
    {"glm-4.5-air", 106852251264ull, 13424129664ull, 106e9, 1.0 / 106, 12e9 + 1241513984.0},
};

static void test_params_moe_presets_total_and_active(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof moe_counts / sizeof moe_counts[0]; i++) {
        const MoeCount *mc = &moe_counts[i];
        ModelConfig cfg;
        ModelParams p;
        load(mc->preset, &cfg);
        params_count(&cfg, &p);
        if (p.total != mc->total || p.active != mc->active)
            fprintf(stderr, "%s: total %llu active %llu\n", mc->preset,
                    (unsigned long long)p.total, (unsigned long long)p.active);
        assert_int_equal(p.total, mc->total);
        assert_int_equal(p.active, mc->active);
        /* within 0.1%, or within the rounding of a headline figure ("30.5B") */
        double tol_total = mc->total_rounding > 0.001 ? mc->total_rounding : 0.001;
        assert_true(fabs((double)p.total - mc->published_total) / mc->published_total <=
                    tol_total);
        /* active counts are published as headlines ("3.3B", "32B"), some beyond the rounding
         * of their last digit (Qwen3 +1.6%, Kimi-K2 +2.7%, workloads/models/SOURCES.md): the
         * oracle of the active count is the hand count above; the headline is only a shape
         * check */
        assert_true(fabs((double)p.active - mc->published_active) / mc->published_active <
                    0.05);
        model_config_fini(&cfg);
    }
}

/* DeepSeek-V3 module by module: the MoE block and MLA are what the counts above add up. */
static void test_params_deepseek_v3_modules(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load("deepseek-v3", &cfg);
    params_count(&cfg, &p);
    const uint64_t h = 7168;
    assert_int_equal(p.n_moe_layers, 58);
    assert_int_equal(p.expert, 3 * h * 2048);
    assert_int_equal(p.moe_replicated, h * 256 + 256 + 3 * h * 2048);
    assert_int_equal(p.dense_mlp, 3 * h * 18432);
    /* q_a, q_a norm, q_b, kv_a, kv_a norm, kv_b, o_proj, two RMSNorms */
    assert_int_equal(p.per_layer, h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 +
                                      512 * 128 * 256 + 128 * 128 * h + 2 * h);
    assert_int_equal(p.experts_total, 58ull * 256 * 3 * h * 2048);
    assert_false(model_config_is_moe_layer(&cfg, 2));
    assert_true(model_config_is_moe_layer(&cfg, 3));
    /* the router's score-correction bias (256) stays resident under ZeRO-3's threshold */
    assert_int_equal(params_persistent(&p, 61, 100000) - params_persistent(&p, 0, 100000),
                     61 * (1536 + 512 + 2 * h) + 58 * 256);
    model_config_fini(&cfg);
}

/* Every file of the corpus is in the table above. */
static void test_params_real_configs_all_listed(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/tests/inputs/real/config", ZEROSIM_SOURCE_DIR);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    size_t n_files = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        if (e->d_name[0] == '.')
            continue;
        n_files++;
        bool is_listed = false;
        for (size_t i = 0; i < sizeof real_configs / sizeof real_configs[0]; i++)
            is_listed = is_listed || strcmp(real_configs[i].file, e->d_name) == 0;
        if (!is_listed)
            fprintf(stderr, "%s is not in real_configs\n", e->d_name);
        assert_true(is_listed);
    }
    closedir(dir);
    assert_int_equal(n_files, sizeof real_configs / sizeof real_configs[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_count_matches_published),
        cmocka_unit_test(test_params_count_gpt2_by_hand),
        cmocka_unit_test(test_params_persistent_counts_vectors_only),
        cmocka_unit_test(test_params_count_each_family),
        cmocka_unit_test(test_params_count_bigcode_by_hand),
        cmocka_unit_test(test_params_count_olmoe_granite_by_hand),
        cmocka_unit_test(test_params_count_phimoe_by_hand),
        cmocka_unit_test(test_params_real_configs_exact),
        cmocka_unit_test(test_params_moe_presets_total_and_active),
        cmocka_unit_test(test_params_deepseek_v3_modules),
        cmocka_unit_test(test_params_real_configs_all_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
