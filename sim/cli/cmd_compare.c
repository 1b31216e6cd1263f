/*
 * cmd_compare.c - `zerosim compare`: two or more configurations simulated side by side.
 *
 * The command line is run's, with the columns named by repeating --config (one column per
 * config) or by --column "OPTIONS" (one column per group of run options laid over the
 * shared ones: `--column "--micro-batch 2" --column "--micro-batch 4"`). Each column runs as
 * a child `zerosim run` (study/compare.h); the table, JSON and CSV come from
 * report/compare_report.h and study/compare.h.
 */
#define _POSIX_C_SOURCE 200809L /* isatty, fileno */

#include "cli.h"

#include "common/xalloc.h"
#include "report/compare_html.h"
#include "report/compare_report.h"
#include "study/compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const help =
    "usage: zerosim compare --model M --platform P [run options] --config D1 --config D2 ...\n"
    "       zerosim compare --model M --config D --platform P [run options]\n"
    "                       --column \"OPTIONS\" --column \"OPTIONS\" ...\n"
    "\n"
    "Simulates two or more configurations as `zerosim run` does and sets them side by\n"
    "side: the verdict, step time, tokens/s, TFLOP/s per GPU and MFU, where rank 0's time\n"
    "goes, memory per GPU by category, bytes per collective and per link class; with two\n"
    "columns, the change from the first to the second. It answers \"what changes if I\n"
    "switch from X to Y\".\n"
    "\n"
    "columns:\n"
    "  --config D       repeated: one column per DeepSpeed config, every other option shared\n"
    "  --column OPTIONS repeated: one column per group of `zerosim run` options, given as\n"
    "                   one argument split at spaces and laid over the shared options (the\n"
    "                   column's win), e.g. --column \"--config zero3 --micro-batch 2\"\n"
    "                   (with --column, --config may be given once, as a shared option)\n"
    "options:\n"
    "  every option of `zerosim run` (see zerosim run --help) but --json, --trace and\n"
    "  --trace-ranks, shared by every column\n"
    "  --json FILE|-    also write the JSON report to FILE; '-' writes only JSON to stdout\n"
    "  --csv FILE|-     also write one CSV row per column to FILE; '-' only the CSV to stdout\n"
    "  --html FILE      also write the comparison as one self-contained HTML page (inline\n"
    "                   SVG): where each step goes, memory by category, bytes per link\n"
    "                   class\n"
    "  -h, --help       this text\n"
    "\n"
    "Columns run one after the other. The JSON schema is in docs/JSON-SCHEMA.md. Exit codes:\n"
    "0 every column ran (whether or not each fits: its verdict says), 1 bad input file,\n"
    "2 bad command line; a column's error is its `zerosim run` message, named by column.\n";

static const char *const cmd = "compare";

typedef struct CompareArgs {
    StrList shared;      /* run options for every column */
    StrList configs;     /* --config values */
    StrList column_text; /* --column values */
    const char *json, *csv, *html;
} CompareArgs;

static void args_fini(CompareArgs *a)
{
    strlist_fini(&a->shared);
    strlist_fini(&a->configs);
    strlist_fini(&a->column_text);
}

/* Sorts argv into compare's own options and the shared run options. 0, 1 after --help, or
 * EXIT_BAD_USAGE with the message printed. */
static int parse(int argc, char **argv, CompareArgs *a)
{
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(help, stdout);
            return 1;
        }
        const bool is_own = strcmp(arg, "--config") == 0 || strcmp(arg, "--column") == 0 ||
                            strcmp(arg, "--json") == 0 || strcmp(arg, "--csv") == 0 ||
                            strcmp(arg, "--html") == 0;
        if (strcmp(arg, "--trace") == 0 || strcmp(arg, "--trace-ranks") == 0)
            return cli_usage_error(cmd, "%s: expected in `zerosim run` only (compare writes no "
                                        "trace), got it here", arg);
        if (!is_own) {
            strlist_addf(&a->shared, "%s", arg);
            continue;
        }
        /* a column's value is itself options ("--micro-batch 2") */
        if (i + 1 >= argc || (strcmp(arg, "--column") != 0 && strncmp(argv[i + 1], "--", 2) == 0))
            return cli_usage_error(cmd, "%s: expected a value, got %s", arg,
                                   i + 1 >= argc ? "nothing" : "an option");
        const char *value = argv[++i];
        if (strcmp(arg, "--config") == 0)
            strlist_addf(&a->configs, "%s", value);
        else if (strcmp(arg, "--column") == 0)
            strlist_addf(&a->column_text, "%s", value);
        else if (strcmp(arg, "--json") == 0)
            a->json = value;
        else if (strcmp(arg, "--html") == 0)
            a->html = value;
        else
            a->csv = value;
    }
    if (a->html && strcmp(a->html, "-") == 0)
        return cli_usage_error(cmd, "--html: expected a file name (the page is not written to "
                                    "stdout), got \"-\"");
    if (a->json && a->csv && strcmp(a->json, "-") == 0 && strcmp(a->csv, "-") == 0)
        return cli_usage_error(cmd, "--json - and --csv -: expected at most one of them on "
                                    "stdout, got both");
    const size_t n_columns = a->column_text.n_items ? a->column_text.n_items : a->configs.n_items;
    if (a->column_text.n_items && a->configs.n_items > 1)
        return cli_usage_error(cmd, "--config: expected it once beside --column (shared by "
                                    "the columns), got it %zu times",
                               a->configs.n_items);
    if (n_columns < 2)
        return cli_usage_error(cmd, "expected two or more configurations (--config D twice, "
                                    "or --column OPTIONS twice), got %zu",
                               n_columns);
    return 0;
}

