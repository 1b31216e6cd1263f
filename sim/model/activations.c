/*
 * activations.c - per-layer activation bytes after Korthikanti et al. 2022 (see
 * activations.h).
 *
 * Per token (multiply by s b), with e bytes per element and 1-byte dropout masks:
 *   attention: LN output (QKV input) e h, Q e (a d), K and V e (kv d) each, output-projection
 *              input e (a d), dropout mask h; scores: softmax output e a s, its dropout mask
 *              a s, dropout output e a s  ->  for MHA, e = 2: 11 h + 5 a s
 *   MLP:       input e h, up output e f, activation output e f, dropout mask h -> 19 h at f=4h;
 *              gated: input e h, gate, up, act(gate) and product e f each, mask h
 *   norms:     the two LayerNorm inputs, 2 e h                                   -> 4 h
 * which sums to the paper's 34 h + 5 a s for GPT. Parallel blocks, Gemma 2/3's extra norms and
 * q/k norms change the norm and MLP-input terms (below). The output layer keeps the final norm input
 * and the logits' input (2 e h) and the loss's T x V tensors: 12 V for the eager fp32
 * cross-entropy of HF and torchtitan, 4 V for a fused loss (Megatron's: Korthikanti sec. 4.3),
 * none for Liger's fused linear cross-entropy (its two gradients instead).
 */
#include "activations.h"

#include "selective_op.h"
#include "moe.h"

