/*
 * model_config.h - a transformer's shape, read from a HuggingFace config.json or a preset.
 *
 * A HuggingFace config.json is an open format: every model type adds its own keys. The family
 * is recognised by model_type (or, when it is absent, by architectures[0]) and decides which
 * keys name the shape, the defaults of the transformers configuration class, and the module
 * layout that parameter counts follow: biases, norms and their number per layer, fused or
 * separate projections, gated MLPs, tied embeddings, learned positions, qk-norms, sliding-window
 * layers. Decoder-only families zerosim models: GPT-2, GPT-BigCode, GPT-J, GPT-NeoX/Pythia,
 * OPT, BLOOM, Falcon, Llama, Mistral, Qwen2/2.5, Qwen3, Gemma 1/2/3-text, Phi-1/2, Phi-3/4,
 * OLMo 1/2/3, StarCoder2, MPT, and the mixtures of experts Mixtral, Qwen2-MoE, Qwen3-MoE and
 * DeepSeek-V2/V3 (with its multi-head latent attention; Kimi-K2 is a DeepSeek-V3). Encoder-decoder,
 * encoder-only, vision-language, other mixture-of-experts and state-space families, and any
 * model_type zerosim does not know, are refused with one line naming the family; a dense
 * family's config that carries an expert count is refused too (its modeling file would build
 * one dense MLP, and counting that would be silently wrong). Keys zerosim does not read are at most a warning;
 * a key that is a near miss of an absent key zerosim reads is an error (a typo). A bare name
 * ("llama-2-7b") resolves to workloads/models/<name>.json. Nothing here computes costs.
 */
#ifndef ZEROSIM_INPUTS_MODEL_CONFIG_H
#define ZEROSIM_INPUTS_MODEL_CONFIG_H

#include "../common/err.h"
#include "../common/strlist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sequence length zerosim trains at when the command line gives none: 2048 tokens, or the
 * model's context when shorter. A training default, not the model's maximum context (a
 * 131,072-token Llama-3.2 context would need a terabyte of activations): LLaMA-Factory's
 * cutoff_len defaults to 2048 (src/llamafactory/hparams/data_args.py), and 2048 is the training
 * length of GPT-3, OPT, BLOOM, Llama-1, Falcon and Pythia. */
#define MODEL_CONFIG_TRAIN_SEQ_LEN 2048u

typedef enum ModelFamily {
    MODEL_FAMILY_GPT2,       /* GPT-2 / Megatron GPT: LayerNorm, biases, GeLU MLP, learned pos */
    MODEL_FAMILY_BIGCODE,    /* GPT-BigCode (SantaCoder, StarCoder): GPT-2 with multi-query */
    MODEL_FAMILY_GPTJ,       /* GPT-J: one LayerNorm (parallel block), biased MLP and LM head */
    MODEL_FAMILY_NEOX,       /* GPT-NeoX / Pythia: LayerNorm, biases, GeLU MLP, untied head */
    MODEL_FAMILY_OPT,        /* OPT: biases, ReLU MLP, learned positions offset by 2 */
    MODEL_FAMILY_BLOOM,      /* BLOOM: ALiBi, LayerNorm after the embedding, biases */
    MODEL_FAMILY_FALCON,     /* Falcon: multi-query or grouped (new decoder), parallel block */
    MODEL_FAMILY_LLAMA,      /* Llama 1-3 / Mistral: RMSNorm, SwiGLU, GQA */
    MODEL_FAMILY_QWEN2,      /* Qwen2 / Qwen2.5: Llama with Q, K, V biases */
    MODEL_FAMILY_QWEN3,      /* Qwen3: Llama with per-head q/k RMSNorm */
    MODEL_FAMILY_GEMMA,      /* Gemma: GeGLU, RMSNorm, head_dim 256, tied */
    MODEL_FAMILY_GEMMA2,     /* Gemma 2: four norms per layer, alternating sliding windows */
    MODEL_FAMILY_GEMMA3,     /* Gemma 3 text: Gemma 2 with q/k norms, 5:1 sliding windows */
    MODEL_FAMILY_PHI,        /* Phi-1/1.5/2: one LayerNorm (parallel block), biases everywhere */
    MODEL_FAMILY_PHI3,       /* Phi-3 / Phi-4: fused qkv and gate_up, RMSNorm */
    MODEL_FAMILY_OLMO,       /* OLMo 1: non-parametric LayerNorm, SwiGLU, no biases */
    MODEL_FAMILY_OLMO2,      /* OLMo 2 / 3: post-norms, q/k RMSNorm over all heads */
    MODEL_FAMILY_STARCODER2, /* StarCoder2: LayerNorm, biases, GQA, GeLU MLP */
    MODEL_FAMILY_MPT,        /* MPT: LayerNorm without bias, no biases, GeLU MLP, ALiBi, tied */
    MODEL_FAMILY_MIXTRAL,    /* Mixtral: Mistral with a top-k routed MoE in every layer */
    MODEL_FAMILY_QWEN2_MOE,  /* Qwen2-MoE: Qwen2 with routed experts and a gated shared expert */
    MODEL_FAMILY_QWEN3_MOE,  /* Qwen3-MoE: Qwen3 with routed experts */
    MODEL_FAMILY_DEEPSEEK,   /* DeepSeek-V2/V3, Kimi-K2: MLA, first dense layers, shared experts */
    MODEL_FAMILY_GPT_OSS,    /* gpt-oss: biased attention with sinks, biased experts, 1:1 windows */
    MODEL_FAMILY_OLMOE,      /* OLMoE: OLMo 2's q/k norms over all heads, routed experts */
    MODEL_FAMILY_GRANITE,    /* Granite 3: Llama with scalar multipliers (no shape change) */
    MODEL_FAMILY_GRANITE_MOE, /* GraniteMoE / GraniteMoeShared: Granite with routed experts */
    MODEL_FAMILY_DBRX,       /* DBRX: fused Wqkv, LayerNorm without bias, 16 experts, untied */
    MODEL_FAMILY_PHIMOE,     /* Phi-3.5-MoE: Mixtral with LayerNorm, attention and head biases */
    MODEL_FAMILY_GLM4_MOE,   /* GLM-4.5: GQA with q/k/v biases, DeepSeek-V3's routed experts */
} ModelFamily;

