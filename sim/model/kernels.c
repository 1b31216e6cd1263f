/*
 * kernels.c - a layer's kernels and their roofline times (see kernels.h).
 *
 * Per micro-batch of T = b s tokens, e bytes per activation element, hidden h, query width
 * q = a d, key/value width kv, MLP width f, vocabulary V. Forward, as PyTorch runs a layer:
 *   norm (LayerNorm: one kernel, r+w 2 T h e; Llama's RMSNorm: eager fp32, see
 *   rmsnorm_eager); QKV projection (one fused GEMM, or three); rotary embedding of Q and
 *   K (NeoX and Llama families, eager, see rotary_eager); the attention core (FlashAttention, or
 *   QK^T, softmax over the b a s^2 scores in HBM, AV as batched GEMMs); output projection;
 *   dropout (GPT-2, OPT with dropout: r+w plus a 1-byte mask); residual add (r 2, w 1);
 *   norm; MLP (up, or gate and up, its activation: GeLU r+w 2 T f e, SiLU and product 5 T f
 *   e); down projection; dropout; residual add.
 * Backward: each GEMM's two GEMMs (the input gradient T x K from T x N by N x K, and the
 * weight gradient K x N over the T tokens); the attention core's backward (FlashAttention:
 * 2.5x the forward's FLOPs; unfused: four batched GEMMs and the softmax backward reading P
 * and dP and writing dS); each element-wise kernel reads its input and the output gradient
 * and writes the input gradient; the two residual streams' gradients are summed once per
 * branch; bias gradients are reductions of the output gradients over the tokens.
 * The model's ends: embedding gather, the final norm, the logits GEMM and the cross-entropy
 * as PyTorch's eager loss computes it on 16-bit logits (HF models and torchtitan call
 * cross_entropy on logits.float(): a cast to fp32, log-softmax, and in backward the
 * log-softmax gradient and the cast back), memory-bound at large V.
 */
#include "kernels.h"

#include "moe.h"
#include "selective_op.h"

#include <math.h>

/* The flash kernels' FLOPs are counted as the FlashAttention-2 benchmark counts them
 * (Dao 2023; flash-attention benchmarks/benchmark_flash_attention.py, flops()): forward
 * 4 b s^2 a d, halved when causal; backward 2.5x the forward (it recomputes the scores). */
#define FLASH_BWD_FACTOR 2.5

void kernels_gpu(const Platform *p, Precision precision, KernelGpu *out)
{
    const double peak = platform_peak_flops_per_s(p, precision);
    /* The MAMF is measured with 16-bit inputs; fp32 matmuls get the same share of theirs. */
    const double peak16 =
        p->gpu.bf16_flops_per_s > 0 ? p->gpu.bf16_flops_per_s : p->gpu.fp16_flops_per_s;
    out->matmul_flops_per_s = precision == PRECISION_FP32
                                  ? peak * p->gpu.matmul_flops_per_s / peak16
                                  : p->gpu.matmul_flops_per_s;
    out->memory_bytes_per_s = p->gpu.hbm_bw_bytes_per_s * p->gpu.memory_bw_efficiency;
    out->attention_flops_per_s = peak * p->gpu.attention_efficiency;
    /* The published FlashAttention rates are of its 16-bit kernels (flash-attn has no fp32
     * one): fp32 attention keeps attention_efficiency of the fp32 peak. */
    out->flash = p->gpu.flash;
    if (precision == PRECISION_FP32)
        out->flash.n_rows = 0;
    out->sm_count = (double)p->gpu.sm_count;
    out->gemm_fixed_s = p->gpu.gemm_fixed_s;
    out->gemm_wave_s = p->gpu.gemm_wave_s;
    out->launch_s = p->gpu.kernel_launch_s;
}

double kernels_pass_s(const KernelGpu *g, const KernelPass *pass)
{
    /* The host issues kernels asynchronously ahead of the GPU: the GPU only waits for it
     * when the pass's kernels are shorter, in total, than issuing them. */
    const double gpu_s = pass->gemm_s + pass->attention_s + pass->memory_s;
    const double host_s = pass->n_kernels * g->launch_s + pass->host_s;
    /* host work behind a device synchronisation cannot overlap the GPU */
    return (gpu_s > host_s ? gpu_s : host_s) + pass->host_serial_s;
}

void kernels_time_add(const KernelGpu *g, const KernelPass *pass, double count, KernelTime *t)
{
    const double gpu_s = pass->gemm_s + pass->attention_s + pass->memory_s;
    const double host_s = pass->n_kernels * g->launch_s + pass->host_s;
    t->gemm_s += count * pass->gemm_s;
    t->attention_s += count * pass->attention_s;
    t->memory_s += count * pass->memory_s;
    if (host_s > gpu_s)
        t->launch_bound_s += count * (host_s - gpu_s);
    t->host_serial_s += count * pass->host_serial_s;
    t->gemm_flops += count * pass->gemm_flops;
    t->n_kernels += count * pass->n_kernels;
}

double kernels_gemm_s(const KernelGpu *g, double batch, double m, double n, double k,
                      double elem_bytes)
{
    if (batch <= 0 || m <= 0 || n <= 0 || k <= 0)
        return 0.0;
    const double tile = KERNELS_GEMM_TILE;
    /* Tile quantization: partial tiles of the output cost whole ones (NVIDIA matmul guide). */
    const double tiles = batch * ceil(m / tile) * ceil(n / tile);
    /* Too few tiles to fill the SMs: cuBLAS splits K across thread blocks (split-K), as far
     * as each slice keeps at least a tile's depth. */
    double splits = 1.0;
    if (tiles < g->sm_count) {
        splits = floor(g->sm_count / tiles);
        double most = floor(k / tile);
        if (splits > most)
            splits = most;
        if (splits < 1.0)
            splits = 1.0;
    }
    /* Wave quantization: blocks run in waves of one per SM, a partial wave costs a whole
     * one; each SM works at 1/sm_count of the achievable matmul rate. Each wave's tiles also
     * pay a time their k-loop does not amortise: the pipeline fill before the first MMA and
     * the epilogue that writes the tile (gpu.gemm_wave_s), so a GEMM of small k runs further
     * below the ceiling than its quantization says (docs/MODEL.md, "GEMMs"). */
    const double waves = ceil(tiles * splits / g->sm_count);
    const double flops_s =
        waves * g->sm_count * 2.0 * tile * tile * (k / splits) / g->matmul_flops_per_s +
        waves * g->gemm_wave_s;
    const double bytes = elem_bytes * batch * (m * k + k * n + m * n);
    const double bytes_s = bytes / g->memory_bytes_per_s;
    /* Beyond its roofline every GEMM kernel pays a fixed device time: its launch, its blocks'
     * start and its tail, which a short GEMM cannot amortise (the Hockney t0 of time = t0 +
     * FLOPs / rate, gpu.gemm_fixed_s: docs/MODEL.md). */
    return (flops_s > bytes_s ? flops_s : bytes_s) + g->gemm_fixed_s;
}

