/*
 * jsonfile.h - reading JSON files with errors a user can act on.
 *
 * Every parser in inputs/ goes through here: load a file (syntax errors report line:column),
 * check an object's keys against the format's vocabulary (unknown keys fail with the closest
 * valid key suggested; keys the format defines but zerosim does not model are collected as
 * warnings), and read typed, range-checked values. Each message names the file, the JSON path,
 * what was expected and what was found. This is the only place besides the parsers themselves
 * that sees cJSON; no cJSON node leaves inputs/.
 */
#ifndef ZEROSIM_INPUTS_JSONFILE_H
#define ZEROSIM_INPUTS_JSONFILE_H

#include "../common/err.h"
#include "../common/strlist.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a value sits: the file and the dotted path of the enclosing object ("" at the root). */
typedef struct JsonAt {
    const char *file;
    const char *path;
} JsonAt;

/* Parses text (length n_bytes) named `file` in messages. Returns a tree the caller frees with
 * cJSON_Delete, or NULL with err set (syntax errors give line:column). */
cJSON *jsonfile_parse(const char *file, const char *text, size_t n_bytes, Err *err);

/* Requires `value` to be an object; `what` describes it ("platform"). */
int jsonfile_expect_object(const cJSON *value, JsonAt at, Err *err);

/* Checks every key of obj: keys in `modelled` pass; keys in `not_modelled` (may be NULL) are
 * appended to warnings (may be NULL) as "path.key"; any other key fails with a suggestion.
 * Both lists are NULL-terminated. */
int jsonfile_check_keys(const cJSON *obj, JsonAt at, const char *const *modelled,
                        const char *const *not_modelled, StrList *warnings, Err *err);

/* The typed readers return 1 when the key is present and valid (out written), 0 when absent
 * or JSON null (out untouched), -1 with err set when present but wrong. jsonfile_get_u64
 * accepts integral doubles (5e8); a max of 2^53 or more is named in its message only to a
 * value beyond it ("integer >= 1" otherwise). */
int jsonfile_get_u64(const cJSON *obj, const char *key, JsonAt at, uint64_t min, uint64_t max,
                     uint64_t *out, Err *err);
int jsonfile_get_double(const cJSON *obj, const char *key, JsonAt at, double min, double max,
                        double *out, Err *err);
int jsonfile_get_bool(const cJSON *obj, const char *key, JsonAt at, bool *out, Err *err);
int jsonfile_get_string(const cJSON *obj, const char *key, JsonAt at, char *out, size_t out_size,
                        Err *err);
/* A string that must be one of `values` (NULL-terminated, compared case-insensitively);
 * out gets its index. */
int jsonfile_get_enum(const cJSON *obj, const char *key, JsonAt at, const char *const *values,
                      int *out, Err *err);

/* Fails with "missing key" when a required reader returned 0. Returns -1 when rc <= 0. */
int jsonfile_require(int rc, const char *key, JsonAt at, const char *expected, Err *err);

/* Writes "path.key" (or "key" at the root) into buf; returns buf. */
const char *jsonfile_key_path(JsonAt at, const char *key, char *buf, size_t buf_size);

/* Renders a value for an error message ("\"4k\"", "true", "{...}"), at most buf_size bytes. */
const char *jsonfile_describe(const cJSON *value, char *buf, size_t buf_size);

#endif
