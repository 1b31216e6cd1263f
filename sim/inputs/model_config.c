/*
 * model_config.c - HuggingFace config.json -> ModelConfig (see model_config.h).
 *
 * The family comes from model_type, else from architectures[0], else (a file with neither)
 * from the key style (n_embd: GPT-2, d_model: MPT, hidden_size: Llama), which is recorded.
 * Each family has a reader: the keys that name its shape (with the aliases of the config
 * class's attribute_map), the defaults of its transformers configuration class, each recorded
 * when applied, and the module layout of its modeling file (models/<family>/modeling_*.py).
 * Every key a reader looks up is remembered; after reading, the file's other keys are sorted:
 * metadata (silent), keys that would change the result (a warning saying what is assumed),
 * near misses of an absent key zerosim reads (an error: a typo), and the rest (ignored, listed
 * in a warning).
 */
#include "model_config.h"

#include "jsonfile.h"
#include "resolve.h"
#include "vocab.h"

#include "../common/suggest.h"
#include "../common/xalloc.h"

#include <stdio.h>
#include <string.h>

#define MAX_WIDTH (1u << 20) /* hidden, ffn: 1M wide is far beyond any published model */
#define MAX_LAYERS 100000u
#define MAX_VOCAB (1u << 24)
#define MAX_SEQ (1u << 24)
#define MAX_READ 64

typedef struct Reader {
    const cJSON *root;
    JsonAt at;
    ModelConfig *cfg;
    Err *err;
    const char *cls; /* the transformers configuration class, for default notes */
    const char *read[MAX_READ]; /* every key looked up, present or not */
    size_t n_read;
} Reader;

static void mark(Reader *r, const char *key)
{
    for (size_t i = 0; i < r->n_read; i++)
        if (strcmp(r->read[i], key) == 0)
            return;
    if (r->n_read < MAX_READ)
        r->read[r->n_read++] = key;
}

static const cJSON *value_of(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsNull(v) ? NULL : v;
}

/* The spelling of a key the file uses: `key`, else its `alias` (attribute_map), else key. */
static const char *spelling(Reader *r, const char *key, const char *alias)
{
    mark(r, key);
    if (alias == NULL)
        return key;
    mark(r, alias);
    return value_of(r->root, key) == NULL && value_of(r->root, alias) != NULL ? alias : key;
}

/* Required positive integer. */
static int need_u64(Reader *r, const char *key, const char *alias, uint64_t max, uint64_t *out)
{
    const char *k = spelling(r, key, alias);
    int rc = jsonfile_get_u64(r->root, k, r->at, 1, max, out, r->err);
    char expected[64];
    snprintf(expected, sizeof expected, "integer in [1, %llu]", (unsigned long long)max);
    return jsonfile_require(rc, k, r->at, expected, r->err);
}

/* Optional positive integer with a recorded default; `why` NULL means "<class> default". */
static int opt_u64(Reader *r, const char *key, const char *alias, uint64_t max, uint64_t fallback,
                   const char *why, uint64_t *out)
{
    const char *k = spelling(r, key, alias);
    int rc = jsonfile_get_u64(r->root, k, r->at, 1, max, out, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        *out = fallback;
        if (why)
            strlist_addf(&r->cfg->defaults_used, "%s = %llu (%s)", key,
                         (unsigned long long)fallback, why);
        else
            strlist_addf(&r->cfg->defaults_used, "%s = %llu (%s default)", key,
                         (unsigned long long)fallback, r->cls);
    }
    return 0;
}

/* Optional boolean; `quiet` leaves an absent key's default unrecorded (flags whose default
 * every published file of the family relies on, such as attention_bias). */
static int opt_bool(Reader *r, const char *key, bool fallback, bool quiet, bool *out)
{
    mark(r, key);
    int rc = jsonfile_get_bool(r->root, key, r->at, out, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        *out = fallback;
        if (!quiet)
            strlist_addf(&r->cfg->defaults_used, "%s = %s (%s default)", key,
                         fallback ? "true" : "false", r->cls);
    }
    return 0;
}

/* ------------------------------------------------------------------ families and their tables */

typedef int (*ReadFn)(Reader *r);

static int read_gpt2(Reader *r);
static int read_gptj(Reader *r);
static int read_neox(Reader *r);
static int read_opt(Reader *r);
static int read_bloom(Reader *r);
static int read_falcon(Reader *r);
static int read_llama(Reader *r);
static int read_gemma(Reader *r);
static int read_phi(Reader *r);
static int read_phi3(Reader *r);
static int read_olmo(Reader *r);
static int read_starcoder2(Reader *r);
static int read_mpt(Reader *r);
static int read_deepseek(Reader *r);
static int read_gpt_oss(Reader *r);
static int read_dbrx(Reader *r);
static int read_glm4_moe(Reader *r);

static const struct {
    const char *model_type;
    ModelFamily family;
    const char *cls;
    ReadFn read;
} known_types[] = {
    {"gpt2", MODEL_FAMILY_GPT2, "GPT2Config", read_gpt2},
    {"gpt_bigcode", MODEL_FAMILY_BIGCODE, "GPTBigCodeConfig", read_gpt2},
    {"gptj", MODEL_FAMILY_GPTJ, "GPTJConfig", read_gptj},
    {"gpt_neox", MODEL_FAMILY_NEOX, "GPTNeoXConfig", read_neox},
    {"opt", MODEL_FAMILY_OPT, "OPTConfig", read_opt},
    {"bloom", MODEL_FAMILY_BLOOM, "BloomConfig", read_bloom},
    {"falcon", MODEL_FAMILY_FALCON, "FalconConfig", read_falcon},
    {"RefinedWeb", MODEL_FAMILY_FALCON, "FalconConfig", read_falcon},
    {"RefinedWebModel", MODEL_FAMILY_FALCON, "FalconConfig", read_falcon},
    {"llama", MODEL_FAMILY_LLAMA, "LlamaConfig", read_llama},
    {"mistral", MODEL_FAMILY_LLAMA, "MistralConfig", read_llama},
    {"qwen2", MODEL_FAMILY_QWEN2, "Qwen2Config", read_llama},
    {"qwen3", MODEL_FAMILY_QWEN3, "Qwen3Config", read_llama},
    {"gemma", MODEL_FAMILY_GEMMA, "GemmaConfig", read_gemma},
    {"gemma2", MODEL_FAMILY_GEMMA2, "Gemma2Config", read_gemma},
    {"gemma3_text", MODEL_FAMILY_GEMMA3, "Gemma3TextConfig", read_gemma},
    {"phi", MODEL_FAMILY_PHI, "PhiConfig", read_phi},
    {"phi3", MODEL_FAMILY_PHI3, "Phi3Config", read_phi3},
    {"olmo", MODEL_FAMILY_OLMO, "OlmoConfig", read_olmo},
    {"olmo2", MODEL_FAMILY_OLMO2, "Olmo2Config", read_olmo},
    {"olmo3", MODEL_FAMILY_OLMO2, "Olmo3Config", read_olmo},
    {"starcoder2", MODEL_FAMILY_STARCODER2, "Starcoder2Config", read_starcoder2},
    {"mpt", MODEL_FAMILY_MPT, "MptConfig", read_mpt},
    {"mixtral", MODEL_FAMILY_MIXTRAL, "MixtralConfig", read_llama},
    {"qwen2_moe", MODEL_FAMILY_QWEN2_MOE, "Qwen2MoeConfig", read_llama},
    {"qwen3_moe", MODEL_FAMILY_QWEN3_MOE, "Qwen3MoeConfig", read_llama},
    {"deepseek_v2", MODEL_FAMILY_DEEPSEEK, "DeepseekV2Config", read_deepseek},
    {"deepseek_v3", MODEL_FAMILY_DEEPSEEK, "DeepseekV3Config", read_deepseek},
    {"kimi_k2", MODEL_FAMILY_DEEPSEEK, "DeepseekV3Config", read_deepseek},
    {"gpt_oss", MODEL_FAMILY_GPT_OSS, "GptOssConfig", read_gpt_oss},
    {"olmoe", MODEL_FAMILY_OLMOE, "OlmoeConfig", read_olmo},
    {"granite", MODEL_FAMILY_GRANITE, "GraniteConfig", read_llama},
    {"granitemoe", MODEL_FAMILY_GRANITE_MOE, "GraniteMoeConfig", read_llama},
    {"granitemoeshared", MODEL_FAMILY_GRANITE_MOE, "GraniteMoeSharedConfig", read_llama},
    {"dbrx", MODEL_FAMILY_DBRX, "DbrxConfig", read_dbrx},
    {"phimoe", MODEL_FAMILY_PHIMOE, "PhimoeConfig", read_llama},
    {"glm4_moe", MODEL_FAMILY_GLM4_MOE, "Glm4MoeConfig", read_glm4_moe},
};