double kernels_memory_s(const KernelGpu *g, double bytes)
{
    return bytes > 0 ? bytes / g->memory_bytes_per_s : 0.0;
}

double kernels_c10d_list_copies_s(const KernelGpu *g, bool is_gather, double bytes,
                                  double n_ranks)
{
    if (bytes <= 0 || n_ranks < 2)
        return 0.0;
    /* each byte read and written once by the copies, written once more by the zero-fill */
    KernelPass pass = {.memory_s = kernels_memory_s(g, (is_gather ? 3.0 : 2.0) * bytes),
                       .n_kernels = n_ranks + (is_gather ? 1.0 : 0.0)};
    return kernels_pass_s(g, &pass);
}

/* One cast kernel of `elems` elements into pass p. */
static void cast(KernelPass *p, const KernelGpu *g, double elems, double bytes_per_elem)
{
    if (elems <= 0)
        return;
    p->memory_s += kernels_memory_s(g, elems * bytes_per_elem);
    p->n_kernels += 1.0;
}

void kernels_weight_cast_elems(const ModelParams *p, double *out_layer, double *out_head)
{
    double layer = 0.0;
    for (size_t i = 0; i < p->n_layer_modules; i++)
        if (p->layer[i].is_gemm && !p->layer[i].is_expert)
            layer += (double)(p->layer[i].weight + p->layer[i].bias);
    *out_layer = layer;
    /* the logits GEMM's weight: the output projection, or the tied token embedding */
    *out_head = p->lm_head > 0 ? (double)p->lm_head : (double)(p->embedding - p->embed_norm);
}

void kernels_weight_casts(const ModelParams *p, const KernelGpu *g, double from_bytes,
                          double to_bytes, KernelPass *out_layer, KernelPass *out_head)
{
    /* aten/src/ATen/autocast_mode.cpp cached_cast: a cast is cached only when the fp32
     * argument requires grad, is a leaf and is not a view; FSDP1's FlatParamHandle
     * _use_unsharded_views makes each parameter a view of the flat parameter, so each use by
     * F.linear (weight and bias) is an arg.to(16-bit); tools/autograd/derivatives.yaml
     * _to_copy: its backward casts the gradient back (_to_copy_backward) */
    *out_layer = (KernelPass){0};
    *out_head = (KernelPass){0};
    const double bytes = from_bytes + to_bytes;
    for (size_t i = 0; i < p->n_layer_modules; i++) {
        if (!p->layer[i].is_gemm || p->layer[i].is_expert)
            continue;
        cast(out_layer, g, (double)p->layer[i].weight, bytes);
        cast(out_layer, g, (double)p->layer[i].bias, bytes);
    }
    double layer, head;
    kernels_weight_cast_elems(p, &layer, &head);
    cast(out_head, g, head, bytes);
}

/* A row's rate at seq_len: linear in log(seq_len) between its points, held at its ends. */
static double flash_row_rate(const PlatformFlashRow *r, double seq_len)
{
    const size_t n = r->n_points;
    if (seq_len <= r->seq_len[0])
        return r->flops_per_s[0];
    if (seq_len >= r->seq_len[n - 1])
        return r->flops_per_s[n - 1];
    size_t i = 1;
    while (r->seq_len[i] < seq_len)
        i++;
    const double w = log(seq_len / r->seq_len[i - 1]) / log(r->seq_len[i] / r->seq_len[i - 1]);
    return r->flops_per_s[i - 1] + w * (r->flops_per_s[i] - r->flops_per_s[i - 1]);
}

/* The rate of a kernel's rows of one pass and mask at head_dim, or 0 when it has none. */
static double flash_rows_rate(const PlatformFlashTable *t, PlatformFlashKernel kernel,
                              PlatformFlashPass pass, bool is_causal, double head_dim,
                              double seq_len)
{
    const PlatformFlashRow *lo = NULL, *hi = NULL; /* nearest head dims at or below, above */
    for (size_t i = 0; i < t->n_rows; i++) {
        const PlatformFlashRow *r = &t->rows[i];
        if (r->kernel != kernel || r->is_causal != is_causal || r->pass != pass)
            continue;
        const double d = (double)r->head_dim;
        if (d <= head_dim && (lo == NULL || d > (double)lo->head_dim))
            lo = r;
        if (d >= head_dim && (hi == NULL || d < (double)hi->head_dim))
            hi = r;
    }
    if (lo == NULL && hi == NULL)
        return 0.0;
    if (lo == NULL || hi == NULL || lo == hi)
        return flash_row_rate(lo != NULL ? lo : hi, seq_len);
    const double w = (head_dim - (double)lo->head_dim) / (double)(hi->head_dim - lo->head_dim);
    const double r_lo = flash_row_rate(lo, seq_len), r_hi = flash_row_rate(hi, seq_len);
    return r_lo + w * (r_hi - r_lo);
}

/* The table's rate for a kernel, mask and pass, or 0 when it has no rows for them: the
 * pass's own rows, else the rate of forward and backward together, else (a causal pass
 * whose source published it only without the mask: FlashAttention-3's backward) the pass's
 * rows without the mask. */
static double flash_table_rate(const PlatformFlashTable *t, PlatformFlashKernel kernel,
                               PlatformFlashPass pass, bool is_causal, double head_dim,
                               double seq_len)
{
    double rate = flash_rows_rate(t, kernel, pass, is_causal, head_dim, seq_len);
    if (rate <= 0 && pass != PLATFORM_FLASH_FWD_BWD)
        rate = flash_rows_rate(t, kernel, PLATFORM_FLASH_FWD_BWD, is_causal, head_dim, seq_len);
    if (rate <= 0 && is_causal)
        rate = flash_rows_rate(t, kernel, pass, false, head_dim, seq_len);
    return rate;
}

