/*
 * derive.h - from measured samples to a Calibration: one fit per GEMM precision, copy route
 * and collective, the best CPU Adam rate, and the disk medians.
 *
 * Groups the samples by kind and name, runs the fits of fit.h on their medians, and fills the
 * fitted sections of a Calibration whose header and system come from the sample set. What the
 * fits could not do cleanly (a negative latency clamped to 0, a one-GPU collective) is said
 * in the section's note and in `notes` for the console.
 */
#ifndef ZEROSIM_CALIBRATE_DERIVE_H
#define ZEROSIM_CALIBRATE_DERIVE_H

#include "common/err.h"
#include "common/strlist.h"
#include "inputs/calibration.h"
#include "samples.h"

/* Fills out (header and system from s->meta). A group with too few points or a failed fit is
 * an error naming it. GEMM samples need s->meta.gemm[precision].peak_flops_per_s > 0. */
int derive_calibration(const SampleSet *s, Calibration *out, StrList *notes, Err *err);

/* nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): all-reduce 2(n-1)/n, all-gather and
 * reduce-scatter (n-1)/n, broadcast 1. */
double derive_busbw_factor(CalibCollective op, uint64_t n_gpus);

/* Ring steps of a collective over n GPUs: 2(n-1) for all-reduce, n-1 otherwise. */
uint64_t derive_ring_steps(CalibCollective op, uint64_t n_gpus);

#endif
