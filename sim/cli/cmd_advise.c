/*
 * cmd_advise.c - `zerosim advise`: which ZeRO stage, offload, micro-batch and checkpointing
 * to use for a model on a cluster, and why.
 *
 * Candidates are DDP, ZeRO-1, -2, -3, ZeRO-2 with the optimizer on the CPU, ZeRO-3 with
 * optimizer and parameters on the CPU, and ZeRO-3 with both on NVMe (when the platform has
 * NVMe), each with and without full activation checkpointing. For each, the analytic estimate
 * picks the largest micro-batch that fits (a power of two dividing the global batch share,
 * when one is given); the candidates that fit are then simulated, each in its own process
 * (SimGrid takes one platform per process), and ranked by throughput (report/advice.h).
 */
#define _POSIX_C_SOURCE 200809L /* fork, pipe */

#include "cli.h"

#include "common/err.h"
#include "engine/engine.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/estimate.h"
#include "report/advice.h"
#include "report/breakdown.h"
#include "report/run_report.h"
#include "schedule/zero_schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const help =
    "usage: zerosim advise --model M --platform P [options]\n"
    "\n"
    "Ranks the ways to train a model on a cluster: DDP, ZeRO-1, -2, -3, ZeRO-2 and ZeRO-3\n"
    "with the optimizer offloaded to the CPU, ZeRO-3 with optimizer and parameters on the\n"
    "CPU, and ZeRO-3 with both on NVMe (ZeRO-Infinity), each with and without full activation\n"
    "checkpointing, at the largest micro-batch that fits. Those that fit are simulated;\n"
    "the table gives fits or not (and what runs out, by how much), step time, TFLOP/s per\n"
    "GPU, memory per GPU, bytes each rank sends and the bottleneck, and a paragraph explains\n"
    "the recommendation in the terms of the ZeRO selection guide.\n"
    "\n"
    "required:\n"
    "  --model M          HuggingFace config.json path or preset (e.g. llama-2-13b)\n"
    "  --platform P       platform JSON path or shipped name (e.g. dgx-a100-80g)\n"
    "options:\n"
    "  --gpus N           resize the platform to N GPUs\n"
    "  --nodes N          resize the platform to N nodes\n"
    "  --global-batch B   sequences per step (micro-batch x accumulation x GPUs); default:\n"
    "                     the largest micro-batch that fits, no accumulation\n"
    "  --seq-len S        tokens per sequence (default: 2048, or the model's context if shorter)\n"
    "  --precision bf16|fp16  (default: bf16 where the GPU has it, else fp16)\n"
    "  --max-micro-batch K    largest micro-batch tried (default 64)\n"
    "  --json FILE|-      also write the table as JSON (with a \"recommended\" object); '-'\n"
    "                     writes only JSON to stdout\n"
    "  --write-config FILE  write the recommended configuration as a ds_config.json,\n"
    "                     ready for `zerosim run --config FILE` and for DeepSpeed\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit codes: 0 success (even when nothing fits: the report says so), 1 bad input file\n"
    "or an output that cannot be written, 2 bad command line, 3 --write-config asked for\n"
    "and nothing fits.\n";

enum {
    OPT_MODEL,
    OPT_PLATFORM,
    OPT_GPUS,
    OPT_NODES,
    OPT_BATCH,
    OPT_SEQ,
    OPT_PRECISION,
    OPT_MAX_MICRO,
    OPT_JSON,
    OPT_WRITE_CONFIG,
    N_OPTS
};

typedef struct Shape {
    int stage;
    OffloadDevice optimizer, param;
} Shape;

static const Shape shapes[] = {
    {0, OFFLOAD_NONE, OFFLOAD_NONE}, {1, OFFLOAD_NONE, OFFLOAD_NONE},
    {2, OFFLOAD_NONE, OFFLOAD_NONE}, {3, OFFLOAD_NONE, OFFLOAD_NONE},
    {2, OFFLOAD_CPU, OFFLOAD_NONE},  {3, OFFLOAD_CPU, OFFLOAD_NONE},
    {3, OFFLOAD_CPU, OFFLOAD_CPU},   {3, OFFLOAD_NVME, OFFLOAD_NVME},
};