double kernels_attention_flops_per_s(const KernelGpu *g, PlatformFlashKernel kernel,
                                     PlatformFlashPass pass, bool is_causal, double head_dim,
                                     double seq_len)
{
    const double rate =
        flash_table_rate(&g->flash, kernel, pass, is_causal, head_dim, seq_len);
    if (rate > 0)
        return rate;
    /* FlashAttention-2 or -3 without a rate (no table; fp32 attention): peak x
     * attention_efficiency (estimate_build refuses v3 on a platform without its rows) */
    if (kernel != PLATFORM_FLASH_V1)
        return g->attention_flops_per_s;
    /* No published rates of the first FlashAttention: half FlashAttention-2's, which "yields
     * around 2x speedup compared to FlashAttention" (Dao 2023, abstract). */
    const double v2 =
        flash_table_rate(&g->flash, PLATFORM_FLASH_V2, pass, is_causal, head_dim, seq_len);
    return 0.5 * (v2 > 0 ? v2 : g->attention_flops_per_s);
}

double kernels_attention_s(const KernelGpu *g, PlatformFlashKernel kernel, PlatformFlashPass pass,
                           double head_dim, double seq_len, double flops)
{
    return flops > 0
               ? flops / kernels_attention_flops_per_s(g, kernel, pass, true, head_dim, seq_len)
               : 0.0;
}

/* ---- building passes ---- */

static void gemm(KernelPass *p, const KernelGpu *g, double batch, double m, double n, double k,
                 double e)
{
    p->gemm_s += kernels_gemm_s(g, batch, m, n, k, e);
    p->gemm_flops += 2.0 * batch * m * n * k;
    p->n_kernels += 1.0;
}

/* A weight GEMM y[T x n] = x[T x k] W[k x n] in forward, and its two GEMMs in backward;
 * is_saved: op-level selective checkpointing keeps its output (selective_op.h). */
static void linear(LayerKernels *o, const KernelGpu *g, double t, double n, double k, double e,
                   bool is_saved)
{
    gemm(&o->fwd, g, 1.0, t, n, k, e);
    if (is_saved)
        gemm(&o->op_saved, g, 1.0, t, n, k, e);
    gemm(&o->bwd, g, 1.0, t, k, n, e); /* input gradient dx = dy W^T */
    gemm(&o->bwd, g, 1.0, k, n, t, e); /* weight gradient dW = x^T dy */
}

static void memory(KernelPass *p, const KernelGpu *g, double bytes, double n_kernels)
{
    p->memory_s += kernels_memory_s(g, bytes);
    p->n_kernels += n_kernels;
}

/* An element-wise op over `elems` elements: forward reads n_in tensors and writes one;
 * backward reads the output gradient and the n_in saved inputs and writes n_in gradients. */
static void pointwise(LayerKernels *o, const KernelGpu *g, double elems, double n_in, double e)
{
    memory(&o->fwd, g, elems * e * (n_in + 1.0), 1.0);
    memory(&o->bwd, g, elems * e * (2.0 * n_in + 1.0), 1.0);
}

/* RMSNorm as the Llama family's reference implementations run it in eager PyTorch
 * (transformers' LlamaRMSNorm.forward; torchtitan's RMSNorm): x.to(float32), pow(2),
 * mean(-1), + eps, rsqrt, x * rsqrt, .to(input dtype), weight * x. Forward, per element of
 * e-byte input: r e w 4, r 4 w 4, r 4, (per-row scalars), r 4 w 4, r 4 w e, r e w e
 * = 28 + 4e bytes in 8 kernels. Backward through autograd: the weight product (r 2e w e,
 * and the weight gradient's reduction r 2e), the casts (r e w 4, r 4 w e), the rsqrt
 * product (r 4 w 4, and its reduction r 8 w 4), the mean's expansion (w 4), pow's gradient
 * (r 8 w 4) and the sum of the two paths (r 8 w 4) = 60 + 7e bytes in 12 kernels.
 * These kernels do not stream at a copy's rate: the products broadcast a per-row scalar or
 * the weight row over the tensor, and two of them are reductions (the row mean, the weight
 * gradient's column sum over the tokens). Measured, transformers' LlamaRMSNorm in bf16 on
 * A100-SXM4-80GB (Liger-Kernel benchmark/data/all_benchmark_data.csv, provider
 * "huggingface", M = 2048 rows, hidden 16384 and 32768, Liger 0.2.1, 2024-09-03) takes
 * (1.91907 - 0.98563) ms / (2048 x 16384) elements = 27.81 ps per element forward and
 * (5.01472 - 2.56963) ms / 33.55M = 72.87 ps backward (the slope between the two sizes, so
 * launch times drop out), where 36 and 74 bytes per element at the A100's 0.87 x 2039 GB/s
 * would take 20.29 and 41.72 ps: the kernels reach 0.73 and 0.57 of the streaming rate.
 * Those shares apply on every GPU (measured on the A100 only). */
#define RMSNORM_EAGER_FWD_SHARE 0.73
#define RMSNORM_EAGER_BWD_SHARE 0.57

static void rmsnorm_eager_pass(KernelPass *f, KernelPass *b, const KernelGpu *g, double elems,
                               double e)
{
    memory(f, g, elems * (28.0 + 4.0 * e) / RMSNORM_EAGER_FWD_SHARE, 8.0);
    memory(b, g, elems * (60.0 + 7.0 * e) / RMSNORM_EAGER_BWD_SHARE, 12.0);
}

/* Liger-Kernel's RMSNorm (ops/rms_norm.py, LigerRMSNormFunction): one Triton kernel forward
 * (reads x, writes y and one fp32 rstd per row: r e w e per element) and backward (reads dy
 * and x, writes dx: r 2e w e, and per-program partial weight gradients summed by a second
 * kernel). Measured, Liger's bf16 RMSNorm on H100 NVL (Liger-Kernel
 * benchmark/data/h100_all_benchmark_data.csv, M = 2048 rows, Liger 0.5.2, 2025-01-25):
 * forward (0.110656 - 0.063936) ms over the 2048 x 16384 elements from hidden 16384 to
 * 32768, 1.393 ps per element, 2.87 TB/s for its 4 bytes; backward (0.111264 - 0.069360) ms
 * from 8192 to 16384 (its 32768 point spills), 2.497 ps for 6 bytes, 2.40 TB/s: 0.74 and
 * 0.62 of the card's 3.9 TB/s, 0.85 and 0.71 of the 0.87 streaming rate. */
