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
#include <inttypes.h>
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

/* A point of this shard by content id, to find a kept row's point in the grid as it is now. */
typedef struct PointById {
    uint64_t id;
    size_t index;
} PointById;

static int compare_points(const void *a, const void *b)
{
    const PointById *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The points of o's shard sorted by id; *out_n of them. */
static PointById *shard_points(const SweepOutput *o, const Grid *g, size_t *out_n)
{
    PointById *points = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < grid_n_points(g); i++) {
        uint64_t id = grid_point_id(g, i);
        if (id % o->n_shards != o->shard)
            continue;
        if (n == cap)
            points = xrealloc(points, (cap = cap ? 2 * cap : 256) * sizeof *points);
        points[n++] = (PointById){id, i};
    }
    if (n > 0)
        qsort(points, n, sizeof *points, compare_points);
    *out_n = n;
    return points;
}

/* The index of the point with this id and key in the grid, or -1 when it has none. */
static long long find_point(const Grid *g, const PointById *points, size_t n, uint64_t id,
                            const char *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (points[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && points[lo].id == id; lo++) {
        char *want = grid_point_key(g, points[lo].index);
        bool is_same = strcmp(want, key) == 0;
        free(want);
        if (is_same)
            return (long long)points[lo].index;
    }
    return -1;
}

/* Why a kept row is not one this sweep wrote (NULL: it is): a row damaged in the middle of
 * the file (an edit, a copy cut short) must not count as done. Reads its id and key. */
static const char *row_problem(const SweepOutput *o, size_t n_params, const char *line,
                               size_t len, size_t n_columns, uint64_t *out_id, char **out_key)
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
            status = xstrdup(fields.items[2 + n_params]);
        }
        strlist_fini(&fields);
    } else if (grid_jsonl_read(line, len, &id, &key, &status) != 0) {
        problem = "it is not a JSON row with an id, a key and a status";
    }
    if (problem == NULL && id != grid_key_id(key))
        problem = "its id is not its key's";
    if (problem == NULL && id % o->n_shards != o->shard)
        problem = "its id is not a point of this shard";
    if (problem == NULL && strcmp(status, "ok") != 0 && strcmp(status, "error") != 0)
        problem = "its status is neither ok nor error";
    free(status);
    if (problem == NULL) {
        *out_key = key;
        *out_id = id;
    } else {
        free(key);
    }
    return problem;
}

/* What reopening found: the rows kept, and those dropped because the grid or an input
 * changed since they were computed. */
typedef struct Kept {
    Buf text;                 /* the headers this sweep writes, then every kept row */
    size_t n_rows, n_not_in_grid, n_inputs_changed;
    char changed_input[1024]; /* the first input that changed, for the note */
    size_t n_changed_inputs;  /* how many different ones */
} Kept;

/* True when the row of the point at index was computed from the same bytes of every file
 * the point reads as there are now; else names the first file that changed. */
static bool inputs_unchanged(const Grid *g, size_t index, const SweepHeader *found, Kept *k)
{
    const GridInput *inputs[GRID_MAX_POINT_INPUTS];
    size_t n = grid_point_inputs(g, index, inputs);
    for (size_t i = 0; i < n; i++) {
        const GridInput *then = sweep_header_input(found, inputs[i]->path);
        if (then == NULL || then->hash != inputs[i]->hash) {
            if (k->changed_input[0] == '\0') {
                snprintf(k->changed_input, sizeof k->changed_input, "%s", inputs[i]->path);
                k->n_changed_inputs = 1;
            } else if (strcmp(k->changed_input, inputs[i]->path) != 0) {
                k->n_changed_inputs = 2;
            }
            return false;
        }
    }
    return true;
}

/* Checks the sweep header (line 1), the CSV column header (line 2) and every complete row of
 * `text` (n_bytes, ending after a newline), and reads the keys of the rows it keeps: a row is
 * kept when its point is in the grid as it is now and its inputs have not changed. */