/* The mixture-of-experts block of a MoE family (all zero for a dense model). */
typedef struct MoeShape {
    uint64_t n_experts;     /* routed experts per MoE layer; 0: a dense model */
    uint64_t top_k;         /* experts each token is routed to (num_experts_per_tok) */
    uint64_t expert_ffn;    /* inner width of one routed expert's gated MLP */
    uint64_t shared_ffn;    /* inner width of the shared experts' MLP (DeepSeek: n_shared x
                               moe_intermediate_size; Qwen2-MoE: shared_expert_intermediate_size) */
    bool has_shared_gate;   /* Qwen2-MoE's sigmoid gate on the shared expert (h x 1) */
    bool has_router_bias;   /* a bias of n_experts on the router: DeepSeek-V3's
                               e_score_correction_bias (noaux_tc), gpt-oss's router.bias */
    bool has_expert_bias;   /* each routed expert's projections carry biases (gpt-oss's
                               gate_up_proj_bias of 2 x expert_ffn, down_proj_bias of h) */
    uint64_t first_layer;   /* layers before it are dense (first_k_dense_replace) */
    uint64_t step;          /* of the later layers, those with i % step == phase are MoE */
    uint64_t phase;
    uint64_t dense_layers[16]; /* Qwen's mlp_only_layers: dense whatever the rule says */
    uint32_t n_dense_listed;
    uint64_t n_moe_layers;  /* layers whose MLP is the MoE block */
} MoeShape;

/* DeepSeek's multi-head latent attention (all zero for ordinary attention). */
typedef struct MlaShape {
    uint64_t q_lora_rank;  /* 0: q_proj straight from h */
    uint64_t kv_lora_rank; /* > 0: MLA */
    uint64_t qk_nope_dim;  /* per head, the part of q and k without rotary embedding */
    uint64_t qk_rope_dim;  /* ... and the rotary part (k's is shared by all heads) */
    uint64_t v_head_dim;
} MlaShape;

/* What one norm holds. */
typedef enum NormKind {
    NORM_NONE,     /* non-parametric LayerNorm (OLMo 1) */
    NORM_WEIGHT,   /* RMSNorm, or LayerNorm without bias: h */
    NORM_AND_BIAS, /* LayerNorm with bias: 2h */
} NormKind;

/* Norms on the queries and keys inside attention. */
typedef enum QkNorm {
    QK_NORM_NONE,
    QK_NORM_PER_HEAD, /* one head_dim-wide norm each for q and k (Qwen3, Gemma 3) */
    QK_NORM_FULL,     /* norms over all query and all key channels (OLMo 2) */
} QkNorm;

