/*
 * grid_point.c - a sweep point's command line and derived inputs (see grid_point.h).
 */
#define _POSIX_C_SOURCE 200809L /* unlink */

#include "grid_point.h"

#include "grid_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void set_number(cJSON *obj, const char *key, double v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddItemToObject(obj, key, cJSON_CreateNumber(v));
}

bool grid_has_derived_files(const Grid *g)
{
    return g->fixed_at[D_MICRO_BATCH] >= 0 || g->fixed_at[D_GLOBAL_BATCH] >= 0 ||
           g->first_override < g->n_dims;
}

/* The value of fixed dimension k for point id, or NULL when the grid does not give it. */
static const char *fixed_text(const Grid *g, size_t id, int k)
{
    return g->fixed_at[k] < 0 ? NULL : grid_param_value(g, id, (size_t)g->fixed_at[k]);
}

static double fixed_number(const Grid *g, size_t id, int k)
{
    const Dim *d = &g->dims[g->fixed_at[k]];
    return d->numbers[grid_value_index(g, id, (size_t)g->fixed_at[k])];
}

static int write_json(const char *path, const cJSON *tree, const char *what, Err *err)
{
    char *text = cJSON_Print(tree);
    FILE *f = text ? fopen(path, "w") : NULL;
    int rc = f ? 0 : -1;
    if (f != NULL) {
        fputs(text, f);
        fputc('\n', f);
        rc = fclose(f) ? -1 : 0;
    }
    free(text);
    if (rc)
        return err_set(err, "%s: cannot write the derived %s: %s", path, what, strerror(errno));
    return 0;
}

/* DeepSpeed's batch keys for the point's batch sizes. A micro batch alone drops
 * train_batch_size (the global batch follows from it, the accumulation steps and the GPUs);
 * a global batch drops gradient_accumulation_steps (derived from the micro batch when the
 * config or the grid gives one, else the micro batch is the global batch over the GPUs). */
static void apply_batch(const Grid *g, size_t id, cJSON *tree)
{
    bool has_micro = g->fixed_at[D_MICRO_BATCH] >= 0, has_global = g->fixed_at[D_GLOBAL_BATCH] >= 0;
    if (has_micro) {
        set_number(tree, "train_micro_batch_size_per_gpu", fixed_number(g, id, D_MICRO_BATCH));
        if (!has_global)
            cJSON_DeleteItemFromObjectCaseSensitive(tree, "train_batch_size");
    }
    if (has_global) {
        set_number(tree, "train_batch_size", fixed_number(g, id, D_GLOBAL_BATCH));
        cJSON_DeleteItemFromObjectCaseSensitive(tree, "gradient_accumulation_steps");
    }
}

int grid_invocation_init(GridInvocation *inv, const Grid *g, size_t id, const char *dir, Err *err)
{
    memset(inv, 0, sizeof *inv);
    strlist_init(&inv->args);
    size_t ci = grid_value_index(g, id, (size_t)g->fixed_at[D_CONFIG]);
    size_t pi = grid_value_index(g, id, (size_t)g->fixed_at[D_PLATFORM]);
    inv->source_config = g->configs[ci].path;
    inv->source_platform = g->platforms[pi].path;
    if (g->fixed_at[D_MICRO_BATCH] >= 0 || g->fixed_at[D_GLOBAL_BATCH] >= 0) {
        snprintf(inv->derived_config, sizeof inv->derived_config, "%s/p%zu-config.json", dir, id);
        cJSON *copy = cJSON_Duplicate(g->configs[ci].tree, 1);
        apply_batch(g, id, copy);
        int rc = write_json(inv->derived_config, copy, "ds_config", err);
        cJSON_Delete(copy);
        if (rc) {
            inv->derived_config[0] = '\0';
            return -1;
        }
    }
    if (g->first_override < g->n_dims) {
        snprintf(inv->derived_platform, sizeof inv->derived_platform, "%s/p%zu-platform.json", dir,
                 id);
        cJSON *copy = cJSON_Duplicate(g->platforms[pi].tree, 1);
        for (size_t k = g->first_override; k < g->n_dims; k++)
            cJSON_SetNumberValue((cJSON *)grid_walk(copy, g->dims[k].path),
                                 g->dims[k].numbers[grid_value_index(g, id, k)]);
        int rc = write_json(inv->derived_platform, copy, "platform", err);
        cJSON_Delete(copy);
        if (rc) {
            inv->derived_platform[0] = '\0';
            return -1;
        }
    }
    strlist_addf(&inv->args, "%s", grid_command_name(g));
    for (int k = 0; k < N_FIXED; k++) {
        const char *text = fixed_text(g, id, k);
        const char *option = grid_fixed_specs[k].option;
        if (text == NULL || option == NULL || (k == D_FSDP && strcmp(text, "none") == 0))
            continue;
        if (k == D_CONFIG && inv->derived_config[0])
            text = inv->derived_config;
        if (k == D_PLATFORM && inv->derived_platform[0])
            text = inv->derived_platform;
        strlist_addf(&inv->args, "%s", option);
        strlist_addf(&inv->args, "%s", text);
    }
    strlist_addf(&inv->args, "--json");
    strlist_addf(&inv->args, "-");
    return 0;
}

void grid_invocation_fini(GridInvocation *inv)
{
    if (inv->derived_config[0])
        unlink(inv->derived_config);
    if (inv->derived_platform[0])
        unlink(inv->derived_platform);
    inv->derived_config[0] = inv->derived_platform[0] = '\0';
    strlist_fini(&inv->args);
}

