/*
 * grid.c - grid files of `zerosim sweep`: parsing, expansion and point keys (see grid.h; a
 * point's derived inputs are grid_point.c's, its report read back grid_report.c's).
 *
 * A grid is a list of dimensions, each a list of canonical value texts. Point `id` is the
 * mixed-radix number whose last digit is the last dimension's value. Derived inputs are
 * copies of the source JSON with fields set by cJSON, so whatever the source file holds
 * (comments of "source" keys, keys zerosim does not model) reaches the child unchanged.
 */
#define _POSIX_C_SOURCE 200809L /* unlink */

#include "grid.h"
#include "grid_internal.h"

#include "../common/hash.h"
#include "../common/suggest.h"
#include "../common/xalloc.h"
#include "calibration.h"
#include "ds_config.h"
#include "jsonfile.h"
#include "model_config.h"
#include "platform.h"
#include "resolve.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define GRID_MAX_POINTS 100000000u /* ids are size_t; this keeps keys and files sane */

/* The fixed dimensions in expansion order (the first varies slowest). The enumerations are
 * the commands' own tables (common/choices.h); activation checkpointing's every:N has the
 * grammar of setup_recompute_parse, which tests/test_grid.c checks. */
const DimSpec grid_fixed_specs[N_FIXED] = {
    [D_MODEL] = {"models", "model", "--model", KIND_NAME, true, false, NULL, 0,
                 "a shipped model name or a .json path"},
    [D_CONFIG] = {"configs", "config", "--config", KIND_NAME, true, false, NULL, 0,
                  "a shipped ds_config name or a .json path"},
    [D_PLATFORM] = {"platforms", "platform", "--platform", KIND_NAME, true, false, NULL, 0,
                    "a shipped platform name or a .json path"},
    [D_GPUS] = {"gpus", "gpus", "--gpus", KIND_COUNT, false, false, NULL, 1ull << 30, NULL},
    [D_NODES] = {"nodes", "nodes", "--nodes", KIND_COUNT, false, false, NULL, 1ull << 30, NULL},
    [D_MICRO_BATCH] = {"micro_batch", "micro_batch", NULL, KIND_COUNT, false, false, NULL,
                       1ull << 31, NULL},
    [D_GLOBAL_BATCH] = {"global_batch", "global_batch", NULL, KIND_COUNT, false, false, NULL,
                        1ull << 31, NULL},
    [D_SEQ_LEN] = {"seq_len", "seq_len", "--seq-len", KIND_COUNT, false, false, NULL, 1ull << 40,
                   NULL},
    [D_CKPT] = {"activation_checkpointing", "activation_checkpointing",
                "--activation-checkpointing", KIND_CKPT, false, false, NULL, 0,
                "none, selective, full, selective-op or every:N"},
    [D_FLASH] = {"flash_attention", "flash_attention", "--flash-attention", KIND_ENUM, false, false,
                 &choices_flash, 0, NULL},
    [D_FSDP] = {"fsdp", "fsdp", "--fsdp", KIND_ENUM, false, true, &choices_fsdp, 0, NULL},
    [D_SCHEDULE] = {"schedule", "schedule", "--schedule", KIND_ENUM, false, true,
                    &choices_schedule, 0, NULL},
    [D_ALGO] = {"algo", "algo", "--algo", KIND_ENUM, false, true, &choices_algo, 0, NULL},
    [D_MODE] = {"mode", "mode", "--mode", KIND_ENUM, false, true, &choices_mode, 0, NULL},
    [D_STEPS] = {"steps", "steps", "--steps", KIND_COUNT, false, true, NULL, 1000, NULL},
    [D_CALIBRATION] = {"calibration", "calibration", "--calibration", KIND_NAME, false, true, NULL,
                       0, "a zerosim-calibrate .json path"},
};

static const DimSpec override_spec = {"overrides", NULL, NULL, KIND_NUMBER, false,
                                      false,       NULL, 0,    "a number"};

static const char *const top_keys[] = {"description",
                                       "command",
                                       "models",
                                       "configs",
                                       "platforms",
                                       "gpus",
                                       "nodes",
                                       "micro_batch",
                                       "global_batch",
                                       "seq_len",
                                       "activation_checkpointing",
                                       "flash_attention",
                                       "fsdp",
                                       "schedule",
                                       "algo",
                                       "mode",
                                       "steps",
                                       "calibration",
                                       "overrides",
                                       NULL};