/* The model class names save_pretrained writes into architectures. */
static const struct {
    const char *architecture;
    const char *model_type;
} known_architectures[] = {
    {"GPT2LMHeadModel", "gpt2"},         {"GPTBigCodeForCausalLM", "gpt_bigcode"},
    {"GPTJForCausalLM", "gptj"},         {"GPTNeoXForCausalLM", "gpt_neox"},
    {"OPTForCausalLM", "opt"},           {"BloomForCausalLM", "bloom"},
    {"FalconForCausalLM", "falcon"},     {"RWForCausalLM", "falcon"},
    {"LlamaForCausalLM", "llama"},       {"MistralForCausalLM", "mistral"},
    {"Qwen2ForCausalLM", "qwen2"},       {"Qwen3ForCausalLM", "qwen3"},
    {"GemmaForCausalLM", "gemma"},       {"Gemma2ForCausalLM", "gemma2"},
    {"Gemma3ForCausalLM", "gemma3_text"}, {"PhiForCausalLM", "phi"},
    {"Phi3ForCausalLM", "phi3"},         {"OlmoForCausalLM", "olmo"},
    {"Olmo2ForCausalLM", "olmo2"},       {"Olmo3ForCausalLM", "olmo3"},
    {"Starcoder2ForCausalLM", "starcoder2"}, {"MPTForCausalLM", "mpt"},
    {"MixtralForCausalLM", "mixtral"},   {"Qwen2MoeForCausalLM", "qwen2_moe"},
    {"Qwen3MoeForCausalLM", "qwen3_moe"}, {"DeepseekV2ForCausalLM", "deepseek_v2"},
    {"DeepseekV3ForCausalLM", "deepseek_v3"}, {"GptOssForCausalLM", "gpt_oss"},
    {"OlmoeForCausalLM", "olmoe"},       {"GraniteForCausalLM", "granite"},
    {"GraniteMoeForCausalLM", "granitemoe"}, {"GraniteMoeSharedForCausalLM", "granitemoeshared"},
    {"DbrxForCausalLM", "dbrx"},         {"PhimoeForCausalLM", "phimoe"},
    {"PhiMoEForCausalLM", "phimoe"}, /* the hub's remote-code class name */
    {"Glm4MoeForCausalLM", "glm4_moe"},
};

/* Families zerosim knows it cannot model, and why. */
static const struct {
    const char *model_type;
    const char *what;
} unsupported_types[] = {
    {"t5", "encoder-decoder T5"},
    {"mt5", "encoder-decoder mT5"},
    {"umt5", "encoder-decoder UMT5"},
    {"bart", "encoder-decoder BART"},
    {"mbart", "encoder-decoder mBART"},
    {"pegasus", "encoder-decoder Pegasus"},
    {"marian", "encoder-decoder Marian"},
    {"led", "encoder-decoder LED"},
    {"whisper", "encoder-decoder speech model Whisper"},
    {"switch_transformers", "encoder-decoder mixture-of-experts Switch Transformer"},
    {"bert", "encoder-only BERT"},
    {"roberta", "encoder-only RoBERTa"},
    {"xlm-roberta", "encoder-only XLM-RoBERTa"},
    {"deberta", "encoder-only DeBERTa"},
    {"deberta-v2", "encoder-only DeBERTa-v2"},
    {"distilbert", "encoder-only DistilBERT"},
    {"electra", "encoder-only ELECTRA"},
    {"albert", "encoder-only ALBERT"},
    {"modernbert", "encoder-only ModernBERT"},
    {"clip", "vision-language CLIP"},
    {"siglip", "vision-language SigLIP"},
    {"vit", "vision transformer ViT"},
    {"llava", "vision-language LLaVA (a vision tower beside text_config)"},
    {"llava_next", "vision-language LLaVA-NeXT"},
    {"qwen2_vl", "vision-language Qwen2-VL"},
    {"qwen2_5_vl", "vision-language Qwen2.5-VL"},
    {"mllama", "vision-language Llama 3.2 Vision"},
    {"idefics2", "vision-language Idefics2"},
    {"idefics3", "vision-language Idefics3"},
    {"paligemma", "vision-language PaliGemma"},
    {"gemma3", "vision-language Gemma 3 (a SigLIP tower beside text_config; a gemma3_text "
               "config is supported)"},
    {"blip-2", "vision-language BLIP-2"},
    {"llama4", "vision-language mixture-of-experts Llama 4"},
    {"granitemoehybrid", "hybrid state-space / mixture-of-experts Granite 4.0"},
    {"jamba", "hybrid state-space / mixture-of-experts Jamba"},
    {"mamba", "state-space Mamba"},
    {"mamba2", "state-space Mamba-2"},
    {"falcon_mamba", "state-space Falcon-Mamba"},
    {"rwkv", "recurrent RWKV"},
    {"recurrent_gemma", "recurrent RecurrentGemma"},
};

static const char *const family_names[] = {
    [MODEL_FAMILY_GPT2] = "GPT-2",       [MODEL_FAMILY_BIGCODE] = "GPT-BigCode",
    [MODEL_FAMILY_GPTJ] = "GPT-J",       [MODEL_FAMILY_NEOX] = "GPT-NeoX",
    [MODEL_FAMILY_OPT] = "OPT",          [MODEL_FAMILY_BLOOM] = "BLOOM",
    [MODEL_FAMILY_FALCON] = "Falcon",    [MODEL_FAMILY_LLAMA] = "Llama",
    [MODEL_FAMILY_QWEN2] = "Qwen2",      [MODEL_FAMILY_QWEN3] = "Qwen3",
    [MODEL_FAMILY_GEMMA] = "Gemma",      [MODEL_FAMILY_GEMMA2] = "Gemma 2",
    [MODEL_FAMILY_GEMMA3] = "Gemma 3",   [MODEL_FAMILY_PHI] = "Phi",
    [MODEL_FAMILY_PHI3] = "Phi-3",       [MODEL_FAMILY_OLMO] = "OLMo",
    [MODEL_FAMILY_OLMO2] = "OLMo 2",     [MODEL_FAMILY_STARCODER2] = "StarCoder2",
    [MODEL_FAMILY_MPT] = "MPT",          [MODEL_FAMILY_MIXTRAL] = "Mixtral",
    [MODEL_FAMILY_QWEN2_MOE] = "Qwen2-MoE", [MODEL_FAMILY_QWEN3_MOE] = "Qwen3-MoE",
    [MODEL_FAMILY_DEEPSEEK] = "DeepSeek", [MODEL_FAMILY_GPT_OSS] = "gpt-oss",
    [MODEL_FAMILY_OLMOE] = "OLMoE",      [MODEL_FAMILY_GRANITE] = "Granite",
    [MODEL_FAMILY_GRANITE_MOE] = "GraniteMoE", [MODEL_FAMILY_DBRX] = "DBRX",
    [MODEL_FAMILY_PHIMOE] = "Phi-3.5-MoE", [MODEL_FAMILY_GLM4_MOE] = "GLM-4.5",
};

static bool is_moe_family(ModelFamily f)
{
    return f == MODEL_FAMILY_MIXTRAL || f == MODEL_FAMILY_QWEN2_MOE ||
           f == MODEL_FAMILY_QWEN3_MOE || f == MODEL_FAMILY_DEEPSEEK ||
           f == MODEL_FAMILY_GPT_OSS || f == MODEL_FAMILY_OLMOE || f == MODEL_FAMILY_GRANITE_MOE ||
           f == MODEL_FAMILY_DBRX || f == MODEL_FAMILY_PHIMOE ||
           f == MODEL_FAMILY_GLM4_MOE;
}

bool model_config_has_dropout(const ModelConfig *cfg)
{
    return (cfg->family == MODEL_FAMILY_GPT2 || cfg->family == MODEL_FAMILY_BIGCODE ||
            cfg->family == MODEL_FAMILY_OPT || cfg->family == MODEL_FAMILY_DBRX) &&
           cfg->has_hidden_dropout;
}

bool model_config_has_attention_dropout(const ModelConfig *cfg)
{
    return (cfg->family == MODEL_FAMILY_GPT2 || cfg->family == MODEL_FAMILY_BIGCODE) &&
           cfg->has_attention_dropout;
}

bool model_config_is_moe_layer(const ModelConfig *cfg, uint64_t layer)
{
    const MoeShape *m = &cfg->moe;
    if (m->n_experts == 0 || layer < m->first_layer || m->step == 0 ||
        layer % m->step != m->phase)
        return false;
    for (uint32_t i = 0; i < m->n_dense_listed; i++)
        if (m->dense_layers[i] == layer)
            return false;
    return true;
}

/* Counts the MoE layers once the rule is read. */
static void count_moe_layers(ModelConfig *c)
{
    c->moe.n_moe_layers = 0;
    for (uint64_t i = 0; i < c->n_layers; i++)
        c->moe.n_moe_layers += model_config_is_moe_layer(c, i);
}

/* Routed experts in every layer, each of the model's intermediate width (Mixtral's
 * MixtralSparseMoeBlock and the families with its shapes: Phi-3.5-MoE, GraniteMoE, OLMoE,
 * DBRX): the expert count and the experts per token under the family's own keys, with its
 * configuration class's defaults. */
static int read_every_layer_experts(Reader *r, const char *n_key, uint64_t n_default,
                                    const char *k_key, uint64_t k_default)
{
    ModelConfig *c = r->cfg;
    MoeShape *m = &c->moe;
    if (opt_u64(r, n_key, NULL, 1u << 16, n_default, NULL, &m->n_experts) ||
        opt_u64(r, k_key, NULL, 1u << 16, k_default, NULL, &m->top_k))
        return -1;
    m->expert_ffn = c->ffn_hidden;
    m->step = 1;
    count_moe_layers(c);
    return 0;
}

/* Qwen's MoE keys (configuration_qwen2_moe.py, configuration_qwen3_moe.py; modeling files'
 * decoder layers): a layer is sparse when it is not in mlp_only_layers and
 * (layer_idx + 1) % decoder_sparse_step == 0; experts of moe_intermediate_size; Qwen2-MoE
 * adds a shared expert of shared_expert_intermediate_size behind a sigmoid gate (h x 1). */
