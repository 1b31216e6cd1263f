/*
 * derive.c - grouping samples and fitting each group (see derive.h).
 */
#include "derive.h"

#include "common/xalloc.h"
#include "fit.h"

#include <stdio.h>
#include <string.h>

double derive_busbw_factor(CalibCollective op, uint64_t n_gpus)
{
    double n = (double)n_gpus;
    switch (op) {
    case CALIB_ALL_REDUCE: return 2.0 * (n - 1.0) / n;
    case CALIB_ALL_GATHER:
    case CALIB_REDUCE_SCATTER: return (n - 1.0) / n;
    default: return 1.0;
    }
}

uint64_t derive_ring_steps(CalibCollective op, uint64_t n_gpus)
{
    if (n_gpus < 2)
        return 0;
    return op == CALIB_ALL_REDUCE ? 2 * (n_gpus - 1) : n_gpus - 1;
}

/* The medians of the samples of one kind and name: sizes, times, and the n of the first
 * (with *is_n_mixed set when they differ). Returns the count; the caller frees both. */
static size_t gather(const SampleSet *s, SampleKind kind, int name, double **out_size,
                     double **out_time, uint64_t *out_n, bool *is_n_mixed)
{
    size_t count = 0;
    for (size_t i = 0; i < s->n_items; i++)
        count += s->items[i].kind == kind && s->items[i].name == name;
    *out_size = xmalloc((count ? count : 1) * sizeof **out_size);
    *out_time = xmalloc((count ? count : 1) * sizeof **out_time);
    *is_n_mixed = false;
    size_t k = 0;
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *x = &s->items[i];
        if (x->kind != kind || x->name != name)
            continue;
        if (k == 0)
            *out_n = x->n;
        else if (x->n != *out_n)
            *is_n_mixed = true;
        (*out_size)[k] = x->size;
        (*out_time)[k] = x->median_s;
        k++;
    }
    return count;
}

static int derive_gemm(const SampleSet *s, Calibration *out, StrList *notes, Err *err)
{
    for (int p = 0; p < CALIB_N_PRECISIONS; p++) {
        double *size, *time;
        uint64_t n_unused = 0;
        bool is_mixed;
        size_t n = gather(s, SAMPLE_GEMM, p, &size, &time, &n_unused, &is_mixed);
        int rc = 0;
        if (n > 0) {
            char what[64];
            snprintf(what, sizeof what, "gemm %s", calibration_precision_names[p]);
            double peak = s->meta.gemm[p].peak_flops_per_s;
            for (size_t i = 0; i < n; i++)
                time[i] = size[i] / time[i]; /* now FLOP/s */
            FitSaturating f;
            if (!(peak > 0))
                rc = err_set(err,
                             "%s: expected the GPU's peak FLOP/s (metadata "
                             "peak_flops_per_s.%s), got none",
                             what, calibration_precision_names[p]);
            else if (fit_saturating(size, time, n, what, &f, err) == 0) {
                CalibGemm *g = &out->gemm[p];
                g->is_present = true;
                g->peak_flops_per_s = peak;
                g->peak_efficiency = f.rate_max / peak;
                g->half_size_flops = f.half_size;
                g->fit = f.quality;
                if (g->peak_efficiency > 1.0) {
                    snprintf(g->note, sizeof g->note,
                             "fitted asymptote %.4g FLOP/s exceeds "
                             "the peak %.4g: the peak is too low (give --platform)",
                             f.rate_max, peak);
                    strlist_addf(notes, "%s: %s", what, g->note);
                }
            } else {
                rc = -1;
            }
        }
        free(size);
        free(time);
        if (rc)
            return -1;
    }
    return 0;
}

static int derive_copies(const SampleSet *s, Calibration *out, StrList *notes, Err *err)
{
    for (int r = 0; r < CALIB_N_COPY_ROUTES; r++) {
        double *size, *time;
        uint64_t n_unused = 0;
        bool is_mixed;
        size_t n = gather(s, SAMPLE_COPY, r, &size, &time, &n_unused, &is_mixed);
        int rc = 0;
        if (n > 0) {
            char what[64];
            snprintf(what, sizeof what, "copy %s", calibration_copy_names[r]);
            FitLatencyBw f;
            rc = fit_latency_bw(size, time, n, what, &f, err);
            if (rc == 0) {
                CalibCopy *c = &out->copy[r];
                c->is_present = true;
                c->latency_s = f.latency_s;
                c->bw_bytes_per_s = f.bw_per_s;
                c->fit = f.quality;
                if (f.is_latency_clamped) {
                    snprintf(c->note, sizeof c->note, "negative fitted latency clamped to 0");
                    strlist_addf(notes, "%s: %s", what, c->note);
                }
            }
        }
        free(size);
        free(time);
        if (rc)
            return -1;
    }
    return 0;
}

