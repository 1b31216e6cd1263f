/*
 * test_activations.c - activation bytes against Korthikanti et al. 2022, section 4.
 *
 * Oracles (no tensor or sequence parallelism, 16-bit activations, 1-byte dropout masks):
 * a GPT layer keeps s b h (34 + 5 a s / h) bytes (eq. 1); selective recomputation keeps
 * 34 s b h (section 5); full recomputation keeps each layer's 2 s b h input; the output layer
 * keeps 4 s b h + 4 s b V (section 4.3) with Megatron's fused loss, 4 s b h + 12 s b V with
 * PyTorch's eager loss on fp32 logits. Flash attention keeps no s x s matrices, only a
 * 4-byte log-sum-exp per head and row (4 a s b). Extensions beyond the paper (fp32
 * activations, gated MLPs, grouped-query attention) are checked against the same
 * tensor-by-tensor count done by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/activations.h"

#include <string.h>

static ModelConfig gpt(uint64_t h, uint64_t layers, uint64_t heads, uint64_t vocab)
{
    ModelConfig c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "test-gpt");
    c.family = MODEL_FAMILY_GPT2;
    c.hidden = h;
    c.n_layers = layers;
    c.n_heads = heads;
    c.n_kv_heads = heads;
    c.head_dim = h / heads;
    c.ffn_hidden = 4 * h;
    c.vocab = vocab;
    c.max_seq = 2048;
    c.is_tied = true;
    c.is_qkv_fused = true;
    c.has_hidden_dropout = c.has_attention_dropout = true; /* GPT's 0.1 (Korthikanti's count) */
    return c;
}

/* A Llama layout: GQA with heads of 128, a gated MLP of f, separate Q, K, V projections. */
static ModelConfig llama(uint64_t h, uint64_t layers, uint64_t heads, uint64_t kv_heads, uint64_t f,
                         uint64_t vocab)
{
    ModelConfig c = gpt(h, layers, heads, vocab);
    c.family = MODEL_FAMILY_LLAMA;
    c.n_kv_heads = kv_heads;
    c.head_dim = 128;
    c.ffn_hidden = f;
    c.is_gated_mlp = true;
    c.is_qkv_fused = false;
    return c;
}

/* Llama-3-8B's shapes: h 4096, 32 layers, 32 heads of 128, 8 KV heads, f 14336, V 128256. */
static ModelConfig llama3_8b(void)
{
    return llama(4096, 32, 32, 8, 14336, 128256);
}

static RunSetup setup_of(uint64_t seq, uint64_t micro_batch, Recompute r, bool flash, unsigned e)
{
    return (RunSetup){.seq_len = seq,
                      .micro_batch = micro_batch,
                      .grad_accum = 1,
                      .global_batch = micro_batch,
                      .n_gpus = 1,
                      .recompute = r,
                      .is_flash_attention = flash,
                      .act_bytes = e};
}

/* GPT-3 175B, s = 2048, b = 2: 5 a s / h = 80, so a layer is s b h (34 + 80) bytes. */
static const uint64_t S = 2048, B = 2, H = 12288, A = 96, L = 96, V = 50257;

static void test_activations_bytes_gpt_layer_is_34_plus_5as_over_h(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    RunSetup su = setup_of(S, B, RECOMPUTE_NONE, false, 2);
    su.loss = LOSS_FUSED; /* the paper's Megatron loss */
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(5 * A * S % H, 0);
    assert_int_equal(a.layer_full, S * B * H * (34 + 5 * A * S / H));
    assert_int_equal(a.attn_scores, 5 * A * S * S * B);
    assert_int_equal(a.layer_stored, a.layer_full);
    assert_int_equal(a.output_layer, 4 * S * B * H + 4 * S * B * V);
    assert_int_equal(a.checkpoints, 0);
    assert_int_equal(a.peak, L * a.layer_full + a.output_layer + a.backward_extra);
    /* PyTorch's eager loss on logits.float(): three T x V fp32 tensors at its backward */
    su.loss = LOSS_EAGER;
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.output_layer, 4 * S * B * H + 12 * S * B * V);
}

/* transformers' eager gelu_new also keeps 0.5 x, tanh's output and 1 + tanh for its
 * backward: 3 e f = 24 h bytes more per token at f = 4 h, e = 2 (34 h -> 58 h). */