static int read_qwen_moe(Reader *r)
{
    ModelConfig *c = r->cfg;
    MoeShape *m = &c->moe;
    const bool is_v2 = c->family == MODEL_FAMILY_QWEN2_MOE;
    uint64_t step = 1;
    if (opt_u64(r, "num_experts", NULL, 1u << 16, is_v2 ? 60 : 128, NULL, &m->n_experts) ||
        opt_u64(r, "num_experts_per_tok", NULL, 1u << 16, is_v2 ? 4 : 8, NULL, &m->top_k) ||
        opt_u64(r, "moe_intermediate_size", NULL, MAX_WIDTH * 4ull, is_v2 ? 1408 : 768, NULL,
                &m->expert_ffn) ||
        opt_u64(r, "decoder_sparse_step", NULL, MAX_LAYERS, 1, NULL, &step))
        return -1;
    if (is_v2 && opt_u64(r, "shared_expert_intermediate_size", NULL, MAX_WIDTH * 4ull, 5632, NULL,
                         &m->shared_ffn))
        return -1;
    m->has_shared_gate = is_v2;
    m->first_layer = 0;
    m->step = step;
    m->phase = step - 1;
    mark(r, "mlp_only_layers");
    const cJSON *dense = value_of(r->root, "mlp_only_layers");
    if (dense != NULL) {
        char path[64];
        const int n = cJSON_IsArray(dense) ? cJSON_GetArraySize(dense) : -1;
        if (n < 0 || n > (int)(sizeof m->dense_layers / sizeof m->dense_layers[0]))
            return err_set(r->err,
                           "%s: %s: expected an array of at most %zu layer indices, got %s",
                           r->at.file, jsonfile_key_path(r->at, "mlp_only_layers", path, sizeof path),
                           sizeof m->dense_layers / sizeof m->dense_layers[0],
                           n < 0 ? "a non-array" : "a longer array");
        const cJSON *item;
        cJSON_ArrayForEach(item, dense)
        {
            if (!cJSON_IsNumber(item) || item->valuedouble < 0 ||
                item->valuedouble >= (double)c->n_layers ||
                item->valuedouble != (double)(uint64_t)item->valuedouble)
                return err_set(r->err, "%s: %s: expected layer indices in [0, %llu), got %g",
                               r->at.file,
                               jsonfile_key_path(r->at, "mlp_only_layers", path, sizeof path),
                               (unsigned long long)c->n_layers,
                               cJSON_IsNumber(item) ? item->valuedouble : -1.0);
            m->dense_layers[m->n_dense_listed++] = (uint64_t)item->valuedouble;
        }
    }
    count_moe_layers(c);
    return 0;
}

const char *model_config_family_name(ModelFamily family)
{
    return family_names[family];
}

uint64_t model_config_default_seq_len(const ModelConfig *cfg)
{
    return cfg->max_seq < MODEL_CONFIG_TRAIN_SEQ_LEN ? cfg->max_seq : MODEL_CONFIG_TRAIN_SEQ_LEN;
}

/* ------------------------------------------------------------------------ shared structure */

/* The common decoder layer: two norms, separate projections, a final norm, untied head. */
static void layout_default(ModelConfig *c)
{
    c->embed_dim = c->hidden;
    c->n_layer_norms = 2;
    c->has_final_norm = true;
    c->norm = NORM_WEIGHT;
}

/* Sliding-window layers: layer_types when the file has it (transformers >= 4.53 writes it
 * for every family that has windows), else the family's rule, passed as `every`: a layer i is
 * sliding when (i + 1) % every != 0 (every 2: Gemma 2's alternation; 6: Gemma 3's 5:1;
 * 4: OLMo 3's 3:1), `every` 1 means every layer (Mistral, Phi-3, StarCoder2), 0 none. */
static int read_sliding(Reader *r, uint64_t fallback_window, uint64_t every)
{
    ModelConfig *c = r->cfg;
    mark(r, "sliding_window");
    mark(r, "layer_types");
    uint64_t window = 0;
    int rc = jsonfile_get_u64(r->root, "sliding_window", r->at, 1, MAX_SEQ, &window, r->err);
    if (rc < 0)
        return -1;
    const cJSON *types = value_of(r->root, "layer_types");
    if (types != NULL) {
        char path[64];
        if (!cJSON_IsArray(types) || (uint64_t)cJSON_GetArraySize(types) != c->n_layers)
            return err_set(r->err,
                           "%s: %s: expected an array of num_hidden_layers = %llu strings, "
                           "got %s of %d",
                           r->at.file, jsonfile_key_path(r->at, "layer_types", path, sizeof path),
                           (unsigned long long)c->n_layers,
                           cJSON_IsArray(types) ? "an array" : "a non-array",
                           cJSON_IsArray(types) ? cJSON_GetArraySize(types) : 0);
        uint64_t n = 0;
        const cJSON *t;
        cJSON_ArrayForEach(t, types)
        {
            if (cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0)
                n++;
        }
        if (n > 0 && rc == 0) {
            window = fallback_window;
            strlist_addf(&c->defaults_used, "sliding_window = %llu (%s default)",
                         (unsigned long long)window, r->cls);
        }
        c->sliding_window = n > 0 ? window : 0;
        c->n_sliding_layers = window ? n : 0;
        return 0;
    }
    if (every == 0)
        return 0;
    if (rc == 0 && fallback_window > 0) {
        window = fallback_window;
        strlist_addf(&c->defaults_used, "sliding_window = %llu (%s default)",
                     (unsigned long long)window, r->cls);
    }
    if (window == 0)
        return 0;
    c->sliding_window = window;
    for (uint64_t i = 0; i < c->n_layers; i++)
        if (every == 1 || (i + 1) % every != 0)
            c->n_sliding_layers++;
    return 0;
}

/* --------------------------------------------------------------------------- the families */

/* GPT-2 and GPT-BigCode (modeling_gpt2.py, modeling_gpt_bigcode.py): c_attn fuses Q, K, V
 * (BigCode's multi-query K and V are one head each), LayerNorm with bias, biases on every
 * Conv1D/Linear, learned positions, tied head. */
/* The shape keys GPT-2 and GPT-J share (n_embd, n_layer, n_head, and n_inner, which
 * defaults to 4 x n_embd in both configuration classes). */
static int read_gpt2_shape(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "n_embd", "hidden_size", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "n_layer", "num_hidden_layers", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "n_head", "num_attention_heads", MAX_WIDTH, &c->n_heads))
        return -1;
    mark(r, "n_inner");
    int rc =
        jsonfile_get_u64(r->root, "n_inner", r->at, 1, MAX_WIDTH * 4ull, &c->ffn_hidden, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        c->ffn_hidden = 4 * c->hidden;
        strlist_addf(&c->defaults_used, "n_inner = %llu (4 x n_embd, %s)",
                     (unsigned long long)c->ffn_hidden, r->cls);
    }
    /* Any of transformers' ACT2FN names is accepted; only gelu_new is timed apart (the
     * others run as one kernel). GPT2Config and GPTJConfig default to gelu_new,
     * GPTBigCodeConfig to gelu_pytorch_tanh (F.gelu, one kernel). */
    mark(r, "activation_function");
    char act[40] = "";
    if (jsonfile_get_string(r->root, "activation_function", r->at, act, sizeof act, r->err) < 0)
        return -1;
    c->is_gelu_new = act[0] == '\0' ? c->family != MODEL_FAMILY_BIGCODE
                                     : strcmp(act, "gelu_new") == 0;
    return 0;
}

/* A dropout probability `key` in [0, 1] (0.1 by default in GPT2Config, GPTBigCodeConfig and
 * OPTConfig): *is_on when it is above 0, where nn.functional.dropout launches a kernel and
 * keeps a mask in training. */
static int read_dropout(Reader *r, const char *key, bool *is_on)
{
    double p = 0.1;
    mark(r, key);
    int rc = jsonfile_get_double(r->root, key, r->at, 0.0, 1.0, &p, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        strlist_addf(&r->cfg->defaults_used, "%s = 0.1 (%s default)", key, r->cls);
    *is_on = p > 0.0;
    return 0;
}

static int read_gpt2(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (read_gpt2_shape(r))
        return -1;
    /* GPT2Block and GPTBigCodeBlock: resid_pdrop after the attention and after the MLP,
     * attn_pdrop on the eager attention's probabilities */
    if (read_dropout(r, "resid_pdrop", &c->has_hidden_dropout) ||
        read_dropout(r, "attn_pdrop", &c->has_attention_dropout))
        return -1;
    if (opt_u64(r, "n_positions", "max_position_embeddings", MAX_SEQ, 1024, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 50257, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", true, false, &c->is_tied))
        return -1;
    bool is_mqa = false;
    if (c->family == MODEL_FAMILY_BIGCODE && opt_bool(r, "multi_query", true, false, &is_mqa))
        return -1;
    layout_default(c);
    c->n_kv_heads = is_mqa ? 1 : c->n_heads;
    c->norm = NORM_AND_BIAS;
    c->has_qkv_bias = c->has_out_bias = c->has_mlp_bias = true;
    c->position_rows = c->max_seq;
    c->is_qkv_fused = true;
    return 0;
}

/* GPT-J (modeling_gptj.py): one ln_1 feeds attention and MLP in parallel; q, k, v, out_proj
 * without bias; fc_in/fc_out with bias; an untied lm_head with bias. */
static int read_gptj(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (read_gpt2_shape(r))
        return -1;
    if (opt_u64(r, "n_positions", "max_position_embeddings", MAX_SEQ, 2048, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 50400, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, true, &c->is_tied))
        return -1;
    layout_default(c);
    c->n_kv_heads = c->n_heads;
    c->norm = NORM_AND_BIAS;
    c->n_layer_norms = 1;
    c->is_parallel_block = true; /* ln_1 feeds attention and MLP */
    c->has_mlp_bias = true;
    c->has_lm_head_bias = true;
    return 0;
}

/* GPT-NeoX / Pythia (modeling_gpt_neox.py): query_key_value and dense carry biases unless
 * attention_bias is false; the MLP always does; untied embed_out. */
static int read_neox(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden))
        return -1;
    bool attn_bias = true;
    if (opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 2048, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 50432, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, false, &c->is_tied) ||
        opt_bool(r, "attention_bias", true, false, &attn_bias) ||
        opt_bool(r, "use_parallel_residual", true, true, &c->is_parallel_block))
        return -1;
    layout_default(c);
    c->n_kv_heads = c->n_heads;
    c->norm = NORM_AND_BIAS;
    c->has_qkv_bias = c->has_out_bias = attn_bias;
    c->has_mlp_bias = true;
    c->is_qkv_fused = true;
    return 0;
}

