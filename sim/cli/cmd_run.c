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
#include "engine/engine.h"
#include "inputs/calibration.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/estimate.h"
#include "report/run_report.h"
#include "report/trace.h"
#include "schedule/fsdp.h"
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
    "fabric. Prints the step time, tokens/s, TFLOP/s per GPU (Megatron's formula) and MFU,\n"
    "where rank 0's time goes (compute, optimizer, exposed communication by collective,\n"
    "idle), the simulated memory peak per GPU with its breakdown and whether it fits, and\n"
    "the bytes each rank sends per collective and per link class.\n"
    "\n"
    "required:\n" CLI_HELP_INPUTS "options:\n" CLI_HELP_SETUP
    "  --steps K        optimizer steps to simulate back to back (default 1)\n"
    "  --delayed-param-update\n"
    "                   ZeRO-Offload's one-step delayed parameter update: the CPU\n"
    "                   optimizer of step t overlaps step t+1 (use --steps 3 or more)\n"
    "  --fsdp STRATEGY  simulate PyTorch FSDP instead of the config's ZeRO stage:\n"
    "                   FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD (batch and\n"
    "                   precision keys of the config still apply)\n"
    "  --fsdp-backward-prefetch on|off\n"
    "                   FSDP's BACKWARD_PRE prefetch (default on)\n"
    "  --schedule deepspeed|textbook\n"
    "                   DeepSpeed's schedules (default) or the seed chapter's textbook\n"
    "                   algorithms, for teaching (docs/SCHEDULES.md)\n"
    "  --calibration FILE\n"
    "                   overlay a zerosim-calibrate result on the platform (GEMM efficiency,\n"
    "                   PCIe, NVLink, CPU Adam and NVMe rates; docs/CALIBRATION.md)\n"
    "  --algo auto|ring|tree|hier\n"
    "                   collective algorithm (docs/COLLECTIVES.md); auto, the default,\n"
    "                   is NCCL's choice per collective and size; ring and tree force\n"
    "                   NCCL_ALGO; hier is zerosim's two-level scheme\n" CLI_HELP_RUN_OPTIONS
    "  --comm-model nccl|ideal\n"
    "                   nccl (default): NCCL's tuning model (algorithms x protocols,\n"
    "                   base and per-hop latency, per-channel bandwidth caps); ideal: the\n"
    "                   seed chapter's fluid ring (steps x route latency + volume / rate)\n"
    "  --mode auto|full|symmetric\n"
    "                   full simulates every rank; symmetric simulates two nodes whose\n"
    "                   collectives carry the volumes and steps of all of them (exact for\n"
    "                   data-parallel steps on a fabric without shared bottlenecks, and\n"
    "                   far faster); auto: symmetric beyond 4 nodes (default)\n"
    "  --json FILE|-    also write the JSON report to FILE; '-' writes only JSON to stdout\n"
    "  --trace FILE     write a Chrome trace (opens in Perfetto) of the traced ranks\n"
    "  --trace-ranks L  ranks to trace: a list like 0,1,8-15 (default 0)\n"
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
    OPT_DPU,
    OPT_MODE,
    OPT_CALIBRATION,
    OPT_COMM_MODEL,
    OPT_DS_VERSION,
    N_OPTS
};

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* "0,1,8-15" -> flags over n ranks. */
static int parse_ranks(const char *text, uint32_t n, bool *flags)
{
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (end == p || errno)
            return -1;
        p = end;
        if (*p == '-') {
            b = strtoul(++p, &end, 10);
            if (end == p || errno || b < a)
                return -1;
            p = end;
        }
        if (b >= n)
            return -1;
        for (unsigned long r = a; r <= b; r++)
            flags[r] = true;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return 0;
}

static void write_json(FILE *out, const void *report)
{
    run_report_json(out, report);
}