/* Column k's run options: the shared ones, then its own. */
static void build_column(const CompareArgs *a, size_t k, CompareColumn *c)
{
    strlist_init(&c->run_args);
    for (size_t i = 0; i < a->shared.n_items; i++)
        strlist_addf(&c->run_args, "%s", a->shared.items[i]);
    if (a->column_text.n_items == 0) {
        strlist_addf(&c->run_args, "--config");
        strlist_addf(&c->run_args, "%s", a->configs.items[k]);
        snprintf(c->label, sizeof c->label, "%s", a->configs.items[k]);
        return;
    }
    if (a->configs.n_items == 1) {
        strlist_addf(&c->run_args, "--config");
        strlist_addf(&c->run_args, "%s", a->configs.items[0]);
    }
    const char *text = a->column_text.items[k];
    snprintf(c->label, sizeof c->label, "%s", text);
    for (const char *p = text; *p;) {
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t");
        if (n > 0)
            strlist_addf(&c->run_args, "%.*s", (int)n, p);
        p += n;
    }
}

static void write_text(FILE *out, const void *report)
{
    compare_report_text(out, report);
}

static void write_json(FILE *out, const void *report)
{
    compare_report_json(out, report);
}

static void write_html(FILE *out, const void *report)
{
    compare_html_write(out, report);
}

typedef struct CsvData {
    const CompareColumn *columns;
    const RunSummary *summaries;
    size_t n;
} CsvData;

static void write_csv(FILE *out, const void *data)
{
    const CsvData *d = data;
    compare_csv_write(out, d->columns, d->summaries, d->n);
}

int cmd_compare(int argc, char **argv)
{
    CompareArgs a = {0};
    strlist_init(&a.shared);
    strlist_init(&a.configs);
    strlist_init(&a.column_text);
    int rc = parse(argc, argv, &a);
    if (rc) {
        args_fini(&a);
        return rc == 1 ? EXIT_OK : rc;
    }
    Err err = {0};
    const size_t n = a.column_text.n_items ? a.column_text.n_items : a.configs.n_items;
    CompareColumn *columns = xcalloc(n, sizeof *columns);
    RunSummary *summaries = xcalloc(n, sizeof *summaries);
    const char **labels = xcalloc(n, sizeof *labels);
    const StrList **args = xcalloc(n, sizeof *args);
    for (size_t k = 0; k < n; k++) {
        build_column(&a, k, &columns[k]);
        labels[k] = columns[k].label;
        args[k] = &columns[k].run_args;
    }
    int exit_code = EXIT_BAD_INPUT;
    if (cli_check_output(a.json, "the JSON report", &err) ||
        cli_check_output(a.csv, "the CSV", &err) ||
        cli_check_output(a.html, "the HTML report", &err))
        goto done;
    char exe[4096];
    cli_self_exe(argv[0], exe, sizeof exe);
    exit_code =
        compare_run(exe, columns, n, summaries, isatty(fileno(stderr)), cli_is_quiet, &err);
    if (exit_code)
        goto done;
    CompareReport report = {n, labels, args, summaries};
    CsvData csv = {columns, summaries, n};
    const bool csv_only = a.csv && strcmp(a.csv, "-") == 0;
    if (csv_only) {
        write_csv(stdout, &csv);
        exit_code = a.json ? cli_write_file(a.json, "the JSON report", write_json, &report, &err)
                           : EXIT_OK;
    } else {
        exit_code = cli_emit_report(a.json, write_text, write_json, &report, &err);
        if (exit_code == 0 && a.csv)
            exit_code = cli_write_file(a.csv, "the CSV", write_csv, &csv, &err);
    }
    if (exit_code == 0 && a.html)
        exit_code = cli_write_file(a.html, "the HTML report", write_html, &report, &err);
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    for (size_t k = 0; k < n; k++)
        strlist_fini(&columns[k].run_args);
    free(columns);
    free(summaries);
    free(labels);
    free(args);
    args_fini(&a);
    return exit_code;
}
