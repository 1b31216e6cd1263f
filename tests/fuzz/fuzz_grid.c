/*
 * fuzz_grid.c - libFuzzer target for grid_parse (the grid file of `zerosim sweep`).
 *
 * Feeds arbitrary bytes to the parser; models, configs, platforms and calibration files named
 * in the grid resolve in the source tree (ZEROSIM_SOURCE_DIR) as the commands resolve them.
 * A grid the parser accepts is expanded at its first, middle and last points: every parameter
 * value and the point key are read, the point's JSONL row is written and its key read back
 * (it must equal the point's key: resumption matches on it), and the child's invocation is
 * built, writing the derived config and platform into a scratch directory, where they must
 * load again (the grid promised valid overrides at parse time), and removing them.
 * Seeds: workloads/grids/*.json, tests/golden/inputs/sweep-*.json and
 * tests/fuzz/regressions/grid-*.json; dictionary: grid.dict.
 */
#define _DEFAULT_SOURCE /* mkdtemp */

#include "inputs/ds_config.h"
#include "inputs/grid.h"
#include "inputs/grid_point.h"
#include "inputs/grid_report.h"
#include "inputs/platform.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

static void remove_scratch(void)
{
    (void)remove(scratch);
}

static void check_point(const Grid *g, size_t id)
{
    for (size_t k = 0; k < grid_n_params(g); k++) {
        if (grid_param_name(g, k) == NULL || grid_param_value(g, id, k) == NULL)
            abort();
    }
    char *key = grid_point_key(g, id);
    char *row = grid_jsonl_row(g, id, "failed", 1, "fuzz \"message\"\n", NULL);
    char *back = NULL;
    if (grid_jsonl_key(row, strlen(row), &back) != 0 || strcmp(back, key) != 0) {
        fprintf(stderr, "fuzz_grid: point %zu: key %s read back from its row as %s\n", id, key,
                back ? back : "(none)");
        abort();
    }
    free(back);
    free(row);
    free(key);

    GridInvocation inv;
    Err err = {0};
    if (grid_invocation_init(&inv, g, id, scratch, &err) == 0) {
        if (inv.args.n_items == 0)
            abort(); /* a child needs at least its command */
        /* The grid checked every override at load, so what the child reads must load. */
        Platform p;
        TrainConfig t;
        Err child_err = {0};
        if (inv.derived_platform[0] &&
            platform_load(&p, inv.derived_platform, ZEROSIM_SOURCE_DIR, &child_err) != 0) {
            fprintf(stderr, "fuzz_grid: point %zu: derived platform refused: %s\n", id,
                    child_err.msg);
            abort();
        }
        if (inv.derived_config[0]) {
            if (ds_config_load(&t, inv.derived_config, ZEROSIM_SOURCE_DIR, &child_err) != 0) {
                fprintf(stderr, "fuzz_grid: point %zu: derived config refused: %s\n", id,
                        child_err.msg);
                abort();
            }
            ds_config_fini(&t);
        }
    }
    grid_invocation_fini(&inv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (scratch[0] == '\0') {
        snprintf(scratch, sizeof scratch, "/tmp/zerosim-fuzz-grid.XXXXXX");
        if (mkdtemp(scratch) == NULL)
            abort();
        atexit(remove_scratch);
    }
    Err err = {0};
    Grid *g = grid_parse("fuzz.json", (const char *)data, size, ZEROSIM_SOURCE_DIR, &err);
    if (g == NULL) {
        if (!err.is_set || strchr(err.msg, '\n') != NULL)
            abort(); /* a refusal is one line */
        return 0;
    }
    const size_t n = grid_n_points(g);
    if (n == 0)
        abort();
    (void)grid_command_name(g);
    check_point(g, 0);
    check_point(g, n / 2);
    check_point(g, n - 1);
    for (size_t k = 0; k < grid_n_metrics(g); k++)
        (void)grid_metric_name(g, k);
    grid_destroy(g);
    return 0;
}
