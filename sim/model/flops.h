/*
 * flops.h - floating-point work of a training step.
 *
 * Three views of the same step, because published results use different ones:
 *  - hardware FLOPs: what the GPUs execute, including recomputation (what sets step time);
 *  - model FLOPs: 6 x params x tokens plus attention, no recomputation (the MFU definition of
 *    PaLM, Chowdhery et al. 2022, appendix B);
 *  - the Megatron formula, 96 B s l h^2 (1 + s/6h + V/16lh) with full recomputation
 *    (Narayanan et al. 2021, eq. 3), used by DeepSpeed and Megatron papers for TFLOP/s/GPU.
 * The hardware count generalises the Megatron derivation to GQA, gated MLPs and biases:
 * 2 FLOPs per GEMM weight per token, 4 s (a d) per token per layer for QK^T and AV, 2 h V per
 * token for the logits; backward is twice forward. With FlashAttention a sliding-window layer
 * (Mistral, Gemma 2/3, Qwen2 with use_sliding_window, Phi-3, StarCoder2, OLMo 3) attends to
 * min(s, w) keys per query instead of s.
 */
#ifndef ZEROSIM_MODEL_FLOPS_H
#define ZEROSIM_MODEL_FLOPS_H

#include "params.h"
#include "setup.h"

typedef struct StepFlops {
    double layer_fwd_per_token;  /* one layer, forward, GEMMs + attention */
    double attn_core_per_token;  /* the QK^T and AV part of layer_fwd_per_token (the mean
                                  * over layers when some have sliding windows) */
    double logits_fwd_per_token; /* output projection */
    double hardware;             /* per step, all GPUs, with recomputation */
    double model;                /* per step, all GPUs, 6 N tokens + attention, no recompute */
    double megatron;             /* per step, all GPUs, Megatron formula; the 96 form when
                                  * every layer is recomputed, else the 72 form */
} StepFlops;

/* Work of one optimizer step of setup->global_batch sequences of setup->seq_len tokens. */
void flops_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
                StepFlops *out);

/* Megatron's closed form (Narayanan et al. 2021, eq. 3): with full recomputation
 * 96 B s l h^2 (1 + s/(6h) + V/(16 l h)); without, 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). */
double flops_megatron_formula(double batch, double seq, double layers, double hidden, double vocab,
                              bool full_recompute);

#endif
