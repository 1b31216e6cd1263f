/*
 * trace_fit.h - from a profiler trace (kineto.h) to calibration samples, fits and a summary.
 *
 * The trace's GPU activity becomes the same samples a microbenchmark run writes (samples.h),
 * one per distinct operation, with every occurrence as a repetition:
 *  - GEMM: one sample per (precision, shape) of the GEMM ops with recorded shapes; the time of
 *    an occurrence is the summed duration of every kernel that op launched; size = FLOPs;
 *  - copy: one per (route, bytes) of the memcpy activity; time = its GPU duration;
 *  - collective: one per (collective, GPUs, bytes) of the NCCL kernels whose size the trace
 *    records; time = the kernel's duration.
 * trace_fit_derive then fits each group on its own with derive.c's fits, so that a group a
 * real trace cannot fit (a single size, no platform peak for its GEMMs) is left out with a note
 * instead of failing the rest. The summary measures what the calibration JSON has no field for
 * (docs/CALIBRATION.md lists them): GPU time by kernel class, the host's kernel-launch cost
 * (the runtime call's duration), the launch latency (launch call start to kernel start, for
 * kernels launched onto an idle GPU), and each ProfilerStep's GPU busy and idle time, the
 * idle part being the step's fixed work not hidden behind the GPU.
 */
#ifndef ZEROSIM_CALIBRATE_TRACE_FIT_H
#define ZEROSIM_CALIBRATE_TRACE_FIT_H

#include "common/err.h"
#include "common/strlist.h"
#include "inputs/calibration.h"
#include "kineto.h"
#include "samples.h"

#include <stdio.h>

#define TRACE_FIT_MAX_STEPS 64 /* steps reported one by one; the rest only in the medians */

typedef struct TraceStepStats {
    char name[32];
    double dur_s;  /* ProfilerStep span */
    double busy_s; /* union of GPU activity inside it */
    double idle_s; /* dur - busy */
    uint64_t n_kernels;
} TraceStepStats;

typedef struct TraceSummary {
    uint64_t n_by_class[KINETO_N_CLASSES];
    double s_by_class[KINETO_N_CLASSES];
    uint64_t n_gemm_shaped;  /* GEMM kernels tied to an op with shapes and a known precision */
    uint64_t n_nccl_sized;   /* NCCL kernels with collective, size and group in the trace */
    uint64_t n_nccl_too_big; /* of those, over more GPUs than a calibration holds (16) */
    /* Host side of kernel launches (cudaLaunchKernel and kin): */
    uint64_t n_launches;
    double launch_median_s, launch_p10_s, launch_p90_s;
    /* Launch call start -> kernel start, for kernels launched onto an idle GPU: */
    uint64_t n_idle_launches;
    double latency_median_s, latency_p10_s, latency_p90_s;
    /* ProfilerStep spans: */
    size_t n_steps;
    TraceStepStats steps[TRACE_FIT_MAX_STEPS];
    double step_median_s, step_busy_median_s, step_idle_median_s;
} TraceSummary;

/* Fills s (initialised here; samples_fini it even on failure) and sum from t. s->meta's
 * header, system and GEMM peaks are the caller's; its mode becomes "trace" and its first GPU
 * the trace's device. Fails when the trace has nothing to sample (no shaped GEMM, sized copy
 * or sized collective) - the summary is still filled then. */
int trace_fit_samples(const KinetoTrace *t, SampleSet *s, TraceSummary *sum, Err *err);

/* Fits every (kind, name) group of s alone with derive_calibration; a group that cannot be
 * fitted is noted in notes ("gemm fp32: not fitted: ...") and left out. Fails only when no
 * group could be fitted. */
int trace_fit_derive(const SampleSet *s, Calibration *out, StrList *notes, Err *err);

/* Prints the summary: GPU time by class, launch cost and latency, steps. */
void trace_fit_print(const TraceSummary *sum, FILE *out);

/* The q-quantile (0..1, linear interpolation) of x[0..n); sorts x. 0 for n = 0. */
double trace_fit_quantile(double *x, size_t n, double q);

#endif
