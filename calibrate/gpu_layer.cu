/*
 * gpu_layer.cu - one transformer layer's forward and backward at a model's shapes, timed on
 * GPU 0 (zerosim-calibrate --layer; the plan is layer.h's).
 *
 * The linears are cuBLAS bf16 GEMMs with fp32 accumulation, called as PyTorch calls them on
 * row-major tensors (aten/src/ATen/native/cuda/Blas.cpp: the column-major product computes
 * C^T): forward Y = X W^T is gemm(T, N, out, T, in), the input gradient dX = dY W is
 * gemm(N, N, in, T, out), the weight gradient dW = dY^T X is gemm(N, T, in, out, T). The
 * attention core is cublasGemmStridedBatchedEx over batch x heads. The memory-bound kernels
 * are one streaming kernel that reads and writes the plan's bytes in 16-byte vectors, every
 * byte read feeding a byte written, so nothing is optimised away. Inputs are random in
 * [-1, 1). Each kernel is timed alone (CUDA events around enough back-to-back calls to last
 * ~1 ms, median of the repetitions); then the forward kernels, and the backward ones, are
 * timed back to back as a whole, which is what zerosim's layer_fwd and layer_bwd predict.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "gpu_layer.h"
}

__global__ static void layer_fill(__nv_bfloat16 *x, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = i + seed * 0x9E3779B97F4A7C15ull; /* splitmix64's finaliser */
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        x[i] = __float2bfloat16((float)(z >> 40) / (float)(1ull << 23) - 1.0f);
    }
}

/* Reads n_read and writes n_write 16-byte vectors: out[i] = XOR of in[i], in[i + n_write],
 * ... (reads beyond the writes fold in), or a copy of in[i % n_read] when writes exceed
 * reads. */
__global__ static void layer_stream(const uint4 *in, size_t n_read, uint4 *out, size_t n_write)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n_write;
         i += (size_t)gridDim.x * blockDim.x) {
        uint4 acc = in[i % n_read];
        for (size_t j = i + n_write; j < n_read; j += n_write) {
            uint4 v = in[j];
            acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
        }
        out[i] = acc;
    }
}

typedef struct LayerRun {
    cublasHandle_t handle;
    __nv_bfloat16 *a, *b, *c;
    size_t buf_elems;
    int n_sms;
} LayerRun;