/* OPT (modeling_opt.py): learned positions with an offset of 2 rows
 * (OPTLearnedPositionalEmbedding), biases unless enable_bias is false, LayerNorm with bias
 * unless layer_norm_elementwise_affine is false, a final LayerNorm only with
 * do_layer_norm_before (OPT-350m has none), project_in/project_out (no bias) when
 * word_embed_proj_dim differs from hidden_size, tied head of word_embed_proj_dim. */
static int read_opt(Reader *r)
{
    ModelConfig *c = r->cfg;
    bool enable_bias = true, affine = true, ln_before = true, remove_final = false;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        opt_u64(r, "ffn_dim", NULL, MAX_WIDTH * 4ull, 3072, NULL, &c->ffn_hidden) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 2048, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 50272, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", true, true, &c->is_tied) ||
        opt_bool(r, "enable_bias", true, true, &enable_bias) ||
        opt_bool(r, "layer_norm_elementwise_affine", true, true, &affine) ||
        opt_bool(r, "do_layer_norm_before", true, false, &ln_before) ||
        opt_bool(r, "_remove_final_layer_norm", false, true, &remove_final))
        return -1;
    layout_default(c);
    if (opt_u64(r, "word_embed_proj_dim", NULL, MAX_WIDTH, c->hidden, "= hidden_size, OPTConfig",
                &c->embed_dim))
        return -1;
    c->n_kv_heads = c->n_heads;
    c->norm = affine ? (enable_bias ? NORM_AND_BIAS : NORM_WEIGHT) : NORM_NONE;
    c->has_final_norm = ln_before && !remove_final;
    c->has_qkv_bias = c->has_out_bias = c->has_mlp_bias = enable_bias;
    c->position_rows = c->max_seq + 2;
    /* OPTDecoderLayer applies nn.functional.dropout(p=config.dropout) to the attention's and
     * the MLP's outputs (OPTConfig default 0.1); in train mode each is a kernel */
    return read_dropout(r, "dropout", &c->has_hidden_dropout);
}

/* BLOOM (modeling_bloom.py): ALiBi, word_embeddings_layernorm, fused query_key_value,
 * biases everywhere, 4h MLP, tied. BloomConfig pops the legacy n_embed as hidden_size. */
static int read_bloom(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "hidden_size", "n_embed", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "n_layer", "num_hidden_layers", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "n_head", "num_attention_heads", MAX_WIDTH, &c->n_heads) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 250880, NULL, &c->vocab) ||
        opt_u64(r, "seq_length", NULL, MAX_SEQ, 2048,
                "BLOOM's training length (Le Scao et al. 2022); ALiBi has no maximum",
                &c->max_seq) ||
        opt_bool(r, "tie_word_embeddings", true, true, &c->is_tied))
        return -1;
    layout_default(c);
    c->n_kv_heads = c->n_heads;
    c->ffn_hidden = 4 * c->hidden;
    c->norm = NORM_AND_BIAS;
    c->has_embed_norm = true;
    c->has_qkv_bias = c->has_out_bias = c->has_mlp_bias = true;
    c->is_qkv_fused = true;
    return 0;
}

/* Falcon (modeling_falcon.py): fused query_key_value of (heads + 2 kv) x head_dim, where kv is
 * num_kv_heads with new_decoder_architecture, 1 with multi_query, else heads; ln_attn and
 * ln_mlp with the new architecture (num_ln_in_parallel_attn 2), else input_layernorm plus
 * post_attention_layernorm unless parallel_attn; biases only with bias; tied. The legacy
 * RWConfig spellings (n_embed, n_layer, n_head, n_head_kv) are its attribute_map. */
static int read_falcon(Reader *r)
{
    ModelConfig *c = r->cfg;
    bool is_new = false, is_mqa = true, is_parallel = true, bias = false;
    if (need_u64(r, "hidden_size", "n_embed", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", "n_layer", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", "n_head", MAX_WIDTH, &c->n_heads) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 65024, NULL, &c->vocab) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 2048, NULL, &c->max_seq) ||
        opt_bool(r, "new_decoder_architecture", false, true, &is_new) ||
        opt_bool(r, "multi_query", true, true, &is_mqa) ||
        opt_bool(r, "parallel_attn", true, true, &is_parallel) ||
        opt_bool(r, "bias", false, true, &bias) ||
        opt_bool(r, "tie_word_embeddings", true, true, &c->is_tied))
        return -1;
    layout_default(c);
    if (opt_u64(r, "ffn_hidden_size", NULL, MAX_WIDTH * 4ull, 4 * c->hidden,
                "4 x hidden_size, FalconConfig", &c->ffn_hidden))
        return -1;
    if (is_new) {
        uint64_t n_ln = 0;
        if (opt_u64(r, "num_kv_heads", "n_head_kv", MAX_WIDTH, c->n_heads,
                    "= num_attention_heads, FalconConfig", &c->n_kv_heads) ||
            opt_u64(r, "num_ln_in_parallel_attn", NULL, 2, 2,
                    "2 with new_decoder_architecture, FalconDecoderLayer", &n_ln))
            return -1;
        c->n_layer_norms = (unsigned)n_ln;
    } else {
        mark(r, "num_kv_heads");
        mark(r, "n_head_kv");
        mark(r, "num_ln_in_parallel_attn");
        c->n_kv_heads = is_mqa ? 1 : c->n_heads;
        c->n_layer_norms = is_parallel ? 1 : 2;
    }
    c->is_parallel_block = is_new || is_parallel;
    c->norm = NORM_AND_BIAS;
    c->has_qkv_bias = c->has_out_bias = c->has_mlp_bias = bias;
    c->is_qkv_fused = true;
    return 0;
}

/* The Llama family (modeling_llama.py, and the Mistral, Qwen2, Qwen3 and Granite files that
 * copy it): RMSNorm, q/k/v/o, SwiGLU gate/up/down. attention_bias puts biases on q, k, v and o
 * (Qwen2 always has q, k, v biases and none on o), mlp_bias on the MLP; Qwen3 adds q_norm and
 * k_norm of head_dim. Granite's four multipliers scale the embedding, the residual branches,
 * the attention scores and the logits by constants: no parameter and no GEMM (vocab.c).
 * Sliding windows: Mistral on every layer; Qwen2/3 only with use_sliding_window, on layers
 * from max_window_layers up. */
