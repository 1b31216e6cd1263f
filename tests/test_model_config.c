/*
 * test_model_config.c - HuggingFace config.json -> ModelConfig (inputs/model_config.c).
 *
 * Each supported family parses from the text HuggingFace publishes; an unknown model_type is
 * read by its key style with a note; shape errors, typos, wrong types and missing keys fail
 * with the exact messages users see.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/model_config.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static bool has_item(const StrList *list, const char *item)
{
    for (size_t i = 0; i < list->n_items; i++)
        if (strcmp(list->items[i], item) == 0)
            return true;
    return false;
}

static void dump(const StrList *list, const char *what)
{
    for (size_t i = 0; i < list->n_items; i++)
        fprintf(stderr, "  %s: %s\n", what, list->items[i]);
}

static void assert_has(const StrList *list, const char *item)
{
    if (!has_item(list, item)) {
        fprintf(stderr, "missing \"%s\" in:\n", item);
        dump(list, "item");
    }
    assert_true(has_item(list, item));
}

static void parse_ok(const char *text, ModelConfig *cfg)
{
    Err err = {0};
    int rc = model_config_parse(cfg, "config.json", text, strlen(text), &err);
    if (rc != 0)
        fail_msg("unexpected error: %s", err.msg);
    assert_false(err.is_set);
}

static void assert_parse_fails(const char *text, const char *expected)
{
    ModelConfig cfg;
    Err err = {0};
    assert_int_equal(model_config_parse(&cfg, "config.json", text, strlen(text), &err), -1);
    assert_true(err.is_set);
    assert_string_equal(err.msg, expected);
    model_config_fini(&cfg);
}

/* ------------------------------------------------------------------------------ families */

/* GPT-2 XL as published (n_inner null). */
static const char gpt2_xl[] =
    "{\n"
    "  \"architectures\": [\"GPT2LMHeadModel\"],\n"
    "  \"model_type\": \"gpt2\",\n"
    "  \"n_embd\": 1600,\n"
    "  \"n_layer\": 48,\n"
    "  \"n_head\": 25,\n"
    "  \"n_positions\": 1024,\n"
    "  \"n_ctx\": 1024,\n"
    "  \"vocab_size\": 50257,\n"
    "  \"n_inner\": null,\n"
    "  \"activation_function\": \"gelu_new\",\n"
    "  \"layer_norm_epsilon\": 1e-05,\n"
    "  \"attn_pdrop\": 0.1,\n"
    "  \"resid_pdrop\": 0.1\n"
    "}\n";

static void test_gpt2(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok(gpt2_xl, &c);
    assert_int_equal(c.family, MODEL_FAMILY_GPT2);
    assert_string_equal(c.model_type, "gpt2");
    assert_string_equal(c.name, "config.json");
    assert_int_equal(c.hidden, 1600);
    assert_int_equal(c.n_layers, 48);
    assert_int_equal(c.n_heads, 25);
    assert_int_equal(c.n_kv_heads, 25);
    assert_int_equal(c.head_dim, 64);
    assert_int_equal(c.ffn_hidden, 6400);
    assert_int_equal(c.vocab, 50257);
    assert_int_equal(c.max_seq, 1024);
    assert_false(c.is_gated_mlp);
    assert_true(c.has_mlp_bias);
    assert_int_equal(c.norm, NORM_AND_BIAS);
    assert_true(c.position_rows > 0);
    assert_true(c.is_tied);
    assert_true(c.is_qkv_fused);
    assert_true(c.is_gelu_new);
    assert_true(model_config_has_dropout(&c) && model_config_has_attention_dropout(&c));
    /* Defaults applied are recorded with their reason. */
    assert_has(&c.defaults_used, "n_inner = 6400 (4 x n_embd, GPT2Config)");
    assert_has(&c.defaults_used, "tie_word_embeddings = true (GPT2Config default)");
    assert_int_equal(c.defaults_used.n_items, 2);
    /* Keys HuggingFace defines that change nothing (epsilon, dropout) are silent. */
    assert_int_equal(c.not_modelled.n_items, 0);
    assert_int_equal(c.unknown_keys.n_items, 0);
    model_config_fini(&c);
}

/* GPT-2 with every optional key absent: GPT2Config defaults. */
static void test_gpt2_defaults(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, \"n_head\": 12, "
             "\"n_inner\": 3000}",
             &c);
    assert_int_equal(c.ffn_hidden, 3000);
    assert_int_equal(c.max_seq, 1024);
    assert_int_equal(c.vocab, 50257);
    assert_has(&c.defaults_used, "n_positions = 1024 (GPT2Config default)");
    assert_has(&c.defaults_used, "vocab_size = 50257 (GPT2Config default)");
    assert_false(has_item(&c.defaults_used, "n_inner = 3072 (4 x n_embd, GPT2Config)"));
    assert_true(c.is_gelu_new); /* GPT2Config's activation_function */
    assert_has(&c.defaults_used, "resid_pdrop = 0.1 (GPT2Config default)");
    assert_has(&c.defaults_used, "attn_pdrop = 0.1 (GPT2Config default)");
    assert_true(model_config_has_dropout(&c) && model_config_has_attention_dropout(&c));
    model_config_fini(&c);
    /* GPT-BigCode's dropouts as its file sets them; 0.0 launches nothing and keeps no mask */
    parse_ok("{\"model_type\": \"gpt_bigcode\", \"n_embd\": 768, \"n_layer\": 12, "
             "\"n_head\": 12, \"resid_pdrop\": 0.0, \"attn_pdrop\": 0.1}",
             &c);
    assert_false(model_config_has_dropout(&c));
    assert_true(model_config_has_attention_dropout(&c));
    model_config_fini(&c);
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, "
                       "\"n_head\": 12, \"resid_pdrop\": -0.1}",
                       "config.json: resid_pdrop: expected number in [0, 1], got -0.1");
    /* another of transformers' activations is one kernel */
    parse_ok("{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, \"n_head\": 12, "
             "\"activation_function\": \"gelu\"}",
             &c);
    assert_false(c.is_gelu_new);
    model_config_fini(&c);
    /* GPTBigCodeConfig defaults to gelu_pytorch_tanh (F.gelu) */
    parse_ok("{\"model_type\": \"gpt_bigcode\", \"n_embd\": 768, \"n_layer\": 12, "
             "\"n_head\": 12}",
             &c);
    assert_false(c.is_gelu_new);
    model_config_fini(&c);
}

