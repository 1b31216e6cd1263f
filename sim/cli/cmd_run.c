/*
 * cmd_run.c - `zerosim run`: simulate training steps of a ZeRO configuration on SimGrid.
 *
 * inputs -> analytic estimate (for the batch, the sizes and a comparison) -> event graph of
 * the steps (schedule/zero_schedule) -> engine -> breakdown and report, optionally a Chrome
 * trace of chosen ranks.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty, fileno */

#include "cli.h"

#include "common/err.h"
#include "common/xalloc.h"
#include "engine/capacity.h"
#include "engine/engine.h"
#include "inputs/calibration.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/estimate.h"
#include "report/run_html.h"
#include "report/run_report.h"
#include "report/trace.h"
#include "schedule/fsdp.h"
#include "schedule/symmetric.h"
#include "schedule/zero_schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const help =
    "usage: zerosim run --model M --config D --platform P [options]\n"
    "\n"
    "Simulates training steps of a DeepSpeed ZeRO configuration on a SimGrid model of the\n"
    "cluster: every rank's forward, backward, gradient reduction, parameter gathering and\n"
    "optimizer step as an event graph, with contention on NVLink, PCIe, NICs and the\n"
    "fabric. Opens with the verdict: fits, or which memory runs out on which rank and by\n"
    "how much, and the cheapest change that fits (found by re-estimating a smaller\n"
    "micro-batch, activation checkpointing, later ZeRO stages and offload). Prints the step time, tokens/s, TFLOP/s per GPU (Megatron's formula) and MFU,\n"
    "where rank 0's time goes (compute, optimizer, exposed communication by collective,\n"
    "idle), the simulated memory per GPU: the allocated peak with its breakdown, the\n"
    "caching allocator's reserved peak, the CUDA context and NCCL buffers, and whether the\n"
    "sum fits HBM less the headroom, and\n"
    "the bytes each rank sends per collective and per link class.\n"
    "\n"
    "required:\n" CLI_HELP_INPUTS "options:\n" CLI_HELP_SETUP CLI_HELP_MOE CLI_HELP_HEADROOM CLI_HELP_MODULE_LOADING CLI_HELP_ZERO_INIT
    "  --steps K        optimizer steps to simulate back to back (default 1)\n"
    "  --delayed-param-update\n"
    "                   ZeRO-Offload's one-step delayed parameter update: the CPU\n"
    "                   optimizer of step t overlaps step t+1 (use --steps 3 or more)\n"
    "  --fsdp STRATEGY  simulate PyTorch FSDP instead of the config's ZeRO stage:\n"
    "                   FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD (batch and\n"
    "                   precision keys of the config still apply)\n"
    "  --fsdp-backward-prefetch on|off\n"
    "                   FSDP's BACKWARD_PRE prefetch (default on)\n"
    "  --fsdp-param-dtype fp32|bf16|fp16\n"
    "                   FSDP's MixedPrecision.param_dtype (default: the config's 16-bit\n"
    "                   precision, as llm-foundry's PURE and 2023 DEFAULT modes); fp32\n"
    "                   (Composer's FULL) gathers fp32 units that autocast casts at every\n"
    "                   use, and reduces in fp32 unless communication_data_type says\n"
    "                   otherwise (docs/SCHEDULES.md)\n"
    "  --fsdp-version 1|2\n"
    "                   FSDP's implementation (default 1): 2 is fully_shard, whose\n"
    "                   per-parameter shards are copied out of each all-gather on the\n"
    "                   compute stream and into each reduce-scatter (torchtitan;\n"
    "                   docs/SCHEDULES.md)\n"
    "  --schedule deepspeed|textbook\n"
    "                   DeepSpeed's schedules (default) or the seed chapter's textbook\n"
    "                   algorithms, for teaching (docs/SCHEDULES.md)\n"
    "  --expandable-segments\n"
    "                   replay PyTorch's caching allocator with expandable_segments:True\n"
    "                   (PYTORCH_CUDA_ALLOC_CONF) instead of fixed segments (the default)\n"
    "  --calibration FILE\n"
    "                   overlay a zerosim-calibrate result on the platform (GEMM efficiency,\n"
    "                   PCIe, NVLink, CPU Adam and NVMe rates; docs/CALIBRATION.md)\n"
    "  --algo auto|ring|tree|hier|nvls|nvls_tree\n"
    "                   collective algorithm (docs/COLLECTIVES.md); auto, the default,\n"
    "                   is NCCL's choice per collective and size; ring, tree, nvls and\n"
    "                   nvls_tree force NCCL_ALGO (nvls and nvls_tree with --comm-model\n"
    "                   nccl only); hier is zerosim's two-level scheme\n" CLI_HELP_RUN_OPTIONS
    "  --comm-model nccl|ideal\n"
    "                   nccl (default): NCCL's tuning model (algorithms x protocols,\n"
    "                   base and per-hop latency, per-channel bandwidth caps); ideal: the\n"
    "                   seed chapter's fluid ring (steps x route latency + volume / rate)\n"
    "  --mode auto|full|symmetric\n"
    "                   full simulates every rank; symmetric simulates two nodes whose\n"
    "                   collectives carry the volumes and steps of all of them, on the\n"
    "                   per-node fabric (exact for data-parallel steps on a fabric without\n"
    "                   shared bottlenecks, and far faster); auto (default): symmetric\n"
    "                   beyond 4 nodes unless a straggler or an oversubscribed fabric that\n"
    "                   only some ring hops cross breaks the symmetry (the report says why)\n"
    CLI_HELP_JOB
    "  --json FILE|-    also write the JSON report to FILE; '-' writes only JSON to stdout\n"
    "  --html FILE      also write the report as one self-contained HTML page: the\n"
    "                   verdict, where the step goes, GPU memory over time by category,\n"
    "                   bytes per link class and one layer's timeline (inline SVG)\n"
    "  --trace FILE|-   write a Chrome trace (opens in Perfetto) of the traced ranks: streams,\n"
    "                   flows from collectives to the compute they unblock, step markers,\n"
    "                   memory by category, link utilisation (docs/TRACE.md); '-' writes\n"
    "                   only the trace to stdout\n"
    "  --trace-ranks L  ranks to trace: a list like 0,1,8-15 (default 0); in symmetric mode\n"
    "                   only the two simulated nodes' ranks\n"
    "  -h, --help       this text\n"
    "\n"
    "Exit codes: 0 success, 1 bad input file, 2 bad command line, 3 the configuration\n"
    "runs out of memory (the report says which memory, where and by how much).\n";