/* DeepSpeed needs a swap directory for NVMe offload: a placeholder the user edits. */
#define NVME_PATH_PLACEHOLDER "/local_nvme"

static const char *nvme_path(OffloadDevice d)
{
    return d == OFFLOAD_NVME ? ", \"nvme_path\": \"" NVME_PATH_PLACEHOLDER "\"" : "";
}

/* The DeepSpeed config of one candidate, as a user would write it (an "optimizer" section,
 * since DeepSpeed's offload wants its own CPU optimizer, not a client one). */
static void candidate_text(const Candidate *c, const char *precision, char *text, size_t size)
{
    char offload[400] = "";
    if (c->offload_optimizer != OFFLOAD_NONE)
        snprintf(offload, sizeof offload,
                 ",\n    \"offload_optimizer\": {\"device\": \"%s\", \"pin_memory\": true%s%s},"
                 "\n    \"offload_param\": {\"device\": \"%s\"%s}",
                 ds_config_offload_name(c->offload_optimizer),
                 c->offload_optimizer == OFFLOAD_NVME ? ", \"pipeline_read\": true, "
                                                        "\"pipeline_write\": true"
                                                      : "",
                 nvme_path(c->offload_optimizer), ds_config_offload_name(c->offload_param),
                 nvme_path(c->offload_param));
    snprintf(
        text, size,
        "{\n  \"train_micro_batch_size_per_gpu\": %llu,\n"
        "  \"gradient_accumulation_steps\": %llu,\n"
        "  \"%s\": {\"enabled\": true},\n"
        "  \"optimizer\": {\"type\": \"AdamW\"},\n"
        "  \"zero_optimization\": {\n    \"stage\": %d,\n    \"overlap_comm\": true%s\n  }\n}\n",
        (unsigned long long)c->micro_batch, (unsigned long long)c->grad_accum, precision,
        c->zero_stage, offload);
}

/* A candidate's config, parsed like a user's file. */
static int candidate_config(const Candidate *c, const char *precision, TrainConfig *out, Err *err)
{
    char text[1024];
    candidate_text(c, precision, text, sizeof text);
    return ds_config_parse(out, "(advise candidate)", text, strlen(text), err);
}

static void write_text(FILE *out, const void *text)
{
    fputs(text, out);
}

/* Writes the recommended candidate's ds_config.json to `path` and says so on `note`. */
static int write_config(const char *path, const Candidate *best, const char *precision, FILE *note,
                        Err *err)
{
    char text[1024];
    candidate_text(best, precision, text, sizeof text);
    if (cli_write_file(path, "the recommended config", write_text, text, err))
        return -1;
    fprintf(note, "\nwrote %s: the recommended DeepSpeed config", path);
    if (best->offload_optimizer == OFFLOAD_NVME || best->offload_param == OFFLOAD_NVME)
        fprintf(note, "; set nvme_path (" NVME_PATH_PLACEHOLDER ") to the nodes' NVMe mount");
    if (best->is_checkpointed)
        fprintf(note, "; also enable full activation checkpointing in the model "
                      "(--activation-checkpointing full), which ds_config does not express");
    fputc('\n', note);
    return 0;
}

