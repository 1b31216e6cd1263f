/*
 * sweep_output.c - the rows of a sweep, in a file that survives interruption (see
 * sweep_output.h).
 */
#define _DEFAULT_SOURCE /* flock, ftruncate */

#include "sweep_output.h"

#include "../common/buf.h"
#include "../common/xalloc.h"
#include "../inputs/grid_report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* A CSV field, quoted when it holds a separator, a quote or surrounding spaces (RFC 4180). */
static void csv_field(Buf *b, const char *s, bool is_first)
{
    if (!is_first)
        buf_add(b, ",", 1);
    size_t n = strlen(s);
    if (strpbrk(s, ",\"\r\n") == NULL && (n == 0 || (s[0] != ' ' && s[n - 1] != ' '))) {
        buf_add(b, s, n);
        return;
    }
    buf_add(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        buf_add(b, p, 1);
        if (*p == '"')
            buf_add(b, "\"", 1); /* a quote inside is doubled */
    }
    buf_add(b, "\"", 1);
}

/* Field `index` of one CSV line (no newline) into a malloc'd string, or NULL. */
static char *csv_read_field(const char *line, size_t n, size_t index)
{
    size_t field = 0, i = 0;
    Buf out = {0};
    while (i <= n) {
        bool quoted = i < n && line[i] == '"';
        out.n = 0;
        buf_add(&out, "", 0);
        if (quoted) {
            for (i++; i < n; i++) {
                if (line[i] == '"' && i + 1 < n && line[i + 1] == '"')
                    buf_add(&out, line + i++, 1);
                else if (line[i] == '"')
                    break;
                else
                    buf_add(&out, line + i, 1);
            }
            i++; /* the closing quote */
        } else {
            size_t start = i;
            while (i < n && line[i] != ',')
                i++;
            buf_add(&out, line + start, i - start);
        }
        if (field == index)
            return out.data;
        if (i >= n || line[i] != ',')
            break;
        i++;
        field++;
    }
    buf_free(&out);
    return NULL;
}

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

static int read_all(int fd, Buf *b)
{
    char chunk[65536];
    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            return 0;
        buf_add(b, chunk, (size_t)got);
    }
}

/* Reads the keys of the complete rows of `text` (n_bytes, ending after a newline). */
static int read_keys(SweepOutput *o, const Grid *g, const char *text, size_t n_bytes, Err *err)
{
    Buf header = {0};
    csv_header(g, &header);
    size_t line_no = 0, cap = 0;
    int rc = 0;
    for (size_t at = 0; at < n_bytes && rc == 0; line_no++) {
        const char *line = text + at;
        size_t len = (size_t)((const char *)memchr(line, '\n', n_bytes - at) - line);
        at += len + 1;
        char *key = NULL;
        if (o->format == SWEEP_CSV && line_no == 0) {
            if (len != header.n || memcmp(line, header.data, len) != 0)
                rc = err_set(err,
                             "%s:1: expected the CSV header of this grid's columns, got "
                             "another one (a different grid or command wrote it: use another "
                             "--out)",
                             o->path);
            continue;
        }
        if (o->format == SWEEP_CSV)
            key = csv_read_field(line, len, 1);
        else if (grid_jsonl_key(line, len, &key))
            key = NULL;
        if (key == NULL || key[0] == '\0') {
            free(key);
            rc = err_set(err,
                         "%s:%zu: expected a row written by zerosim sweep (with its key), "
                         "got a line without one",
                         o->path, line_no + 1);
            break;
        }
        if (o->n_done == cap)
            o->done_keys = xrealloc(o->done_keys, (cap = cap ? 2 * cap : 256) * sizeof(char *));
        o->done_keys[o->n_done++] = key;
    }
    buf_free(&header);
    if (o->n_done > 0)
        qsort(o->done_keys, o->n_done, sizeof *o->done_keys, compare_keys);
    return rc;
}

/* Opens the output: stdout, or the file, whose complete rows are kept (a torn last line from
 * an interruption is cut off) and whose keys are read. With is_read_only (a dry run) the
 * file is only read. Writes the CSV header when the file is new. */
int sweep_output_open(SweepOutput *o, const Grid *g, bool is_read_only, Err *err)
{
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
        int rc = read_all(fd, &text);
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
        rc = read_keys(o, g, text.data, keep, err);
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
    if (o->f != NULL && o->format == SWEEP_CSV) {
        Buf header = {0};
        csv_header(g, &header);
        buf_add(&header, "\n", 1);
        fwrite(header.data, 1, header.n, o->f);
        buf_free(&header);
        if (fflush(o->f) != 0)
            return err_set(err, "%s: cannot write the output: %s", o->path ? o->path : "stdout",
                           strerror(errno));
    }
    return 0;
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

