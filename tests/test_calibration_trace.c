/*
 * test_calibration_trace.c - zerosim-calibrate --from-trace: the Kineto trace reader
 * (calibrate/kineto.c) and the fits and summary made from a trace (calibrate/trace_fit.c).
 *
 * Two kinds of input:
 *  - a synthetic trace that this test writes from a known parameter set (bf16 GEMM r_inf and
 *    n_1/2, pinned copy latency and bandwidth, an 8-GPU all-reduce, launch cost and latency,
 *    per-step fixed work), with 1% noise on the GPU times: the fits and the summary must give
 *    the parameters back within 2%, from the plain file and from its gzip;
 *  - real traces from HolisticTraceAnalysis' test data (tests/calibration/SOURCES.md): the
 *    counts, medians and step figures asserted below were computed from the same files by an
 *    independent script (a few lines of Python over the JSON), not by this code.
 * Bad input fails with one line naming the file, the key and what was expected.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "calibrate/calib_json.h"
#include "calibrate/kineto.h"
#include "calibrate/trace_fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static void assert_within(double got, double want, double tolerance, const char *what)
{
    double rel = fabs(got - want) / fabs(want);
    if (rel > tolerance)
        fprintf(stderr, "%s: got %.6g, want %.6g (%.2f%% off)\n", what, got, want, 100 * rel);
    assert_true(rel <= tolerance);
}

/* ---- the synthetic trace ---- */

/* The known parameters. */
#define GEMM_RATE_MAX 600e12 /* FLOP/s, bf16 asymptote */
#define GEMM_HALF_FLOPS 3e10 /* n_1/2 */
#define H2D_LATENCY_S 2.5e-6
#define H2D_BW 24e9
#define AR_LATENCY_S 30e-6
#define AR_ALGBW 120e9
#define AR_GPUS 8
#define LAUNCH_API_S 4.5e-6      /* cudaLaunchKernel's host duration */
#define LAUNCH_LATENCY_S 6.25e-6 /* launch call start -> kernel start on an idle GPU */
#define HOST_GAP_S 3e-6          /* host time between a GPU op's end and the next launch */
#define STEP_FIXED_S 800e-6      /* host work at each step's start, before the first launch */
#define N_STEPS 3
#define PEAK_BF16 989e12 /* the "platform" peak the efficiency is relative to */

typedef struct Gen {
    FILE *f;
    gzFile gz;
    double t_us; /* host clock */
    uint64_t corr, ext;
    unsigned seed;
    bool is_first;
    uint64_t n_ops; /* GPU ops in the current step */
    double busy_s;
} Gen;

