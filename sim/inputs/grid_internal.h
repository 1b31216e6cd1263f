/*
 * grid_internal.h - what grid.c, grid_point.c and grid_report.c share about a parsed grid:
 * its dimensions, the files its points derive from, and how a point id maps to values.
 * Not for use outside those three files; everyone else goes through grid.h.
 */
#ifndef ZEROSIM_INPUTS_GRID_INTERNAL_H
#define ZEROSIM_INPUTS_GRID_INTERNAL_H

#include "../common/choices.h"
#include "grid.h"
#include "jsonfile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum DimKind {
    KIND_NAME,  /* a shipped name or a path */
    KIND_COUNT, /* an integer in [1, max] */
    KIND_ENUM,  /* one of values */
    KIND_CKPT,  /* none, selective, full, selective-op, every:N (setup_recompute_parse) */
    KIND_NUMBER /* an override: any number the platform accepts */
} DimKind;

typedef struct DimSpec {
    const char *grid_key; /* key in the grid file */
    const char *column;   /* CSV column and key name */
    const char *option;   /* the command's option; NULL when applied through a derived file */
    DimKind kind;
    bool is_required;
    bool is_run_only;
    const Choices *choices;    /* KIND_ENUM: common/choices.h's table */
    uint64_t max;              /* KIND_COUNT */
    const char *expected;      /* one value, for messages */
} DimSpec;

enum {
    D_MODEL,
    D_CONFIG,
    D_PLATFORM,
    D_GPUS,
    D_NODES,
    D_MICRO_BATCH,
    D_GLOBAL_BATCH,
    D_SEQ_LEN,
    D_CKPT,
    D_FLASH,
    D_FSDP,
    D_SCHEDULE,
    D_ALGO,
    D_MODE,
    D_STEPS,
    D_CALIBRATION,
    N_FIXED
};

/* The fixed dimensions' specifications, indexed by D_*. */
extern const DimSpec grid_fixed_specs[N_FIXED];

typedef struct Dim {
    const DimSpec *spec;
    char *column; /* owned: "gpus", "overrides.nic.bw_bytes_per_s" */
    char *path;   /* an override's platform field; NULL otherwise */
    size_t n_values;
    char **texts;    /* canonical value texts */
    double *numbers; /* KIND_COUNT and KIND_NUMBER values */
    size_t *input_at; /* models, configs, platforms, calibrations: each value's file in
                         Grid.inputs; NULL for other dimensions */
} Dim;

/* A config or platform file the points refer to. */
typedef struct Source {
    char path[1024]; /* as resolved */
    cJSON *tree;
} Source;

struct Grid {
    GridCommand command;
    Dim *dims;
    size_t n_dims;
    int fixed_at[N_FIXED]; /* index in dims, -1 when the grid does not give it */
    size_t first_override; /* dims[first_override..n_dims) are overrides */
    size_t n_points;
    Source *configs;   /* one per value of "configs" */
    Source *platforms; /* one per value of "platforms" */
    const char *const *metrics;
    size_t n_metrics;
    /* what the points read: the grid file and every model, config, platform and calibration
     * file, with the digests that a sweep's output records (inputs in the order read) */
    char file[1024];
    uint64_t file_hash;
    GridInput *inputs;
    size_t n_inputs;
};

/* The shortest text that reads back as v (integers without exponent below 2^53) into buf. */
const char *grid_format_number(double v, char *buf, size_t buf_size);

/* The node at dotted path "a.b.c" under node, or NULL. */
const cJSON *grid_walk(const cJSON *node, const char *dotted);

/* The index of point id's value in dimension k. */
size_t grid_value_index(const Grid *g, size_t id, size_t k);

#endif
