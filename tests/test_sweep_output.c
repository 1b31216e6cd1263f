/*
 * test_sweep_output.c - a sweep's resumable output file (study/sweep_output.c).
 *
 * On a two-point estimate grid (gpt2-1.5b, zero2, the two-GPU workstation, gpus 1 and 2) in a
 * fresh temporary directory: a new CSV file gets the grid's header, rows are appended complete
 * (RFC 4180 quoting of messages, empty metrics for a failed point), reopening reads their keys
 * back, a torn last line is cut off the file, a foreign header and a line without a key are
 * refused with their messages, a file another writer holds is refused, a dry run reads a
 * missing file as empty and leaves an existing one untouched, and JSONL rows round-trip their
 * keys too.
 */
#define _DEFAULT_SOURCE /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/sweep_header.h"
#include "study/sweep_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA ZEROSIM_SOURCE_DIR
#define GRID_TEXT                                                                              \
    "{\"command\": \"estimate\", \"models\": [\"gpt2-1.5b\"], \"configs\": [\"zero2\"], "      \
    "\"platforms\": [\"workstation-2x-titan-rtx\"], \"gpus\": [1, 2]}"
#define KEY0                                                                                   \
    "command=estimate;model=gpt2-1.5b;config=zero2;platform=workstation-2x-titan-rtx;gpus=1"
#define KEY1                                                                                   \
    "command=estimate;model=gpt2-1.5b;config=zero2;platform=workstation-2x-titan-rtx;gpus=2"
/* The points' content ids: FNV-1a-64 of each key, mixed by MurmurHash3 fmix64, to 53 bits,
 * computed independently (Python:
 * h = 0xcbf29ce484222325; per byte h ^= b, h *= 0x100000001b3 mod 2^64; then fmix64; & (2^53 - 1)). */
#define ID0 "5043600300746073"
#define ID1 "3160305294730055"

typedef struct Fixture {
    Grid *grid;
    char dir[64];
    char path[128];
    char header[4096]; /* the sweep header and the CSV column line, without the last newline */
    char row0[1024];   /* a complete error row of point 0, without its newline */
} Fixture;

static int setup(void **state)
{
    Fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    Err err = {0};
    fx->grid = grid_parse("g.json", GRID_TEXT, strlen(GRID_TEXT), DATA, &err);
    if (fx->grid == NULL)
        fail_msg("grid rejected: %s", err.msg);
    assert_int_equal(grid_n_points(fx->grid), 2);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/zerosim_sweep_output_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof fx->path, "%s/out.csv", fx->dir);
    /* the sweep header (its own tests: test_sweep.c), then id, key, the grid's dimensions in
     * order, status, exit code, metrics, message */
    SweepHeader h;
    sweep_header_of(&h, fx->grid, 0, 1);
    char *line = sweep_header_line(&h, true);
    sweep_header_fini(&h);
    size_t n = (size_t)snprintf(fx->header, sizeof fx->header,
                                "%s\nid,key,model,config,platform,gpus,status,exit_code", line);
    free(line);
    for (size_t k = 0; k < grid_n_metrics(fx->grid); k++)
        n += (size_t)snprintf(fx->header + n, sizeof fx->header - n, ",%s",
                              grid_metric_name(fx->grid, k));
    snprintf(fx->header + n, sizeof fx->header - n, ",message");
    n = (size_t)snprintf(fx->row0, sizeof fx->row0,
                         ID0 "," KEY0 ",gpt2-1.5b,zero2,workstation-2x-titan-rtx,1,error,1");
    for (size_t k = 0; k < grid_n_metrics(fx->grid); k++)
        n += (size_t)snprintf(fx->row0 + n, sizeof fx->row0 - n, ",");
    snprintf(fx->row0 + n, sizeof fx->row0 - n, ",m");
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    Fixture *fx = *state;
    remove(fx->path);
    rmdir(fx->dir);
    grid_destroy(fx->grid);
    free(fx);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void open_ok(SweepOutput *o, const Fixture *fx, SweepFormat format, bool is_read_only)
{
    *o = (SweepOutput){.path = fx->path, .format = format};
    Err err = {0};
    if (sweep_output_open(o, fx->grid, is_read_only, &err) != 0)
        fail_msg("open refused: %s", err.msg);
}

