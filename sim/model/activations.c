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
 * q/k norms change the norm and MLP-input terms (below). The masks exist only where the model
 * runs dropout (GPT-2, OPT: model_config_has_dropout); the HF modeling files' eager RMSNorm
 * keeps fp32 copies beside its input (norm_saved_bytes). The output layer keeps the final
 * norm input and the logits' input (2 e h) and the loss's T x V tensors: 12 V for the eager fp32
 * cross-entropy of HF and torchtitan, 4 V for a fused loss (Megatron's: Korthikanti sec. 4.3),
 * none for Liger's fused linear cross-entropy (its two gradients instead).
 */
#include "activations.h"

#include "kernels.h"
#include "moe.h"
#include "selective_op.h"

/* Bytes per element one norm keeps for its backward, its output (the next projection's input)
 * counted with that projection. A fused LayerNorm or RMSNorm (ATen's native_layer_norm,
 * torch.compile's, Liger's LigerRMSNormFunction) keeps its e-byte input and a per-row
 * statistic. The eager RMSNorm of the HF modeling files upcasts first: LlamaRMSNorm (and its
 * copies in Qwen2, Qwen3, Phi-3) keeps hidden_states.to(torch.float32), which pow and the
 * product with rsqrt save (4 bytes), and the e-byte hidden_states.to(input_dtype) that the
 * product with the weight saves: 4 + e. GemmaRMSNorm (Gemma 1-3), Olmo2RMSNorm and
 * GptOssRMSNorm multiply by the weight in fp32 before the cast, so the product saves the fp32
 * normalised tensor instead: 4 + 4. */
static uint64_t norm_saved_bytes(const ModelConfig *cfg, const RunSetup *setup)
{
    const uint64_t e = setup->act_bytes;
    if (setup->elementwise != ELEMENTWISE_EAGER || !kernels_is_rmsnorm_family(cfg))
        return e;
    switch (cfg->family) {
    case MODEL_FAMILY_GEMMA:
    case MODEL_FAMILY_GEMMA2:
    case MODEL_FAMILY_GEMMA3:
    case MODEL_FAMILY_OLMO2:
    case MODEL_FAMILY_GPT_OSS: return 8;
    default: return 4 + e;
    }
}

void activations_bytes(const ModelConfig *cfg, const RunSetup *setup, ActivationBytes *out)
{
    const uint64_t e = setup->act_bytes;
    const uint64_t h = cfg->hidden, f = cfg->ffn_hidden, s = setup->seq_len;
    const uint64_t q_dim = cfg->n_heads * cfg->head_dim;
    const uint64_t kv_dim = cfg->n_kv_heads * cfg->head_dim;
    const uint64_t tokens = s * setup->micro_batch;

    const uint64_t mask = model_config_has_dropout(cfg) ? h : 0; /* 1 byte per element */
    uint64_t attn = e * h + e * q_dim + 2 * e * kv_dim + e * q_dim + mask;
    uint64_t mlp = cfg->is_gated_mlp ? e * h + 4 * e * f + mask : e * h + 2 * e * f + mask;
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
        const double moe_mlp = (double)(e * h + 4 * m->n_experts + mask) +
                               copies * (double)(2 * e * h + 4 * e * m->expert_ffn) +
                               (double)(4 * e * m->shared_ffn);
        const double n_moe = (double)m->n_moe_layers, n_all = (double)cfg->n_layers;
        mlp = (uint64_t)(((n_all - n_moe) * (double)mlp + n_moe * moe_mlp) / n_all + 0.5);
    }
    const uint64_t nb = norm_saved_bytes(cfg, setup);
    uint64_t norms = 2 * nb * h;
    /* The family's layer layout (its HF modeling file): in a parallel block attention and MLP
     * read the same layer input, so one norm input is kept, and with a single norm (GPT-J,
     * Phi, Falcon-7B) the MLP's input is the attention's QKV input, kept once; Gemma 2/3's
     * post-attention and post-feedforward norms keep their inputs (the attention and MLP
     * outputs); q/k norms keep the un-normed q and k. */
    if (cfg->is_parallel_block) {
        norms = nb * h;
        if (cfg->n_layer_norms == 1)
            mlp -= e * h;
    }
    if (cfg->n_layer_norms == 4)
        norms += 2 * nb * h;
    if (cfg->qk_norm != QK_NORM_NONE)
        norms += nb * (q_dim + kv_dim);
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

    /* The s x s scores, per head: softmax output, dropout mask, dropout output (GPT-2's and
     * GPT-BigCode's attn_pdrop). Without attention dropout the softmax output alone, e; under --elementwise
     * eager, as the HF modeling files' eager_attention_forward computes it, softmax(...,
     * dtype=torch.float32) keeps its fp32 output and the product with V the e-byte cast,
     * 4 + e. OPT's eager attention (kernels.c) keeps torch.max's input and the softmax output,
     * in fp32 when it upcasts fp16, and the 16-bit probabilities the second bmm saves; its
     * attention dropout (0.0) keeps nothing. */
    uint64_t per_score = model_config_has_attention_dropout(cfg)   ? 2 * e + 1
                         : setup->elementwise == ELEMENTWISE_EAGER ? 4 + e
                                                                   : e;
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
    /* the final norm keeps what a layer's norm keeps (norm_saved_bytes), e h counted above */
    out->output_layer += tokens * (nb - e) * h;
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
