/*
 * grid_point.h - what it takes to compute one point of a sweep grid: the command line of the
 * child zerosim, and the derived inputs written for it (a ds_config with the point's batch
 * sizes, a platform with its overrides) into a directory the caller owns.
 *
 * Derived inputs are copies of the source JSON with fields set, so whatever the source file
 * holds (comments of "source" keys, keys zerosim does not model) reaches the child unchanged.
 */
#ifndef ZEROSIM_INPUTS_GRID_POINT_H
#define ZEROSIM_INPUTS_GRID_POINT_H

#include "grid.h"

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

#endif