enum {
    OPT_MODEL,
    OPT_CONFIG,
    OPT_PLATFORM,
    OPT_GPUS,
    OPT_NODES,
    OPT_SEQ_LEN,
    OPT_RECOMPUTE,
    OPT_FLASH,
    OPT_STEPS,
    OPT_SCHEDULE,
    OPT_ALGO,
    OPT_JSON,
    OPT_TRACE,
    OPT_TRACE_RANKS,
    OPT_FSDP,
    OPT_FSDP_PREFETCH,
    OPT_FSDP_PARAM_DTYPE,
    OPT_FSDP_VERSION,
    OPT_DPU,
    OPT_MODE,
    OPT_CALIBRATION,
    OPT_HEADROOM,
    OPT_EXPANDABLE,
    OPT_MICRO_BATCH, /* CLI_TRAIN_OPTIONS, in their order */
    OPT_PRECISION = OPT_MICRO_BATCH + CLI_N_TRAIN_OPTIONS - 1,
    OPT_EP_SIZE,
    OPT_CAPACITY,
    OPT_IMBALANCE,
    OPT_COMM_MODEL,
    OPT_DS_VERSION,
    OPT_RING_ORDER,
    OPT_STRAGGLER,
    OPT_HTML,
    OPT_MODULE_LOADING,
    OPT_ZERO_INIT,
    N_OPTS
};

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void write_text(FILE *out, const void *report)
{
    run_report_text(out, report);
}

static void write_json(FILE *out, const void *report)
{
    run_report_json(out, report);
}

static void write_html(FILE *out, const void *report)
{
    run_html_write(out, report);
}

