/*
 * main.c - zerosim-calibrate: measure this node, fit zerosim's cost parameters, write them.
 *
 * Pipeline: options -> BenchPlan -> benchmarks (gpu_*.cu, cpu_adam.c, disk.c) -> SampleSet
 * -> raw samples CSV -> derive (fits) -> calibration JSON -> optional comparison with a
 * platform before and after calibration_apply. `--samples FILE` replaces the measuring with
 * a CSV written earlier, so fits and comparisons can be redone anywhere; `--from-trace FILE`
 * replaces it with the GPU activity of a PyTorch profiler trace (kineto.c, trace_fit.c),
 * fitted group by group, with a summary of launch costs and steps; `--layer MODEL` times one
 * transformer layer of MODEL (layer.c, gpu_layer.cu) beside zerosim's prediction. Exit codes: 0
 * done, 1 bad input file or a benchmark or fit that failed, 2 bad command line, 3 no GPU for the
 * GPU parts (use --cpu-only).
 */
#define _POSIX_C_SOURCE 200809L
#include "calib_json.h"
#include "compare.h"
#include "cpu_adam.h"
#include "derive.h"
#include "disk.h"
#include "gpu.h"
#include "gpu_layer.h"
#include "layer.h"
#include "plan.h"
#include "samples.h"
#include "trace_fit.h"

#include "common/strlist.h"
#include "common/suggest.h"
#include "common/units.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_BAD_USAGE = 2, EXIT_NO_GPU = 3 };

static const char *const help =
    "usage: zerosim-calibrate [options]\n"
    "\n"
    "Measures this node (cuBLAS GEMMs, cudaMemcpy routes, NCCL collectives over all local\n"
    "GPUs, CPU Adam, disk bandwidth), fits zerosim's cost parameters and writes them as a\n"
    "calibration JSON, with the raw samples as CSV beside it (docs/CALIBRATION.md).\n"
    "\n"
    "options:\n"
    "  --quick              the short run: under 2 minutes on one GPU (default: full run)\n"
    "  --cpu-only           only the CPU Adam and disk parts; needs no GPU\n"
    "  --parts LIST         a comma-separated subset of gemm,copies,collectives,cpu_adam,disk\n"
    "  --out FILE           calibration JSON to write (default calibration.json); the samples\n"
    "                       go to FILE with .json replaced by .csv\n"
    "  --samples FILE       fit a samples CSV written earlier instead of measuring\n"
    "  --from-trace FILE    fit the GPU activity of a PyTorch profiler (Kineto) trace, JSON\n"
    "                       or gzip JSON, instead of measuring; also prints GPU time by\n"
    "                       kernel class, kernel-launch cost and latency, and each step's\n"
    "                       GPU busy and idle time. GEMM fits need --platform for the peak\n"
    "  --layer MODEL        time one transformer layer of MODEL (a config path or a shipped\n"
    "                       name) forward and backward at --micro-batch x --seq tokens in\n"
    "                       bf16, kernel by kernel, beside zerosim's prediction on --platform\n"
    "  --compare PLATFORM   print each measured point beside zerosim's prediction on PLATFORM\n"
    "                       (a path or a shipped name), before and after calibration\n"
    "  --platform PLATFORM  take GPU peak FLOP/s from PLATFORM (default: an estimate from the\n"
    "                       SM count and boost clock of GPU 0)\n"
    "  --hidden N           hidden size of the transformer layer whose GEMMs are timed (4096)\n"
    "  --ffn N              its MLP size (4 x hidden)\n"
    "  --micro-batch N      sequences per GEMM (1)\n"
    "  --seq N              sequence length (2048)\n"
    "  --adam-params N      parameters of the CPU Adam benchmark (2^25 quick, 2^27 full)\n"
    "  --threads N          most CPU threads to try (default: all, as OpenMP sees them)\n"
    "  --disk-dir DIR       directory of the disk benchmark (/tmp)\n"
    "  --disk-bytes N       its file size, suffix K, M or G allowed (1G quick, 4G full)\n"
    "  --reps N             timed repetitions per point (5 quick, 10 full)\n"
    "  -h, --help           this text\n"
    "\n"
    "Every default used is printed. exit codes: 0 success, 1 bad input file or failed\n"
    "benchmark, 2 bad command line, 3 no GPU for the GPU parts (run with --cpu-only).\n";