static void test_activations_bytes_eager_gelu_new_by_hand(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    c.is_gelu_new = true;
    RunSetup su = setup_of(S, B, RECOMPUTE_NONE, false, 2);
    su.loss = LOSS_FUSED;
    ActivationBytes fused, eager;
    activations_bytes(&c, &su, &fused);
    su.elementwise = ELEMENTWISE_EAGER;
    activations_bytes(&c, &su, &eager);
    assert_int_equal(eager.layer_full - fused.layer_full, S * B * 24 * H);
    assert_int_equal(eager.attn_scores, fused.attn_scores);
    /* an activation that is one kernel keeps nothing more */
    c.is_gelu_new = false;
    activations_bytes(&c, &su, &eager);
    assert_int_equal(eager.layer_full, fused.layer_full);
}

/* Liger's SwiGLU saves gate and up, not the SiLU output: a gated MLP keeps e f bytes per
 * token less; its fused linear cross-entropy keeps the two gradients it computed in forward,
 * T x h and V x h, and no logits: the output layer is 2 e h per token (the final norm's
 * input and the input gradient) and V h e. */
static void test_activations_bytes_liger_by_hand(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    c.is_gated_mlp = true;
    RunSetup su = setup_of(S, B, RECOMPUTE_NONE, false, 2);
    ActivationBytes fused, liger;
    activations_bytes(&c, &su, &fused);
    su.elementwise = ELEMENTWISE_LIGER;
    su.loss = LOSS_FUSED_LINEAR;
    activations_bytes(&c, &su, &liger);
    assert_int_equal(fused.layer_full - liger.layer_full, (uint64_t)S * B * 2 * c.ffn_hidden);
    assert_int_equal(liger.output_layer, (uint64_t)S * B * 2 * 2 * H + (uint64_t)V * H * 2);
    assert_int_equal(fused.output_layer, (uint64_t)S * B * (2 * 2 * H + 12 * V));
    /* the eager loss on 16-bit logits: log_softmax's output, the NLL and log_softmax
     * gradients, 3 e V per token */
    su.loss = LOSS_EAGER_16BIT;
    activations_bytes(&c, &su, &liger);
    assert_int_equal(liger.output_layer, (uint64_t)S * B * (2 * 2 * H + 3 * 2 * V));
}

/* OPT's eager attention keeps, per score, torch.max's input (e), the softmax output (fp32
 * when fp16 upcasts it, else e) and the probabilities the second bmm saves (e): 8 B in fp16
 * and 4 B in bf16 against the 2 e + 1 = 5 B (softmax output, dropout mask and output) of
 * Korthikanti's count. */
static void test_activations_bytes_opt_eager_scores_by_hand(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    RunSetup su = setup_of(S, B, RECOMPUTE_NONE, false, 2);
    ActivationBytes base, opt16, opt_bf16;
    activations_bytes(&c, &su, &base);
    assert_int_equal(base.attn_scores, (uint64_t)S * B * A * S * 5);
    c.family = MODEL_FAMILY_OPT;
    c.has_hidden_dropout = true; /* OPTConfig's dropout 0.1: the same two masks as GPT's */
    su.elementwise = ELEMENTWISE_EAGER;
    su.is_fp16 = true;
    activations_bytes(&c, &su, &opt16);
    assert_int_equal(opt16.attn_scores, (uint64_t)S * B * A * S * 8);
    su.is_fp16 = false;
    activations_bytes(&c, &su, &opt_bf16);
    assert_int_equal(opt_bf16.attn_scores, (uint64_t)S * B * A * S * 4);
    assert_int_equal(opt16.layer_full - base.layer_full, (uint64_t)S * B * A * S * 3);
}

/* Where 5 a s / h is not an integer (GPT-2 XL at s = 1000): s b (34 h + 5 a s) exactly. */
static void test_activations_bytes_gpt_layer_non_integer_ratio(void **state)
{
    (void)state;
    ModelConfig c = gpt(1600, 48, 25, 50257);
    RunSetup su = setup_of(1000, 3, RECOMPUTE_NONE, false, 2);
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.layer_full, 1000ull * 3 * (34 * 1600 + 5 * 25 * 1000));
}

/* Selective recomputation without flash attention drops the a s^2 b scores: 34 s b h. */
static void test_activations_bytes_selective_keeps_34sbh(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    RunSetup su = setup_of(S, B, RECOMPUTE_SELECTIVE, false, 2);
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.layer_stored, 34 * S * B * H);
    assert_int_equal(a.layer_full, S * B * H * (34 + 5 * A * S / H));
    assert_int_equal(a.checkpoints, 0);
    assert_int_equal(a.peak, L * 34 * S * B * H + a.output_layer + a.backward_extra);
}

