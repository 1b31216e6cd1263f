/*
 * calib_json.c - Calibration -> JSON with report/json_writer (see calib_json.h).
 */
#include "calib_json.h"

#include "report/json_writer.h"

#include <errno.h>
#include <string.h>

static void kv_string_if(JsonWriter *w, const char *key, const char *s)
{
    if (s[0] != '\0')
        json_kv_string(w, key, s);
}

static void write_quality(JsonWriter *w, const CalibFitQuality *q)
{
    json_kv_double(w, "r2", q->r2);
    json_kv_double(w, "rms_rel_residual", q->rms_rel_residual);
    json_kv_double(w, "max_rel_residual", q->max_rel_residual);
    json_kv_u64(w, "n_points", q->n_points);
}

static void write_system(JsonWriter *w, const Calibration *c)
{
    json_key(w, "system");
    json_begin_object(w);
    if (c->system.n_gpus > 0) {
        json_key(w, "gpus");
        json_begin_array(w);
        for (uint64_t i = 0; i < c->system.n_gpus; i++)
            json_string(w, c->system.gpus[i]);
        json_end_array(w);
    }
    kv_string_if(w, "driver_version", c->system.driver_version);
    kv_string_if(w, "cuda_driver_version", c->system.cuda_driver_version);
    kv_string_if(w, "cuda_runtime_version", c->system.cuda_runtime_version);
    kv_string_if(w, "cublas_version", c->system.cublas_version);
    kv_string_if(w, "nccl_version", c->system.nccl_version);
    kv_string_if(w, "cpu_model", c->system.cpu_model);
    if (c->system.cpu_threads > 0)
        json_kv_u64(w, "cpu_threads", c->system.cpu_threads);
    json_end_object(w);
}

static bool any_gemm(const Calibration *c)
{
    for (int i = 0; i < CALIB_N_PRECISIONS; i++)
        if (c->gemm[i].is_present)
            return true;
    return false;
}

static void write_gemm(JsonWriter *w, const Calibration *c)
{
    if (!any_gemm(c))
        return;
    json_key(w, "gemm");
    json_begin_object(w);
    kv_string_if(w, "peak_source", c->gemm_peak_source);
    for (int i = 0; i < CALIB_N_PRECISIONS; i++) {
        const CalibGemm *g = &c->gemm[i];
        if (!g->is_present)
            continue;
        json_key(w, calibration_precision_names[i]);
        json_begin_object(w);
        json_kv_double(w, "peak_flops_per_s", g->peak_flops_per_s);
        json_kv_double(w, "peak_efficiency", g->peak_efficiency);
        json_kv_double(w, "half_size_flops", g->half_size_flops);
        write_quality(w, &g->fit);
        kv_string_if(w, "note", g->note);
        json_end_object(w);
    }
    json_end_object(w);
}

static void write_copies(JsonWriter *w, const Calibration *c)
{
    bool any = false;
    for (int i = 0; i < CALIB_N_COPY_ROUTES; i++)
        any = any || c->copy[i].is_present;
    if (!any)
        return;
    json_key(w, "copies");
    json_begin_object(w);
    for (int i = 0; i < CALIB_N_COPY_ROUTES; i++) {
        const CalibCopy *x = &c->copy[i];
        if (!x->is_present)
            continue;
        json_key(w, calibration_copy_names[i]);
        json_begin_object(w);
        json_kv_double(w, "latency_s", x->latency_s);
        json_kv_double(w, "bw_bytes_per_s", x->bw_bytes_per_s);
        write_quality(w, &x->fit);
        kv_string_if(w, "note", x->note);
        json_end_object(w);
    }
    json_end_object(w);
}

static void write_collectives(JsonWriter *w, const Calibration *c)
{
    bool any = false;
    for (int i = 0; i < CALIB_N_COLLECTIVES; i++)
        any = any || c->collective[i].is_present;
    if (!any)
        return;
    json_key(w, "collectives");
    json_begin_object(w);
    for (int i = 0; i < CALIB_N_COLLECTIVES; i++) {
        const CalibCollectiveFit *x = &c->collective[i];
        if (!x->is_present)
            continue;
        json_key(w, calibration_collective_names[i]);
        json_begin_object(w);
        json_kv_u64(w, "n_gpus", x->n_gpus);
        json_kv_double(w, "latency_s", x->latency_s);
        json_kv_double(w, "alpha_s", x->alpha_s);
        json_kv_double(w, "algbw_bytes_per_s", x->algbw_bytes_per_s);
        json_kv_double(w, "busbw_bytes_per_s", x->busbw_bytes_per_s);
        write_quality(w, &x->fit);
        kv_string_if(w, "note", x->note);
        json_end_object(w);
    }
    json_end_object(w);
}

void calib_json_write(const Calibration *c, FILE *out)
{
    JsonWriter w;
    json_writer_init(&w, out, true);
    json_begin_object(&w);
    json_kv_string(&w, "format", CALIBRATION_FORMAT);
    json_kv_u64(&w, "version", CALIBRATION_VERSION);
    kv_string_if(&w, "date", c->date);
    kv_string_if(&w, "host", c->host);
    kv_string_if(&w, "mode", c->mode);
    kv_string_if(&w, "tool_version", c->tool_version);
    kv_string_if(&w, "samples_csv", c->samples_csv);
    write_system(&w, c);
    write_gemm(&w, c);
    write_copies(&w, c);
    write_collectives(&w, c);
    if (c->launch.is_present) {
        json_key(&w, "launch");
        json_begin_object(&w);
        json_kv_double(&w, "launch_s", c->launch.launch_s);
        json_kv_u64(&w, "n_kernels", c->launch.n_kernels);
        kv_string_if(&w, "note", c->launch.note);
        json_end_object(&w);
    }
    if (c->cpu_adam.is_present) {
        json_key(&w, "cpu_adam");
        json_begin_object(&w);
        json_kv_double(&w, "params_per_s_per_core", c->cpu_adam.params_per_s_per_core);
        json_kv_double(&w, "params_per_s", c->cpu_adam.params_per_s);
        json_kv_u64(&w, "threads", c->cpu_adam.threads);
        json_kv_u64(&w, "n_params", c->cpu_adam.n_params);
        kv_string_if(&w, "note", c->cpu_adam.note);
        json_end_object(&w);
    }
    if (c->disk.is_present) {
        json_key(&w, "disk");
        json_begin_object(&w);
        json_kv_double(&w, "read_bw_bytes_per_s", c->disk.read_bw_bytes_per_s);
        json_kv_double(&w, "write_bw_bytes_per_s", c->disk.write_bw_bytes_per_s);
        json_kv_bool(&w, "o_direct", c->disk.is_direct);
        json_kv_u64(&w, "file_bytes", c->disk.file_bytes);
        json_kv_u64(&w, "block_bytes", c->disk.block_bytes);
        kv_string_if(&w, "dir", c->disk.dir);
        kv_string_if(&w, "note", c->disk.note);
        json_end_object(&w);
    }
    json_end_object(&w);
    fputc('\n', out);
}

int calib_json_save(const Calibration *c, const char *path, Err *err)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return err_set(err, "%s: cannot write calibration file: %s", path, strerror(errno));
    calib_json_write(c, f);
    if (fclose(f) != 0)
        return err_set(err, "%s: cannot write calibration file: %s", path, strerror(errno));
    return 0;
}
