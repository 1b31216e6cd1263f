/*
 * run_summary.h - a `zerosim run` JSON report read back into the numbers `zerosim compare`
 * sets side by side.
 *
 * `compare` runs each configuration as a child `zerosim run --json -` (SimGrid takes one
 * platform per process) and reads its report here, the only place that sees cJSON. One table
 * names the rows: the report's JSON path (docs/JSON-SCHEMA.md), the text label, the unit and
 * the group the row is printed in; the text, JSON, CSV and HTML of compare all follow it.
 */
#ifndef ZEROSIM_INPUTS_RUN_SUMMARY_H
#define ZEROSIM_INPUTS_RUN_SUMMARY_H

#include "../common/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum SummaryUnit {
    SUMMARY_SECONDS,   /* printed as s */
    SUMMARY_RATE,      /* tokens/s, TFLOP/s: printed as a plain number */
    SUMMARY_FRACTION,  /* MFU: printed as % */
    SUMMARY_GIB,       /* memory bytes, printed in GiB */
    SUMMARY_GB,        /* bytes moved, printed in GB */
} SummaryUnit;

typedef enum SummaryGroup {
    SUMMARY_THROUGHPUT,
    SUMMARY_BREAKDOWN, /* where rank 0's step goes */
    SUMMARY_MEMORY,    /* per GPU, simulated */
    SUMMARY_COLLECTIVE_BYTES,
    SUMMARY_LINK_BYTES,
    SUMMARY_N_GROUPS
} SummaryGroup;

typedef struct SummaryRow {
    const char *path; /* in the run report, dotted: "time.step_s" */
    const char *text; /* "step time" */
    SummaryUnit unit;
    SummaryGroup group;
} SummaryRow;

enum { RUN_SUMMARY_N_ROWS = 37 };

/* Row k of the table (k < RUN_SUMMARY_N_ROWS). */
const SummaryRow *run_summary_row(size_t k);

/* The group's title ("time per step, rank 0"). */
const char *run_summary_group_title(SummaryGroup g);

typedef struct RunSummary {
    double values[RUN_SUMMARY_N_ROWS]; /* 0 where the report has no such number */
    char model[128];
    char config_file[256];
    char platform[64];
    uint64_t gpus, zero_stage, micro_batch, grad_accum, global_batch, seq_len;
    char precision[8];
    char offload_optimizer[8], offload_param[8];
    char recompute[32];
    bool fits;
    char runs_out[8];   /* "gpu", "cpu", "nvme" or "" */
    double short_bytes; /* by how much */
    char hint[256];     /* the verdict's change, or "" */
} RunSummary;

/* Reads a run report (n_bytes of JSON text); `what` names it in messages ("column 2"). 0, or
 * -1 with err set when the text is not a `zerosim run` report with every row's number. */
int run_summary_read(RunSummary *out, const char *what, const char *text, size_t n_bytes,
                     Err *err);

#endif
