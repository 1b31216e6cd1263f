/*
 * gpu_gemm.cu - cuBLAS GEMM throughput at transformer shapes (see gpu.h).
 *
 * One set of A, B, C buffers sized for the largest shape serves every shape and precision.
 * Inputs are uniform in [-1, 1] from a counter hash: tensor cores draw less power (and boost
 * higher) on zeros, which would flatter the result. bf16 and fp16 run with fp32 accumulation
 * (CUBLAS_COMPUTE_32F), as PyTorch's mixed precision does; fp32 without TF32, as PyTorch's
 * default (torch.backends.cuda.matmul.allow_tf32 = False).
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>

extern "C" {
#include "gpu.h"
}

/* A counter-based hash (splitmix64's finaliser) mapped to [-1, 1). */
__device__ static float uniform(uint64_t i, uint64_t seed)
{
    uint64_t z = i + seed * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) / (float)(1ull << 23) - 1.0f;
}

__global__ static void fill_f32(float *x, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = uniform(i, seed);
}

__global__ static void fill_f16(__half *x, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = __float2half(uniform(i, seed));
}

__global__ static void fill_bf16(__nv_bfloat16 *x, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = __float2bfloat16(uniform(i, seed));
}

static void fill(void *x, size_t n, CalibPrecision p, uint64_t seed)
{
    if (p == CALIB_FP32)
        fill_f32<<<1024, 256>>>((float *)x, n, seed);
    else if (p == CALIB_FP16)
        fill_f16<<<1024, 256>>>((__half *)x, n, seed);
    else
        fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)x, n, seed);
}

static int cuda_fail(cudaError_t e, const char *what, Err *err)
{
    return err_set(err, "gemm: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

static int cublas_fail(cublasStatus_t s, const char *what, Err *err)
{
    return err_set(err, "gemm: %s: %s", what, cublasGetStatusString(s));
}

typedef struct GemmRun {
    cublasHandle_t handle;
    void *a, *b, *c;
    cudaDataType_t type;
} GemmRun;

static cublasStatus_t run_gemm(const GemmRun *r, const GemmShape *g)
{
    const float alpha = 1.0f, beta = 0.0f;
    int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    int lda = g->is_a_transposed ? k : m, ldb = g->is_b_transposed ? n : k;
    return cublasGemmEx(r->handle, g->is_a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                        g->is_b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, r->a,
                        r->type, lda, r->b, r->type, ldb, &beta, r->c, r->type, m,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

/* Times `iters` back-to-back GEMMs between two events; seconds per GEMM or < 0 on error. */
static double time_gemms(const GemmRun *r, const GemmShape *g, uint64_t iters, cudaEvent_t t0,
                         cudaEvent_t t1, Err *err)
{
    cudaEventRecord(t0, 0);
    for (uint64_t i = 0; i < iters; i++) {
        cublasStatus_t s = run_gemm(r, g);
        if (s != CUBLAS_STATUS_SUCCESS)
            return cublas_fail(s, g->label, err);
    }
    cudaEventRecord(t1, 0);
    cudaError_t e = cudaEventSynchronize(t1);
    if (e != cudaSuccess)
        return cuda_fail(e, g->label, err);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    return ms > 0 ? 1e-3 * ms / (double)iters : 1e-9;
}

static int bench_precision(const BenchPlan *plan, GemmRun *r, CalibPrecision p,
                           const GemmShape *shapes, size_t n_shapes, cudaEvent_t t0, cudaEvent_t t1,
                           SampleSet *out, Err *err)
{
    static const cudaDataType_t types[CALIB_N_PRECISIONS] = {CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F};
    r->type = types[p];
    double times[SAMPLE_MAX_REPS];
    for (size_t i = 0; i < n_shapes; i++) {
        const GemmShape *g = &shapes[i];
        fill(r->a, g->m * g->k, p, 1 + i);
        fill(r->b, g->k * g->n, p, 1001 + i);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            return cuda_fail(e, "filling inputs", err);
        for (uint32_t w = 0; w < plan->warmup; w++) {
            cublasStatus_t s = run_gemm(r, g);
            if (s != CUBLAS_STATUS_SUCCESS)
                return cublas_fail(s, g->label, err);
        }
        double once = time_gemms(r, g, 1, t0, t1, err);
        if (once < 0)
            return -1;
        double want = ceil(plan->target_rep_s / once);
        uint64_t iters = want < 1 ? 1 : want > 10000 ? 10000 : (uint64_t)want;
        for (uint32_t k = 0; k < plan->reps; k++)
            if ((times[k] = time_gemms(r, g, iters, t0, t1, err)) < 0)
                return -1;
        Sample *x = samples_add(out, SAMPLE_GEMM, p, g->label, 0, plan_gemm_flops(g), iters, times,
                                plan->reps);
        fprintf(stderr, "  gemm %s %-28s %8.1f TFLOP/s\n", calibration_precision_names[p], g->label,
                x->size / x->median_s / 1e12);
    }
    return 0;
}

int gpu_gemm_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    GemmShape shapes[PLAN_MAX_GEMMS];
    size_t n_shapes = plan_gemm_shapes(plan, shapes, PLAN_MAX_GEMMS);
    size_t max_a = 0, max_b = 0, max_c = 0;
    for (size_t i = 0; i < n_shapes; i++) {
        max_a = shapes[i].m * shapes[i].k > max_a ? shapes[i].m * shapes[i].k : max_a;
        max_b = shapes[i].k * shapes[i].n > max_b ? shapes[i].k * shapes[i].n : max_b;
        max_c = shapes[i].m * shapes[i].n > max_c ? shapes[i].m * shapes[i].n : max_c;
    }
    int cc_major = 0;
    cudaSetDevice(0);
    cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, 0);
    GemmRun r = {NULL, NULL, NULL, NULL, CUDA_R_32F};
    cudaEvent_t t0 = NULL, t1 = NULL;
    int rc = 0;
    cudaError_t e;
    cublasStatus_t s;
    if ((e = cudaMalloc(&r.a, 4 * max_a)) != cudaSuccess ||
        (e = cudaMalloc(&r.b, 4 * max_b)) != cudaSuccess ||
        (e = cudaMalloc(&r.c, 4 * max_c)) != cudaSuccess) {
        rc = cuda_fail(e, "allocating A, B and C", err);
        goto done;
    }
    if ((s = cublasCreate(&r.handle)) != CUBLAS_STATUS_SUCCESS) {
        rc = cublas_fail(s, "cublasCreate", err);
        goto done;
    }
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    for (int p = 0; p < CALIB_N_PRECISIONS && rc == 0; p++) {
        if (!plan->has_precision[p])
            continue;
        if (p == CALIB_BF16 && cc_major < 8) {
            fprintf(stderr,
                    "  gemm bf16: skipped (compute capability %d.x has no bf16 "
                    "tensor cores)\n",
                    cc_major);
            continue;
        }
        rc = bench_precision(plan, &r, (CalibPrecision)p, shapes, n_shapes, t0, t1, out, err);
    }
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
