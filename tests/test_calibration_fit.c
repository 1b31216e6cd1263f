/*
 * test_calibration_fit.c - zerosim-calibrate without a GPU: fits, samples CSV, derivation,
 * JSON round trip, comparison formulas and the CPU Adam and disk benchmarks (calibrate/).
 *
 * The fits must recover known parameters from synthetic samples with seeded noise to within
 * 2%; a samples file that is missing or malformed fails with an exact one-line message; a
 * calibration written by calib_json_save reads back identically through calibration_load; the
 * CPU benchmarks run in a tiny configuration (1e5 parameters, a 4 MiB file).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "calibrate/calib_json.h"
#include "calibrate/compare.h"
#include "calibrate/cpu_adam.h"
#include "calibrate/derive.h"
#include "calibrate/disk.h"
#include "calibrate/fit.h"
#include "calibrate/plan.h"
#include "calibrate/samples.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

static void assert_within(double got, double want, double tolerance, const char *what)
{
    if (rel_err(got, want) > tolerance)
        fprintf(stderr, "%s: got %.6g, want %.6g (%.2f%% off)\n", what, got, want,
                100 * rel_err(got, want));
    assert_true(rel_err(got, want) <= tolerance);
}

/* A fixed seed: the same noise on every run and machine (GSL's mt19937). */
static gsl_rng *seeded_rng(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    return r;
}

/* ---- fits ---- */

/* Copies from 4 KiB to 4 GiB, 12 us + S / 25 GB/s, 1% Gaussian noise (a median of several
 * repetitions) and two 40% outliers (a preempted repetition): the robust fit recovers both
 * parameters within 2%. */
static void test_fit_latency_bw_recovers_parameters(void **state)
{
    (void)state;
    const double latency = 12e-6, bw = 25e9;
    double size[21], time[21];
    gsl_rng *r = seeded_rng(42);
    for (int i = 0; i < 21; i++) {
        size[i] = 4096.0 * pow(2.0, i);
        time[i] = (latency + size[i] / bw) * (1.0 + gsl_ran_gaussian(r, 0.01));
    }
    time[3] *= 1.4;
    time[15] *= 1.4;
    gsl_rng_free(r);
    FitLatencyBw f;
    Err err = {0};
    assert_int_equal(fit_latency_bw(size, time, 21, "copy", &f, &err), 0);
    assert_within(f.latency_s, latency, 0.02, "latency");
    assert_within(f.bw_per_s, bw, 0.02, "bandwidth");
    assert_false(f.is_latency_clamped);
    assert_int_equal(f.quality.n_points, 21);
    assert_true(f.quality.r2 > 0.99);
    assert_true(f.quality.max_rel_residual > 0.25); /* outliers reported, not hidden */
}

/* Exact data: exact parameters, R^2 = 1, zero residuals. */
static void test_fit_latency_bw_exact(void **state)
{
    (void)state;
    double size[] = {1e3, 1e5, 1e7, 1e9}, time[4];
    for (int i = 0; i < 4; i++)
        time[i] = 5e-6 + size[i] / 1e10;
    FitLatencyBw f;
    Err err = {0};
    assert_int_equal(fit_latency_bw(size, time, 4, "copy", &f, &err), 0);
    assert_within(f.latency_s, 5e-6, 1e-9, "latency");
    assert_within(f.bw_per_s, 1e10, 1e-9, "bandwidth");
    assert_true(f.quality.r2 > 1 - 1e-12 && f.quality.rms_rel_residual < 1e-9);
}

/* GEMM FLOP/s saturating at 700 TFLOP/s with half of it at 3e10 FLOPs, 25 sizes from 1 MFLOP
 * to 17 PFLOP, 2% Gaussian noise: the nonlinear fit recovers both within 2%. */
static void test_fit_saturating_recovers_parameters(void **state)
{
    (void)state;
    const double r_max = 7e14, half = 3e10;
    double size[25], rate[25];
    gsl_rng *r = seeded_rng(7);
    for (int i = 0; i < 25; i++) {
        size[i] = 1e6 * pow(2.0, i);
        rate[i] = r_max / (1.0 + half / size[i]) * (1.0 + gsl_ran_gaussian(r, 0.02));
    }
    gsl_rng_free(r);
    FitSaturating f;
    Err err = {0};
    assert_int_equal(fit_saturating(size, rate, 25, "gemm", &f, &err), 0);
    assert_within(f.rate_max, r_max, 0.02, "r_max");
    assert_within(f.half_size, half, 0.02, "half size");
    assert_true(f.quality.r2 > 0.99);
    assert_true(f.quality.rms_rel_residual < 0.04);
}

static void expect_fit_error(int rc, const Err *err, const char *message)
{
    if (rc == 0 || strcmp(err->msg, message) != 0)
        fprintf(stderr, "got:      %s\nexpected: %s\n", err->msg, message);
    assert_int_equal(rc, -1);
    assert_string_equal(err->msg, message);
}

