/*
 * model_config.c - HuggingFace config.json -> ModelConfig (see model_config.h).
 *
 * The family decides which keys name the shape and which architectural features apply:
 * model_type when it is one we know, else the key style (n_embd: GPT-2, d_model: MPT,
 * hidden_size: Llama-like). Defaults are those of the transformers configuration classes
 * (configuration_gpt2.py, configuration_gpt_neox.py, configuration_llama.py,
 * configuration_mpt.py) and each one applied is recorded.
 */
#include "model_config.h"

#include "jsonfile.h"
#include "resolve.h"
#include "vocab.h"

#include "../common/xalloc.h"

#include <stdio.h>
#include <string.h>

/* Keys zerosim reads, in any family (their union: a GPT-2 key in a Llama file is harmless). */
static const char *const modelled_keys[] = {
    "model_type",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
    "tie_word_embeddings",
    "n_embd",
    "n_layer",
    "n_head",
    "n_positions",
    "n_inner",
    "n_ctx",
    "d_model",
    "n_layers",
    "n_heads",
    "expansion_ratio",
    "max_seq_len",
    "no_bias",
    "attention_bias",
    "mlp_bias",
    "hidden_act",
    "activation_function",
    "learned_pos_emb",
    NULL,
};

#define MAX_WIDTH (1u << 20) /* hidden, ffn: 1M wide is far beyond any published model */
#define MAX_LAYERS 100000u
#define MAX_VOCAB (1u << 24)
#define MAX_SEQ (1u << 24)

typedef struct Reader {
    const cJSON *root;
    JsonAt at;
    ModelConfig *cfg;
    Err *err;
} Reader;

/* Required positive integer. */
static int need_u64(Reader *r, const char *key, uint64_t max, uint64_t *out)
{
    int rc = jsonfile_get_u64(r->root, key, r->at, 1, max, out, r->err);
    char expected[64];
    snprintf(expected, sizeof expected, "integer in [1, %llu]", (unsigned long long)max);
    return jsonfile_require(rc, key, r->at, expected, r->err);
}

/* Optional positive integer with a recorded default. */
static int opt_u64(Reader *r, const char *key, uint64_t max, uint64_t fallback, const char *why,
                   uint64_t *out)
{
    int rc = jsonfile_get_u64(r->root, key, r->at, 1, max, out, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        *out = fallback;
        strlist_addf(&r->cfg->defaults_used, "%s = %llu (%s)", key, (unsigned long long)fallback,
                     why);
    }
    return 0;
}

static int opt_bool(Reader *r, const char *key, bool fallback, const char *why, bool *out)
{
    int rc = jsonfile_get_bool(r->root, key, r->at, out, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        *out = fallback;
        strlist_addf(&r->cfg->defaults_used, "%s = %s (%s)", key, fallback ? "true" : "false", why);
    }
    return 0;
}

static bool has_key(const cJSON *root, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(root, key) != NULL;
}

static int pick_family(Reader *r)
{
    static const struct {
        const char *model_type;
        ModelFamily family;
    } known[] = {
        {"gpt2", MODEL_FAMILY_GPT2},   {"gpt_neox", MODEL_FAMILY_NEOX},
        {"llama", MODEL_FAMILY_LLAMA}, {"mistral", MODEL_FAMILY_LLAMA},
        {"mpt", MODEL_FAMILY_MPT},
    };
    ModelConfig *cfg = r->cfg;
    if (jsonfile_get_string(r->root, "model_type", r->at, cfg->model_type, sizeof cfg->model_type,
                            r->err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(cfg->model_type, known[i].model_type) == 0) {
            cfg->family = known[i].family;
            return 0;
        }
    }
    const char *style;
    if (has_key(r->root, "n_embd")) {
        cfg->family = MODEL_FAMILY_GPT2;
        style = "GPT-2 style (n_embd)";
    } else if (has_key(r->root, "d_model")) {
        cfg->family = MODEL_FAMILY_MPT;
        style = "MPT style (d_model)";
    } else if (has_key(r->root, "hidden_size")) {
        cfg->family = MODEL_FAMILY_LLAMA;
        style = "Llama style (hidden_size)";
    } else {
        char path[64];
        return err_set(r->err,
                       "%s: %s: expected one of the shape keys hidden_size, n_embd or "
                       "d_model, got none",
                       r->at.file, jsonfile_key_path(r->at, "(top level)", path, sizeof path));
    }
    strlist_addf(&cfg->defaults_used, "architecture read as %s: model_type %s%s%s", style,
                 cfg->model_type[0] ? "\"" : "", cfg->model_type[0] ? cfg->model_type : "absent",
                 cfg->model_type[0] ? "\" is not one zerosim knows" : "");
    return 0;
}

