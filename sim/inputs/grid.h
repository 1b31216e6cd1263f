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
 * fastest): a point's `index` is its place in that count. A point's key is the canonical
 * "name=value;..." text of its command and parameters, and its `id` a 53-bit digest of the
 * key: neither depends on the order of the lists or on the other points, so adding,
 * removing or reordering values keeps every remaining point's id (resumption and shards
 * match rows by id and key).
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
#include <stdint.h>

typedef enum GridCommand { GRID_COMMAND_RUN, GRID_COMMAND_ESTIMATE } GridCommand;

/* An expanded, validated grid. Opaque: it keeps the platforms' JSON for overrides. */
typedef struct Grid Grid;

/* Parses grid text named `file` in messages; models, configs and platforms are resolved in
 * data_dir as the commands do. Returns a grid to grid_destroy, or NULL with err set. */
Grid *grid_parse(const char *file, const char *text, size_t n_bytes, const char *data_dir,
                 Err *err);

/* Reads and parses the grid file at path. */
Grid *grid_load(const char *path, const char *data_dir, Err *err);

/* A file the grid's points read, as resolved, with the FNV-1a digest of its bytes. */
typedef struct GridInput {
    char path[1024];
    uint64_t hash;
} GridInput;

/* The grid file (as named to grid_parse) and the digest of its text. */
const char *grid_file(const Grid *g);
uint64_t grid_file_hash(const Grid *g);

/* Every model, config, platform and calibration file the points read, each once. Borrowed. */
const GridInput *grid_inputs(const Grid *g, size_t *out_n);

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
const char *grid_param_value(const Grid *g, size_t index, size_t k);

/* The key of the point at index, "command=run;model=gpt2-1.5b;gpus=2;...": malloc'd, the
 * caller frees. */
char *grid_point_key(const Grid *g, size_t index);

/* Ids are 53 bits, so that JSON readers (doubles) keep them exact. */
#define GRID_ID_MASK ((UINT64_C(1) << 53) - 1)

/* The content id of a key: FNV-1a-64 of its text, mixed (hash_mix64, so that ids modulo a
 * shard count spread evenly), to 53 bits. */
uint64_t grid_key_id(const char *key);

/* The content id of the point at index: grid_key_id of its key. */
uint64_t grid_point_id(const Grid *g, size_t index);

/* True when the point at index belongs to shard I of N: its id % N == I. */
bool grid_point_is_in_shard(const Grid *g, size_t index, uint64_t shard, uint64_t n_shards);

/* The files the point at index reads (its model, config, platform and calibration), at most
 * GRID_MAX_POINT_INPUTS, into out; returns how many. Borrowed from the grid. */
#define GRID_MAX_POINT_INPUTS 4
size_t grid_point_inputs(const Grid *g, size_t index, const GridInput **out);

#endif