static int read_rows(SweepOutput *o, const Grid *g, const char *text, size_t n_bytes,
                     const char *headers, Kept *k, Err *err)
{
    size_t n_columns = 4 + grid_n_params(g) + grid_n_metrics(g) + 1;
    SweepHeader want, found = {0};
    sweep_header_of(&want, g, o->shard, o->n_shards);
    const char *columns = strchr(headers, '\n') + 1;
    bool is_same_grid = true, is_same_columns = true;
    size_t n_points = 0;
    PointById *points = NULL;
    size_t line_no = 0, cap = 0;
    int rc = 0;
    for (size_t at = 0; at < n_bytes && rc == 0; line_no++) {
        const char *line = text + at;
        size_t len = (size_t)((const char *)memchr(line, '\n', n_bytes - at) - line);
        at += len + 1;
        if (line_no == 0) {
            if (sweep_header_parse(&found, o->path, line, len, o->format == SWEEP_CSV, err) ||
                sweep_header_compare_origin(&found, &want, o->path, false, err))
                rc = -1;
            is_same_grid = found.grid_hash == want.grid_hash && found.n_points == want.n_points;
            points = shard_points(o, g, &n_points);
            continue;
        }
        if (o->format == SWEEP_CSV && line_no == 1) {
            is_same_columns = len + 1 == strlen(columns) && memcmp(line, columns, len) == 0;
            if (!is_same_columns && is_same_grid)
                rc = err_set(err,
                             "%s:2: expected the CSV header of this grid's columns, got "
                             "another one (a different grid or command wrote it: use another "
                             "--out)",
                             o->path);
            continue;
        }
        if (!is_same_columns) { /* other dimensions: no row is a point of this grid */
            k->n_not_in_grid++;
            continue;
        }
        char *key = NULL;
        uint64_t id = 0;
        const char *problem = row_problem(o, grid_n_params(g), line, len, n_columns, &id, &key);
        if (problem != NULL) {
            rc = err_set(err,
                         "%s:%zu: expected a complete row of this sweep, got one that is "
                         "not (%s): remove that line to compute its point again",
                         o->path, line_no + 1, problem);
            break;
        }
        long long index = find_point(g, points, n_points, id, key);
        if (index < 0 && is_same_grid) {
            free(key);
            rc = err_set(err,
                         "%s:%zu: expected a complete row of this sweep, got one that is not "
                         "(its key is not a point of this grid): remove that line",
                         o->path, line_no + 1);
            break;
        }
        if (index < 0 || !inputs_unchanged(g, (size_t)index, &found, k)) {
            *(index < 0 ? &k->n_not_in_grid : &k->n_inputs_changed) += 1;
            free(key);
            continue;
        }
        if (o->n_done == cap)
            o->done_keys = xrealloc(o->done_keys, (cap = cap ? 2 * cap : 256) * sizeof(char *));
        o->done_keys[o->n_done++] = key;
        buf_add(&k->text, line, len + 1);
        k->n_rows++;
    }
    if (o->n_done > 0)
        qsort(o->done_keys, o->n_done, sizeof *o->done_keys, compare_keys);
    for (size_t i = 1; rc == 0 && i < o->n_done; i++)
        if (strcmp(o->done_keys[i], o->done_keys[i - 1]) == 0)
            rc = err_set(err,
                         "%s: expected one row per point, got two for %s: remove one of them",
                         o->path, o->done_keys[i]);
    free(points);
    sweep_header_fini(&found);
    sweep_header_fini(&want);
    return rc;
}

/* The sweep header and, for CSV, the column header this sweep writes, each with its newline. */
static void headers_text(const SweepOutput *o, const Grid *g, Buf *text)
{
    SweepHeader h;
    sweep_header_of(&h, g, o->shard, o->n_shards);
    char *line = sweep_header_line(&h, o->format == SWEEP_CSV);
    sweep_header_fini(&h);
    buf_puts(text, line);
    buf_add(text, "\n", 1);
    free(line);
    if (o->format == SWEEP_CSV) {
        csv_header(g, text);
        buf_add(text, "\n", 1);
    }
    buf_add(text, "", 0); /* NUL-terminated, not counted */
}

static int write_all(SweepOutput *o, const char *data, size_t n, Err *err)
{
    if (fwrite(data, 1, n, o->f) != n || fflush(o->f) != 0)
        return err_set(err, "%s: cannot write the output: %s", o->path ? o->path : "stdout",
                       strerror(errno));
    return 0;
}

/* Replaces the file by `text` (the headers and the kept rows) through a locked temporary file
 * in the same directory renamed over it, so that an interruption leaves the old file or the
 * new one. Returns the new file's descriptor (locked, appending), or -1 with err set. */
