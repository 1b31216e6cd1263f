/*
 * kernels.h - a transformer layer's forward and backward as the GPU kernels that run them,
 * each timed from its shape.
 *
 * Four kernel families, each with its own cost mechanism:
 *  - GEMMs: a roofline of FLOPs at the GPU's measured matmul ceiling (the sustained rate,
 *    MSMF, where one is published, else the best shape's MAMF, from the ml-engineering
 *    book's mamf-finder; never the datasheet peak) against the bytes of
 *    the three operands at achievable HBM bandwidth, with tile and wave quantization: the
 *    output is cut into tiles, one thread block per tile, run in waves of one tile per SM,
 *    so a last partial wave or a partial tile costs as much as a full one (NVIDIA, "Matrix
 *    Multiplication Background User's Guide", sections on tile and wave quantization);
 *  - element-wise and reduction kernels (norms, activations, residual adds, dropout, rotary
 *    embeddings, softmax over materialised scores, cross-entropy over the vocabulary): the
 *    bytes they read and write at achievable HBM bandwidth (the eager RMSNorm and the eager
 *    loss's backward at the share of it they were measured at, kernels.c);
 *  - fused attention (FlashAttention-2, or the first FlashAttention): its causal FLOPs at
 *    the throughput FlashAttention's authors published for the GPU, head dimension and
 *    sequence length (the platform's gpu.flash_attention table, interpolated in log(seq_len)
 *    and held at its ends), else at peak x attention_efficiency; the backward 2.5 times the
 *    forward's FLOPs as the FlashAttention-2 benchmark counts them;
 *  - the host's launch floor: the CPU issues kernels one after another ahead of the GPU,
 *    so a pass is never faster than its kernel count times the launch time.
 * What the layer is made of depends on the model family (model_config.h): LayerNorm or
 * RMSNorm, GeLU or SwiGLU MLP, rotary embeddings or not, dropout (GPT-2 family) or not.
 * Pure functions of the shapes and the platform; schedule/cost.c turns them into engine work.
 */
#ifndef ZEROSIM_MODEL_KERNELS_H
#define ZEROSIM_MODEL_KERNELS_H

#include "../common/precision.h"
#include "../inputs/platform.h"
#include "params.h"
#include "setup.h"

/* CUTLASS/cuBLAS tile of the large tensor-core GEMMs (e.g. "volta_h884gemm_128x128",
 * "ampere_bf16_s16816gemm_..._128x128" kernels): the unit of tile and wave quantization. */
#define KERNELS_GEMM_TILE 128

/* What the kernel model needs of a GPU, in one precision. */
typedef struct KernelGpu {
    double matmul_flops_per_s;    /* measured matmul ceiling (MSMF, else MAMF) */
    double memory_bytes_per_s;    /* achievable HBM bandwidth of streaming kernels */
    double attention_flops_per_s; /* FlashAttention-2's throughput without a table */
    PlatformFlashTable flash;     /* its published rates by kernel, pass, head_dim, seq_len
                                     (n_rows 0: none, attention_flops_per_s applies) */
    double sm_count;              /* streaming multiprocessors: tiles per wave */
    double gemm_fixed_s;          /* each GEMM kernel's fixed device time */
    double gemm_wave_s;           /* each wave of its output tiles' fixed time */
    double launch_s;              /* host time to issue one kernel */
} KernelGpu;

/* The GPU of platform p, training in `precision`. FP32 runs its matmuls at the same fraction
 * of its (non-tensor-core) peak as the 16-bit MAMF is of the 16-bit peak. */
void kernels_gpu(const Platform *p, Precision precision, KernelGpu *out);

/* A pass: kernel time summed, how many kernels it launches, and the framework's host work
 * around them (schedule/cost.h CostHost): host_s runs on the CPU while the GPU works through the
 * kernels already issued, host_serial_s behind a device synchronisation, with the GPU idle. */