#define RMSNORM_LIGER_FWD_SHARE 0.85
#define RMSNORM_LIGER_BWD_SHARE 0.71

static void rmsnorm_liger_pass(KernelPass *f, KernelPass *b, const KernelGpu *g, double elems,
                               double e)
{
    memory(f, g, elems * 2.0 * e / RMSNORM_LIGER_FWD_SHARE, 1.0);
    memory(b, g, elems * 3.0 * e / RMSNORM_LIGER_BWD_SHARE, 2.0);
}

/* Rotary embedding of Q or K as torchtitan's apply_rotary_emb runs it: x.float() viewed as
 * complex (r e w 4), times the complex frequencies (r 4 w 4; the table is small), back to
 * real and .type_as(x) (r 4 w e): 16 + 2e bytes per element in 3 kernels, and the same in
 * backward. transformers' rotate_half form (q cos + rotate_half(q) sin: slice, neg, cat, two
 * products and a sum) moves about 9e, the same order. */
static void rotary_eager(LayerKernels *o, const KernelGpu *g, double elems, double e)
{
    memory(&o->fwd, g, elems * (16.0 + 2.0 * e), 3.0);
    memory(&o->bwd, g, elems * (16.0 + 2.0 * e), 3.0);
}

bool kernels_is_rmsnorm_family(const ModelConfig *cfg)
{
    switch (cfg->family) {
    case MODEL_FAMILY_LLAMA:
    case MODEL_FAMILY_QWEN2:
    case MODEL_FAMILY_QWEN3:
    case MODEL_FAMILY_GEMMA:
    case MODEL_FAMILY_GEMMA2:
    case MODEL_FAMILY_GEMMA3:
    case MODEL_FAMILY_PHI3:
    case MODEL_FAMILY_OLMO2:
    case MODEL_FAMILY_GPT_OSS:
    case MODEL_FAMILY_MIXTRAL:
    case MODEL_FAMILY_QWEN2_MOE:
    case MODEL_FAMILY_QWEN3_MOE:
    case MODEL_FAMILY_DEEPSEEK:
    case MODEL_FAMILY_OLMOE:
    case MODEL_FAMILY_GRANITE:
    case MODEL_FAMILY_GRANITE_MOE:
    case MODEL_FAMILY_GLM4_MOE: return true;
    default: return false;
    }
}

bool kernels_liger_patches(const ModelConfig *cfg)
{
    switch (cfg->family) {
    case MODEL_FAMILY_QWEN2_MOE:
    case MODEL_FAMILY_DEEPSEEK:
    case MODEL_FAMILY_OLMOE:
    case MODEL_FAMILY_GRANITE_MOE:
    case MODEL_FAMILY_GLM4_MOE: return false;
    default: return kernels_is_rmsnorm_family(cfg);
    }
}

/* Rotary embeddings: every family without learned positions but ALiBi's (BLOOM, MPT). */
static bool has_rotary(const ModelConfig *cfg)
{
    return cfg->position_rows == 0 && cfg->family != MODEL_FAMILY_BLOOM &&
           cfg->family != MODEL_FAMILY_MPT;
}

/* A norm's forward into f and backward into b: one fused kernel (ATen's layer_norm: r+w
 * forward, r 2 w 1 backward) for LayerNorm families; for the RMSNorm families the eager fp32
 * RMSNorm, or Liger's under --elementwise liger. */
static void norm_passes(KernelPass *f, KernelPass *b, const ModelConfig *cfg,
                        const RunSetup *setup, const KernelGpu *g, double elems, double e)
{
    if (!kernels_is_rmsnorm_family(cfg)) {
        memory(f, g, 2.0 * elems * e, 1.0);
        memory(b, g, 3.0 * elems * e, 1.0);
    } else if (setup->elementwise == ELEMENTWISE_LIGER) {
        rmsnorm_liger_pass(f, b, g, elems, e);
    } else {
        rmsnorm_eager_pass(f, b, g, elems, e);
    }
}

/* A layer norm inside the layer. */
static void norm(LayerKernels *o, const ModelConfig *cfg, const RunSetup *setup,
                 const KernelGpu *g, double elems, double e)
{
    norm_passes(&o->fwd, &o->bwd, cfg, setup, g, elems, e);
}

/* transformers' gelu_new (activations.py: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 *
 * x^3))), unchanged from 4.x to today) in eager PyTorch: eight kernels, as a torch.compile
 * trace of it lists them (mul 0.5, pow 3, mul, add, mul, tanh, add 1, mul), reading ten and
 * writing eight tensors of the activation's size. Autograd's backward, node by node: the
 * product's two gradients (r 2 w 1 each), tanh_backward (r 2 w 1), the two scalar products
 * (r 1 w 1 each), pow's gradient grad * 3 x^2 (pow, mul, mul: r 4 w 3), the 0.5 x branch (r 1
 * w 1) and the sums of x's three incoming gradients (two adds, r 2 w 1 each): 28 tensor
 * passes in 11 kernels. */
static void gelu_new_eager(LayerKernels *o, const KernelGpu *g, double elems, double e)
{
    memory(&o->fwd, g, 18.0 * elems * e, 8.0);
    memory(&o->bwd, g, 28.0 * elems * e, 11.0);
}

/* Dropout keeps a 1-byte mask: forward reads x, writes y and the mask; backward reads the
 * gradient and the mask and writes the input gradient. */
static void dropout(LayerKernels *o, const KernelGpu *g, double elems, double e)
{
    memory(&o->fwd, g, elems * (2.0 * e + 1.0), 1.0);
    memory(&o->bwd, g, elems * (2.0 * e + 1.0), 1.0);
}