static int read_llama(Reader *r)
{
    ModelConfig *c = r->cfg;
    const bool is_qwen_moe =
        c->family == MODEL_FAMILY_QWEN2_MOE || c->family == MODEL_FAMILY_QWEN3_MOE;
    const bool is_qwen = c->family == MODEL_FAMILY_QWEN2 || c->family == MODEL_FAMILY_QWEN3 ||
                         is_qwen_moe;
    const bool is_mixtral = c->family == MODEL_FAMILY_MIXTRAL;
    const bool is_granite_moe = c->family == MODEL_FAMILY_GRANITE_MOE;
    const bool is_phimoe = c->family == MODEL_FAMILY_PHIMOE;
    const bool is_mistral = strcmp(c->model_type, "mistral") == 0 || is_mixtral || is_phimoe;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden))
        return -1;
    char why[64];
    snprintf(why, sizeof why, "= num_attention_heads, %s", r->cls);
    bool attn_bias = false, mlp_bias = false;
    if (opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, c->n_heads, why, &c->n_kv_heads) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ,
                is_qwen ? 32768 : is_mistral ? 131072 : 2048, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, is_qwen ? 151936 : is_phimoe ? 32064 : 32000,
                NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, false, &c->is_tied) ||
        opt_bool(r, "attention_bias", false, true, &attn_bias) ||
        opt_bool(r, "mlp_bias", false, true, &mlp_bias))
        return -1;
    layout_default(c);
    c->is_gated_mlp = true;
    c->has_qkv_bias = attn_bias || c->family == MODEL_FAMILY_QWEN2 ||
                      c->family == MODEL_FAMILY_QWEN2_MOE;
    c->has_out_bias =
        attn_bias && c->family != MODEL_FAMILY_QWEN2 && c->family != MODEL_FAMILY_QWEN2_MOE;
    c->has_mlp_bias = mlp_bias;
    if (c->family == MODEL_FAMILY_QWEN3 || c->family == MODEL_FAMILY_QWEN3_MOE)
        c->qk_norm = QK_NORM_PER_HEAD;
    if (is_phimoe) {
        /* PhimoeDecoderLayer (modeling_phimoe.py): LayerNorm with bias for input_layernorm,
         * post_attention_layernorm and the final norm; lm_head a Linear with bias when
         * lm_head_bias; Mixtral's sparse block (sparsemixer routing, the same shapes) */
        c->norm = NORM_AND_BIAS;
        if (opt_bool(r, "lm_head_bias", false, false, &c->has_lm_head_bias))
            return -1;
    }
    if (is_granite_moe && strcmp(c->model_type, "granitemoeshared") == 0 &&
        opt_u64(r, "shared_intermediate_size", NULL, MAX_WIDTH * 4ull, 0, NULL,
                &c->moe.shared_ffn))
        return -1;
    if (is_mixtral || is_phimoe || is_granite_moe) {
        /* MixtralSparseMoeBlock (modeling_mixtral.py): a router of h x n and n experts of
         * intermediate_size (w1, w3, w2) in every layer. GraniteMoeMoE
         * (modeling_granitemoe.py) has the same shapes: GraniteMoeTopKGating's router of h x n
         * without bias, GraniteMoeParallelExperts input_linear (n x 2f x h: gate and up) and
         * output_linear (n x h x f); GraniteMoeShared adds a dense GraniteMoeSharedMLP of
         * shared_intermediate_size (h x 2s in, s x h out) beside them, none when it is 0
         * (GraniteMoeSharedConfig's default) */
        if (read_every_layer_experts(r, "num_local_experts", is_phimoe ? 16 : 8,
                                     "num_experts_per_tok", 2))
            return -1;
    } else if (is_qwen_moe && read_qwen_moe(r)) {
        return -1;
    }
    if (is_mistral)
        return read_sliding(r, 0, 1);
    if (!is_qwen)
        return 0;
    bool use_sliding = false;
    uint64_t max_window_layers = 0;
    if (opt_bool(r, "use_sliding_window", false, true, &use_sliding))
        return -1;
    mark(r, "max_window_layers");
    if (jsonfile_get_u64(r->root, "max_window_layers", r->at, 0, MAX_LAYERS, &max_window_layers,
                         r->err) < 0)
        return -1;
    if (value_of(r->root, "layer_types") != NULL)
        return read_sliding(r, 0, 0);
    mark(r, "sliding_window");
    mark(r, "layer_types");
    if (!use_sliding)
        return 0;
    if (jsonfile_get_u64(r->root, "sliding_window", r->at, 1, MAX_SEQ, &c->sliding_window,
                         r->err) < 0)
        return -1;
    if (c->sliding_window && max_window_layers < c->n_layers)
        c->n_sliding_layers = c->n_layers - max_window_layers;
    if (c->n_sliding_layers == 0)
        c->sliding_window = 0;
    return 0;
}

/* Gemma 1/2/3-text (modeling_gemma*.py): GeGLU gate/up/down, RMSNorm, head_dim 256 by
 * default, the head always tied to the embedding. Gemma 2 and 3 add post-attention and
 * pre/post-feedforward norms (four per layer) and sliding windows on alternate layers
 * (Gemma 2) or five of every six (Gemma 3, sliding_window_pattern); Gemma 3 adds q/k norms. */
static int read_gemma(Reader *r)
{
    ModelConfig *c = r->cfg;
    const bool is_v1 = c->family == MODEL_FAMILY_GEMMA;
    const bool is_v3 = c->family == MODEL_FAMILY_GEMMA3;
    bool attn_bias = false;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden) ||
        opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, c->n_heads,
                "= num_attention_heads", &c->n_kv_heads) ||
        opt_u64(r, "head_dim", NULL, MAX_WIDTH, 256, NULL, &c->head_dim) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, is_v3 ? 131072 : 8192, NULL,
                &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, is_v3 ? 262208 : 256000, NULL, &c->vocab) ||
        opt_bool(r, "attention_bias", false, true, &attn_bias))
        return -1;
    mark(r, "tie_word_embeddings"); /* GemmaForCausalLM ties lm_head to embed_tokens */
    layout_default(c);
    c->is_tied = true;
    c->is_gated_mlp = true;
    c->has_qkv_bias = c->has_out_bias = attn_bias;
    if (is_v1)
        return 0;
    c->n_layer_norms = 4;
    uint64_t every = 2;
    if (is_v3) {
        c->qk_norm = QK_NORM_PER_HEAD;
        if (value_of(r->root, "layer_types") == NULL &&
            opt_u64(r, "sliding_window_pattern", NULL, MAX_LAYERS, 6, NULL, &every))
            return -1;
        mark(r, "sliding_window_pattern");
    }
    return read_sliding(r, 4096, every);
}

/* Phi-1/1.5/2 (modeling_phi.py): one input_layernorm (parallel block), q/k/v/dense and
 * fc1/fc2 with biases, optional q/k LayerNorms of head_dim, final LayerNorm, untied lm_head
 * with bias. */
static int read_phi(Reader *r)
{
    ModelConfig *c = r->cfg;
    bool qk_ln = false;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden) ||
        opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, c->n_heads,
                "= num_attention_heads, PhiConfig", &c->n_kv_heads) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 2048, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 51200, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, false, &c->is_tied) ||
        opt_bool(r, "qk_layernorm", false, true, &qk_ln))
        return -1;
    layout_default(c);
    c->norm = NORM_AND_BIAS;
    c->n_layer_norms = 1;
    c->is_parallel_block = true; /* input_layernorm feeds attention and MLP */
    c->qk_norm = qk_ln ? QK_NORM_PER_HEAD : QK_NORM_NONE;
    c->has_qk_norm_bias = qk_ln;
    c->has_qkv_bias = c->has_out_bias = c->has_mlp_bias = true;
    c->has_lm_head_bias = !c->is_tied;
    return 0;
}

/* Phi-3 / Phi-4 (modeling_phi3.py): fused qkv_proj and gate_up_proj, no biases, RMSNorm,
 * untied; sliding_window on every layer when set. */
static int read_phi3(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden) ||
        opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, c->n_heads,
                "= num_attention_heads, Phi3Config", &c->n_kv_heads) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 4096, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 32064, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, false, &c->is_tied))
        return -1;
    layout_default(c);
    c->is_gated_mlp = true;
    c->is_gate_up_fused = true;
    c->is_qkv_fused = true;
    return read_sliding(r, 0, 1);
}

/* OLMo 1 (modeling_olmo.py): LayerNorm without parameters, SwiGLU, no biases.
 * OLMo 2 and 3 (modeling_olmo2.py, modeling_olmo3.py): RMSNorm after attention and after the
 * MLP instead of before, q_norm over all query channels and k_norm over all key channels;
 * OLMo 3 puts sliding windows on three of every four layers.
 * OLMoE (modeling_olmoe.py): OLMo 2's full-width q_norm and k_norm with Llama's pre-norms,
 * and in every layer OlmoeSparseMoeBlock: a router of h x num_experts without bias and
 * num_experts SwiGLU experts of intermediate_size (gate, up, down), no shared expert. */
static int read_olmo(Reader *r)
{
    ModelConfig *c = r->cfg;
    const bool is_v1 = c->family == MODEL_FAMILY_OLMO;
    const bool is_moe = c->family == MODEL_FAMILY_OLMOE;
    bool attn_bias = false;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden) ||
        opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, c->n_heads, "= num_attention_heads",
                &c->n_kv_heads) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, is_moe ? 4096 : 2048, NULL,
                &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 50304, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, false, &c->is_tied) ||
        opt_bool(r, "attention_bias", false, true, &attn_bias))
        return -1;
    layout_default(c);
    c->is_gated_mlp = true;
    c->has_qkv_bias = c->has_out_bias = attn_bias;
    if (is_v1) {
        c->norm = NORM_NONE;
        return 0;
    }
    c->qk_norm = QK_NORM_FULL;
    if (is_moe)
        return read_every_layer_experts(r, "num_experts", 64, "num_experts_per_tok", 8);
    return strcmp(c->model_type, "olmo3") == 0 ? read_sliding(r, 4096, 4) : 0;
}

/* StarCoder2 (modeling_starcoder2.py): LayerNorm with bias, q/k/v/o and c_fc/c_proj with
 * biases when use_bias, GQA, tied; sliding_window on every layer when set. */
static int read_starcoder2(Reader *r)
{
    ModelConfig *c = r->cfg;
    bool use_bias = true;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden) ||
        opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, c->n_heads,
                "= num_attention_heads, Starcoder2Config", &c->n_kv_heads) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 4096, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 49152, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", true, false, &c->is_tied) ||
        opt_bool(r, "use_bias", true, true, &use_bias))
        return -1;
    layout_default(c);
    c->norm = NORM_AND_BIAS;
    c->has_qkv_bias = c->has_out_bias = c->has_mlp_bias = use_bias;
    return read_sliding(r, 0, 1);
}

/* The multi-token-prediction layers a DeepSeek-V3 or GLM-4.5 checkpoint carries
 * (num_nextn_predict_layers): the CausalLM class `cls` does not build them, so they are
 * neither counted nor trained, and a warning says so. */
