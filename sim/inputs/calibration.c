/*
 * calibration.c - calibration JSON -> Calibration, and its overlay on a Platform (see
 * calibration.h).
 *
 * Every section is optional, but a section that is present must be complete: a fit without
 * its quality figures, or a copy route without its latency, is an error rather than a
 * silently partial overlay.
 */
#include "calibration.h"

#include "jsonfile.h"
#include "resolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const calibration_precision_names[] = {"bf16", "fp16", "fp32", NULL};
const char *const calibration_copy_names[] = {"h2d_pinned",   "d2h_pinned", "h2d_pageable",
                                              "d2h_pageable", "d2d",        NULL};
const char *const calibration_collective_names[] = {"all_reduce", "all_gather", "reduce_scatter",
                                                    "broadcast", NULL};

static const char *const top_keys[] = {"format",       "version",     "date",   "host", "mode",
                                       "tool_version", "samples_csv", "system", "gemm", "copies",
                                       "collectives",  "cpu_adam",    "launch", "disk", NULL};
static const char *const launch_keys[] = {"launch_s", "n_kernels", "note", NULL};
static const char *const system_keys[] = {"gpus",
                                          "driver_version",
                                          "cuda_driver_version",
                                          "cuda_runtime_version",
                                          "cublas_version",
                                          "nccl_version",
                                          "cpu_model",
                                          "cpu_threads",
                                          NULL};
static const char *const gemm_keys[] = {"peak_source", "bf16", "fp16", "fp32", NULL};
static const char *const gemm_fit_keys[] = {"peak_flops_per_s",
                                            "peak_efficiency",
                                            "half_size_flops",
                                            "r2",
                                            "rms_rel_residual",
                                            "max_rel_residual",
                                            "n_points",
                                            "note",
                                            NULL};
static const char *const copy_keys[] = {
    "latency_s",        "bw_bytes_per_s", "r2",   "rms_rel_residual",
    "max_rel_residual", "n_points",       "note", NULL};
static const char *const collective_keys[] = {
    "n_gpus", "latency_s",        "alpha_s",          "algbw_bytes_per_s", "busbw_bytes_per_s",
    "r2",     "rms_rel_residual", "max_rel_residual", "n_points",          "note",
    NULL};
static const char *const adam_keys[] = {
    "params_per_s_per_core", "params_per_s", "threads", "n_params", "note", NULL};
static const char *const disk_keys[] = {"read_bw_bytes_per_s",
                                        "write_bw_bytes_per_s",
                                        "o_direct",
                                        "file_bytes",
                                        "block_bytes",
                                        "dir",
                                        "note",
                                        NULL};

#define MAX_RATE 1e18      /* bytes/s, FLOP/s or params/s: far above any machine */
#define MAX_LATENCY_S 10.0 /* a fitted intercept beyond this is a broken measurement */
#define MAX_COUNT (1ull << 40)

static int need_double(const cJSON *obj, const char *key, JsonAt at, double min, double max,
                       double *out, Err *err)
{
    char expected[96];
    snprintf(expected, sizeof expected, "number in [%g, %g]", min, max);
    return jsonfile_require(jsonfile_get_double(obj, key, at, min, max, out, err), key, at,
                            expected, err);
}

static int need_u64(const cJSON *obj, const char *key, JsonAt at, uint64_t min, uint64_t max,
                    uint64_t *out, Err *err)
{
    char expected[96];
    snprintf(expected, sizeof expected, "integer in [%llu, %llu]", (unsigned long long)min,
             (unsigned long long)max);
    return jsonfile_require(jsonfile_get_u64(obj, key, at, min, max, out, err), key, at, expected,
                            err);
}

static int opt_string(const cJSON *obj, const char *key, JsonAt at, char *out, size_t size,
                      Err *err)
{
    return jsonfile_get_string(obj, key, at, out, size, err) < 0 ? -1 : 0;
}

