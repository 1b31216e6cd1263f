/*
 * gpu_launch.cu - the kernel launch floor: the host time to issue one kernel (see gpu.h).
 *
 * An empty kernel is launched n times back to back on one stream and the host clock is read
 * around the loop and the final synchronisation: once the queue is full, each launch costs
 * the host's issue time (or the GPU's, whichever is longer), which is the floor the kernel
 * model puts under a pass of short kernels (model/kernels.c, kernels_pass_s). The time is
 * per kernel; counts of 1000 and 10000 show whether the queue was full.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <time.h>

extern "C" {
#include "gpu.h"
}

__global__ static void empty_kernel(void) {}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Per-kernel seconds of n launches, or -1 with err set. */
static double time_launches(uint64_t n, cudaStream_t stream, Err *err)
{
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++)
        empty_kernel<<<1, 1, 0, stream>>>();
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return err_set(err, "launch: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
    return (now_s() - t0) / (double)n;
}

int gpu_launch_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    static const uint64_t counts[] = {1000, 10000};
    cudaSetDevice(0);
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    double times[SAMPLE_MAX_REPS];
    int rc = 0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0] && rc == 0; c++) {
        if (time_launches(counts[c], stream, err) < 0) { /* warm-up */
            rc = -1;
            break;
        }
        for (uint32_t k = 0; k < plan->reps && rc == 0; k++)
            if ((times[k] = time_launches(counts[c], stream, err)) < 0)
                rc = -1;
        if (rc == 0) {
            Sample *x = samples_add(out, SAMPLE_LAUNCH, 0, "", counts[c], (double)counts[c], 1,
                                    times, plan->reps);
            fprintf(stderr, "  launch %6llu empty kernels %8.2f us each\n",
                    (unsigned long long)counts[c], 1e6 * x->median_s);
        }
    }
    cudaStreamDestroy(stream);
    return rc;
}