/* Llama 2 70B: grouped-query attention with 8 KV heads. */
static const char llama2_70b[] =
    "{\n"
    "  \"architectures\": [\"LlamaForCausalLM\"],\n"
    "  \"hidden_act\": \"silu\",\n"
    "  \"hidden_size\": 8192,\n"
    "  \"intermediate_size\": 28672,\n"
    "  \"max_position_embeddings\": 4096,\n"
    "  \"model_type\": \"llama\",\n"
    "  \"num_attention_heads\": 64,\n"
    "  \"num_hidden_layers\": 80,\n"
    "  \"num_key_value_heads\": 8,\n"
    "  \"rms_norm_eps\": 1e-05,\n"
    "  \"rope_scaling\": null,\n"
    "  \"tie_word_embeddings\": false,\n"
    "  \"vocab_size\": 32000\n"
    "}\n";

static void test_llama_gqa(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok(llama2_70b, &c);
    assert_int_equal(c.family, MODEL_FAMILY_LLAMA);
    assert_int_equal(c.hidden, 8192);
    assert_int_equal(c.n_layers, 80);
    assert_int_equal(c.n_heads, 64);
    assert_int_equal(c.n_kv_heads, 8);
    assert_int_equal(c.head_dim, 128);
    assert_int_equal(c.ffn_hidden, 28672);
    assert_int_equal(c.vocab, 32000);
    assert_int_equal(c.max_seq, 4096);
    assert_true(c.is_gated_mlp);
    assert_false(c.has_mlp_bias);
    assert_true(c.norm != NORM_AND_BIAS);
    assert_int_equal(c.position_rows, 0);
    assert_false(c.is_tied);
    assert_false(c.is_qkv_fused);
    assert_int_equal(c.defaults_used.n_items, 0);
    assert_int_equal(c.not_modelled.n_items + c.unknown_keys.n_items, 0);
    model_config_fini(&c);
}

/* Without num_key_value_heads a Llama has multi-head attention; head_dim may be explicit. */
static void test_llama_defaults_and_head_dim(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"model_type\": \"mistral\", \"hidden_size\": 5120, \"num_hidden_layers\": 40, "
             "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 128, "
             "\"intermediate_size\": 14336, \"vocab_size\": 131072, "
             "\"max_position_embeddings\": 131072, \"tie_word_embeddings\": false}",
             &c);
    assert_int_equal(c.family, MODEL_FAMILY_LLAMA);
    assert_int_equal(c.head_dim, 128); /* not 5120 / 32 = 160 */
    assert_int_equal(c.n_kv_heads, 8);
    model_config_fini(&c);

    parse_ok("{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, "
             "\"num_attention_heads\": 32, \"intermediate_size\": 11008}",
             &c);
    assert_int_equal(c.n_kv_heads, 32);
    assert_int_equal(c.vocab, 32000);
    assert_int_equal(c.max_seq, 2048);
    assert_has(&c.defaults_used, "num_key_value_heads = 32 (= num_attention_heads, LlamaConfig)");
    assert_has(&c.defaults_used, "max_position_embeddings = 2048 (LlamaConfig default)");
    assert_has(&c.defaults_used, "vocab_size = 32000 (LlamaConfig default)");
    assert_has(&c.defaults_used, "tie_word_embeddings = false (LlamaConfig default)");
    model_config_fini(&c);
}

static void test_llama_bias(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
             "\"num_attention_heads\": 4, \"intermediate_size\": 256, "
             "\"attention_bias\": true, \"mlp_bias\": true}",
             &c);
    assert_true(c.has_mlp_bias && c.has_qkv_bias && c.has_out_bias);
    model_config_fini(&c);
    /* attention_bias alone: q, k, v and o carry biases, the MLP does not (modeling_llama.py). */
    parse_ok("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
             "\"num_attention_heads\": 4, \"intermediate_size\": 256, "
             "\"attention_bias\": true}",
             &c);
    assert_true(c.has_qkv_bias && c.has_out_bias);
    assert_false(c.has_mlp_bias);
    model_config_fini(&c);
}

/* GPT-NeoX 20B. */
static const char neox_20b[] =
    "{\n"
    "  \"architectures\": [\"GPTNeoXForCausalLM\"],\n"
    "  \"hidden_act\": \"gelu_fast\",\n"
    "  \"hidden_size\": 6144,\n"
    "  \"intermediate_size\": 24576,\n"
    "  \"layer_norm_eps\": 1e-05,\n"
    "  \"max_position_embeddings\": 2048,\n"
    "  \"model_type\": \"gpt_neox\",\n"
    "  \"num_attention_heads\": 64,\n"
    "  \"num_hidden_layers\": 44,\n"
    "  \"rotary_pct\": 0.25,\n"
    "  \"tie_word_embeddings\": false,\n"
    "  \"use_parallel_residual\": true,\n"
    "  \"vocab_size\": 50432\n"
    "}\n";

/* OPT's dropout (OPTConfig default 0.1) after the attention and the MLP: on unless the file
 * sets it to 0; a probability outside [0, 1] is refused. */
static void test_opt_dropout(void **state)
{
    (void)state;
    ModelConfig c;
    const char *base = "{\"model_type\": \"opt\", \"hidden_size\": 768, \"num_hidden_layers\": 12, "
                       "\"num_attention_heads\": 12";
    char text[256];
    snprintf(text, sizeof text, "%s}", base);
    parse_ok(text, &c);
    assert_true(c.has_hidden_dropout);
    assert_has(&c.defaults_used, "dropout = 0.1 (OPTConfig default)");
    model_config_fini(&c);
    snprintf(text, sizeof text, "%s, \"dropout\": 0.0}", base);
    parse_ok(text, &c);
    assert_false(c.has_hidden_dropout);
    model_config_fini(&c);
    snprintf(text, sizeof text, "%s, \"dropout\": 2}", base);
    assert_parse_fails(text, "config.json: dropout: expected number in [0, 1], got 2");
}

