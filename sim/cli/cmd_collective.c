/*
 * cmd_collective.c - `zerosim collective`: one collective over a range of sizes, simulated on
 * a platform, printed like nccl-tests so that it can be put beside a real run.
 *
 * Each size is its own event graph (one collective over every GPU) run on the same SimGrid
 * platform, one after another.
 */
#include "cli.h"

#include "common/err.h"
#include "common/xalloc.h"
#include "engine/engine.h"
#include "inputs/platform.h"
#include "report/collective_report.h"

#include <stdio.h>
#include <string.h>

static const char *const help =
    "usage: zerosim collective --platform P --op OP [options]\n"
    "\n"
    "Simulates one collective over all GPUs of a platform for message sizes from\n"
    "--min-bytes to --max-bytes (doubling) and prints, like nccl-tests, the size, the\n"
    "time, the algorithm bandwidth (size/time) and the bus bandwidth (algbw x 2(n-1)/n\n"
    "for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for\n"
    "broadcast), with the algorithm and protocol that ran. An all-to-all (the token\n"
    "exchange of expert parallelism) is every pair of GPUs exchanging 1/n of the buffer\n"
    "at once, as nccl-tests' alltoall posts its sends and receives; --algo does not\n"
    "apply to it.\n"
    "\n"
    "required:\n"
    "  --platform P     platform JSON path or shipped name (e.g. dgx-a100-80g)\n"
    "  --op OP          all_reduce, all_gather, reduce_scatter, broadcast or all_to_all\n"
    "options:\n"
    "  --gpus N         resize the platform to N GPUs (at least 2)\n"
    "  --nodes N        resize the platform to N nodes\n"
    "  --algo A         auto (default: NCCL's tuner picks the algorithm and protocol per\n"
    "                   size), ring (NCCL_ALGO=Ring; over whole nodes, rail-aligned\n"
    "                   channels that use every NIC), tree (all-reduce: NCCL's double\n"
    "                   binary tree), nvls (NVLink SHARP on one node) and nvls_tree\n"
    "                   (all-reduce: NVLS inside nodes, a tree between them), where\n"
    "                   the platform has nvlink.nvls (with --comm-model nccl only),\n"
    "                   or hier (zerosim's own: rings\n"
    "                   inside nodes, then one ring per rail across nodes, timed as\n"
    "                   NCCL's ring)\n"
    "  --comm-model nccl|ideal\n"
    "                   nccl (default): NCCL's tuning model gives the algorithm, protocol\n"
    "                   (LL, LL128, Simple), latency and protocol bandwidth limits, SimGrid\n"
    "                   the flows; ideal: steps x route latency + volume / link rate, the\n"
    "                   seed chapter's fluid ring (docs/COLLECTIVES.md)\n"
    "  --min-bytes A    smallest size, with an optional K, M, G suffix (default 8)\n"
    "  --max-bytes B    largest size (default 8G)\n"
    "  --stepwise       simulate every ring step as its own message (slower; validates\n"
    "                   the fluid flows of the ideal model, whose latencies it keeps)\n"
    "  --json FILE|-    also write the rows as a JSON array to FILE; '-' writes only JSON\n"
    CLI_HELP_JOB
    "  -h, --help       this text\n"
    "\n"
    "Sizes are the collective's buffer (nccl-tests' size column). Exit codes: 0 success,\n"
    "1 bad input file, 2 bad command line.\n";

enum {
    OPT_PLATFORM,
    OPT_OP,
    OPT_GPUS,
    OPT_NODES,
    OPT_ALGO,
    OPT_MIN,
    OPT_MAX,
    OPT_STEPWISE,
    OPT_JSON,
    OPT_COMM_MODEL,
    OPT_RING_ORDER,
    OPT_STRAGGLER,
    N_OPTS
};

/* Simulates one collective of `bytes` over all n ranks; returns its time or -1, and how it
 * ran in *out_info. */
static double simulate(uint32_t n, CollectiveKind op, double bytes, const EngineOptions *opts,
                       uint32_t *members, EngineCollInfo *out_info, Err *err)
{
    Graph *g = graph_create(n);
    uint32_t group = graph_add_group(g, members, n);
    graph_collective(g, op, group, STREAM_REDUCE, bytes, 0, graph_label(g, "collective"), NULL);
    double time_s = -1;
    EngineResult r;
    if (graph_finalize(g, err) == 0 && engine_run(g, opts, &r, err) == 0) {
        time_s = r.makespan_s;
        *out_info = r.coll_info[0];
        engine_result_fini(&r);
    }
    graph_destroy(g);
    return time_s;
}

typedef struct Table {
    const char *title;
    const CollectiveRow *rows;
    size_t n_rows;
} Table;

static void write_text(FILE *out, const void *table)
{
    const Table *t = table;
    collective_report_text(out, t->title, t->rows, t->n_rows);
}

static void write_json(FILE *out, const void *table)
{
    const Table *t = table;
    collective_report_json(out, t->rows, t->n_rows);
}