static int read_mtp_layers(Reader *r, const char *cls, const char *what)
{
    uint64_t n_mtp = 0;
    mark(r, "num_nextn_predict_layers");
    if (jsonfile_get_u64(r->root, "num_nextn_predict_layers", r->at, 0, MAX_LAYERS, &n_mtp,
                         r->err) < 0)
        return -1;
    if (n_mtp > 0)
        strlist_addf(&r->cfg->not_modelled,
                     "num_nextn_predict_layers = %llu (the result counts and trains the model "
                     "%s builds, without the multi-token-prediction %s)",
                     (unsigned long long)n_mtp, cls, what);
    return 0;
}

/* GLM-4.5 and GLM-4.5-Air (modeling_glm4_moe.py): grouped-query attention of head_dim 128
 * (num_attention_heads x head_dim may exceed h) with q, k, v biases under attention_bias and
 * none on o_proj, per-head q_norm and k_norm under use_qk_norm; the layers below
 * first_k_dense_replace a dense SwiGLU MLP of intermediate_size, the others Glm4MoeMoE:
 * DeepSeek-V3's sigmoid router with its e_score_correction_bias of n_routed_experts, the
 * routed experts and n_shared_experts shared ones, of moe_intermediate_size; RMSNorm as
 * Llama's; untied. The multi-token-prediction layer of the checkpoints
 * (num_nextn_predict_layers) is not built by Glm4MoeForCausalLM, which drops its weights on
 * load. Defaults are Glm4MoeConfig's (GLM-4.5-Air's shape, attention_bias false). */
static int read_glm4_moe(Reader *r)
{
    ModelConfig *c = r->cfg;
    MoeShape *m = &c->moe;
    uint64_t n_shared = 0;
    bool attn_bias = false, qk_norm = false;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, 8, NULL, &c->n_kv_heads) ||
        opt_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, 10944, NULL, &c->ffn_hidden) ||
        opt_u64(r, "moe_intermediate_size", NULL, MAX_WIDTH * 4ull, 1408, NULL,
                &m->expert_ffn) ||
        opt_u64(r, "n_routed_experts", NULL, 1u << 16, 128, NULL, &m->n_experts) ||
        opt_u64(r, "num_experts_per_tok", NULL, 1u << 16, 8, NULL, &m->top_k) ||
        opt_u64(r, "n_shared_experts", NULL, 1u << 16, 1, NULL, &n_shared) ||
        opt_u64(r, "first_k_dense_replace", NULL, MAX_LAYERS, 1, NULL, &m->first_layer) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 131072, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 151552, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, true, &c->is_tied) ||
        opt_bool(r, "attention_bias", false, false, &attn_bias) ||
        opt_bool(r, "use_qk_norm", false, false, &qk_norm))
        return -1;
    layout_default(c);
    if (read_mtp_layers(r, "Glm4MoeForCausalLM", "layer"))
        return -1;
    c->is_gated_mlp = true;
    c->has_qkv_bias = attn_bias;
    c->qk_norm = qk_norm ? QK_NORM_PER_HEAD : QK_NORM_NONE;
    m->has_router_bias = true;
    m->shared_ffn = n_shared * m->expert_ffn;
    m->step = 1;
    m->phase = 0;
    count_moe_layers(c);
    return 0;
}

/* One of DBRX's sub-configurations (DbrxAttentionConfig, DbrxFFNConfig): an object whose keys
 * the class checks itself (it raises on any other), read with its own defaults. */
static int dbrx_section(Reader *r, const char *key, const char *cls,
                        const char *const *modelled, const char *const *known, Reader *sub)
{
    mark(r, key);
    static const cJSON empty = {.type = cJSON_Object};
    const cJSON *obj = value_of(r->root, key);
    *sub = (Reader){.root = obj != NULL ? obj : &empty,
                    .at = {r->at.file, key},
                    .cfg = r->cfg,
                    .err = r->err,
                    .cls = cls};
    if (obj != NULL && (jsonfile_expect_object(obj, sub->at, r->err) ||
                        jsonfile_check_keys(obj, sub->at, modelled, known, NULL, r->err)))
        return -1;
    return 0;
}

/* DBRX (modeling_dbrx.py): per block norm_1 and norm_2, LayerNorm without bias; a fused Wqkv
 * of h x (h + 2 kv d) and out_proj h x h, no biases; DbrxFFN's router (router.layer, h x E,
 * no bias) and DbrxExpertGLU's w1, v1 and w2, each E x f x h (gate, up, down); the final
 * norm_f; an untied lm_head (DbrxConfig refuses tie_word_embeddings). resid_pdrop drops the
 * attention's and the experts' outputs in train mode (0 in the released files). */
static int read_dbrx(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "d_model", "hidden_size", MAX_WIDTH, &c->hidden) ||
        need_u64(r, "n_layers", "num_hidden_layers", MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "n_heads", "num_attention_heads", MAX_WIDTH, &c->n_heads) ||
        opt_u64(r, "max_seq_len", "max_position_embeddings", MAX_SEQ, 2048, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 32000, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, true, &c->is_tied))
        return -1;
    if (c->is_tied)
        return err_set(r->err,
                       "%s: tie_word_embeddings: expected false (DbrxConfig raises "
                       "\"tie_word_embeddings is not supported for DBRX models\"), got true",
                       r->at.file);
    layout_default(c);
    static const char *const attn_keys[] = {"kv_n_heads", NULL};
    static const char *const attn_known[] = {"clip_qkv", "rope_theta", "attn_pdrop",
                                             "model_type", NULL};
    static const char *const ffn_keys[] = {"ffn_hidden_size", "moe_num_experts", "moe_top_k",
                                           NULL};
    static const char *const ffn_known[] = {"ffn_act_fn", "moe_jitter_eps", "moe_loss_weight",
                                            "moe_normalize_expert_weights", "model_type", NULL};
    Reader attn, ffn;
    if (dbrx_section(r, "attn_config", "DbrxAttentionConfig", attn_keys, attn_known, &attn) ||
        opt_u64(&attn, "kv_n_heads", NULL, MAX_WIDTH, 1, NULL, &c->n_kv_heads) ||
        dbrx_section(r, "ffn_config", "DbrxFFNConfig", ffn_keys, ffn_known, &ffn) ||
        opt_u64(&ffn, "ffn_hidden_size", NULL, MAX_WIDTH * 4ull, 3584, NULL, &c->ffn_hidden) ||
        read_every_layer_experts(&ffn, "moe_num_experts", 4, "moe_top_k", 1))
        return -1;
    double p = 0.0;
    mark(r, "resid_pdrop");
    if (jsonfile_get_double(r->root, "resid_pdrop", r->at, 0.0, 1.0, &p, r->err) < 0)
        return -1;
    c->has_hidden_dropout = p > 0.0;
    c->norm = NORM_WEIGHT;
    c->is_gated_mlp = true;
    c->is_qkv_fused = true;
    return 0;
}

/* MPT (modeling_mpt.py): Wqkv fused, LayerNorm without bias and no linear biases unless
 * no_bias is false, expansion_ratio x d_model MLP, ALiBi, tied. */
