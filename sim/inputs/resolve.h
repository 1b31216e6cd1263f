/*
 * resolve.h - turning "llama-2-7b" into workloads/models/llama-2-7b.json.
 *
 * Model, config and platform arguments are either a path or a shipped name. Anything with a
 * '/' or a ".json" suffix is a path; a bare name is looked up under the data directory (the
 * source tree by default, ZEROSIM_DATA_DIR to override).
 */
#ifndef ZEROSIM_INPUTS_RESOLVE_H
#define ZEROSIM_INPUTS_RESOLVE_H

#include "../common/err.h"

#include <stddef.h>

/* Writes the file to open into out: arg itself when it looks like a path, else
 * <data_dir>/<subdir>/<arg>.json. Returns out. */
const char *resolve_input_path(const char *arg, const char *data_dir, const char *subdir, char *out,
                               size_t out_size);

/* Lists the shipped names (files <name>.json) under <data_dir>/<subdir>, sorted, separated by
 * ", ", into out (empty string when none). Returns out. */
const char *resolve_list_names(const char *data_dir, const char *subdir, char *out,
                               size_t out_size);

/* True when arg would be resolved as a shipped name rather than a path. */
int resolve_is_name(const char *arg);

/* Reads the raw text of a path or shipped name into a malloc'd buffer (caller frees) and the
 * path actually read into out_path. `what` names the argument in messages ("model"). An
 * unknown name fails listing the shipped ones. */
char *resolve_read(const char *arg, const char *data_dir, const char *subdir, const char *what,
                   char *out_path, size_t out_path_size, size_t *out_n_bytes, Err *err);

#endif
