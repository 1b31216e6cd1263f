/*
 * grid_report.h - a sweep point's JSON report read back: the metrics a CSV row holds, and the
 * one-line JSONL row with the point and the full report.
 */
#ifndef ZEROSIM_INPUTS_GRID_REPORT_H
#define ZEROSIM_INPUTS_GRID_REPORT_H

#include "grid.h"
#include "grid_point.h"

/* The metric columns of a CSV row: report JSON paths ("time.step_s", "memory.fits"), which
 * depend on the command. Borrowed. */
size_t grid_n_metrics(const Grid *g);
const char *grid_metric_name(const Grid *g, size_t k);

/* A child's report, read back. */
typedef struct GridReport {
    char *json;      /* the report on one line, config.file naming the source config */
    StrList metrics; /* one text per metric column; "" when the report has no such value */
} GridReport;

/* Reads the JSON report a child printed for inv. Returns 0, or -1 with err set when the text
 * is not a report of the grid's command. The caller finis out in both cases. */
int grid_report_read(GridReport *out, const Grid *g, const GridInvocation *inv, const char *text,
                     size_t n_bytes, Err *err);
void grid_report_fini(GridReport *r);

/* One JSONL row, without the newline: {"id", "key", "point": {...}, "status", "exit_code",
 * "message" (null when none), "report" (null when none)}. malloc'd, the caller frees. */
char *grid_jsonl_row(const Grid *g, size_t id, const char *status, int exit_code,
                     const char *message, const GridReport *report);

/* The key of a JSONL row (n_bytes of text, no newline): malloc'd into *out_key, or -1 when
 * the line is not a JSON object with a string "key". */
int grid_jsonl_key(const char *line, size_t n_bytes, char **out_key);

#endif
