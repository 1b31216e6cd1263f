/*
 * params.c - module-by-module parameter counts (see params.h).
 *
 * Shapes follow the HuggingFace modeling files of each family (model_config.h lists them):
 * a layer holds n_layer_norms norms of h (weight, plus bias for LayerNorm with bias; nothing
 * for OLMo 1's non-parametric norm), Q/K/V separate or fused (K and V of n_kv_heads x head_dim,
 * so grouped- and multi-query attention are exact), optional q/k norms (per head of head_dim,
 * or over all heads), the output projection, and the MLP (gate and up separate or fused, or a
 * single up projection; then down), each bias where the family has it. Around the layers: the
 * V x embed_dim token embedding (with OPT's project_in and BLOOM's embedding LayerNorm), a
 * learned position table (GPT-2, GPT-BigCode: n_positions rows; OPT: max_position_embeddings
 * + 2), the final norm (with OPT's project_out), and an untied head (with its bias in GPT-J
 * and Phi).
 */
#include "params.h"

static void add(ModelParams *p, const char *name, uint64_t weight, uint64_t bias, bool gemm)
{
    if (weight == 0)
        return; /* a non-parametric norm holds nothing */
    ParamModule *m = &p->layer[p->n_layer_modules++];
    m->name = name;
    m->weight = weight;
    m->bias = bias;
    m->is_gemm = gemm;
}

static void add_moe(ModelParams *p, const char *name, uint64_t weight, uint64_t bias, bool gemm,
                    bool is_expert)
{
    if (weight == 0)
        return;
    ParamModule *m = &p->moe[p->n_moe_modules++];
    *m = (ParamModule){name, weight, bias, gemm, is_expert};
}

uint64_t params_layer(const ModelParams *p, const ModelConfig *cfg, uint64_t layer)
{
    if (p->n_experts == 0)
        return p->per_layer;
    if (model_config_is_moe_layer(cfg, layer))
        return p->per_layer + p->moe_replicated + p->n_experts * p->expert;
    return p->per_layer + p->dense_mlp;
}

/* The MoE block of a MoE layer (model_config.h names each family's modeling file): the router
 * (h x n_experts, plus DeepSeek-V3's score-correction bias of n_experts), the shared experts'
 * gated MLP (and Qwen2-MoE's h x 1 gate on it), one routed expert's gate, up and down
 * projections (with gpt-oss's biases); and the dense MLP the other layers keep. */
static void count_moe(const ModelConfig *cfg, ModelParams *out)
{
    const MoeShape *m = &cfg->moe;
    const uint64_t h = cfg->hidden, n_dense = cfg->n_layers - m->n_moe_layers;
    out->n_moe_layers = m->n_moe_layers;
    out->n_experts = m->n_experts;
    out->top_k = m->top_k;
    add_moe(out, "router", h * m->n_experts, m->has_router_bias ? m->n_experts : 0, true, false);
    if (m->shared_ffn > 0) {
        add_moe(out, "shared_gate_proj", h * m->shared_ffn, 0, true, false);
        add_moe(out, "shared_up_proj", h * m->shared_ffn, 0, true, false);
        add_moe(out, "shared_down_proj", m->shared_ffn * h, 0, true, false);
    }
    if (m->has_shared_gate)
        add_moe(out, "shared_expert_gate", h, 0, true, false);
    /* gpt-oss's biases: gate_up_proj_bias (2 x expert_ffn, split here as gate's and up's
     * halves) and down_proj_bias (h) */
    const uint64_t fb = m->has_expert_bias ? m->expert_ffn : 0, hb = m->has_expert_bias ? h : 0;
    add_moe(out, "expert_gate_proj", h * m->expert_ffn, fb, true, true);
    add_moe(out, "expert_up_proj", h * m->expert_ffn, fb, true, true);
    add_moe(out, "expert_down_proj", m->expert_ffn * h, hb, true, true);
    for (size_t i = 0; i < out->n_moe_modules; i++) {
        const ParamModule *mm = &out->moe[i];
        if (mm->is_expert) {
            out->expert += mm->weight + mm->bias;
            out->gemm_active_moe += m->top_k * mm->weight;
        } else {
            out->moe_replicated += mm->weight + mm->bias;
            out->gemm_active_moe += mm->weight;
        }
        if (mm->weight + mm->bias > out->largest_module)
            out->largest_module = mm->weight + mm->bias;
    }
    out->experts_total = m->n_moe_layers * m->n_experts * out->expert;
    if (n_dense > 0) {
        /* gate, up, down of intermediate_size (DeepseekV3MLP, Qwen*MoeMLP); no biases */
        out->dense_mlp = 3 * h * cfg->ffn_hidden;
        out->gemm_dense_mlp = out->dense_mlp;
        if (h * cfg->ffn_hidden > out->largest_module)
            out->largest_module = h * cfg->ffn_hidden;
    }
}

