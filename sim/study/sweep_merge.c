/*
 * sweep_merge.c - shards checked and merged into one output (see sweep_merge.h).
 */
#define _POSIX_C_SOURCE 200809L /* rename, open */

#include "sweep_merge.h"

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
#include <unistd.h>

typedef struct Row {
    uint64_t id;
    const char *line; /* into its file's text */
    size_t n_bytes;
    size_t file;
} Row;

typedef struct Shard {
    char *text;
    size_t n_bytes;
    SweepHeader header;
    const char *columns; /* CSV: the column line */
    size_t n_columns_bytes;
    uint64_t n_rows;
} Shard;

static char *read_file(const char *path, size_t *out_n, Err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Buf b = {0};
    if (fd < 0 || buf_read_fd(&b, fd) != 0) {
        err_set(err, "%s: cannot read the shard: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        buf_free(&b);
        return NULL;
    }
    close(fd);
    buf_add(&b, "", 0);
    *out_n = b.n;
    return b.data;
}

static int compare_rows(const void *a, const void *b)
{
    const Row *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The id of a row line, or -1 when it has none. */
static int row_id(const char *line, size_t n, bool is_csv, uint64_t *out)
{
    if (!is_csv) {
        char *key = NULL, *status = NULL;
        int rc = grid_jsonl_read(line, n, out, &key, &status);
        free(key);
        free(status);
        return rc;
    }
    StrList fields;
    strlist_init(&fields);
    int rc = csv_split(line, n, &fields);
    char *end = NULL;
    if (rc == 0 && fields.n_items > 0 && fields.items[0][0] >= '0' && fields.items[0][0] <= '9')
        *out = strtoull(fields.items[0], &end, 10);
    rc = rc == 0 && end != NULL && *end == '\0' ? 0 : -1;
    strlist_fini(&fields);
    return rc;
}

/* Reads one shard: its header, its column line (CSV) and its rows, appended to *rows. */
static int read_shard(Shard *s, const char *path, size_t index, bool is_csv, Row **rows,
                      size_t *n_rows, size_t *cap, Err *err)
{
    if ((s->text = read_file(path, &s->n_bytes, err)) == NULL)
        return -1;
    if (s->n_bytes == 0 || s->text[s->n_bytes - 1] != '\n')
        return err_set(err,
                       "%s: expected a complete shard, got one whose last line is torn (an "
                       "interrupted sweep: run it again to finish the shard)",
                       path);
    size_t line_no = 0;
    for (size_t at = 0; at < s->n_bytes; line_no++) {
        const char *line = s->text + at;
        size_t len = (size_t)((const char *)memchr(line, '\n', s->n_bytes - at) - line);
        at += len + 1;
        if (line_no == 0) {
            if (sweep_header_parse(&s->header, path, line, len, is_csv, err))
                return -1;
            continue;
        }
        if (is_csv && line_no == 1) {
            s->columns = line;
            s->n_columns_bytes = len;
            continue;
        }
        uint64_t id;
        if (row_id(line, len, is_csv, &id))
            return err_set(err, "%s:%zu: expected a row with its id, got a damaged line", path,
                           line_no + 1);
        if (*n_rows == *cap)
            *rows = xrealloc(*rows, (*cap = *cap ? 2 * *cap : 1024) * sizeof **rows);
        (*rows)[(*n_rows)++] = (Row){id, line, len, index};
        s->n_rows++;
    }
    if (line_no < (is_csv ? 2u : 1u))
        return err_set(err, "%s: expected a shard with its headers, got %s", path,
                       line_no == 0 ? "an empty file" : "no column line");
    return 0;
}

static int check_shards(Shard *shards, const char *const *files, size_t n_files, bool is_csv,
                        Err *err)
{
    const SweepHeader *first = &shards[0].header;
    if (n_files != first->n_shards)
        return err_set(err,
                       "%s: expected the %" PRIu64 " shards of its sweep, got %zu file%s: give "
                       "every shard once",
                       files[0], first->n_shards, n_files, n_files == 1 ? "" : "s");
    bool *seen = xcalloc(n_files, sizeof *seen);
    int rc = 0;
    for (size_t i = 0; i < n_files && rc == 0; i++) {
        const Shard *s = &shards[i];
        if (sweep_header_compare(&s->header, first, files[i], true, err)) {
            rc = -1;
        } else if (seen[s->header.shard]) {
            rc = err_set(err, "%s: expected each shard once, got shard %" PRIu64 "/%" PRIu64
                              " a second time",
                         files[i], s->header.shard, s->header.n_shards);
        } else if (is_csv && (s->n_columns_bytes != shards[0].n_columns_bytes ||
                              memcmp(s->columns, shards[0].columns, s->n_columns_bytes) != 0)) {
            rc = err_set(err, "%s:2: expected the columns of %s, got others", files[i], files[0]);
        }
        if (rc == 0)
            seen[s->header.shard] = true;
    }
    free(seen);
    return rc;
}

static int write_merged(const char *out_path, const Shard *shards, const Row *rows,
                        size_t n_rows, bool is_csv, Err *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.merging", out_path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return err_set(err, "%s: cannot write the merged output: %s", tmp, strerror(errno));
    SweepHeader whole = shards[0].header;
    whole.shard = 0;
    whole.n_shards = 1;
    whole.n_shard_points = whole.n_points;
    char *header = sweep_header_line(&whole, is_csv);
    fprintf(f, "%s\n", header);
    free(header);
    if (is_csv)
        fprintf(f, "%.*s\n", (int)shards[0].n_columns_bytes, shards[0].columns);
    for (size_t i = 0; i < n_rows; i++) {
        fwrite(rows[i].line, 1, rows[i].n_bytes, f);
        fputc('\n', f);
    }
    bool is_ok = fflush(f) == 0 && !ferror(f);
    is_ok = fclose(f) == 0 && is_ok;
    if (!is_ok || rename(tmp, out_path) != 0) {
        int e = errno;
        remove(tmp);
        return err_set(err, "%s: cannot write the merged output: %s", out_path, strerror(e));
    }
    return 0;
}

int sweep_merge(const char *out_path, SweepFormat format, const char *const *files,
                size_t n_files, Err *err)
{
    const bool is_csv = format == SWEEP_CSV;
    Shard *shards = xcalloc(n_files ? n_files : 1, sizeof *shards);
    Row *rows = NULL;
    size_t n_rows = 0, cap = 0;
    int rc = n_files == 0 ? err_set(err, "--merge: expected shard files, got none") : 0;
    for (size_t i = 0; i < n_files && rc == 0; i++)
        rc = read_shard(&shards[i], files[i], i, is_csv, &rows, &n_rows, &cap, err);
    if (rc == 0)
        rc = check_shards(shards, files, n_files, is_csv, err);
    if (rc == 0) {
        qsort(rows, n_rows, sizeof *rows, compare_rows);
        for (size_t i = 0; i < n_rows && rc == 0; i++) {
            if (i > 0 && rows[i].id == rows[i - 1].id)
                rc = err_set(err, "%s and %s: expected each point once, got point %" PRIu64
                                  " in both",
                             files[rows[i - 1].file], files[rows[i].file], rows[i].id);
            else if (rows[i].id % shards[rows[i].file].header.n_shards !=
                     shards[rows[i].file].header.shard)
                rc = err_set(err, "%s: expected the points of its shard, got point %" PRIu64,
                             files[rows[i].file], rows[i].id);
        }
        for (size_t i = 0; i < n_files && rc == 0; i++)
            if (shards[i].n_rows != shards[i].header.n_shard_points)
                rc = err_set(err,
                             "%s: expected the %" PRIu64 " points of shard %" PRIu64 "/%" PRIu64
                             ", got %" PRIu64 ": finish that shard first",
                             files[i], shards[i].header.n_shard_points, shards[i].header.shard,
                             shards[i].header.n_shards, shards[i].n_rows);
    }
    if (rc == 0)
        rc = write_merged(out_path, shards, rows, n_rows, is_csv, err);
    for (size_t i = 0; i < n_files; i++) {
        free(shards[i].text);
        sweep_header_fini(&shards[i].header);
    }
    free(shards);
    free(rows);
    return rc;
}
