/*
 * sweep_output.c - the rows of a sweep, in a file that survives interruption (see
 * sweep_output.h).
 */
#define _DEFAULT_SOURCE /* flock, ftruncate */

#include "sweep_output.h"

#include "../common/buf.h"
#include "../common/xalloc.h"
#include "../inputs/grid_report.h"
#include "../inputs/sweep_header.h"
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool sweep_output_has_key(const SweepOutput *o, const char *key)
{
    return o->n_done &&
           bsearch(&key, o->done_keys, o->n_done, sizeof *o->done_keys, compare_keys) != NULL;
}

static void csv_header(const Grid *g, Buf *b)
{
    csv_field(b, "id", true);
    csv_field(b, "key", false);
    for (size_t k = 0; k < grid_n_params(g); k++)
        csv_field(b, grid_param_name(g, k), false);
    csv_field(b, "status", false);
    csv_field(b, "exit_code", false);
    for (size_t k = 0; k < grid_n_metrics(g); k++)
        csv_field(b, grid_metric_name(g, k), false);
    csv_field(b, "message", false);
}

/* Why a kept row is not one this sweep wrote (NULL: it is): a row damaged in the middle of
 * the file (an edit, a copy cut short) must not count as done. */
static const char *row_problem(const SweepOutput *o, const Grid *g, const char *line, size_t len,
                               size_t n_columns, char **out_key)
{
    uint64_t id = 0;
    char *key = NULL, *status = NULL;
    const char *problem = NULL;
    if (o->format == SWEEP_CSV) {
        StrList fields;
        strlist_init(&fields);
        if (csv_split(line, len, &fields) != 0) {
            problem = "it is not valid CSV";
        } else if (fields.n_items != n_columns) {
            problem = "it has another number of columns than the header";
        } else {
            char *end = NULL;
            id = strtoull(fields.items[0], &end, 10);
            if (fields.items[0][0] < '0' || fields.items[0][0] > '9' || *end != '\0')
                problem = "its id is not a number";
            key = xstrdup(fields.items[1]);
            status = xstrdup(fields.items[2 + grid_n_params(g)]);
        }
        strlist_fini(&fields);
    } else if (grid_jsonl_read(line, len, &id, &key, &status) != 0) {
        problem = "it is not a JSON row with an id, a key and a status";
    }
    if (problem == NULL && (id >= grid_n_points(g) || id % o->n_shards != o->shard))
        problem = "its id is not a point of this shard";
    if (problem == NULL) {
        char *want = grid_point_key(g, (size_t)id);
        if (strcmp(want, key) != 0)
            problem = "its key is not its id's point";
        free(want);
    }
    if (problem == NULL && strcmp(status, "ok") != 0 && strcmp(status, "error") != 0)
        problem = "its status is neither ok nor error";
    free(status);
    if (problem == NULL)
        *out_key = key;
    else
        free(key);
    return problem;
}

/* Checks the sweep header (line 1), the CSV column header (line 2) and every complete row of
 * `text` (n_bytes, ending after a newline), and reads the rows' keys. */
static int read_rows(SweepOutput *o, const Grid *g, const char *text, size_t n_bytes, Err *err)
{
    Buf columns = {0};
    csv_header(g, &columns);
    size_t n_columns = 4 + grid_n_params(g) + grid_n_metrics(g) + 1;
    SweepHeader want;
    sweep_header_of(&want, g, o->shard, o->n_shards);
    size_t line_no = 0, cap = 0;
    int rc = 0;
    for (size_t at = 0; at < n_bytes && rc == 0; line_no++) {
        const char *line = text + at;
        size_t len = (size_t)((const char *)memchr(line, '\n', n_bytes - at) - line);
        at += len + 1;
        if (line_no == 0) {
            SweepHeader found;
            if (sweep_header_parse(&found, o->path, line, len, o->format == SWEEP_CSV, err) ||
                sweep_header_compare(&found, &want, o->path, false, err))
                rc = -1;
            sweep_header_fini(&found);
            continue;
        }
        if (o->format == SWEEP_CSV && line_no == 1) {
            if (len != columns.n || memcmp(line, columns.data, len) != 0)
                rc = err_set(err,
                             "%s:2: expected the CSV header of this grid's columns, got "
                             "another one (a different grid or command wrote it: use another "
                             "--out)",
                             o->path);
            continue;
        }
        char *key = NULL;
        const char *problem = row_problem(o, g, line, len, n_columns, &key);
        if (problem != NULL) {
            free(key);
            rc = err_set(err,
                         "%s:%zu: expected a complete row of this sweep, got one that is "
                         "not (%s): remove that line to compute its point again",
                         o->path, line_no + 1, problem);
            break;
        }
        if (o->n_done == cap)
            o->done_keys = xrealloc(o->done_keys, (cap = cap ? 2 * cap : 256) * sizeof(char *));
        o->done_keys[o->n_done++] = key;
    }
    if (o->n_done > 0)
        qsort(o->done_keys, o->n_done, sizeof *o->done_keys, compare_keys);
    for (size_t i = 1; rc == 0 && i < o->n_done; i++)
        if (strcmp(o->done_keys[i], o->done_keys[i - 1]) == 0)
            rc = err_set(err,
                         "%s: expected one row per point, got two for %s: remove one of them",
                         o->path, o->done_keys[i]);
    sweep_header_fini(&want);
    buf_free(&columns);
    return rc;
}