int cmd_collective(int argc, char **argv)
{
    CliOption o[N_OPTS] = {
        [OPT_PLATFORM] = {"--platform", true, NULL},
        [OPT_OP] = {"--op", true, NULL},
        [OPT_GPUS] = {"--gpus", true, NULL},
        [OPT_NODES] = {"--nodes", true, NULL},
        [OPT_ALGO] = {"--algo", true, NULL},
        [OPT_MIN] = {"--min-bytes", true, NULL},
        [OPT_MAX] = {"--max-bytes", true, NULL},
        [OPT_STEPWISE] = {"--stepwise", false, NULL},
        [OPT_JSON] = {"--json", true, NULL},
        [OPT_COMM_MODEL] = {"--comm-model", true, NULL},
        [OPT_RING_ORDER] = CLI_JOB_OPTIONS,
    };
    const char *cmd = "collective";
    int rc = cli_parse(cmd, help, argc, argv, 2, o, N_OPTS);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    if (cli_require(cmd, o, OPT_PLATFORM, OPT_OP))
        return EXIT_BAD_USAGE;
    int op_value = 0, algo = COLL_ALGO_AUTO, comm_model = COMM_MODEL_NCCL;
    if (cli_choice(cmd, "--op", &choices_collective, false, o[OPT_OP].value, &op_value) ||
        cli_choice(cmd, "--algo", &choices_algo, false, o[OPT_ALGO].value, &algo) ||
        cli_choice(cmd, "--comm-model", &choices_comm_model, false, o[OPT_COMM_MODEL].value,
                   &comm_model) ||
        cli_check_algo(cmd, algo, comm_model, o[OPT_STEPWISE].value != NULL))
        return EXIT_BAD_USAGE;
    CliJob job;
    if (cli_job_options(cmd, o[OPT_RING_ORDER].value, o[OPT_STRAGGLER].value, &job))
        return EXIT_BAD_USAGE;
    const CollectiveKind op = (CollectiveKind)op_value;
    EngineOptions opts = {.algo = (CollAlgo)algo,
                          .comm_model = (CommModel)comm_model,
                          .is_stepwise = o[OPT_STEPWISE].value != NULL};
    if (opts.is_stepwise) /* steps check the ideal model's fluid flows */
        opts.comm_model = COMM_MODEL_IDEAL;
    uint64_t gpus = 0, nodes = 0, min_bytes = 8, max_bytes = 8ull << 30;
    if (cli_count(cmd, "--gpus", o[OPT_GPUS].value, &gpus) ||
        cli_count(cmd, "--nodes", o[OPT_NODES].value, &nodes) ||
        cli_bytes(cmd, "--min-bytes", o[OPT_MIN].value, &min_bytes) ||
        cli_bytes(cmd, "--max-bytes", o[OPT_MAX].value, &max_bytes))
        return EXIT_BAD_USAGE;
    if (min_bytes > max_bytes)
        return cli_usage_error(cmd,
                               "--max-bytes: expected at least --min-bytes (%llu), got "
                               "%llu",
                               (unsigned long long)min_bytes, (unsigned long long)max_bytes);

    Err err = {0};
    Platform platform;
    if (cli_check_output(o[OPT_JSON].value, "the JSON report", &err) ||
        platform_load(&platform, o[OPT_PLATFORM].value, cli_data_dir(), &err)) {
        fprintf(stderr, "zerosim: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    if (platform_resize(&platform, gpus, nodes, &err)) {
        fprintf(stderr, "zerosim: %s\n", err.msg);
        return EXIT_BAD_USAGE;
    }
    if (cli_job_apply(cmd, &job, &platform))
        return EXIT_BAD_USAGE;
    const uint32_t n = (uint32_t)platform_n_gpus(&platform);
    if (n < 2)
        return cli_usage_error(cmd,
                               "--gpus: expected at least 2 GPUs for a collective, got "
                               "%u (platform %s)",
                               n, platform.name);
    if (engine_init(&platform, PRECISION_BF16, &err)) {
        fprintf(stderr, "zerosim: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }

    uint32_t *members = xmalloc(n * sizeof *members);
    for (uint32_t i = 0; i < n; i++)
        members[i] = i;
    size_t n_rows = 0;
    CollectiveRow rows[64];
    for (uint64_t bytes = min_bytes; bytes <= max_bytes && n_rows < 64; bytes *= 2) {
        EngineCollInfo info;
        double t = simulate(n, op, (double)bytes, &opts, members, &info, &err);
        if (t < 0) {
            fprintf(stderr, "zerosim: %s\n", err.msg);
            free(members);
            return EXIT_BAD_INPUT;
        }
        double algbw = t > 0 ? (double)bytes / t : 0.0;
        rows[n_rows++] = (CollectiveRow){
            (double)bytes, t, algbw, algbw * collective_busbw_factor(op, n), info.algo, info.proto};
    }
    free(members);

    bool aligned = n > platform.gpus_per_node && n % platform.gpus_per_node == 0;
    char title[256];
    snprintf(title, sizeof title,
             "zerosim collective: %s on %s, %u GPUs (%llu node%s x %llu), "
             "algorithm %s, %s model, %s mode",
             graph_collective_name(op), platform.name, n, (unsigned long long)platform.n_nodes,
             platform.n_nodes == 1 ? "" : "s", (unsigned long long)platform.gpus_per_node,
             opts.comm_model == COMM_MODEL_NCCL
                 ? (opts.algo == COLL_ALGO_AUTO ? "auto (NCCL's choice per size)"
                                                : collective_algo_name(opts.algo))
             : opts.algo == COLL_ALGO_AUTO && aligned && op == COLL_ALL_REDUCE
                 ? "auto (tree below 256 MiB, ring above)"
                 : collective_algo_name(collective_resolve(opts.algo, aligned, op, 0.0)),
             collective_comm_model_name(opts.comm_model), opts.is_stepwise ? "stepwise" : "fluid");
    Table table = {title, rows, n_rows};
    if (cli_emit_report(o[OPT_JSON].value, write_text, write_json, &table, &err)) {
        fprintf(stderr, "zerosim: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}