static int read_gpt2(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "n_embd", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "n_layer", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "n_head", MAX_WIDTH, &c->n_heads))
        return -1;
    /* GPT2Config: n_inner None means 4 * n_embd; n_positions 1024; vocab 50257; tied. */
    int rc =
        jsonfile_get_u64(r->root, "n_inner", r->at, 1, MAX_WIDTH * 4ull, &c->ffn_hidden, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        c->ffn_hidden = 4 * c->hidden;
        strlist_addf(&c->defaults_used, "n_inner = %llu (4 x n_embd, GPT2Config)",
                     (unsigned long long)c->ffn_hidden);
    }
    if (opt_u64(r, "n_positions", MAX_SEQ, 1024, "GPT2Config default", &c->max_seq) ||
        opt_u64(r, "vocab_size", MAX_VOCAB, 50257, "GPT2Config default", &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", true, "GPT2Config default", &c->is_tied))
        return -1;
    c->n_kv_heads = c->n_heads;
    c->has_linear_bias = true;
    c->has_norm_bias = true;
    c->has_learned_pos = true;
    c->is_qkv_fused = true; /* GPT-2's c_attn */
    return 0;
}

static int read_neox(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "hidden_size", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", MAX_WIDTH * 4ull, &c->ffn_hidden))
        return -1;
    if (opt_u64(r, "max_position_embeddings", MAX_SEQ, 2048, "GPTNeoXConfig default",
                &c->max_seq) ||
        opt_u64(r, "vocab_size", MAX_VOCAB, 50432, "GPTNeoXConfig default", &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, "GPTNeoXConfig default", &c->is_tied) ||
        opt_bool(r, "attention_bias", true, "GPTNeoXConfig default", &c->has_linear_bias))
        return -1;
    c->n_kv_heads = c->n_heads;
    c->has_norm_bias = true;
    c->is_qkv_fused = true; /* query_key_value */
    return 0;
}

static int read_llama(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "hidden_size", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", MAX_WIDTH * 4ull, &c->ffn_hidden))
        return -1;
    if (opt_u64(r, "num_key_value_heads", MAX_WIDTH, c->n_heads,
                "= num_attention_heads, LlamaConfig", &c->n_kv_heads) ||
        opt_u64(r, "max_position_embeddings", MAX_SEQ, 2048, "LlamaConfig default", &c->max_seq) ||
        opt_u64(r, "vocab_size", MAX_VOCAB, 32000, "LlamaConfig default", &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, "LlamaConfig default", &c->is_tied))
        return -1;
    bool attn_bias = false, mlp_bias = false;
    if (jsonfile_get_bool(r->root, "attention_bias", r->at, &attn_bias, r->err) < 0 ||
        jsonfile_get_bool(r->root, "mlp_bias", r->at, &mlp_bias, r->err) < 0)
        return -1;
    if (attn_bias != mlp_bias) {
        char path[64];
        return err_set(r->err,
                       "%s: %s: expected attention_bias and mlp_bias to agree (zerosim "
                       "models biases on all linear layers or none), got %s and %s",
                       r->at.file, jsonfile_key_path(r->at, "mlp_bias", path, sizeof path),
                       attn_bias ? "true" : "false", mlp_bias ? "true" : "false");
    }
    c->has_linear_bias = attn_bias;
    c->is_gated_mlp = true;
    return 0;
}

static int read_mpt(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "d_model", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "n_layers", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "n_heads", MAX_WIDTH, &c->n_heads))
        return -1;
    uint64_t ratio = 0;
    bool no_bias = true;
    if (opt_u64(r, "expansion_ratio", 64, 4, "MptConfig default", &ratio) ||
        opt_u64(r, "max_seq_len", MAX_SEQ, 2048, "MptConfig default", &c->max_seq) ||
        opt_u64(r, "vocab_size", MAX_VOCAB, 50368, "MptConfig default", &c->vocab) ||
        opt_bool(r, "no_bias", true, "MptConfig default", &no_bias))
        return -1;
    c->ffn_hidden = ratio * c->hidden;
    c->n_kv_heads = c->n_heads;
    c->has_linear_bias = !no_bias;
    c->has_norm_bias = !no_bias;
    c->is_tied = true;      /* MPT reuses wte for the output logits */
    c->is_qkv_fused = true; /* Wqkv */
    return 0;
}