static const char *const command_names[] = {"run", "estimate", NULL};

/* Metric columns: report JSON paths (docs/JSON-SCHEMA.md), the headline numbers first. */
static const char *const run_metrics[] = {"time.step_s",
                                          "throughput.tokens_per_s",
                                          "throughput.tflops_per_gpu",
                                          "throughput.mfu",
                                          "memory.gpu_peak_bytes",
                                          "memory.gpu_capacity_bytes",
                                          "memory.cpu_peak_bytes",
                                          "memory.nvme_peak_bytes",
                                          "memory.fits",
                                          "memory.oom.space",
                                          "time.compute_s",
                                          "time.optimizer_s",
                                          "time.exposed_comm_s",
                                          "time.exposed_cpu_optimizer_s",
                                          "time.exposed_h2d_s",
                                          "time.exposed_d2h_s",
                                          "time.exposed_nvme_read_s",
                                          "time.exposed_nvme_write_s",
                                          "time.busy_s.cpu_optimizer",
                                          "time.busy_s.h2d",
                                          "time.busy_s.d2h",
                                          "time.busy_s.nvme_read",
                                          "time.busy_s.nvme_write",
                                          "time.idle_s",
                                          "comm.bytes_per_rank.total",
                                          "comm.bytes_per_link_class.nvlink",
                                          "comm.bytes_per_link_class.pcie",
                                          "comm.bytes_per_link_class.nic",
                                          "flops.per_step",
                                          "cluster.gpus",
                                          "config.zero_stage",
                                          "config.micro_batch",
                                          "config.grad_accum",
                                          "config.global_batch",
                                          "config.seq_len",
                                          NULL};
static const char *const estimate_metrics[] = {"memory.gpu_peak_bytes",
                                               "memory.gpu_capacity_bytes",
                                               "memory.cpu_peak_bytes",
                                               "memory.nvme_peak_bytes",
                                               "memory.fits",
                                               "memory.fits_gpu",
                                               "memory.fits_cpu",
                                               "memory.fits_nvme",
                                               "comm.bytes_per_rank.total",
                                               "flops.per_step",
                                               "time.compute_bound_step_s",
                                               "cluster.gpus",
                                               "config.zero_stage",
                                               "config.micro_batch",
                                               "config.grad_accum",
                                               "config.global_batch",
                                               "config.seq_len",
                                               NULL};

/* ---- small helpers ---- */

/* The shortest text that reads back as v: integers without exponent below 2^53. */
/* "gpus[1]", or "gpus" for a value given alone. */
static const char *element_path(const char *key, size_t i, bool is_list, char *buf, size_t buf_size)
{
    if (is_list)
        snprintf(buf, buf_size, "%s[%zu]", key, i);
    else
        snprintf(buf, buf_size, "%s", key);
    return buf;
}

static bool is_clean_name(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 32 || *p == 127 || *p == ';')
            return false;
    return s[0] != '\0';
}

/* Same grammar as model/setup.c's setup_recompute_parse. */
static bool is_ckpt(const char *s)
{
    if (strcmp(s, "none") == 0 || strcmp(s, "selective") == 0 || strcmp(s, "full") == 0)
        return true;
    if (strncmp(s, "every:", 6) != 0 || s[6] < '1' || s[6] > '9')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long n = strtoul(s + 6, &end, 10);
    return *end == '\0' && errno == 0 && n <= 1000000;
}

/* Every "a.b.c" leading to a number in tree, for suggestions. */
static void number_paths(const cJSON *node, const char *prefix, StrList *out)
{
    const cJSON *child;
    cJSON_ArrayForEach(child, node)
    {
        if (child->string == NULL)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", child->string);
        if (cJSON_IsNumber(child))
            strlist_addf(out, "%s", path);
        else if (cJSON_IsObject(child))
            number_paths(child, path, out);
    }
}

