/*
 * fuzz_sweep_resume.c - libFuzzer target for the sweep's resume reader (study/sweep_output.c).
 *
 * A sweep reopens its output file, checks its sweep header and every kept row, and reads the
 * rows' keys. The fuzzed bytes are that file, for a two-point estimate grid of shipped inputs
 * (parsed once), read in CSV and in JSONL, as a dry run reads it (read-only). When the first
 * byte is even, the file starts with the headers this grid's sweep writes (the sweep header,
 * and the column line in CSV) and the rest of the input follows as rows, so that the fuzzer
 * reaches the row checks; when it is odd the input is the whole file. A file the reader
 * accepts must hold no more rows than the grid has points, and each of its keys must be a key
 * of the grid. Seeds: tests/fuzz/seeds/sweep-*; dictionary: sweep_resume.dict.
 */
#define _DEFAULT_SOURCE /* mkstemp */

#include "inputs/grid.h"
#include "inputs/sweep_header.h"
#include "study/sweep_output.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char grid_text[] =
    "{\"command\": \"estimate\", \"models\": [\"gpt2-1.5b\"], \"configs\": [\"zero2\"], "
    "\"platforms\": [\"workstation-2x-titan-rtx\"], \"gpus\": [1, 2]}";

static Grid *grid;
static char path[64];
static char columns[4096]; /* the CSV column line a sweep of the grid writes */

static void cleanup(void)
{
    grid_destroy(grid);
    (void)remove(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (grid == NULL) {
        Err err = {0};
        grid = grid_parse("g.json", grid_text, sizeof grid_text - 1, ZEROSIM_SOURCE_DIR, &err);
        snprintf(path, sizeof path, "/tmp/zerosim-fuzz-resume.XXXXXX");
        int fd = mkstemp(path);
        if (grid == NULL || fd < 0)
            abort(); /* the shipped inputs must parse */
        close(fd);
        atexit(cleanup);
        /* the column line, as a new CSV output gets it */
        SweepOutput o = {.path = path, .format = SWEEP_CSV, .n_shards = 1};
        if (remove(path) != 0 || sweep_output_open(&o, grid, false, &err) != 0)
            abort();
        sweep_output_close(&o);
        FILE *f = fopen(path, "r");
        char header[8192];
        if (f == NULL || fgets(header, sizeof header, f) == NULL ||
            fgets(columns, sizeof columns, f) == NULL)
            abort();
        fclose(f);
    }
    const bool is_whole = size > 0 && (data[0] & 1);
    const uint8_t *rows = size > 0 ? data + 1 : data;
    const size_t n_rows = size > 0 ? size - 1 : 0;
    for (int format = SWEEP_CSV; format <= SWEEP_JSONL; format++) {
        FILE *f = fopen(path, "wb");
        if (f == NULL)
            abort();
        if (!is_whole) { /* the headers a sweep of this grid writes, then the fuzzed rows */
            SweepHeader h;
            sweep_header_of(&h, grid, 0, 1);
            char *line = sweep_header_line(&h, format == SWEEP_CSV);
            sweep_header_fini(&h);
            fprintf(f, "%s\n", line);
            free(line);
            if (format == SWEEP_CSV)
                fputs(columns, f);
        }
        if (fwrite(rows, 1, n_rows, f) != n_rows || fclose(f) != 0)
            abort();
        SweepOutput o = {.path = path, .format = (SweepFormat)format, .shard = 0, .n_shards = 1};
        Err err = {0};
        if (sweep_output_open(&o, grid, true, &err) == 0) {
            if (o.n_done > grid_n_points(grid))
                abort();
            for (size_t i = 0; i < o.n_done; i++) {
                bool is_point = false;
                for (size_t id = 0; id < grid_n_points(grid) && !is_point; id++) {
                    char *key = grid_point_key(grid, id);
                    is_point = strcmp(key, o.done_keys[i]) == 0;
                    free(key);
                }
                if (!is_point)
                    abort(); /* a kept row that is no point of the grid */
            }
        }
        sweep_output_close(&o);
    }
    return 0;
}