/* Full recomputation keeps only each layer's input (2 s b h) and rebuilds one layer. */
static void test_activations_bytes_full_recompute_keeps_layer_inputs(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    RunSetup su = setup_of(S, B, RECOMPUTE_FULL, false, 2);
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.checkpoints, L * 2 * S * B * H);
    assert_int_equal(a.peak, a.checkpoints + a.layer_full + a.output_layer + a.backward_extra);
    assert_true(a.peak < L * a.layer_full);
}

/* Flash attention: no 5 a s / h term, only the 4 a s b log-sum-exp, whatever the
 * recomputation short of full. */
static void test_activations_bytes_flash_drops_score_matrices(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    for (int r = RECOMPUTE_NONE; r <= RECOMPUTE_SELECTIVE; r++) {
        RunSetup su = setup_of(S, B, (Recompute)r, true, 2);
        ActivationBytes a;
        activations_bytes(&c, &su, &a);
        assert_int_equal(a.attn_scores, 0);
        assert_int_equal(a.layer_full, 34 * S * B * H + 4 * A * S * B);
        assert_int_equal(a.layer_stored, a.layer_full);
    }
}

/* fp32 activations, tensor by tensor with 1-byte masks: attention 4h (LN out) + 4h (Q) + 8h
 * (K, V) + 4h (proj in) + h (mask) = 21h; MLP 4h + 16h + 16h + h = 37h; norms 8h -> 66h;
 * scores a s (4 + 1 + 4) = 9 a s. Output layer 2 x 4h + 4V. */
static void test_activations_bytes_fp32_by_hand(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    RunSetup su = setup_of(S, B, RECOMPUTE_NONE, false, 4);
    su.loss = LOSS_FUSED;
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.layer_full, S * B * (66 * H + 9 * A * S));
    assert_int_equal(a.output_layer, S * B * (8 * H + 4 * V));
}

/* torchtitan's op-level selective checkpointing on a Llama-3-8B layer (h 4096, 32 heads of
 * 128, 8 KV heads, f 14336), flash attention, s 8192, b 2, by hand: the mms run wq, wk, wv,
 * wo, w1, w3, w2 and the odd ones are saved (wq: q, wv: kv, w1: f, w2: h elements per
 * token), with the block input (h) and the flash output (q) in 16 bits and its fp32
 * log-sum-exp per head: 2 (h + q + kv + f + h + q) + 4 a = 2 x 31744 + 128 bytes per token.
 * Backward rebuilds the rest of one layer. GPT-2's biased projections are aten.addmm, never
 * saved: a layer keeps its input and the flash output only. */
static void test_activations_bytes_selective_op_by_hand(void **state)
{
    (void)state;
    ModelConfig c = llama3_8b();
    const uint64_t t = 8192 * 2;
    RunSetup su = setup_of(8192, 2, RECOMPUTE_SELECTIVE_OP, true, 2);
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.layer_stored, t * (2 * 31744 + 128));
    assert_int_equal(a.checkpoints, 0);
    assert_int_equal(a.peak, 32 * a.layer_stored + (a.layer_full - a.layer_stored) +
                                 a.output_layer + a.backward_extra);
    /* the backward's gradients at the gated MLP: 2 (f + h) = 36864 bytes per token */
    assert_int_equal(a.backward_extra, t * 36864);
    /* GPT-2 1.5B's layer: biases everywhere */
    c = gpt(1600, 48, 25, 50257);
    c.has_qkv_bias = c.has_out_bias = c.has_mlp_bias = true;
    su = setup_of(1024, 1, RECOMPUTE_SELECTIVE_OP, true, 2);
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.layer_stored, 1024 * (2 * 1600 + 2 * 1600 + 4 * 25));
}

/* Llama-2-70B shape (GQA 64/8 heads of 128, gated MLP f = 28672), 16-bit, no dropout (so
 * no masks): attention 2h + 2q + 4 kv + 2q, MLP 2h + 4 x 2f, norms 4h, scores 2 a s (the
 * softmax output alone). */
static void test_activations_bytes_gqa_gated_by_hand(void **state)
{
    (void)state;
    ModelConfig c = llama(8192, 80, 64, 8, 28672, 32000);
    const uint64_t s = 4096, b = 1, h = 8192, q = 8192, kv = 1024, f = 28672;
    RunSetup su = setup_of(s, b, RECOMPUTE_NONE, false, 2);
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    const uint64_t attn = 2 * h + 2 * q + 4 * kv + 2 * q;
    const uint64_t mlp = 2 * h + 8 * f;
    assert_int_equal(a.layer_full, s * b * (attn + mlp + 4 * h + 2 * 64 * s));
    /* HF's eager attention: softmax in fp32 (4 B) and its 16-bit cast (2 B) per score */
    su.elementwise = ELEMENTWISE_EAGER;
    ActivationBytes eager;
    activations_bytes(&c, &su, &eager);
    assert_int_equal(eager.attn_scores, s * b * 64 * s * 6);
}

