/*
 * kineto.h - a PyTorch profiler (Kineto) Chrome-trace JSON, reduced to what calibration needs.
 *
 * `torch.profiler` writes its trace (export_chrome_trace, tensorboard_trace_handler) as Chrome
 * trace-event JSON, plain or gzip: {"traceEvents": [{"ph": "X", "cat": ..., "name": ...,
 * "pid", "tid", "ts" (us), "dur" (us), "args": {...}}, ...], "deviceProperties": [...]}. The
 * events read here:
 *  - "kernel", "gpu_memcpy", "gpu_memset": GPU activity, linked by args.correlation to the
 *    host's "cuda_runtime" event that launched it (cudaLaunchKernel, cudaMemcpyAsync, ...);
 *  - "cpu_op" aten::mm, addmm, bmm, baddbmm (with record_shapes=True they carry
 *    args."Input Dims" and "Input type"): a kernel launched inside one, on the same thread,
 *    belongs to that GEMM, whose FLOPs follow from the shapes;
 *  - "user_annotation" ProfilerStep#N: the training steps;
 *  - NCCL kernels' args "Collective name", "In msg nelems", "Out msg nelems", "Group size",
 *    "dtype" (recorded by PyTorch >= 2.3 with the NCCL profiler), giving the collective and its
 *    size.
 * Every GPU activity becomes one KinetoOp with its class (GEMM, attention, element-wise and
 * reduction, NCCL, memcpy, memset), its launch (when the trace has the runtime event) and what
 * the fits need (FLOPs and precision, copy route and bytes, collective, GPUs and bytes).
 * Kernel names decide the class: see kineto_classify_kernel. Place in the pipeline: trace file
 * -> here -> trace_fit.c -> samples and calibration JSON.
 */
#ifndef ZEROSIM_CALIBRATE_KINETO_H
#define ZEROSIM_CALIBRATE_KINETO_H

#include "common/err.h"
#include "inputs/calibration.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum KinetoClass {
    KINETO_GEMM,        /* cuBLAS/CUTLASS GEMM and GEMV kernels, and kernels of a GEMM op */
    KINETO_ATTENTION,   /* flash / fmha / sdpa / attention kernels */
    KINETO_ELEMENTWISE, /* every other kernel: element-wise, reductions, norms, optimisers */
    KINETO_NCCL,        /* nccl* kernels */
    KINETO_MEMCPY,      /* "gpu_memcpy" activity */
    KINETO_MEMSET,      /* "gpu_memset" activity */
    KINETO_N_CLASSES
} KinetoClass;

extern const char *const kineto_class_names[]; /* "gemm", "attention", ... NULL-terminated */

#define KINETO_SHAPE_MAX 48

typedef struct KinetoOp {
    KinetoClass cls;
    double ts_s, dur_s; /* GPU start and duration, seconds from the trace's first event */
    int device;
    int64_t stream;
    int64_t correlation;
    bool has_launch;                  /* the runtime event that launched it is in the trace */
    bool is_kernel_launch;            /* that event is a kernel launch (cudaLaunchKernel, ...) */
    double launch_ts_s, launch_dur_s; /* host start and duration of that runtime event */
    /* GEMM launched inside a GEMM op with shapes: */
    int64_t gemm_op; /* index of the op instance (kernels of one op share it), -1 none */
    double flops;    /* 2 m n k (x batch) of the op */
    int precision;   /* CalibPrecision of the op's inputs, -1 other or unknown */
    char shape[KINETO_SHAPE_MAX]; /* "mm 2048x320x125" (m x n x k), "" without shapes */
    /* memcpy: */
    int copy_route; /* CalibCopyRoute, -1 another route (peer, host to host) */
    double bytes;   /* memcpy/memset bytes; NCCL bytes as nccl-tests counts them, 0 unknown */
    /* NCCL: */
    int collective;  /* CalibCollective, -1 another (send/recv, all-to-all) or unknown */
    uint64_t n_gpus; /* "Group size", 0 unknown */
} KinetoOp;

typedef struct KinetoStep {
    char name[32]; /* "ProfilerStep#551" */
    double ts_s, dur_s;
} KinetoStep;

typedef struct KinetoTrace {
    KinetoOp *ops; /* in trace order */
    size_t n_ops;
    KinetoStep *steps; /* sorted by start */
    size_t n_steps;
    size_t n_gemm_ops;        /* GEMM op instances with shapes that launched a kernel */
    size_t n_kernel_launches; /* host kernel-launch runtime events */
    double t0_us;             /* the trace time that is 0 here */
    char device_name[96];     /* deviceProperties[0].name, "" when absent */
} KinetoTrace;

/* Reads a trace, gzip or plain (told apart by zlib), into t (kineto_fini it even on
 * failure). Bad input fails with one line naming the file and what was expected. */
int kineto_load(KinetoTrace *t, const char *path, Err *err);

/* Parses trace JSON text; `file` names it in messages. */
int kineto_parse(KinetoTrace *t, const char *file, const char *text, size_t n_bytes, Err *err);

void kineto_fini(KinetoTrace *t);

/* The class of a kernel by its name (case-insensitive substrings, first match wins): "nccl"
 * -> NCCL; "flash", "fmha", "sdpa", "attention" -> attention; "gemm", "gemv", "cutlass",
 * "cublas", "xmma", "nvjet" (cuBLAS on Hopper) -> GEMM; otherwise element-wise. */
KinetoClass kineto_classify_kernel(const char *name);

/* The copy route of a "gpu_memcpy" event name ("Memcpy HtoD (Pinned -> Device)" ->
 * CALIB_H2D_PINNED), or -1 for another route. */
int kineto_copy_route(const char *name);

/* The collective of a "Collective name" argument ("allreduce", "all_gather",
 * "_reduce_scatter_base", ...), or -1 for another. */
int kineto_collective(const char *name);

/* Bytes per element of a PyTorch/NCCL dtype name ("Float" 4, "BFloat16" 2, ...), 0 unknown. */
double kineto_dtype_bytes(const char *dtype);

#endif
