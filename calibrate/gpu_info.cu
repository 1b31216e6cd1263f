/*
 * gpu_info.cu - which GPUs, drivers and libraries a calibration ran on (see gpu.h).
 *
 * The NVIDIA driver version is read from /proc/driver/nvidia/version (no NVML needed); CUDA,
 * cuBLAS and NCCL report their own. The GEMM peak estimate for GPU 0 uses its compute
 * capability, SM count and boost clock (plan_peak_estimate).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdio.h>
#include <string.h>

extern "C" {
#include "gpu.h"
}

/* "550.54.15" from a line like "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15
 * Tue Mar 5 ..." (open kernel modules word it differently; the first dotted number wins). */
static void driver_version(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f == NULL)
        return;
    char line[512];
    if (fgets(line, sizeof line, f) != NULL) {
        for (char *p = line; *p; p++) {
            if (p[0] >= '0' && p[0] <= '9' && (p == line || p[-1] == ' ')) {
                size_t n = strspn(p, "0123456789.");
                if (n > 2 && memchr(p, '.', n) != NULL) {
                    snprintf(out, size, "%.*s", (int)n, p);
                    break;
                }
            }
        }
    }
    fclose(f);
}

int gpu_info_probe(SampleSet *s, Err *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return err_set(err, "no usable CUDA GPU: cudaGetDeviceCount: %s (%s)", cudaGetErrorName(e),
                       cudaGetErrorString(e));
    if (n <= 0)
        return err_set(err, "no usable CUDA GPU: cudaGetDeviceCount found 0 devices");
    if (n > CALIBRATION_MAX_GPUS) {
        fprintf(stderr, "zerosim-calibrate: %d GPUs found; recording the first %d\n", n,
                CALIBRATION_MAX_GPUS);
        n = CALIBRATION_MAX_GPUS;
    }
    Calibration *m = &s->meta;
    for (int d = 0; d < n; d++) {
        cudaDeviceProp prop;
        if ((e = cudaGetDeviceProperties(&prop, d)) != cudaSuccess)
            return err_set(err, "cudaGetDeviceProperties(%d): %s", d, cudaGetErrorString(e));
        snprintf(m->system.gpus[d], sizeof m->system.gpus[d], "%.95s", prop.name);
    }
    m->system.n_gpus = (uint64_t)n;
    driver_version(m->system.driver_version, sizeof m->system.driver_version);
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        snprintf(m->system.cuda_driver_version, sizeof m->system.cuda_driver_version, "%d.%d",
                 v / 1000, (v % 1000) / 10);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        snprintf(m->system.cuda_runtime_version, sizeof m->system.cuda_runtime_version, "%d.%d",
                 v / 1000, (v % 1000) / 10);
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        snprintf(m->system.cublas_version, sizeof m->system.cublas_version, "%d.%d.%d", major,
                 minor, patch);
    if (ncclGetVersion(&v) == ncclSuccess) /* NCCL >= 2.9: major*10000 + minor*100 + patch */
        snprintf(m->system.nccl_version, sizeof m->system.nccl_version, "%d.%d.%d", v / 10000,
                 (v / 100) % 100, v % 100);

    int cc_major = 0, cc_minor = 0, sms = 0, clock_khz = 0;
    cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    bool is_estimated = false;
    for (int p = 0; p < CALIB_N_PRECISIONS; p++) {
        if (m->gemm[p].peak_flops_per_s > 0)
            continue;
        m->gemm[p].peak_flops_per_s =
            plan_peak_estimate(cc_major, cc_minor, sms, 1e3 * clock_khz, (CalibPrecision)p);
        is_estimated = is_estimated || m->gemm[p].peak_flops_per_s > 0;
    }
    if (is_estimated) {
        size_t used = strlen(m->gemm_peak_source);
        snprintf(m->gemm_peak_source + used, sizeof m->gemm_peak_source - used,
                 "%sestimate for sm_%d%d: %d SMs x %.3g GHz boost x dense FLOP/clock/SM",
                 used ? "; " : "", cc_major, cc_minor, sms, clock_khz / 1e6);
    }
    return n;
}
