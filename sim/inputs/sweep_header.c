/*
 * sweep_header.c - a sweep output's first line, written and read back (see sweep_header.h).
 */
#include "sweep_header.h"

#include "../common/hash.h"
#include "../common/xalloc.h"
#include "jsonfile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sweep_header_of(SweepHeader *out, const Grid *g, uint64_t shard, uint64_t n_shards)
{
    memset(out, 0, sizeof *out);
    out->format = SWEEP_HEADER_FORMAT;
    snprintf(out->zerosim, sizeof out->zerosim, "%s", ZEROSIM_VERSION_STRING);
    snprintf(out->command, sizeof out->command, "%s", grid_command_name(g));
    snprintf(out->grid, sizeof out->grid, "%s", grid_file(g));
    out->grid_hash = grid_file_hash(g);
    out->n_points = grid_n_points(g);
    for (size_t i = 0; i < out->n_points; i++)
        out->n_shard_points += grid_point_id(g, i) % (n_shards ? n_shards : 1) == shard;
    out->shard = shard;
    out->n_shards = n_shards;
    const GridInput *inputs = grid_inputs(g, &out->n_inputs);
    out->inputs = xcalloc(out->n_inputs ? out->n_inputs : 1, sizeof *out->inputs);
    memcpy(out->inputs, inputs, out->n_inputs * sizeof *inputs);
}

char *sweep_header_line(const SweepHeader *h, bool is_csv)
{
    char hex[17], shard[48];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "format", h->format);
    cJSON_AddStringToObject(o, "zerosim", h->zerosim);
    cJSON_AddStringToObject(o, "command", h->command);
    cJSON_AddStringToObject(o, "grid", h->grid);
    cJSON_AddStringToObject(o, "grid_fnv1a64", hash_hex(h->grid_hash, hex));
    cJSON_AddNumberToObject(o, "points", (double)h->n_points);
    cJSON_AddNumberToObject(o, "shard_points", (double)h->n_shard_points);
    snprintf(shard, sizeof shard, "%" PRIu64 "/%" PRIu64, h->shard, h->n_shards);
    cJSON_AddStringToObject(o, "shard", shard);
    cJSON *inputs = cJSON_AddObjectToObject(o, "inputs_fnv1a64");
    for (size_t i = 0; i < h->n_inputs; i++)
        cJSON_AddStringToObject(inputs, h->inputs[i].path, hash_hex(h->inputs[i].hash, hex));
    cJSON *root = o;
    if (!is_csv) {
        root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "zerosim_sweep", o);
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (json == NULL) {
        fputs("zerosim: out of memory printing a sweep header\n", stderr);
        abort();
    }
    if (!is_csv)
        return json;
    size_t n = strlen(SWEEP_HEADER_CSV_PREFIX) + strlen(json) + 1;
    char *line = xmalloc(n);
    snprintf(line, n, "%s%s", SWEEP_HEADER_CSV_PREFIX, json);
    free(json);
    return line;
}

static int parse_hex(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsString(v) || strlen(v->valuestring) != 16)
        return -1;
    char *end = NULL;
    unsigned long long x = strtoull(v->valuestring, &end, 16);
    if (*end != '\0')
        return -1;
    *out = x;
    return 0;
}

