/*
 * params.h - parameter counts of a transformer, module by module.
 *
 * A layer is listed as its modules (norms, attention projections, q/k norms, MLP projections),
 * each with a weight and an optional bias, as the family's HuggingFace modeling file holds
 * them; totals, the largest single module
 * (DeepSpeed's "largest layer" in its ZeRO-3 estimator) and the parameters small enough to stay
 * resident under ZeRO-3's persistence threshold all derive from that list.
 * A mixture of experts adds a second list, the MoE block of a MoE layer (router, shared
 * experts, and one routed expert's projections, which n_experts copies repeat); `layer` then
 * holds what every layer has (norms and attention) and a dense layer adds `dense_mlp`. Total
 * parameters count every expert; active parameters (what one token passes through: the
 * top-k routed experts, not all of them) set the FLOPs. MLA's low-rank projections and their
 * norms are ordinary modules of `layer`.
 */
#ifndef ZEROSIM_MODEL_PARAMS_H
#define ZEROSIM_MODEL_PARAMS_H

#include "../inputs/model_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARAMS_MAX_MODULES 16
#define PARAMS_MAX_MOE_MODULES 8

typedef struct ParamModule {
    const char *name;
    uint64_t weight; /* elements */
    uint64_t bias;   /* elements; 0 when absent */
    bool is_gemm;    /* the weight is a GEMM operand (2 FLOPs per element per token) */
    bool is_expert;  /* one routed expert's module: n_experts copies, top_k used per token */
} ParamModule;

typedef struct ModelParams {
    ParamModule layer[PARAMS_MAX_MODULES]; /* one transformer layer */
    size_t n_layer_modules;
    uint64_t per_layer;      /* all parameters of one layer */
    uint64_t gemm_per_layer; /* weights of one layer that enter GEMMs */
    uint64_t embedding;      /* before the first layer: V x embed_dim token embedding, plus
                                OPT's project_in and BLOOM's embedding norm */
    uint64_t embed_norm;     /* of which the embedding norm (vectors of h) */
    uint64_t position;       /* learned position table; 0 for rotary/ALiBi */
    uint64_t final_norm;     /* after the last layer: the final norm, plus OPT's project_out */
    uint64_t final_vectors;  /* of which the final norm (vectors of h) */
    uint64_t lm_head;        /* untied output projection (and its bias); 0 when tied */
    uint64_t hidden;         /* h, the width of every norm vector */
    uint64_t total;          /* Psi */
    uint64_t largest_module; /* biggest single module (weight + bias) */
    uint64_t largest_layer_module; /* ... of `layer`'s modules alone (no embeddings, no MoE
                                      block) */
    /* mixture of experts; all 0 for a dense model */
    ParamModule moe[PARAMS_MAX_MOE_MODULES]; /* one MoE layer's MLP block */
    size_t n_moe_modules;
    uint64_t n_moe_layers;
    uint64_t n_experts, top_k;
    uint64_t dense_mlp;      /* a dense layer's MLP, beside per_layer (0 for a dense model,
                                whose per_layer holds it) */
    uint64_t moe_replicated; /* one MoE layer's router, its bias and the shared experts: held
                                by every rank of the data-parallel group, like attention */
    uint64_t expert;         /* one routed expert */
    uint64_t experts_total;  /* every routed expert of the model: sharded over the
                                expert-data-parallel group */
    uint64_t active;         /* parameters one token passes through (total for dense models) */
    uint64_t gemm_active_moe;   /* GEMM weights a token meets in one MoE layer's block:
                                   router, shared experts, top_k experts */
    uint64_t gemm_dense_mlp;    /* ... in a dense layer's MLP (0 for a dense model) */
    uint64_t largest_layer;  /* the biggest whole layer, all its experts included */
} ModelParams;

/* The output projection's elements: the untied lm_head, or the tied embedding used again. */
uint64_t params_output_projection(const ModelParams *p);

/* Parameters of layer u (all of its experts included). */
uint64_t params_layer(const ModelParams *p, const ModelConfig *cfg, uint64_t layer);

/* Counts the parameters of cfg. */
void params_count(const ModelConfig *cfg, ModelParams *out);

/* Parameter tensors of the model (each module's weight and bias, the embeddings, the final
 * norm's vectors and the output projection), an upper bound where a module's weight and bias
 * are counted even when absent: what a framework that groups whole tensors (ZeRO-3's
 * sub-groups) can have at most. */
uint64_t params_n_tensors(const ModelParams *p, uint64_t n_layers);

/* Tensors of module m (its weight and its bias) above `threshold` elements: with 0, the ones
 * it has; with ZeRO-3's persistence threshold, the ones DeepSpeed gathers. */
unsigned params_module_tensors(const ParamModule *m, uint64_t threshold);

/* Elements held in tensors of at most `threshold` elements (ZeRO-3 keeps these resident on
 * every GPU: DeepSpeed's stage3_param_persistence_threshold, compared with <= in
 * partition_parameters.py; 0 keeps nothing resident). */
uint64_t params_persistent(const ModelParams *p, uint64_t n_layers, uint64_t threshold);

#endif