static void test_fit_rejects_bad_points(void **state)
{
    (void)state;
    double size[] = {1e3, 1e6, 1e9}, time[] = {1e-5, 1e-4, 1e-1};
    double same[] = {1e6, 1e6, 1e6}, flat[] = {1e-3, 1e-3, 1e-3}, falling[] = {1e-1, 1e-2, 1e-3};
    double zero[] = {1e-5, 0.0, 1e-1};
    FitLatencyBw f;
    FitSaturating g;
    Err err = {0};
    expect_fit_error(fit_latency_bw(size, time, 2, "copy d2d", &f, &err), &err,
                     "copy d2d: expected at least 3 measured sizes to fit, got 2");
    err_clear(&err);
    expect_fit_error(fit_latency_bw(same, time, 3, "copy d2d", &f, &err), &err,
                     "copy d2d: expected at least two distinct sizes, got one (1e+06)");
    err_clear(&err);
    expect_fit_error(fit_latency_bw(size, zero, 3, "copy d2d", &f, &err), &err,
                     "copy d2d: point 1: expected a time > 0, got 0");
    err_clear(&err);
    assert_int_equal(fit_latency_bw(size, flat, 3, "x", &f, &err), -1);
    err_clear(&err);
    assert_int_equal(fit_latency_bw(size, falling, 3, "collective broadcast", &f, &err), -1);
    const char *prefix = "collective broadcast: expected times that grow with size, got a "
                         "fitted slope of -";
    assert_memory_equal(err.msg, prefix, strlen(prefix));
    assert_non_null(strstr(err.msg, " s per unit (no measurable bandwidth)"));
    err_clear(&err);
    expect_fit_error(fit_saturating(size, zero, 3, "gemm fp16", &g, &err), &err,
                     "gemm fp16: point 1: expected a rate > 0, got 0");
}

/* ---- samples and derivation ---- */

/* A complete synthetic run: 3 GEMM precisions, 5 copy routes, 4 collectives on 8 GPUs, CPU
 * Adam at 1, 2, 4 threads, disk; 1% noise on every repetition. */
static void synthetic_run(SampleSet *s)
{
    samples_init(s);
    Calibration *m = &s->meta;
    snprintf(m->date, sizeof m->date, "2025-01-02T03:04:05Z");
    snprintf(m->host, sizeof m->host, "node7");
    snprintf(m->mode, sizeof m->mode, "quick");
    snprintf(m->tool_version, sizeof m->tool_version, "0.1.0");
    m->system.n_gpus = 8;
    for (int i = 0; i < 8; i++)
        snprintf(m->system.gpus[i], sizeof m->system.gpus[i], "NVIDIA H100 80GB HBM3");
    snprintf(m->system.driver_version, sizeof m->system.driver_version, "550.54.15");
    snprintf(m->system.nccl_version, sizeof m->system.nccl_version, "2.21.5");
    snprintf(m->system.cpu_model, sizeof m->system.cpu_model, "Intel Xeon Platinum 8480C");
    m->system.cpu_threads = 224;
    snprintf(m->gemm_peak_source, sizeof m->gemm_peak_source, "platform dgx-h100");
    const double peaks[CALIB_N_PRECISIONS] = {989e12, 989e12, 67e12};
    const double eff[CALIB_N_PRECISIONS] = {0.78, 0.74, 0.9};
    for (int p = 0; p < CALIB_N_PRECISIONS; p++)
        m->gemm[p].peak_flops_per_s = peaks[p];
    snprintf(m->disk.dir, sizeof m->disk.dir, "/raid");
    m->disk.is_direct = true;

    gsl_rng *r = seeded_rng(2025);
    double t[5];
    for (int p = 0; p < CALIB_N_PRECISIONS; p++) {
        for (int i = 0; i < 20; i++) {
            double flops = 1e7 * pow(2.0, i);
            double rate = eff[p] * peaks[p] / (1.0 + 2e10 / flops);
            for (int k = 0; k < 5; k++)
                t[k] = flops / rate * (1.0 + gsl_ran_gaussian(r, 0.01));
            samples_add(s, SAMPLE_GEMM, p, "square", 0, flops, 3, t, 5);
        }
    }
    const double lat[CALIB_N_COPY_ROUTES] = {8e-6, 9e-6, 15e-6, 16e-6, 5e-6};
    const double bw[CALIB_N_COPY_ROUTES] = {52e9, 50e9, 18e9, 14e9, 1.5e12};
    for (int route = 0; route < CALIB_N_COPY_ROUTES; route++) {
        for (int i = 0; i < 11; i++) {
            double bytes = 4096.0 * pow(4.0, i);
            for (int k = 0; k < 5; k++)
                t[k] = (lat[route] + bytes / bw[route]) * (1.0 + gsl_ran_gaussian(r, 0.01));
            samples_add(s, SAMPLE_COPY, route, "", 0, bytes, 10, t, 5);
        }
    }
    for (int op = 0; op < CALIB_N_COLLECTIVES; op++) {
        double busbw = 370e9, alpha = 1.5e-6;
        double algbw = busbw / derive_busbw_factor((CalibCollective)op, 8);
        double latency = alpha * (double)derive_ring_steps((CalibCollective)op, 8);
        for (int i = 0; i < 10; i++) {
            double bytes = 8.0 * pow(8.0, i);
            for (int k = 0; k < 5; k++)
                t[k] = (latency + bytes / algbw) * (1.0 + gsl_ran_gaussian(r, 0.01));
            samples_add(s, SAMPLE_COLLECTIVE, op, "", 8, bytes, 20, t, 5);
        }
    }
    const double adam_rate[3] = {1.2e8, 2.3e8, 2.1e8}; /* saturates at 2 threads */
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 5; k++)
            t[k] = 1e8 / adam_rate[i] * (1.0 + 0.001 * k);
        char label[32];
        snprintf(label, sizeof label, "threads=%d", 1 << i);
        samples_add(s, SAMPLE_CPU_ADAM, 0, label, 1u << i, 1e8, 1, t, 5);
    }
    for (int k = 0; k < 3; k++)
        t[k] = 4294967296.0 / 6e9;
    samples_add(s, SAMPLE_DISK, 1, "o_direct", 16777216, 4294967296.0, 1, t, 3);
    for (int k = 0; k < 3; k++)
        t[k] = 4294967296.0 / 12e9;
    samples_add(s, SAMPLE_DISK, 0, "o_direct", 16777216, 4294967296.0, 1, t, 3);
    /* launches: 1000 kernels leave the queue part empty (6 us each), 10000 fill it (4 us) */
    for (int k = 0; k < 3; k++)
        t[k] = 6e-6;
    samples_add(s, SAMPLE_LAUNCH, 0, "", 1000, 1000, 1, t, 3);
    for (int k = 0; k < 3; k++)
        t[k] = 4e-6 * (1.0 + 0.01 * k);
    samples_add(s, SAMPLE_LAUNCH, 0, "", 10000, 10000, 1, t, 3);
    gsl_rng_free(r);
}