/* The object at obj[key] checked against keys, or NULL (absent, or err set: see is_bad). */
static const cJSON *sub_object(const cJSON *obj, const char *key, JsonAt at,
                               const char *const *keys, char *path, size_t path_size, bool *is_bad,
                               Err *err)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(obj, key);
    *is_bad = false;
    if (sec == NULL || cJSON_IsNull(sec))
        return NULL;
    JsonAt sub = {at.file, jsonfile_key_path(at, key, path, path_size)};
    if (jsonfile_expect_object(sec, sub, err) ||
        jsonfile_check_keys(sec, sub, keys, NULL, NULL, err)) {
        *is_bad = true;
        return NULL;
    }
    return sec;
}

static int read_quality(const cJSON *obj, JsonAt at, CalibFitQuality *q, Err *err)
{
    /* R^2 below 0 means a fit worse than the mean: allowed, the user should see it. */
    return need_double(obj, "r2", at, -1e6, 1.0, &q->r2, err) ||
                   need_double(obj, "rms_rel_residual", at, 0.0, 1e6, &q->rms_rel_residual, err) ||
                   need_double(obj, "max_rel_residual", at, 0.0, 1e6, &q->max_rel_residual, err) ||
                   need_u64(obj, "n_points", at, 1, 1u << 20, &q->n_points, err)
               ? -1
               : 0;
}

static int read_system(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char path[64];
    bool is_bad;
    const cJSON *s = sub_object(root, "system", at, system_keys, path, sizeof path, &is_bad, err);
    if (s == NULL)
        return is_bad ? -1 : 0;
    JsonAt sat = {at.file, path};
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(s, "gpus");
    if (gpus != NULL && !cJSON_IsNull(gpus)) {
        char found[64], key[80];
        jsonfile_key_path(sat, "gpus", key, sizeof key);
        if (!cJSON_IsArray(gpus))
            return err_set(err, "%s: %s: expected an array of GPU names, got %s", at.file, key,
                           jsonfile_describe(gpus, found, sizeof found));
        int n = cJSON_GetArraySize(gpus);
        if (n > CALIBRATION_MAX_GPUS)
            return err_set(err, "%s: %s: expected at most %d GPUs (one node), got %d", at.file, key,
                           CALIBRATION_MAX_GPUS, n);
        for (int i = 0; i < n; i++) {
            const cJSON *g = cJSON_GetArrayItem(gpus, i);
            if (!cJSON_IsString(g) || g->valuestring == NULL ||
                strlen(g->valuestring) >= sizeof c->system.gpus[0])
                return err_set(err,
                               "%s: %s[%d]: expected a GPU name of at most %zu characters, "
                               "got %s",
                               at.file, key, i, sizeof c->system.gpus[0] - 1,
                               jsonfile_describe(g, found, sizeof found));
            snprintf(c->system.gpus[i], sizeof c->system.gpus[i], "%s", g->valuestring);
        }
        c->system.n_gpus = (uint64_t)n;
    }
    return opt_string(s, "driver_version", sat, c->system.driver_version,
                      sizeof c->system.driver_version, err) ||
                   opt_string(s, "cuda_driver_version", sat, c->system.cuda_driver_version,
                              sizeof c->system.cuda_driver_version, err) ||
                   opt_string(s, "cuda_runtime_version", sat, c->system.cuda_runtime_version,
                              sizeof c->system.cuda_runtime_version, err) ||
                   opt_string(s, "cublas_version", sat, c->system.cublas_version,
                              sizeof c->system.cublas_version, err) ||
                   opt_string(s, "nccl_version", sat, c->system.nccl_version,
                              sizeof c->system.nccl_version, err) ||
                   opt_string(s, "cpu_model", sat, c->system.cpu_model, sizeof c->system.cpu_model,
                              err) ||
                   jsonfile_get_u64(s, "cpu_threads", sat, 1, 1u << 20, &c->system.cpu_threads,
                                    err) < 0
               ? -1
               : 0;
}