typedef struct ModelConfig {
    char name[128];      /* preset name or file path, for reports */
    char model_type[64]; /* HuggingFace model_type as written, or as architectures implies */
    ModelFamily family;
    uint64_t hidden;       /* h */
    uint64_t n_layers;     /* L */
    uint64_t n_heads;      /* a */
    uint64_t n_kv_heads;   /* grouped-query attention; == n_heads for multi-head attention */
    uint64_t head_dim;     /* h / a unless the config says otherwise */
    uint64_t ffn_hidden;   /* f: MLP inner width */
    uint64_t vocab;        /* V */
    uint64_t max_seq;      /* context length the config declares */
    uint64_t embed_dim;    /* token-embedding width: h, or OPT's word_embed_proj_dim */
    uint64_t position_rows; /* rows of the learned position table; 0 for rotary/ALiBi */
    NormKind norm;
    unsigned n_layer_norms; /* h-wide norms per layer: 1 (parallel block), 2, 4 (Gemma 2/3) */
    bool has_final_norm;
    bool has_embed_norm;   /* a norm right after the token embedding (BLOOM) */
    bool is_parallel_block; /* attention and MLP read the same layer input (GPT-J, Phi,
                               Falcon, GPT-NeoX with use_parallel_residual) */
    QkNorm qk_norm;
    bool has_qk_norm_bias; /* Phi's qk_layernorm is a LayerNorm with bias */
    bool has_qkv_bias;     /* Q, K, V projections carry biases */
    bool has_out_bias;     /* the attention output projection carries a bias */
    bool has_mlp_bias;     /* MLP projections carry biases */
    bool has_lm_head_bias; /* the untied output projection carries a bias (GPT-J, Phi) */
    bool is_gated_mlp;     /* gate, up and down projections (SwiGLU/GeGLU) instead of two */
    bool is_gelu_new;      /* activation_function "gelu_new": transformers' tanh GeLU written
                              as eight PyTorch operations (activations.py; GPT-2's and GPT-J's
                              default), one kernel each under --elementwise eager */
    bool is_gate_up_fused; /* gate and up are one module (Phi-3) */
    bool has_hidden_dropout; /* dropout after attention and after the MLP is on (OPT's
                                dropout, GPT-2's and GPT-BigCode's resid_pdrop > 0) */
    bool has_attention_dropout; /* GPT-2's and GPT-BigCode's attn_pdrop > 0 */
    bool is_tied;          /* output projection shares the input embedding */
    bool is_qkv_fused;     /* Q, K, V are one module (matters for "largest layer") */
    bool has_attention_sinks; /* a learned sink logit per head in the softmax (gpt-oss) */
    uint64_t sliding_window;   /* keys a sliding-window layer attends to; 0 when none */
    uint64_t n_sliding_layers; /* layers with sliding-window attention */
    MoeShape moe;
    MlaShape mla;
    StrList not_modelled;  /* "key (what the result assumes instead)" for keys that would
                              change the result; metadata keys are not listed */
    StrList unknown_keys;  /* keys zerosim neither reads nor knows; ignored */
    StrList defaults_used; /* "key = value (why)" for every value not in the file */
} ModelConfig;

/* Parses config.json text; `file` names it in messages. On failure out holds nothing that
 * needs freeing beyond model_config_fini. */
int model_config_parse(ModelConfig *out, const char *file, const char *text, size_t n_bytes,
                       Err *err);

/* Loads a path, or resolves a preset name in <data_dir>/workloads/models/. */
int model_config_load(ModelConfig *out, const char *name_or_path, const char *data_dir, Err *err);

/* The family's name as zerosim reports it ("Qwen2", "GPT-NeoX"). */
const char *model_config_family_name(ModelFamily family);

/* The sequence length used when none is given: min(MODEL_CONFIG_TRAIN_SEQ_LEN, max_seq). */
uint64_t model_config_default_seq_len(const ModelConfig *cfg);

/* Whether layer i's MLP is the mixture of experts (false for every layer of a dense model). */
bool model_config_is_moe_layer(const ModelConfig *cfg, uint64_t layer);

/* Whether the layers run dropout after the attention and the MLP in training: GPT-2's and
 * GPT-BigCode's resid_pdrop (0.1 by default, as in Megatron's GPT) and OPT's dropout, when
 * above 0. The other families' modeling files have none or default it to 0.0
 * (LlamaAttention's attention_dropout 0.0, which nn.functional.dropout returns unchanged,
 * without a mask). Dropout is timed (model/kernels.c) and its 1-byte masks kept
 * (model/activations.c) only where this holds. */
bool model_config_has_dropout(const ModelConfig *cfg);

/* ... and on the unfused attention's probabilities: GPT-2's and GPT-BigCode's attn_pdrop. */
bool model_config_has_attention_dropout(const ModelConfig *cfg);

/* Frees the lists; safe on a zeroed or failed config. */
void model_config_fini(ModelConfig *cfg);

#endif