const char *grid_format_number(double v, char *buf, size_t buf_size)
{
    if (v == 0)
        v = 0; /* no "-0" */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, buf_size, "%.0f", v);
        return buf;
    }
    snprintf(buf, buf_size, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, buf_size, "%.17g", v);
    return buf;
}

const cJSON *grid_walk(const cJSON *node, const char *dotted)
{
    char part[256];
    const char *p = dotted;
    while (node != NULL && *p) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof part)
            return NULL;
        memcpy(part, p, n);
        part[n] = '\0';
        node = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, part) : NULL;
        p += n;
        if (*p == '.')
            p++;
    }
    return node;
}

/* ---- parsing ---- */

typedef struct Parser {
    const char *file;
    const char *data_dir;
    Err *err;
} Parser;

static void dim_fini(Dim *d)
{
    for (size_t i = 0; i < d->n_values; i++)
        free(d->texts[i]);
    free(d->texts);
    free(d->numbers);
    free(d->column);
    free(d->path);
    free(d->input_at);
}

/* What a list of this dimension holds, for messages. */
static const char *list_expected(const DimSpec *spec, char *buf, size_t buf_size)
{
    if (spec->kind == KIND_COUNT)
        snprintf(buf, buf_size, "a list of integers in [1, %llu] (or one)",
                 (unsigned long long)spec->max);
    else if (spec->kind == KIND_NUMBER)
        snprintf(buf, buf_size, "a list of numbers (or one)");
    else if (spec->kind == KIND_ENUM) {
        char listed[256];
        snprintf(buf, buf_size, "a list of strings (or one): %s",
                 choices_expected(spec->choices, false, listed, sizeof listed));
    } else
        snprintf(buf, buf_size, "a list of strings (or one): %s", spec->expected);
    return buf;
}

/* Reads one value of d into its canonical text (and number). */
static int read_value(const Parser *ps, const DimSpec *spec, const cJSON *v, const char *where,
                      char **out_text, double *out_number)
{
    char found[64], expected[128], buf[64];
    jsonfile_describe(v, found, sizeof found);
    switch (spec->kind) {
    case KIND_NAME:
        if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
            return err_set(ps->err, "%s: %s: expected %s, got %s", ps->file, where, spec->expected,
                           found);
        if (!is_clean_name(v->valuestring))
            return err_set(ps->err,
                           "%s: %s: expected a name or path without ';' or control "
                           "characters, got %s",
                           ps->file, where, found);
        *out_text = xstrdup(v->valuestring);
        return 0;
    case KIND_COUNT:
        if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > (double)spec->max ||
            v->valuedouble != floor(v->valuedouble)) {
            snprintf(expected, sizeof expected, "integer in [1, %llu]",
                     (unsigned long long)spec->max);
            return err_set(ps->err, "%s: %s: expected %s, got %s", ps->file, where, expected,
                           found);
        }
        *out_number = v->valuedouble;
        *out_text = xstrdup(grid_format_number(v->valuedouble, buf, sizeof buf));
        return 0;
    case KIND_NUMBER:
        if (!cJSON_IsNumber(v))
            return err_set(ps->err, "%s: %s: expected a number, got %s", ps->file, where, found);
        *out_number = v->valuedouble;
        *out_text = xstrdup(grid_format_number(v->valuedouble, buf, sizeof buf));
        return 0;
    case KIND_ENUM: {
        /* case-insensitive for every table, as grids always were */
        for (size_t k = 0; cJSON_IsString(v) && k < choices_count(spec->choices); k++)
            if (strcasecmp(v->valuestring, choices_name(spec->choices, (int)k)) == 0) {
                *out_text = xstrdup(choices_name(spec->choices, (int)k));
                return 0;
            }
        char listed[256];
        return err_set(ps->err, "%s: %s: expected %s, got %s", ps->file, where,
                       choices_expected(spec->choices, false, listed, sizeof listed), found);
    }
    case KIND_CKPT:
        if (!cJSON_IsString(v) || !is_ckpt(v->valuestring))
            return err_set(ps->err, "%s: %s: expected %s, got %s", ps->file, where, spec->expected,
                           found);
        *out_text = xstrdup(v->valuestring);
        return 0;
    }
    return -1;
}

