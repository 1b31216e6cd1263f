/*
 * model_config.h - a transformer's shape, read from a HuggingFace config.json or a preset.
 *
 * Accepts config.json files as HuggingFace publishes them: Llama/Mistral style (hidden_size,
 * num_key_value_heads, intermediate_size, gated MLP, RMSNorm), GPT-2 style (n_embd, n_layer,
 * n_head, learned positions, tied embeddings), GPT-NeoX style and MPT style (d_model, n_layers,
 * expansion_ratio). A bare name ("llama-2-7b") resolves to workloads/models/<name>.json. The
 * result is a plain record of the numbers model/ needs; nothing here computes costs.
 */
#ifndef ZEROSIM_INPUTS_MODEL_CONFIG_H
#define ZEROSIM_INPUTS_MODEL_CONFIG_H

#include "../common/err.h"
#include "../common/strlist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ModelFamily {
    MODEL_FAMILY_GPT2,  /* GPT-2 / Megatron GPT: LayerNorm, biases, GeLU MLP, learned positions */
    MODEL_FAMILY_NEOX,  /* GPT-NeoX / Pythia: LayerNorm, biases, GeLU MLP, rotary, untied head */
    MODEL_FAMILY_LLAMA, /* Llama / Mistral: RMSNorm, no biases, SwiGLU MLP, rotary, GQA */
    MODEL_FAMILY_MPT,   /* MPT: LayerNorm without bias, no biases, GeLU MLP, ALiBi, tied */
} ModelFamily;

typedef struct ModelConfig {
    char name[128];      /* preset name or file path, for reports */
    char model_type[64]; /* HuggingFace model_type as written ("" when absent) */
    ModelFamily family;
    uint64_t hidden;       /* h */
    uint64_t n_layers;     /* L */
    uint64_t n_heads;      /* a */
    uint64_t n_kv_heads;   /* grouped-query attention; == n_heads for multi-head attention */
    uint64_t head_dim;     /* h / a unless the config says otherwise */
    uint64_t ffn_hidden;   /* f: MLP inner width */
    uint64_t vocab;        /* V */
    uint64_t max_seq;      /* context length the config declares */
    bool is_gated_mlp;     /* gate, up and down projections (SwiGLU) instead of two */
    bool has_linear_bias;  /* linear layers carry biases */
    bool has_norm_bias;    /* LayerNorm with bias (2h per norm) rather than RMSNorm (h) */
    bool has_learned_pos;  /* learned absolute position table of max_seq x h */
    bool is_tied;          /* output projection shares the input embedding */
    bool is_qkv_fused;     /* Q, K, V are one module (matters for "largest layer") */
    StrList not_modelled;  /* keys the file has that zerosim reads but does not model */
    StrList defaults_used; /* "key = value (why)" for every value not in the file */
} ModelConfig;

/* Parses config.json text; `file` names it in messages. On failure out holds nothing that
 * needs freeing beyond model_config_fini. */
int model_config_parse(ModelConfig *out, const char *file, const char *text, size_t n_bytes,
                       Err *err);

/* Loads a path, or resolves a preset name in <data_dir>/workloads/models/. */
int model_config_load(ModelConfig *out, const char *name_or_path, const char *data_dir, Err *err);

/* Frees the lists; safe on a zeroed or failed config. */
void model_config_fini(ModelConfig *cfg);

#endif
