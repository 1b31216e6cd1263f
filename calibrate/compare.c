/*
 * compare.c - closed-form zerosim predictions and the comparison table (see compare.h).
 */
#include "compare.h"

#include "derive.h"

#include <math.h>
#include <string.h>

static double peak_for(const Platform *p, int precision)
{
    static const Precision map[CALIB_N_PRECISIONS] = {PRECISION_BF16, PRECISION_FP16,
                                                      PRECISION_FP32};
    return platform_peak_flops_per_s(p, map[precision]);
}

static double min2(double a, double b)
{
    return a < b ? a : b;
}

static double predict_collective(const Sample *x, const Platform *p)
{
    const uint64_t n = x->n;
    if (n < 2 || n > p->gpus_per_node)
        return -1;
    double alpha, bw;
    if (p->has_nvlink && p->has_nvswitch) {
        alpha = p->nvlink.latency_s;
        bw = p->nvlink.bw_bytes_per_s;
    } else if (p->has_nvlink) {
        alpha = p->nvlink.latency_s;
        bw = p->nvlink.bw_bytes_per_s / (double)(p->gpus_per_node > 1 ? p->gpus_per_node - 1 : 1);
    } else {
        alpha = 2.0 * p->pcie.gpu_link.latency_s;
        bw = p->pcie.gpu_link.bw_bytes_per_s;
        if (n > p->pcie.gpus_per_switch) {
            alpha += 2.0 * p->pcie.switch_uplink.latency_s;
            bw = min2(bw, p->pcie.switch_uplink.bw_bytes_per_s);
        }
    }
    CalibCollective op = (CalibCollective)x->name;
    double share = (double)(n - 1) / (double)n;
    double volume = op == CALIB_ALL_REDUCE  ? 2.0 * share * x->size
                    : op == CALIB_BROADCAST ? x->size
                                            : share * x->size;
    return (double)derive_ring_steps(op, n) * alpha + volume / bw;
}

double compare_predict(const Sample *x, const Platform *p)
{
    switch (x->kind) {
    case SAMPLE_GEMM: {
        double rate = peak_for(p, x->name) * p->gpu.gemm_efficiency;
        return rate > 0 ? x->size / rate : -1;
    }
    case SAMPLE_COPY:
        if (x->name == CALIB_D2D) /* read and written at the streaming kernels' rate */
            return 2.0 * x->size / (p->gpu.hbm_bw_bytes_per_s * p->gpu.memory_bw_efficiency);
        return p->pcie.gpu_link.latency_s + p->pcie.switch_uplink.latency_s +
               x->size /
                   min2(p->pcie.gpu_link.bw_bytes_per_s, p->pcie.switch_uplink.bw_bytes_per_s);
    case SAMPLE_COLLECTIVE: return predict_collective(x, p);
    case SAMPLE_CPU_ADAM:
        return x->size / ((double)p->cpu.cores * p->cpu.adam_params_per_s_per_core);
    case SAMPLE_DISK: {
        if (p->nvme.n_drives == 0)
            return -1;
        double bw = x->name == 0 ? p->nvme.read_bw_bytes_per_s_per_drive
                                 : p->nvme.write_bw_bytes_per_s_per_drive;
        return x->size / (bw * (double)p->nvme.n_drives);
    }
    case SAMPLE_LAUNCH: return p->gpu.kernel_launch_s; /* per kernel */
    default: return -1;
    }
}

typedef struct GroupError {
    double sum_abs;
    size_t n;
} GroupError;

static void cell(FILE *out, double pred, double measured, GroupError *g)
{
    if (pred < 0) {
        fprintf(out, "  %11s %8s", "n/a", "");
        return;
    }
    double pct = 100.0 * (pred - measured) / measured;
    fprintf(out, "  %11.4g %+7.1f%%", pred, pct);
    g->sum_abs += fabs(pct);
    g->n++;
}

static bool same_group(const Sample *a, const Sample *b)
{
    return a->kind == b->kind && a->name == b->name;
}

static void print_group_mean(FILE *out, const Sample *x, const GroupError *base,
                             const GroupError *cal, bool has_cal)
{
    fprintf(out, "  -> %s %s: mean |error| ", samples_kind_names[x->kind],
            samples_names(x->kind)[x->name]);
    if (base->n > 0)
        fprintf(out, "%.1f%% (platform)", base->sum_abs / (double)base->n);
    else
        fprintf(out, "n/a (platform)");
    if (has_cal) {
        if (cal->n > 0)
            fprintf(out, ", %.1f%% (calibrated)", cal->sum_abs / (double)cal->n);
        else
            fprintf(out, ", n/a (calibrated)");
    }
    fputc('\n', out);
}

void compare_print(const SampleSet *s, const Platform *p, const Platform *calibrated, FILE *out)
{
    fprintf(out,
            "zerosim predictions on platform %s (closed-form engine formulas, "
            "docs/CALIBRATION.md)\n",
            p->name);
    fprintf(out, "%-10s %-14s %-30s %5s %11s %11s  %11s %8s", "kind", "name", "label", "n", "size",
            "measured_s", "zerosim_s", "error");
    if (calibrated != NULL)
        fprintf(out, "  %11s %8s", "calibrated", "error");
    fputc('\n', out);
    /* The engine runs the Adam update on all cores: only the best thread count is the same
     * operation. */
    size_t best_adam = s->n_items;
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *x = &s->items[i];
        if (x->kind == SAMPLE_CPU_ADAM &&
            (best_adam == s->n_items ||
             x->size / x->median_s > s->items[best_adam].size / s->items[best_adam].median_s))
            best_adam = i;
    }
    GroupError base = {0, 0}, cal = {0, 0};
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *x = &s->items[i];
        if (x->kind == SAMPLE_CPU_ADAM && i != best_adam)
            continue;
        fprintf(out, "%-10s %-14s %-30.30s %5llu %11.4g %11.4g", samples_kind_names[x->kind],
                samples_names(x->kind)[x->name], x->label, (unsigned long long)x->n, x->size,
                x->median_s);
        cell(out, compare_predict(x, p), x->median_s, &base);
        if (calibrated != NULL)
            cell(out, compare_predict(x, calibrated), x->median_s, &cal);
        fputc('\n', out);
        size_t next = i + 1;
        while (next < s->n_items && s->items[next].kind == SAMPLE_CPU_ADAM && next != best_adam)
            next++;
        if (next == s->n_items || !same_group(x, &s->items[next])) {
            print_group_mean(out, x, &base, &cal, calibrated != NULL);
            base = (GroupError){0, 0};
            cal = (GroupError){0, 0};
        }
    }
}
