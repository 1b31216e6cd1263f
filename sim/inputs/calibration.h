/*
 * calibration.h - a calibration JSON written by zerosim-calibrate, and its overlay on a platform.
 *
 * zerosim-calibrate (calibrate/) measures GEMMs, copies, NCCL collectives, CPU Adam and disk
 * bandwidth on a real node and fits the cost parameters the simulator uses. This module reads
 * its output (our own format: unknown keys are errors, every number in base units with the
 * unit in the key, every section optional since --cpu-only writes only cpu_adam and disk) and
 * overlays the fitted values on a Platform record. The schema and the overlay rules are in
 * docs/CALIBRATION.md; the key names below are shared with the writer in calibrate/ so that
 * the two cannot drift apart.
 */
#ifndef ZEROSIM_INPUTS_CALIBRATION_H
#define ZEROSIM_INPUTS_CALIBRATION_H

#include "../common/err.h"
#include "platform.h"

#include <stdbool.h>
#include <stdint.h>

#define CALIBRATION_FORMAT "zerosim-calibration"
#define CALIBRATION_VERSION 1
#define CALIBRATION_MAX_GPUS 16 /* one node */
#define CALIBRATION_NOTE_MAX 256

/* GEMM precisions, copy routes and collectives, in the order of the name tables below. */
typedef enum CalibPrecision {
    CALIB_BF16,
    CALIB_FP16,
    CALIB_FP32,
    CALIB_N_PRECISIONS
} CalibPrecision;

typedef enum CalibCopyRoute {
    CALIB_H2D_PINNED,
    CALIB_D2H_PINNED,
    CALIB_H2D_PAGEABLE,
    CALIB_D2H_PAGEABLE,
    CALIB_D2D,
    CALIB_N_COPY_ROUTES
} CalibCopyRoute;

typedef enum CalibCollective {
    CALIB_ALL_REDUCE,
    CALIB_ALL_GATHER,
    CALIB_REDUCE_SCATTER,
    CALIB_BROADCAST,
    CALIB_N_COLLECTIVES
} CalibCollective;

/* JSON keys: "bf16"..., "h2d_pinned"..., "all_reduce"... (NULL-terminated). */
extern const char *const calibration_precision_names[];
extern const char *const calibration_copy_names[];
extern const char *const calibration_collective_names[];

/* How well a fit describes its samples: R^2 of the fitted quantity (time for copies and
 * collectives, FLOP/s for GEMMs), and the root-mean-square and largest |relative residual|
 * over the n_points sizes. */
typedef struct CalibFitQuality {
    double r2;
    double rms_rel_residual;
    double max_rel_residual;
    uint64_t n_points;
} CalibFitQuality;

/* Achieved FLOP/s of a GEMM of F FLOPs: peak_flops_per_s * peak_efficiency / (1 + F_half / F)
 * (Hockney's r_inf, n_1/2 model; docs/CALIBRATION.md). */
typedef struct CalibGemm {
    bool is_present;
    double peak_flops_per_s; /* the dense peak the efficiency is relative to */
    double peak_efficiency;  /* fitted asymptote / peak_flops_per_s */
    double half_size_flops;  /* F_half: the size that reaches half the asymptote */
    CalibFitQuality fit;
    char note[CALIBRATION_NOTE_MAX];
} CalibGemm;

/* time = latency_s + bytes / bw_bytes_per_s, fitted over sizes. */
typedef struct CalibCopy {
    bool is_present;
    double latency_s;
    double bw_bytes_per_s;
    CalibFitQuality fit;
    char note[CALIBRATION_NOTE_MAX];
} CalibCopy;

/* time = latency_s + bytes / algbw_bytes_per_s over n_gpus GPUs of one node; latency_s =
 * steps * alpha_s with the ring's steps (2(n-1) for all-reduce, n-1 otherwise; alpha_s =
 * latency_s on one GPU); busbw = algbw * nccl-tests' factor (0 on one GPU but for broadcast,
 * as nccl-tests prints it). */
typedef struct CalibCollectiveFit {
    bool is_present;
    uint64_t n_gpus;
    double latency_s;
    double alpha_s;
    double algbw_bytes_per_s;
    double busbw_bytes_per_s;
    CalibFitQuality fit;
    char note[CALIBRATION_NOTE_MAX];
} CalibCollectiveFit;