/* The command line, parsed and checked: everything that needs no input file. */
typedef struct RunArgs {
    CliOption o[N_OPTS];
    uint64_t gpus, nodes, steps;
    EstimateOptions est_opts;
    TrainOverrides overrides;
    DsRelease release; /* --deepspeed-version: whose defaults absent keys get */
    ScheduleOptions sched;
    EngineOptions eng;
    int fsdp, prefetch, mode;
    int param_dtype; /* --fsdp-param-dtype (a Precision); -1: the config's precision */
    CliJob job;
    const char *json, *trace, *ranks, *html;
    bool is_trace_stdout;
} RunArgs;

/* 0, 1 after --help, or EXIT_BAD_USAGE with the message printed. */
static int parse_args(int argc, char **argv, RunArgs *a)
{
    static const CliOption options[N_OPTS] = {
        [OPT_MODEL] = {"--model", true, NULL},
        [OPT_CONFIG] = {"--config", true, NULL},
        [OPT_PLATFORM] = {"--platform", true, NULL},
        [OPT_GPUS] = {"--gpus", true, NULL},
        [OPT_NODES] = {"--nodes", true, NULL},
        [OPT_SEQ_LEN] = {"--seq-len", true, NULL},
        [OPT_RECOMPUTE] = {"--activation-checkpointing", true, NULL},
        [OPT_FLASH] = {"--flash-attention", true, NULL},
        [OPT_STEPS] = {"--steps", true, NULL},
        [OPT_SCHEDULE] = {"--schedule", true, NULL},
        [OPT_ALGO] = {"--algo", true, NULL},
        [OPT_JSON] = {"--json", true, NULL},
        [OPT_TRACE] = {"--trace", true, NULL},
        [OPT_TRACE_RANKS] = {"--trace-ranks", true, NULL},
        [OPT_FSDP] = {"--fsdp", true, NULL},
        [OPT_FSDP_PREFETCH] = {"--fsdp-backward-prefetch", true, NULL},
        [OPT_FSDP_PARAM_DTYPE] = {"--fsdp-param-dtype", true, NULL},
        [OPT_FSDP_VERSION] = {"--fsdp-version", true, NULL},
        [OPT_DPU] = {"--delayed-param-update", false, NULL},
        [OPT_MODE] = {"--mode", true, NULL},
        [OPT_CALIBRATION] = {"--calibration", true, NULL},
        [OPT_HEADROOM] = {"--headroom", true, NULL},
        [OPT_EXPANDABLE] = {"--expandable-segments", false, NULL},
        [OPT_MICRO_BATCH] = CLI_TRAIN_OPTIONS,
        [OPT_EP_SIZE] = {"--ep-size", true, NULL},
        [OPT_CAPACITY] = {"--moe-capacity-factor", true, NULL},
        [OPT_IMBALANCE] = {"--moe-imbalance", true, NULL},
        [OPT_COMM_MODEL] = {"--comm-model", true, NULL},
        [OPT_DS_VERSION] = {"--deepspeed-version", true, NULL},
        [OPT_HTML] = {"--html", true, NULL},
        [OPT_RING_ORDER] = CLI_JOB_OPTIONS,
        [OPT_MODULE_LOADING] = {"--cuda-module-loading", true, NULL},
        [OPT_ZERO_INIT] = {"--zero-init", true, NULL},
    };
    const char *cmd = "run";
    memset(a, 0, sizeof *a);
    CliOption *o = a->o;
    memcpy(o, options, sizeof options);
    int rc = cli_parse(cmd, help, argc, argv, 2, o, N_OPTS);
    if (rc)
        return rc;
    if (cli_require(cmd, o, OPT_MODEL, OPT_PLATFORM))
        return EXIT_BAD_USAGE;
    a->steps = 1;
    if (cli_count(cmd, "--gpus", o[OPT_GPUS].value, &a->gpus) ||
        cli_count(cmd, "--nodes", o[OPT_NODES].value, &a->nodes) ||
        cli_count(cmd, "--steps", o[OPT_STEPS].value, &a->steps) ||
        cli_setup_options(cmd, o[OPT_SEQ_LEN].value, o[OPT_RECOMPUTE].value, o[OPT_FLASH].value,
                          &a->est_opts) ||
        cli_cross_entropy(cmd, cli_value(o, N_OPTS, "--cross-entropy"), &a->est_opts) ||
        cli_elementwise(cmd, cli_value(o, N_OPTS, "--elementwise"), &a->est_opts) ||
        cli_zero_init(cmd, o[OPT_ZERO_INIT].value, &a->est_opts) ||
        cli_headroom(cmd, o[OPT_HEADROOM].value, &a->est_opts.headroom_fraction, NULL) ||
        cli_moe_options(cmd, o[OPT_EP_SIZE].value, o[OPT_CAPACITY].value,
                        o[OPT_IMBALANCE].value, &a->est_opts) ||
        cli_train_overrides(cmd, o, N_OPTS, &a->overrides))
        return EXIT_BAD_USAGE;
    if (a->steps > 1000)
        return cli_usage_error(cmd, "--steps: expected at most 1000, got %llu",
                               (unsigned long long)a->steps);
    a->sched = (ScheduleOptions){.variant = SCHEDULE_DEEPSPEED,
                                 .n_steps = (uint32_t)a->steps,
                                 .has_activations = true,
                                 .delayed_param_update = o[OPT_DPU].value != NULL};
    int variant = SCHEDULE_DEEPSPEED, algo = COLL_ALGO_AUTO, comm_model = COMM_MODEL_NCCL;
    int fsdp_version = 0; /* index into choices_fsdp_version: "1" */
    a->fsdp = FSDP_NONE;
    a->prefetch = 0; /* on */
    a->param_dtype = -1;
    a->mode = SIM_MODE_AUTO;
    if (cli_choice(cmd, "--fsdp", &choices_fsdp, true, o[OPT_FSDP].value, &a->fsdp) ||
        cli_choice(cmd, "--fsdp-backward-prefetch", &choices_on_off, false,
                   o[OPT_FSDP_PREFETCH].value, &a->prefetch) ||
        cli_choice(cmd, "--fsdp-param-dtype", &choices_fsdp_param_dtype, false,
                   o[OPT_FSDP_PARAM_DTYPE].value, &a->param_dtype) ||
        cli_choice(cmd, "--fsdp-version", &choices_fsdp_version, false,
                   o[OPT_FSDP_VERSION].value, &fsdp_version) ||
        cli_choice(cmd, "--schedule", &choices_schedule, false, o[OPT_SCHEDULE].value,
                   &variant) ||
        cli_choice(cmd, "--mode", &choices_mode, false, o[OPT_MODE].value, &a->mode) ||
        cli_choice(cmd, "--algo", &choices_algo, false, o[OPT_ALGO].value, &algo) ||
        cli_choice(cmd, "--comm-model", &choices_comm_model, false, o[OPT_COMM_MODEL].value,
                   &comm_model) ||
        cli_check_algo(cmd, algo, comm_model, false) ||
        cli_deepspeed_version(cmd, o[OPT_DS_VERSION].value, &a->sched.zero3_generation,
                              &a->release) ||
        cli_job_options(cmd, o[OPT_RING_ORDER].value, o[OPT_STRAGGLER].value, &a->job))
        return EXIT_BAD_USAGE;
    if (o[OPT_FSDP_VERSION].value != NULL && a->fsdp == FSDP_NONE)
        return cli_usage_error(cmd, "--fsdp-version: expected --fsdp STRATEGY with it, got no "
                                    "--fsdp");
    a->sched.is_fsdp2 = fsdp_version == 1;
    a->sched.is_list_param_gather = ds_config_release_before(&a->release, 0, 13, 0);
    if (a->param_dtype >= 0 && a->fsdp == FSDP_NONE)
        return cli_usage_error(cmd, "--fsdp-param-dtype: expected --fsdp STRATEGY with it (it "
                                    "is FSDP's MixedPrecision), got no --fsdp");
    if (a->job.has_straggler && a->mode == SIM_MODE_SYMMETRIC)
        return cli_usage_error(cmd, "--straggler: expected --mode full or auto (symmetric mode "
                                    "simulates two nodes that stand for all, so none can be "
                                    "slower), got --mode symmetric");
    a->sched.variant = (ScheduleVariant)variant;
    a->json = o[OPT_JSON].value;
    a->html = o[OPT_HTML].value;
    if (a->html && strcmp(a->html, "-") == 0)
        return cli_usage_error(cmd, "--html: expected a file name (the page is not written to "
                                    "stdout), got \"-\"");
    a->trace = o[OPT_TRACE].value;
    a->ranks = o[OPT_TRACE_RANKS].value;
    a->is_trace_stdout = a->trace && strcmp(a->trace, "-") == 0;
    if (a->is_trace_stdout && a->json && strcmp(a->json, "-") == 0)
        return cli_usage_error(cmd, "--json - and --trace -: expected at most one of them on "
                                    "stdout, got both");
    a->eng = (EngineOptions){.algo = (CollAlgo)algo,
                             .comm_model = (CommModel)comm_model,
                             .show_progress = isatty(fileno(stderr)),
                             .is_expandable_segments = o[OPT_EXPANDABLE].value != NULL};
    return 0;
}

