/*
 * cpu_adam.h - the fused CPU Adam update of ZeRO-Offload, and its rate by thread count.
 *
 * ZeRO-Offload (Ren et al., USENIX ATC 2021, sec. 5.1) keeps fp32 parameters, gradients and
 * Adam moments in host memory and updates them with a SIMD, multi-threaded fused loop
 * (DeepSpeed csrc/adam/cpu_adam.cpp). This is the same loop in portable C: one pass per
 * parameter reading p, g, m, v and writing p, m, v (28 bytes), vectorised by the compiler
 * (`omp simd`) and split over OpenMP threads. Its rate (parameters per second) is what the
 * engine charges for the optimizer step on the CPU (platform cpu.adam_params_per_s_per_core).
 */
#ifndef ZEROSIM_CALIBRATE_CPU_ADAM_H
#define ZEROSIM_CALIBRATE_CPU_ADAM_H

#include "common/err.h"
#include "samples.h"

#include <stddef.h>
#include <stdint.h>

typedef struct AdamHyper {
    float lr, beta1, beta2, eps, weight_decay; /* AdamW: decoupled weight decay */
} AdamHyper;

/* One AdamW step (Loshchilov & Hutter 2019, Algorithm 2; bias correction as in Kingma & Ba
 * 2015, Algorithm 1) over n parameters with `threads` OpenMP threads; step counts from 1. */
void cpu_adam_step(float *params, const float *grads, float *exp_avg, float *exp_avg_sq, size_t n,
                   const AdamHyper *h, uint64_t step, int threads);

/* Times cpu_adam_step over n_params parameters at each of n_threads thread counts (warm-up
 * steps untimed, then reps timed steps), adding one SAMPLE_CPU_ADAM sample per count. Fails
 * when the arrays cannot be allocated. */
int cpu_adam_bench(uint64_t n_params, const uint32_t *threads, size_t n_threads, uint32_t warmup,
                   uint32_t reps, SampleSet *out, Err *err);

/* Threads OpenMP would use by default (1 without OpenMP). */
int cpu_adam_max_threads(void);

#endif