/* Estimates candidate c; fills fits, runs_out, shortfall and the estimated GPU peak. */
static int estimate(Candidate *c, const char *precision, const ModelConfig *model,
                    const Platform *p, uint64_t seq_len, Estimate *out, Err *err)
{
    TrainConfig train;
    if (candidate_config(c, precision, &train, err))
        return -1;
    EstimateOptions opts = {.seq_len = seq_len,
                            .recompute = c->is_checkpointed ? RECOMPUTE_FULL : RECOMPUTE_NONE,
                            .checkpoint_every = 1,
                            .is_flash_attention = true};
    int rc = estimate_build(model, &train, p, &opts, out, err);
    ds_config_fini(&train);
    if (rc)
        return -1;
    c->fits = out->fits;
    c->gpu_bytes = (double)out->gpu_peak;
    const char *what = !out->fits_gpu    ? "gpu"
                       : !out->fits_cpu  ? "cpu"
                       : !out->fits_nvme ? "nvme"
                                         : "";
    snprintf(c->runs_out, sizeof c->runs_out, "%s", what);
    c->shortfall_bytes = !out->fits_gpu    ? (double)(out->gpu_peak - out->gpu_capacity)
                         : !out->fits_cpu  ? (double)(out->cpu_peak - out->cpu_capacity)
                         : !out->fits_nvme ? (double)(out->nvme_peak - out->nvme_capacity)
                                           : 0.0;
    return 0;
}

typedef struct SimResult {
    int ok;
    double step_s, tokens_per_s, tflops_per_gpu, gpu_peak, bytes;
    char bottleneck[40];
    double share;
    char err[ERR_MSG_MAX];
} SimResult;

/* The largest share of rank 0's step. */
static void bottleneck(const Breakdown *b, SimResult *out)
{
    static const char *const colls[] = {"exposed all-reduce", "exposed all-gather",
                                        "exposed reduce-scatter", "exposed broadcast"};
    struct {
        const char *name;
        double s;
    } parts[] = {
        {"compute", b->compute_s},
        {"GPU optimizer", b->optimizer_s},
        {colls[0], b->exposed_coll_s[0]},
        {colls[1], b->exposed_coll_s[1]},
        {colls[2], b->exposed_coll_s[2]},
        {colls[3], b->exposed_coll_s[3]},
        {"PCIe host-to-GPU", b->exposed_h2d_s},
        {"PCIe GPU-to-host", b->exposed_d2h_s},
        {"NVMe read", b->exposed_nvme_read_s},
        {"NVMe write", b->exposed_nvme_write_s},
        {"CPU optimizer", b->exposed_cpu_s},
        {"idle", b->idle_s},
    };
    size_t best = 0;
    for (size_t i = 1; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].s > parts[best].s)
            best = i;
    snprintf(out->bottleneck, sizeof out->bottleneck, "%s", parts[best].name);
    out->share = b->total_s > 0 ? parts[best].s / b->total_s : 0.0;
}

/* In a child process: build, run and summarise one candidate. */
static void simulate_child(const Candidate *c, const char *precision, const ModelConfig *model,
                           const Platform *p, uint64_t seq_len, SimResult *out)
{
    Err err = {0};
    TrainConfig train;
    Estimate est;
    Graph *g = NULL;
    EngineResult r = {0};
    EstimateOptions opts = {.seq_len = seq_len,
                            .recompute = c->is_checkpointed ? RECOMPUTE_FULL : RECOMPUTE_NONE,
                            .checkpoint_every = 1,
                            .is_flash_attention = true};
    ScheduleOptions sched = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1, .has_activations = true};
    EngineOptions eng = {.algo = COLL_ALGO_AUTO};
    if (candidate_config(c, precision, &train, &err))
        goto done;
    if (estimate_build(model, &train, p, &opts, &est, &err) ||
        (g = zero_schedule_build(model, &train, p, &est.setup, &sched, &err)) == NULL ||
        engine_init(p, train.precision, &err) || engine_run(g, &eng, &r, &err)) {
        ds_config_fini(&train);
        goto done;
    }
    RunReport report = {
        .inputs = {model, &train, p, &est, NULL}, .graph = g, .result = &r, .n_steps = 1};
    breakdown_rank(g, &r, 0, &report.breakdown);
    RunMetrics m;
    run_report_metrics(&report, &m);
    out->ok = 1;
    out->step_s = m.step_s;
    out->tokens_per_s = m.tokens_per_s;
    out->tflops_per_gpu = m.tflops_per_gpu;
    out->gpu_peak = m.gpu_peak->peak_bytes;
    for (int k = 0; k < COLL_N_KINDS; k++)
        out->bytes += r.coll_bytes[0][k];
    bottleneck(&report.breakdown, out);
    engine_result_fini(&r);
    ds_config_fini(&train);