/* Reads the list `item` (or one value) at `key` into d. */
static int read_list(const Parser *ps, const DimSpec *spec, const char *key, const cJSON *item,
                     Dim *d)
{
    char where[320], expected[160];
    bool is_list = cJSON_IsArray(item);
    int n = is_list ? cJSON_GetArraySize(item) : 1;
    if (cJSON_IsObject(item) || n == 0)
        return err_set(ps->err, "%s: %s: expected %s, got %s", ps->file, key,
                       list_expected(spec, expected, sizeof expected),
                       n == 0 ? "an empty list" : "an object");
    d->texts = xcalloc((size_t)n, sizeof *d->texts);
    d->numbers = xcalloc((size_t)n, sizeof *d->numbers);
    for (int i = 0; i < n; i++) {
        const cJSON *v = is_list ? cJSON_GetArrayItem(item, i) : item;
        element_path(key, (size_t)i, is_list, where, sizeof where);
        if (read_value(ps, spec, v, where, &d->texts[i], &d->numbers[i]))
            return -1;
        d->n_values++;
        for (int j = 0; j < i; j++)
            if (strcmp(d->texts[j], d->texts[i]) == 0)
                return err_set(ps->err,
                               "%s: %s: expected a value not listed before, got %s "
                               "again (it is %s[%d])",
                               ps->file, where, d->texts[i], key, j);
    }
    return 0;
}

static Dim *add_dim(Grid *g)
{
    g->dims = xrealloc(g->dims, (g->n_dims + 1) * sizeof *g->dims);
    Dim *d = &g->dims[g->n_dims++];
    memset(d, 0, sizeof *d);
    return d;
}

static int read_fixed(const Parser *ps, Grid *g, const cJSON *root)
{
    for (int k = 0; k < N_FIXED; k++) {
        const DimSpec *spec = &grid_fixed_specs[k];
        g->fixed_at[k] = -1;
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, spec->grid_key);
        if (item == NULL || cJSON_IsNull(item)) {
            if (spec->is_required) {
                char expected[160];
                return err_set(ps->err,
                               "%s: %s: expected %s, got nothing (the key is "
                               "required)",
                               ps->file, spec->grid_key,
                               list_expected(spec, expected, sizeof expected));
            }
            continue;
        }
        if (spec->is_run_only && g->command == GRID_COMMAND_ESTIMATE)
            return err_set(ps->err,
                           "%s: %s: expected no %s with \"command\": \"estimate\" "
                           "(only zerosim run takes --%s), got a value",
                           ps->file, spec->grid_key, spec->grid_key, spec->option + 2);
        g->fixed_at[k] = (int)g->n_dims;
        Dim *d = add_dim(g);
        d->spec = spec;
        d->column = xstrdup(spec->column);
        if (read_list(ps, spec, spec->grid_key, item, d))
            return -1;
    }
    return 0;
}

/* Loads every model, config and platform once: a typo fails here, not in every point. */
/* Records a file the points read (once) with the digest of its bytes, as the file of value
 * `value` of dimension d. */
static void add_input(Grid *g, Dim *d, size_t value, const char *path, const char *text,
                      size_t n_bytes)
{
    if (d->input_at == NULL)
        d->input_at = xcalloc(d->n_values, sizeof *d->input_at);
    size_t i = 0;
    while (i < g->n_inputs && strcmp(g->inputs[i].path, path) != 0)
        i++;
    if (i == g->n_inputs) {
        g->inputs = xrealloc(g->inputs, (g->n_inputs + 1) * sizeof *g->inputs);
        GridInput *in = &g->inputs[g->n_inputs++];
        snprintf(in->path, sizeof in->path, "%s", path);
        in->hash = hash_fnv1a64(text, n_bytes);
    }
    d->input_at[value] = i;
}

/* Reads a file named as the commands name it, to record its digest. */
static int digest_input(const Parser *ps, Grid *g, Dim *d, size_t value, const char *subdir,
                        const char *what, Err *err)
{
    char path[1024];
    size_t n = 0;
    char *text =
        resolve_read(d->texts[value], ps->data_dir, subdir, what, path, sizeof path, &n, err);
    if (text == NULL)
        return -1;
    add_input(g, d, value, path, text, n);
    free(text);
    return 0;
}