static int cuda_fail(cudaError_t e, const char *what, Err *err)
{
    return err_set(err, "layer: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

static int cublas_fail(cublasStatus_t s, const char *what, Err *err)
{
    return err_set(err, "layer: %s: %s", what, cublasGetStatusString(s));
}

/* Launches one kernel of the plan; returns a cuBLAS status (launch errors show at sync). */
static cublasStatus_t run_kernel(const LayerRun *r, const LayerKernel *k)
{
    const float alpha = 1.0f, beta = 0.0f;
    int m = (int)k->m, n = (int)k->n, kk = (int)k->k;
    switch (k->gemm_op) {
    case 'f': /* Y (T x out) = X (T x in) W^T: m = T, n = out, k = in */
        return cublasGemmEx(r->handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, kk, &alpha, r->a,
                            CUDA_R_16BF, kk, r->b, CUDA_R_16BF, kk, &beta, r->c, CUDA_R_16BF, n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    case 'd': /* dX (T x in) = dY (T x out) W (out x in): m = T, n = in, k = out */
        return cublasGemmEx(r->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &alpha, r->a,
                            CUDA_R_16BF, n, r->b, CUDA_R_16BF, kk, &beta, r->c, CUDA_R_16BF, n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    case 'w': /* dW (out x in) = dY^T (out x T) X (T x in): m = out, n = in, k = T */
        return cublasGemmEx(r->handle, CUBLAS_OP_N, CUBLAS_OP_T, n, m, kk, &alpha, r->a,
                            CUDA_R_16BF, n, r->b, CUDA_R_16BF, m, &beta, r->c, CUDA_R_16BF, n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    case 'b': /* per head: C (m x n) = A (m x k) B (k x n), row-major, as C^T = B^T A^T */
        return cublasGemmStridedBatchedEx(
            r->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &alpha, r->b, CUDA_R_16BF, n,
            (long long)kk * n, r->a, CUDA_R_16BF, kk, (long long)m * kk, &beta, r->c, CUDA_R_16BF,
            n, (long long)m * n, (int)k->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    default: {
        size_t n_read = (size_t)(k->read_bytes / 16), n_write = (size_t)(k->write_bytes / 16);
        if (n_read == 0)
            n_read = 1;
        layer_stream<<<4 * r->n_sms, 512>>>((const uint4 *)r->a, n_read, (uint4 *)r->c, n_write);
        return CUBLAS_STATUS_SUCCESS;
    }
    }
}

/* Seconds per pass of kernels [first, last) of `pass` (all when only < 0), timed over iters
 * back-to-back passes; < 0 on error. */
static double time_pass(const LayerRun *r, const LayerPlan *plan, int only, int pass,
                        uint64_t iters, cudaEvent_t t0, cudaEvent_t t1, Err *err)
{
    cudaEventRecord(t0, 0);
    for (uint64_t it = 0; it < iters; it++)
        for (size_t i = 0; i < plan->n_kernels; i++) {
            const LayerKernel *k = &plan->kernels[i];
            if (only >= 0 ? (int)i != only : (int)k->is_backward != pass)
                continue;
            cublasStatus_t s = run_kernel(r, k);
            if (s != CUBLAS_STATUS_SUCCESS)
                return cublas_fail(s, k->name, err);
        }
    cudaEventRecord(t1, 0);
    cudaError_t e = cudaEventSynchronize(t1);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return cuda_fail(e, only >= 0 ? plan->kernels[only].name : "layer pass", err);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    return ms > 0 ? 1e-3 * ms / (double)iters : 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over reps of the time of kernel `only` (or a whole pass); < 0 on error. */
static double median_time(const LayerRun *r, const LayerPlan *plan, int only, int pass,
                          uint32_t reps, cudaEvent_t t0, cudaEvent_t t1, Err *err)
{
    double times[64];
    if (reps > 64)
        reps = 64;
    for (int w = 0; w < 2; w++) /* warm-up: cuBLAS heuristics, clocks */
        if (time_pass(r, plan, only, pass, 1, t0, t1, err) < 0)
            return -1;
    double once = time_pass(r, plan, only, pass, 1, t0, t1, err);
    if (once < 0)
        return -1;
    double want = ceil(1e-3 / once);
    uint64_t iters = want < 1 ? 1 : want > 1000 ? 1000 : (uint64_t)want;
    for (uint32_t i = 0; i < reps; i++)
        if ((times[i] = time_pass(r, plan, only, pass, iters, t0, t1, err)) < 0)
            return -1;
    qsort(times, reps, sizeof *times, cmp_double);
    return reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
}

int gpu_layer_run(const LayerPlan *plan, uint32_t reps, double *kernel_s, double *fwd_s,
                  double *bwd_s, Err *err)
{
    LayerRun r;
    memset(&r, 0, sizeof r);
    cudaEvent_t t0 = NULL, t1 = NULL;
    int rc = 0;
    cudaError_t e;
    cublasStatus_t s;
    /* Backward memory-bound kernels move twice a forward one's elements. */
    r.buf_elems = 2 * (size_t)plan->max_elems + 8;
    cudaSetDevice(0);
    cudaDeviceGetAttribute(&r.n_sms, cudaDevAttrMultiProcessorCount, 0);
    if ((e = cudaMalloc(&r.a, 2 * r.buf_elems)) != cudaSuccess ||
        (e = cudaMalloc(&r.b, 2 * r.buf_elems)) != cudaSuccess ||
        (e = cudaMalloc(&r.c, 2 * r.buf_elems)) != cudaSuccess) {
        rc = cuda_fail(e, "allocating three buffers of the largest operand", err);
        goto done;
    }
    layer_fill<<<1024, 256>>>(r.a, r.buf_elems, 1);
    layer_fill<<<1024, 256>>>(r.b, r.buf_elems, 2);
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
        rc = cuda_fail(e, "filling inputs", err);
        goto done;
    }
    if ((s = cublasCreate(&r.handle)) != CUBLAS_STATUS_SUCCESS) {
        rc = cublas_fail(s, "cublasCreate", err);
        goto done;
    }
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    for (size_t i = 0; i < plan->n_kernels && rc == 0; i++) {
        kernel_s[i] = median_time(&r, plan, (int)i, 0, reps, t0, t1, err);
        if (kernel_s[i] < 0)
            rc = -1;
        else
            fprintf(stderr, "  layer %-22s %10.1f us\n", plan->kernels[i].name, 1e6 * kernel_s[i]);
    }
    if (rc == 0 && ((*fwd_s = median_time(&r, plan, -1, 0, reps, t0, t1, err)) < 0 ||
                    (*bwd_s = median_time(&r, plan, -1, 1, reps, t0, t1, err)) < 0))
        rc = -1;
done:
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    if (r.handle)
        cublasDestroy(r.handle);
    cudaFree(r.a);
    cudaFree(r.b);
    cudaFree(r.c);
    return rc;
}