/* The HF modeling files' eager RMSNorm, Llama-3-8B's layer (h 4096, 32 heads of 128, 8 KV
 * heads, f 14336) in bf16 with flash attention, by hand: LlamaRMSNorm keeps the fp32 input
 * (4h) and the bf16 normalised copy (2h) beside its output, 6h per norm where a fused norm
 * keeps its 2h input: 4h more per norm, two per layer, and the final norm's 4h in the output
 * layer. GemmaRMSNorm keeps the fp32 normalised tensor instead of the 16-bit one: 8h per
 * norm. Liger's RMSNorm keeps its input, as a fused norm does. */
static void test_activations_bytes_eager_rmsnorm_by_hand(void **state)
{
    (void)state;
    ModelConfig c = llama3_8b();
    const uint64_t t = 8192, h = 4096, q = 4096, kv = 1024, f = 14336;
    RunSetup su = setup_of(8192, 1, RECOMPUTE_NONE, true, 2);
    ActivationBytes fused, eager, gemma, liger;
    activations_bytes(&c, &su, &fused);
    const uint64_t lse = t * 32 * 4;
    assert_int_equal(fused.layer_full,
                     t * ((2 * h + 2 * q + 4 * kv + 2 * q) + (2 * h + 8 * f) + 4 * h) + lse);
    su.elementwise = ELEMENTWISE_EAGER;
    activations_bytes(&c, &su, &eager);
    assert_int_equal(eager.layer_full - fused.layer_full, t * 2 * 4 * h);
    assert_int_equal(eager.output_layer - fused.output_layer, t * 4 * h);
    c.family = MODEL_FAMILY_GEMMA;
    activations_bytes(&c, &su, &gemma);
    assert_int_equal(gemma.layer_full - fused.layer_full, t * 2 * (8 - 2) * h);
    c.family = MODEL_FAMILY_LLAMA;
    su.elementwise = ELEMENTWISE_LIGER;
    activations_bytes(&c, &su, &liger);
    assert_int_equal(liger.layer_full, fused.layer_full - t * 2 * f); /* SwiGLU alone */
}

/* The backward's gradients beyond the saved tensors, GPT-3 175B at s = 2048, b = 2 (4096
 * tokens), 16-bit, f = 4h = 49152. At the MLP's activation: 2 (f + h) = 122880 bytes per
 * token. At the unfused attention core, once the MLP block (2h + 2 x 2f + h = 233472) is
 * freed: the probabilities' gradient 2 a s = 393216 and the context's 2 q = 24576, so
 * 393216 + 24576 - 233472 = 184320, the larger. With flash attention the kernel's gradients
 * 2 (2q + 2kv) = 98304 stay below the MLP block freed: the MLP point, 122880. */
static void test_activations_bytes_backward_gradients_by_hand(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    RunSetup su = setup_of(S, B, RECOMPUTE_NONE, false, 2);
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.backward_extra, 4096ull * 184320);
    su = setup_of(S, B, RECOMPUTE_NONE, true, 2);
    activations_bytes(&c, &su, &a);
    assert_int_equal(a.backward_extra, 4096ull * 122880);
}

/* Per-block checkpointing (FSDP's every_xth_item): every 2nd of 96 layers keeps only its
 * input; the others keep everything; a checkpointed layer's backward rebuilds one layer. */
static void test_activations_bytes_every_second_layer(void **state)
{
    (void)state;
    ModelConfig c = gpt(H, L, A, V);
    RunSetup su = setup_of(S, B, RECOMPUTE_FULL, true, 2);
    su.checkpoint_every = 2;
    ActivationBytes a;
    activations_bytes(&c, &su, &a);
    assert_int_equal(setup_n_checkpointed(&su, L), L / 2);
    assert_true(setup_is_checkpointed(&su, 0) && !setup_is_checkpointed(&su, 1));
    assert_int_equal(a.checkpoint_per_layer, 2 * S * B * H);
    assert_int_equal(a.checkpoints, L / 2 * 2 * S * B * H);
    assert_int_equal(a.layer_stored, a.layer_full);
    assert_int_equal(a.peak, a.checkpoints + L / 2 * a.layer_stored + a.layer_full +
                                 a.output_layer + a.backward_extra);
}