enum { PART_GEMM, PART_COPIES, PART_COLLECTIVES, PART_CPU_ADAM, PART_DISK, N_PARTS };
static const char *const part_names[] = {"gemm", "copies", "collectives", "cpu_adam", "disk", NULL};

typedef struct Options {
    bool is_quick, is_cpu_only;
    bool parts[N_PARTS];
    bool has_parts;
    const char *out, *samples, *trace, *layer, *compare, *platform;
    const char *hidden, *ffn, *micro_batch, *seq, *adam_params, *threads, *disk_dir, *disk_bytes,
        *reps;
} Options;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "zerosim-calibrate: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see zerosim-calibrate --help)\n");
    va_end(ap);
    return EXIT_BAD_USAGE;
}

static int parse_parts(const char *text, bool *parts)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int i = 0;
        while (part_names[i] != NULL && strcmp(part_names[i], tok) != 0)
            i++;
        if (part_names[i] == NULL)
            return usage_error("--parts: expected names among gemm, copies, collectives, "
                               "cpu_adam, disk, got \"%s\"",
                               tok);
        parts[i] = true;
    }
    return 0;
}

static int parse_args(int argc, char **argv, Options *o)
{
    static const char *const flags[] = {"--quick", "--cpu-only", "--help", NULL};
    static const char *const valued[] = {
        "--parts",   "--out",      "--samples",     "--compare", "--platform",
        "--hidden",  "--ffn",      "--micro-batch", "--seq",     "--adam-params",
        "--threads", "--disk-dir", "--disk-bytes",  "--reps",    "--from-trace",
        "--layer",   NULL};
    const char **slots[] = {NULL,           &o->out,         &o->samples, &o->compare,
                            &o->platform,   &o->hidden,      &o->ffn,     &o->micro_batch,
                            &o->seq,        &o->adam_params, &o->threads, &o->disk_dir,
                            &o->disk_bytes, &o->reps,        &o->trace,   &o->layer};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(help, stdout);
            return -1;
        }
        if (strcmp(a, "--quick") == 0) {
            o->is_quick = true;
            continue;
        }
        if (strcmp(a, "--cpu-only") == 0) {
            o->is_cpu_only = true;
            continue;
        }
        int k = 0;
        while (valued[k] != NULL && strcmp(valued[k], a) != 0)
            k++;
        if (valued[k] == NULL) {
            const char *best = suggest_closest(a, valued);
            if (best == NULL)
                best = suggest_closest(a, flags);
            if (best != NULL)
                return usage_error("unknown option \"%s\" (did you mean \"%s\"?)", a, best);
            return usage_error("unknown option \"%s\"", a);
        }
        if (i + 1 >= argc)
            return usage_error("%s: expected a value, got nothing", a);
        if (k == 0) {
            o->has_parts = true;
            if (parse_parts(argv[++i], o->parts))
                return EXIT_BAD_USAGE;
        } else {
            *slots[k] = argv[++i];
        }
    }
    return 0;
}

/* A positive integer with an optional K/M/G (binary) suffix when is_bytes. */
static int parse_count(const char *option, const char *text, bool is_bytes, uint64_t *out)
{
    if (text == NULL)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    uint64_t mul = 1;
    if (is_bytes && end != NULL && end[0] != '\0' && end[1] == '\0') {
        mul = end[0] == 'K' || end[0] == 'k'   ? 1024ull
              : end[0] == 'M' || end[0] == 'm' ? 1024ull * 1024
              : end[0] == 'G' || end[0] == 'g' ? 1024ull * 1024 * 1024
                                               : 0;
        if (mul != 0)
            end++;
    }
    if (text[0] < '0' || text[0] > '9' || end == NULL || *end != '\0' || errno == ERANGE ||
        v == 0 || mul == 0 || v > UINT64_MAX / mul)
        return usage_error("%s: expected %s, got \"%s\"", option,
                           is_bytes ? "a size > 0 (suffix K, M or G allowed)" : "an integer > 0",
                           text);
    *out = (uint64_t)v * mul;
    return 0;
}