static void test_neox(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok(neox_20b, &c);
    assert_int_equal(c.family, MODEL_FAMILY_NEOX);
    assert_int_equal(c.hidden, 6144);
    assert_int_equal(c.n_layers, 44);
    assert_int_equal(c.n_heads, 64);
    assert_int_equal(c.n_kv_heads, 64);
    assert_int_equal(c.head_dim, 96);
    assert_int_equal(c.ffn_hidden, 24576);
    assert_int_equal(c.vocab, 50432);
    assert_int_equal(c.max_seq, 2048);
    assert_false(c.is_gated_mlp);
    assert_true(c.has_mlp_bias);
    assert_int_equal(c.norm, NORM_AND_BIAS);
    assert_int_equal(c.position_rows, 0);
    assert_false(c.is_tied);
    assert_true(c.is_qkv_fused);
    assert_has(&c.defaults_used, "attention_bias = true (GPTNeoXConfig default)");
    assert_int_equal(c.not_modelled.n_items + c.unknown_keys.n_items, 0);
    model_config_fini(&c);
}

/* MPT-7B: d_model / n_layers / expansion_ratio, no biases, tied. */
static const char mpt_7b[] =
    "{\n"
    "  \"architectures\": [\"MPTForCausalLM\"],\n"
    "  \"attn_config\": {\"alibi\": true, \"attn_impl\": \"torch\"},\n"
    "  \"d_model\": 4096,\n"
    "  \"expansion_ratio\": 4,\n"
    "  \"max_seq_len\": 2048,\n"
    "  \"model_type\": \"mpt\",\n"
    "  \"n_heads\": 32,\n"
    "  \"n_layers\": 32,\n"
    "  \"no_bias\": true,\n"
    "  \"norm_type\": \"low_precision_layernorm\",\n"
    "  \"vocab_size\": 50432\n"
    "}\n";

static void test_mpt(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok(mpt_7b, &c);
    assert_int_equal(c.family, MODEL_FAMILY_MPT);
    assert_int_equal(c.hidden, 4096);
    assert_int_equal(c.n_layers, 32);
    assert_int_equal(c.n_heads, 32);
    assert_int_equal(c.n_kv_heads, 32);
    assert_int_equal(c.head_dim, 128);
    assert_int_equal(c.ffn_hidden, 16384);
    assert_int_equal(c.vocab, 50432);
    assert_int_equal(c.max_seq, 2048);
    assert_false(c.has_mlp_bias);
    assert_true(c.norm != NORM_AND_BIAS);
    assert_true(c.is_tied);
    assert_true(c.is_qkv_fused);
    assert_int_equal(c.defaults_used.n_items, 0);
    assert_int_equal(c.not_modelled.n_items + c.unknown_keys.n_items, 0);
    model_config_fini(&c);
}

/* Without model_type, architectures names the family; with neither, the key style does, and
 * a note says so. */
static void test_family_without_model_type(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"architectures\": [\"Qwen2ForCausalLM\"], \"hidden_size\": 896, "
             "\"num_hidden_layers\": 24, \"num_attention_heads\": 14, "
             "\"num_key_value_heads\": 2, \"intermediate_size\": 4864, "
             "\"vocab_size\": 151936, \"tie_word_embeddings\": true}",
             &c);
    assert_int_equal(c.family, MODEL_FAMILY_QWEN2);
    assert_string_equal(c.model_type, "qwen2");
    assert_true(c.has_qkv_bias);
    assert_has(&c.defaults_used, "model_type = qwen2 (from architectures Qwen2ForCausalLM)");
    model_config_fini(&c);

    parse_ok("{\"d_model\": 2048, \"n_layers\": 24, \"n_heads\": 16}", &c);
    assert_int_equal(c.family, MODEL_FAMILY_MPT);
    assert_string_equal(c.model_type, "");
    assert_int_equal(c.ffn_hidden, 8192);
    assert_has(&c.defaults_used, "architecture read as MPT style (d_model): neither model_type "
                                 "nor architectures given");
    assert_has(&c.defaults_used, "expansion_ratio = 4 (MptConfig default)");
    model_config_fini(&c);
}