/* The attention core of b sequences: flash, or unfused over scores in HBM. */
static void attention_core(LayerKernels *o, const ModelConfig *cfg, const RunSetup *s,
                           const KernelGpu *g, double e)
{
    const double b = (double)s->micro_batch, seq = (double)s->seq_len;
    const double a = (double)cfg->n_heads, d = (double)cfg->head_dim;
    KernelPass *core = &o->attn_core;
    if (s->is_flash_attention) {
        const double flops = 4.0 * b * seq * seq * a * d * 0.5; /* causal */
        /* each pass at the published rate of its kernel, head dimension and length */
        const PlatformFlashKernel kernel = s->flash_kernel;
        double fwd = kernels_attention_s(g, kernel, PLATFORM_FLASH_FWD, d, seq, flops);
        double bwd =
            kernels_attention_s(g, kernel, PLATFORM_FLASH_BWD, d, seq, FLASH_BWD_FACTOR * flops);
        /* A sliding-window layer (window_size in flash-attn >= 2.3, which HF's flash path
         * passes) skips the key blocks outside its window: query i meets min(i + 1, w) keys,
         * s w - w^2 / 2 pairs per head, at the causal rate of length 2w, whose rows average
         * w keys as the window's do. The figure is the mean over the layers, as in flops.c,
         * so the sum over layers is exact. */
        const double w = (double)cfg->sliding_window, n_layers = (double)cfg->n_layers;
        if (cfg->n_sliding_layers > 0 && w > 0 && w < seq) {
            const double n_sw = (double)cfg->n_sliding_layers;
            const double sw_flops = 4.0 * b * a * d * (seq * w - 0.5 * w * w);
            const double sw_fwd =
                kernels_attention_s(g, kernel, PLATFORM_FLASH_FWD, d, 2.0 * w, sw_flops);
            const double sw_bwd = kernels_attention_s(g, kernel, PLATFORM_FLASH_BWD, d, 2.0 * w,
                                                      FLASH_BWD_FACTOR * sw_flops);
            fwd = ((n_layers - n_sw) * fwd + n_sw * sw_fwd) / n_layers;
            bwd = ((n_layers - n_sw) * bwd + n_sw * sw_bwd) / n_layers;
        }
        core->attention_s += fwd;
        core->n_kernels += 1.0;
        o->bwd.attention_s += bwd;
        o->bwd.n_kernels += 2.0; /* the dO.O row sums, then the main backward kernel */
    } else {
        /* Fused: Megatron's scale-mask-softmax, one kernel reading and writing the scores
         * (the full s x s, masked, not halved). Eager: transformers' attention as its
         * modeling code writes it, a kernel per operation over the scores. GPT-2
         * (GPT2Attention._attn, from 4.x): attn_weights / sqrt(d), torch.where(causal_mask,
         * ...), + attention_mask (the [b, 1, 1, s] padding mask GPT2Model builds from the
         * tokenizer's attention_mask, as HF Trainer and run_clm pass it), softmax; other
         * families: the scale, the additive causal mask, softmax. The masks are broadcast
         * reads of s^2 or b s elements, not counted. */
        const double scores = b * a * seq * seq;
        const bool is_gpt2 = cfg->family == MODEL_FAMILY_GPT2;
        /* OPT (transformers' OPTAttention.forward, eager): q is scaled before QK^T (a pass
         * over q, below), then the scores get the additive mask, torch.max against the
         * dtype's minimum, and a softmax that fp16 computes in fp32 and casts back
         * (softmax(..., dtype=torch.float32).to(torch.float16), huggingface/transformers
         * #17437); the attention dropout (0.0 in OPT's configs) launches nothing. */
        const bool is_opt = s->elementwise == ELEMENTWISE_EAGER && cfg->family == MODEL_FAMILY_OPT;
        const bool is_upcast = is_opt && s->is_fp16;
        const double passes = s->elementwise == ELEMENTWISE_EAGER ? (is_gpt2 ? 4.0 : 3.0) : 1.0;
        gemm(core, g, b * a, seq, seq, d, e); /* S = Q K^T, per head */
        if (is_opt)
            memory(core, g, scores * (4.0 * e + (is_upcast ? 2.0 * (e + 4.0) : 2.0 * e)),
                   is_upcast ? 4.0 : 3.0);
        else
            memory(core, g, passes * 2.0 * scores * e, passes);
        const bool has_attn_dropout = model_config_has_attention_dropout(cfg);
        if (has_attn_dropout)
            memory(core, g, scores * (2.0 * e + 1.0), 1.0); /* attention dropout */
        gemm(core, g, b * a, seq, d, seq, e);               /* O = P V */
        gemm(&o->bwd, g, b * a, seq, seq, d, e);            /* dP = dO V^T */
        gemm(&o->bwd, g, b * a, seq, d, seq, e);            /* dV = P^T dO */
        if (has_attn_dropout)
            memory(&o->bwd, g, scores * (2.0 * e + 1.0), 1.0);
        if (is_opt) {
            /* the cast's backward (the gradient to fp32), softmax's backward reading it and
             * the fp32 probabilities and writing the 16-bit gradient, and torch.max's
             * (maximum against the dtype's minimum): PyTorch's derivative formula
             * (tools/autograd/derivatives.yaml, maximum: at::where(self == other, grad / 2,
             * grad).masked_fill_(self < other, 0)) runs eq (r e w 1), div (r e w e), where
             * (r 1 + 2e w e), lt (r e w 1) and masked_fill_ (r 1 + e w e): 9e + 4 bytes in
             * five kernels; the mask add's is the identity */
            if (is_upcast)
                memory(&o->bwd, g, scores * (e + 4.0), 1.0);
            memory(&o->bwd, g, scores * (is_upcast ? 8.0 + e : 3.0 * e), 1.0);
            memory(&o->bwd, g, scores * (9.0 * e + 4.0), 5.0);
        } else {
            memory(&o->bwd, g, 3.0 * scores * e, 1.0); /* dS from P and dP */
            /* eager: the scale's backward (grad / sqrt(d)) and GPT-2's where (the gradient
             * masked), each reading and writing the scores' gradient; an added mask's
             * backward is the identity */
            const double bwd_passes = is_gpt2 ? 2.0 : 1.0;
            if (s->elementwise == ELEMENTWISE_EAGER)
                memory(&o->bwd, g, bwd_passes * 2.0 * scores * e, bwd_passes);
        }
        gemm(&o->bwd, g, b * a, seq, d, seq, e);   /* dQ = dS K */
        gemm(&o->bwd, g, b * a, seq, d, seq, e);   /* dK = dS^T Q */
    }
    if (!s->is_flash_attention && s->elementwise == ELEMENTWISE_EAGER && cfg->family == MODEL_FAMILY_OPT) {
        /* q_proj(x) * scaling, and its backward grad * scaling: r e w e each */
        const double q_elems = b * seq * a * d;
        memory(&o->fwd, g, 2.0 * q_elems * e, 1.0);
        memory(&o->bwd, g, 2.0 * q_elems * e, 1.0);
    }
    o->fwd.gemm_s += core->gemm_s;
    o->fwd.gemm_flops += core->gemm_flops;
    o->fwd.attention_s += core->attention_s;
    o->fwd.memory_s += core->memory_s;
    o->fwd.n_kernels += core->n_kernels;
}

