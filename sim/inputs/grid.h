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
 * A point's command line and derived files are grid_point.h's; its report read back,
 * grid_report.h's. Running processes, files of rows and resumption are study/sweep.h's.
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

#endif
