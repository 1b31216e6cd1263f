/*
 * sweep_header.h - the first line of a sweep's output file: what its rows were computed from.
 *
 * It records the output format, zerosim's version, the command, the grid file with the digest
 * of its text and its number of points, the shard, and every input file the points read with
 * its digest (common/hash.h). A resumed sweep compares it with what it would write now and
 * refuses, saying what differs, when the rows would not be what this grid and these inputs
 * give; `zerosim sweep --merge` checks that every shard has the same one. In a CSV file the line
 * is `# zerosim-sweep {JSON}` (pandas: comment="#"), in a JSONL file `{"zerosim_sweep": {...}}`.
 * Reading it needs cJSON, so it lives in inputs/.
 */
#ifndef ZEROSIM_INPUTS_SWEEP_HEADER_H
#define ZEROSIM_INPUTS_SWEEP_HEADER_H

#include "../common/err.h"
#include "grid.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SWEEP_HEADER_FORMAT 2 /* 2: content ids, shard_points */
#define SWEEP_HEADER_CSV_PREFIX "# zerosim-sweep "

typedef struct SweepHeader {
    int format; /* SWEEP_HEADER_FORMAT */
    char zerosim[32];
    char command[16];
    char grid[1024];
    uint64_t grid_hash;
    uint64_t n_points;
    uint64_t n_shard_points; /* the points of this shard (id % n_shards == shard) */
    uint64_t shard, n_shards;
    GridInput *inputs; /* owned */
    size_t n_inputs;
} SweepHeader;

/* The header a sweep of g (shard/n_shards) by this zerosim writes. */
void sweep_header_of(SweepHeader *out, const Grid *g, uint64_t shard, uint64_t n_shards);

/* The header's line, without the newline (CSV: with its "# zerosim-sweep " prefix). malloc'd. */
char *sweep_header_line(const SweepHeader *h, bool is_csv);

/* Parses a header line (n_bytes, no newline) of the file named `file` in messages. 0, or -1
 * with err set ("FILE:1: expected a zerosim sweep header, got ..."). */
int sweep_header_parse(SweepHeader *out, const char *file, const char *line, size_t n_bytes,
                       bool is_csv, Err *err);

/* 0 when rows described by `found` (read from `file`) can be kept by a sweep that writes
 * `want` once each row's point and inputs are checked: the same zerosim version and format,
 * command and shard (with any_shard, the shard index may differ). Else -1 with err naming what
 * differs. Resumption uses this and then checks every row (study/sweep_output.c). */
int sweep_header_compare_origin(const SweepHeader *found, const SweepHeader *want,
                                const char *file, bool any_shard, Err *err);

/* As sweep_header_compare_origin, and also the same grid text and the same bytes in every
 * input file: rows that `want` would write as they are (merging shards). */
int sweep_header_compare(const SweepHeader *found, const SweepHeader *want, const char *file,
                         bool any_shard, Err *err);

/* The header's record of the input at path, or NULL when it has none. */
const GridInput *sweep_header_input(const SweepHeader *h, const char *path);

void sweep_header_fini(SweepHeader *h);

#endif