static int load_sources(const Parser *ps, Grid *g, const cJSON *root)
{
    Err inner = {0};
    char where[320];
    Dim *models = &g->dims[g->fixed_at[D_MODEL]];
    bool is_list = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "models"));
    for (size_t i = 0; i < models->n_values; i++) {
        ModelConfig m = {0};
        int rc = model_config_load(&m, models->texts[i], ps->data_dir, &inner) ||
                 digest_input(ps, g, models, i, "workloads/models", "model", &inner);
        model_config_fini(&m);
        if (rc)
            return err_set(ps->err, "%s: %s: %s", ps->file,
                           element_path("models", i, is_list, where, sizeof where), inner.msg);
    }
    if (g->fixed_at[D_CALIBRATION] >= 0) {
        Dim *calibrations = &g->dims[g->fixed_at[D_CALIBRATION]];
        is_list = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "calibration"));
        Calibration *c = xmalloc(sizeof *c);
        for (size_t i = 0; i < calibrations->n_values; i++)
            if (calibration_load(c, calibrations->texts[i], &inner) ||
                digest_input(ps, g, calibrations, i, ".", "calibration", &inner)) {
                free(c);
                return err_set(ps->err, "%s: %s: %s", ps->file,
                               element_path("calibration", i, is_list, where, sizeof where),
                               inner.msg);
            }
        free(c);
    }
    const int kinds[2] = {D_CONFIG, D_PLATFORM};
    for (int s = 0; s < 2; s++) {
        const DimSpec *spec = &grid_fixed_specs[kinds[s]];
        Dim *d = &g->dims[g->fixed_at[kinds[s]]];
        bool is_config = kinds[s] == D_CONFIG;
        Source *sources = xcalloc(d->n_values, sizeof *sources);
        if (is_config)
            g->configs = sources;
        else
            g->platforms = sources;
        is_list = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, spec->grid_key));
        for (size_t i = 0; i < d->n_values; i++) {
            size_t n = 0;
            char *text = resolve_read(d->texts[i], ps->data_dir,
                                      is_config ? "workloads/ds_configs" : "platforms",
                                      is_config ? "config" : "platform", sources[i].path,
                                      sizeof sources[i].path, &n, &inner);
            int rc = -1;
            if (text != NULL && is_config) {
                TrainConfig t = {0};
                rc = ds_config_parse(&t, sources[i].path, text, n, &inner);
                ds_config_fini(&t);
            } else if (text != NULL) {
                Platform p;
                rc = platform_parse(&p, sources[i].path, text, n, &inner);
            }
            if (rc == 0) {
                sources[i].tree = cJSON_ParseWithLength(text, n);
                add_input(g, d, i, sources[i].path, text, n);
            }
            free(text);
            if (rc || sources[i].tree == NULL)
                return err_set(ps->err, "%s: %s: %s", ps->file,
                               element_path(spec->grid_key, i, is_list, where, sizeof where),
                               inner.msg);
        }
    }
    return 0;
}

static int compare_dims_by_path(const void *a, const void *b)
{
    return strcmp(((const Dim *)a)->path, ((const Dim *)b)->path);
}

/* Checks that an override path leads to a number in every platform, and that every value
 * gives a valid platform. */
static int check_override(const Parser *ps, const Grid *g, const Dim *d)
{
    const Dim *platforms = &g->dims[g->fixed_at[D_PLATFORM]];
    for (size_t p = 0; p < platforms->n_values; p++) {
        const Source *src = &g->platforms[p];
        const cJSON *node = grid_walk(src->tree, d->path);
        if (!cJSON_IsNumber(node)) {
            StrList paths;
            strlist_init(&paths);
            number_paths(src->tree, "", &paths);
            const char **names = xcalloc(paths.n_items + 1, sizeof *names);
            for (size_t k = 0; k < paths.n_items; k++)
                names[k] = paths.items[k];
            const char *best = suggest_closest(d->path, names);
            char found[64];
            err_set(ps->err,
                    "%s: %s: expected the dotted path of a number in platform %s "
                    "(e.g. nic.bw_bytes_per_s), got %s%s%s%s",
                    ps->file, d->column, src->path,
                    node ? jsonfile_describe(node, found, sizeof found) : "a path it does not have",
                    best ? " (did you mean \"" : "", best ? best : "", best ? "\"?)" : "");
            free(names);
            strlist_fini(&paths);
            return -1;
        }
        for (size_t i = 0; i < d->n_values; i++) {
            cJSON *copy = cJSON_Duplicate(src->tree, 1);
            cJSON_SetNumberValue((cJSON *)grid_walk(copy, d->path), d->numbers[i]);
            char *text = cJSON_Print(copy);
            cJSON_Delete(copy);
            char name[1536];
            snprintf(name, sizeof name, "%s: %s[%zu] applied to %s", ps->file, d->column, i,
                     src->path);
            Platform out;
            int rc = text ? platform_parse(&out, name, text, strlen(text), ps->err) : -1;
            free(text);
            if (rc)
                return -1;
        }
    }
    return 0;
}