static int read_gemm(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char path[64];
    bool is_bad;
    const cJSON *g = sub_object(root, "gemm", at, gemm_keys, path, sizeof path, &is_bad, err);
    if (g == NULL)
        return is_bad ? -1 : 0;
    JsonAt gat = {at.file, path};
    if (opt_string(g, "peak_source", gat, c->gemm_peak_source, sizeof c->gemm_peak_source, err))
        return -1;
    for (int i = 0; i < CALIB_N_PRECISIONS; i++) {
        char sub_path[96];
        const cJSON *f = sub_object(g, calibration_precision_names[i], gat, gemm_fit_keys, sub_path,
                                    sizeof sub_path, &is_bad, err);
        if (is_bad)
            return -1;
        if (f == NULL)
            continue;
        JsonAt fat = {at.file, sub_path};
        CalibGemm *m = &c->gemm[i];
        if (need_double(f, "peak_flops_per_s", fat, 1e6, MAX_RATE, &m->peak_flops_per_s, err) ||
            need_double(f, "peak_efficiency", fat, 1e-4, 2.0, &m->peak_efficiency, err) ||
            need_double(f, "half_size_flops", fat, 0.0, 1e30, &m->half_size_flops, err) ||
            read_quality(f, fat, &m->fit, err) ||
            opt_string(f, "note", fat, m->note, sizeof m->note, err))
            return -1;
        m->is_present = true;
    }
    return 0;
}

static int read_copies(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char path[64];
    bool is_bad;
    const cJSON *s =
        sub_object(root, "copies", at, calibration_copy_names, path, sizeof path, &is_bad, err);
    if (s == NULL)
        return is_bad ? -1 : 0;
    JsonAt sat = {at.file, path};
    for (int i = 0; i < CALIB_N_COPY_ROUTES; i++) {
        char sub_path[96];
        const cJSON *f = sub_object(s, calibration_copy_names[i], sat, copy_keys, sub_path,
                                    sizeof sub_path, &is_bad, err);
        if (is_bad)
            return -1;
        if (f == NULL)
            continue;
        JsonAt fat = {at.file, sub_path};
        CalibCopy *m = &c->copy[i];
        if (need_double(f, "latency_s", fat, 0.0, MAX_LATENCY_S, &m->latency_s, err) ||
            need_double(f, "bw_bytes_per_s", fat, 1.0, MAX_RATE, &m->bw_bytes_per_s, err) ||
            read_quality(f, fat, &m->fit, err) ||
            opt_string(f, "note", fat, m->note, sizeof m->note, err))
            return -1;
        m->is_present = true;
    }
    return 0;
}

static int read_collectives(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char path[64];
    bool is_bad;
    const cJSON *s = sub_object(root, "collectives", at, calibration_collective_names, path,
                                sizeof path, &is_bad, err);
    if (s == NULL)
        return is_bad ? -1 : 0;
    JsonAt sat = {at.file, path};
    for (int i = 0; i < CALIB_N_COLLECTIVES; i++) {
        char sub_path[96];
        const cJSON *f = sub_object(s, calibration_collective_names[i], sat, collective_keys,
                                    sub_path, sizeof sub_path, &is_bad, err);
        if (is_bad)
            return -1;
        if (f == NULL)
            continue;
        JsonAt fat = {at.file, sub_path};
        CalibCollectiveFit *m = &c->collective[i];
        if (need_u64(f, "n_gpus", fat, 1, CALIBRATION_MAX_GPUS, &m->n_gpus, err) ||
            need_double(f, "latency_s", fat, 0.0, MAX_LATENCY_S, &m->latency_s, err) ||
            need_double(f, "alpha_s", fat, 0.0, MAX_LATENCY_S, &m->alpha_s, err) ||
            need_double(f, "algbw_bytes_per_s", fat, 1.0, MAX_RATE, &m->algbw_bytes_per_s, err) ||
            need_double(f, "busbw_bytes_per_s", fat, 0.0, MAX_RATE, &m->busbw_bytes_per_s, err) ||
            read_quality(f, fat, &m->fit, err) ||
            opt_string(f, "note", fat, m->note, sizeof m->note, err))
            return -1;
        m->is_present = true;
    }
    return 0;
}

