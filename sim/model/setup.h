/*
 * setup.h - the per-run choices that are properties of the training code, not of its files.
 *
 * Sequence length, activation recomputation and flash attention belong to the model code a
 * user runs, so they come from the command line; batch sizes come from ds_config and are
 * resolved against the GPU count. Shared by every analytic module.
 */
#ifndef ZEROSIM_MODEL_SETUP_H
#define ZEROSIM_MODEL_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../inputs/platform.h"

typedef enum Recompute {
    RECOMPUTE_NONE,      /* every activation kept for backward */
    RECOMPUTE_SELECTIVE, /* attention core recomputed (Korthikanti et al. 2022, sec. 5) */
    RECOMPUTE_FULL,      /* checkpointed layers keep only their input and are re-run in
                            backward: every layer, or every N-th (checkpoint_every) */
    RECOMPUTE_SELECTIVE_OP, /* torchtitan's op-level selective checkpointing: every layer
                               keeps its input and the outputs of every other matmul and of
                               the flash kernel, and re-runs the rest (selective_op.h) */
} Recompute;

/* The loss (--cross-entropy): PyTorch's eager cross-entropy on logits.float() (HF models,
 * torchtitan); a fused kernel on the logits with the gradient written in place (Megatron's,
 * flash-attn's); or Liger-Kernel's fused linear cross-entropy, which never holds the whole
 * logits: chunks of tokens through the output projection, the loss kernel and both
 * gradient GEMMs, all in forward (LigerFusedLinearCrossEntropyFunction); or PyTorch's eager
 * loss on the model's 16-bit logits, shifted by a copy (HF GPT-2 and OPT before transformers
 * 4.46 moved the loss to loss_utils.py's ForCausalLMLoss and its logits.float()). */
typedef enum LossKernel {
    LOSS_EAGER,
    LOSS_FUSED,
    LOSS_FUSED_LINEAR,
    LOSS_EAGER_16BIT /* PyTorch's eager loss on the shifted 16-bit logits, without .float() */
} LossKernel;

/* The layer's element-wise work (--elementwise): fused kernels (Megatron's scale-mask-softmax
 * and bias-GeLU, F.gelu, F.silu; an RMSNorm family's norm and rotary as its HF modeling
 * code runs them), one kernel per PyTorch operation as HF transformers' eager modeling code
 * runs it (the unfused attention's scale, masks and softmax apart, gelu_new as eight
 * kernels), or Liger-Kernel's Triton kernels for an RMSNorm family (one kernel each for
 * RMSNorm, the rotary embedding of q and k, and SwiGLU). */
typedef enum ElementwiseKernels {
    ELEMENTWISE_FUSED,
    ELEMENTWISE_EAGER,
    ELEMENTWISE_LIGER
} ElementwiseKernels;

typedef struct RunSetup {
    uint64_t seq_len;
    uint64_t micro_batch;  /* sequences per GPU per forward/backward */
    uint64_t grad_accum;   /* micro-batches per optimizer step */
    uint64_t global_batch; /* sequences per step over all GPUs */
    uint64_t n_gpus;       /* data-parallel size */
    Recompute recompute;
    uint32_t checkpoint_every; /* RECOMPUTE_FULL: layers 0, N, 2N, ... are checkpointed */
    bool is_flash_attention;
    PlatformFlashKernel flash_kernel; /* with is_flash_attention: FlashAttention-2 (v2, the
                                         default), the first FlashAttention (v1, 2022) or
                                         FlashAttention-3 (v3, Hopper) */
    unsigned act_bytes; /* bytes per activation element: 2 (fp16/bf16) or 4 (fp32) */
    bool is_fp16;       /* fp16 training (model code that upcasts fp16 softmaxes to fp32) */
    LossKernel loss; /* how the model code computes its cross-entropy (--cross-entropy) */
    ElementwiseKernels elementwise; /* the model code's element-wise kernels
                                       (--elementwise) */
    /* mixtures of experts (model/moe.h); ignored for dense models */
    uint64_t ep_size;       /* expert-parallel group: ranks that split each layer's experts
                               (DeepSpeed-MoE's ep_size; --ep-size); 0 or 1: none */
    double capacity_factor; /* expert buffers hold capacity_factor x the balanced share of
                               routed tokens (DeepSpeed-MoE's capacity_factor); 0: 1.0 */
    double moe_imbalance;   /* dropless routing whose busiest expert gets this many times its
                               balanced share (--moe-imbalance); 0 or 1: balanced */
} RunSetup;

/* "none", "selective", "full", "selective-op" or "every:N" into buf; returns buf. */
const char *setup_recompute_name(Recompute r, uint32_t every, char *buf, size_t buf_size);

/* Parses "none", "selective", "full" (every layer), "selective-op" or "every:N" (full
 * recomputation of every N-th layer, as FSDP codebases' per-layer checkpointing does); -1
 * when malformed. */
int setup_recompute_parse(const char *name, Recompute *out, uint32_t *out_every);

/* Whether layer u is checkpointed (keeps only its input, re-run before its backward). */
bool setup_is_checkpointed(const RunSetup *s, uint64_t layer);

/* How many of n_layers layers are checkpointed. */
uint64_t setup_n_checkpointed(const RunSetup *s, uint64_t n_layers);

#endif