typedef struct KernelPass {
    double gemm_s;      /* GEMMs (and the batched GEMMs of unfused attention) */
    double gemm_flops;  /* their useful FLOPs, 2 m n k each (before tile quantization) */
    double attention_s; /* fused attention kernels */
    double memory_s;    /* element-wise and reduction kernels */
    double n_kernels;
    double host_s;        /* host seconds beside the launches, overlapping the GPU */
    double host_serial_s; /* host seconds the GPU waits for */
} KernelPass;

/* Time of a pass on the GPU: its kernels, or the host's launches and framework work when
 * those take longer (the host issues asynchronously ahead of the GPU), plus the host work
 * behind a synchronisation: max(GPU, n_kernels x launch + host_s) + host_serial_s. */
double kernels_pass_s(const KernelGpu *g, const KernelPass *pass);

/* A step's compute by kernel family, as kernels_step_time adds it up: the GPU's time in each
 * family, what the host's issue adds where a pass's launches and framework work outlast its
 * kernels (launch_bound_s), and what host work behind a synchronisation adds. The parts sum
 * to total_s, which is kernels_step_s. */
typedef struct KernelTime {
    double gemm_s, attention_s, memory_s;
    double launch_bound_s;
    double host_serial_s;
    double gemm_flops; /* the GEMMs' useful FLOPs: gemm_flops / gemm_s is their achieved rate */
    double n_kernels;
    double total_s;
} KernelTime;

/* Adds `count` runs of pass to t (all but total_s, which the caller sets). */
void kernels_time_add(const KernelGpu *g, const KernelPass *pass, double count, KernelTime *t);

/* One GEMM, C[m x n] = A[m x k] B[k x n], `batch` independent ones in one launch, elements of
 * elem_bytes: max(quantized FLOPs / the matmul ceiling + waves x the wave's fixed time
 * (gpu.gemm_wave_s), operand bytes / bandwidth) + the kernel's fixed time (gpu.gemm_fixed_s). */
double kernels_gemm_s(const KernelGpu *g, double batch, double m, double n, double k,
                      double elem_bytes);

/* A streaming kernel that reads and writes `bytes` in all. */
double kernels_memory_s(const KernelGpu *g, double bytes);

/* PyTorch c10d's list API, as DeepSpeed before 0.6 called it for each parameter: an
 * all-gather into (or a reduce-scatter from) a list of one tensor per rank runs NCCL on a flat
 * buffer and copies it out to (or in from) the n_ranks tensors, one copy_ each
 * (ProcessGroupNCCL::allgather's post-hook, reduce_scatter's flatten_for_scatter_gather), and
 * DeepSpeed's all-gather zero-fills its output first (partition_parameters.py
 * _allgather_param, torch.zeros). Time of that pass for one call of `bytes` (the full
 * buffer): its streaming bytes, or the host's n_ranks launches when those take longer. */
double kernels_c10d_list_copies_s(const KernelGpu *g, bool is_gather, double bytes,
                                  double n_ranks);

/* The casts autocast makes of FSDP's unsharded fp32 parameters (MixedPrecision without a
 * param_dtype, torch.autocast in 16-bit), one pass over one use of the weights: each GEMM
 * weight and bias of a layer (out_layer) and the logits weight (out_head: the output
 * projection, or the tied embedding) is one kernel reading from_bytes and writing to_bytes
 * per element. A forward (or recomputed) use casts fp32 -> 16-bit (4 -> 2: autocast's
 * cached_cast caches only leaf tensors, and FSDP1's unsharded parameters are views of its
 * flat parameter, so every use casts again); backward's _to_copy_backward turns each 16-bit
 * weight gradient back to fp32 (2 -> 4). Experts' modules are not counted. */
void kernels_weight_casts(const ModelParams *p, const KernelGpu *g, double from_bytes,
                          double to_bytes, KernelPass *out_layer, KernelPass *out_head);

/* The elements those casts cover: a layer's GEMM weights and biases, and the logits weight.
 * Autograd saves each 16-bit copy for the GEMM's backward (derivatives.yaml addmm/mm: the
 * input gradient is grad x mat2, the cast weight), so a layer whose forward is kept for
 * backward keeps its casts too. */