static int rewrite(const char *path, const Buf *text, Err *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.rewrite-%ld", path, (long)getpid());
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    bool is_ok = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;
    for (size_t at = 0; is_ok && at < text->n;) {
        ssize_t got = write(fd, text->data + at, text->n - at);
        is_ok = got > 0;
        at += got > 0 ? (size_t)got : 0;
    }
    is_ok = is_ok && fsync(fd) == 0 && rename(tmp, path) == 0;
    if (!is_ok) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return err_set(err, "%s: cannot rewrite the output: %s", path, strerror(e));
    }
    return fd;
}

/* Says on stderr which kept rows were dropped and why (their points run again). */
static void note_dropped(const SweepOutput *o, const Kept *k, bool is_read_only)
{
    const char *verb = is_read_only ? "would run again (dry run: the file is unchanged)"
                                    : "run again";
    if (k->n_not_in_grid > 0)
        fprintf(stderr,
                "zerosim sweep: %s: the grid changed: %zu row%s of points no longer in it "
                "dropped, %zu kept\n",
                o->path, k->n_not_in_grid, k->n_not_in_grid == 1 ? "" : "s", k->n_rows);
    if (k->n_inputs_changed > 0)
        fprintf(stderr,
                "zerosim sweep: %s: %zu row%s computed from inputs that changed since "
                "(%s%s): %s points %s\n",
                o->path, k->n_inputs_changed, k->n_inputs_changed == 1 ? " was" : "s were",
                k->changed_input, k->n_changed_inputs > 1 ? ", and others" : "",
                k->n_inputs_changed == 1 ? "its" : "their", verb);
}

/* Opens the output: stdout, or the file, whose complete rows are kept (a torn last line from
 * an interruption is cut off) and checked, and whose keys are read; rows of points no longer
 * in the grid or whose inputs changed are dropped and the file rewritten with this sweep's
 * headers. With is_read_only (a dry run) the file is only read. Writes the headers when the
 * file is new. */
int sweep_output_open(SweepOutput *o, const Grid *g, bool is_read_only, Err *err)
{
    if (o->n_shards == 0)
        o->n_shards = 1;
    Kept k = {0};
    headers_text(o, g, &k.text);
    const size_t n_headers = k.text.n;
    if (o->path == NULL) {
        o->f = is_read_only ? NULL : stdout;
        int rc = o->f != NULL ? write_all(o, k.text.data, n_headers, err) : 0;
        buf_free(&k.text);
        return rc;
    }
    int fd = is_read_only ? open(o->path, O_RDONLY | O_CLOEXEC)
                          : open(o->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0 && is_read_only && errno == ENOENT) {
        buf_free(&k.text);
        return 0;
    }
    if (fd < 0) {
        buf_free(&k.text);
        return err_set(err, "%s: cannot open the output: %s", o->path, strerror(errno));
    }
    if (!is_read_only && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        buf_free(&k.text);
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
        buf_free(&k.text);
        close(fd);
        return err_set(err, "%s: cannot read the output: %s", o->path, strerror(errno));
    }
    rc = keep > 0 ? read_rows(o, g, text.data, keep, k.text.data, &k, err) : 0;
    size_t n_first = keep > 0 ? (size_t)((char *)memchr(text.data, '\n', keep) - text.data) : 0;
    size_t n_want_first = (size_t)(strchr(k.text.data, '\n') - k.text.data);
    bool is_same_header = keep > 0 && n_first == n_want_first &&
                          memcmp(text.data, k.text.data, n_first) == 0;
    buf_free(&text);
    if (rc == 0 && keep > 0)
        note_dropped(o, &k, is_read_only);
    if (rc == 0 && !is_read_only && keep > 0 && !is_same_header) {
        int fresh = rewrite(o->path, &k.text, err);
        close(fd);
        fd = fresh;
        rc = fresh < 0 ? -1 : 0;
    }
    if (rc == 0 && !is_read_only)
        o->f = fdopen(fd, "a");
    if (rc == 0 && !is_read_only && o->f == NULL)
        rc = err_set(err, "%s: cannot open the output: %s", o->path, strerror(errno));
    if (o->f == NULL && fd >= 0)
        close(fd);
    if (rc == 0 && o->f != NULL && keep == 0)
        rc = write_all(o, k.text.data, n_headers, err);
    buf_free(&k.text);
    return rc;
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
        snprintf(text, sizeof text, "%" PRIu64, grid_point_id(g, id));
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

