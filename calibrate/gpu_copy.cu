/*
 * gpu_copy.cu - cudaMemcpyAsync bandwidth and latency per route (see gpu.h).
 *
 * Host buffers: pinned (cudaHostAlloc, what DeepSpeed's offload uses) and pageable (malloc,
 * touched first so page faults are not timed; the driver stages through its own pinned
 * buffer). Times are GPU-side, between events on the copy's stream. When the largest size
 * cannot be allocated, the sweep stops at the largest that can, with a line on stderr.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "gpu.h"
}

static int cuda_fail(cudaError_t e, const char *what, Err *err)
{
    return err_set(err, "copy: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

typedef struct CopyBuffers {
    void *dev_a, *dev_b, *pinned, *pageable;
    size_t bytes;
} CopyBuffers;

static void free_buffers(CopyBuffers *b)
{
    cudaFree(b->dev_a);
    cudaFree(b->dev_b);
    if (b->pinned)
        cudaFreeHost(b->pinned);
    free(b->pageable);
    memset(b, 0, sizeof *b);
}

/* All four buffers of `bytes`, halving while they do not fit (down to 64 MiB). */
static int alloc_buffers(CopyBuffers *b, size_t bytes, Err *err)
{
    const size_t floor_bytes = (size_t)64 << 20;
    memset(b, 0, sizeof *b);
    for (;;) {
        if (cudaMalloc(&b->dev_a, bytes) == cudaSuccess &&
            cudaMalloc(&b->dev_b, bytes) == cudaSuccess &&
            cudaHostAlloc(&b->pinned, bytes, cudaHostAllocDefault) == cudaSuccess &&
            (b->pageable = malloc(bytes)) != NULL) {
            b->bytes = bytes;
            memset(b->pageable, 1, bytes);
            memset(b->pinned, 1, bytes);
            cudaMemset(b->dev_a, 1, bytes);
            return 0;
        }
        cudaGetLastError(); /* clear the failed allocation's error */
        free_buffers(b);
        if (bytes <= floor_bytes)
            return err_set(err,
                           "copy: cannot allocate device, pinned and pageable buffers "
                           "of %zu bytes",
                           bytes);
        bytes /= 2;
    }
}

static double time_copies(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                          uint64_t iters, cudaStream_t stream, cudaEvent_t t0, cudaEvent_t t1,
                          Err *err)
{
    cudaEventRecord(t0, stream);
    for (uint64_t i = 0; i < iters; i++) {
        cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, stream);
        if (e != cudaSuccess)
            return cuda_fail(e, "cudaMemcpyAsync", err);
    }
    cudaEventRecord(t1, stream);
    cudaError_t e = cudaEventSynchronize(t1);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaEventSynchronize", err);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    return ms > 0 ? 1e-3 * ms / (double)iters : 1e-9;
}

int gpu_copy_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    uint64_t sizes[64];
    size_t n_sizes =
        plan_sizes(plan->copy_min_bytes, plan->copy_max_bytes, plan->copy_factor, sizes, 64);
    if (n_sizes == 0)
        return err_set(err, "copy: expected sizes from --copy-min to --copy-max, got none");
    cudaSetDevice(0);
    CopyBuffers b;
    if (alloc_buffers(&b, (size_t)sizes[n_sizes - 1], err))
        return -1;
    if (b.bytes < sizes[n_sizes - 1])
        fprintf(stderr, "  copies: largest size reduced to %zu bytes (allocation failed)\n",
                b.bytes);
    cudaStream_t stream;
    cudaEvent_t t0, t1;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    double times[SAMPLE_MAX_REPS];
    int rc = 0;
    for (int route = 0; route < CALIB_N_COPY_ROUTES && rc == 0; route++) {
        void *dst, *src;
        cudaMemcpyKind kind;
        switch (route) {
        case CALIB_H2D_PINNED: dst = b.dev_a, src = b.pinned, kind = cudaMemcpyHostToDevice; break;
        case CALIB_D2H_PINNED: dst = b.pinned, src = b.dev_a, kind = cudaMemcpyDeviceToHost; break;
        case CALIB_H2D_PAGEABLE:
            dst = b.dev_a, src = b.pageable, kind = cudaMemcpyHostToDevice;
            break;
        case CALIB_D2H_PAGEABLE:
            dst = b.pageable, src = b.dev_a, kind = cudaMemcpyDeviceToHost;
            break;
        default: dst = b.dev_b, src = b.dev_a, kind = cudaMemcpyDeviceToDevice; break;
        }
        for (size_t i = 0; i < n_sizes && rc == 0; i++) {
            size_t bytes = (size_t)sizes[i];
            if (bytes > b.bytes)
                break;
            for (uint32_t w = 0; w < plan->warmup; w++)
                cudaMemcpyAsync(dst, src, bytes, kind, stream);
            double once = time_copies(dst, src, bytes, kind, 1, stream, t0, t1, err);
            if (once < 0) {
                rc = -1;
                break;
            }
            double want = ceil(plan->target_rep_s / once);
            uint64_t iters = want < 1 ? 1 : want > 10000 ? 10000 : (uint64_t)want;
            for (uint32_t k = 0; k < plan->reps && rc == 0; k++)
                if ((times[k] = time_copies(dst, src, bytes, kind, iters, stream, t0, t1, err)) < 0)
                    rc = -1;
            if (rc == 0) {
                Sample *x = samples_add(out, SAMPLE_COPY, route, "", 0, (double)bytes, iters, times,
                                        plan->reps);
                if (i + 1 == n_sizes || sizes[i + 1] > b.bytes)
                    fprintf(stderr, "  copy %-12s %12zu B %8.2f GB/s\n",
                            calibration_copy_names[route], bytes, x->size / x->median_s / 1e9);
            }
        }
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaStreamDestroy(stream);
    free_buffers(&b);
    return rc;
}
