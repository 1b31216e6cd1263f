/*
 * layer.c - one transformer layer's kernel plan, zerosim's prediction for it, and the
 * comparison table (see layer.h).
 *
 * The linears follow sim/model/params.c's module list, so the plan's GEMM FLOPs are
 * flops.c's 2 x gemm_per_layer per token; the prediction calls sim/schedule/cost.c's
 * cost_step, so the layer totals are exactly what the simulator charges for one layer.
 */
#include "layer.h"

#include "model/flops.h"
#include "model/params.h"
#include "schedule/cost.h"

#include <math.h>
#include <string.h>

#define LAYER_MAX_OPERAND_ELEMS (1ull << 31) /* cuBLAS and the streaming kernel index in int */

static LayerKernel *add(LayerPlan *p, const char *name, LayerKernelKind kind, bool is_backward)
{
    LayerKernel *k = &p->kernels[p->n_kernels++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->kind = kind;
    k->is_backward = is_backward;
    return k;
}

static void gemm(LayerPlan *p, const char *name, char op, bool is_backward, uint64_t batch,
                 uint64_t m, uint64_t n, uint64_t k)
{
    LayerKernel *x = add(p, name, op == 'b' ? LAYER_ATTENTION : LAYER_GEMM, is_backward);
    x->gemm_op = op;
    x->batch = batch;
    x->m = m;
    x->n = n;
    x->k = k;
    x->flops = 2.0 * (double)batch * (double)m * (double)n * (double)k;
    uint64_t sizes[3] = {m * k, k * n, m * n};
    for (int i = 0; i < 3; i++)
        if (batch * sizes[i] > p->max_elems)
            p->max_elems = batch * sizes[i];
}

/* nn.Linear(in, out) over T tokens: forward Y = X W^T, then dX = dY W and dW = dY^T X. */
static void linear(LayerPlan *p, const char *name, uint64_t in, uint64_t out)
{
    char buf[32];
    uint64_t t = p->tokens;
    snprintf(buf, sizeof buf, "%s fwd", name);
    gemm(p, buf, 'f', false, 1, t, out, in);
    snprintf(buf, sizeof buf, "%s dgrad", name);
    gemm(p, buf, 'd', true, 1, t, in, out);
    snprintf(buf, sizeof buf, "%s wgrad", name);
    gemm(p, buf, 'w', true, 1, out, in, t);
    p->gemm_flops_fwd += 2.0 * (double)t * (double)in * (double)out;
}

/* A memory-bound kernel, forward and backward (twice the traffic, as cost.c counts it). */
static void memory(LayerPlan *p, const char *name, double read_elems, double write_elems)
{
    char buf[32];
    const double e = LAYER_ELEM_BYTES;
    snprintf(buf, sizeof buf, "%s fwd", name);
    LayerKernel *f = add(p, buf, LAYER_MEMORY, false);
    f->read_bytes = read_elems * e;
    f->write_bytes = write_elems * e;
    snprintf(buf, sizeof buf, "%s bwd", name);
    LayerKernel *b = add(p, buf, LAYER_MEMORY, true);
    b->read_bytes = 2 * read_elems * e;
    b->write_bytes = 2 * write_elems * e;
    p->memory_bytes_fwd += f->read_bytes + f->write_bytes;
    double most = read_elems > write_elems ? read_elems : write_elems;
    if (most > (double)p->max_elems)
        p->max_elems = (uint64_t)most;
}

int layer_plan(const ModelConfig *cfg, uint64_t micro_batch, uint64_t seq, LayerPlan *out, Err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", cfg->name);
    out->micro_batch = micro_batch;
    out->seq = seq;
    out->tokens = micro_batch * seq;
    const uint64_t h = cfg->hidden, f = cfg->ffn_hidden, a = cfg->n_heads, d = cfg->head_dim;
    const uint64_t q_dim = a * d, kv_dim = cfg->n_kv_heads * d, t = out->tokens;
    const uint64_t bh = micro_batch * a;

    /* Attention block: norm, projections, core, output projection, residual. */
    memory(out, "input_norm", (double)(t * h), (double)(t * h));
    if (cfg->is_qkv_fused) {
        linear(out, "qkv_proj", h, q_dim + 2 * kv_dim);
    } else {
        linear(out, "q_proj", h, q_dim);
        linear(out, "k_proj", h, kv_dim);
        linear(out, "v_proj", h, kv_dim);
    }
    gemm(out, "attn QK^T fwd", 'b', false, bh, seq, seq, d);
    memory(out, "softmax", (double)(bh * seq * seq), (double)(bh * seq * seq));
    gemm(out, "attn AV fwd", 'b', false, bh, seq, d, seq);
    gemm(out, "attn dP=dO V^T", 'b', true, bh, seq, seq, d);
    gemm(out, "attn dV=P^T dO", 'b', true, bh, seq, d, seq);
    gemm(out, "attn dQ=dS K", 'b', true, bh, seq, d, seq);
    gemm(out, "attn dK=dS^T Q", 'b', true, bh, seq, d, seq);
    out->attn_flops_fwd = 2.0 * 2.0 * (double)bh * (double)seq * (double)seq * (double)d;
    linear(out, "o_proj", q_dim, h);
    memory(out, "residual_1", (double)(2 * t * h), (double)(t * h));

    /* MLP block. */
    memory(out, "post_attention_norm", (double)(t * h), (double)(t * h));
    if (cfg->is_gated_mlp) {
        linear(out, "gate_proj", h, f);
        linear(out, "up_proj", h, f);
        memory(out, "swiglu", (double)(2 * t * f), (double)(t * f));
    } else {
        linear(out, "up_proj", h, f);
        memory(out, "gelu", (double)(t * f), (double)(t * f));
    }
    linear(out, "down_proj", f, h);
    memory(out, "residual_2", (double)(2 * t * h), (double)(t * h));

    if (out->max_elems > LAYER_MAX_OPERAND_ELEMS)
        return err_set(err,
                       "--layer %s: expected operands of at most 2^31 elements for one GPU, got "
                       "%llu (lower --micro-batch or --seq)",
                       cfg->name, (unsigned long long)out->max_elems);
    return 0;
}

void layer_predict(const ModelConfig *cfg, const LayerPlan *plan, const Platform *p,
                   LayerPrediction *out)
{
    memset(out, 0, sizeof *out);
    ModelParams params;
    params_count(cfg, &params);
    RunSetup setup = {.seq_len = plan->seq,
                      .micro_batch = plan->micro_batch,
                      .grad_accum = 1,
                      .global_batch = plan->micro_batch,
                      .n_gpus = 1,
                      .recompute = RECOMPUTE_NONE,
                      .is_flash_attention = false,
                      .act_bytes = LAYER_ELEM_BYTES};
    TrainConfig train;
    memset(&train, 0, sizeof train);
    train.precision = PRECISION_BF16;
    StepCost c;
    cost_step(cfg, &params, &setup, &train, p, &c);
    out->fwd_s = c.layer_fwd / c.gpu_flops_per_s;
    out->bwd_s = c.layer_bwd / c.gpu_flops_per_s;
    const double peak = platform_peak_flops_per_s(p, PRECISION_BF16);
    for (size_t i = 0; i < plan->n_kernels; i++) {
        const LayerKernel *k = &plan->kernels[i];
        out->kernel_s[i] = k->kind == LAYER_GEMM ? k->flops / (peak * p->gpu.gemm_efficiency)
                           : k->kind == LAYER_ATTENTION
                               ? k->flops / (peak * p->gpu.attention_efficiency)
                               : (k->read_bytes + k->write_bytes) / p->gpu.hbm_bw_bytes_per_s;
    }
}

static void print_error(double measured, double predicted, FILE *out)
{
    if (measured > 0)
        fprintf(out, "  %+7.1f%%\n", 100.0 * (predicted - measured) / measured);
    else
        fprintf(out, "        -\n");
}

static void print_total(const char *label, const char *field, double measured, double predicted,
                        FILE *out)
{
    fprintf(out, "layer %s measured ", label);
    if (measured > 0)
        fprintf(out, "%.3f ms", 1e3 * measured);
    else
        fprintf(out, "-");
    fprintf(out, ", zerosim (cost.c %s) %.3f ms", field, 1e3 * predicted);
    print_error(measured, predicted, out);
}

void layer_print(const LayerPlan *plan, const LayerPrediction *pred, const double *measured_s,
                 double measured_fwd_s, double measured_bwd_s, const char *platform, FILE *out)
{
    fprintf(out, "one layer of %s: %llu x %llu tokens, bf16; zerosim on %s\n", plan->model,
            (unsigned long long)plan->micro_batch, (unsigned long long)plan->seq, platform);
    fprintf(out, "%-24s %-26s %12s %12s %12s %9s\n", "kernel", "shape (batch x m x n x k)",
            "GFLOP or MB", "measured_us", "zerosim_us", "error");
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < plan->n_kernels; i++) {
            const LayerKernel *k = &plan->kernels[i];
            if (k->is_backward != (pass == 1))
                continue;
            char shape[48];
            double amount;
            if (k->kind == LAYER_MEMORY) {
                snprintf(shape, sizeof shape, "read %.0f MB, write %.0f", k->read_bytes / 1e6,
                         k->write_bytes / 1e6);
                amount = (k->read_bytes + k->write_bytes) / 1e6;
            } else {
                snprintf(shape, sizeof shape, "%llux%llux%llux%llu", (unsigned long long)k->batch,
                         (unsigned long long)k->m, (unsigned long long)k->n,
                         (unsigned long long)k->k);
                amount = k->flops / 1e9;
            }
            double m = measured_s != NULL ? measured_s[i] : 0;
            fprintf(out, "%-24s %-26s %12.3f ", k->name, shape, amount);
            if (m > 0)
                fprintf(out, "%12.1f ", 1e6 * m);
            else
                fprintf(out, "%12s ", "-");
            fprintf(out, "%12.1f", 1e6 * pred->kernel_s[i]);
            print_error(m, pred->kernel_s[i], out);
        }
    }
    print_total("forward: ", "layer_fwd", measured_s != NULL ? measured_fwd_s : 0, pred->fwd_s,
                out);
    print_total("backward:", "layer_bwd", measured_s != NULL ? measured_bwd_s : 0, pred->bwd_s,
                out);
}