int sweep_header_parse(SweepHeader *out, const char *file, const char *line, size_t n_bytes,
                       bool is_csv, Err *err)
{
    memset(out, 0, sizeof *out);
    const size_t n_prefix = strlen(SWEEP_HEADER_CSV_PREFIX);
    const char *json = line;
    size_t n_json = n_bytes;
    if (is_csv) {
        if (n_bytes < n_prefix || memcmp(line, SWEEP_HEADER_CSV_PREFIX, n_prefix) != 0)
            return err_set(err,
                           "%s:1: expected the sweep header (\"%s{...}\", written by zerosim "
                           "%s and later), got another line: an older zerosim or another "
                           "program wrote this file (use another --out)",
                           file, SWEEP_HEADER_CSV_PREFIX, ZEROSIM_VERSION_STRING);
        json += n_prefix;
        n_json -= n_prefix;
    }
    cJSON *root = cJSON_ParseWithLength(json, n_json);
    const cJSON *o = is_csv ? root : cJSON_GetObjectItemCaseSensitive(root, "zerosim_sweep");
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(o, "format");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(o, "zerosim");
    const cJSON *command = cJSON_GetObjectItemCaseSensitive(o, "command");
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(o, "grid");
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(o, "points");
    const cJSON *shard_points = cJSON_GetObjectItemCaseSensitive(o, "shard_points");
    const cJSON *shard = cJSON_GetObjectItemCaseSensitive(o, "shard");
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(o, "inputs_fnv1a64");
    unsigned long long s = 0, n = 0;
    int used = 0;
    /* counts are exact integers in a double up to 2^53; beyond, the file is not one zerosim
     * wrote (and the conversion to an integer would be undefined) */
    const double most = 9007199254740992.0;
    bool ok = cJSON_IsObject(o) && cJSON_IsNumber(format) && format->valuedouble >= 0 &&
              format->valuedouble <= 1e6 && cJSON_IsString(version) &&
              cJSON_IsString(command) && cJSON_IsString(grid) && cJSON_IsNumber(points) &&
              points->valuedouble >= 0 && points->valuedouble <= most &&
              cJSON_IsNumber(shard_points) && shard_points->valuedouble >= 0 &&
              shard_points->valuedouble <= most && cJSON_IsString(shard) && cJSON_IsObject(inputs) &&
              parse_hex(cJSON_GetObjectItemCaseSensitive(o, "grid_fnv1a64"), &out->grid_hash) ==
                  0 &&
              sscanf(shard->valuestring, "%llu/%llu%n", &s, &n, &used) == 2 &&
              shard->valuestring[used] == '\0' && n >= 1 && s < n;
    if (ok) {
        out->format = (int)format->valuedouble;
        snprintf(out->zerosim, sizeof out->zerosim, "%s", version->valuestring);
        snprintf(out->command, sizeof out->command, "%s", command->valuestring);
        snprintf(out->grid, sizeof out->grid, "%s", grid->valuestring);
        out->n_points = (uint64_t)points->valuedouble;
        out->n_shard_points = (uint64_t)shard_points->valuedouble;
        out->shard = s;
        out->n_shards = n;
        out->n_inputs = (size_t)cJSON_GetArraySize(inputs);
        out->inputs = xcalloc(out->n_inputs ? out->n_inputs : 1, sizeof *out->inputs);
        size_t i = 0;
        const cJSON *item;
        cJSON_ArrayForEach(item, inputs)
        {
            snprintf(out->inputs[i].path, sizeof out->inputs[i].path, "%s", item->string);
            ok = ok && parse_hex(item, &out->inputs[i].hash) == 0;
            i++;
        }
    }
    cJSON_Delete(root);
    if (!ok) {
        sweep_header_fini(out);
        return err_set(err, "%s:1: expected a zerosim sweep header, got a damaged one", file);
    }
    return 0;
}

static const char *compare_fix(bool any_shard)
{
    return any_shard ? "merge only the shards of one sweep"
                     : "use another --out, or remove the file to start again";
}

int sweep_header_compare_origin(const SweepHeader *found, const SweepHeader *want,
                                const char *file, bool any_shard, Err *err)
{
    const char *fix = compare_fix(any_shard);
    if (found->format != want->format || strcmp(found->zerosim, want->zerosim) != 0)
        return err_set(err,
                       "%s: expected rows of zerosim %s (sweep format %d), got rows of zerosim "
                       "%s (format %d), whose numbers may differ: %s",
                       file, want->zerosim, want->format, found->zerosim, found->format, fix);
    if (strcmp(found->command, want->command) != 0)
        return err_set(err, "%s: expected rows of `zerosim %s`, got rows of `zerosim %s`: %s", file,
                       want->command, found->command, fix);
    if (found->n_shards != want->n_shards || (!any_shard && found->shard != want->shard))
        return err_set(err, "%s: expected the rows of shard %" PRIu64 "/%" PRIu64 ", got shard %" PRIu64
                            "/%" PRIu64 ": %s",
                       file, want->shard, want->n_shards, found->shard, found->n_shards, fix);
    return 0;
}

const GridInput *sweep_header_input(const SweepHeader *h, const char *path)
{
    for (size_t k = 0; k < h->n_inputs; k++)
        if (strcmp(h->inputs[k].path, path) == 0)
            return &h->inputs[k];
    return NULL;
}

int sweep_header_compare(const SweepHeader *found, const SweepHeader *want, const char *file,
                         bool any_shard, Err *err)
{
    const char *fix = compare_fix(any_shard);
    if (sweep_header_compare_origin(found, want, file, any_shard, err))
        return -1;
    if (found->grid_hash != want->grid_hash || found->n_points != want->n_points)
        return err_set(err,
                       "%s: expected rows of the grid %s as it is now, got rows of a grid that "
                       "differs (%s, %" PRIu64 " points): %s",
                       file, want->grid, found->grid, found->n_points, fix);
    for (size_t i = 0; i < want->n_inputs; i++) {
        const GridInput *w = &want->inputs[i];
        const GridInput *f = sweep_header_input(found, w->path);
        if (f == NULL || f->hash != w->hash)
            return err_set(err,
                           "%s: expected rows computed from %s as it is now, got rows computed "
                           "from %s: the file changed since (its rows would differ): %s",
                           file, w->path, f ? "another version of it" : "other inputs", fix);
    }
    if (found->n_inputs != want->n_inputs)
        return err_set(err, "%s: expected rows computed from the grid's %zu input files, got "
                            "rows computed from %zu: %s",
                       file, want->n_inputs, found->n_inputs, fix);
    return 0;
}

void sweep_header_fini(SweepHeader *h)
{
    free(h->inputs);
    h->inputs = NULL;
    h->n_inputs = 0;
}