static int read_overrides(const Parser *ps, Grid *g, const cJSON *root)
{
    g->first_override = g->n_dims;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "overrides");
    if (obj == NULL || cJSON_IsNull(obj))
        return 0;
    if (jsonfile_expect_object(obj, (JsonAt){ps->file, "overrides"}, ps->err))
        return -1;
    const cJSON *item;
    cJSON_ArrayForEach(item, obj)
    {
        char column[320];
        snprintf(column, sizeof column, "overrides.%s", item->string);
        for (size_t k = g->first_override; k < g->n_dims; k++)
            if (strcmp(g->dims[k].path, item->string) == 0)
                return err_set(ps->err, "%s: %s: expected each path once, got it twice", ps->file,
                               column);
        if (!is_clean_name(item->string) || strchr(item->string, '=') != NULL)
            return err_set(ps->err,
                           "%s: overrides: expected dotted paths like "
                           "nic.bw_bytes_per_s, got \"%s\"",
                           ps->file, item->string);
        Dim *d = add_dim(g);
        d->spec = &override_spec;
        d->column = xstrdup(column);
        d->path = xstrdup(item->string);
        if (read_list(ps, &override_spec, column, item, d))
            return -1;
    }
    qsort(g->dims + g->first_override, g->n_dims - g->first_override, sizeof *g->dims,
          compare_dims_by_path);
    for (size_t k = g->first_override; k < g->n_dims; k++)
        if (check_override(ps, g, &g->dims[k]))
            return -1;
    return 0;
}

Grid *grid_parse(const char *file, const char *text, size_t n_bytes, const char *data_dir, Err *err)
{
    cJSON *root = jsonfile_parse(file, text, n_bytes, err);
    if (root == NULL)
        return NULL;
    Grid *g = xcalloc(1, sizeof *g);
    snprintf(g->file, sizeof g->file, "%s", file);
    g->file_hash = hash_fnv1a64(text, n_bytes);
    Parser ps = {file, data_dir, err};
    JsonAt at = {file, ""};
    int command = GRID_COMMAND_RUN;
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    char found[64];
    int rc = jsonfile_expect_object(root, at, err) ||
             jsonfile_check_keys(root, at, top_keys, NULL, NULL, err) ||
             jsonfile_get_enum(root, "command", at, command_names, &command, err) < 0;
    if (rc == 0 && desc != NULL && !cJSON_IsString(desc) && !cJSON_IsNull(desc))
        rc = err_set(err, "%s: description: expected a string, got %s", file,
                     jsonfile_describe(desc, found, sizeof found));
    g->command = (GridCommand)command;
    if (rc == 0)
        rc = read_fixed(&ps, g, root) || load_sources(&ps, g, root) || read_overrides(&ps, g, root);
    if (rc == 0) {
        double n = 1;
        for (size_t k = 0; k < g->n_dims; k++)
            n *= (double)g->dims[k].n_values;
        if (n > GRID_MAX_POINTS)
            rc = err_set(err, "%s: expected a grid of at most %u points, got %.0f", file,
                         GRID_MAX_POINTS, n);
        g->n_points = (size_t)n;
    }
    cJSON_Delete(root);
    if (rc) {
        grid_destroy(g);
        return NULL;
    }
    g->metrics = g->command == GRID_COMMAND_RUN ? run_metrics : estimate_metrics;
    while (g->metrics[g->n_metrics])
        g->n_metrics++;
    return g;
}