void params_count(const ModelConfig *cfg, ModelParams *out)
{
    static const char *const norm_names[] = {"norm_1", "norm_2", "norm_3", "norm_4"};
    *out = (ModelParams){0};
    const uint64_t h = cfg->hidden, f = cfg->ffn_hidden, d = cfg->head_dim;
    const uint64_t q_dim = cfg->n_heads * d;
    const uint64_t kv_dim = cfg->n_kv_heads * d;
    const uint64_t norm_w = cfg->norm == NORM_NONE ? 0 : h;
    const uint64_t norm_b = cfg->norm == NORM_AND_BIAS ? h : 0;
    const uint64_t e = cfg->embed_dim ? cfg->embed_dim : h;
    out->hidden = h;

    for (unsigned i = 0; i < cfg->n_layer_norms && i < 4; i++)
        add(out, norm_names[i], norm_w, norm_b, false);
    const MlaShape *mla = &cfg->mla;
    const uint64_t v_dim = mla->kv_lora_rank > 0 ? cfg->n_heads * mla->v_head_dim : q_dim;
    if (mla->kv_lora_rank > 0) {
        /* multi-head latent attention (DeepseekV3Attention): queries through a rank
         * q_lora_rank bottleneck with its RMSNorm (or straight from h), keys and values from
         * one latent of kv_lora_rank plus the shared rotary key of qk_rope_dim */
        const uint64_t qk = mla->qk_nope_dim + mla->qk_rope_dim;
        if (mla->q_lora_rank > 0) {
            add(out, "q_a_proj", h * mla->q_lora_rank, 0, true);
            add(out, "q_a_layernorm", mla->q_lora_rank, 0, false);
            add(out, "q_b_proj", mla->q_lora_rank * cfg->n_heads * qk, 0, true);
        } else {
            add(out, "q_proj", h * cfg->n_heads * qk, 0, true);
        }
        add(out, "kv_a_proj_with_mqa", h * (mla->kv_lora_rank + mla->qk_rope_dim), 0, true);
        add(out, "kv_a_layernorm", mla->kv_lora_rank, 0, false);
        add(out, "kv_b_proj",
            mla->kv_lora_rank * cfg->n_heads * (mla->qk_nope_dim + mla->v_head_dim), 0, true);
    } else if (cfg->is_qkv_fused) {
        add(out, "qkv_proj", h * (q_dim + 2 * kv_dim), cfg->has_qkv_bias ? q_dim + 2 * kv_dim : 0,
            true);
    } else {
        add(out, "q_proj", h * q_dim, cfg->has_qkv_bias ? q_dim : 0, true);
        add(out, "k_proj", h * kv_dim, cfg->has_qkv_bias ? kv_dim : 0, true);
        add(out, "v_proj", h * kv_dim, cfg->has_qkv_bias ? kv_dim : 0, true);
    }
    if (cfg->qk_norm == QK_NORM_PER_HEAD) { /* Qwen3, Gemma 3: RMSNorm(head_dim); Phi: LN */
        add(out, "q_norm", d, cfg->has_qk_norm_bias ? d : 0, false);
        add(out, "k_norm", d, cfg->has_qk_norm_bias ? d : 0, false);
    } else if (cfg->qk_norm == QK_NORM_FULL) { /* OLMo 2: RMSNorm(heads x head_dim) */
        add(out, "q_norm", q_dim, 0, false);
        add(out, "k_norm", kv_dim, 0, false);
    }
    add(out, "o_proj", v_dim * h, cfg->has_out_bias ? h : 0, true);
    if (cfg->has_attention_sinks) /* gpt-oss: self_attn.sinks, one logit per head */
        add(out, "sinks", cfg->n_heads, 0, false);
    const uint64_t mlp_b = cfg->has_mlp_bias ? f : 0;
    if (cfg->moe.n_experts > 0) {
        /* the MLP is the MoE block or a dense MLP, layer by layer (count_moe) */
    } else if (cfg->is_gated_mlp && cfg->is_gate_up_fused) {
        add(out, "gate_up_proj", h * 2 * f, 2 * mlp_b, true);
    } else if (cfg->is_gated_mlp) {
        add(out, "gate_proj", h * f, mlp_b, true);
        add(out, "up_proj", h * f, mlp_b, true);
    } else {
        add(out, "up_proj", h * f, mlp_b, true);
    }
    if (cfg->moe.n_experts == 0)
        add(out, "down_proj", f * h, cfg->has_mlp_bias ? h : 0, true);

    uint64_t largest = 0;
    for (size_t i = 0; i < out->n_layer_modules; i++) {
        const ParamModule *m = &out->layer[i];
        out->per_layer += m->weight + m->bias;
        if (m->is_gemm)
            out->gemm_per_layer += m->weight;
        if (m->weight + m->bias > largest)
            largest = m->weight + m->bias;
    }
    const uint64_t projection = e != h ? e * h : 0; /* OPT's project_in and project_out */
    const uint64_t token_embedding = cfg->vocab * e;
    out->embed_norm = cfg->has_embed_norm ? norm_w + norm_b : 0;
    out->embedding = token_embedding + projection + out->embed_norm;
    out->position = cfg->position_rows * h;
    out->final_vectors = cfg->has_final_norm ? norm_w + norm_b : 0;
    out->final_norm = out->final_vectors + projection;
    out->lm_head = cfg->is_tied ? 0 : cfg->vocab * e + (cfg->has_lm_head_bias ? cfg->vocab : 0);
    out->largest_module = out->largest_layer_module = largest;
    out->largest_layer = out->per_layer;
    if (cfg->moe.n_experts > 0) {
        count_moe(cfg, out);
        largest = out->largest_module;
        const uint64_t n_dense = cfg->n_layers - out->n_moe_layers;
        const uint64_t moe_layer = out->per_layer + out->moe_replicated +
                                   out->n_experts * out->expert;
        out->largest_layer = out->n_moe_layers > 0 ? moe_layer : 0;
        if (n_dense > 0 && out->per_layer + out->dense_mlp > out->largest_layer)
            out->largest_layer = out->per_layer + out->dense_mlp;
    }
    const uint64_t n_dense = cfg->n_layers - out->n_moe_layers;
    out->total = cfg->n_layers * out->per_layer + n_dense * out->dense_mlp +
                 out->n_moe_layers * (out->moe_replicated + out->n_experts * out->expert) +
                 out->embedding + out->position + out->final_norm + out->lm_head;
    out->active = out->total - out->n_moe_layers * (out->n_experts - out->top_k) * out->expert;
    if (token_embedding > largest)
        largest = token_embedding;
    if (out->position > largest)
        largest = out->position;
    if (out->lm_head > largest)
        largest = out->lm_head;
    out->largest_module = largest;
}

