/*
 * compare.h - `zerosim compare`: several configurations simulated one after the other, each
 * as its own `zerosim run`, read back side by side.
 *
 * SimGrid takes one platform per process, so each column is a child `zerosim run ... --json -`
 * (child_spawn) whose report inputs/run_summary.h reads; a column whose input is bad stops
 * the comparison with that child's message and exit code, named by its column. A column
 * that runs out of memory is still a column (its verdict says so). The CSV writer lives here
 * beside the sweep's CSV (csv.h); text and JSON are report/compare_report.h.
 */
#ifndef ZEROSIM_STUDY_COMPARE_H
#define ZEROSIM_STUDY_COMPARE_H

#include "../common/buf.h"
#include "../common/err.h"
#include "../common/strlist.h"
#include "../inputs/run_summary.h"

#include <stdio.h>

typedef struct CompareColumn {
    char label[96];   /* what the column is called: the --config value or the --column text */
    StrList run_args; /* the `zerosim run` options, shared ones first, the column's after */
} CompareColumn;

/* Runs each column with `exe` (this executable), reading its report into summaries[k].
 * 0 when every column ran (exit 0, or 3 for a configuration that runs out of memory); else
 * the failing child's exit code (1 bad input, 2 bad command line, or 1 when it crashed) with
 * err set to "column K (LABEL): its message". show_progress: a line per column on stderr;
 * a column's warnings go to stderr after "column K (LABEL): " unless is_quiet (then the
 * children run with --quiet). */
int compare_run(const char *exe, const CompareColumn *columns, size_t n_columns,
                RunSummary *summaries, bool show_progress, bool is_quiet, Err *err);

/* The CSV (RFC 4180): a header, then one row per column: label, the inputs, the verdict and
 * every run_summary row's number under its report path. */
void compare_csv_write(FILE *out, const CompareColumn *columns, const RunSummary *summaries,
                       size_t n_columns);

#endif