static int read_mpt(Reader *r)
{
    ModelConfig *c = r->cfg;
    if (need_u64(r, "d_model", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "n_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "n_heads", NULL, MAX_WIDTH, &c->n_heads))
        return -1;
    uint64_t ratio = 0;
    bool no_bias = true;
    if (opt_u64(r, "expansion_ratio", NULL, 64, 4, NULL, &ratio) ||
        opt_u64(r, "max_seq_len", NULL, MAX_SEQ, 2048, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 50368, NULL, &c->vocab) ||
        opt_bool(r, "no_bias", true, false, &no_bias))
        return -1;
    layout_default(c);
    c->ffn_hidden = ratio * c->hidden;
    c->n_kv_heads = c->n_heads;
    c->norm = no_bias ? NORM_WEIGHT : NORM_AND_BIAS;
    c->has_qkv_bias = c->has_out_bias = c->has_mlp_bias = !no_bias;
    c->is_tied = true;      /* MPT reuses wte for the output logits */
    c->is_qkv_fused = true; /* Wqkv */
    return 0;
}

/* DeepSeek-V2/V3 and Kimi-K2 (modeling_deepseek_v3.py, DeepSeek's modeling_deepseek.py):
 * RMSNorm, multi-head latent attention (q_a_proj h x q_lora_rank, q_a_layernorm, q_b_proj to
 * heads x (qk_nope + qk_rope), or q_proj h x heads x (qk_nope + qk_rope) when q_lora_rank is
 * null; kv_a_proj_with_mqa h x (kv_lora_rank + qk_rope), kv_a_layernorm, kv_b_proj to heads x
 * (qk_nope + v_head_dim); o_proj heads x v_head_dim x h), dense SwiGLU MLPs of
 * intermediate_size in the first first_k_dense_replace layers, and in every moe_layer_freq-th
 * layer after them a DeepseekV3MoE: router h x n_routed_experts (with the
 * e_score_correction_bias of n_routed_experts under topk_method noaux_tc), n_routed_experts
 * experts of moe_intermediate_size and one shared MLP of n_shared_experts x
 * moe_intermediate_size. The multi-token-prediction layers (num_nextn_predict_layers) are not
 * built by DeepseekV3ForCausalLM and are not counted. */
static int read_deepseek(Reader *r)
{
    ModelConfig *c = r->cfg;
    MoeShape *m = &c->moe;
    MlaShape *a = &c->mla;
    const bool is_v2 = strcmp(c->model_type, "deepseek_v2") == 0;
    uint64_t n_shared = 0, freq = 1;
    bool attn_bias = false;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden) ||
        need_u64(r, "moe_intermediate_size", NULL, MAX_WIDTH * 4ull, &m->expert_ffn) ||
        need_u64(r, "n_routed_experts", NULL, 1u << 16, &m->n_experts) ||
        need_u64(r, "num_experts_per_tok", NULL, 1u << 16, &m->top_k) ||
        need_u64(r, "kv_lora_rank", NULL, MAX_WIDTH, &a->kv_lora_rank) ||
        need_u64(r, "qk_nope_head_dim", NULL, MAX_WIDTH, &a->qk_nope_dim) ||
        need_u64(r, "qk_rope_head_dim", NULL, MAX_WIDTH, &a->qk_rope_dim) ||
        need_u64(r, "v_head_dim", NULL, MAX_WIDTH, &a->v_head_dim) ||
        opt_u64(r, "n_shared_experts", NULL, 1u << 16, is_v2 ? 2 : 1, NULL, &n_shared) ||
        opt_u64(r, "first_k_dense_replace", NULL, MAX_LAYERS, is_v2 ? 0 : 3, NULL,
                &m->first_layer) ||
        opt_u64(r, "moe_layer_freq", NULL, MAX_LAYERS, 1, NULL, &freq) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, is_v2 ? 2048 : 4096, NULL,
                &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, is_v2 ? 102400 : 129280, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, true, &c->is_tied) ||
        opt_bool(r, "attention_bias", false, true, &attn_bias))
        return -1;
    char path[64];
    /* q_lora_rank null (DeepSeek-V2-Lite) projects the queries straight from h */
    mark(r, "q_lora_rank");
    if (jsonfile_get_u64(r->root, "q_lora_rank", r->at, 1, MAX_WIDTH, &a->q_lora_rank, r->err) <
        0)
        return -1;
    if (attn_bias)
        return err_set(r->err,
                       "%s: %s: expected false (biases on the latent-attention projections are "
                       "not modelled), got true",
                       r->at.file, jsonfile_key_path(r->at, "attention_bias", path, sizeof path));
    /* the router's selection rule decides whether it carries a score-correction bias */
    mark(r, "topk_method");
    char method[32] = "";
    if (jsonfile_get_string(r->root, "topk_method", r->at, method, sizeof method, r->err) < 0)
        return -1;
    if (method[0] == '\0')
        snprintf(method, sizeof method, "%s", is_v2 ? "greedy" : "noaux_tc");
    if (strcmp(method, "noaux_tc") == 0)
        m->has_router_bias = true;
    else if (strcmp(method, "greedy") != 0 && strcmp(method, "group_limited_greedy") != 0)
        return err_set(r->err,
                       "%s: %s: expected one of greedy, group_limited_greedy, noaux_tc, got "
                       "\"%s\" (a router zerosim does not model)",
                       r->at.file, jsonfile_key_path(r->at, "topk_method", path, sizeof path),
                       method);
    if (read_mtp_layers(r, "DeepseekV3ForCausalLM", "modules"))
        return -1;
    mark(r, "num_key_value_heads"); /* MLA: every head has its own k and v */
    layout_default(c);
    c->n_kv_heads = c->n_heads;
    c->head_dim = a->qk_nope_dim + a->qk_rope_dim;
    c->is_gated_mlp = true;
    m->shared_ffn = n_shared * m->expert_ffn;
    m->step = freq;
    m->phase = 0;
    count_moe_layers(c);
    return 0;
}

/* gpt-oss (modeling_gpt_oss.py, GptOssConfig's defaults: the 120b): RMSNorm, q/k/v/o of
 * head_dim 64 with biases (attention_bias), a learned sink logit per head (self_attn.sinks),
 * and in every layer GptOssMLP: a router of h x num_local_experts with its bias, and
 * num_local_experts experts whose gate_up_proj (h x 2 intermediate_size) and down_proj carry
 * biases; untied head; sliding windows of 128 on alternate layers from the first
 * (layer_types). The experts' clamped SwiGLU (swiglu_limit, alpha 1.702) is timed as the
 * gated MLP's activation. */
static int read_gpt_oss(Reader *r)
{
    ModelConfig *c = r->cfg;
    MoeShape *m = &c->moe;
    bool attn_bias = true;
    if (need_u64(r, "hidden_size", NULL, MAX_WIDTH, &c->hidden) ||
        need_u64(r, "num_hidden_layers", NULL, MAX_LAYERS, &c->n_layers) ||
        need_u64(r, "num_attention_heads", NULL, MAX_WIDTH, &c->n_heads) ||
        need_u64(r, "intermediate_size", NULL, MAX_WIDTH * 4ull, &c->ffn_hidden) ||
        opt_u64(r, "num_key_value_heads", NULL, MAX_WIDTH, 8, NULL, &c->n_kv_heads) ||
        opt_u64(r, "head_dim", NULL, MAX_WIDTH, 64, NULL, &c->head_dim) ||
        opt_u64(r, "max_position_embeddings", NULL, MAX_SEQ, 131072, NULL, &c->max_seq) ||
        opt_u64(r, "vocab_size", NULL, MAX_VOCAB, 201088, NULL, &c->vocab) ||
        opt_bool(r, "tie_word_embeddings", false, false, &c->is_tied) ||
        opt_bool(r, "attention_bias", true, false, &attn_bias) ||
        opt_u64(r, "num_local_experts", "num_experts", 1u << 16, 128, NULL, &m->n_experts) ||
        opt_u64(r, "num_experts_per_tok", "experts_per_token", 1u << 16, 4, NULL, &m->top_k))
        return -1;
    mark(r, "swiglu_limit");
    mark(r, "swiglu_alpha");
    mark(r, "initial_context_length"); /* YaRN's original context: rotary, no shape */
    layout_default(c);
    c->is_gated_mlp = true;
    c->has_qkv_bias = c->has_out_bias = attn_bias;
    c->has_attention_sinks = true;
    m->expert_ffn = c->ffn_hidden;
    m->has_router_bias = true;
    m->has_expert_bias = true;
    m->step = 1;
    count_moe_layers(c);
    return read_sliding(r, 128, 2);
}

/* ------------------------------------------------------------------------ picking a family */

static int refuse(Reader *r, const char *key, const char *found)
{
    char path[64];
    for (size_t i = 0; i < sizeof unsupported_types / sizeof unsupported_types[0]; i++)
        if (strcmp(found, unsupported_types[i].model_type) == 0)
            return err_set(r->err,
                           "%s: %s: expected a decoder-only family zerosim models, got \"%s\" "
                           "(%s, not supported)",
                           r->at.file, jsonfile_key_path(r->at, key, path, sizeof path), found,
                           unsupported_types[i].what);
    static const char *const vision_keys[] = {"vision_config", "vision_tower", "mm_vision_tower"};
    for (size_t i = 0; i < sizeof vision_keys / sizeof vision_keys[0]; i++)
        if (cJSON_GetObjectItemCaseSensitive(r->root, vision_keys[i]) != NULL)
            return err_set(r->err,
                           "%s: %s: expected a decoder-only family zerosim models, got \"%s\" "
                           "(vision-language: it has %s; not supported)",
                           r->at.file, jsonfile_key_path(r->at, key, path, sizeof path), found,
                           vision_keys[i]);
    char list[512];
    size_t used = 0;
    for (size_t i = 0; i < sizeof known_types / sizeof known_types[0] && used < sizeof list; i++)
        if (strncmp(known_types[i].model_type, "Refined", 7) != 0)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? " " : "",
                                     known_types[i].model_type);
    return err_set(r->err,
                   "%s: %s: expected a family zerosim models (%s), got \"%s\" (not supported)",
                   r->at.file, jsonfile_key_path(r->at, key, path, sizeof path), list, found);
}

/* Sets cfg->family, r->cls and *read from model_type or architectures; with neither, from
 * the key style (recorded). */
static int pick_family(Reader *r, ReadFn *read)
{
    ModelConfig *cfg = r->cfg;
    mark(r, "model_type");
    mark(r, "architectures");
    if (jsonfile_get_string(r->root, "model_type", r->at, cfg->model_type, sizeof cfg->model_type,
                            r->err) < 0)
        return -1;
    const cJSON *archs = value_of(r->root, "architectures");
    const cJSON *arch = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
    const char *arch_name = cJSON_IsString(arch) ? arch->valuestring : NULL;
    if (cfg->model_type[0] == '\0' && arch_name != NULL) {
        for (size_t i = 0; i < sizeof known_architectures / sizeof known_architectures[0]; i++)
            if (strcmp(arch_name, known_architectures[i].architecture) == 0)
                snprintf(cfg->model_type, sizeof cfg->model_type, "%s",
                         known_architectures[i].model_type);
        if (cfg->model_type[0] == '\0')
            return refuse(r, "architectures", arch_name);
        strlist_addf(&cfg->defaults_used, "model_type = %s (from architectures %s)",
                     cfg->model_type, arch_name);
    }
    /* A checkpoint saved from a classification or embedding head is not a causal LM: zerosim
     * counts and trains the LM head. */
    if (arch_name != NULL) {
        const size_t n = strlen(arch_name);
        const bool is_lm = (n >= 11 && strcmp(arch_name + n - 11, "ForCausalLM") == 0) ||
                           (n >= 11 && strcmp(arch_name + n - 11, "LMHeadModel") == 0);
        if (!is_lm)
            strlist_addf(&cfg->not_modelled,
                         "architectures %s (the result assumes causal-LM training with an "
                         "LM head)",
                         arch_name);
    }
    if (cfg->model_type[0] != '\0') {
        for (size_t i = 0; i < sizeof known_types / sizeof known_types[0]; i++) {
            if (strcmp(cfg->model_type, known_types[i].model_type) == 0) {
                cfg->family = known_types[i].family;
                r->cls = known_types[i].cls;
                *read = known_types[i].read;
                return 0;
            }
        }
        return refuse(r, "model_type", cfg->model_type);
    }
    const char *style;
    if (value_of(r->root, "n_embd") != NULL) {
        cfg->family = MODEL_FAMILY_GPT2;
        r->cls = "GPT2Config";
        *read = read_gpt2;
        style = "GPT-2 style (n_embd)";
    } else if (value_of(r->root, "d_model") != NULL) {
        cfg->family = MODEL_FAMILY_MPT;
        r->cls = "MptConfig";
        *read = read_mpt;
        style = "MPT style (d_model)";
    } else if (value_of(r->root, "hidden_size") != NULL) {
        cfg->family = MODEL_FAMILY_LLAMA;
        r->cls = "LlamaConfig";
        *read = read_llama;
        style = "Llama style (hidden_size)";
    } else {
        char path[64];
        return err_set(r->err,
                       "%s: %s: expected model_type, architectures or one of the shape keys "
                       "hidden_size, n_embd or d_model, got none",
                       r->at.file, jsonfile_key_path(r->at, "(top level)", path, sizeof path));
    }
    strlist_addf(&cfg->defaults_used,
                 "architecture read as %s: neither model_type nor architectures given", style);
    return 0;
}