typedef struct Calibration {
    char date[32]; /* ISO 8601, UTC */
    char host[128];
    char mode[16]; /* "quick", "full" or "cpu-only" */
    char tool_version[32];
    char samples_csv[256]; /* the raw samples, relative to the JSON's folder */

    struct {
        uint64_t n_gpus;
        char gpus[CALIBRATION_MAX_GPUS][96];
        char driver_version[32];      /* NVIDIA kernel driver */
        char cuda_driver_version[32]; /* CUDA version the driver supports */
        char cuda_runtime_version[32];
        char cublas_version[32];
        char nccl_version[32];
        char cpu_model[96];
        uint64_t cpu_threads;
    } system;

    char gemm_peak_source[128]; /* where peak_flops_per_s came from */
    CalibGemm gemm[CALIB_N_PRECISIONS];
    CalibCopy copy[CALIB_N_COPY_ROUTES];
    CalibCollectiveFit collective[CALIB_N_COLLECTIVES];

    struct {
        bool is_present;
        double params_per_s_per_core; /* params_per_s / threads */
        double params_per_s;          /* at the best thread count */
        uint64_t threads;             /* the best thread count */
        uint64_t n_params;
        char note[CALIBRATION_NOTE_MAX];
    } cpu_adam;

    struct {
        bool is_present;
        double launch_s;    /* host time to issue one kernel, back to back */
        uint64_t n_kernels; /* empty kernels timed per repetition */
        char note[CALIBRATION_NOTE_MAX];
    } launch;

    struct {
        bool is_present;
        double read_bw_bytes_per_s;
        double write_bw_bytes_per_s;
        bool is_direct; /* O_DIRECT; false: buffered I/O (tmpfs and others refuse O_DIRECT) */
        uint64_t file_bytes;
        uint64_t block_bytes;
        char dir[256];
        char note[CALIBRATION_NOTE_MAX];
    } disk;
} Calibration;

/* Parses calibration JSON text; `file` names it in messages. Returns 0, or -1 with a one-line
 * error naming file, key, expected and found. */
int calibration_parse(Calibration *out, const char *file, const char *text, size_t n_bytes,
                      Err *err);

/* Reads and parses the file at `path`. */
int calibration_load(Calibration *out, const char *path, Err *err);

/* Overlays the fitted values present in c on p; fields whose section is absent, or whose
 * condition below does not hold, are left as they are:
 *  - gpu.gemm_efficiency = peak_efficiency * peak_flops_per_s / p's peak for that precision
 *    (the calibrated asymptote over the platform's peak), for the first of bf16, fp16, fp32
 *    present, clamped to [0.01, 1]; gpu.matmul_flops_per_s (the kernel model's matmul
 *    ceiling) = that efficiency x the 16-bit peak; gpu.gemm_fixed_s (each GEMM kernel's fixed
 *    time) = half_size_flops / the asymptote, the fit's t0, at most 1 ms;
 *  - pcie.gpu_link: bandwidth = the lower of h2d_pinned and d2h_pinned, latency = the higher
 *    minus the switch uplink's latency (at least 0), so a GPU<->CPU route adds up to the
 *    measured latency; when the uplink serves this GPU alone (gpus_per_switch 1, no NIC on
 *    the switch) pcie.switch_uplink takes the same bandwidth and the latency is split evenly;
 *  - nvlink.bw_bytes_per_s = all_reduce busbw (times gpus_per_node - 1 with direct links),
 *    nvlink.latency_s = its alpha_s: only for a multi-GPU measurement (n_gpus >= 2, at most
 *    gpus_per_node) on a platform with NVLink;
 *  - cpu.adam_params_per_s_per_core = params_per_s / max(threads, cpu.cores), so that the
 *    engine's node rate (cores x per-core rate) never exceeds the measured best;
 *  - nvme read and write bandwidth per drive = measured / drives, when drives >= 1;
 *  - gpu.memory_bw_efficiency = 2 x d2d bandwidth / hbm_bw_bytes_per_s (a copy reads and
 *    writes each byte), clamped to [0.01, 1], when d2d is present;
 *  - gpu.kernel_launch_s = launch.launch_s, when launch is present.
 * Returns the number of platform fields changed. */
int calibration_apply(const Calibration *c, Platform *p);

#endif