/* Writes the sweep header and, for CSV, the column header. */
static int write_headers(SweepOutput *o, const Grid *g, Err *err)
{
    SweepHeader h;
    sweep_header_of(&h, g, o->shard, o->n_shards);
    char *line = sweep_header_line(&h, o->format == SWEEP_CSV);
    sweep_header_fini(&h);
    Buf text = {0};
    buf_puts(&text, line);
    buf_add(&text, "\n", 1);
    free(line);
    if (o->format == SWEEP_CSV) {
        csv_header(g, &text);
        buf_add(&text, "\n", 1);
    }
    bool is_written = fwrite(text.data, 1, text.n, o->f) == text.n;
    buf_free(&text);
    if (!is_written || fflush(o->f) != 0)
        return err_set(err, "%s: cannot write the output: %s", o->path ? o->path : "stdout",
                       strerror(errno));
    return 0;
}

/* Opens the output: stdout, or the file, whose complete rows are kept (a torn last line from
 * an interruption is cut off) and checked, and whose keys are read. With is_read_only (a dry
 * run) the file is only read. Writes the headers when the file is new. */
int sweep_output_open(SweepOutput *o, const Grid *g, bool is_read_only, Err *err)
{
    if (o->n_shards == 0)
        o->n_shards = 1;
    if (o->path == NULL) {
        o->f = is_read_only ? NULL : stdout;
    } else {
        int fd = is_read_only ? open(o->path, O_RDONLY | O_CLOEXEC)
                              : open(o->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
        if (fd < 0 && is_read_only && errno == ENOENT)
            return 0;
        if (fd < 0)
            return err_set(err, "%s: cannot open the output: %s", o->path, strerror(errno));
        if (!is_read_only && flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return err_set(err,
                           "%s: expected an output no other zerosim sweep is writing, got "
                           "one that is locked (give each shard its own --out)",
                           o->path);
        }
        Buf text = {0};
        int rc = buf_read_fd(&text, fd);
        size_t keep = text.n;
        while (keep > 0 && text.data[keep - 1] != '\n')
            keep--;
        if (rc == 0 && keep < text.n && !is_read_only) {
            fprintf(stderr,
                    "zerosim sweep: %s: dropped an incomplete last row (an interrupted "
                    "write); its point runs again\n",
                    o->path);
            rc = ftruncate(fd, (off_t)keep);
        }
        if (rc != 0) {
            buf_free(&text);
            close(fd);
            return err_set(err, "%s: cannot read the output: %s", o->path, strerror(errno));
        }
        rc = read_rows(o, g, text.data, keep, err);
        buf_free(&text);
        if (rc || is_read_only) {
            close(fd);
            return rc;
        }
        o->f = fdopen(fd, "a");
        if (o->f == NULL) {
            close(fd);
            return err_set(err, "%s: cannot open the output: %s", o->path, strerror(errno));
        }
        if (keep > 0)
            return 0;
    }
    return o->f != NULL ? write_headers(o, g, err) : 0;
}

void sweep_output_close(SweepOutput *o)
{
    if (o->f != NULL && o->f != stdout)
        fclose(o->f);
    for (size_t i = 0; i < o->n_done; i++)
        free(o->done_keys[i]);
    free(o->done_keys);
}

/* Appends one complete row and flushes it. */
int sweep_output_row(SweepOutput *o, const Grid *g, size_t id, const char *status, int exit_code,
                      const char *message, const GridReport *report, Err *err)
{
    Buf row = {0};
    if (o->format == SWEEP_JSONL) {
        char *line = grid_jsonl_row(g, id, status, exit_code, message, report);
        buf_puts(&row, line);
        free(line);
    } else {
        char text[32];
        snprintf(text, sizeof text, "%zu", id);
        csv_field(&row, text, true);
        char *key = grid_point_key(g, id);
        csv_field(&row, key, false);
        free(key);
        for (size_t k = 0; k < grid_n_params(g); k++)
            csv_field(&row, grid_param_value(g, id, k), false);
        csv_field(&row, status, false);
        snprintf(text, sizeof text, "%d", exit_code);
        csv_field(&row, text, false);
        for (size_t k = 0; k < grid_n_metrics(g); k++)
            csv_field(&row, report ? report->metrics.items[k] : "", false);
        csv_field(&row, message ? message : "", false);
    }
    buf_add(&row, "\n", 1);
    bool is_written = fwrite(row.data, 1, row.n, o->f) == row.n;
    buf_free(&row);
    if (!is_written || fflush(o->f) != 0)
        return err_set(err, "%s: cannot write the output: %s", o->path ? o->path : "stdout",
                       strerror(errno));
    return 0;
}