static void test_samples_summarize(void **state)
{
    (void)state;
    Sample x;
    const double times[] = {4, 1, 3, 2, 100};
    samples_summarize(times, 5, &x);
    assert_true(x.median_s == 3 && x.min_s == 1 && x.max_s == 100);
    assert_true(x.iqr_s == 4 - 2); /* quartiles 2 and 4 of 1 2 3 4 100 */
    const double two[] = {1, 2};
    samples_summarize(two, 2, &x);
    assert_true(x.median_s == 1.5 && x.iqr_s == 0.5);
}

/* Every fit of a synthetic run lands within 2% of the parameters it was made with. */
static void test_derive_calibration_recovers_run(void **state)
{
    (void)state;
    SampleSet s;
    synthetic_run(&s);
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    Err err = {0};
    int rc = derive_calibration(&s, &c, &notes, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_within(c.gemm[CALIB_BF16].peak_efficiency, 0.78, 0.02, "bf16 efficiency");
    assert_within(c.gemm[CALIB_FP16].peak_efficiency, 0.74, 0.02, "fp16 efficiency");
    assert_within(c.gemm[CALIB_FP32].peak_efficiency, 0.9, 0.02, "fp32 efficiency");
    assert_within(c.gemm[CALIB_BF16].half_size_flops, 2e10, 0.02, "bf16 half size");
    assert_within(c.copy[CALIB_H2D_PINNED].bw_bytes_per_s, 52e9, 0.02, "h2d bw");
    assert_within(c.copy[CALIB_H2D_PINNED].latency_s, 8e-6, 0.02, "h2d latency");
    assert_within(c.copy[CALIB_D2D].bw_bytes_per_s, 1.5e12, 0.02, "d2d bw");
    for (int op = 0; op < CALIB_N_COLLECTIVES; op++) {
        const CalibCollectiveFit *x = &c.collective[op];
        assert_int_equal(x->n_gpus, 8);
        assert_within(x->busbw_bytes_per_s, 370e9, 0.02, calibration_collective_names[op]);
        assert_within(x->alpha_s, 1.5e-6, 0.02, calibration_collective_names[op]);
        assert_within(x->busbw_bytes_per_s,
                      x->algbw_bytes_per_s * derive_busbw_factor((CalibCollective)op, 8), 1e-12,
                      "busbw factor");
    }
    assert_true(c.cpu_adam.is_present);
    assert_int_equal(c.cpu_adam.threads, 2);
    assert_within(c.cpu_adam.params_per_s, 2.3e8, 0.005, "adam rate");
    assert_within(c.cpu_adam.params_per_s_per_core, 1.15e8, 0.005, "adam per core");
    /* the launch floor: the longest run's median */
    assert_true(c.launch.is_present);
    assert_int_equal(c.launch.n_kernels, 10000);
    assert_within(c.launch.launch_s, 4.04e-6, 1e-9, "launch");
    assert_within(c.disk.read_bw_bytes_per_s, 12e9, 1e-9, "disk read");
    assert_within(c.disk.write_bw_bytes_per_s, 6e9, 1e-9, "disk write");
    assert_true(c.disk.is_direct);
    assert_string_equal(c.disk.dir, "/raid");
    assert_string_equal(c.host, "node7");
    assert_int_equal(notes.n_items, 0);
    strlist_fini(&notes);
    samples_fini(&s);
}

/* One GPU: the collectives are labelled, busbw is nccl-tests' 0 (broadcast: algbw). */
static void test_derive_single_gpu_collectives(void **state)
{
    (void)state;
    SampleSet s;
    samples_init(&s);
    double t[3];
    for (int op = 0; op < CALIB_N_COLLECTIVES; op++)
        for (int i = 0; i < 5; i++) {
            double bytes = 8.0 * pow(16.0, i);
            for (int k = 0; k < 3; k++)
                t[k] = 20e-6 + bytes / 1e12;
            samples_add(&s, SAMPLE_COLLECTIVE, op, "single GPU", 1, bytes, 1, t, 3);
        }
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    Err err = {0};
    assert_int_equal(derive_calibration(&s, &c, &notes, &err), 0);
    assert_true(c.collective[CALIB_ALL_REDUCE].busbw_bytes_per_s == 0);
    assert_within(c.collective[CALIB_BROADCAST].busbw_bytes_per_s, 1e12, 1e-6, "bcast");
    assert_within(c.collective[CALIB_ALL_GATHER].alpha_s, 20e-6, 1e-6, "alpha");
    assert_non_null(strstr(c.collective[CALIB_ALL_REDUCE].note, "single GPU"));
    assert_int_equal(notes.n_items, CALIB_N_COLLECTIVES);
    strlist_fini(&notes);
    samples_fini(&s);
}

static void test_derive_gemm_needs_peak(void **state)
{
    (void)state;
    SampleSet s;
    samples_init(&s);
    double t[1] = {1e-3};
    for (int i = 0; i < 3; i++)
        samples_add(&s, SAMPLE_GEMM, CALIB_FP16, "square", 0, 1e9 * (i + 1), 1, t, 1);
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    Err err = {0};
    expect_fit_error(derive_calibration(&s, &c, &notes, &err), &err,
                     "gemm fp16: expected the GPU's peak FLOP/s (metadata "
                     "peak_flops_per_s.fp16), got none");
    strlist_fini(&notes);
    samples_fini(&s);
}

/* A temporary directory for files; removed by the caller with cleanup_dir. */
static void make_dir(char *out, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, size, "%s/zerosim-test-calXXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    assert_non_null(mkdtemp(out));
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void assert_same_sample(const Sample *a, const Sample *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->name, b->name);
    assert_string_equal(a->label, b->label);
    assert_int_equal(a->n, b->n);
    assert_true(a->size == b->size);
    assert_int_equal(a->iters, b->iters);
    assert_int_equal(a->reps, b->reps);
    for (uint32_t k = 0; k < a->reps; k++)
        assert_true(a->times_s[k] == b->times_s[k]);
    assert_true(a->median_s == b->median_s && a->iqr_s == b->iqr_s);
}

/* CSV out and back: the same samples, bit for bit, and the same metadata. */
static void test_samples_csv_round_trip(void **state)
{
    (void)state;
    char dir[256], path[512];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/run.csv", dir);
    SampleSet s, back;
    synthetic_run(&s);
    samples_add(&s, SAMPLE_COPY, CALIB_D2D, "a,label\nwith commas", 0, 4096, 1,
                (const double[]){1e-6}, 1);
    Err err = {0};
    assert_int_equal(samples_save_csv(&s, path, &err), 0);
    int rc = samples_load_csv(&back, path, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(back.n_items, s.n_items);
    for (size_t i = 0; i < s.n_items; i++)
        assert_same_sample(&s.items[i], &back.items[i]);
    assert_string_equal(back.items[s.n_items - 1].label, "a;label;with commas");
    assert_string_equal(back.meta.host, "node7");
    assert_int_equal(back.meta.system.n_gpus, 8);
    assert_string_equal(back.meta.system.gpus[7], "NVIDIA H100 80GB HBM3");
    assert_string_equal(back.meta.system.nccl_version, "2.21.5");
    assert_int_equal(back.meta.system.cpu_threads, 224);
    assert_true(back.meta.gemm[CALIB_FP32].peak_flops_per_s == 67e12);
    assert_string_equal(back.meta.gemm_peak_source, "platform dgx-h100");
    assert_true(back.meta.disk.is_direct);
    assert_string_equal(back.meta.disk.dir, "/raid");
    samples_fini(&s);
    samples_fini(&back);
    remove(path);
    rmdir(dir);
}

#define MAGIC "# zerosim-calibrate samples v1\n"
#define HEADER "kind,name,label,n,size,iters,reps,median_s,min_s,max_s,iqr_s,times_s\n"

static void expect_load_error(const char *dir, const char *text, const char *message_tail)
{
    char path[512], message[1024];
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    write_text(path, text);
    snprintf(message, sizeof message, "%s%s", path, message_tail);
    SampleSet s;
    Err err = {0};
    int rc = samples_load_csv(&s, path, &err);
    if (rc == 0 || strcmp(err.msg, message) != 0)
        fprintf(stderr, "got:      %s\nexpected: %s\n", err.msg, message);
    assert_int_equal(rc, -1);
    assert_string_equal(err.msg, message);
    samples_fini(&s);
    remove(path);
}

static void test_samples_load_errors(void **state)
{
    (void)state;
    char dir[256];
    make_dir(dir, sizeof dir);
    expect_load_error(dir, "",
                      ": expected \"# zerosim-calibrate samples v1\" on the first "
                      "line, got an empty file");
    expect_load_error(dir, "size,time\n1,2\n",
                      ":1: expected \"# zerosim-calibrate samples v1\", got \"size,time\" (not a "
                      "zerosim-calibrate samples file)");
    expect_load_error(dir, MAGIC,
                      ": expected the header \"kind,name,label,n,size,iters,reps,"
                      "median_s,min_s,max_s,iqr_s,times_s\", got end of file");
    expect_load_error(dir, MAGIC HEADER, ": expected at least one sample row, got none");
    expect_load_error(dir, MAGIC "kind,name,size\n",
                      ":2: expected the header \"kind,name,label,n,size,iters,reps,median_s,"
                      "min_s,max_s,iqr_s,times_s\", got \"kind,name,size\"");
    expect_load_error(dir, MAGIC "# hots: node7\n" HEADER,
                      ":2: expected a known metadata key, got \"hots\" (did you mean \"host\"?)");
    expect_load_error(dir, MAGIC "# peak_flops_per_s.bf16: fast\n" HEADER,
                      ":2: peak_flops_per_s.bf16: expected a number >= 1e+06, got \"fast\"");
    expect_load_error(dir, MAGIC HEADER "copy,d2d,,0,4096\n",
                      ":3: expected 12 comma-separated columns (kind,name,label,n,size,iters,"
                      "reps,median_s,min_s,max_s,iqr_s,times_s), got 5");
    expect_load_error(dir, MAGIC HEADER "memcpy,d2d,,0,4096,1,2,1e-06,1e-06,1e-06,0,1e-06 1e-06\n",
                      ":3: kind: expected one of \"gemm\", \"copy\", \"collective\", \"cpu_adam\", "
                      "\"disk\", \"launch\", got \"memcpy\"");
    expect_load_error(dir, MAGIC HEADER "copy,h2d,,0,4096,1,2,1e-06,1e-06,1e-06,0,1e-06 1e-06\n",
                      ":3: name: expected one of \"h2d_pinned\", \"d2h_pinned\", \"h2d_pageable\", "
                      "\"d2h_pageable\", \"d2d\", got \"h2d\"");
    expect_load_error(dir, MAGIC HEADER "copy,d2d,,0,4k,1,2,1e-06,1e-06,1e-06,0,1e-06 1e-06\n",
                      ":3: size: expected a number >= 0, got \"4k\"");
    expect_load_error(dir, MAGIC HEADER "copy,d2d,,0,0,1,2,1e-06,1e-06,1e-06,0,1e-06 1e-06\n",
                      ":3: size: expected a number > 0, got \"0\"");
    expect_load_error(dir,
                      MAGIC HEADER "collective,all_reduce,,0,8,1,1,1e-06,1e-06,1e-06,0,"
                                   "1e-06\n",
                      ":3: n: expected an integer in [1, 16], got \"0\"");
    expect_load_error(dir, MAGIC HEADER "copy,d2d,,0,4096,1,3,1e-06,1e-06,1e-06,0,1e-06 1e-06\n",
                      ":3: times_s: expected 3 times (reps), got 2");
    expect_load_error(dir, MAGIC HEADER "copy,d2d,,0,4096,1,2,1e-06,1e-06,1e-06,0,1e-06 -1\n",
                      ":3: times_s: expected a number >= 0, got \"-1\"");
    rmdir(dir);
}

static void test_samples_load_missing_file(void **state)
{
    (void)state;
    SampleSet s;
    Err err = {0};
    assert_int_equal(samples_load_csv(&s, "/nonexistent/run.csv", &err), -1);
    assert_string_equal(err.msg, "/nonexistent/run.csv: cannot open samples file: No such file or "
                                 "directory");
    samples_fini(&s);
}

/* ---- JSON round trip ---- */

static void assert_same_quality(const CalibFitQuality *a, const CalibFitQuality *b)
{
    assert_true(a->r2 == b->r2 && a->rms_rel_residual == b->rms_rel_residual &&
                a->max_rel_residual == b->max_rel_residual && a->n_points == b->n_points);
}

/* derive -> calib_json_save -> calibration_load: every field identical. */
static void test_calibration_json_round_trip(void **state)
{
    (void)state;
    char dir[256], path[512];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    SampleSet s;
    synthetic_run(&s);
    snprintf(s.meta.samples_csv, sizeof s.meta.samples_csv, "calibration.csv");
    Calibration c, back;
    StrList notes;
    strlist_init(&notes);
    Err err = {0};
    assert_int_equal(derive_calibration(&s, &c, &notes, &err), 0);
    snprintf(c.copy[CALIB_D2D].note, sizeof c.copy[CALIB_D2D].note, "a \"quoted\" note");
    assert_int_equal(calib_json_save(&c, path, &err), 0);
    int rc = calibration_load(&back, path, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_string_equal(back.date, c.date);
    assert_string_equal(back.host, c.host);
    assert_string_equal(back.mode, c.mode);
    assert_string_equal(back.tool_version, c.tool_version);
    assert_string_equal(back.samples_csv, "calibration.csv");
    assert_int_equal(back.system.n_gpus, c.system.n_gpus);
    assert_string_equal(back.system.gpus[7], c.system.gpus[7]);
    assert_string_equal(back.system.driver_version, c.system.driver_version);
    assert_string_equal(back.system.cpu_model, c.system.cpu_model);
    assert_int_equal(back.system.cpu_threads, c.system.cpu_threads);
    assert_string_equal(back.gemm_peak_source, c.gemm_peak_source);
    for (int i = 0; i < CALIB_N_PRECISIONS; i++) {
        assert_true(back.gemm[i].is_present);
        assert_true(back.gemm[i].peak_flops_per_s == c.gemm[i].peak_flops_per_s);
        assert_true(back.gemm[i].peak_efficiency == c.gemm[i].peak_efficiency);
        assert_true(back.gemm[i].half_size_flops == c.gemm[i].half_size_flops);
        assert_same_quality(&back.gemm[i].fit, &c.gemm[i].fit);
    }
    for (int i = 0; i < CALIB_N_COPY_ROUTES; i++) {
        assert_true(back.copy[i].is_present);
        assert_true(back.copy[i].latency_s == c.copy[i].latency_s);
        assert_true(back.copy[i].bw_bytes_per_s == c.copy[i].bw_bytes_per_s);
        assert_same_quality(&back.copy[i].fit, &c.copy[i].fit);
        assert_string_equal(back.copy[i].note, c.copy[i].note);
    }
    for (int i = 0; i < CALIB_N_COLLECTIVES; i++) {
        const CalibCollectiveFit *a = &back.collective[i], *b = &c.collective[i];
        assert_true(a->is_present && a->n_gpus == b->n_gpus);
        assert_true(a->latency_s == b->latency_s && a->alpha_s == b->alpha_s);
        assert_true(a->algbw_bytes_per_s == b->algbw_bytes_per_s);
        assert_true(a->busbw_bytes_per_s == b->busbw_bytes_per_s);
        assert_same_quality(&a->fit, &b->fit);
    }
    assert_true(back.cpu_adam.is_present);
    assert_true(back.cpu_adam.params_per_s == c.cpu_adam.params_per_s);
    assert_true(back.cpu_adam.params_per_s_per_core == c.cpu_adam.params_per_s_per_core);
    assert_int_equal(back.cpu_adam.threads, c.cpu_adam.threads);
    assert_int_equal(back.cpu_adam.n_params, c.cpu_adam.n_params);
    assert_true(back.launch.is_present && back.launch.launch_s == c.launch.launch_s);
    assert_int_equal(back.launch.n_kernels, c.launch.n_kernels);
    assert_true(back.disk.is_present && back.disk.is_direct);
    assert_true(back.disk.read_bw_bytes_per_s == c.disk.read_bw_bytes_per_s);
    assert_true(back.disk.write_bw_bytes_per_s == c.disk.write_bw_bytes_per_s);
    assert_int_equal(back.disk.file_bytes, c.disk.file_bytes);
    assert_int_equal(back.disk.block_bytes, c.disk.block_bytes);
    assert_string_equal(back.disk.dir, c.disk.dir);
    strlist_fini(&notes);
    samples_fini(&s);
    remove(path);
    rmdir(dir);
}

/* ---- plan and comparison ---- */

static void test_plan_sizes_and_shapes(void **state)
{
    (void)state;
    uint64_t sizes[64];
    assert_int_equal(plan_sizes(4096, 4096ull << 20, 2, sizes, 64), 21);
    assert_int_equal(sizes[20], 4096ull << 20);
    assert_int_equal(plan_sizes(8, 1000, 8, sizes, 64), 4); /* 8 64 512, then 1000 itself */
    assert_int_equal(sizes[3], 1000);
    uint32_t threads[32];
    assert_int_equal(plan_threads(12, threads, 32), 5); /* 1 2 4 8 12 */
    assert_int_equal(threads[4], 12);
    assert_int_equal(plan_threads(1, threads, 32), 1);

    BenchPlan plan;
    plan_init(&plan, true);
    GemmShape g[PLAN_MAX_GEMMS];
    size_t n = plan_gemm_shapes(&plan, g, PLAN_MAX_GEMMS);
    assert_int_equal(n, 12 + 7); /* 12 layer GEMMs, squares 128..8192 */
    /* QKV forward, PyTorch's nn.Linear through cuBLAS: m = 3h, n = tokens, k = h, (T, N). */
    assert_string_equal(g[0].label, "qkv_fwd 12288x2048x4096");
    assert_true(g[0].is_a_transposed && !g[0].is_b_transposed);
    /* MLP down weight gradient: m = in (4h), n = out (h), k = tokens, (N, T). */
    assert_string_equal(g[11].label, "mlp_down_wgrad 16384x4096x2048");
    assert_true(!g[11].is_a_transposed && g[11].is_b_transposed);
    /* A layer step is 3x the forward FLOPs: 3 x 2 x tokens x 12 h^2 for an MLP of 4h. */
    double total = 0;
    for (size_t i = 0; i < 12; i++)
        total += plan_gemm_flops(&g[i]);
    assert_true(total == 3.0 * 2.0 * 2048.0 * 12.0 * 4096.0 * 4096.0);
}

/* Peaks against datasheets: V100 125, A100 312, H100 SXM 989 TFLOP/s (dense fp16/bf16) at
 * their boost clocks (H100 SXM: 1830 MHz for the 989 figure); A100 fp32 19.5. */
static void test_plan_peak_estimate(void **state)
{
    (void)state;
    assert_within(plan_peak_estimate(7, 0, 80, 1.53e9, CALIB_FP16), 125e12, 0.01, "V100");
    assert_true(plan_peak_estimate(7, 0, 80, 1.53e9, CALIB_BF16) == 0);
    assert_within(plan_peak_estimate(8, 0, 108, 1.41e9, CALIB_BF16), 312e12, 0.01, "A100");
    assert_within(plan_peak_estimate(8, 0, 108, 1.41e9, CALIB_FP32), 19.5e12, 0.01, "A100 fp32");
    assert_within(plan_peak_estimate(9, 0, 132, 1.83e9, CALIB_BF16), 989e12, 0.01, "H100");
    assert_true(plan_peak_estimate(6, 0, 56, 1.48e9, CALIB_FP16) == 0);
}

static void load_platform(const char *name, Platform *p)
{
    Err err = {0};
    int rc = platform_load(p, name, ZEROSIM_SOURCE_DIR, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

/* The closed forms of compare.h by hand on shipped platforms. */
static void test_compare_predict_by_hand(void **state)
{
    (void)state;
    Platform h100, h200;
    load_platform("dgx-h100", &h100);
    load_platform("h200-single", &h200);
    const double gib = 1073741824.0, t1[1] = {1e-3};
    SampleSet s;
    samples_init(&s);
    /* H2D on h200-single: 0.5 + 0.5 us, 49 GB/s lanes = uplink. */
    Sample *x = samples_add(&s, SAMPLE_COPY, CALIB_H2D_PINNED, "", 0, gib, 1, t1, 1);
    assert_within(compare_predict(x, &h200), 1e-6 + gib / 49e9, 1e-12, "h2d");
    x = samples_add(&s, SAMPLE_COPY, CALIB_D2D, "", 0, gib, 1, t1, 1);
    assert_within(compare_predict(x, &h200), 2 * gib / (4.8e12 * 0.87), 1e-12, "d2d");
    /* 8-GPU all-reduce on DGX H100 (NVSwitch): 14 alpha + 2 (7/8) S / B. */
    x = samples_add(&s, SAMPLE_COLLECTIVE, CALIB_ALL_REDUCE, "", 8, gib, 1, t1, 1);
    assert_within(compare_predict(x, &h100),
                  14 * h100.nvlink.latency_s + 1.75 * gib / h100.nvlink.bw_bytes_per_s, 1e-12,
                  "all_reduce");
    x = samples_add(&s, SAMPLE_COLLECTIVE, CALIB_BROADCAST, "", 8, gib, 1, t1, 1);
    assert_within(compare_predict(x, &h100),
                  7 * h100.nvlink.latency_s + gib / h100.nvlink.bw_bytes_per_s, 1e-12, "broadcast");
    x = samples_add(&s, SAMPLE_COLLECTIVE, CALIB_ALL_GATHER, "", 1, gib, 1, t1, 1);
    assert_true(compare_predict(x, &h100) < 0); /* one GPU: not modelled */
    /* bf16 GEMM: flops / (835.5e12 x 0.75). */
    x = samples_add(&s, SAMPLE_GEMM, CALIB_BF16, "", 0, 1e12, 1, t1, 1);
    assert_within(compare_predict(x, &h200), 1e12 / (835.5e12 * 0.75), 1e-12, "gemm");
    x = samples_add(&s, SAMPLE_CPU_ADAM, 0, "", 4, 1e9, 1, t1, 1);
    assert_within(compare_predict(x, &h200), 1e9 / (32 * 8.1e7), 1e-12, "adam");
    x = samples_add(&s, SAMPLE_LAUNCH, 0, "", 1000, 1000, 1, t1, 1);
    assert_within(compare_predict(x, &h200), 4e-6, 1e-12, "launch"); /* per kernel */
    x = samples_add(&s, SAMPLE_DISK, 0, "", 1 << 24, gib, 1, t1, 1);
    assert_within(compare_predict(x, &h200), gib / 7e9, 1e-12, "disk read");
    FILE *devnull = fopen("/dev/null", "w");
    compare_print(&s, &h200, &h100, devnull);
    fclose(devnull);
    samples_fini(&s);
}

/* ---- CPU benchmarks, tiny ---- */

/* One AdamW step on three parameters against the formulas evaluated in double. */
static void test_cpu_adam_step_matches_reference(void **state)
{
    (void)state;
    float p[3] = {0.5f, -1.0f, 2.0f}, g[3] = {0.1f, -0.2f, 0.0f}, m[3] = {0.01f, 0, -0.02f},
          v[3] = {1e-4f, 0, 4e-4f};
    const AdamHyper h = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f};
    double want[3];
    const int step = 3;
    for (int i = 0; i < 3; i++) {
        double mi = 0.9 * m[i] + 0.1 * g[i], vi = 0.999 * v[i] + 0.001 * g[i] * (double)g[i];
        double mhat = mi / (1 - pow(0.9, step)), vhat = vi / (1 - pow(0.999, step));
        want[i] = p[i] * (1 - 1e-3 * 0.01) - 1e-3 * mhat / (sqrt(vhat) + 1e-8);
    }
    cpu_adam_step(p, g, m, v, 3, &h, step, 1);
    for (int i = 0; i < 3; i++)
        assert_true(fabs(p[i] - want[i]) < 1e-6);
}

static void test_cpu_adam_bench_tiny(void **state)
{
    (void)state;
    SampleSet s;
    samples_init(&s);
    const uint32_t threads[] = {1, 2};
    Err err = {0};
    assert_int_equal(cpu_adam_bench(100000, threads, 2, 1, 3, &s, &err), 0);
    assert_int_equal(s.n_items, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(s.items[i].kind, SAMPLE_CPU_ADAM);
        assert_int_equal(s.items[i].n, threads[i]);
        assert_true(s.items[i].size == 1e5 && s.items[i].median_s > 0 && s.items[i].reps == 3);
    }
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    assert_int_equal(derive_calibration(&s, &c, &notes, &err), 0);
    assert_true(c.cpu_adam.is_present && c.cpu_adam.params_per_s > 0);
    assert_true(c.cpu_adam.params_per_s_per_core * (double)c.cpu_adam.threads ==
                c.cpu_adam.params_per_s);
    strlist_fini(&notes);
    samples_fini(&s);
}

static void run_disk(const char *dir)
{
    SampleSet s;
    samples_init(&s);
    Err err = {0};
    int rc = disk_bench(dir, 4u << 20, 1u << 20, 2, &s, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s.n_items, 2);
    assert_int_equal(s.items[0].name, 1); /* write first */
    assert_true(s.items[1].size == 4 << 20 && s.items[1].median_s > 0);
    if (!s.meta.disk.is_direct) {
        fprintf(stderr, "note: %s\n", s.meta.disk.note);
        assert_non_null(strstr(s.meta.disk.note, "O_DIRECT refused"));
    }
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    assert_int_equal(derive_calibration(&s, &c, &notes, &err), 0);
    assert_true(c.disk.is_present && c.disk.read_bw_bytes_per_s > 0);
    assert_int_equal(c.disk.file_bytes, 4u << 20);
    strlist_fini(&notes);
    samples_fini(&s);
}

/* 4 MiB in 1 MiB blocks in a temporary directory; and on tmpfs (/dev/shm), which refuses
 * O_DIRECT, the buffered fallback with its note. */
static void test_disk_bench_tiny(void **state)
{
    (void)state;
    char dir[256];
    make_dir(dir, sizeof dir);
    run_disk(dir);
    rmdir(dir);
    if (access("/dev/shm", W_OK) == 0)
        run_disk("/dev/shm");
}

static void test_disk_bench_errors(void **state)
{
    (void)state;
    SampleSet s;
    samples_init(&s);
    Err err = {0};
    expect_fit_error(disk_bench("/nonexistent", 1 << 20, 1 << 20, 1, &s, &err), &err,
                     "/nonexistent: expected a directory for the disk benchmark, got No such "
                     "file or directory");
    err_clear(&err);
    expect_fit_error(disk_bench("/tmp", 1 << 20, 1000, 1, &s, &err), &err,
                     "disk: block size: expected a multiple of 4096 bytes, got 1000");
    assert_int_equal(s.n_items, 0);
    samples_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_latency_bw_recovers_parameters),
        cmocka_unit_test(test_fit_latency_bw_exact),
        cmocka_unit_test(test_fit_saturating_recovers_parameters),
        cmocka_unit_test(test_fit_rejects_bad_points),
        cmocka_unit_test(test_samples_summarize),
        cmocka_unit_test(test_derive_calibration_recovers_run),
        cmocka_unit_test(test_derive_single_gpu_collectives),
        cmocka_unit_test(test_derive_gemm_needs_peak),
        cmocka_unit_test(test_samples_csv_round_trip),
        cmocka_unit_test(test_samples_load_errors),
        cmocka_unit_test(test_samples_load_missing_file),
        cmocka_unit_test(test_calibration_json_round_trip),
        cmocka_unit_test(test_plan_sizes_and_shapes),
        cmocka_unit_test(test_plan_peak_estimate),
        cmocka_unit_test(test_compare_predict_by_hand),
        cmocka_unit_test(test_cpu_adam_step_matches_reference),
        cmocka_unit_test(test_cpu_adam_bench_tiny),
        cmocka_unit_test(test_disk_bench_tiny),
        cmocka_unit_test(test_disk_bench_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