/* The run's choices the command line left to zerosim, for the report's "defaults applied". */
static void record_defaults(const RunArgs *a, const ModelConfig *model, const TrainConfig *train,
                            const Platform *platform, StrList *defaults)
{
    const CliOption *o = a->o;
    cli_setup_defaults(o[OPT_SEQ_LEN].value, o[OPT_RECOMPUTE].value, o[OPT_FLASH].value, model,
                       defaults);
    if (cli_value(o, N_OPTS, "--cross-entropy") == NULL)
        strlist_addf(defaults, "--cross-entropy eager");
    if (cli_value(o, N_OPTS, "--elementwise") == NULL)
        strlist_addf(defaults, "--elementwise fused");
    if (o[OPT_ZERO_INIT].value == NULL && train->zero.stage == 3 && a->sched.fsdp == FSDP_NONE)
        strlist_addf(defaults, "%s", CLI_ZERO_INIT_DEFAULT);
    if (o[OPT_EXPANDABLE].value == NULL)
        strlist_addf(defaults, "caching allocator with fixed segments (PyTorch's default; "
                               "--expandable-segments for expandable_segments:True)");
    if (o[OPT_HEADROOM].value == NULL)
        strlist_addf(defaults, "--headroom %.2f (of GPU memory kept free)",
                     ESTIMATE_DEFAULT_HEADROOM_FRACTION);
    if (platform->cpu.param_host_s == 0.0 && zero_schedule_has_host_hooks(&train->zero, &a->sched))
        strlist_addf(defaults, "framework host work per parameter not counted (platform %s: "
                               "cpu.param_host_s absent or 0)",
                     platform->name);
    if (o[OPT_DS_VERSION].value == NULL && train->zero.stage == 3 && a->fsdp == FSDP_NONE &&
        a->sched.variant == SCHEDULE_DEEPSPEED)
        strlist_addf(defaults, "--deepspeed-version " CLI_DEEPSPEED_DEFAULT_VERSION
                               ": ZeRO-3 gathers one submodule per all-gather");
}