uint64_t params_output_projection(const ModelParams *p)
{
    return p->lm_head > 0 ? p->lm_head : p->embedding;
}

uint64_t params_n_tensors(const ModelParams *p, uint64_t n_layers)
{
    /* per layer: each module's weight and bias; each MoE module's copies; then the token
     * and position embeddings, their norm, the final norm's weight and bias, the head */
    uint64_t moe = 0;
    for (size_t i = 0; i < p->n_moe_modules; i++)
        moe += 2 * (p->moe[i].is_expert ? p->n_experts : 1);
    return n_layers * (2 * p->n_layer_modules + moe) + 6;
}

unsigned params_module_tensors(const ParamModule *m, uint64_t threshold)
{
    return (unsigned)(m->weight > threshold) + (unsigned)(m->bias > threshold);
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
    uint64_t moe = 0;
    for (size_t i = 0; i < p->n_moe_modules; i++) {
        const ParamModule *m = &p->moe[i];
        const uint64_t copies = m->is_expert ? p->n_experts : 1;
        if (m->weight <= threshold)
            moe += copies * m->weight;
        if (m->bias > 0 && m->bias <= threshold)
            moe += copies * m->bias;
    }
    /* The embedding and final norms are one or two vectors of h each. */
    uint64_t vectors = p->hidden <= threshold ? p->embed_norm + p->final_vectors : 0;
    uint64_t rest = 0;
    if (p->embedding - p->embed_norm <= threshold)
        rest += p->embedding - p->embed_norm;
    if (p->position > 0 && p->position <= threshold)
        rest += p->position;
    if (p->final_norm - p->final_vectors > 0 && p->final_norm - p->final_vectors <= threshold)
        rest += p->final_norm - p->final_vectors;
    if (p->lm_head > 0 && p->lm_head <= threshold)
        rest += p->lm_head;
    /* n_layers 0 and 1 count one layer's share (zero_schedule.c's per-layer difference): a
     * MoE layer's block then counts as in a MoE layer */
    const uint64_t n_moe = n_layers >= p->n_moe_layers ? p->n_moe_layers : n_layers;
    return n_layers * per_layer + n_moe * moe + vectors + rest;
}