/* A family zerosim cannot model is refused in one line that names it, never read as Llama. */
static void test_unsupported_families_refused(void **state)
{
    (void)state;
    assert_parse_fails("{\"model_type\": \"t5\", \"d_model\": 512, \"num_layers\": 6}",
                       "config.json: model_type: expected a decoder-only family zerosim models, "
                       "got \"t5\" (encoder-decoder T5, not supported)");
    assert_parse_fails("{\"model_type\": \"llava\", \"text_config\": {}, "
                       "\"vision_config\": {}}",
                       "config.json: model_type: expected a decoder-only family zerosim models, "
                       "got \"llava\" (vision-language LLaVA (a vision tower beside "
                       "text_config), not supported)");
    assert_parse_fails("{\"model_type\": \"jamba\", \"hidden_size\": 4096}",
                       "config.json: model_type: expected a decoder-only family zerosim models, "
                       "got \"jamba\" (hybrid state-space / mixture-of-experts Jamba, not "
                       "supported)");
    /* an expert count on a dense family would be counted as one dense MLP: refused */
    assert_parse_fails("{\"model_type\": \"llama\", \"hidden_size\": 64, "
                       "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                       "\"intermediate_size\": 128, \"num_local_experts\": 8}",
                       "config.json: num_local_experts: expected no mixture-of-experts key in a "
                       "Llama config (its modeling file builds one dense MLP per layer), got "
                       "\"num_local_experts\" (give the MoE family's model_type: mixtral, "
                       "qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, gpt_oss, olmoe, "
                       "granitemoe, dbrx, phimoe, glm4_moe)");
    /* a router zerosim does not model changes the architecture: refused naming the key */
    assert_parse_fails("{\"model_type\": \"deepseek_v3\", \"hidden_size\": 64, "
                       "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                       "\"intermediate_size\": 128, \"moe_intermediate_size\": 32, "
                       "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
                       "\"kv_lora_rank\": 16, \"qk_nope_head_dim\": 16, "
                       "\"qk_rope_head_dim\": 8, \"v_head_dim\": 16, "
                       "\"topk_method\": \"hash\"}",
                       "config.json: topk_method: expected one of greedy, group_limited_greedy, "
                       "noaux_tc, got \"hash\" (a router zerosim does not model)");
    assert_parse_fails("{\"model_type\": \"mixtral\", \"hidden_size\": 64, "
                       "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                       "\"intermediate_size\": 128, \"num_local_experts\": 4, "
                       "\"num_experts_per_tok\": 5}",
                       "config.json: num_experts_per_tok: expected an integer in [1, 4] (the "
                       "experts), got 5");
    assert_parse_fails("{\"model_type\": \"megatron_gpt\", \"n_embd\": 1024}",
                       "config.json: model_type: expected a family zerosim models (gpt2 "
                       "gpt_bigcode gptj gpt_neox opt bloom falcon llama mistral qwen2 qwen3 "
                       "gemma gemma2 gemma3_text phi phi3 olmo olmo2 olmo3 starcoder2 mpt mixtral "
                       "qwen2_moe qwen3_moe deepseek_v2 deepseek_v3 kimi_k2 gpt_oss olmoe "
                       "granite granitemoe granitemoeshared dbrx phimoe glm4_moe), got "
                       "\"megatron_gpt\" (not supported)");
    assert_parse_fails("{\"architectures\": [\"T5ForConditionalGeneration\"], \"d_model\": 512}",
                       "config.json: architectures: expected a family zerosim models (gpt2 "
                       "gpt_bigcode gptj gpt_neox opt bloom falcon llama mistral qwen2 qwen3 "
                       "gemma gemma2 gemma3_text phi phi3 olmo olmo2 olmo3 starcoder2 mpt mixtral "
                       "qwen2_moe qwen3_moe deepseek_v2 deepseek_v3 kimi_k2 gpt_oss olmoe "
                       "granite granitemoe granitemoeshared dbrx phimoe glm4_moe), got "
                       "\"T5ForConditionalGeneration\" (not supported)");
}

/* An open format: keys zerosim does not read are at most a warning. */
static void test_unknown_keys_are_warnings(void **state)
{
    (void)state;
    ModelConfig c;
    /* Qwen2's own keys, an unknown key and a typo of a key zerosim does not read */
    parse_ok("{\"model_type\": \"qwen2\", \"hidden_size\": 896, \"num_hidden_layers\": 24, "
             "\"num_attention_heads\": 14, \"num_key_value_heads\": 2, "
             "\"intermediate_size\": 4864, \"max_window_layers\": 21, "
             "\"use_sliding_window\": false, \"sliding_window\": 32768, "
             "\"custom_pipelines\": {}, \"my_own_key\": 1, \"layer_norm_epsilom\": 1e-5, "
             "\"quantization_config\": {\"bits\": 4}}",
             &c);
    assert_int_equal(c.unknown_keys.n_items, 2);
    assert_string_equal(c.unknown_keys.items[0], "my_own_key");
    assert_string_equal(c.unknown_keys.items[1], "layer_norm_epsilom");
    assert_int_equal(c.not_modelled.n_items, 1);
    assert_string_equal(c.not_modelled.items[0],
                        "quantization_config (the result assumes 16-bit or fp32 weights as the "
                        "DeepSpeed config says; quantized (QLoRA-style) training is not "
                        "modelled)");
    assert_int_equal(c.n_sliding_layers, 0); /* use_sliding_window false */
    model_config_fini(&c);
    /* a checkpoint of another head is read with the LM head, and says so */
    parse_ok("{\"architectures\": [\"LlamaForSequenceClassification\"], \"model_type\": "
             "\"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
             "\"num_attention_heads\": 4, \"intermediate_size\": 128}",
             &c);
    assert_int_equal(c.not_modelled.n_items, 1);
    assert_string_equal(c.not_modelled.items[0],
                        "architectures LlamaForSequenceClassification (the result assumes "
                        "causal-LM training with an LM head)");
    model_config_fini(&c);
}

/* Sliding-window layers, by layer_types or each family's rule. */
static void test_sliding_windows(void **state)
{
    (void)state;
    ModelConfig c;
    /* Mistral: every layer */
    parse_ok("{\"model_type\": \"mistral\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, "
             "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
             "\"intermediate_size\": 14336, \"sliding_window\": 4096}",
             &c);
    assert_int_equal(c.sliding_window, 4096);
    assert_int_equal(c.n_sliding_layers, 32);
    model_config_fini(&c);
    /* Mistral v0.3 and Llama: none */
    parse_ok("{\"model_type\": \"mistral\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, "
             "\"num_attention_heads\": 32, \"intermediate_size\": 14336, "
             "\"sliding_window\": null}",
             &c);
    assert_int_equal(c.n_sliding_layers, 0);
    model_config_fini(&c);
    /* Qwen2 with use_sliding_window: layers from max_window_layers up */
    parse_ok("{\"model_type\": \"qwen2\", \"hidden_size\": 1536, \"num_hidden_layers\": 28, "
             "\"num_attention_heads\": 12, \"num_key_value_heads\": 2, "
             "\"intermediate_size\": 8960, \"use_sliding_window\": true, "
             "\"sliding_window\": 4096, \"max_window_layers\": 21}",
             &c);
    assert_int_equal(c.n_sliding_layers, 7);
    model_config_fini(&c);
    /* Gemma 2: alternate layers, sliding_window 4096 by default (recorded) */
    parse_ok("{\"model_type\": \"gemma2\", \"hidden_size\": 2304, \"num_hidden_layers\": 26, "
             "\"num_attention_heads\": 8, \"num_key_value_heads\": 4, "
             "\"intermediate_size\": 9216}",
             &c);
    assert_int_equal(c.n_sliding_layers, 13);
    assert_has(&c.defaults_used, "sliding_window = 4096 (Gemma2Config default)");
    model_config_fini(&c);
    /* Gemma 3: five of every six layers */
    parse_ok("{\"model_type\": \"gemma3_text\", \"hidden_size\": 1152, "
             "\"num_hidden_layers\": 26, \"num_attention_heads\": 4, "
             "\"num_key_value_heads\": 1, \"intermediate_size\": 6912, "
             "\"sliding_window\": 512, \"sliding_window_pattern\": 6}",
             &c);
    assert_int_equal(c.sliding_window, 512);
    assert_int_equal(c.n_sliding_layers, 22);
    model_config_fini(&c);
    /* layer_types, as transformers >= 4.53 writes it, wins */
    parse_ok("{\"model_type\": \"olmo3\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
             "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"sliding_window\": 16, "
             "\"layer_types\": [\"sliding_attention\", \"full_attention\", "
             "\"sliding_attention\", \"full_attention\"]}",
             &c);
    assert_int_equal(c.n_sliding_layers, 2);
    assert_int_equal(c.sliding_window, 16);
    model_config_fini(&c);
    assert_parse_fails("{\"model_type\": \"olmo3\", \"hidden_size\": 64, "
                       "\"num_hidden_layers\": 4, \"num_attention_heads\": 4, "
                       "\"intermediate_size\": 128, \"layer_types\": [\"full_attention\"]}",
                       "config.json: layer_types: expected an array of num_hidden_layers = 4 "
                       "strings, got an array of 1");
}

