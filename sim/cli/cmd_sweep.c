/*
 * cmd_sweep.c - `zerosim sweep`: a grid of runs or estimates in parallel worker processes,
 * streamed to CSV or JSONL, resumable, shardable.
 *
 * The command line, the dry run and the summary. The grid is inputs/grid.h's; running its
 * points in worker processes study/sweep.h's; the resumable file of rows
 * study/sweep_output.h's.
 */
#define _DEFAULT_SOURCE /* mkdtemp, readlink, with POSIX 2008 */

#include "cli.h"

#include "common/err.h"
#include "common/xalloc.h"
#include "inputs/grid.h"
#include "inputs/grid_point.h"
#include "study/sweep.h"
#include "study/sweep_merge.h"
#include "study/sweep_output.h"
#include "study/sweep_summary.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const help =
    "usage: zerosim sweep GRID [options]\n"
    "       zerosim sweep --merge OUT SHARD...\n"
    "\n"
    "Runs every point of a grid file: the cartesian product of its lists of models,\n"
    "configs, platforms, GPU and node counts, batch sizes, sequence lengths, activation\n"
    "checkpointing, FlashAttention, FSDP strategies, schedules, collective algorithms,\n"
    "simulation modes, steps, calibration files and platform overrides\n"
    "(\"overrides\": {\"nic.bw_bytes_per_s\": [12.5e9, 25e9]}).\n"
    "Each point is `zerosim run` (or `estimate`, with \"command\": \"estimate\") in its own\n"
    "worker process; rows are written as points finish. Format: docs/SWEEP.md.\n"
    "\n"
    "options:\n"
    "  -j N             worker processes (default 1)\n"
    "  --out FILE       write rows to FILE.csv or FILE.jsonl (default: CSV on stdout).\n"
    "                   If FILE exists its rows are kept and their points skipped, so\n"
    "                   the same command resumes an interrupted sweep\n"
    "  --format csv|jsonl\n"
    "                   the format when --out is absent or has another extension\n"
    "  --shard I/N      only the points whose id % N == I (0 <= I < N; an id is a digest\n"
    "                   of the point's key): N shards with one --out each cover the grid\n"
    "                   once (SLURM job arrays, GNU parallel)\n"
    "  --dry-run        list the points (id, todo or done, key) without running them\n"
    "  --summary        once the sweep is done, print its rows (kept ones too) on stdout as\n"
    "                   a table in rounded units: the grid's parameters, status, step,\n"
    "                   tokens/s, TFLOP/s, MFU, GPU peak, fits, exposed communication, CPU\n"
    "                   optimizer and offload time (run), compute bound (estimate); needs\n"
    "                   --out FILE.csv\n"
    "  --merge OUT      merge the shard files of one sweep (every shard once, every point\n"
    "                   once, the same grid and inputs) into OUT, rows in id order\n"
    "  -h, --help       this text\n"
    "\n"
    "The first line records zerosim's version, the grid and every input file with their\n"
    "digests and the shard. A resumed sweep checks every row, keeps those of points still in\n"
    "the grid whose input files are unchanged, and computes the others again.\n"
    "CSV columns: id, key (the point's canonical parameters, used for resumption), the\n"
    "grid's parameters, status (ok or error), exit_code (3: out of memory, still a row\n"
    "with memory.fits false), the main metrics named by their report JSON path\n"
    "(time.step_s, throughput.tokens_per_s, memory.gpu_peak_bytes, memory.fits, ...) and\n"
    "message (why a point failed). JSONL rows hold the point and the full report.\n"
    "A progress bar is drawn on stderr when it is a terminal; a summary line ends the run.\n"
    "\n"
    "Exit codes: 0 the sweep finished (failed points are rows with status error),\n"
    "1 bad grid file or unusable output file, 2 bad command line, 130 interrupted (the\n"
    "rows written are complete: run the same command again to resume).\n";

enum { OPT_JOBS, OPT_OUT, OPT_FORMAT, OPT_SHARD, OPT_DRY_RUN, OPT_MERGE, OPT_SUMMARY, N_OPTS };
enum { MAX_JOBS = 256, EXIT_INTERRUPTED = 130 };

static const char *const cmd = "sweep";

/* This executable, to run the points with. */
static void self_path(const char *argv0, char *out, size_t out_size)
{
    ssize_t n = readlink("/proc/self/exe", out, out_size - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    snprintf(out, out_size, "%s", argv0);
}

/* ---- the command ---- */

/* Moves the arguments that are not options (the grid file) from argv to grids, the others
 * to rest. */
static void split_arguments(int argc, char **argv, const CliOption *o, char **rest, int *n_rest,
                            const char **grids, int *n_grids)
{
    *n_rest = *n_grids = 0;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        bool takes_value = false;
        for (int k = 0; k < N_OPTS; k++)
            if (strcmp(arg, o[k].name) == 0)
                takes_value = o[k].takes_value;
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            grids[(*n_grids)++] = arg;
            continue;
        }
        rest[(*n_rest)++] = argv[i];
        if (takes_value && i + 1 < argc)
            rest[(*n_rest)++] = argv[++i];
    }
}