/* PyTorch's eager cross-entropy (torch.nn.CrossEntropyLoss) on fp32 logits, measured on
 * A100-SXM4-80GB (Liger-Kernel benchmark/data/all_benchmark_data.csv, provider
 * "huggingface", B x T = 8 x 2048 rows, Liger 0.2.1, 2024-09-03): forward 20.726 ms at
 * V = 131072 and 10.615 ms at 65536, 9.65 and 9.89 ps per element, which the three reads and
 * one write of the log-softmax (16 bytes, 9.02 ps at 0.87 x 2039 GB/s) account for within
 * 7-10%; backward (forward and backward 60.438 and 30.778 ms, less the forward) 18.49 and
 * 18.78 ps per element, where its 20 bytes would take 11.27: 0.61 of the streaming rate,
 * applied on every GPU (measured on the A100 only). */
#define CROSS_ENTROPY_EAGER_BWD_SHARE 0.61

/* Liger's fused linear cross-entropy runs the tokens in chunks of
 * next_power_of_2(ceil(T / ceil(V / h))), at most T (fused_linear_cross_entropy_forward:
 * transient logits of about T x h elements). */
double kernels_flce_chunk_tokens(double t, double v, double h)
{
    const double inc = ceil(v / h);
    const double chunk = pow(2.0, ceil(log2(ceil(t / inc))));
    return chunk < t ? chunk : t;
}

static void head(LayerKernels *o, const ModelConfig *cfg, const RunSetup *setup,
                 const KernelGpu *g, double t, double e, bool has_learned_pos)
{
    const LossKernel loss = setup->loss;
    const double h = (double)cfg->hidden, v = (double)cfg->vocab;
    KernelPass *f = &o->head_fwd, *b = &o->head_bwd;
    memory(f, g, 2.0 * t * h * e, 1.0); /* embedding rows gathered */
    /* embedding backward: the gradient rows scattered into a zeroed V x h gradient */
    memory(b, g, t * h * e + v * h * e, 2.0);
    if (has_learned_pos) {
        memory(f, g, 3.0 * t * h * e, 1.0); /* + position rows */
        memory(b, g, 2.0 * t * h * e, 1.0);
    }
    if (cfg->has_final_norm)
        norm_passes(f, b, cfg, setup, g, t * h, e);
    if (loss == LOSS_FUSED_LINEAR) {
        /* Liger's fused linear cross-entropy (ops/fused_linear_cross_entropy.py), all in
         * forward: grad_input (T x h) and grad_weight (V x h) zeroed, then per chunk the
         * logits GEMM, the loss kernel (an online softmax over each row, then the gradient
         * written over the logits: r 2e w e per logit), the input gradient's GEMM and the
         * weight gradient's accumulation; its backward only scales by the loss gradient, 1 */
        memory(f, g, (t + v) * h * e, 2.0);
        const double chunk = kernels_flce_chunk_tokens(t, v, h);
        for (double done = 0.0; done < t; done += chunk) {
            const double c = t - done < chunk ? t - done : chunk;
            gemm(f, g, 1.0, c, v, h, e);
            memory(f, g, 3.0 * c * v * e, 1.0);
            gemm(f, g, 1.0, c, h, v, e);
            gemm(f, g, 1.0, h, v, c, e);
        }
        return;
    }
    gemm(f, g, 1.0, t, v, h, e); /* logits */
    gemm(b, g, 1.0, t, h, v, e);
    gemm(b, g, 1.0, h, v, t, e);
    /* cross-entropy on logits.float(), as PyTorch runs log_softmax and nll_loss. A row of V
     * fp32 logits is too long for one block's registers or shared memory, so the softmax
     * kernel reads it three times (the row maximum, the sum of exponentials, the output)
     * and writes it once: 16 bytes per element. Backward: nll_loss's gradient is a zeroed
     * T x V tensor (w 4) with one entry per row set, and the log-softmax gradient reads
     * it for its row sum and again with the saved output to write its result (r 12, w 4),
     * 20 bytes, measured at 0.61 of the streaming rate (CROSS_ENTROPY_EAGER_BWD_SHARE);
     * 16-bit logits add the cast (r e, w 4) and its backward (r 4, w e). */
    const bool is_cast = e < 4.0;
    if (loss == LOSS_FUSED) {
        /* a fused loss (flash-attn's, Megatron's) is not timed as its own kernels yet: it
         * keeps the single-pass count, log-softmax r 4 w 4, its gradient r 4 + 4 w 4 */
        memory(f, g, t * v * (8.0 + (is_cast ? e + 4.0 : 0.0)), is_cast ? 2.0 : 1.0);
        memory(b, g, t * v * (12.0 + (is_cast ? 4.0 + e : 0.0)), is_cast ? 2.0 : 1.0);
        return;
    }
    if (loss == LOSS_EAGER_16BIT) {
        /* the same kernels on the 16-bit logits (log_softmax accumulates in fp32 and writes
         * e bytes: r 3e w e; its gradient w e, r 3e w e at the measured share), after the
         * shift's copy (lm_logits[..., :-1, :].contiguous(): r e w e) and, in backward,
         * the slice's gradient (a zeroed full tensor and the copy into it: w e, r e w e) */
        memory(f, g, t * v * 2.0 * e, 1.0);
        memory(f, g, t * v * 4.0 * e, 1.0);
        memory(b, g, t * v * 5.0 * e / CROSS_ENTROPY_EAGER_BWD_SHARE, 3.0);
        memory(b, g, t * v * 3.0 * e, 2.0);
        return;
    }
    memory(f, g, t * v * (16.0 + (is_cast ? e + 4.0 : 0.0)), is_cast ? 2.0 : 1.0);
    memory(b, g, t * v * 20.0 / CROSS_ENTROPY_EAGER_BWD_SHARE, 3.0);
    if (is_cast)
        memory(b, g, t * v * (4.0 + e), 1.0);
}

