/*
 * grid.h - the grid file of `zerosim sweep`: lists of parameters whose cartesian product is a
 * set of points, each one `zerosim run` or `zerosim estimate`.
 *
 * A grid is our own JSON format (docs/SWEEP.md; unknown keys are errors): required lists of
 * models, configs and platforms, optional lists of GPU and node counts, batch sizes, sequence
 * lengths, activation checkpointing, FlashAttention, FSDP strategies, schedules, collective
 * algorithms, simulation modes, steps and calibration files, and "overrides": numeric
 * platform fields by dotted path, each with a list of values. Everything is checked at load:
 * every model, config, platform and calibration file is read and validated, every override
 * path must lead to a number in every platform, and each override value must give a valid
 * platform.
 *
 * Expansion is a mixed-radix count over the dimensions in a fixed order (models slowest, the
 * fixed dimensions as listed above, then override paths sorted by name; the last varies
 * fastest), so point `id` is stable for a given grid file. A point's key is the canonical
 * "name=value;..." text of its command and parameters: it does not depend on list order or
 * ids and is what resumption matches.
 *
 * For each point this module builds the command line of the child zerosim, writing a derived
 * ds_config (for batch sizes) and a derived platform (for overrides) into a directory the
 * caller owns, and reads the child's JSON report back: the metrics a CSV row holds and the
 * one-line JSONL row. Running processes, files of rows and resumption are the caller's
 * (cmd_sweep.c). The only module of the sweep that sees cJSON.
 */
#ifndef ZEROSIM_INPUTS_GRID_H
#define ZEROSIM_INPUTS_GRID_H

#include "../common/err.h"
#include "../common/strlist.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum GridCommand { GRID_COMMAND_RUN, GRID_COMMAND_ESTIMATE } GridCommand;

/* An expanded, validated grid. Opaque: it keeps the platforms' JSON for overrides. */
typedef struct Grid Grid;

/* Parses grid text named `file` in messages; models, configs and platforms are resolved in
 * data_dir as the commands do. Returns a grid to grid_destroy, or NULL with err set. */
Grid *grid_parse(const char *file, const char *text, size_t n_bytes, const char *data_dir,
                 Err *err);

/* Reads and parses the grid file at path. */
Grid *grid_load(const char *path, const char *data_dir, Err *err);

/* Frees the grid; NULL is a no-op. */
void grid_destroy(Grid *g);

GridCommand grid_command(const Grid *g);
/* "run" or "estimate". */
const char *grid_command_name(const Grid *g);

/* Number of points (the product of the list lengths). */
size_t grid_n_points(const Grid *g);

/* The parameters that vary or are set: the grid's dimensions in expansion order. Names are
 * the CSV columns ("model", "gpus", "overrides.nic.bw_bytes_per_s"); values are canonical
 * texts ("8", "12500000000", "every:2"). Both borrowed from the grid. */
size_t grid_n_params(const Grid *g);
const char *grid_param_name(const Grid *g, size_t k);
const char *grid_param_value(const Grid *g, size_t id, size_t k);

/* The point's key, "command=run;model=gpt2-1.5b;gpus=2;...": malloc'd, the caller frees. */
char *grid_point_key(const Grid *g, size_t id);

/* True when some point needs derived files (batch sizes or overrides). */
bool grid_has_derived_files(const Grid *g);

/* What it takes to compute one point: the arguments after the executable's name, and the
 * derived files written for it (empty strings when none), with the files they stand for. */
typedef struct GridInvocation {
    StrList args;              /* "run" "--model" "gpt2-1.5b" ... "--json" "-" */
    char derived_config[1024]; /* dir/p<id>-config.json, or "" */
    char derived_platform[1024];
    const char *source_config;   /* borrowed from the grid: the config file it derives from */
    const char *source_platform; /* the platform file */
} GridInvocation;

/* Fills inv for point id, writing derived files into dir (which must exist when
 * grid_has_derived_files). Returns 0, or -1 with err set when a file cannot be written. */
int grid_invocation_init(GridInvocation *inv, const Grid *g, size_t id, const char *dir, Err *err);

/* Removes the derived files and frees the arguments. */
void grid_invocation_fini(GridInvocation *inv);

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