/* OLMoE, Granite, GraniteMoE and Phi-3.5-MoE (modeling_olmoe.py, modeling_granite.py,
 * modeling_granitemoe.py, modeling_granitemoeshared.py, modeling_phimoe.py): each configuration class's defaults
 * where the file is silent, Granite's multipliers known but not modelled. */
static void test_olmoe_and_granite(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"model_type\": \"olmoe\", \"hidden_size\": 2048, \"num_hidden_layers\": 16, "
             "\"num_attention_heads\": 16, \"intermediate_size\": 1024, \"clip_qkv\": null, "
             "\"norm_topk_prob\": false, \"router_aux_loss_coef\": 0.01}",
             &c);
    assert_true(c.family == MODEL_FAMILY_OLMOE);
    assert_true(c.qk_norm == QK_NORM_FULL);
    assert_true(c.is_gated_mlp && !c.is_tied && !c.has_qkv_bias);
    assert_int_equal(c.n_kv_heads, 16);
    assert_int_equal(c.vocab, 50304);
    assert_int_equal(c.max_seq, 4096);
    assert_int_equal(c.moe.n_experts, 64);
    assert_int_equal(c.moe.top_k, 8);
    assert_int_equal(c.moe.expert_ffn, 1024);
    assert_int_equal(c.moe.shared_ffn, 0);
    assert_int_equal(c.moe.n_moe_layers, 16);
    assert_false(c.moe.has_router_bias);
    assert_has(&c.defaults_used, "num_experts = 64 (OlmoeConfig default)");
    assert_has(&c.defaults_used, "max_position_embeddings = 4096 (OlmoeConfig default)");
    model_config_fini(&c);
    /* Granite 3: Llama's layer; the four multipliers are known keys, not unknown ones */
    parse_ok("{\"architectures\": [\"GraniteForCausalLM\"], \"hidden_size\": 4096, "
             "\"num_hidden_layers\": 40, \"num_attention_heads\": 32, "
             "\"num_key_value_heads\": 8, \"intermediate_size\": 12800, "
             "\"vocab_size\": 49155, \"tie_word_embeddings\": true, "
             "\"embedding_multiplier\": 12.0, \"residual_multiplier\": 0.22, "
             "\"attention_multiplier\": 0.0078125, \"logits_scaling\": 16.0}",
             &c);
    assert_true(c.family == MODEL_FAMILY_GRANITE);
    assert_string_equal(c.model_type, "granite");
    assert_true(c.is_tied && c.is_gated_mlp);
    assert_int_equal(c.moe.n_experts, 0);
    assert_int_equal(c.unknown_keys.n_items, 0);
    model_config_fini(&c);
    /* GraniteMoE: GraniteMoeConfig's 8 experts, 2 per token, when the file is silent */
    parse_ok("{\"model_type\": \"granitemoe\", \"hidden_size\": 1536, "
             "\"num_hidden_layers\": 32, \"num_attention_heads\": 24, "
             "\"num_key_value_heads\": 8, \"intermediate_size\": 512}",
             &c);
    assert_true(c.family == MODEL_FAMILY_GRANITE_MOE);
    assert_int_equal(c.moe.n_experts, 8);
    assert_int_equal(c.moe.top_k, 2);
    assert_int_equal(c.moe.expert_ffn, 512);
    assert_int_equal(c.moe.n_moe_layers, 32);
    assert_int_equal(c.moe.shared_ffn, 0);
    model_config_fini(&c);
    /* GraniteMoeShared: a shared MLP of shared_intermediate_size beside the experts */
    parse_ok("{\"model_type\": \"granitemoeshared\", \"hidden_size\": 1024, "
             "\"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
             "\"num_key_value_heads\": 8, \"intermediate_size\": 512, "
             "\"num_local_experts\": 32, \"num_experts_per_tok\": 8, "
             "\"shared_intermediate_size\": 1024}",
             &c);
    assert_true(c.family == MODEL_FAMILY_GRANITE_MOE);
    assert_int_equal(c.moe.n_experts, 32);
    assert_int_equal(c.moe.shared_ffn, 1024);
    assert_false(c.moe.has_shared_gate);
    model_config_fini(&c);
    /* Phi-3.5-MoE: PhimoeConfig's 16 experts, 2 per token, vocabulary 32064; LayerNorms
     * with bias; the head's bias only with lm_head_bias */
    parse_ok("{\"architectures\": [\"PhiMoEForCausalLM\"], \"hidden_size\": 4096, "
             "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
             "\"num_key_value_heads\": 8, \"intermediate_size\": 6400}",
             &c);
    assert_true(c.family == MODEL_FAMILY_PHIMOE);
    assert_true(c.norm == NORM_AND_BIAS && !c.has_lm_head_bias && !c.has_qkv_bias);
    assert_int_equal(c.moe.n_experts, 16);
    assert_int_equal(c.moe.top_k, 2);
    assert_int_equal(c.vocab, 32064);
    assert_int_equal(c.max_seq, 131072);
    assert_has(&c.defaults_used, "lm_head_bias = false (PhimoeConfig default)");
    model_config_fini(&c);
    assert_parse_fails("{\"model_type\": \"olmoe\", \"hidden_size\": 64, "
                       "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                       "\"intermediate_size\": 32, \"num_experts\": 4, "
                       "\"num_experts_per_tok\": 5}",
                       "config.json: num_experts_per_tok: expected an integer in [1, 4] (the "
                       "experts), got 5");
}

