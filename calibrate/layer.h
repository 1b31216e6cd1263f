/*
 * layer.h - one transformer layer's kernels at a model's real shapes, zerosim's prediction
 * for that layer, and the two side by side (zerosim-calibrate --layer MODEL).
 *
 * The plan lists what a plain (non-fused) PyTorch layer runs for one micro-batch of b
 * sequences of s tokens (T = b s), in bf16:
 *  - the linears of the layer (sim/model/params.c's modules: q/k/v or fused qkv, o_proj,
 *    gate and up or up alone, down), each as nn.Linear's GEMMs: forward m = T, n = out,
 *    k = in; backward the input gradient (m = T, n = in, k = out) and the weight gradient
 *    (m = out, n = in, k = T);
 *  - the attention core as batched GEMMs over b x a heads: QK^T (s x s x d) and AV (s x d x s)
 *    forward, and the four products of their gradients backward (dP = dO V^T, dV = P^T dO,
 *    dQ = dS K, dK = dS^T Q);
 *  - the memory-bound kernels with the bytes they read and write: the two norms (read and
 *    write T h), the softmax over the b a s^2 scores, the MLP activation (GeLU: T f in and
 *    out; SwiGLU: 2 T f in, T f out), the two residual adds (2 T h in, T h out); backward
 *    reads and writes each twice, as cost.c counts it.
 * Its GEMM and attention FLOPs equal flops.c's layer_fwd_per_token x T (the test checks it).
 * The prediction is sim/schedule/cost.c's layer_fwd and layer_bwd at the engine's rate, the
 * time zerosim gives the layer; per kernel, GEMMs at peak x gemm_efficiency, the attention
 * products at peak x attention_efficiency, memory-bound kernels at gpu.hbm_bw_bytes_per_s.
 * gpu_layer.cu runs the plan with cuBLAS and a streaming kernel and fills the measured times.
 */
#ifndef ZEROSIM_CALIBRATE_LAYER_H
#define ZEROSIM_CALIBRATE_LAYER_H

#include "common/err.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum LayerKernelKind {
    LAYER_GEMM,      /* a linear's GEMM */
    LAYER_ATTENTION, /* a batched GEMM of the attention core */
    LAYER_MEMORY,    /* a memory-bound kernel: read_bytes in, write_bytes out */
} LayerKernelKind;

#define LAYER_MAX_KERNELS 64
#define LAYER_ELEM_BYTES 2 /* bf16 */

typedef struct LayerKernel {
    char name[32]; /* "qkv_proj fwd", "qkv_proj dgrad", "softmax bwd", ... */
    LayerKernelKind kind;
    bool is_backward;
    uint64_t batch, m, n, k; /* GEMMs: C (m x n) = A (m x k) B (k x n), row-major */
    char gemm_op;            /* how PyTorch calls cuBLAS: 'f' Linear forward, 'd' input gradient,
                                'w' weight gradient, 'b' a batched product of the attention core */
    double flops;            /* 2 batch m n k; 0 for memory-bound kernels */
    double read_bytes, write_bytes;
} LayerKernel;

typedef struct LayerPlan {
    char model[128];
    uint64_t micro_batch, seq, tokens;
    LayerKernel kernels[LAYER_MAX_KERNELS];
    size_t n_kernels;
    double gemm_flops_fwd, attn_flops_fwd; /* forward; backward is twice each */
    double memory_bytes_fwd;               /* read + write; backward is twice */
    uint64_t max_elems;                    /* the largest operand, for buffer sizing */
} LayerPlan;

typedef struct LayerPrediction {
    double fwd_s, bwd_s;                /* cost.c's layer_fwd and layer_bwd at the engine's rate */
    double kernel_s[LAYER_MAX_KERNELS]; /* per kernel, with the rules above */
} LayerPrediction;

/* The plan of one layer of cfg for micro_batch sequences of seq tokens. Fails when the
 * shapes do not fit one GPU's indexing (an operand above 2^31 elements). */
int layer_plan(const ModelConfig *cfg, uint64_t micro_batch, uint64_t seq, LayerPlan *out,
               Err *err);

/* zerosim's times for the plan on p (bf16, no recomputation, no flash attention). */
void layer_predict(const ModelConfig *cfg, const LayerPlan *plan, const Platform *p,
                   LayerPrediction *out);

/* The table: each kernel's shape, FLOPs or bytes, measured time (measured_s[i], or "-" when
 * measured_s is NULL), zerosim's time and the error; then the forward and backward totals
 * against cost.c's (measured fwd_s and bwd_s; ignored when measured_s is NULL). */
void layer_print(const LayerPlan *plan, const LayerPrediction *pred, const double *measured_s,
                 double measured_fwd_s, double measured_bwd_s, const char *platform, FILE *out);

#endif
