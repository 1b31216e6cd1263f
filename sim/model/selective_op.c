/*
 * selective_op.c - which projections torchtitan's op-level selective checkpointing saves (see
 * selective_op.h).
 */
#include "selective_op.h"

/* One projection in forward order: a bias makes it aten.addmm (neither saved nor counted);
 * a plain one is aten.mm, saved when it is an odd-numbered mm of the block. */
static void add_linear(SelectiveOp *s, unsigned *n_mm, uint64_t in, uint64_t out, bool has_bias)
{
    const bool is_saved = !has_bias && ++*n_mm % 2 == 1;
    s->is_saved[s->n_linears++] = is_saved;
    if (is_saved) {
        s->saved_out_per_token += out;
        s->saved_weights += in * out;
    }
}

void selective_op_layer(const ModelConfig *cfg, SelectiveOp *out)
{
    *out = (SelectiveOp){0};
    unsigned n_mm = 0;
    const uint64_t h = cfg->hidden, f = cfg->ffn_hidden;
    const uint64_t q = cfg->n_heads * cfg->head_dim, kv = cfg->n_kv_heads * cfg->head_dim;
    if (cfg->is_qkv_fused) {
        add_linear(out, &n_mm, h, q + 2 * kv, cfg->has_qkv_bias);
    } else {
        add_linear(out, &n_mm, h, q, cfg->has_qkv_bias);
        add_linear(out, &n_mm, h, kv, cfg->has_qkv_bias);
        add_linear(out, &n_mm, h, kv, cfg->has_qkv_bias);
    }
    add_linear(out, &n_mm, q, h, cfg->has_out_bias);
    if (cfg->is_gated_mlp && cfg->is_gate_up_fused) {
        /* one mm of width 2 f (Phi-3's gate_up_proj), listed as its two halves */
        add_linear(out, &n_mm, h, 2 * f, cfg->has_mlp_bias);
        const bool is_saved = out->is_saved[out->n_linears - 1];
        out->is_saved[out->n_linears++] = is_saved;
    } else if (cfg->is_gated_mlp) {
        add_linear(out, &n_mm, h, f, cfg->has_mlp_bias); /* gate (torchtitan's w1) */
        add_linear(out, &n_mm, h, f, cfg->has_mlp_bias); /* up (w3) */
    } else {
        add_linear(out, &n_mm, h, f, cfg->has_mlp_bias);
    }
    add_linear(out, &n_mm, f, h, cfg->has_mlp_bias); /* down (w2) */
}