static void open_fails(const Fixture *fx, SweepFormat format, const char *expected)
{
    SweepOutput o = {.path = fx->path, .format = format};
    Err err = {0};
    assert_int_equal(sweep_output_open(&o, fx->grid, false, &err), -1);
    assert_string_equal(err.msg, expected);
    sweep_output_close(&o);
}

static void row_ok(SweepOutput *o, const Fixture *fx, size_t id, const char *status, int code,
                   const char *message, const GridReport *report)
{
    Err err = {0};
    if (sweep_output_row(o, fx->grid, id, status, code, message, report, &err) != 0)
        fail_msg("row refused: %s", err.msg);
}

/* n commas: the empty metric fields of a row without a report. */
static const char *commas(size_t n)
{
    static char buf[64];
    assert_true(n < sizeof buf);
    memset(buf, ',', n);
    buf[n] = '\0';
    return buf;
}

static void test_sweep_output_open_new_csv_writes_header(void **state)
{
    Fixture *fx = *state;
    SweepOutput o;
    open_ok(&o, fx, SWEEP_CSV, false);
    assert_int_equal(o.n_done, 0);
    assert_false(sweep_output_has_key(&o, KEY0));
    sweep_output_close(&o);
    char expected[4200];
    snprintf(expected, sizeof expected, "%s\n", fx->header);
    assert_memory_equal(expected, "# zerosim-sweep {\"format\":2,", 28);
    assert_string_equal(slurp(fx->path), expected);
    /* the header holds the estimate metrics, starting with the GPU peak */
    assert_non_null(strstr(fx->header, ",exit_code,memory.gpu_peak_bytes,"));
}

/* Rows append after the header; a message with a comma and quotes is quoted with its quotes
 * doubled; a report's metrics fill their columns; reopening finds both keys and no others. */
static void test_sweep_output_row_appends_and_keys_read_back(void **state)
{
    Fixture *fx = *state;
    SweepOutput o;
    open_ok(&o, fx, SWEEP_CSV, false);
    row_ok(&o, fx, 1, "error", 1, "bad \"x\", y", NULL);
    GridReport report = {0};
    strlist_init(&report.metrics);
    const size_t n_metrics = grid_n_metrics(fx->grid);
    for (size_t k = 0; k < n_metrics; k++)
        strlist_addf(&report.metrics, "%zu", 10 + k);
    row_ok(&o, fx, 0, "ok", 0, NULL, &report);
    strlist_fini(&report.metrics);
    sweep_output_close(&o);

    char expected[8192];
    size_t n = (size_t)snprintf(expected, sizeof expected,
                                "%s\n"
                                ID1 "," KEY1 ",gpt2-1.5b,zero2,workstation-2x-titan-rtx,2,error,1%s,"
                                "\"bad \"\"x\"\", y\"\n"
                                ID0 "," KEY0 ",gpt2-1.5b,zero2,workstation-2x-titan-rtx,1,ok,0",
                                fx->header, commas(n_metrics));
    for (size_t k = 0; k < n_metrics; k++)
        n += (size_t)snprintf(expected + n, sizeof expected - n, ",%zu", 10 + k);
    snprintf(expected + n, sizeof expected - n, ",\n");
    assert_string_equal(slurp(fx->path), expected);

    open_ok(&o, fx, SWEEP_CSV, false);
    assert_int_equal(o.n_done, 2);
    assert_true(sweep_output_has_key(&o, KEY0));
    assert_true(sweep_output_has_key(&o, KEY1));
    assert_false(sweep_output_has_key(&o, "command=estimate;model=gpt2-1.5b"));
    sweep_output_close(&o);
    assert_string_equal(slurp(fx->path), expected); /* no second header */
}