done:
    graph_destroy(g);
    if (err.is_set)
        snprintf(out->err, sizeof out->err, "%s", err.msg);
}

static int simulate(Candidate *c, const char *precision, const ModelConfig *model,
                    const Platform *p, uint64_t seq_len, Err *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return err_set(err, "advise: cannot create a pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, "advise: cannot fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        SimResult res = {0};
        simulate_child(c, precision, model, p, seq_len, &res);
        ssize_t w = write(fds[1], &res, sizeof res);
        _exit(w == (ssize_t)sizeof res ? 0 : 1);
    }
    close(fds[1]);
    SimResult res = {0};
    size_t got = 0;
    while (got < sizeof res) {
        ssize_t n = read(fds[0], (char *)&res + got, sizeof res - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != sizeof res || !res.ok)
        return err_set(err, "advise: simulating %s: %s",
                       c->zero_stage == 3 ? "ZeRO-3"
                                          : "a "
                                            "candidate",
                       res.err[0] ? res.err : "the simulation process failed");
    c->is_simulated = true;
    c->step_s = res.step_s;
    c->tokens_per_s = res.tokens_per_s;
    c->tflops_per_gpu = res.tflops_per_gpu;
    c->sim_gpu_peak_bytes = res.gpu_peak;
    c->bytes_per_rank = res.bytes;
    snprintf(c->bottleneck, sizeof c->bottleneck, "%s", res.bottleneck);
    c->bottleneck_share = res.share;
    return 0;
}

static void write_json(FILE *out, const void *advice)
{
    advice_json(out, advice);
}

int cmd_advise(int argc, char **argv)
{
    CliOption o[N_OPTS] = {
        [OPT_MODEL] = {"--model", true, NULL},
        [OPT_PLATFORM] = {"--platform", true, NULL},
        [OPT_GPUS] = {"--gpus", true, NULL},
        [OPT_NODES] = {"--nodes", true, NULL},
        [OPT_BATCH] = {"--global-batch", true, NULL},
        [OPT_SEQ] = {"--seq-len", true, NULL},
        [OPT_PRECISION] = {"--precision", true, NULL},
        [OPT_MAX_MICRO] = {"--max-micro-batch", true, NULL},
        [OPT_JSON] = {"--json", true, NULL},
        [OPT_WRITE_CONFIG] = {"--write-config", true, NULL},
    };
    const char *cmd = "advise";
    int rc = cli_parse(cmd, help, argc, argv, 2, o, N_OPTS);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    if (cli_require(cmd, o, OPT_MODEL, OPT_PLATFORM))
        return EXIT_BAD_USAGE;
    uint64_t gpus = 0, nodes = 0, batch = 0, seq = 0, max_micro = 64;
    if (cli_count(cmd, "--gpus", o[OPT_GPUS].value, &gpus) ||
        cli_count(cmd, "--nodes", o[OPT_NODES].value, &nodes) ||
        cli_count(cmd, "--global-batch", o[OPT_BATCH].value, &batch) ||
        cli_count(cmd, "--seq-len", o[OPT_SEQ].value, &seq) ||
        cli_count(cmd, "--max-micro-batch", o[OPT_MAX_MICRO].value, &max_micro))
        return EXIT_BAD_USAGE;
    const char *precision = o[OPT_PRECISION].value;
    if (precision && strcmp(precision, "bf16") != 0 && strcmp(precision, "fp16") != 0)
        return cli_usage_error(cmd, "--precision: expected bf16 or fp16, got \"%s\"", precision);

    Err err = {0};
    ModelConfig model = {0};
    Platform p;
    if (model_config_load(&model, o[OPT_MODEL].value, cli_data_dir(), &err) ||
        platform_load(&p, o[OPT_PLATFORM].value, cli_data_dir(), &err)) {
        fprintf(stderr, "zerosim: %s\n", err.msg);
        model_config_fini(&model);
        return EXIT_BAD_INPUT;
    }
    int exit_code = EXIT_BAD_USAGE;
    Candidate *cands = NULL;
    if (platform_resize(&p, gpus, nodes, &err))
        goto done;
    const uint64_t n = platform_n_gpus(&p);
    if (batch && batch % n != 0) {
        err_set(&err, "--global-batch %llu: expected a multiple of the %llu GPUs, got %llu",
                (unsigned long long)batch, (unsigned long long)n, (unsigned long long)batch);
        goto done;
    }
    if (precision == NULL)
        precision = p.gpu.bf16_flops_per_s > 0 ? "bf16" : "fp16";
    if (seq == 0)
        seq = model_config_default_seq_len(&model);
    exit_code = EXIT_BAD_INPUT;

    size_t n_shapes = sizeof shapes / sizeof shapes[0], n_cands = 0;
    cands = calloc(2 * n_shapes, sizeof *cands);
    if (cands == NULL)
        goto done;
    for (size_t s = 0; s < n_shapes; s++) {
        if (shapes[s].optimizer == OFFLOAD_NVME && p.nvme.n_drives == 0)
            continue;
        for (int ckpt = 0; ckpt < 2; ckpt++) {
            Candidate best = {0}, c = {0};
            c.zero_stage = shapes[s].stage;
            c.offload_optimizer = shapes[s].optimizer;
            c.offload_param = shapes[s].param;
            c.is_checkpointed = ckpt;
            bool found = false;
            Estimate est;
            /* largest power-of-two micro-batch that fits (and divides the per-GPU share) */
            for (uint64_t mb = 1; mb <= max_micro; mb *= 2) {
                uint64_t share = batch ? batch / n : mb;
                if (share % mb != 0)
                    break;
                c.micro_batch = mb;
                c.grad_accum = share / mb;
                if (estimate(&c, precision, &model, &p, seq, &est, &err))
                    goto done;
                if (!c.fits)
                    break;
                best = c;
                found = true;
            }
            if (!found) { /* the smallest, which does not fit: say by how much */
                c.micro_batch = 1;
                c.grad_accum = batch ? batch / n : 1;
                if (estimate(&c, precision, &model, &p, seq, &est, &err))
                    goto done;
                best = c;
            }
            cands[n_cands++] = best;
        }
    }
    for (size_t i = 0; i < n_cands; i++)
        if (cands[i].fits && simulate(&cands[i], precision, &model, &p, seq, &err))
            goto done;

    ModelParams params;
    params_count(&model, &params);
    Advice advice = {&model, &p, (double)params.total, seq, batch, cands, n_cands};
    advice_rank(&advice);
    const char *json = o[OPT_JSON].value;
    exit_code = EXIT_OK;
    if (json && strcmp(json, "-") == 0) {
        advice_json(stdout, &advice);
    } else {
        advice_text(stdout, &advice);
        if (json)
            exit_code = cli_write_file(json, "the JSON report", write_json, &advice, &err);
    }
    const char *config_path = o[OPT_WRITE_CONFIG].value;
    if (exit_code == EXIT_OK && config_path) {
        if (n_cands == 0 || !cands[0].fits) {
            fprintf(stderr,
                    "zerosim advise: --write-config: nothing fits, so no config was written\n");
            exit_code = EXIT_OUT_OF_MEMORY;
        } else if (write_config(config_path, &cands[0], precision,
                                /* stdout holds only JSON with --json - */
                                json && strcmp(json, "-") == 0 ? stderr : stdout, &err)) {
            exit_code = EXIT_BAD_INPUT;
        }
    }
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    free(cands);
    model_config_fini(&model);
    return exit_code;
}