double kernels_step_s(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g)
{
    KernelTime t;
    kernels_step_time(cfg, setup, g, &t);
    return t.total_s;
}

void kernels_step_time(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g,
                       KernelTime *out)
{
    *out = (KernelTime){.total_s = 0.0};
    /* a mixture of experts: its dense and MoE layers, each as the kernels it runs */
    LayerKernels k[2];
    kernels_layer_of(cfg, setup, g, false, &k[0]);
    kernels_layer_of(cfg, setup, g, cfg->moe.n_experts > 0, &k[1]);
    const double a = (double)setup->grad_accum;
    kernels_time_add(g, &k[0].head_fwd, a, out);
    kernels_time_add(g, &k[0].head_bwd, a, out);
    for (uint64_t u = 0; u < cfg->n_layers; u++) {
        const LayerKernels *lk = &k[cfg->moe.n_experts > 0 && model_config_is_moe_layer(cfg, u)];
        kernels_time_add(g, &lk->fwd, a, out);
        kernels_time_add(g, &lk->bwd, a, out);
        if (setup->recompute == RECOMPUTE_SELECTIVE)
            kernels_time_add(g, &lk->attn_core, a, out);
        else if (setup->recompute == RECOMPUTE_SELECTIVE_OP)
            kernels_time_add(g, &lk->recompute_op, a, out);
        else if (setup_is_checkpointed(setup, u))
            kernels_time_add(g, &lk->fwd, a, out);
    }
    /* each pass is max(GPU, host issue) + its host work behind synchronisations */
    out->total_s = out->gemm_s + out->attention_s + out->memory_s + out->launch_bound_s +
                   out->host_serial_s;
}

/* A MoE layer's MLP block on one rank, as DeepSpeed-MoE and grouped-GEMM MoE codes run it:
 * the router GEMM (t x n_experts) and its softmax/top-k over fp32 scores; the permutation of
 * the capacity_factor x t x top_k token copies into expert order and back (a gather and a
 * scatter of h-wide rows each way); each of the n_experts / ep local experts' gated MLP on
 * its share of the routed copies (t x top_k x cf x ep / n_experts tokens each, one batched
 * GEMM per projection over the local experts: small shapes pay tile and wave quantization);
 * the shared experts on all t tokens; the weighted combine. The routed work is the busiest
 * rank's (moe_load_factor: capacity padding, or a dropless router's imbalance). The all-to-alls between the
 * permutations are communication (schedule/), not kernels. */
static void moe_block(LayerKernels *out, const ModelConfig *cfg, const RunSetup *setup,
                      const KernelGpu *g, double t, double e)
{
    const MoeShape *m = &cfg->moe;
    const double h = (double)cfg->hidden, n = (double)m->n_experts;
    const double cf = moe_load_factor(setup); /* the busiest rank sets the pace */
    const double ep = setup->ep_size > 1 ? (double)setup->ep_size : 1.0;
    const double copies = cf * t * (double)m->top_k;
    const double local = n / ep, per_expert = copies / local;
    const double fe = (double)m->expert_ffn;
    linear(out, g, t, n, h, e, false);               /* router */
    memory(&out->fwd, g, t * n * 4.0 * 3.0, 2.0); /* fp32 softmax and top-k */
    memory(&out->bwd, g, t * n * 4.0 * 3.0, 1.0);
    pointwise(out, g, copies * h, 1.0, e); /* permute into expert order */
    /* local experts: gate, up, SiLU, product, down as batched GEMMs */
    gemm(&out->fwd, g, local, per_expert, fe, h, e);
    gemm(&out->fwd, g, local, per_expert, fe, h, e);
    gemm(&out->bwd, g, local, per_expert, h, fe, e);
    gemm(&out->bwd, g, local, h, fe, per_expert, e);
    gemm(&out->bwd, g, local, per_expert, h, fe, e);
    gemm(&out->bwd, g, local, h, fe, per_expert, e);
    pointwise(out, g, copies * fe, 1.0, e);
    pointwise(out, g, copies * fe, 2.0, e);
    gemm(&out->fwd, g, local, per_expert, h, fe, e);
    gemm(&out->bwd, g, local, per_expert, fe, h, e);
    gemm(&out->bwd, g, local, fe, h, per_expert, e);
    pointwise(out, g, copies * h, 2.0, e); /* unpermute and weighted combine */
    if (m->shared_ffn > 0) {
        const double fs = (double)m->shared_ffn;
        linear(out, g, t, fs, h, e, false);
        linear(out, g, t, fs, h, e, false);
        pointwise(out, g, t * fs, 1.0, e);
        pointwise(out, g, t * fs, 2.0, e);
        linear(out, g, t, h, fs, e, false);
        pointwise(out, g, t * h, 2.0, e); /* added to the routed output */
    }
}

void kernels_layer(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g,
                   LayerKernels *out)
{
    kernels_layer_of(cfg, setup, g, cfg->moe.n_experts > 0 && cfg->moe.first_layer == 0 &&
                                         cfg->moe.n_dense_listed == 0 && cfg->moe.step == 1,
                     out);
}