static int derive_collectives(const SampleSet *s, Calibration *out, StrList *notes, Err *err)
{
    for (int op = 0; op < CALIB_N_COLLECTIVES; op++) {
        double *size, *time;
        uint64_t n_gpus = 0;
        bool is_mixed;
        size_t n = gather(s, SAMPLE_COLLECTIVE, op, &size, &time, &n_gpus, &is_mixed);
        int rc = 0;
        char what[64];
        snprintf(what, sizeof what, "collective %s", calibration_collective_names[op]);
        if (n > 0 && is_mixed)
            rc = err_set(err, "%s: expected one GPU count for all sizes, got several", what);
        else if (n > 0) {
            FitLatencyBw f;
            rc = fit_latency_bw(size, time, n, what, &f, err);
            if (rc == 0) {
                CalibCollectiveFit *c = &out->collective[op];
                uint64_t steps = derive_ring_steps((CalibCollective)op, n_gpus);
                c->is_present = true;
                c->n_gpus = n_gpus;
                c->latency_s = f.latency_s;
                c->alpha_s = steps > 0 ? f.latency_s / (double)steps : f.latency_s;
                c->algbw_bytes_per_s = f.bw_per_s;
                c->busbw_bytes_per_s =
                    n_gpus < 2 && op != CALIB_BROADCAST
                        ? 0.0
                        : f.bw_per_s * derive_busbw_factor((CalibCollective)op, n_gpus);
                c->fit = f.quality;
                if (n_gpus < 2)
                    snprintf(c->note, sizeof c->note,
                             "single GPU: no inter-GPU traffic; "
                             "NCCL's local copy and launch cost only, not a link figure");
                if (f.is_latency_clamped) {
                    size_t used = strlen(c->note);
                    snprintf(c->note + used, sizeof c->note - used,
                             "%snegative fitted latency "
                             "clamped to 0",
                             used ? "; " : "");
                }
                if (c->note[0] != '\0')
                    strlist_addf(notes, "%s: %s", what, c->note);
            }
        }
        free(size);
        free(time);
        if (rc)
            return -1;
    }
    return 0;
}

static void derive_cpu_adam(const SampleSet *s, Calibration *out)
{
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *x = &s->items[i];
        if (x->kind != SAMPLE_CPU_ADAM)
            continue;
        double rate = x->size / x->median_s;
        if (!out->cpu_adam.is_present || rate > out->cpu_adam.params_per_s) {
            out->cpu_adam.is_present = true;
            out->cpu_adam.params_per_s = rate;
            out->cpu_adam.threads = x->n;
            out->cpu_adam.n_params = (uint64_t)x->size;
            out->cpu_adam.params_per_s_per_core = rate / (double)x->n;
        }
    }
}

/* The launch floor: the per-kernel time of the longest back-to-back run of empty kernels
 * (the host's issue rate once the queue is full). */
static void derive_launch(const SampleSet *s, Calibration *out)
{
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *x = &s->items[i];
        if (x->kind != SAMPLE_LAUNCH)
            continue;
        if (!out->launch.is_present || x->n > out->launch.n_kernels) {
            out->launch.is_present = true;
            out->launch.launch_s = x->median_s;
            out->launch.n_kernels = x->n;
        }
    }
}

static void derive_disk(const SampleSet *s, Calibration *out)
{
    bool has_read = false, has_write = false;
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *x = &s->items[i];
        if (x->kind != SAMPLE_DISK)
            continue;
        double bw = x->size / x->median_s;
        if (x->name == 0)
            out->disk.read_bw_bytes_per_s = bw, has_read = true;
        else
            out->disk.write_bw_bytes_per_s = bw, has_write = true;
        out->disk.file_bytes = (uint64_t)x->size;
        out->disk.block_bytes = x->n;
    }
    out->disk.is_present = has_read && has_write;
}

int derive_calibration(const SampleSet *s, Calibration *out, StrList *notes, Err *err)
{
    memset(out, 0, sizeof *out);
    /* Header, system and the disk run's facts come with the samples. */
    const Calibration *m = &s->meta;
    memcpy(out->date, m->date, sizeof out->date);
    memcpy(out->host, m->host, sizeof out->host);
    memcpy(out->mode, m->mode, sizeof out->mode);
    memcpy(out->tool_version, m->tool_version, sizeof out->tool_version);
    memcpy(out->samples_csv, m->samples_csv, sizeof out->samples_csv);
    out->system = m->system;
    memcpy(out->gemm_peak_source, m->gemm_peak_source, sizeof out->gemm_peak_source);
    memcpy(out->disk.dir, m->disk.dir, sizeof out->disk.dir);
    memcpy(out->disk.note, m->disk.note, sizeof out->disk.note);
    out->disk.is_direct = m->disk.is_direct;
    if (derive_gemm(s, out, notes, err) || derive_copies(s, out, notes, err) ||
        derive_collectives(s, out, notes, err))
        return -1;
    derive_cpu_adam(s, out);
    derive_launch(s, out);
    derive_disk(s, out);
    if (out->disk.is_present && !out->disk.is_direct && out->disk.note[0] != '\0')
        strlist_addf(notes, "disk: %s", out->disk.note);
    return 0;
}