static int check_shape(Reader *r)
{
    ModelConfig *c = r->cfg;
    char path[64];
    const char *heads_key = c->family == MODEL_FAMILY_GPT2  ? "n_head"
                            : c->family == MODEL_FAMILY_MPT ? "n_heads"
                                                            : "num_attention_heads";
    const char *hidden_key = c->family == MODEL_FAMILY_GPT2  ? "n_embd"
                             : c->family == MODEL_FAMILY_MPT ? "d_model"
                                                             : "hidden_size";
    uint64_t head_dim = 0;
    int rc = jsonfile_get_u64(r->root, "head_dim", r->at, 1, MAX_WIDTH, &head_dim, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0 && c->hidden % c->n_heads != 0)
        return err_set(r->err, "%s: %s: expected a divisor of %s = %llu, got %llu", r->at.file,
                       jsonfile_key_path(r->at, heads_key, path, sizeof path), hidden_key,
                       (unsigned long long)c->hidden, (unsigned long long)c->n_heads);
    c->head_dim = rc ? head_dim : c->hidden / c->n_heads;
    /* An explicit head_dim lets heads x head_dim exceed hidden; bounding it like hidden keeps
     * every product in params_count inside uint64_t. */
    if (c->n_heads * c->head_dim > MAX_WIDTH)
        return err_set(r->err, "%s: %s: expected %s x head_dim at most %u, got %llu x %llu",
                       r->at.file, jsonfile_key_path(r->at, "head_dim", path, sizeof path),
                       heads_key, MAX_WIDTH, (unsigned long long)c->n_heads,
                       (unsigned long long)c->head_dim);
    if (c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0)
        return err_set(r->err, "%s: %s: expected a divisor of %s = %llu, got %llu", r->at.file,
                       jsonfile_key_path(r->at, "num_key_value_heads", path, sizeof path),
                       heads_key, (unsigned long long)c->n_heads,
                       (unsigned long long)c->n_kv_heads);
    return 0;
}

int model_config_parse(ModelConfig *out, const char *file, const char *text, size_t n_bytes,
                       Err *err)
{
    memset(out, 0, sizeof *out);
    strlist_init(&out->not_modelled);
    strlist_init(&out->defaults_used);
    snprintf(out->name, sizeof out->name, "%s", file);
    cJSON *root = jsonfile_parse(file, text, n_bytes, err);
    if (root == NULL)
        return -1;
    Reader r = {root, {file, ""}, out, err};
    int rc = -1;
    if (jsonfile_expect_object(root, r.at, err) == 0 &&
        jsonfile_check_keys(root, r.at, modelled_keys, vocab_hf_not_modelled, &out->not_modelled,
                            err) == 0 &&
        pick_family(&r) == 0) {
        switch (out->family) {
        case MODEL_FAMILY_GPT2: rc = read_gpt2(&r); break;
        case MODEL_FAMILY_NEOX: rc = read_neox(&r); break;
        case MODEL_FAMILY_LLAMA: rc = read_llama(&r); break;
        case MODEL_FAMILY_MPT: rc = read_mpt(&r); break;
        }
        if (rc == 0)
            rc = check_shape(&r);
    }
    cJSON_Delete(root);
    return rc;
}

int model_config_load(ModelConfig *out, const char *name_or_path, const char *data_dir, Err *err)
{
    char path[1024];
    size_t n = 0;
    memset(out, 0, sizeof *out);
    char *text = resolve_read(name_or_path, data_dir, "workloads/models", "model", path,
                              sizeof path, &n, err);
    if (text == NULL)
        return -1;
    int rc = model_config_parse(out, path, text, n, err);
    free(text);
    if (rc == 0 && resolve_is_name(name_or_path))
        snprintf(out->name, sizeof out->name, "%s", name_or_path);
    return rc;
}

void model_config_fini(ModelConfig *cfg)
{
    strlist_fini(&cfg->not_modelled);
    strlist_fini(&cfg->defaults_used);
}