/* The command-line forms of recomputation. */
static void test_setup_recompute_parse_forms(void **state)
{
    (void)state;
    Recompute r;
    uint32_t every;
    char buf[32];
    assert_int_equal(setup_recompute_parse("every:3", &r, &every), 0);
    assert_int_equal(r, RECOMPUTE_FULL);
    assert_int_equal(every, 3);
    assert_string_equal(setup_recompute_name(r, every, buf, sizeof buf), "every:3");
    assert_int_equal(setup_recompute_parse("full", &r, &every), 0);
    assert_int_equal(every, 1);
    assert_string_equal(setup_recompute_name(r, every, buf, sizeof buf), "full");
    assert_int_equal(setup_recompute_parse("every:0", &r, &every), -1);
    assert_int_equal(setup_recompute_parse("every:x", &r, &every), -1);
    assert_int_equal(setup_recompute_parse("every:", &r, &every), -1);
    assert_int_equal(setup_recompute_parse("partial", &r, &every), -1);
    assert_int_equal(setup_recompute_parse("selective-op", &r, &every), 0);
    assert_int_equal(r, RECOMPUTE_SELECTIVE_OP);
    assert_string_equal(setup_recompute_name(r, every, buf, sizeof buf), "selective-op");
}

/* Layouts other than GPT's, bytes per token of a layer with e = 2 (a tensor of h elements is
 * 2h bytes): GPT-J's single ln_1 feeding attention and MLP keeps 34h - 4h (one norm input
 * fewer, the MLP input shared); Pythia's two norms on one input keep 34h - 2h; Gemma 2's
 * post-norms add 4h; Qwen3's q/k norms add 2(q + kv). */
static void test_activations_bytes_family_layouts(void **state)
{
    (void)state;
    const uint64_t h = 1024, a = 16, s = 1024, b = 1;
    RunSetup su = setup_of(s, b, RECOMPUTE_NONE, true, 2); /* flash: no score matrices */
    ActivationBytes base, act;
    ModelConfig c = gpt(h, 2, a, 32000);
    activations_bytes(&c, &su, &base);
    const uint64_t lse = s * b * a * 4;
    assert_int_equal(base.layer_full, s * b * 34 * h + lse);
    c.is_parallel_block = true;
    c.n_layer_norms = 1;
    activations_bytes(&c, &su, &act);
    assert_int_equal(act.layer_full, s * b * 30 * h + lse);
    c.n_layer_norms = 2;
    activations_bytes(&c, &su, &act);
    assert_int_equal(act.layer_full, s * b * 32 * h + lse);
    c = gpt(h, 2, a, 32000);
    c.n_layer_norms = 4;
    activations_bytes(&c, &su, &act);
    assert_int_equal(act.layer_full, s * b * 38 * h + lse);
    c = gpt(h, 2, a, 32000);
    c.qk_norm = QK_NORM_PER_HEAD;
    c.n_kv_heads = 4; /* K and V of 4 heads: 34h - 2 x 2 x 12/16 h of K/V, + 2 (h + h/4) */
    activations_bytes(&c, &su, &act);
    assert_int_equal(act.layer_full,
                     s * b * (34 * h - 2 * 2 * (h - h / 4) + 2 * (h + h / 4)) + lse);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_activations_bytes_every_second_layer),
        cmocka_unit_test(test_activations_bytes_backward_gradients_by_hand),
        cmocka_unit_test(test_activations_bytes_family_layouts),
        cmocka_unit_test(test_activations_bytes_eager_rmsnorm_by_hand),
        cmocka_unit_test(test_setup_recompute_parse_forms),
        cmocka_unit_test(test_activations_bytes_selective_op_by_hand),
        cmocka_unit_test(test_activations_bytes_gpt_layer_is_34_plus_5as_over_h),
        cmocka_unit_test(test_activations_bytes_eager_gelu_new_by_hand),
        cmocka_unit_test(test_activations_bytes_liger_by_hand),
        cmocka_unit_test(test_activations_bytes_opt_eager_scores_by_hand),
        cmocka_unit_test(test_activations_bytes_gpt_layer_non_integer_ratio),
        cmocka_unit_test(test_activations_bytes_selective_keeps_34sbh),
        cmocka_unit_test(test_activations_bytes_full_recompute_keeps_layer_inputs),
        cmocka_unit_test(test_activations_bytes_flash_drops_score_matrices),
        cmocka_unit_test(test_activations_bytes_fp32_by_hand),
        cmocka_unit_test(test_activations_bytes_gqa_gated_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