static int parse_format(const char *out, const char *format, SweepFormat *result)
{
    const char *dot = out ? strrchr(out, '.') : NULL;
    int by_name = -1, by_option = -1;
    if (dot && strcmp(dot, ".csv") == 0)
        by_name = SWEEP_CSV;
    else if (dot && strcmp(dot, ".jsonl") == 0)
        by_name = SWEEP_JSONL;
    if (format && strcmp(format, "csv") == 0)
        by_option = SWEEP_CSV;
    else if (format && strcmp(format, "jsonl") == 0)
        by_option = SWEEP_JSONL;
    else if (format)
        return cli_usage_error(cmd, "--format: expected csv or jsonl, got \"%s\"", format);
    if (by_name >= 0 && by_option >= 0 && by_name != by_option)
        return cli_usage_error(cmd,
                               "--format: expected the format of --out \"%s\", got "
                               "\"%s\"",
                               out, format);
    if (out && strcmp(out, "-") != 0 && by_name < 0 && by_option < 0)
        return cli_usage_error(cmd,
                               "--out: expected a file ending in .csv or .jsonl (or "
                               "--format), got \"%s\"",
                               out);
    *result = (SweepFormat)(by_option >= 0 ? by_option : by_name >= 0 ? by_name : SWEEP_CSV);
    return 0;
}

static void dry_run(const Grid *g, const SweepOutput *o, uint64_t shard, uint64_t n_shards)
{
    size_t listed = 0, done = 0;
    for (size_t id = 0; id < grid_n_points(g); id++) {
        if (!grid_point_is_in_shard(g, id, shard, n_shards))
            continue;
        char *key = grid_point_key(g, id);
        bool is_done = sweep_output_has_key(o, key);
        printf("%" PRIu64 "\t%s\t%s\n", grid_point_id(g, id), is_done ? "done" : "todo", key);
        free(key);
        listed++;
        done += is_done;
    }
    fprintf(stderr, "zerosim sweep: %zu points in the grid, %zu in this shard, %zu done\n",
            grid_n_points(g), listed, done);
}

