/*
 * sweep_output.h - the rows of a sweep (CSV or JSONL) in a file that survives interruption.
 *
 * A row is appended and flushed when its point finishes, so after an interruption the file
 * holds only complete rows; on reopening, a torn last line is cut off and the keys of the rows
 * there are read, so that a rerun skips those points. The file is locked while a sweep writes
 * it (two shards given the same --out would interleave rows). A CSV file starts with the
 * grid's header, and a file written by another grid is refused.
 */
#ifndef ZEROSIM_STUDY_SWEEP_OUTPUT_H
#define ZEROSIM_STUDY_SWEEP_OUTPUT_H

#include "../common/err.h"
#include "../inputs/grid.h"
#include "../inputs/grid_report.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum SweepFormat { SWEEP_CSV, SWEEP_JSONL } SweepFormat;

typedef struct SweepOutput {
    FILE *f;          /* stdout or the file; NULL after a read-only open */
    const char *path; /* NULL: stdout (set by the caller) */
    SweepFormat format; /* set by the caller */
    char **done_keys; /* sorted keys of the rows already there */
    size_t n_done;
} SweepOutput;

/* Opens the output: stdout, or the file, whose complete rows are kept (a torn last line from
 * an interruption is cut off) and whose keys are read. With is_read_only (a dry run) the file
 * is only read (a missing file has no rows). Writes the CSV header when the file is new.
 * 0, or -1 with err set ("PATH: cannot open the output: ...", a foreign header, a lock). */
int sweep_output_open(SweepOutput *o, const Grid *g, bool is_read_only, Err *err);

/* True when a row with this point key is already in the output. */
bool sweep_output_has_key(const SweepOutput *o, const char *key);

/* Appends one complete row for point id and flushes it; report may be NULL (a failed point).
 * 0, or -1 with err set when it cannot be written. */
int sweep_output_row(SweepOutput *o, const Grid *g, size_t id, const char *status, int exit_code,
                     const char *message, const GridReport *report, Err *err);

/* Closes the file (not stdout) and frees the keys. */
void sweep_output_close(SweepOutput *o);

#endif