/* A last line without its newline (an interrupted write) is cut off the file; its point is not
 * done; the rows before it are. */
static void test_sweep_output_open_drops_torn_last_line(void **state)
{
    Fixture *fx = *state;
    char whole[8192], torn[8192 + 256];
    snprintf(whole, sizeof whole, "%s\n%s\n", fx->header, fx->row0);
    snprintf(torn, sizeof torn, "%s" ID1 "," KEY1 ",gpt2-1.5b,zero2,workst", whole);
    spit(fx->path, torn);
    SweepOutput o;
    open_ok(&o, fx, SWEEP_CSV, false);
    assert_int_equal(o.n_done, 1);
    assert_true(sweep_output_has_key(&o, KEY0));
    assert_false(sweep_output_has_key(&o, KEY1));
    row_ok(&o, fx, 1, "error", 2, "m", NULL);
    sweep_output_close(&o);
    char expected[8192 + 1024];
    snprintf(expected, sizeof expected,
             "%s" ID1 "," KEY1 ",gpt2-1.5b,zero2,workstation-2x-titan-rtx,2,error,2%s,m\n", whole,
             commas(grid_n_metrics(fx->grid)));
    assert_string_equal(slurp(fx->path), expected);
}

/* A dry run reads the keys but neither cuts the torn line nor writes; a missing file is empty. */
static void test_sweep_output_open_read_only_leaves_file(void **state)
{
    Fixture *fx = *state;
    SweepOutput o;
    open_ok(&o, fx, SWEEP_CSV, true); /* missing */
    assert_null(o.f);
    assert_int_equal(o.n_done, 0);
    sweep_output_close(&o);
    assert_int_equal(access(fx->path, F_OK), -1);

    char torn[8192];
    snprintf(torn, sizeof torn, "%s\n%s\n" ID1 ",", fx->header, fx->row0);
    spit(fx->path, torn);
    open_ok(&o, fx, SWEEP_CSV, true);
    assert_null(o.f);
    assert_int_equal(o.n_done, 1);
    assert_true(sweep_output_has_key(&o, KEY0));
    sweep_output_close(&o);
    assert_string_equal(slurp(fx->path), torn);
}

static void test_sweep_output_open_refuses_foreign_header(void **state)
{
    Fixture *fx = *state;
    spit(fx->path, "id,key,model,status\n0,k,m,ok\n");
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s:1: expected the sweep header (\"# zerosim-sweep {...}\", written by zerosim "
             "%s and later), got another line: an older zerosim or another program wrote this "
             "file (use another --out)",
             fx->path, ZEROSIM_VERSION_STRING);
    open_fails(fx, SWEEP_CSV, expected);
    assert_string_equal(slurp(fx->path), "id,key,model,status\n0,k,m,ok\n");
    /* the sweep header of this grid over other columns */
    char text[8192];
    const char *columns = strchr(fx->header, '\n') + 1;
    snprintf(text, sizeof text, "%.*sid,key,status\n", (int)(columns - fx->header), fx->header);
    spit(fx->path, text);
    snprintf(expected, sizeof expected,
             "%s:2: expected the CSV header of this grid's columns, got another one (a "
             "different grid or command wrote it: use another --out)",
             fx->path);
    open_fails(fx, SWEEP_CSV, expected);
}

