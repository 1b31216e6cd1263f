/*
 * plan.c - benchmark settings, size lists, transformer GEMM shapes, peak estimates (see
 * plan.h).
 */
#include "plan.h"

#include "common/units.h"

#include <stdio.h>
#include <string.h>

void plan_init(BenchPlan *plan, bool is_quick)
{
    memset(plan, 0, sizeof *plan);
    plan->is_quick = is_quick;
    plan->warmup = 2;
    plan->reps = is_quick ? 5 : 10;
    plan->target_rep_s = is_quick ? 0.01 : 0.025;
    for (int i = 0; i < CALIB_N_PRECISIONS; i++)
        plan->has_precision[i] = true;
    /* A 7B-class layer (LLaMA-2-7B's hidden size, GPT's 4h MLP) at 1 x 2048 tokens. */
    plan->hidden = 4096;
    plan->ffn = 4 * 4096;
    plan->micro_batch = 1;
    plan->seq = 2048;
    plan->sweep_min = 128;
    plan->sweep_max = is_quick ? 8192 : 16384;
    plan->copy_min_bytes = 4 * 1024;
    plan->copy_max_bytes = (uint64_t)(is_quick ? UNITS_GIB : 4 * UNITS_GIB);
    plan->copy_factor = is_quick ? 4 : 2;
    plan->coll_min_bytes = 8;
    plan->coll_max_bytes = (uint64_t)(is_quick ? UNITS_GIB : 4 * UNITS_GIB);
    plan->coll_factor = is_quick ? 8 : 2;
    plan->adam_params = is_quick ? (1ull << 25) : (1ull << 27);
    plan->disk_dir = "/tmp";
    plan->disk_file_bytes = (uint64_t)(is_quick ? UNITS_GIB : 4 * UNITS_GIB);
    plan->disk_block_bytes = (uint64_t)(16 * UNITS_MIB);
}

size_t plan_sizes(uint64_t min, uint64_t max, uint32_t factor, uint64_t *out, size_t max_out)
{
    size_t n = 0;
    uint64_t s = min;
    if (factor < 2 || min == 0)
        return 0;
    while (s <= max && n < max_out) {
        out[n++] = s;
        if (s > max / factor)
            break;
        s *= factor;
    }
    if (n > 0 && out[n - 1] != max && n < max_out && max > min)
        out[n++] = max;
    return n;
}

size_t plan_threads(uint32_t max_threads, uint32_t *out, size_t max_out)
{
    size_t n = 0;
    for (uint32_t t = 1; t < max_threads && n < max_out; t *= 2)
        out[n++] = t;
    if (n < max_out && max_threads >= 1)
        out[n++] = max_threads;
    return n;
}

static void add_shape(GemmShape *out, size_t *n, size_t max_out, const char *label, uint64_t m,
                      uint64_t nn, uint64_t k, bool ta, bool tb)
{
    if (*n >= max_out)
        return;
    GemmShape *g = &out[(*n)++];
    char buf[128];
    snprintf(buf, sizeof buf, "%.31s %llux%llux%llu", label, (unsigned long long)m,
             (unsigned long long)nn, (unsigned long long)k);
    snprintf(g->label, sizeof g->label, "%.47s", buf);
    g->m = m, g->n = nn, g->k = k;
    g->is_a_transposed = ta, g->is_b_transposed = tb;
}

size_t plan_gemm_shapes(const BenchPlan *plan, GemmShape *out, size_t max_out)
{
    size_t n = 0;
    const uint64_t t = plan->micro_batch * plan->seq, h = plan->hidden, f = plan->ffn;
    /* A linear layer Y[t x out] = X[t x in] W^T costs three GEMMs a step: forward, the input
     * gradient dX = dY W [t x in] and the weight gradient dW = dY^T X [out x in] (Megatron-LM,
     * Narayanan et al. 2021, sec. 3.2: backward is twice the forward FLOPs). The calls are
     * the ones PyTorch's nn.Linear makes on row-major tensors, seen by column-major cuBLAS:
     * forward (T, N) m=out n=t k=in; dgrad (N, N) m=in n=t k=out; wgrad (N, T) m=in n=out
     * k=t. */
    static const struct {
        const char *name;
        int in, out; /* 'h' or 'f', times 1 or 3 */
        int in_mul, out_mul;
    } linears[] = {
        {"qkv", 'h', 'h', 1, 3},
        {"proj", 'h', 'h', 1, 1},
        {"mlp_up", 'h', 'f', 1, 1},
        {"mlp_down", 'f', 'h', 1, 1},
    };
    for (size_t i = 0; i < sizeof linears / sizeof linears[0]; i++) {
        uint64_t in = (linears[i].in == 'h' ? h : f) * (uint64_t)linears[i].in_mul;
        uint64_t o = (linears[i].out == 'h' ? h : f) * (uint64_t)linears[i].out_mul;
        char label[32];
        snprintf(label, sizeof label, "%s_fwd", linears[i].name);
        add_shape(out, &n, max_out, label, o, t, in, true, false);
        snprintf(label, sizeof label, "%s_dgrad", linears[i].name);
        add_shape(out, &n, max_out, label, in, t, o, false, false);
        snprintf(label, sizeof label, "%s_wgrad", linears[i].name);
        add_shape(out, &n, max_out, label, in, o, t, false, true);
    }
    for (uint64_t s = plan->sweep_min; s > 0 && s <= plan->sweep_max; s *= 2)
        add_shape(out, &n, max_out, "square", s, s, s, false, false);
    return n;
}

double plan_peak_estimate(int cc_major, int cc_minor, int sm_count, double clock_hz,
                          CalibPrecision precision)
{
    /* Dense FLOPs per clock per SM, from NVIDIA's architecture whitepapers: tensor-core
     * FP16/BF16 with FP32 accumulation (V100 1024, A100 2048, H100 4096, B200 8192), and FP32
     * FMA on CUDA cores (64 FP32 units x 2 on V100/A100, 128 x 2 on GA10x/AD10x/H100/B200).
     * Consumer parts (GA10x, AD10x) run FP32-accumulate tensor math at half rate: 512. */
    int cc = cc_major * 10 + cc_minor;
    double tensor = 0, fp32 = 0;
    if (cc >= 100)
        tensor = 8192, fp32 = 256;
    else if (cc >= 90)
        tensor = 4096, fp32 = 256;
    else if (cc == 80)
        tensor = 2048, fp32 = 128;
    else if (cc >= 86)
        tensor = 512, fp32 = 256;
    else if (cc >= 70)
        tensor = 1024, fp32 = 128;
    else
        return 0;
    if (precision == CALIB_BF16 && cc < 80)
        return 0;
    double per_clock = precision == CALIB_FP32 ? fp32 : tensor;
    return per_clock * (double)sm_count * clock_hz;
}