static void host_facts(Calibration *m, bool is_quick, bool is_cpu_only)
{
    time_t now = time(NULL);
    struct tm tm_utc;
    gmtime_r(&now, &tm_utc);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
    if (gethostname(m->host, sizeof m->host) != 0)
        snprintf(m->host, sizeof m->host, "unknown");
    m->host[sizeof m->host - 1] = '\0';
    snprintf(m->mode, sizeof m->mode, "%s", is_cpu_only ? "cpu-only" : is_quick ? "quick" : "full");
    snprintf(m->tool_version, sizeof m->tool_version, "%s", ZEROSIM_VERSION_STRING);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->system.cpu_threads = n > 0 ? (uint64_t)n : 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':') != NULL) {
            const char *v = strchr(line, ':') + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(m->system.cpu_model, sizeof m->system.cpu_model, "%.*s", (int)strcspn(v, "\n"),
                     v);
            break;
        }
    }
    if (f != NULL)
        fclose(f);
}

/* "calibration.json" -> "calibration.csv"; other names get ".csv" appended. */
static void csv_path_for(const char *json_path, char *out, size_t size)
{
    size_t n = strlen(json_path);
    if (n > 5 && strcmp(json_path + n - 5, ".json") == 0)
        snprintf(out, size, "%.*s.csv", (int)(n - 5), json_path);
    else
        snprintf(out, size, "%s.csv", json_path);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void print_fits(const Calibration *c)
{
    printf("fits (docs/CALIBRATION.md):\n");
    for (int i = 0; i < CALIB_N_PRECISIONS; i++) {
        const CalibGemm *g = &c->gemm[i];
        if (g->is_present)
            printf("  gemm %-14s %.1f%% of %.4g TFLOP/s peak (%.4g TFLOP/s), half at %.3g "
                   "FLOPs; R^2 %.4f, rms residual %.1f%%, max %.1f%% over %llu\n",
                   calibration_precision_names[i], 100 * g->peak_efficiency,
                   g->peak_flops_per_s / 1e12, g->peak_efficiency * g->peak_flops_per_s / 1e12,
                   g->half_size_flops, g->fit.r2, 100 * g->fit.rms_rel_residual,
                   100 * g->fit.max_rel_residual, (unsigned long long)g->fit.n_points);
    }
    for (int i = 0; i < CALIB_N_COPY_ROUTES; i++) {
        const CalibCopy *x = &c->copy[i];
        if (x->is_present)
            printf("  copy %-14s latency %.3g us, %.2f GB/s; R^2 %.4f, rms residual %.1f%%, "
                   "max %.1f%% over %llu\n",
                   calibration_copy_names[i], 1e6 * x->latency_s, x->bw_bytes_per_s / 1e9,
                   x->fit.r2, 100 * x->fit.rms_rel_residual, 100 * x->fit.max_rel_residual,
                   (unsigned long long)x->fit.n_points);
    }
    for (int i = 0; i < CALIB_N_COLLECTIVES; i++) {
        const CalibCollectiveFit *x = &c->collective[i];
        if (x->is_present)
            printf("  %-19s %llu GPU%s: latency %.3g us (alpha %.3g us), algbw %.2f GB/s, "
                   "busbw %.2f GB/s; R^2 %.4f, rms residual %.1f%%\n",
                   calibration_collective_names[i], (unsigned long long)x->n_gpus,
                   x->n_gpus == 1 ? "" : "s", 1e6 * x->latency_s, 1e6 * x->alpha_s,
                   x->algbw_bytes_per_s / 1e9, x->busbw_bytes_per_s / 1e9, x->fit.r2,
                   100 * x->fit.rms_rel_residual);
    }
    if (c->cpu_adam.is_present)
        printf("  cpu_adam            %.4g params/s with %llu threads = %.4g params/s per "
               "core\n",
               c->cpu_adam.params_per_s, (unsigned long long)c->cpu_adam.threads,
               c->cpu_adam.params_per_s_per_core);
    if (c->disk.is_present)
        printf("  disk                read %.2f GB/s, write %.2f GB/s (%s, %s)\n",
               c->disk.read_bw_bytes_per_s / 1e9, c->disk.write_bw_bytes_per_s / 1e9, c->disk.dir,
               c->disk.is_direct ? "O_DIRECT" : "buffered");
}

static const char *data_dir(void)
{
    const char *d = getenv("ZEROSIM_DATA_DIR");
    return d != NULL && d[0] != '\0' ? d : ZEROSIM_DATA_DIR;
}

/* The GEMM peaks of --platform into m, when given. Returns an exit code. */
static int platform_peaks(const Options *o, Calibration *m)
{
    Err err = {0};
    if (o->platform == NULL)
        return EXIT_OK;
    Platform p;
    if (platform_load(&p, o->platform, data_dir(), &err)) {
        fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    static const Precision map[CALIB_N_PRECISIONS] = {PRECISION_BF16, PRECISION_FP16,
                                                      PRECISION_FP32};
    for (int i = 0; i < CALIB_N_PRECISIONS; i++)
        m->gemm[i].peak_flops_per_s = platform_peak_flops_per_s(&p, map[i]);
    if (p.gpu.bf16_flops_per_s <= 0)
        m->gemm[CALIB_BF16].peak_flops_per_s = 0; /* no bf16: estimate or skip */
    snprintf(m->gemm_peak_source, sizeof m->gemm_peak_source, "platform %.40s (%.60s)", p.name,
             p.gpu.model);
    return EXIT_OK;
}

/* Reads the trace into s and prints its summary. Returns an exit code. */
static int from_trace(const Options *o, SampleSet *s)
{
    Err err = {0};
    Calibration meta;
    memset(&meta, 0, sizeof meta);
    host_facts(&meta, false, false);
    meta.host[0] = '\0'; /* the trace's host is not this one */
    meta.system.cpu_model[0] = '\0';
    meta.system.cpu_threads = 0;
    if (platform_peaks(o, &meta) != EXIT_OK) {
        samples_init(s);
        return EXIT_BAD_INPUT;
    }
    KinetoTrace t;
    if (kineto_load(&t, o->trace, &err)) {
        fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
        kineto_fini(&t);
        samples_init(s);
        return EXIT_BAD_INPUT;
    }
    TraceSummary sum;
    s->meta = meta;
    int rc = trace_fit_samples(&t, s, &sum, &err);
    printf("trace %s: %zu GPU activities on %s, %zu steps\n", o->trace, t.n_ops,
           t.device_name[0] ? t.device_name : "an unnamed device", t.n_steps);
    trace_fit_print(&sum, stdout);
    kineto_fini(&t);
    if (rc) {
        fprintf(stderr, "zerosim-calibrate: %s: %s\n", o->trace, err.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* Runs the benchmarks the options ask for into s. Returns an exit code. */
static int measure(const Options *o, const BenchPlan *plan, SampleSet *s)
{
    Err err = {0};
    bool needs_gpu = o->parts[PART_GEMM] || o->parts[PART_COPIES] || o->parts[PART_COLLECTIVES];
    host_facts(&s->meta, plan->is_quick, o->is_cpu_only);
    if (platform_peaks(o, &s->meta) != EXIT_OK)
        return EXIT_BAD_INPUT;
    if (needs_gpu) {
        int n_gpus = gpu_info_probe(s, &err);
        if (n_gpus < 0) {
            fprintf(stderr,
                    "zerosim-calibrate: %s\nzerosim-calibrate: the GPU benchmarks "
                    "(gemm, copies, collectives) need a CUDA GPU; run with --cpu-only for "
                    "the CPU Adam and disk parts\n",
                    err.msg);
            return EXIT_NO_GPU;
        }
        fprintf(stderr,
                "zerosim-calibrate: %d GPU%s, %s; driver %s, CUDA %s, cuBLAS %s, "
                "NCCL %s\n",
                n_gpus, n_gpus == 1 ? "" : "s", s->meta.system.gpus[0],
                s->meta.system.driver_version, s->meta.system.cuda_runtime_version,
                s->meta.system.cublas_version, s->meta.system.nccl_version);
        fprintf(stderr, "zerosim-calibrate: GEMM peaks from %s\n", s->meta.gemm_peak_source);
    }
    int rc = 0;
    if (o->parts[PART_GEMM]) {
        fprintf(stderr,
                "== gemm: layer hidden %llu, ffn %llu, %llu x %llu tokens; square "
                "%llu..%llu\n",
                (unsigned long long)plan->hidden, (unsigned long long)plan->ffn,
                (unsigned long long)plan->micro_batch, (unsigned long long)plan->seq,
                (unsigned long long)plan->sweep_min, (unsigned long long)plan->sweep_max);
        rc = gpu_gemm_bench(plan, s, &err);
    }
    if (rc == 0 && o->parts[PART_COPIES]) {
        fprintf(stderr, "== copies: %llu..%llu bytes\n", (unsigned long long)plan->copy_min_bytes,
                (unsigned long long)plan->copy_max_bytes);
        rc = gpu_copy_bench(plan, s, &err);
        if (rc == 0) {
            fprintf(stderr, "== launch floor: empty kernels back to back\n");
            rc = gpu_launch_bench(plan, s, &err);
        }
    }
    if (rc == 0 && o->parts[PART_COLLECTIVES]) {
        fprintf(stderr, "== collectives: %llu..%llu bytes\n",
                (unsigned long long)plan->coll_min_bytes, (unsigned long long)plan->coll_max_bytes);
        rc = gpu_nccl_bench(plan, s, &err);
    }
    if (rc == 0 && o->parts[PART_CPU_ADAM]) {
        uint32_t threads[32];
        size_t n_threads = plan_threads(plan->adam_max_threads, threads, 32);
        fprintf(stderr, "== cpu_adam: %llu params, up to %u threads\n",
                (unsigned long long)plan->adam_params, plan->adam_max_threads);
        rc = cpu_adam_bench(plan->adam_params, threads, n_threads, plan->warmup, plan->reps, s,
                            &err);
    }
    if (rc == 0 && o->parts[PART_DISK]) {
        fprintf(stderr, "== disk: %llu bytes in %llu-byte blocks in %s\n",
                (unsigned long long)plan->disk_file_bytes,
                (unsigned long long)plan->disk_block_bytes, plan->disk_dir);
        rc = disk_bench(plan->disk_dir, plan->disk_file_bytes, plan->disk_block_bytes,
                        plan->reps < 3 ? plan->reps : 3, s, &err);
    }
    if (rc != 0) {
        fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

static int compare(const Options *o, const SampleSet *s, const Calibration *c)
{
    Err err = {0};
    Platform p, calibrated;
    if (platform_load(&p, o->compare, data_dir(), &err)) {
        fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    calibrated = p;
    int n_changed = calibration_apply(c, &calibrated);
    printf("\n");
    compare_print(s, &p, &calibrated, stdout);
    printf("(calibrated: %d platform field%s overridden by calibration_apply)\n", n_changed,
           n_changed == 1 ? "" : "s");
    return EXIT_OK;
}

/* --layer: one layer of the model, predicted, then timed when a GPU is there. */
static int run_layer(const Options *o, const BenchPlan *plan)
{
    Err err = {0};
    if (o->platform == NULL)
        return usage_error("--layer: expected --platform PLATFORM for zerosim's prediction, got "
                           "none");
    ModelConfig cfg;
    Platform p;
    LayerPlan lp;
    LayerPrediction pred;
    int rc = EXIT_OK;
    memset(&cfg, 0, sizeof cfg);
    if (model_config_load(&cfg, o->layer, data_dir(), &err) ||
        platform_load(&p, o->platform, data_dir(), &err) ||
        layer_plan(&cfg, plan->micro_batch, plan->seq, &lp, &err)) {
        fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
        model_config_fini(&cfg);
        return EXIT_BAD_INPUT;
    }
    layer_predict(&cfg, &lp, &p, &pred);
    model_config_fini(&cfg);
    printf("settings: --layer %s, %llu x %llu tokens, %u repetitions of ~1 ms after 2 warm-up "
           "calls\n",
           o->layer, (unsigned long long)plan->micro_batch, (unsigned long long)plan->seq,
           plan->reps);
    fflush(stdout);
    SampleSet probe;
    samples_init(&probe);
    int n_gpus = gpu_info_probe(&probe, &err);
    samples_fini(&probe);
    if (n_gpus < 1) {
        layer_print(&lp, &pred, NULL, 0, 0, o->platform, stdout);
        fprintf(stderr,
                "zerosim-calibrate: --layer needs a CUDA GPU to time the layer (%s); "
                "only zerosim's prediction is printed\n",
                err.msg);
        return EXIT_NO_GPU;
    }
    double kernel_s[LAYER_MAX_KERNELS], fwd_s = 0, bwd_s = 0;
    if (gpu_layer_run(&lp, plan->reps, kernel_s, &fwd_s, &bwd_s, &err)) {
        fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
        rc = EXIT_BAD_INPUT;
    } else {
        layer_print(&lp, &pred, kernel_s, fwd_s, bwd_s, o->platform, stdout);
    }
    return rc;
}

static int configure(const Options *o, BenchPlan *plan)
{
    uint64_t v = 0;
    plan_init(plan, o->is_quick);
    plan->adam_max_threads = (uint32_t)cpu_adam_max_threads();
    if (parse_count("--hidden", o->hidden, false, &plan->hidden) ||
        parse_count("--micro-batch", o->micro_batch, false, &plan->micro_batch) ||
        parse_count("--seq", o->seq, false, &plan->seq) ||
        parse_count("--adam-params", o->adam_params, false, &plan->adam_params) ||
        parse_count("--disk-bytes", o->disk_bytes, true, &plan->disk_file_bytes))
        return EXIT_BAD_USAGE;
    plan->ffn = 4 * plan->hidden;
    if (parse_count("--ffn", o->ffn, false, &plan->ffn))
        return EXIT_BAD_USAGE;
    if (o->threads != NULL) {
        if (parse_count("--threads", o->threads, false, &v))
            return EXIT_BAD_USAGE;
        if (v > 4096)
            return usage_error("--threads: expected at most 4096, got %s", o->threads);
        plan->adam_max_threads = (uint32_t)v;
    }
    if (o->reps != NULL) {
        if (parse_count("--reps", o->reps, false, &v))
            return EXIT_BAD_USAGE;
        if (v > SAMPLE_MAX_REPS)
            return usage_error("--reps: expected at most %d, got %s", SAMPLE_MAX_REPS, o->reps);
        plan->reps = (uint32_t)v;
    }
    if (plan->hidden > (1u << 20) || plan->ffn > (1u << 22) ||
        plan->micro_batch * plan->seq > (1u << 22))
        return usage_error("--hidden/--ffn/--micro-batch/--seq: expected a layer whose GEMMs "
                           "fit one GPU (hidden <= 2^20, ffn <= 2^22, tokens <= 2^22)");
    if (o->disk_dir != NULL)
        plan->disk_dir = o->disk_dir;
    if (o->samples != NULL || o->trace != NULL || o->layer != NULL)
        return EXIT_OK; /* no benchmark settings to print */
    printf("settings: %s run, %u repetitions after %u warm-up calls, ~%.0f ms each; layer "
           "hidden %llu ffn %llu tokens %llu x %llu; cpu_adam %llu params up to %u threads; "
           "disk %llu bytes in %s\n",
           plan->is_quick ? "quick" : "full", plan->reps, plan->warmup, 1e3 * plan->target_rep_s,
           (unsigned long long)plan->hidden, (unsigned long long)plan->ffn,
           (unsigned long long)plan->micro_batch, (unsigned long long)plan->seq,
           (unsigned long long)plan->adam_params, plan->adam_max_threads,
           (unsigned long long)plan->disk_file_bytes, plan->disk_dir);
    fflush(stdout); /* before the benchmarks' progress on stderr */
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    Options o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? EXIT_OK : rc;
    if (o.is_cpu_only && o.has_parts)
        return usage_error("--cpu-only and --parts: expected one of them, got both");
    if (o.trace != NULL && (o.samples != NULL || o.is_quick || o.is_cpu_only || o.has_parts))
        return usage_error("--from-trace: expected no --samples, --quick, --cpu-only or --parts "
                           "with it, got one");
    if (!o.has_parts)
        for (int i = 0; i < N_PARTS; i++)
            o.parts[i] = !o.is_cpu_only || i == PART_CPU_ADAM || i == PART_DISK;
    if (o.layer != NULL &&
        (o.samples != NULL || o.trace != NULL || o.is_cpu_only || o.has_parts || o.compare != NULL))
        return usage_error("--layer: expected no --samples, --from-trace, --cpu-only, --parts or "
                           "--compare with it, got one");
    if (o.out == NULL)
        o.out = "calibration.json";
    BenchPlan plan;
    if ((rc = configure(&o, &plan)) != EXIT_OK)
        return rc;
    if (o.layer != NULL)
        return run_layer(&o, &plan);

    SampleSet s;
    Err err = {0};
    char csv_path[1024];
    csv_path_for(o.out, csv_path, sizeof csv_path);
    if (o.samples != NULL) {
        if (samples_load_csv(&s, o.samples, &err)) {
            fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
            samples_fini(&s);
            return EXIT_BAD_INPUT;
        }
        snprintf(s.meta.samples_csv, sizeof s.meta.samples_csv, "%s", o.samples);
    } else if (o.trace != NULL) {
        rc = from_trace(&o, &s);
        snprintf(s.meta.samples_csv, sizeof s.meta.samples_csv, "%.255s", base_name(csv_path));
        if (rc == EXIT_OK && samples_save_csv(&s, csv_path, &err) == 0)
            fprintf(stderr, "zerosim-calibrate: samples written to %s\n", csv_path);
        if (rc != EXIT_OK || err.is_set) {
            if (err.is_set)
                fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
            samples_fini(&s);
            return rc != EXIT_OK ? rc : EXIT_BAD_INPUT;
        }
    } else {
        samples_init(&s);
        rc = measure(&o, &plan, &s);
        snprintf(s.meta.samples_csv, sizeof s.meta.samples_csv, "%.255s", base_name(csv_path));
        if (s.n_items > 0 && samples_save_csv(&s, csv_path, &err) == 0)
            fprintf(stderr, "zerosim-calibrate: samples written to %s\n", csv_path);
        if (rc != EXIT_OK || err.is_set) {
            if (err.is_set)
                fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
            samples_fini(&s);
            return rc != EXIT_OK ? rc : EXIT_BAD_INPUT;
        }
    }
    Calibration c;
    StrList notes;
    strlist_init(&notes);
    rc = (o.trace != NULL ? trace_fit_derive(&s, &c, &notes, &err)
                          : derive_calibration(&s, &c, &notes, &err)) ||
                 calib_json_save(&c, o.out, &err)
             ? EXIT_BAD_INPUT
             : EXIT_OK;
    for (size_t i = 0; i < notes.n_items; i++)
        fprintf(stderr, "zerosim-calibrate: note: %s\n", notes.items[i]);
    if (rc != EXIT_OK) {
        fprintf(stderr, "zerosim-calibrate: %s\n", err.msg);
    } else {
        print_fits(&c);
        printf("calibration written to %s\n", o.out);
        if (o.compare != NULL)
            rc = compare(&o, &s, &c);
    }
    strlist_fini(&notes);
    samples_fini(&s);
    return rc;
}
