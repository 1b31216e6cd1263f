/*
 * params.c - module-by-module parameter counts (see params.h).
 *
 * Shapes follow the HuggingFace implementations: GPT-2 (Conv1D c_attn fusing Q,K,V; c_fc,
 * c_proj; LayerNorm with bias), GPT-NeoX (query_key_value, dense_h_to_4h, dense_4h_to_h),
 * Llama/Mistral (q,k,v,o, gate/up/down, RMSNorm), MPT (Wqkv, up/down, LayerNorm without bias).
 * With grouped-query attention K and V project to n_kv_heads x head_dim.
 */
#include "params.h"

static void add(ModelParams *p, const char *name, uint64_t weight, uint64_t bias, bool gemm)
{
    ParamModule *m = &p->layer[p->n_layer_modules++];
    m->name = name;
    m->weight = weight;
    m->bias = bias;
    m->is_gemm = gemm;
}

void params_count(const ModelConfig *cfg, ModelParams *out)
{
    *out = (ModelParams){0};
    const uint64_t h = cfg->hidden, f = cfg->ffn_hidden;
    const uint64_t q_dim = cfg->n_heads * cfg->head_dim;
    const uint64_t kv_dim = cfg->n_kv_heads * cfg->head_dim;
    const uint64_t norm_bias = cfg->has_norm_bias ? h : 0;
    const bool b = cfg->has_linear_bias;

    add(out, "input_norm", h, norm_bias, false);
    if (cfg->is_qkv_fused) {
        add(out, "qkv_proj", h * (q_dim + 2 * kv_dim), b ? q_dim + 2 * kv_dim : 0, true);
    } else {
        add(out, "q_proj", h * q_dim, b ? q_dim : 0, true);
        add(out, "k_proj", h * kv_dim, b ? kv_dim : 0, true);
        add(out, "v_proj", h * kv_dim, b ? kv_dim : 0, true);
    }
    add(out, "o_proj", q_dim * h, b ? h : 0, true);
    add(out, "post_attention_norm", h, norm_bias, false);
    if (cfg->is_gated_mlp) {
        add(out, "gate_proj", h * f, b ? f : 0, true);
        add(out, "up_proj", h * f, b ? f : 0, true);
    } else {
        add(out, "up_proj", h * f, b ? f : 0, true);
    }
    add(out, "down_proj", f * h, b ? h : 0, true);

    uint64_t largest = 0;
    for (size_t i = 0; i < out->n_layer_modules; i++) {
        const ParamModule *m = &out->layer[i];
        out->per_layer += m->weight + m->bias;
        if (m->is_gemm)
            out->gemm_per_layer += m->weight;
        if (m->weight + m->bias > largest)
            largest = m->weight + m->bias;
    }
    out->embedding = cfg->vocab * h;
    out->position = cfg->has_learned_pos ? cfg->max_seq * h : 0;
    out->final_norm = h + norm_bias;
    out->lm_head = cfg->is_tied ? 0 : cfg->vocab * h;
    out->total = cfg->n_layers * out->per_layer + out->embedding + out->position + out->final_norm +
                 out->lm_head;
    if (out->embedding > largest)
        largest = out->embedding;
    if (out->position > largest)
        largest = out->position;
    out->largest_module = largest;
}

uint64_t params_persistent(const ModelParams *p, uint64_t n_layers, uint64_t threshold)
{
    uint64_t per_layer = 0;
    for (size_t i = 0; i < p->n_layer_modules; i++) {
        if (p->layer[i].weight <= threshold)
            per_layer += p->layer[i].weight;
        if (p->layer[i].bias > 0 && p->layer[i].bias <= threshold)
            per_layer += p->layer[i].bias;
    }
    /* The final norm is two vectors of h (weight, bias) or one. */
    uint64_t final_norm = 0;
    uint64_t h = p->layer[0].weight; /* input_norm weight is h */
    if (h <= threshold)
        final_norm = p->final_norm;
    uint64_t rest = 0;
    if (p->embedding <= threshold)
        rest += p->embedding;
    if (p->position > 0 && p->position <= threshold)
        rest += p->position;
    if (p->lm_head > 0 && p->lm_head <= threshold)
        rest += p->lm_head;
    return n_layers * per_layer + final_norm + rest;
}