void kernels_weight_cast_elems(const ModelParams *p, double *out_layer, double *out_head);

/* FlashAttention's throughput, FLOP/s, of `kernel` in `pass` (PLATFORM_FLASH_FWD or
 * PLATFORM_FLASH_BWD) for sequences of seq_len tokens and heads of head_dim, from g's table:
 * the rows of that kernel, mask and pass (or, when the table has none for the pass, its
 * fwd_bwd rows), each interpolated linearly in log(seq_len) between its points and held at
 * its first and last; between two published head dimensions, linear in head_dim, held beyond
 * them. Without rows for the first FlashAttention: half FlashAttention-2's rate (Dao 2023,
 * abstract: "around 2x speedup compared to FlashAttention"). Without a table (or rows of that
 * mask): attention_flops_per_s, halved for v1. */
double kernels_attention_flops_per_s(const KernelGpu *g, PlatformFlashKernel kernel,
                                     PlatformFlashPass pass, bool is_causal, double head_dim,
                                     double seq_len);

/* A causal FlashAttention pass over `flops` (its causal-masked count): flops at that rate. */
double kernels_attention_s(const KernelGpu *g, PlatformFlashKernel kernel, PlatformFlashPass pass,
                           double head_dim, double seq_len, double flops);

/* One transformer layer of one micro-batch, and the model's ends (embedding, final norm,
 * logits and loss). Recompute is what backward re-runs before its own kernels: the whole
 * forward for a checkpointed layer, the attention core under selective recomputation. */
typedef struct LayerKernels {
    KernelPass fwd, bwd;
    KernelPass attn_core; /* the attention core alone (QK^T, softmax, AV or the flash kernel) */
    KernelPass op_saved;     /* forward kernels whose outputs op-level selective
                                checkpointing saves (selective_op.h) */
    KernelPass recompute_op; /* what it re-runs in backward: fwd less op_saved */
    KernelPass head_fwd, head_bwd;
} LayerKernels;

/* The kernels of cfg's layer for setup->micro_batch sequences of setup->seq_len tokens (for a
 * mixture of experts whose every layer is MoE, the MoE layer; else the dense layer). */
void kernels_layer(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g,
                   LayerKernels *out);

/* ... a dense layer or, with is_moe, a MoE layer (its MLP the MoE block on this rank's
 * n_experts / ep_size experts, model/moe.h). */
void kernels_layer_of(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g,
                      bool is_moe, LayerKernels *out);

/* One GPU's forward, recomputation and backward over the step's setup->grad_accum
 * micro-batches, with nothing waiting for communication: every layer's passes, the
 * recomputation of the checkpointed layers (or of every attention core under selective
 * recomputation, or every layer's unsaved kernels under op-level selective checkpointing),
 * the model's ends. */
double kernels_step_s(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g);

/* The families whose HuggingFace modeling file normalises with an eager RMSNorm module
 * (LlamaRMSNorm and its copies: Mistral, Mixtral, Qwen2/3 and their MoE files, Gemma 1-3,
 * Phi-3, OLMo 2, OLMoE, DeepSeek-V2/V3, Granite, GraniteMoE, gpt-oss), not ATen's fused
 * layer_norm. */
bool kernels_is_rmsnorm_family(const ModelConfig *cfg);

/* The families Liger-Kernel patches (--elementwise liger): those of its
 * MODEL_TYPE_TO_APPLY_LIGER_FN (liger_kernel/transformers/monkey_patch.py) whose RMSNorm,
 * rotary embedding and SwiGLU it replaces: the RMSNorm families but Qwen2-MoE, OLMoE and
 * GraniteMoE and DeepSeek, which the release read (ead96b61) does not list. */
bool kernels_liger_patches(const ModelConfig *cfg);

/* Tokens per chunk of Liger's fused linear cross-entropy over t tokens, vocabulary v,
 * hidden h. */
double kernels_flce_chunk_tokens(double t, double v, double h);

/* The same step by kernel family (KernelTime); out->total_s = kernels_step_s. */
void kernels_step_time(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g,
                       KernelTime *out);

#endif