static int read_cpu_adam(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char path[64];
    bool is_bad;
    const cJSON *s = sub_object(root, "cpu_adam", at, adam_keys, path, sizeof path, &is_bad, err);
    if (s == NULL)
        return is_bad ? -1 : 0;
    JsonAt sat = {at.file, path};
    if (need_double(s, "params_per_s_per_core", sat, 1.0, MAX_RATE,
                    &c->cpu_adam.params_per_s_per_core, err) ||
        need_double(s, "params_per_s", sat, 1.0, MAX_RATE, &c->cpu_adam.params_per_s, err) ||
        need_u64(s, "threads", sat, 1, 1u << 20, &c->cpu_adam.threads, err) ||
        need_u64(s, "n_params", sat, 1, MAX_COUNT, &c->cpu_adam.n_params, err) ||
        opt_string(s, "note", sat, c->cpu_adam.note, sizeof c->cpu_adam.note, err))
        return -1;
    c->cpu_adam.is_present = true;
    return 0;
}

static int read_launch(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char path[64];
    bool is_bad;
    const cJSON *s = sub_object(root, "launch", at, launch_keys, path, sizeof path, &is_bad, err);
    if (s == NULL)
        return is_bad ? -1 : 0;
    JsonAt sat = {at.file, path};
    if (need_double(s, "launch_s", sat, 0.0, 1e-3, &c->launch.launch_s, err) ||
        need_u64(s, "n_kernels", sat, 1, MAX_COUNT, &c->launch.n_kernels, err) ||
        opt_string(s, "note", sat, c->launch.note, sizeof c->launch.note, err))
        return -1;
    c->launch.is_present = true;
    return 0;
}

static int read_disk(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char path[64];
    bool is_bad;
    const cJSON *s = sub_object(root, "disk", at, disk_keys, path, sizeof path, &is_bad, err);
    if (s == NULL)
        return is_bad ? -1 : 0;
    JsonAt sat = {at.file, path};
    if (need_double(s, "read_bw_bytes_per_s", sat, 1.0, MAX_RATE, &c->disk.read_bw_bytes_per_s,
                    err) ||
        need_double(s, "write_bw_bytes_per_s", sat, 1.0, MAX_RATE, &c->disk.write_bw_bytes_per_s,
                    err) ||
        jsonfile_require(jsonfile_get_bool(s, "o_direct", sat, &c->disk.is_direct, err), "o_direct",
                         sat, "true or false", err) ||
        need_u64(s, "file_bytes", sat, 1, MAX_COUNT, &c->disk.file_bytes, err) ||
        need_u64(s, "block_bytes", sat, 1, MAX_COUNT, &c->disk.block_bytes, err) ||
        opt_string(s, "dir", sat, c->disk.dir, sizeof c->disk.dir, err) ||
        opt_string(s, "note", sat, c->disk.note, sizeof c->disk.note, err))
        return -1;
    c->disk.is_present = true;
    return 0;
}

static int read_header(const cJSON *root, JsonAt at, Calibration *c, Err *err)
{
    char format[64] = "";
    uint64_t version = 0;
    if (jsonfile_require(jsonfile_get_string(root, "format", at, format, sizeof format, err),
                         "format", at, "\"" CALIBRATION_FORMAT "\"", err))
        return -1;
    if (strcmp(format, CALIBRATION_FORMAT) != 0)
        return err_set(err, "%s: format: expected \"%s\", got \"%s\"", at.file, CALIBRATION_FORMAT,
                       format);
    if (need_u64(root, "version", at, CALIBRATION_VERSION, CALIBRATION_VERSION, &version, err))
        return -1;
    return opt_string(root, "date", at, c->date, sizeof c->date, err) ||
                   opt_string(root, "host", at, c->host, sizeof c->host, err) ||
                   opt_string(root, "mode", at, c->mode, sizeof c->mode, err) ||
                   opt_string(root, "tool_version", at, c->tool_version, sizeof c->tool_version,
                              err) ||
                   opt_string(root, "samples_csv", at, c->samples_csv, sizeof c->samples_csv, err)
               ? -1
               : 0;
}