static void out(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out(Gen *g, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (g->gz != NULL)
        gzputs(g->gz, buf);
    else
        fputs(buf, g->f);
}

static void event(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void event(Gen *g, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out(g, "%s\n  %s", g->is_first ? "" : ",", buf);
    g->is_first = false;
}

/* Deterministic noise in [-1, 1] (an LCG: the same trace on every machine). */
static double noise(Gen *g)
{
    g->seed = g->seed * 1103515245u + 12345u;
    return ((g->seed >> 8) & 0xffff) / 32767.5 - 1.0;
}

/* A base like recent Kineto's (ts relative to baseTimeNanoseconds): microsecond timestamps
 * near 4.5e12 keep nanoseconds in a double. */
#define BASE_US 4458676983543.0

/* One GPU op launched now: the runtime call, then the GPU activity LAUNCH_LATENCY_S later;
 * the host waits for it and HOST_GAP_S more. `gpu` is the activity's cat, name and args. */
static void launch(Gen *g, const char *api, const char *cat, const char *name, double dur_s,
                   const char *args)
{
    uint64_t c = ++g->corr;
    event(g,
          "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":100,\"tid\":100,"
          "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"External id\":%llu,\"correlation\":%llu}}",
          api, BASE_US + g->t_us, 1e6 * LAUNCH_API_S, (unsigned long long)g->ext,
          (unsigned long long)c);
    double start_us = g->t_us + 1e6 * LAUNCH_LATENCY_S;
    event(g,
          "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%.3f,"
          "\"dur\":%.3f,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%llu%s%s}}",
          cat, name, BASE_US + start_us, 1e6 * dur_s, (unsigned long long)c, args[0] ? "," : "",
          args);
    g->t_us = start_us + 1e6 * dur_s + 1e6 * HOST_GAP_S;
    g->n_ops++;
    g->busy_s += dur_s;
}

static const int gemm_shapes[][3] = {{512, 512, 512},    {1024, 1024, 1024}, {1536, 1536, 1536},
                                     {2048, 2048, 2048}, {3072, 3072, 3072}, {4096, 4096, 4096},
                                     {6144, 6144, 6144}, {8192, 8192, 8192}, {4096, 2048, 1024},
                                     {2048, 8192, 4096}, {1024, 512, 4096},  {8192, 1024, 2048}};
#define N_GEMM_SHAPES (sizeof gemm_shapes / sizeof gemm_shapes[0])

static void gemm(Gen *g, const int *s, bool is_split)
{
    double m = s[0], n = s[1], k = s[2], flops = 2 * m * n * k;
    double t = (flops + GEMM_HALF_FLOPS) / GEMM_RATE_MAX * (1 + 0.01 * noise(g));
    uint64_t ext = ++g->ext;
    /* aten::mm(self [m, k], mat2 [k, n]); its span holds the launches. */
    double op_start = g->t_us - 1.0;
    char dims[160];
    snprintf(dims, sizeof dims,
             "\"Input Dims\":[[%d,%d],[%d,%d]],\"Input type\":"
             "[\"c10::BFloat16\",\"c10::BFloat16\"]",
             s[0], s[2], s[2], s[1]);
    launch(g, "cudaLaunchKernel", "kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
           is_split ? 0.9 * t : t, "");
    if (is_split) /* a split-K GEMM: its reduction kernel is part of the GEMM's time */
        launch(g, "cudaLaunchKernel", "kernel", "void splitKreduce_kernel<32, 16, float>()",
               0.1 * t, "");
    event(g,
          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":100,\"tid\":100,"
          "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"External id\":%llu,%s}}",
          BASE_US + op_start, g->t_us - op_start - 1.0, (unsigned long long)ext, dims);
}

static void write_trace(Gen *g, uint64_t *n_ops_per_step, double *busy_per_step)
{
    g->t_us = 0;
    g->corr = 1000;
    g->seed = 12345;
    g->is_first = true;
    out(g, "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"Synthetic "
           "H200\"}],\n\"traceEvents\":[");
    for (int step = 0; step < N_STEPS; step++) {
        double step_start = g->t_us;
        g->n_ops = 0;
        g->busy_s = 0;
        g->t_us += 1e6 * STEP_FIXED_S;
        for (size_t i = 0; i < N_GEMM_SHAPES; i++)
            gemm(g, gemm_shapes[i], i % 2 == 1);
        for (int e = 0; e < 5; e++)
            launch(g, "cudaLaunchKernel", "kernel",
                   "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor>",
                   20e-6, "");
        for (double bytes = 65536; bytes <= 268435456; bytes *= 4) {
            double t = (H2D_LATENCY_S + bytes / H2D_BW) * (1 + 0.01 * noise(g));
            char args[64];
            snprintf(args, sizeof args, "\"bytes\":%.0f", bytes);
            launch(g, "cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", t, args);
        }
        for (double bytes = 1 << 20; bytes <= (1 << 30); bytes *= 4) {
            double t = (AR_LATENCY_S + bytes / AR_ALGBW) * (1 + 0.01 * noise(g));
            char args[256];
            snprintf(args, sizeof args,
                     "\"Collective name\":\"allreduce\",\"In msg nelems\":%.0f,"
                     "\"Out msg nelems\":%.0f,\"Group size\":%d,\"dtype\":\"BFloat16\"",
                     bytes / 2, bytes / 2, AR_GPUS);
            launch(g, "cudaLaunchKernel", "kernel",
                   "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", t,
                   args);
        }
        event(g,
              "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
              "\"pid\":100,\"tid\":100,\"ts\":%.3f,\"dur\":%.3f,\"args\":{}}",
              10 + step, BASE_US + step_start, g->t_us - step_start);
        n_ops_per_step[step] = g->n_ops;
        busy_per_step[step] = g->busy_s;
    }
    out(g, "\n]}\n");
}

static char path_plain[64], path_gz[64];
static uint64_t step_ops[N_STEPS];
static double step_busy[N_STEPS];

static int setup_synthetic(void **state)
{
    (void)state;
    snprintf(path_plain, sizeof path_plain, "/tmp/zerosim_trace_%ld.json", (long)getpid());
    snprintf(path_gz, sizeof path_gz, "/tmp/zerosim_trace_%ld.json.gz", (long)getpid());
    Gen g = {0};
    g.f = fopen(path_plain, "w");
    if (g.f == NULL)
        return -1;
    write_trace(&g, step_ops, step_busy);
    fclose(g.f);
    Gen z = {0};
    z.gz = gzopen(path_gz, "wb");
    if (z.gz == NULL)
        return -1;
    write_trace(&z, step_ops, step_busy);
    gzclose(z.gz);
    return 0;
}

static int teardown_synthetic(void **state)
{
    (void)state;
    unlink(path_plain);
    unlink(path_gz);
    return 0;
}

static void check_synthetic(const char *path)
{
    KinetoTrace t;
    Err err = {0};
    if (kineto_load(&t, path, &err))
        fprintf(stderr, "%s\n", err.msg);
    assert_false(err.is_set);
    size_t per_step = 2 * N_GEMM_SHAPES - N_GEMM_SHAPES / 2 + 5 + 7 + 6;
    assert_int_equal(t.n_ops, N_STEPS * per_step);
    assert_int_equal(t.n_steps, N_STEPS);
    assert_string_equal(t.device_name, "Synthetic H200");
    assert_int_equal(t.n_gemm_ops, N_STEPS * N_GEMM_SHAPES);

    SampleSet s;
    memset(&s, 0, sizeof s);
    s.meta.gemm[CALIB_BF16].peak_flops_per_s = PEAK_BF16;
    TraceSummary sum;
    assert_int_equal(trace_fit_samples(&t, &s, &sum, &err), 0);
    assert_string_equal(s.meta.mode, "trace");
    assert_string_equal(s.meta.system.gpus[0], "Synthetic H200");
    /* Classes: the split-K reduction counts as GEMM (launched inside aten::mm). */
    assert_int_equal(sum.n_by_class[KINETO_GEMM], N_STEPS * (N_GEMM_SHAPES + N_GEMM_SHAPES / 2));
    assert_int_equal(sum.n_by_class[KINETO_ELEMENTWISE], N_STEPS * 5);
    assert_int_equal(sum.n_by_class[KINETO_MEMCPY], N_STEPS * 7);
    assert_int_equal(sum.n_by_class[KINETO_NCCL], N_STEPS * 6);
    assert_int_equal(sum.n_nccl_sized, N_STEPS * 6);
    /* One sample per distinct operation, its occurrences (one a step) as repetitions. */
    assert_int_equal(s.n_items, N_GEMM_SHAPES + 7 + 6);
    for (size_t i = 0; i < s.n_items; i++)
        assert_int_equal(s.items[i].reps, N_STEPS);

    /* Launches: every kernel but NCCL was launched onto an idle GPU. */
    size_t kernels_per_step = per_step - 7;
    assert_int_equal(sum.n_launches, N_STEPS * kernels_per_step);
    assert_within(sum.launch_median_s, LAUNCH_API_S, 0.02, "launch cost");
    assert_int_equal(sum.n_idle_launches, N_STEPS * (kernels_per_step - 6));
    assert_within(sum.latency_median_s, LAUNCH_LATENCY_S, 0.02, "launch latency");
    /* Steps: idle = fixed work + every op's launch latency and host gap. */
    for (int i = 0; i < N_STEPS; i++) {
        double idle = STEP_FIXED_S + (double)step_ops[i] * (LAUNCH_LATENCY_S + HOST_GAP_S);
        assert_within(sum.steps[i].idle_s, idle, 0.02, "step idle");
        assert_within(sum.steps[i].busy_s, step_busy[i], 0.02, "step busy");
        assert_int_equal(sum.steps[i].n_kernels, step_ops[i]);
    }

    /* The fits give the parameters back. */
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    assert_int_equal(trace_fit_derive(&s, &c, &notes, &err), 0);
    assert_int_equal(notes.n_items, 0);
    const CalibGemm *gm = &c.gemm[CALIB_BF16];
    assert_true(gm->is_present);
    assert_within(gm->peak_efficiency * gm->peak_flops_per_s, GEMM_RATE_MAX, 0.02, "r_inf");
    assert_within(gm->half_size_flops, GEMM_HALF_FLOPS, 0.02, "n_1/2");
    assert_int_equal(gm->fit.n_points, N_GEMM_SHAPES);
    const CalibCopy *h2d = &c.copy[CALIB_H2D_PINNED];
    assert_true(h2d->is_present);
    assert_within(h2d->latency_s, H2D_LATENCY_S, 0.02, "h2d latency");
    assert_within(h2d->bw_bytes_per_s, H2D_BW, 0.02, "h2d bandwidth");
    const CalibCollectiveFit *ar = &c.collective[CALIB_ALL_REDUCE];
    assert_true(ar->is_present);
    assert_int_equal(ar->n_gpus, AR_GPUS);
    assert_within(ar->latency_s, AR_LATENCY_S, 0.02, "all-reduce latency");
    assert_within(ar->alpha_s, AR_LATENCY_S / (2 * (AR_GPUS - 1)), 0.02, "all-reduce alpha");
    assert_within(ar->algbw_bytes_per_s, AR_ALGBW, 0.02, "all-reduce algbw");
    assert_within(ar->busbw_bytes_per_s, AR_ALGBW * 2 * (AR_GPUS - 1) / AR_GPUS, 0.02, "busbw");
    assert_false(c.copy[CALIB_D2D].is_present);

    /* The JSON it writes reads back through the simulator's loader. */
    char json[80];
    snprintf(json, sizeof json, "%s.cal.json", path);
    assert_int_equal(calib_json_save(&c, json, &err), 0);
    Calibration back;
    assert_int_equal(calibration_load(&back, json, &err), 0);
    assert_string_equal(back.mode, "trace");
    assert_true(back.gemm[CALIB_BF16].is_present);
    assert_true(back.collective[CALIB_ALL_REDUCE].is_present);
    unlink(json);
    strlist_fini(&notes);
    samples_fini(&s);
    kineto_fini(&t);
}

static void test_synthetic_trace_recovers_parameters(void **state)
{
    (void)state;
    check_synthetic(path_plain);
}

static void test_synthetic_gzip_trace_recovers_parameters(void **state)
{
    (void)state;
    check_synthetic(path_gz);
}

/* Without a GEMM peak (no --platform), the GEMM group is noted and left out; the rest fits. */
static void test_gemm_without_peak_is_noted(void **state)
{
    (void)state;
    KinetoTrace t;
    Err err = {0};
    assert_int_equal(kineto_load(&t, path_plain, &err), 0);
    SampleSet s;
    memset(&s, 0, sizeof s);
    TraceSummary sum;
    assert_int_equal(trace_fit_samples(&t, &s, &sum, &err), 0);
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    assert_int_equal(trace_fit_derive(&s, &c, &notes, &err), 0);
    assert_int_equal(notes.n_items, 1);
    assert_string_equal(notes.items[0],
                        "gemm bf16: not fitted: gemm bf16: expected the GPU's peak FLOP/s "
                        "(metadata peak_flops_per_s.bf16), got none");
    assert_false(c.gemm[CALIB_BF16].is_present);
    assert_true(c.copy[CALIB_H2D_PINNED].is_present);
    strlist_fini(&notes);
    samples_fini(&s);
    kineto_fini(&t);
}

/* ---- classification ---- */

static void test_classify_kernel_names(void **state)
{
    (void)state;
    assert_int_equal(kineto_classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
                     KINETO_NCCL);
    assert_int_equal(kineto_classify_kernel("void pytorch_flash::flash_fwd_kernel<...>"),
                     KINETO_ATTENTION);
    assert_int_equal(kineto_classify_kernel("fmha_cutlassF_bf16_aligned_64x128_rf_sm80"),
                     KINETO_ATTENTION);
    assert_int_equal(kineto_classify_kernel("ampere_sgemm_32x128_tn"), KINETO_GEMM);
    assert_int_equal(kineto_classify_kernel("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN"),
                     KINETO_GEMM);
    assert_int_equal(kineto_classify_kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>"),
                     KINETO_GEMM);
    assert_int_equal(kineto_classify_kernel("void at::native::reduce_kernel<512, 1>"),
                     KINETO_ELEMENTWISE);
    assert_int_equal(kineto_copy_route("Memcpy HtoD (Pinned -> Device)"), CALIB_H2D_PINNED);
    assert_int_equal(kineto_copy_route("Memcpy DtoH (Device -> Pageable)"), CALIB_D2H_PAGEABLE);
    assert_int_equal(kineto_copy_route("Memcpy DtoD (Device -> Device)"), CALIB_D2D);
    assert_int_equal(kineto_copy_route("Memcpy PtoP (Device -> Device)"), -1);
    assert_int_equal(kineto_collective("allreduce"), CALIB_ALL_REDUCE);
    assert_int_equal(kineto_collective("_allgather_base"), CALIB_ALL_GATHER);
    assert_int_equal(kineto_collective("reduce_scatter_tensor_coalesced"), CALIB_REDUCE_SCATTER);
    assert_int_equal(kineto_collective("all_to_all"), -1);
    assert_true(kineto_dtype_bytes("BFloat16") == 2 && kineto_dtype_bytes("Float") == 4 &&
                kineto_dtype_bytes("Long") == 8 && kineto_dtype_bytes("Quaternion") == 0);
}

/* ---- real traces (tests/calibration/SOURCES.md) ---- */

static void load_fixture(const char *name, KinetoTrace *t, SampleSet *s, TraceSummary *sum)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/calibration/%s", ZEROSIM_SOURCE_DIR, name);
    Err err = {0};
    if (kineto_load(t, path, &err))
        fprintf(stderr, "%s\n", err.msg);
    assert_false(err.is_set);
    memset(s, 0, sizeof *s);
    s->meta.gemm[CALIB_FP32].peak_flops_per_s = 19.5e12; /* A100 fp32, NVIDIA datasheet */
    trace_fit_samples(t, s, sum, &err);
}

/* A recommendation model on an A100, 2 steps (HTA tests/data/trace_filter). */
static void test_hta_sampled_rank0(void **state)
{
    (void)state;
    KinetoTrace t;
    SampleSet s;
    TraceSummary sum;
    load_fixture("hta_sampled_rank0.json.gz", &t, &s, &sum);
    assert_int_equal(t.n_ops, 1204);
    assert_int_equal(sum.n_by_class[KINETO_NCCL], 10);
    assert_int_equal(sum.n_by_class[KINETO_MEMCPY], 40);
    assert_int_equal(sum.n_by_class[KINETO_MEMSET], 10);
    assert_int_equal(sum.n_launches, 1154);
    assert_true(sum.launch_median_s == 7e-6);
    assert_int_equal(sum.n_steps, 2);
    assert_string_equal(sum.steps[0].name, "ProfilerStep#551");
    assert_within(sum.steps[0].dur_s, 0.607312, 1e-9, "step 551");
    assert_within(sum.steps[0].busy_s, 0.278680, 1e-9, "step 551 busy");
    assert_within(sum.steps[1].dur_s, 0.622928, 1e-9, "step 552");
    assert_within(sum.steps[1].busy_s, 0.268976, 1e-9, "step 552 busy");
    /* fp32 mm/addmm kernels inside ops with shapes, and their distinct shapes. */
    assert_int_equal(sum.n_gemm_shaped, 386);
    size_t n_gemm = 0, n_h2d_pinned = 0;
    for (size_t i = 0; i < s.n_items; i++) {
        n_gemm += s.items[i].kind == SAMPLE_GEMM;
        n_h2d_pinned += s.items[i].kind == SAMPLE_COPY && s.items[i].name == CALIB_H2D_PINNED;
    }
    assert_int_equal(n_gemm, 166);
    assert_int_equal(n_h2d_pinned, 4);
    Calibration c;
    StrList notes;
    Err err = {0};
    strlist_init(&notes);
    assert_int_equal(trace_fit_derive(&s, &c, &notes, &err), 0);
    assert_true(c.gemm[CALIB_FP32].is_present);
    assert_int_equal(c.gemm[CALIB_FP32].fit.n_points, 166);
    assert_true(c.copy[CALIB_H2D_PINNED].is_present);
    strlist_fini(&notes);
    samples_fini(&s);
    kineto_fini(&t);
}

/* One step of a training run on an A100-SXM4-80GB (HTA negative_queue_length_values_check). */
static void test_hta_a100_step(void **state)
{
    (void)state;
    KinetoTrace t;
    SampleSet s;
    TraceSummary sum;
    load_fixture("hta_a100_step551.json.gz", &t, &s, &sum);
    assert_string_equal(t.device_name, "NVIDIA A100-SXM4-80GB");
    assert_int_equal(t.n_ops, 1375);
    assert_int_equal(sum.n_by_class[KINETO_NCCL], 15);
    assert_int_equal(sum.n_by_class[KINETO_MEMCPY], 250);
    assert_int_equal(sum.n_by_class[KINETO_MEMSET], 50);
    assert_int_equal(sum.n_launches, 358);
    assert_true(sum.launch_median_s == 4e-6);
    assert_int_equal(sum.n_steps, 1);
    assert_within(sum.steps[0].dur_s, 0.216483, 1e-9, "step");
    assert_within(sum.steps[0].busy_s, 0.080262, 1e-9, "step busy");
    assert_int_equal(sum.n_gemm_shaped, 2);
    Calibration c;
    StrList notes;
    Err err = {0};
    strlist_init(&notes);
    assert_int_equal(trace_fit_derive(&s, &c, &notes, &err), 0);
    /* Two GEMM shapes cannot make a curve: noted, left out; copies fit. */
    assert_false(c.gemm[CALIB_FP32].is_present);
    assert_string_equal(notes.items[0], "gemm fp32: not fitted: gemm fp32: expected at least 3 "
                                        "measured sizes to fit, got 2");
    assert_true(c.copy[CALIB_D2D].is_present);
    assert_int_equal(c.copy[CALIB_D2D].fit.n_points, 24);
    strlist_fini(&notes);
    samples_fini(&s);
    kineto_fini(&t);
}

/* NCCL kernels with their collective, size and group (HTA tests/data/nccl_parser_config). */
static void test_hta_nccl_sizes(void **state)
{
    (void)state;
    KinetoTrace t;
    SampleSet s;
    TraceSummary sum;
    load_fixture("hta_a100_nccl.json.gz", &t, &s, &sum);
    assert_int_equal(t.n_ops, 21);
    assert_int_equal(sum.n_nccl_sized, 21);
    assert_within(sum.launch_median_s, 11.862e-6, 1e-9, "launch");
    assert_within(sum.steps[1].busy_s, 12300.029296875e-6, 1e-6, "step 5 busy");
    /* 5 all-reduce sizes and 2 broadcast sizes over 2 GPUs, 3 occurrences each. */
    size_t n_ar = 0, n_bc = 0;
    for (size_t i = 0; i < s.n_items; i++) {
        const Sample *x = &s.items[i];
        assert_int_equal(x->kind, SAMPLE_COLLECTIVE);
        assert_int_equal(x->n, 2);
        assert_int_equal(x->reps, 3);
        n_ar += x->name == CALIB_ALL_REDUCE;
        n_bc += x->name == CALIB_BROADCAST;
        if (x->name == CALIB_ALL_REDUCE && x->size < 3e7)
            assert_true(x->size == 26550272.0 || x->size == 9724160.0 || x->size == 8196000.0 ||
                        x->size == 26255360.0);
    }
    assert_int_equal(n_ar, 5);
    assert_int_equal(n_bc, 2);
    samples_fini(&s);
    kineto_fini(&t);
}

/* ---- bad input ---- */

static void expect_parse_error(const char *text, const char *message)
{
    KinetoTrace t;
    Err err = {0};
    assert_int_equal(kineto_parse(&t, "t.json", text, strlen(text), &err), -1);
    assert_string_equal(err.msg, message);
    kineto_fini(&t);
}

static void test_bad_traces(void **state)
{
    (void)state;
    expect_parse_error("{\"schemaVersion\":1}",
                       "t.json: traceEvents: expected an array of trace events (a PyTorch "
                       "profiler trace), got nothing (key missing)");
    expect_parse_error("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\","
                       "\"ts\":1,\"dur\":2}]}",
                       "t.json: traceEvents: expected GPU activity (\"cat\": \"kernel\", "
                       "\"gpu_memcpy\" or \"gpu_memset\"), got none: was the profiler run with "
                       "ProfilerActivity.CUDA?");
    expect_parse_error("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
                       "\"ts\":1,\"dur\":\"2\"}]}",
                       "t.json: traceEvents[0].dur: expected a number >= 0, got \"2\"");
    KinetoTrace t;
    Err err = {0};
    assert_int_equal(kineto_load(&t, "/nonexistent/trace.json", &err), -1);
    assert_string_equal(err.msg, "/nonexistent/trace.json: cannot open: No such file or directory");
    kineto_fini(&t);

    /* A gzip cut in the middle. */
    char cut[80];
    snprintf(cut, sizeof cut, "/tmp/zerosim_trace_cut_%ld.json.gz", (long)getpid());
    FILE *in = fopen(path_gz, "rb");
    FILE *o = fopen(cut, "wb");
    assert_non_null(in);
    assert_non_null(o);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, in);
    fwrite(buf, 1, n / 2, o);
    fclose(in);
    fclose(o);
    err_clear(&err);
    assert_int_equal(kineto_load(&t, cut, &err), -1);
    char want[160];
    snprintf(want, sizeof want, "%s: expected a complete gzip file, got a truncated one", cut);
    assert_string_equal(err.msg, want);
    kineto_fini(&t);
    unlink(cut);
}