void kernels_layer_of(const ModelConfig *cfg, const RunSetup *setup, const KernelGpu *g,
                      bool is_moe, LayerKernels *out)
{
    *out = (LayerKernels){0};
    SelectiveOp sop;
    selective_op_layer(cfg, &sop);
    unsigned li = 0; /* the next projection, in selective_op.h's order */
    const double e = (double)setup->act_bytes;
    const double t = (double)setup->micro_batch * (double)setup->seq_len;
    const double h = (double)cfg->hidden, f = (double)cfg->ffn_hidden;
    const double q = (double)(cfg->n_heads * cfg->head_dim);
    const double kv = (double)(cfg->n_kv_heads * cfg->head_dim);
    const bool is_rotary = has_rotary(cfg);
    const bool has_dropout = model_config_has_dropout(cfg);

    /* attention block */
    norm(out, cfg, setup, g, t * h, e);
    const MlaShape *mla = &cfg->mla;
    if (mla->kv_lora_rank > 0) {
        /* multi-head latent attention: the low-rank projections and their norms (outside
         * selective_op.h's layout: none of them is saved) */
        const double a = (double)cfg->n_heads;
        const double qk = (double)(mla->qk_nope_dim + mla->qk_rope_dim);
        const double lq = (double)mla->q_lora_rank, lkv = (double)mla->kv_lora_rank;
        if (mla->q_lora_rank > 0) {
            linear(out, g, t, lq, h, e, false);
            norm(out, cfg, setup, g, t * lq, e);
            linear(out, g, t, a * qk, lq, e, false);
        } else {
            linear(out, g, t, a * qk, h, e, false);
        }
        linear(out, g, t, lkv + (double)mla->qk_rope_dim, h, e, false);
        norm(out, cfg, setup, g, t * lkv, e);
        linear(out, g, t, a * (double)(mla->qk_nope_dim + mla->v_head_dim), lkv, e, false);
        li += cfg->is_qkv_fused ? 1 : 3;
    } else if (cfg->is_qkv_fused) {
        linear(out, g, t, q + 2.0 * kv, h, e, sop.is_saved[li++]);
    } else {
        linear(out, g, t, q, h, e, sop.is_saved[li++]);
        linear(out, g, t, kv, h, e, sop.is_saved[li++]);
        linear(out, g, t, kv, h, e, sop.is_saved[li++]);
    }
    if (is_rotary && setup->elementwise == ELEMENTWISE_LIGER) {
        /* Liger's rotary (ops/rope.py): one kernel rotating q and k in place, r e w e each
         * way, the same for the gradients */
        memory(&out->fwd, g, 2.0 * t * (q + kv) * e, 1.0);
        memory(&out->bwd, g, 2.0 * t * (q + kv) * e, 1.0);
    } else if (is_rotary) {
        rotary_eager(out, g, t * q, e);
        rotary_eager(out, g, t * kv, e);
    }
    attention_core(out, cfg, setup, g, e);
    if (setup->is_flash_attention) { /* SDPA's flash kernel: in the save list */
        out->op_saved.attention_s += out->attn_core.attention_s;
        out->op_saved.n_kernels += out->attn_core.n_kernels;
    }
    const double v_dim =
        mla->kv_lora_rank > 0 ? (double)(cfg->n_heads * mla->v_head_dim) : q;
    linear(out, g, t, h, v_dim, e, sop.is_saved[li++]); /* output projection */
    if (has_dropout)
        dropout(out, g, t * h, e);
    memory(&out->fwd, g, 3.0 * t * h * e, 1.0); /* residual add */
    memory(&out->bwd, g, 3.0 * t * h * e, 1.0); /* residual gradients summed */

    /* MLP block: its own norm, unless attention and MLP read the same normalised input (a
     * parallel block: one norm per layer); Gemma 2/3 add post-norms (four in all) */
    if (cfg->n_layer_norms >= 2)
        norm(out, cfg, setup, g, t * h, e);
    for (unsigned k = 2; k < cfg->n_layer_norms; k++)
        norm(out, cfg, setup, g, t * h, e);
    if (is_moe) {
        moe_block(out, cfg, setup, g, t, e);
    } else if (cfg->is_gated_mlp) {
        linear(out, g, t, f, h, e, sop.is_saved[li++]);       /* gate */
        linear(out, g, t, f, h, e, sop.is_saved[li++]);       /* up */
        if (setup->elementwise == ELEMENTWISE_LIGER) {
            /* Liger's SwiGLU (ops/swiglu.py, LigerSiLUMulFunction): one kernel reads gate
             * and up and writes the product (r 2e w e); backward reads the product's
             * gradient, gate and up and writes both gradients over them (r 3e w 2e),
             * recomputing the SiLU */
            memory(&out->fwd, g, 3.0 * t * f * e, 1.0);
            memory(&out->bwd, g, 5.0 * t * f * e, 1.0);
        } else {
            pointwise(out, g, t * f, 1.0, e); /* SiLU(gate) */
            pointwise(out, g, t * f, 2.0, e); /* x up */
        }
    } else {
        linear(out, g, t, f, h, e, sop.is_saved[li++]);
        if (setup->elementwise == ELEMENTWISE_EAGER && cfg->is_gelu_new)
            gelu_new_eager(out, g, t * f, e);
        else
            pointwise(out, g, t * f, 1.0, e); /* GeLU, one kernel */
    }
    if (!is_moe)
        linear(out, g, t, h, f, e, sop.is_saved[li++]); /* down */
    if (has_dropout)
        dropout(out, g, t * h, e);
    memory(&out->fwd, g, 3.0 * t * h * e, 1.0);
    memory(&out->bwd, g, 3.0 * t * h * e, 1.0);

    /* bias gradients: column sums of each biased projection's output gradient */
    const double biased = (cfg->has_qkv_bias ? q + 2.0 * kv : 0.0) + (cfg->has_out_bias ? h : 0.0) +
                          (cfg->has_mlp_bias ? f * (cfg->is_gated_mlp ? 2 : 1) + h : 0.0);
    const double n_biased = (cfg->has_qkv_bias ? (cfg->is_qkv_fused ? 1.0 : 3.0) : 0.0) +
                            (cfg->has_out_bias ? 1.0 : 0.0) +
                            (cfg->has_mlp_bias ? (cfg->is_gated_mlp ? 3.0 : 2.0) : 0.0);
    if (biased > 0)
        memory(&out->bwd, g, t * e * biased, n_biased);

    head(out, cfg, setup, g, t, e, cfg->position_rows > 0);
    out->recompute_op = (KernelPass){
        .gemm_s = out->fwd.gemm_s - out->op_saved.gemm_s,
        .gemm_flops = out->fwd.gemm_flops - out->op_saved.gemm_flops,
        .attention_s = out->fwd.attention_s - out->op_saved.attention_s,
        .memory_s = out->fwd.memory_s,
        .n_kernels = out->fwd.n_kernels - out->op_saved.n_kernels,
    };
}