static void test_sweep_output_open_refuses_row_without_key(void **state)
{
    Fixture *fx = *state;
    char text[8192];
    snprintf(text, sizeof text, "%s\n%s\n3,,x\n", fx->header, fx->row0);
    spit(fx->path, text);
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s:4: expected a complete row of this sweep, got one that is not (it has another "
             "number of columns than the header): remove that line to compute its point again",
             fx->path);
    open_fails(fx, SWEEP_CSV, expected);
    /* a complete row whose id is not its key's digest */
    char *swapped = strdup(fx->row0);
    swapped[0] = swapped[0] == '9' ? '1' : (char)(swapped[0] + 1);
    snprintf(text, sizeof text, "%s\n%s\n", fx->header, swapped);
    free(swapped);
    spit(fx->path, text);
    snprintf(expected, sizeof expected,
             "%s:3: expected a complete row of this sweep, got one that is not (its id is "
             "not its key's): remove that line to compute its point again",
             fx->path);
    open_fails(fx, SWEEP_CSV, expected);
    /* a well-formed row (id and key agree) of a point this unchanged grid does not have */
    const char *other = "command=estimate;model=gpt2-1.5b;config=zero2;platform=x;gpus=1";
    snprintf(text, sizeof text, "%s\n%llu,%s,gpt2-1.5b,zero2,x,1,error,1%s,m\n", fx->header,
             (unsigned long long)grid_key_id(other), other,
             commas(grid_n_metrics(fx->grid)));
    spit(fx->path, text);
    snprintf(expected, sizeof expected,
             "%s:3: expected a complete row of this sweep, got one that is not (its key is not "
             "a point of this grid): remove that line",
             fx->path);
    open_fails(fx, SWEEP_CSV, expected);
}

/* flock is per open file: a second writer, even in this process, is refused while the first
 * holds the file, and admitted once it closed. */
static void test_sweep_output_open_refuses_locked_file(void **state)
{
    Fixture *fx = *state;
    SweepOutput first;
    open_ok(&first, fx, SWEEP_CSV, false);
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s: expected an output no other zerosim sweep is writing, got one that is "
             "locked (give each shard its own --out)",
             fx->path);
    open_fails(fx, SWEEP_CSV, expected);
    sweep_output_close(&first);
    SweepOutput second;
    open_ok(&second, fx, SWEEP_CSV, false);
    sweep_output_close(&second);
}

static void test_sweep_output_open_unwritable_path(void **state)
{
    Fixture *fx = *state;
    SweepOutput o = {.path = "/nonexistent-dir/out.csv", .format = SWEEP_CSV};
    Err err = {0};
    assert_int_equal(sweep_output_open(&o, fx->grid, false, &err), -1);
    assert_string_equal(err.msg,
                        "/nonexistent-dir/out.csv: cannot open the output: No such file or "
                        "directory");
    sweep_output_close(&o);
}

/* JSONL: the sweep header as an object, then each row one JSON object whose key is read back
 * on reopening. */
static void test_sweep_output_jsonl_keys_read_back(void **state)
{
    Fixture *fx = *state;
    SweepOutput o;
    open_ok(&o, fx, SWEEP_JSONL, false);
    row_ok(&o, fx, 1, "error", 1, "no", NULL);
    sweep_output_close(&o);
    const char *text = slurp(fx->path);
    assert_memory_equal(text, "{\"zerosim_sweep\":{\"format\":2,", 29);
    const char *row = strchr(text, '\n') + 1;
    assert_true(row[0] == '{');
    assert_non_null(strstr(row, "\"key\":\"" KEY1 "\""));
    assert_int_equal(text[strlen(text) - 1], '\n');
    assert_true(strchr(row, '\n') == text + strlen(text) - 1); /* one line */

    open_ok(&o, fx, SWEEP_JSONL, false);
    assert_int_equal(o.n_done, 1);
    assert_true(sweep_output_has_key(&o, KEY1));
    assert_false(sweep_output_has_key(&o, KEY0));
    sweep_output_close(&o);

    spit(fx->path, "{\"id\": 0}\n");
    char expected[512];
    snprintf(expected, sizeof expected, "%s:1: expected a zerosim sweep header, got a damaged one",
             fx->path);
    open_fails(fx, SWEEP_JSONL, expected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sweep_output_open_new_csv_writes_header, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_row_appends_and_keys_read_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_open_drops_torn_last_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_open_read_only_leaves_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_open_refuses_foreign_header, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_open_refuses_row_without_key, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_open_refuses_locked_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_open_unwritable_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_output_jsonl_keys_read_back, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