Grid *grid_load(const char *path, const char *data_dir, Err *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        err_set(err, "%s: cannot open grid file: %s", path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap)
            text = xrealloc(text, cap = cap ? 2 * cap : 65536);
        got = fread(text + n, 1, cap - n, f);
        n += got;
    } while (got > 0 && n < (64u << 20));
    int failed = ferror(f);
    fclose(f);
    Grid *g = NULL;
    if (failed)
        err_set(err, "%s: cannot read grid file: I/O error (is it a directory?)", path);
    else
        g = grid_parse(path, text, n, data_dir, err);
    free(text);
    return g;
}

static void sources_free(Source *s, size_t n)
{
    for (size_t i = 0; s != NULL && i < n; i++)
        cJSON_Delete(s[i].tree);
    free(s);
}

void grid_destroy(Grid *g)
{
    if (g == NULL)
        return;
    int c = g->fixed_at[D_CONFIG], p = g->fixed_at[D_PLATFORM];
    if (g->configs)
        sources_free(g->configs, g->dims[c].n_values);
    if (g->platforms)
        sources_free(g->platforms, g->dims[p].n_values);
    for (size_t k = 0; k < g->n_dims; k++)
        dim_fini(&g->dims[k]);
    free(g->dims);
    free(g->inputs);
    free(g);
}

/* ---- points ---- */

const char *grid_file(const Grid *g)
{
    return g->file;
}

uint64_t grid_file_hash(const Grid *g)
{
    return g->file_hash;
}

const GridInput *grid_inputs(const Grid *g, size_t *out_n)
{
    *out_n = g->n_inputs;
    return g->inputs;
}

GridCommand grid_command(const Grid *g)
{
    return g->command;
}

const char *grid_command_name(const Grid *g)
{
    return command_names[g->command];
}

size_t grid_n_points(const Grid *g)
{
    return g->n_points;
}

size_t grid_n_params(const Grid *g)
{
    return g->n_dims;
}

const char *grid_param_name(const Grid *g, size_t k)
{
    return g->dims[k].column;
}

/* The index of point id's value in dimension k: digit k of id in mixed radix, the last
 * dimension least significant. */
size_t grid_value_index(const Grid *g, size_t id, size_t k)
{
    for (size_t j = g->n_dims; j-- > k + 1;)
        id /= g->dims[j].n_values;
    return id % g->dims[k].n_values;
}

const char *grid_param_value(const Grid *g, size_t id, size_t k)
{
    return g->dims[k].texts[grid_value_index(g, id, k)];
}

char *grid_point_key(const Grid *g, size_t id)
{
    size_t n = strlen("command=") + strlen(grid_command_name(g)) + 1;
    for (size_t k = 0; k < g->n_dims; k++)
        n += strlen(g->dims[k].column) + strlen(grid_param_value(g, id, k)) + 2;
    char *key = xmalloc(n);
    size_t used = (size_t)snprintf(key, n, "command=%s", grid_command_name(g));
    for (size_t k = 0; k < g->n_dims; k++)
        used += (size_t)snprintf(key + used, n - used, ";%s=%s", g->dims[k].column,
                                 grid_param_value(g, id, k));
    return key;
}


uint64_t grid_key_id(const char *key)
{
    return hash_mix64(hash_fnv1a64(key, strlen(key))) & GRID_ID_MASK;
}

uint64_t grid_point_id(const Grid *g, size_t index)
{
    char *key = grid_point_key(g, index);
    uint64_t id = grid_key_id(key);
    free(key);
    return id;
}

bool grid_point_is_in_shard(const Grid *g, size_t index, uint64_t shard, uint64_t n_shards)
{
    return n_shards <= 1 || grid_point_id(g, index) % n_shards == shard;
}

size_t grid_point_inputs(const Grid *g, size_t index, const GridInput **out)
{
    size_t n = 0;
    for (size_t k = 0; k < g->n_dims; k++)
        if (g->dims[k].input_at != NULL)
            out[n++] = &g->inputs[g->dims[k].input_at[grid_value_index(g, index, k)]];
    return n;
}