/* `zerosim sweep --merge OUT SHARD...`: the shards of one sweep into one file. */
static int merge(const CliOption *o, const char *const *files, size_t n_files)
{
    const char *out_path = o[OPT_MERGE].value;
    for (int k = 0; k < N_OPTS; k++)
        if (k != OPT_MERGE && k != OPT_FORMAT && o[k].value != NULL)
            return cli_usage_error(cmd, "--merge: expected only shard files (and --format), got %s",
                                   o[k].name);
    if (n_files == 0)
        return cli_usage_error(cmd, "--merge %s: expected the shard files to merge, got none",
                               out_path);
    SweepFormat format;
    if (strcmp(out_path, "-") == 0)
        return cli_usage_error(cmd, "--merge: expected an output file, got \"-\"");
    if (parse_format(out_path, o[OPT_FORMAT].value, &format))
        return EXIT_BAD_USAGE;
    for (size_t i = 0; i < n_files; i++) {
        SweepFormat shard_format;
        if (parse_format(files[i], NULL, &shard_format))
            return EXIT_BAD_USAGE;
        if (shard_format != format)
            return cli_usage_error(cmd, "--merge: expected shards in the format of %s, got \"%s\"",
                                   out_path, files[i]);
    }
    Err err = {0};
    if (sweep_merge(out_path, format, files, n_files, &err)) {
        fprintf(stderr, "zerosim: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    fprintf(stderr, "zerosim sweep: merged %zu shards into %s\n", n_files, out_path);
    return EXIT_OK;
}

/* Removes what killed sweeps left in $TMPDIR, and makes the directory for this sweep's
 * derived inputs when its grid has some (tmp_dir stays "" otherwise). 0, or -1 with err. */
static int prepare_tmp_dir(const Grid *g, char *tmp_dir, size_t size, Err *err)
{
    const char *base = getenv("TMPDIR");
    base = base && base[0] ? base : "/tmp";
    size_t n_stale = sweep_remove_stale_tmp_dirs(base);
    if (n_stale > 0)
        fprintf(stderr,
                "zerosim sweep: removed %zu director%s of derived inputs that killed sweeps "
                "left in %s\n",
                n_stale, n_stale == 1 ? "y" : "ies", base);
    return grid_has_derived_files(g) ? sweep_make_tmp_dir(base, tmp_dir, size, err) : 0;
}

/* The line that ends a sweep on stderr (nothing after a failure: its message says why). */
static void summary(SweepStatus status, const Grid *g, const SweepOutput *out,
                    const SweepTally *t, uint64_t shard, uint64_t n_shards)
{
    const char *where = out->path ? out->path : "the output";
    char scope[96] = "";
    if (n_shards > 1)
        snprintf(scope, sizeof scope, "shard %llu/%llu: ", (unsigned long long)shard,
                 (unsigned long long)n_shards);
    if (status == SWEEP_INTERRUPTED)
        fprintf(stderr,
                "zerosim sweep: interrupted: %s%zu of %zu points in %s; run the same "
                "command again to resume\n",
                scope, t->skipped + t->finished, t->total, where);
    else if (status == SWEEP_DONE)
        fprintf(stderr,
                "zerosim sweep: %s%zu of %zu points: %zu computed (%zu errors, %zu do "
                "not fit), %zu already in %s\n",
                scope, t->total, grid_n_points(g), t->finished, t->errors, t->not_fitting,
                t->skipped, where);
}

int cmd_sweep(int argc, char **argv)
{
    CliOption o[N_OPTS] = {
        [OPT_JOBS] = {"-j", true, NULL},
        [OPT_OUT] = {"--out", true, NULL},
        [OPT_FORMAT] = {"--format", true, NULL},
        [OPT_SHARD] = {"--shard", true, NULL},
        [OPT_DRY_RUN] = {"--dry-run", false, NULL},
        [OPT_MERGE] = {"--merge", true, NULL},
        [OPT_SUMMARY] = {"--summary", false, NULL},
    };
    char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
    const char **grids = xcalloc((size_t)argc + 1, sizeof *grids);
    int n_rest = 0, n_grids = 0;
    split_arguments(argc, argv, o, rest, &n_rest, grids, &n_grids);
    int rc = cli_parse(cmd, help, n_rest, rest, 0, o, N_OPTS);
    const char *grid_path = grids[0];
    if (rc == 0 && o[OPT_MERGE].value != NULL) {
        rc = merge(o, grids, (size_t)n_grids);
        free(rest);
        free(grids);
        return rc;
    }
    if (rc == 0 && n_grids == 0)
        rc = cli_usage_error(cmd, "expected a grid file, got nothing");
    else if (rc == 0 && n_grids > 1)
        rc = cli_usage_error(cmd, "expected one grid file, got \"%s\" and \"%s\"", grids[0],
                             grids[1]);
    free(rest);
    free(grids);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    uint64_t n_jobs = 1, shard = 0, n_shards = 1;
    SweepFormat format = SWEEP_CSV;
    const char *out_path = o[OPT_OUT].value;
    if (cli_count(cmd, "-j", o[OPT_JOBS].value, &n_jobs) ||
        cli_shard(cmd, o[OPT_SHARD].value, &shard, &n_shards) ||
        parse_format(out_path, o[OPT_FORMAT].value, &format))
        return EXIT_BAD_USAGE;
    if (n_jobs > MAX_JOBS)
        return cli_usage_error(cmd, "-j: expected at most %d, got %llu", MAX_JOBS,
                               (unsigned long long)n_jobs);
    bool is_dry_run = o[OPT_DRY_RUN].value != NULL;
    if (out_path && strcmp(out_path, "-") == 0)
        out_path = NULL;
    const bool want_summary = o[OPT_SUMMARY].value != NULL;
    if (want_summary && (out_path == NULL || format != SWEEP_CSV))
        return cli_usage_error(cmd, "--summary: expected --out FILE.csv (stdout would hold both "
                                    "the rows and the table), got %s",
                               out_path ? out_path : "rows on stdout");
    if (want_summary && is_dry_run)
        return cli_usage_error(cmd, "--summary: expected a sweep that runs, got --dry-run");

    Err err = {0};
    SweepOutput out = {.path = out_path, .format = format, .shard = shard, .n_shards = n_shards};
    char tmp_dir[PATH_MAX] = "";
    int exit_code = EXIT_BAD_INPUT;
    SweepTally t = {0};
    Grid *g = grid_load(grid_path, cli_data_dir(), &err);
    if (g == NULL || sweep_output_open(&out, g, is_dry_run, &err))
        goto done;
    if (is_dry_run) {
        dry_run(g, &out, shard, n_shards);
        exit_code = EXIT_OK;
        goto done;
    }
    if (prepare_tmp_dir(g, tmp_dir, sizeof tmp_dir, &err))
        goto done;
    sweep_count(g, &out, shard, n_shards, &t);
    t.has_bar = isatty(STDERR_FILENO) && !(out.f == stdout && isatty(STDOUT_FILENO));
    char exe[PATH_MAX];
    self_path(argv[0], exe, sizeof exe);
    SweepOptions opts = {exe, tmp_dir, (size_t)n_jobs, shard, n_shards};
    SweepStatus status = sweep_run(g, &out, &opts, &t, &err);
    exit_code = status == SWEEP_DONE          ? EXIT_OK
                : status == SWEEP_INTERRUPTED ? EXIT_INTERRUPTED
                                              : EXIT_BAD_INPUT;
    summary(status, g, &out, &t, shard, n_shards);
    if (status == SWEEP_DONE && want_summary && sweep_summary_write(stdout, out_path, &err))
        exit_code = EXIT_BAD_INPUT;
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    if (tmp_dir[0])
        rmdir(tmp_dir);
    sweep_output_close(&out);
    grid_destroy(g);
    return exit_code;
}