/* DBRX: the shape keys in its two sub-configurations, each checked as DbrxAttentionConfig
 * and DbrxFFNConfig check theirs, with their defaults; a tied head refused as DbrxConfig
 * refuses it. */
static void test_dbrx(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"model_type\": \"dbrx\", \"d_model\": 6144, \"n_heads\": 48, "
             "\"n_layers\": 40, \"vocab_size\": 100352, \"max_seq_len\": 32768, "
             "\"attn_config\": {\"clip_qkv\": 8, \"kv_n_heads\": 8, \"rope_theta\": 500000}, "
             "\"ffn_config\": {\"ffn_hidden_size\": 10752, \"moe_num_experts\": 16, "
             "\"moe_top_k\": 4, \"moe_loss_weight\": 0.05}, \"resid_pdrop\": 0.0}",
             &c);
    assert_true(c.family == MODEL_FAMILY_DBRX);
    assert_true(c.is_qkv_fused && c.is_gated_mlp && !c.is_tied && !c.has_qkv_bias);
    assert_true(c.norm == NORM_WEIGHT);
    assert_false(model_config_has_dropout(&c));
    assert_int_equal(c.n_kv_heads, 8);
    assert_int_equal(c.moe.n_experts, 16);
    assert_int_equal(c.moe.top_k, 4);
    assert_int_equal(c.moe.expert_ffn, 10752);
    assert_int_equal(c.moe.n_moe_layers, 40);
    model_config_fini(&c);
    /* every default: one KV head, 4 experts of 3584, top 1; resid_pdrop drops in training */
    parse_ok("{\"model_type\": \"dbrx\", \"d_model\": 64, \"n_heads\": 4, \"n_layers\": 2, "
             "\"resid_pdrop\": 0.1}",
             &c);
    assert_int_equal(c.n_kv_heads, 1);
    assert_int_equal(c.moe.n_experts, 4);
    assert_int_equal(c.moe.top_k, 1);
    assert_int_equal(c.moe.expert_ffn, 3584);
    assert_true(model_config_has_dropout(&c));
    assert_has(&c.defaults_used, "kv_n_heads = 1 (DbrxAttentionConfig default)");
    model_config_fini(&c);
    assert_parse_fails("{\"model_type\": \"dbrx\", \"d_model\": 64, \"n_heads\": 4, "
                       "\"n_layers\": 2, \"ffn_config\": {\"moe_num_expert\": 4}}",
                       "config.json: ffn_config.moe_num_expert: expected a known key, got "
                       "unknown key \"moe_num_expert\" (did you mean \"moe_num_experts\"?)");
    assert_parse_fails("{\"model_type\": \"dbrx\", \"d_model\": 64, \"n_heads\": 4, "
                       "\"n_layers\": 2, \"ffn_config\": {\"moe_num_experts\": 4, "
                       "\"moe_top_k\": 5}}",
                       "config.json: ffn_config.moe_top_k: expected an integer in [1, 4] (the "
                       "experts), got 5");
    assert_parse_fails("{\"model_type\": \"dbrx\", \"d_model\": 64, \"n_heads\": 4, "
                       "\"n_layers\": 2, \"tie_word_embeddings\": true}",
                       "config.json: tie_word_embeddings: expected false (DbrxConfig raises "
                       "\"tie_word_embeddings is not supported for DBRX models\"), got true");
}

/* GLM-4.5 (glm4_moe): Glm4MoeConfig's defaults (GLM-4.5-Air's shape) where the file is
 * silent; q/k/v biases and per-head q/k norms only when the file turns them on; one expert
 * group limits no routing, so n_group 1 is no assumption. */
static void test_glm4_moe(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"model_type\": \"glm4_moe\", \"hidden_size\": 4096, "
             "\"num_hidden_layers\": 46, \"num_attention_heads\": 96, \"head_dim\": 128, "
             "\"n_group\": 1, \"topk_group\": 1}",
             &c);
    assert_true(c.family == MODEL_FAMILY_GLM4_MOE);
    assert_int_equal(c.head_dim, 128);
    assert_int_equal(c.n_kv_heads, 8);
    assert_int_equal(c.moe.n_experts, 128);
    assert_int_equal(c.moe.top_k, 8);
    assert_int_equal(c.moe.expert_ffn, 1408);
    assert_int_equal(c.moe.shared_ffn, 1408);
    assert_int_equal(c.moe.n_moe_layers, 45);
    assert_true(c.moe.has_router_bias);
    assert_false(c.has_qkv_bias || c.has_out_bias || c.is_tied);
    assert_true(c.qk_norm == QK_NORM_NONE);
    assert_int_equal(c.not_modelled.n_items, 0);
    assert_has(&c.defaults_used, "attention_bias = false (Glm4MoeConfig default)");
    model_config_fini(&c);
    /* GLM-4.5's own switches: biases on q, k and v only, per-head norms, three dense layers */
    parse_ok("{\"architectures\": [\"Glm4MoeForCausalLM\"], \"hidden_size\": 5120, "
             "\"num_hidden_layers\": 92, \"num_attention_heads\": 96, \"head_dim\": 128, "
             "\"intermediate_size\": 12288, \"moe_intermediate_size\": 1536, "
             "\"n_routed_experts\": 160, \"first_k_dense_replace\": 3, "
             "\"attention_bias\": true, \"use_qk_norm\": true, "
             "\"num_nextn_predict_layers\": 1, \"n_group\": 8, \"topk_group\": 4}",
             &c);
    assert_true(c.has_qkv_bias && !c.has_out_bias);
    assert_true(c.qk_norm == QK_NORM_PER_HEAD);
    assert_int_equal(c.moe.n_moe_layers, 89);
    assert_has(&c.not_modelled, "num_nextn_predict_layers = 1 (the result counts and trains the "
                                "model Glm4MoeForCausalLM builds, without the "
                                "multi-token-prediction layer)");
    assert_int_equal(c.not_modelled.n_items, 3); /* and n_group, topk_group */
    model_config_fini(&c);
}