int calibration_parse(Calibration *out, const char *file, const char *text, size_t n_bytes,
                      Err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = jsonfile_parse(file, text, n_bytes, err);
    if (root == NULL)
        return -1;
    JsonAt at = {file, ""};
    int rc = jsonfile_expect_object(root, at, err) ||
             jsonfile_check_keys(root, at, top_keys, NULL, NULL, err) ||
             read_header(root, at, out, err) || read_system(root, at, out, err) ||
             read_gemm(root, at, out, err) || read_copies(root, at, out, err) ||
             read_collectives(root, at, out, err) || read_cpu_adam(root, at, out, err) ||
             read_launch(root, at, out, err) || read_disk(root, at, out, err);
    cJSON_Delete(root);
    return rc ? -1 : 0;
}

int calibration_load(Calibration *out, const char *path, Err *err)
{
    char read_path[1024];
    size_t n = 0;
    memset(out, 0, sizeof *out);
    char *text = resolve_read(path, NULL, "", "calibration", read_path, sizeof read_path, &n, err);
    if (text == NULL)
        return -1;
    int rc = calibration_parse(out, read_path, text, n, err);
    free(text);
    return rc;
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* The platform's peak for a calibrated precision, as platform_peak_flops_per_s gives it. */
static double platform_peak(const Platform *p, CalibPrecision precision)
{
    static const Precision map[CALIB_N_PRECISIONS] = {PRECISION_BF16, PRECISION_FP16,
                                                      PRECISION_FP32};
    return platform_peak_flops_per_s(p, map[precision]);
}

static int apply_gemm(const Calibration *c, Platform *p)
{
    for (int i = 0; i < CALIB_N_PRECISIONS; i++) {
        const CalibGemm *g = &c->gemm[i];
        double peak = platform_peak(p, (CalibPrecision)i);
        if (!g->is_present || peak <= 0)
            continue;
        /* The engine runs GEMMs at peak x efficiency: make that the calibrated asymptote. */
        p->gpu.gemm_efficiency = clamp(g->peak_efficiency * g->peak_flops_per_s / peak, 0.01, 1.0);
        /* The kernel model's matmul ceiling (model/kernels.c) is the same asymptote, held as
         * a 16-bit rate: an fp32 measurement stands for the same share of the 16-bit peak. */
        const double peak16 =
            p->gpu.bf16_flops_per_s > 0 ? p->gpu.bf16_flops_per_s : p->gpu.fp16_flops_per_s;
        p->gpu.matmul_flops_per_s = p->gpu.gemm_efficiency * peak16;
        /* and each GEMM kernel's fixed time is the fit's t0: half-size over the asymptote
         * (an upper bound: the sweep's tile and wave losses are in it, docs/CALIBRATION.md) */
        const double rate = g->peak_efficiency * g->peak_flops_per_s;
        if (!(rate > 0))
            return 2;
        p->gpu.gemm_fixed_s = clamp(g->half_size_flops / rate, 0.0, 1e-3);
        return 3;
    }
    return 0;
}

static int apply_pcie(const Calibration *c, Platform *p)
{
    const CalibCopy *h2d = &c->copy[CALIB_H2D_PINNED], *d2h = &c->copy[CALIB_D2H_PINNED];
    if (!h2d->is_present && !d2h->is_present)
        return 0;
    /* One SimGrid link carries both directions at one rate: the slower direction rules. */
    double bw = h2d->is_present ? h2d->bw_bytes_per_s : d2h->bw_bytes_per_s;
    double lat = h2d->is_present ? h2d->latency_s : d2h->latency_s;
    if (h2d->is_present && d2h->is_present) {
        bw = h2d->bw_bytes_per_s < d2h->bw_bytes_per_s ? h2d->bw_bytes_per_s : d2h->bw_bytes_per_s;
        lat = h2d->latency_s > d2h->latency_s ? h2d->latency_s : d2h->latency_s;
    }
    lat = clamp(lat, 0.0, 1.0); /* the platform's own limit on a link latency */
    if (p->pcie.gpus_per_switch == 1 && p->pcie.nics_per_switch == 0) {
        /* The "switch" is this GPU's root port: its uplink is the same lanes. */
        p->pcie.gpu_link.bw_bytes_per_s = bw;
        p->pcie.switch_uplink.bw_bytes_per_s = bw;
        p->pcie.gpu_link.latency_s = lat / 2.0;
        p->pcie.switch_uplink.latency_s = lat / 2.0;
        return 4;
    }
    p->pcie.gpu_link.bw_bytes_per_s = bw;
    p->pcie.gpu_link.latency_s = clamp(lat - p->pcie.switch_uplink.latency_s, 0.0, 1.0);
    return 2;
}

static int apply_nvlink(const Calibration *c, Platform *p)
{
    const CalibCollectiveFit *ar = &c->collective[CALIB_ALL_REDUCE];
    if (!ar->is_present || ar->n_gpus < 2 || ar->n_gpus > p->gpus_per_node || !p->has_nvlink ||
        ar->busbw_bytes_per_s < 1.0)
        return 0;
    /* A ring member sends over one port (NVSwitch) or one pair's link, which the engine gives
     * nvlink.bw / (gpus_per_node - 1) with direct links (platform_xml.c). */
    double factor = p->has_nvswitch || p->gpus_per_node < 2 ? 1.0 : (double)(p->gpus_per_node - 1);
    p->nvlink.bw_bytes_per_s = ar->busbw_bytes_per_s * factor;
    p->nvlink.latency_s = clamp(ar->alpha_s, 0.0, 1.0);
    return 2;
}

static int apply_cpu(const Calibration *c, Platform *p)
{
    if (!c->cpu_adam.is_present)
        return 0;
    double divisor =
        (double)(c->cpu_adam.threads > p->cpu.cores ? c->cpu_adam.threads : p->cpu.cores);
    p->cpu.adam_params_per_s_per_core = c->cpu_adam.params_per_s / divisor;
    return 1;
}

static int apply_disk(const Calibration *c, Platform *p)
{
    if (!c->disk.is_present || p->nvme.n_drives == 0)
        return 0;
    double drives = (double)p->nvme.n_drives;
    p->nvme.read_bw_bytes_per_s_per_drive = c->disk.read_bw_bytes_per_s / drives;
    p->nvme.write_bw_bytes_per_s_per_drive = c->disk.write_bw_bytes_per_s / drives;
    return 2;
}

/* A device-to-device copy of S bytes reads and writes 2 S of HBM: its rate over the
 * datasheet bandwidth is the share streaming kernels reach (model/kernels.c). */
static int apply_memory(const Calibration *c, Platform *p)
{
    const CalibCopy *d2d = &c->copy[CALIB_D2D];
    if (!d2d->is_present)
        return 0;
    p->gpu.memory_bw_efficiency =
        clamp(2.0 * d2d->bw_bytes_per_s / p->gpu.hbm_bw_bytes_per_s, 0.01, 1.0);
    return 1;
}

/* The launch floor of the kernel model is the measured issue time of one kernel. */
static int apply_launch(const Calibration *c, Platform *p)
{
    if (!c->launch.is_present)
        return 0;
    p->gpu.kernel_launch_s = c->launch.launch_s;
    return 1;
}

int calibration_apply(const Calibration *c, Platform *p)
{
    return apply_gemm(c, p) + apply_pcie(c, p) + apply_nvlink(c, p) + apply_cpu(c, p) +
           apply_disk(c, p) + apply_memory(c, p) + apply_launch(c, p);
}
