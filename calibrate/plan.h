/*
 * plan.h - what zerosim-calibrate measures: sizes, shapes, repetitions, quick or full.
 *
 * One record holds every benchmark's settings so that the command line, the CPU benchmarks
 * and the CUDA ones agree on them, and so that the quick run (under two minutes on one GPU)
 * and the full one (under ten) differ in one place. The GEMM shapes are a transformer layer's
 * (Megatron-LM's layout: QKV, attention output projection, MLP up and down), each forward and
 * both backward GEMMs, plus square sizes. The GPU peak estimate for devices without a platform
 * file is here too, as plain arithmetic that needs no GPU.
 */
#ifndef ZEROSIM_CALIBRATE_PLAN_H
#define ZEROSIM_CALIBRATE_PLAN_H

#include "inputs/calibration.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct BenchPlan {
    bool is_quick;
    uint32_t warmup;     /* untimed calls before each point */
    uint32_t reps;       /* timed repetitions per point */
    double target_rep_s; /* a repetition repeats the call until it lasts about this long */

    /* GEMMs: the layer of a model with this hidden size and FFN size, at micro_batch x seq
     * tokens, and square GEMMs of sweep_min..sweep_max (doubling). */
    bool has_precision[CALIB_N_PRECISIONS];
    uint64_t hidden, ffn, micro_batch, seq;
    uint64_t sweep_min, sweep_max;

    /* Copies and collectives: sizes from min to max, multiplying by factor. */
    uint64_t copy_min_bytes, copy_max_bytes;
    uint32_t copy_factor;
    uint64_t coll_min_bytes, coll_max_bytes;
    uint32_t coll_factor;

    /* CPU Adam over adam_params fp32 parameters, threads 1, 2, 4, ... up to adam_max_threads
     * (and adam_max_threads itself). */
    uint64_t adam_params;
    uint32_t adam_max_threads;

    /* Disk: a file of disk_file_bytes in disk_dir, written and read in disk_block_bytes. */
    const char *disk_dir;
    uint64_t disk_file_bytes, disk_block_bytes;
} BenchPlan;

/* The defaults of a quick or full run; adam_max_threads is the caller's (0 here). */
void plan_init(BenchPlan *plan, bool is_quick);

/* Writes min, min*factor, ... up to max (and max itself when the steps miss it) into out
 * (at most max_out); returns the count. factor >= 2. */
size_t plan_sizes(uint64_t min, uint64_t max, uint32_t factor, uint64_t *out, size_t max_out);

/* Thread counts 1, 2, 4, ... below max_threads, then max_threads; returns the count. */
size_t plan_threads(uint32_t max_threads, uint32_t *out, size_t max_out);

/* One GEMM: C (m x n) = op(A) (m x k) op(B) (k x n), column-major as cuBLAS takes it. */
typedef struct GemmShape {
    char label[48];
    uint64_t m, n, k;
    bool is_a_transposed, is_b_transposed;
} GemmShape;

#define PLAN_MAX_GEMMS 64

/* The transformer layer's 12 GEMMs and the square sweep; returns the count. */
size_t plan_gemm_shapes(const BenchPlan *plan, GemmShape *out, size_t max_out);

static inline double plan_gemm_flops(const GemmShape *g)
{
    return 2.0 * (double)g->m * (double)g->n * (double)g->k;
}

/* Dense peak FLOP/s of a GPU from its compute capability, SM count and boost clock, for
 * `precision` (tensor cores with fp32 accumulation for bf16/fp16, CUDA cores for fp32), or 0
 * when unknown or unsupported (bf16 before compute capability 8.0). An estimate: datasheet
 * figures assume a clock that power limits may not sustain; a platform file's peak is
 * preferred when given. */
double plan_peak_estimate(int cc_major, int cc_minor, int sm_count, double clock_hz,
                          CalibPrecision precision);

#endif