/* Overlays --calibration on the platform and says so among the defaults. */
static int apply_calibration(const char *path, Platform *platform, StrList *defaults, Err *err)
{
    if (path == NULL)
        return 0;
    Calibration calibration;
    if (calibration_load(&calibration, path, err))
        return -1;
    int n_fields = calibration_apply(&calibration, platform);
    strlist_addf(defaults, "--calibration %s: %d platform values replaced by measured ones", path,
                 n_fields);
    return 0;
}

/* The report on stdout and in the --json and --trace files. 0, or -1 with err set. */
static int emit(const RunArgs *a, const RunReport *report, const bool *traced, Err *err)
{
    const TraceOptions trace = {traced, report->inputs.estimate->setup.grad_accum,
                                report->inputs.platform};
    if (a->is_trace_stdout) { /* only the trace on stdout, as --json - */
        trace_write_to(stdout, report->graph, report->result, &trace);
        return (a->json && cli_write_file(a->json, "the JSON report", write_json, report, err)) ||
                       (a->html &&
                        cli_write_file(a->html, "the HTML report", write_html, report, err))
                   ? -1
                   : 0;
    }
    if (cli_emit_report(a->json, write_text, write_json, report, err) ||
        (a->trace && trace_write(a->trace, report->graph, report->result, &trace, err)) ||
        (a->html && cli_write_file(a->html, "the HTML report", write_html, report, err)))
        return -1;
    return 0;
}