void activations_bytes(const ModelConfig *cfg, const RunSetup *setup, ActivationBytes *out)
{
    const uint64_t e = setup->act_bytes;
    const uint64_t h = cfg->hidden, f = cfg->ffn_hidden, s = setup->seq_len;
    const uint64_t q_dim = cfg->n_heads * cfg->head_dim;
    const uint64_t kv_dim = cfg->n_kv_heads * cfg->head_dim;
    const uint64_t tokens = s * setup->micro_batch;

    uint64_t attn = e * h + e * q_dim + 2 * e * kv_dim + e * q_dim + h;
    uint64_t mlp = cfg->is_gated_mlp ? e * h + 4 * e * f + h : e * h + 2 * e * f + h;
    /* Liger's SwiGLU saves only its two inputs, gate and up, and recomputes the SiLU in
     * backward (ops/swiglu.py, LigerSiLUMulFunction); the down projection keeps the product */
    if (cfg->is_gated_mlp && setup->elementwise == ELEMENTWISE_LIGER)
        mlp -= e * f;
    /* eager gelu_new (kernels.c) also saves 0.5 x, tanh's output and 1 + tanh for its
     * backward (the product's two operands, tanh_backward's input) */
    if (setup->elementwise == ELEMENTWISE_EAGER && cfg->is_gelu_new && !cfg->is_gated_mlp)
        mlp += 3 * e * f;
    if (cfg->moe.n_experts > 0) {
        /* A MoE layer keeps, per token: its input (router and shared experts read it), the
         * router's fp32 probabilities over the experts, and for each of its capacity_factor x
         * top_k routed copies the dispatched input, the expert's gate, up, activation and
         * product, and its output before the weighted combine (sharded_moe.py: dispatched
         * and expert_output tensors); the shared experts' gated MLP on every token. The
         * per-layer figure is the mean over dense and MoE layers (the sum is exact). */
        const MoeShape *m = &cfg->moe;
        const double copies = moe_load_factor(setup) * (double)m->top_k; /* busiest rank */
        const double moe_mlp = (double)(e * h + 4 * m->n_experts + h) +
                               copies * (double)(2 * e * h + 4 * e * m->expert_ffn) +
                               (double)(4 * e * m->shared_ffn);
        const double n_moe = (double)m->n_moe_layers, n_all = (double)cfg->n_layers;
        mlp = (uint64_t)(((n_all - n_moe) * (double)mlp + n_moe * moe_mlp) / n_all + 0.5);
    }
    uint64_t norms = 2 * e * h;
    /* The family's layer layout (its HF modeling file): in a parallel block attention and MLP
     * read the same layer input, so one norm input is kept, and with a single norm (GPT-J,
     * Phi, Falcon-7B) the MLP's input is the attention's QKV input, kept once; Gemma 2/3's
     * post-attention and post-feedforward norms keep their inputs (the attention and MLP
     * outputs); q/k norms keep the un-normed q and k. */
    if (cfg->is_parallel_block) {
        norms = e * h;
        if (cfg->n_layer_norms == 1)
            mlp -= e * h;
    }
    if (cfg->n_layer_norms == 4)
        norms += 2 * e * h;
    if (cfg->qk_norm != QK_NORM_NONE)
        norms += e * (q_dim + kv_dim);
    uint64_t linear_part = tokens * (attn + mlp + norms);

    /* The backward's gradients. PyTorch's autograd frees a node's saved tensors once the node
     * has run (torch/csrc/autograd/engine.cpp: release_variables() when the graph is not
     * retained) and a gradient once its consumer has run, so a layer's backward peaks at one
     * of two points, each measured beyond the saved tensors it still holds:
     *  - the MLP's activation: the gradient of the activation's output and of its input (e f
     *    each; gated: the product's, the activation's and the up projection's), beside the
     *    block's incoming gradient (e h), with the tensor the down projection saved (e f;
     *    gated: the product and the activation output, 2 e f) freed: e (f + h) either way;
     *  - the attention core, once the MLP block and the second norm's input are freed: the
     *    gradient of the (dropped-out) probabilities, e a s per token beside the saved
     *    probabilities (Megatron's fused softmax writes its own gradient in place:
     *    scaled_upper_triang_masked_softmax backward), and the context's gradient e q; with
     *    flash attention the kernel's dQ, dK, dV and dO instead, e (2 q + 2 kv).
     * The routed experts' copies stand for f in a MoE layer (the mean over the layers). */
    double f_grad = (double)f;
    if (cfg->moe.n_experts > 0) {
        const MoeShape *m = &cfg->moe;
        const double n_moe = (double)m->n_moe_layers, n_all = (double)cfg->n_layers;
        const double moe_f = moe_load_factor(setup) * (double)m->top_k * (double)m->expert_ffn +
                             (double)m->shared_ffn;
        f_grad = ((n_all - n_moe) * (double)f + n_moe * moe_f) / n_all;
    }
    const double at_mlp = (double)e * (f_grad + (double)h);
    const double at_core = setup->is_flash_attention
                               ? (double)(e * (2 * q_dim + 2 * kv_dim)) - (double)mlp
                               : (double)(e * cfg->n_heads * s + e * q_dim) - (double)mlp;
    const double extra = at_mlp > at_core ? at_mlp : at_core;
    out->backward_extra = extra > 0 ? (uint64_t)((double)tokens * extra + 0.5) : 0;

    /* The s x s scores, per head: softmax output, dropout mask, dropout output. OPT's eager
     * attention (kernels.c) keeps torch.max's input and the softmax output, in fp32 when it
     * upcasts fp16, and the 16-bit probabilities the second bmm saves; its attention dropout
     * (0.0) keeps nothing. */
    uint64_t per_score = 2 * e + 1;
    if (setup->elementwise == ELEMENTWISE_EAGER && cfg->family == MODEL_FAMILY_OPT)
        per_score = setup->is_fp16 ? 4 + 2 * e : 2 * e;
    uint64_t scores = tokens * cfg->n_heads * s * per_score;
    /* Flash attention keeps one fp32 log-sum-exp per head and row instead. */
    uint64_t lse = tokens * cfg->n_heads * 4;
    uint64_t core = setup->is_flash_attention ? lse : scores;

    out->attn_scores = setup->is_flash_attention ? 0 : scores;
    out->layer_full = linear_part + core;
    /* What a layer that is not checkpointed keeps: selective recomputation drops the scores. */
    out->layer_stored = setup->recompute == RECOMPUTE_SELECTIVE && !setup->is_flash_attention
                            ? linear_part
                            : out->layer_full;
    if (setup->recompute == RECOMPUTE_SELECTIVE_OP) {
        /* torchtitan's op-level policy (selective_op.h): the block's input, the outputs of
         * the saved matmuls, and the flash kernel's output with its log-sum-exp */
        SelectiveOp sop;
        selective_op_layer(cfg, &sop);
        out->layer_stored = tokens * (e * h + e * sop.saved_out_per_token) +
                            (setup->is_flash_attention ? tokens * e * q_dim + lse : 0);
        if (out->layer_stored > out->layer_full) /* never more than keeping everything */
            out->layer_stored = out->layer_full;
    }
    /* The final norm's input and the logits' input (2 e h), and the loss. PyTorch's eager
     * cross-entropy on logits.float(), as the HF modeling files and torchtitan compute it
     * (and the kernel model times it, kernels.c): log_softmax saves its fp32 output, and its
     * backward, the first op of backward, holds that output, the NLL loss's gradient and its
     * own result, all T x V fp32 (PyTorch's nll_loss_backward, _log_softmax_backward_data):
     * 12 V bytes per token. A fused loss keeps the logits once with their gradient written in
     * place: Megatron's vocab_parallel_cross_entropy on fp32 logits, 4 V (Korthikanti sec.
     * 4.3); flash-attn's CrossEntropyLoss (llm-foundry's default loss_fn) on 16-bit logits
     * with a 16-bit gradient, 2 e V, the same 4 V in 16-bit training. */
    out->output_layer = tokens * (2 * e * h + (setup->loss == LOSS_FUSED ? 4 : 12) * cfg->vocab);
    /* Liger's fused linear cross-entropy computes both gradients in forward and keeps them,
     * the input's (T x h) and the output projection's (V x h, in the weight's dtype), and
     * not the logits or its input (ctx.save_for_backward(grad_input, grad_weight)); its
     * chunk of logits (kernels_flce_chunk_tokens x V) lives only inside the forward */
    if (setup->loss == LOSS_FUSED_LINEAR)
        out->output_layer = tokens * 2 * e * h + cfg->vocab * h * e;
    /* the eager loss on 16-bit logits: log_softmax's e-byte output, and in backward the NLL
     * gradient and log_softmax's, e V each (the shift's copy is not saved) */
    if (setup->loss == LOSS_EAGER_16BIT)
        out->output_layer = tokens * (2 * e * h + 3 * e * cfg->vocab);
    out->checkpoint_per_layer = tokens * e * h;
    const uint64_t n_ck = setup_n_checkpointed(setup, cfg->n_layers);
    out->checkpoints = n_ck * out->checkpoint_per_layer;

    /* At the end of forward; a checkpointed layer's backward rebuilds its working set. */
    out->peak = out->checkpoints + (cfg->n_layers - n_ck) * out->layer_stored +
                (n_ck > 0 ? out->layer_full : 0) + out->output_layer;
    /* op-level: the layer in backward rebuilds what it did not save */
    if (setup->recompute == RECOMPUTE_SELECTIVE_OP)
        out->peak += out->layer_full - out->layer_stored;
    out->peak += out->backward_extra;
}