/* gpt-oss: GptOssConfig's defaults (the 120b's) where the file is silent; biased attention
 * with a sink per head, a biased router and biased experts in every layer, sliding windows
 * of 128 on the even layers (layer_types' default), experts_per_token read as the
 * num_experts_per_tok it aliases. */
static void test_gpt_oss(void **state)
{
    (void)state;
    ModelConfig c;
    parse_ok("{\"model_type\": \"gpt_oss\", \"hidden_size\": 2880, \"num_hidden_layers\": 24, "
             "\"num_attention_heads\": 64, \"intermediate_size\": 2880, "
             "\"num_local_experts\": 32, \"experts_per_token\": 4}",
             &c);
    assert_true(c.family == MODEL_FAMILY_GPT_OSS);
    assert_int_equal(c.n_kv_heads, 8);
    assert_int_equal(c.head_dim, 64);
    assert_int_equal(c.vocab, 201088);
    assert_false(c.is_tied);
    assert_true(c.has_qkv_bias && c.has_out_bias && c.has_attention_sinks);
    assert_int_equal(c.moe.n_experts, 32);
    assert_int_equal(c.moe.top_k, 4);
    assert_int_equal(c.moe.expert_ffn, 2880);
    assert_int_equal(c.moe.n_moe_layers, 24);
    assert_true(c.moe.has_router_bias && c.moe.has_expert_bias);
    assert_int_equal(c.sliding_window, 128);
    assert_int_equal(c.n_sliding_layers, 12);
    assert_has(&c.defaults_used, "sliding_window = 128 (GptOssConfig default)");
    model_config_fini(&c);
    assert_parse_fails("{\"model_type\": \"gpt_oss\", \"hidden_size\": 64, "
                       "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                       "\"num_key_value_heads\": 2, \"intermediate_size\": 64, "
                       "\"num_local_experts\": 4, \"num_experts_per_tok\": 5}",
                       "config.json: num_experts_per_tok: expected an integer in [1, 4] (the "
                       "experts), got 5");
}

/* --------------------------------------------------------------------------------- errors */

static void test_no_shape_keys(void **state)
{
    (void)state;
    assert_parse_fails("{\"vocab_size\": 30522}",
                       "config.json: (top level): expected model_type, architectures or one of "
                       "the shape keys hidden_size, n_embd or d_model, got none");
    assert_parse_fails("[]", "config.json: (top level): expected an object, got an array");
}

static void test_heads_not_dividing_hidden(void **state)
{
    (void)state;
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_layer\": 48, "
                       "\"n_head\": 24}",
                       "config.json: n_head: expected a divisor of n_embd = 1600, got 24");
    assert_parse_fails("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                       "\"num_hidden_layers\": 32, \"num_attention_heads\": 30, "
                       "\"intermediate_size\": 11008}",
                       "config.json: num_attention_heads: expected a divisor of hidden_size = "
                       "4096, got 30");
    assert_parse_fails("{\"d_model\": 4096, \"n_layers\": 32, \"n_heads\": 3}",
                       "config.json: n_heads: expected a divisor of d_model = 4096, got 3");
    /* named as the file spells them (BLOOM's legacy n_embed, n_head) */
    assert_parse_fails("{\"model_type\": \"bloom\", \"n_embed\": 1024, \"n_layer\": 24, "
                       "\"n_head\": 7}",
                       "config.json: n_head: expected a divisor of n_embed = 1024, got 7");
}

static void test_kv_heads_not_dividing_heads(void **state)
{
    (void)state;
    assert_parse_fails("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                       "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
                       "\"num_key_value_heads\": 6, \"intermediate_size\": 11008}",
                       "config.json: num_key_value_heads: expected a divisor of "
                       "num_attention_heads = 32, got 6");
    assert_parse_fails("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                       "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
                       "\"num_key_value_heads\": 64, \"intermediate_size\": 11008}",
                       "config.json: num_key_value_heads: expected a divisor of "
                       "num_attention_heads = 32, got 64");
}

static void test_missing_key(void **state)
{
    (void)state;
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_head\": 25}",
                       "config.json: n_layer: expected integer in [1, 100000], got nothing "
                       "(key missing)");
    assert_parse_fails("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                       "\"num_hidden_layers\": 32, \"num_attention_heads\": 32}",
                       "config.json: intermediate_size: expected integer in [1, 4194304], got "
                       "nothing (key missing)");
    /* null counts as absent. */
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_layer\": null, "
                       "\"n_head\": 25}",
                       "config.json: n_layer: expected integer in [1, 100000], got nothing "
                       "(key missing)");
}

static void test_typo_key_suggests(void **state)
{
    (void)state;
    assert_parse_fails("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,\n"
                       "  \"num_hiden_layers\": 32,\n  \"num_attention_heads\": 32,\n"
                       "  \"intermediate_size\": 11008\n}\n",
                       "config.json: num_hiden_layers: expected a known key, got unknown key "
                       "\"num_hiden_layers\" (did you mean \"num_hidden_layers\"?)");
    /* An optional key zerosim reads, misspelt while absent, is a typo too. */
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, "
                       "\"n_head\": 12, \"vocab_sise\": 50000}",
                       "config.json: vocab_sise: expected a known key, got unknown key "
                       "\"vocab_sise\" (did you mean \"vocab_size\"?)");
}