/* ------------------------------------------------------------------------------ the keys */

static bool in_list(const char *key, const char *const *list)
{
    for (size_t i = 0; list[i] != NULL; i++)
        if (strcmp(key, list[i]) == 0)
            return true;
    return false;
}

/* Sorts the keys no reader looked up (see the top comment). Returns -1 on a typo. */
static int check_keys(Reader *r)
{
    const char *absent[MAX_READ + 1];
    size_t n_absent = 0;
    for (size_t i = 0; i < r->n_read; i++)
        if (cJSON_GetObjectItemCaseSensitive(r->root, r->read[i]) == NULL)
            absent[n_absent++] = r->read[i];
    absent[n_absent] = NULL;
    /* one expert group (GLM-4.5's n_group 1) limits nothing: no routing assumption */
    const cJSON *groups = value_of(r->root, "n_group");
    const bool is_one_group = cJSON_IsNumber(groups) && groups->valuedouble <= 1.0;
    const cJSON *item;
    cJSON_ArrayForEach(item, r->root)
    {
        const char *key = item->string ? item->string : "";
        bool is_read = false;
        for (size_t i = 0; i < r->n_read && !is_read; i++)
            is_read = strcmp(key, r->read[i]) == 0;
        if (is_read || in_list(key, vocab_hf_metadata))
            continue;
        /* A dense family's modeling file builds one MLP per layer whatever expert count the
         * file carries: counting that would be silently wrong. */
        static const char *const expert_keys[] = {"num_local_experts", "num_experts",
                                                  "n_routed_experts", "moe_intermediate_size",
                                                  "num_experts_per_tok", NULL};
        if (!is_moe_family(r->cfg->family) && in_list(key, expert_keys)) {
            char path[256];
            return err_set(r->err,
                           "%s: %s: expected no mixture-of-experts key in a %s config (its "
                           "modeling file builds one dense MLP per layer), got \"%s\" (give the "
                           "MoE family's model_type: mixtral, qwen2_moe, qwen3_moe, "
                           "deepseek_v2, deepseek_v3, gpt_oss, olmoe, granitemoe, dbrx, phimoe, "
                           "glm4_moe)",
                           r->at.file, jsonfile_key_path(r->at, key, path, sizeof path),
                           family_names[r->cfg->family], key);
        }
        if (is_one_group && (strcmp(key, "n_group") == 0 || strcmp(key, "topk_group") == 0))
            continue;
        const char *assumed = vocab_hf_assumption(key);
        if (assumed != NULL) {
            strlist_addf(&r->cfg->not_modelled, "%s (%s)", key, assumed);
            continue;
        }
        const char *best = suggest_closest(key, absent);
        if (best != NULL) {
            char path[256];
            return err_set(r->err,
                           "%s: %s: expected a known key, got unknown key \"%s\" (did you "
                           "mean \"%s\"?)",
                           r->at.file, jsonfile_key_path(r->at, key, path, sizeof path), key,
                           best);
        }
        strlist_addf(&r->cfg->unknown_keys, "%s", key);
    }
    return 0;
}

static int check_shape(Reader *r)
{
    ModelConfig *c = r->cfg;
    char path[64];
    /* Messages name the keys as the file spells them. */
    static const char *const heads_keys[] = {"num_attention_heads", "n_head", "n_heads", NULL};
    static const char *const hidden_keys[] = {"hidden_size", "n_embd", "n_embed", "d_model", NULL};
    const char *heads_key = heads_keys[0], *hidden_key = hidden_keys[0];
    for (size_t i = 0; heads_keys[i] != NULL; i++)
        if (value_of(r->root, heads_keys[i]) != NULL) {
            heads_key = heads_keys[i];
            break;
        }
    for (size_t i = 0; hidden_keys[i] != NULL; i++)
        if (value_of(r->root, hidden_keys[i]) != NULL) {
            hidden_key = hidden_keys[i];
            break;
        }
    if (c->head_dim == 0) { /* Gemma reads its own */
        mark(r, "head_dim");
        uint64_t head_dim = 0;
        int rc = jsonfile_get_u64(r->root, "head_dim", r->at, 1, MAX_WIDTH, &head_dim, r->err);
        if (rc < 0)
            return -1;
        if (rc == 0 && c->hidden % c->n_heads != 0)
            return err_set(r->err, "%s: %s: expected a divisor of %s = %llu, got %llu",
                           r->at.file, jsonfile_key_path(r->at, heads_key, path, sizeof path),
                           hidden_key, (unsigned long long)c->hidden,
                           (unsigned long long)c->n_heads);
        if (rc == 0 && c->family == MODEL_FAMILY_QWEN3) {
            head_dim = 128;
            strlist_addf(&c->defaults_used, "head_dim = 128 (Qwen3Config default)");
            rc = 1;
        }
        c->head_dim = rc ? head_dim : c->hidden / c->n_heads;
    }
    /* An explicit head_dim lets heads x head_dim exceed hidden; bounding it like hidden keeps
     * every product in params_count inside uint64_t. */
    if (c->n_heads * c->head_dim > MAX_WIDTH)
        return err_set(r->err, "%s: %s: expected %s x head_dim at most %u, got %llu x %llu",
                       r->at.file, jsonfile_key_path(r->at, "head_dim", path, sizeof path),
                       heads_key, MAX_WIDTH, (unsigned long long)c->n_heads,
                       (unsigned long long)c->head_dim);
    if (c->moe.n_experts > 0 && (c->moe.top_k == 0 || c->moe.top_k > c->moe.n_experts))
        return err_set(r->err, "%s: %s: expected an integer in [1, %llu] (the experts), got %llu",
                       r->at.file,
                       c->family == MODEL_FAMILY_DBRX
                           ? "ffn_config.moe_top_k"
                           : jsonfile_key_path(r->at, "num_experts_per_tok", path, sizeof path),
                       (unsigned long long)c->moe.n_experts, (unsigned long long)c->moe.top_k);
    if (c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0)
        return err_set(r->err, "%s: %s: expected a divisor of %s = %llu, got %llu", r->at.file,
                       c->family == MODEL_FAMILY_DBRX
                           ? "attn_config.kv_n_heads"
                           : jsonfile_key_path(r->at,
                                               c->family == MODEL_FAMILY_FALCON
                                                   ? "num_kv_heads"
                                                   : "num_key_value_heads",
                                               path, sizeof path),
                       heads_key, (unsigned long long)c->n_heads,
                       (unsigned long long)c->n_kv_heads);
    return 0;
}

/* A family reader's failure may come from a typo ("num_hiden_layers" leaves the real key
 * missing): the typo is the cause, so it is the message. */
static int read_family(Reader *r, ReadFn read)
{
    Err first = {0};
    Err *user_err = r->err;
    r->err = &first;
    int rc = read(r);
    if (rc == 0)
        rc = check_shape(r);
    Err typo = {0};
    r->err = &typo;
    int typo_rc = check_keys(r);
    r->err = user_err;
    if (typo_rc != 0) {
        strlist_fini(&r->cfg->unknown_keys);
        return err_set(user_err, "%s", typo.msg);
    }
    if (rc != 0)
        return err_set(user_err, "%s", first.msg);
    return 0;
}

int model_config_parse(ModelConfig *out, const char *file, const char *text, size_t n_bytes,
                       Err *err)
{
    memset(out, 0, sizeof *out);
    strlist_init(&out->not_modelled);
    strlist_init(&out->unknown_keys);
    strlist_init(&out->defaults_used);
    snprintf(out->name, sizeof out->name, "%s", file);
    cJSON *root = jsonfile_parse(file, text, n_bytes, err);
    if (root == NULL)
        return -1;
    Reader r = {.root = root, .at = {file, ""}, .cfg = out, .err = err};
    ReadFn read = NULL;
    int rc = -1;
    if (jsonfile_expect_object(root, r.at, err) == 0 && pick_family(&r, &read) == 0)
        rc = read_family(&r, read);
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
    strlist_fini(&cfg->unknown_keys);
    strlist_fini(&cfg->defaults_used);
}