int cmd_run(int argc, char **argv)
{
    CliOption o[N_OPTS] = {
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
        [OPT_DPU] = {"--delayed-param-update", false, NULL},
        [OPT_MODE] = {"--mode", true, NULL},
        [OPT_CALIBRATION] = {"--calibration", true, NULL},
        [OPT_COMM_MODEL] = {"--comm-model", true, NULL},
        [OPT_DS_VERSION] = {"--deepspeed-version", true, NULL},
    };
    const char *cmd = "run";
    int rc = cli_parse(cmd, help, argc, argv, 2, o, N_OPTS);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    if (cli_require(cmd, o, OPT_MODEL, OPT_PLATFORM))
        return EXIT_BAD_USAGE;
    uint64_t gpus = 0, nodes = 0, steps = 1;
    EstimateOptions est_opts;
    const char *seq = o[OPT_SEQ_LEN].value, *recompute = o[OPT_RECOMPUTE].value,
               *flash = o[OPT_FLASH].value;
    if (cli_count(cmd, "--gpus", o[OPT_GPUS].value, &gpus) ||
        cli_count(cmd, "--nodes", o[OPT_NODES].value, &nodes) ||
        cli_count(cmd, "--steps", o[OPT_STEPS].value, &steps) ||
        cli_setup_options(cmd, seq, recompute, flash, &est_opts))
        return EXIT_BAD_USAGE;
    if (steps > 1000)
        return cli_usage_error(cmd, "--steps: expected at most 1000, got %llu",
                               (unsigned long long)steps);
    ScheduleOptions sched = {.variant = SCHEDULE_DEEPSPEED,
                             .n_steps = (uint32_t)steps,
                             .has_activations = true,
                             .delayed_param_update = o[OPT_DPU].value != NULL};
    FsdpStrategy fsdp = FSDP_NONE;
    const char *fsdp_text = o[OPT_FSDP].value, *prefetch = o[OPT_FSDP_PREFETCH].value;
    if (fsdp_text && fsdp_parse(fsdp_text, &fsdp))
        return cli_usage_error(cmd,
                               "--fsdp: expected FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or "
                               "HYBRID_SHARD, got \"%s\"",
                               fsdp_text);
    if (prefetch && strcmp(prefetch, "on") != 0 && strcmp(prefetch, "off") != 0)
        return cli_usage_error(cmd, "--fsdp-backward-prefetch: expected on or off, got \"%s\"",
                               prefetch);
    if (cli_deepspeed_version(cmd, o[OPT_DS_VERSION].value, &sched.zero3_generation))
        return EXIT_BAD_USAGE;
    const char *schedule = o[OPT_SCHEDULE].value;
    if (schedule && strcmp(schedule, "textbook") == 0)
        sched.variant = SCHEDULE_TEXTBOOK;
    else if (schedule && strcmp(schedule, "deepspeed") != 0)
        return cli_usage_error(cmd, "--schedule: expected deepspeed or textbook, got \"%s\"",
                               schedule);
    const char *mode = o[OPT_MODE].value ? o[OPT_MODE].value : "auto";
    if (strcmp(mode, "auto") != 0 && strcmp(mode, "full") != 0 && strcmp(mode, "symmetric") != 0)
        return cli_usage_error(cmd, "--mode: expected auto, full or symmetric, got \"%s\"", mode);
    EngineOptions eng = {.algo = COLL_ALGO_AUTO, .show_progress = isatty(fileno(stderr))};
    const char *algo = o[OPT_ALGO].value;
    if (algo && strcmp(algo, "hier") == 0)
        eng.algo = COLL_ALGO_HIER;
    else if (algo && strcmp(algo, "ring") == 0)
        eng.algo = COLL_ALGO_RING;
    else if (algo && strcmp(algo, "tree") == 0)
        eng.algo = COLL_ALGO_TREE;
    else if (algo && strcmp(algo, "auto") != 0)
        return cli_usage_error(cmd, "--algo: expected auto, ring, tree or hier, got \"%s\"", algo);
    const char *comm_model = o[OPT_COMM_MODEL].value;
    if (comm_model && strcmp(comm_model, "ideal") == 0)
        eng.comm_model = COMM_MODEL_IDEAL;
    else if (comm_model && strcmp(comm_model, "nccl") != 0)
        return cli_usage_error(cmd, "--comm-model: expected nccl or ideal, got \"%s\"", comm_model);

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
    exit_code = cli_load_inputs(o[OPT_MODEL].value, o[OPT_CONFIG].value, o[OPT_PLATFORM].value,
                                gpus, nodes, &model, &train, &platform, &err);
    if (exit_code)
        goto done;
    exit_code = EXIT_BAD_INPUT;
    if (o[OPT_CALIBRATION].value) {
        Calibration calibration;
        if (calibration_load(&calibration, o[OPT_CALIBRATION].value, &err))
            goto done;
        int n_fields = calibration_apply(&calibration, &platform);
        strlist_addf(&setup_defaults,
                     "--calibration %s: %d platform values replaced by "
                     "measured ones",
                     o[OPT_CALIBRATION].value, n_fields);
    }
    const uint32_t n_ranks = (uint32_t)platform_n_gpus(&platform);
    traced = xcalloc(n_ranks, sizeof *traced);
    const char *ranks = o[OPT_TRACE_RANKS].value;
    if (parse_ranks(ranks ? ranks : "0", n_ranks, traced)) {
        exit_code = cli_usage_error(cmd,
                                    "--trace-ranks: expected ranks below %u like 0,1,8-15, "
                                    "got \"%s\"",
                                    n_ranks, ranks);
        goto done;
    }
    eng.traced = traced;
    if (fsdp != FSDP_NONE && fsdp_apply(fsdp, prefetch == NULL || strcmp(prefetch, "on") == 0,
                                        platform.gpus_per_node, &train, &sched, &err))
        goto done;
    cli_setup_defaults(seq, recompute, flash, model.max_seq, &setup_defaults);
    if (o[OPT_DS_VERSION].value == NULL && train.zero.stage == 3 && fsdp == FSDP_NONE &&
        sched.variant == SCHEDULE_DEEPSPEED)
        strlist_addf(&setup_defaults, "--deepspeed-version " CLI_DEEPSPEED_DEFAULT_VERSION
                                      ": ZeRO-3 gathers one submodule per all-gather");

    Estimate est;
    if (estimate_build(&model, &train, &platform, &est_opts, &est, &err))
        goto done;
    /* Symmetric mode: two representative nodes stand for all of them. */
    Platform simulated = platform;
    bool is_symmetric =
        platform.n_nodes > 2 &&
        (strcmp(mode, "symmetric") == 0 || (strcmp(mode, "auto") == 0 && platform.n_nodes > 4));
    if (is_symmetric) {
        simulated.n_nodes = 2;
        sched.n_simulated_ranks = (uint32_t)platform_n_gpus(&simulated);
        for (uint32_t r = (uint32_t)platform_n_gpus(&simulated); r < n_ranks; r++)
            traced[r] = false;
    }
    double t0 = wall_now();
    graph = zero_schedule_build(&model, &train, &platform, &est.setup, &sched, &err);
    if (graph == NULL)
        goto done;
    double build_s = wall_now() - t0;
    if (engine_init(&simulated, train.precision, &err) || engine_run(graph, &eng, &result, &err))
        goto done;

    RunReport report = {.inputs = {&model, &train, &platform, &est, &setup_defaults},
                        .graph = graph,
                        .result = &result,
                        .n_steps = (uint32_t)steps,
                        .schedule = zero_schedule_variant_name(sched.variant),
                        .algo = collective_algo_name(eng.algo),
                        .comm_model = collective_comm_model_name(eng.comm_model),
                        .mode = is_symmetric ? "symmetric" : "full",
                        .simulated_gpus = graph_n_ranks(graph),
                        .build_wall_s = build_s};
    breakdown_rank(graph, &result, 0, &report.breakdown);
    const char *json = o[OPT_JSON].value;
    if (json && strcmp(json, "-") == 0) {
        run_report_json(stdout, &report);
    } else {
        run_report_text(stdout, &report);
        if (json && cli_write_file(json, "the JSON report", write_json, &report, &err))
            goto done;
    }
    if (o[OPT_TRACE].value && trace_write(o[OPT_TRACE].value, graph, &result, traced, &err))
        goto done;
    uint32_t oom_rank;
    MemSpace oom_space;
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
