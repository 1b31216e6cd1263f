/*
 * cpu_adam.c - fused AdamW over fp32 arrays with OpenMP, and its benchmark (see cpu_adam.h).
 *
 * The arrays are first touched by the same static schedule that later updates them, so on a
 * multi-socket host each thread's pages sit on its own NUMA node, as DeepSpeed's are after
 * the first step.
 */
#define _POSIX_C_SOURCE 200809L
#include "cpu_adam.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int cpu_adam_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void cpu_adam_step(float *restrict params, const float *restrict grads, float *restrict exp_avg,
                   float *restrict exp_avg_sq, size_t n, const AdamHyper *h, uint64_t step,
                   int threads)
{
    const float b1 = h->beta1, b2 = h->beta2, eps = h->eps;
    /* Kingma & Ba, Algorithm 1 with the bias corrections folded into the step size, as
     * DeepSpeed's Step_1 does: p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps). */
    const float bc1 = 1.0f - powf(b1, (float)step);
    const float bc2_sqrt = sqrtf(1.0f - powf(b2, (float)step));
    const float step_size = h->lr / bc1;
    const float decay = 1.0f - h->lr * h->weight_decay; /* AdamW: p *= 1 - lr wd */
    const ptrdiff_t count = (ptrdiff_t)n;
    (void)threads;
#pragma omp parallel for simd schedule(static) num_threads(threads)
    for (ptrdiff_t i = 0; i < count; i++) {
        float g = grads[i];
        float m = b1 * exp_avg[i] + (1.0f - b1) * g;
        float v = b2 * exp_avg_sq[i] + (1.0f - b2) * g * g;
        exp_avg[i] = m;
        exp_avg_sq[i] = v;
        params[i] = params[i] * decay - step_size * m / (sqrtf(v) / bc2_sqrt + eps);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 64-byte aligned, a multiple of 64 bytes (aligned_alloc's rule). */
static float *alloc_floats(size_t n)
{
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    return aligned_alloc(64, bytes ? bytes : 64);
}

int cpu_adam_bench(uint64_t n_params, const uint32_t *threads, size_t n_threads, uint32_t warmup,
                   uint32_t reps, SampleSet *out, Err *err)
{
    if (n_params == 0 || reps == 0 || reps > SAMPLE_MAX_REPS)
        return err_set(err,
                       "cpu_adam: expected params >= 1 and reps in [1, %d], got %llu "
                       "and %u",
                       SAMPLE_MAX_REPS, (unsigned long long)n_params, reps);
    size_t n = (size_t)n_params;
    float *p = alloc_floats(n), *g = alloc_floats(n), *m = alloc_floats(n), *v = alloc_floats(n);
    if (p == NULL || g == NULL || m == NULL || v == NULL) {
        free(p), free(g), free(m), free(v);
        return err_set(err,
                       "cpu_adam: cannot allocate 4 x %llu fp32 arrays (%.1f GiB); "
                       "expected fewer --adam-params",
                       (unsigned long long)n_params,
                       16.0 * (double)n_params / (1024.0 * 1024.0 * 1024.0));
    }
    const ptrdiff_t count = (ptrdiff_t)n;
    int max_threads = cpu_adam_max_threads();
    (void)max_threads;
#pragma omp parallel for schedule(static) num_threads(max_threads)
    for (ptrdiff_t i = 0; i < count; i++) {
        /* Gradients of both signs and several magnitudes; moments start at zero. */
        p[i] = 0.01f * (float)((i * 7919) % 2001 - 1000) / 1000.0f;
        g[i] = 1e-3f * (float)((i * 104729) % 2001 - 1000) / 1000.0f;
        m[i] = 0.0f;
        v[i] = 0.0f;
    }
    const AdamHyper hyper = {1e-4f, 0.9f, 0.999f, 1e-8f, 0.01f};
    double times[SAMPLE_MAX_REPS];
    uint64_t step = 1;
    for (size_t t = 0; t < n_threads; t++) {
        int nt = (int)threads[t];
        for (uint32_t w = 0; w < warmup; w++)
            cpu_adam_step(p, g, m, v, n, &hyper, step++, nt);
        for (uint32_t r = 0; r < reps; r++) {
            double t0 = now_s();
            cpu_adam_step(p, g, m, v, n, &hyper, step++, nt);
            times[r] = now_s() - t0;
            if (times[r] <= 0)
                times[r] = 1e-9; /* below the clock's resolution */
        }
        char label[32];
        snprintf(label, sizeof label, "threads=%u", threads[t]);
        samples_add(out, SAMPLE_CPU_ADAM, 0, label, threads[t], (double)n_params, 1, times, reps);
    }
    free(p), free(g), free(m), free(v);
    return 0;
}