/* Absurd numbers are ignored, not converted: no shape, no size, no undefined cast. */
static void test_absurd_values_are_ignored(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
        "\"ts\":0,\"dur\":10,\"args\":{\"Input Dims\":[[1e30,2],[2,3]],"
        "\"Input type\":[\"float\",\"float\"]}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
        "\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{\"correlation\":1e300}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce\",\"pid\":0,"
        "\"tid\":7,\"ts\":5,\"dur\":3,\"args\":{\"correlation\":1e300,\"device\":-5,"
        "\"stream\":1e300,\"Collective name\":\"allreduce\",\"In msg nelems\":4,"
        "\"Out msg nelems\":4,\"Group size\":1e30,\"dtype\":\"Float\"}}]}";
    KinetoTrace t;
    Err err = {0};
    assert_int_equal(kineto_parse(&t, "t.json", text, strlen(text), &err), 0);
    assert_int_equal(t.n_ops, 1);
    assert_int_equal(t.ops[0].cls, KINETO_NCCL);
    assert_int_equal(t.ops[0].n_gpus, 0);
    assert_true(t.ops[0].bytes == 0);
    assert_int_equal(t.ops[0].device, 0);
    assert_false(t.ops[0].has_launch);
    assert_int_equal(t.n_gemm_ops, 0);
    kineto_fini(&t);
}

static void test_quantile(void **state)
{
    (void)state;
    double x[] = {4, 1, 3, 2};
    assert_true(trace_fit_quantile(x, 4, 0.5) == 2.5);
    assert_true(trace_fit_quantile(x, 4, 0.0) == 1);
    assert_true(trace_fit_quantile(x, 4, 1.0) == 4);
    assert_true(fabs(trace_fit_quantile(x, 4, 0.1) - 1.3) < 1e-12);
    assert_true(trace_fit_quantile(x, 0, 0.5) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_trace_recovers_parameters),
        cmocka_unit_test(test_synthetic_gzip_trace_recovers_parameters),
        cmocka_unit_test(test_gemm_without_peak_is_noted),
        cmocka_unit_test(test_classify_kernel_names),
        cmocka_unit_test(test_hta_sampled_rank0),
        cmocka_unit_test(test_hta_a100_step),
        cmocka_unit_test(test_hta_nccl_sizes),
        cmocka_unit_test(test_bad_traces),
        cmocka_unit_test(test_absurd_values_are_ignored),
        cmocka_unit_test(test_quantile),
    };
    return cmocka_run_group_tests(tests, setup_synthetic, teardown_synthetic);
}