static void test_wrong_type(void **state)
{
    (void)state;
    assert_parse_fails("{\"model_type\": \"llama\", \"hidden_size\": \"auto\", "
                       "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
                       "\"intermediate_size\": 11008}",
                       "config.json: hidden_size: expected integer in [1, 1048576], got "
                       "\"auto\"");
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": \"1600\", \"n_layer\": 48, "
                       "\"n_head\": 25}",
                       "config.json: n_embd: expected integer in [1, 1048576], got \"1600\"");
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_layer\": 48.5, "
                       "\"n_head\": 25}",
                       "config.json: n_layer: expected integer in [1, 100000], got 48.5");
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_layer\": 48, "
                       "\"n_head\": 25, \"tie_word_embeddings\": \"yes\"}",
                       "config.json: tie_word_embeddings: expected true or false, got \"yes\"");
    assert_parse_fails("{\"model_type\": 2, \"n_embd\": 1600}",
                       "config.json: model_type: expected a string, got 2");
}

static void test_negative_and_zero(void **state)
{
    (void)state;
    assert_parse_fails("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                       "\"num_hidden_layers\": -32, \"num_attention_heads\": 32, "
                       "\"intermediate_size\": 11008}",
                       "config.json: num_hidden_layers: expected integer in [1, 100000], got "
                       "-32");
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_layer\": 48, "
                       "\"n_head\": 0}",
                       "config.json: n_head: expected integer in [1, 1048576], got 0");
    assert_parse_fails("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_layer\": 48, "
                       "\"n_head\": 25, \"vocab_size\": -1}",
                       "config.json: vocab_size: expected integer in [1, 16777216], got -1");
}

static void test_syntax_error_names_file(void **state)
{
    (void)state;
    assert_parse_fails("{\n  \"n_embd\": 1600,\n  \"n_layer\": 48\n  \"n_head\": 25\n}\n",
                       "config.json:4:3: JSON syntax error: expected a valid JSON value, got "
                       "'\"n_head\": 25'");
}

/* -------------------------------------------------------------------------------- loading */

static void test_load_every_preset(void **state)
{
    (void)state;
    DIR *dir = opendir(ZEROSIM_SOURCE_DIR "/workloads/models");
    assert_non_null(dir);
    int n_loaded = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
        ModelConfig c;
        Err err = {0};
        int rc = model_config_load(&c, name, ZEROSIM_SOURCE_DIR, &err);
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", name, err.msg);
        assert_int_equal(rc, 0);
        assert_string_equal(c.name, name);
        assert_true(c.hidden > 0 && c.n_layers > 0 && c.vocab > 0 && c.ffn_hidden > 0);
        assert_true(c.head_dim > 0 && c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads == 0);
        model_config_fini(&c);
        n_loaded++;
    }
    closedir(dir);
    assert_true(n_loaded >= 16);
}

static void test_load_by_path_keeps_path(void **state)
{
    (void)state;
    ModelConfig c;
    Err err = {0};
    assert_int_equal(model_config_load(&c, ZEROSIM_SOURCE_DIR "/workloads/models/mpt-7b.json",
                                       ZEROSIM_SOURCE_DIR, &err),
                     0);
    assert_string_equal(c.name, ZEROSIM_SOURCE_DIR "/workloads/models/mpt-7b.json");
    assert_int_equal(c.family, MODEL_FAMILY_MPT);
    model_config_fini(&c);
}

static void test_load_unknown_name_lists_presets(void **state)
{
    (void)state;
    ModelConfig c;
    Err err = {0};
    assert_int_equal(model_config_load(&c, "llama-2-7bb", ZEROSIM_SOURCE_DIR, &err), -1);
    const char *prefix = "model \"llama-2-7bb\": expected a .json path or a shipped name (";
    assert_int_equal(strncmp(err.msg, prefix, strlen(prefix)), 0);
    assert_non_null(strstr(err.msg, "gpt3-175b, "));
    assert_non_null(strstr(err.msg, "llama-2-7b, "));
    assert_non_null(strstr(err.msg, "), got neither"));
    model_config_fini(&c);
}

static void test_load_missing_file(void **state)
{
    (void)state;
    ModelConfig c;
    Err err = {0};
    assert_int_equal(model_config_load(&c, "no/such/config.json", ZEROSIM_SOURCE_DIR, &err), -1);
    assert_string_equal(err.msg,
                        "no/such/config.json: cannot open model file: no such file or unreadable");
    model_config_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt2),
        cmocka_unit_test(test_gpt2_defaults),
        cmocka_unit_test(test_llama_gqa),
        cmocka_unit_test(test_llama_defaults_and_head_dim),
        cmocka_unit_test(test_llama_bias),
        cmocka_unit_test(test_opt_dropout),
        cmocka_unit_test(test_neox),
        cmocka_unit_test(test_mpt),
        cmocka_unit_test(test_family_without_model_type),
        cmocka_unit_test(test_unsupported_families_refused),
        cmocka_unit_test(test_unknown_keys_are_warnings),
        cmocka_unit_test(test_olmoe_and_granite),
        cmocka_unit_test(test_dbrx),
        cmocka_unit_test(test_glm4_moe),
        cmocka_unit_test(test_gpt_oss),
        cmocka_unit_test(test_sliding_windows),
        cmocka_unit_test(test_no_shape_keys),
        cmocka_unit_test(test_heads_not_dividing_hidden),
        cmocka_unit_test(test_kv_heads_not_dividing_heads),
        cmocka_unit_test(test_missing_key),
        cmocka_unit_test(test_typo_key_suggests),
        cmocka_unit_test(test_wrong_type),
        cmocka_unit_test(test_negative_and_zero),
        cmocka_unit_test(test_syntax_error_names_file),
        cmocka_unit_test(test_load_every_preset),
        cmocka_unit_test(test_load_by_path_keeps_path),
        cmocka_unit_test(test_load_unknown_name_lists_presets),
        cmocka_unit_test(test_load_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