int cmd_run(int argc, char **argv)
{
    RunArgs a;
    const char *cmd = "run";
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    const CliOption *o = a.o;

    Err err = {0};
    ModelConfig model = {0};
    TrainConfig train = {0};
    Platform platform;
    StrList setup_defaults;
    strlist_init(&setup_defaults);
    Graph *graph = NULL;
    bool *traced = NULL;
    EngineResult result = {0};
    int exit_code = EXIT_BAD_INPUT;
    if (cli_check_output(a.json, "the JSON report", &err) ||
        cli_check_output(a.trace, "the trace", &err) ||
        cli_check_output(a.html, "the HTML report", &err))
        goto done;
    exit_code = cli_load_inputs(o[OPT_MODEL].value, o[OPT_CONFIG].value, o[OPT_PLATFORM].value,
                                a.gpus, a.nodes, &a.overrides, &a.release, &model, &train,
                                &platform, &err);
    if (exit_code)
        goto done;
    exit_code = EXIT_BAD_INPUT;
    if (apply_calibration(o[OPT_CALIBRATION].value, &platform, &setup_defaults, &err))
        goto done;
    exit_code = cli_job_apply(cmd, &a.job, &platform);
    if (exit_code)
        goto done;
    exit_code = cli_module_loading(cmd, o[OPT_MODULE_LOADING].value, &platform, &setup_defaults,
                                   &err);
    if (exit_code)
        goto done;
    exit_code = EXIT_BAD_INPUT;
    const uint32_t n_ranks = (uint32_t)platform_n_gpus(&platform);
    traced = xcalloc(n_ranks, sizeof *traced);
    if (cli_ranks(a.ranks ? a.ranks : "0", n_ranks, traced)) {
        exit_code = cli_usage_error(cmd,
                                    "--trace-ranks: expected ranks below %u like 0,1,8-15, "
                                    "got \"%s\"",
                                    n_ranks, a.ranks);
        goto done;
    }
    a.eng.traced = traced;
    if (a.fsdp != FSDP_NONE && fsdp_apply((FsdpStrategy)a.fsdp, a.prefetch == 0,
                                          platform.gpus_per_node, &train, &a.sched, &err))
        goto done;
    if (a.fsdp != FSDP_NONE &&
        fsdp_apply_param_dtype(a.param_dtype >= 0 ? (Precision)a.param_dtype : train.precision,
                               &train, &a.sched, &err))
        goto done;
    if (fsdp_has_autocast_casts(&a.sched, &train) && model.moe.n_experts > 0) {
        err_set(&err, "--fsdp-param-dtype fp32: expected a dense model (the casts of experts' "
                      "weights are not modelled), got %s with %llu experts",
                model.name, (unsigned long long)model.moe.n_experts);
        goto done;
    }
    a.est_opts.is_fsdp = a.fsdp != FSDP_NONE;
    a.est_opts.fsdp_param_bytes = a.sched.fsdp_param_bytes;
    a.est_opts.has_fsdp_autocast_casts = fsdp_has_autocast_casts(&a.sched, &train);
    record_defaults(&a, &model, &train, &platform, &setup_defaults);

    Estimate est;
    if (estimate_build(&model, &train, &platform, &a.est_opts, &est, &err))
        goto done;
    /* Symmetric mode: two representative nodes stand for all of them. */
    Platform simulated;
    const bool is_symmetric =
        symmetric_choose(&platform, (SimMode)a.mode, &simulated, &a.sched);
    char mode_reason[256] = "";
    if (a.mode == SIM_MODE_AUTO && platform.n_nodes > 4)
        symmetric_broken_reason(&platform, mode_reason, sizeof mode_reason);
    const uint32_t n_simulated = (uint32_t)platform_n_gpus(&simulated);
    for (uint32_t r = n_simulated; r < n_ranks && a.ranks != NULL; r++)
        if (traced[r]) {
            exit_code = cli_usage_error(cmd,
                                        "--trace-ranks: expected ranks below %u, the ranks "
                                        "symmetric mode simulates (two nodes), got \"%s\" "
                                        "(--mode full simulates and traces every rank)",
                                        n_simulated, a.ranks);
            goto done;
        }
    /* Every rank has at least a compute and a gradient-reduce stream: refuse a run that
     * cannot fit before building its graph and platform (engine_run checks exactly). */
    if (capacity_check_actors(2 * n_simulated, &err))
        goto done;
    double t0 = wall_now();
    graph = zero_schedule_build(&model, &train, &platform, &est.setup, &a.sched, &err);
    if (graph == NULL)
        goto done;
    double build_s = wall_now() - t0;
    a.eng.gpu_outside_bytes = (double)est.runtime.outside_bytes;
    a.eng.gpu_headroom_bytes = (double)est.gpu_headroom;
    a.eng.gpu_load_bytes = (double)est.gpu_load_bytes; /* --zero-init off: one tensor a layer */
    a.eng.gpu_load_tensors = (uint32_t)model.n_layers + 2;
    if (engine_init(&simulated, train.precision, &err) ||
        engine_run(graph, &a.eng, &result, &err))
        goto done;

    /* The schedule the reader recognises: PyTorch FSDP's strategy, or DeepSpeed's variant. */
    char schedule[40];
    if (a.fsdp != FSDP_NONE)
        snprintf(schedule, sizeof schedule, "fsdp%d %s", a.sched.is_fsdp2 ? 2 : 1,
                 choices_name(&choices_fsdp, a.fsdp));
    else
        snprintf(schedule, sizeof schedule, "%s", zero_schedule_variant_name(a.sched.variant));
    RunReport report = {
        .inputs = {&model, &train, &platform, &est, &setup_defaults},
        .graph = graph,
        .result = &result,
        .n_steps = (uint32_t)a.steps,
        .schedule = schedule,
        .algo = collective_algo_name(a.eng.algo),
        .comm_model = collective_comm_model_name(a.eng.comm_model),
        .mode = choices_name(&choices_mode, is_symmetric ? SIM_MODE_SYMMETRIC : SIM_MODE_FULL),
        .mode_reason = mode_reason[0] ? mode_reason : NULL,
        .simulated_gpus = graph_n_ranks(graph),
        .build_wall_s = build_s};
    breakdown_rank(graph, &result, 0, &report.breakdown);
    uint32_t oom_rank, peak_rank;
    MemSpace oom_space;
    Remedy remedy;
    if (memory_first_oom(result.memory, &oom_rank, &oom_space)) {
        /* the variants must also leave free what the allocator replay found above the
         * analytic peak in this run (fragmentation, segment rounding) */
        const MemAccount *g = memory_max_peak(result.memory, MEM_GPU, &peak_rank);
        const double above = memory_gpu_device_peak_bytes(g) - (double)est.gpu_device_peak;
        CliRemedyContext ctx = {train.file, model.hidden, a.overrides, est.setup.global_batch,
                                &a.release};
        if (remedy_find(&model, &train, &platform, &a.est_opts, &est,
                        above > 0 ? (uint64_t)above : 0,
                        a.fsdp == FSDP_NONE ? cli_remedy_config : NULL, &ctx, &remedy, &err))
            goto done;
        report.inputs.remedy = &remedy;
    }
    if (emit(&a, &report, traced, &err))
        goto done;
    exit_code =
        memory_first_oom(result.memory, &oom_rank, &oom_space) ? EXIT_OUT_OF_MEMORY : EXIT_OK;
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    engine_result_fini(&result);
    graph_destroy(graph);
    free(traced);
    strlist_fini(&setup_defaults);
    model_config_fini(&model);
    ds_config_fini(&train);
    return exit_code;
}
