/*
 * compare_report.h - `zerosim compare` output: configurations side by side.
 *
 * One column per configuration, one row per number of the run report that compare reads
 * (inputs/run_summary.h's table: step, tokens/s, MFU, where the time goes, memory by
 * category, bytes by collective and by link class), with the inputs and the verdict on top;
 * with two columns, a last column gives the second's change against the first. The JSON
 * carries the same numbers under their run-report paths (docs/JSON-SCHEMA.md).
 */
#ifndef ZEROSIM_REPORT_COMPARE_REPORT_H
#define ZEROSIM_REPORT_COMPARE_REPORT_H

#include "../common/strlist.h"
#include "../inputs/run_summary.h"

#include <stdio.h>

typedef struct CompareReport {
    size_t n_columns;
    const char *const *labels;     /* n_columns */
    const StrList *const *args;    /* n_columns: each column's `zerosim run` options */
    const RunSummary *summaries;   /* n_columns */
} CompareReport;

void compare_report_text(FILE *out, const CompareReport *r);

void compare_report_json(FILE *out, const CompareReport *r);

#endif
