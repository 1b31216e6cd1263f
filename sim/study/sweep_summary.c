/*
 * sweep_summary.c - a sweep's CSV rows as a rounded table (see sweep_summary.h).
 *
 * Two passes over the rows held in memory: format every cell, then print with each column as
 * wide as its widest cell. Columns are found by their names in the CSV header, so a grid's
 * own dimensions (between key and status) come along, and a metric the command does not
 * report (estimate has no step time) is left out.
 */
#define _POSIX_C_SOURCE 200809L /* open */

#include "sweep_summary.h"

#include "csv.h"

#include "../common/buf.h"
#include "../common/strlist.h"
#include "../common/units.h"
#include "../common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *sweep_summary_seconds(double s, char *buf, size_t size)
{
    if (s == 0.0)
        snprintf(buf, size, "0");
    else if (s < 1e-3)
        snprintf(buf, size, "%.0f us", s * 1e6);
    else if (s < 1.0)
        snprintf(buf, size, "%.1f ms", s * 1e3);
    else if (s < 100.0)
        snprintf(buf, size, "%.2f s", s);
    else
        snprintf(buf, size, "%.0f s", s);
    return buf;
}

const char *sweep_summary_bytes(double bytes, char *buf, size_t size)
{
    if (bytes < UNITS_GIB)
        snprintf(buf, size, "%.0f MiB", bytes / UNITS_MIB);
    else
        snprintf(buf, size, "%.1f GiB", bytes / UNITS_GIB);
    return buf;
}

const char *sweep_summary_count(double n, char *buf, size_t size)
{
    if (n >= 1e6)
        snprintf(buf, size, "%.2f M", n / 1e6);
    else if (n >= 1e3)
        snprintf(buf, size, "%.1f k", n / 1e3);
    else
        snprintf(buf, size, "%.0f", n);
    return buf;
}

typedef enum Unit { UNIT_TEXT, UNIT_SECONDS, UNIT_BYTES, UNIT_COUNT, UNIT_PERCENT, UNIT_FITS } Unit;

/* A metric column of the table: the sum of up to four CSV columns. */
typedef struct Metric {
    const char *header;
    Unit unit;
    const char *sources[4];
} Metric;

static const Metric metrics[] = {
    {"step", UNIT_SECONDS, {"time.step_s"}},
    {"tokens/s", UNIT_COUNT, {"throughput.tokens_per_s"}},
    {"TFLOP/s", UNIT_COUNT, {"throughput.tflops_per_gpu"}},
    {"MFU", UNIT_PERCENT, {"throughput.mfu"}},
    {"GPU peak", UNIT_BYTES, {"memory.gpu_peak_bytes"}},
    {"fits", UNIT_FITS, {"memory.fits"}},
    {"exposed comm", UNIT_SECONDS, {"time.exposed_comm_s"}},
    {"exposed CPU opt", UNIT_SECONDS, {"time.exposed_cpu_optimizer_s"}},
    {"exposed offload", UNIT_SECONDS,
     {"time.exposed_h2d_s", "time.exposed_d2h_s", "time.exposed_nvme_read_s",
      "time.exposed_nvme_write_s"}},
    {"compute bound", UNIT_SECONDS, {"time.compute_bound_step_s"}},
};
enum { N_METRICS = sizeof metrics / sizeof metrics[0] };

static int column(const StrList *header, const char *name)
{
    for (size_t i = 0; i < header->n_items; i++)
        if (strcmp(header->items[i], name) == 0)
            return (int)i;
    return -1;
}

/* One row's cell for a metric: empty sources (a failed point) print "-". */
static void metric_cell(const Metric *m, const int *cols, const StrList *row, char *buf,
                        size_t size)
{
    double sum = 0.0;
    bool any = false;
    for (int k = 0; k < 4 && m->sources[k]; k++) {
        const char *v = row->items[cols[k]];
        if (v[0] == '\0')
            continue;
        if (m->unit == UNIT_FITS) {
            snprintf(buf, size, "%s", strcmp(v, "true") == 0 ? "yes" : "no");
            return;
        }
        sum += strtod(v, NULL);
        any = true;
    }
    if (!any) {
        snprintf(buf, size, "-");
        return;
    }
    switch (m->unit) {
    case UNIT_SECONDS: sweep_summary_seconds(sum, buf, size); break;
    case UNIT_BYTES: sweep_summary_bytes(sum, buf, size); break;
    case UNIT_COUNT: sweep_summary_count(sum, buf, size); break;
    case UNIT_PERCENT: snprintf(buf, size, "%.1f%%", 100.0 * sum); break;
    case UNIT_TEXT:
    case UNIT_FITS: break;
    }
}

typedef struct Row {
    unsigned long long id;
    StrList cells;
} Row;

static int by_id(const void *pa, const void *pb)
{
    const Row *a = pa, *b = pb;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int read_file(const char *path, Buf *b, Err *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return err_set(err, "%s: cannot read the sweep: %s", path, strerror(errno));
    int rc = buf_read_fd(b, fd);
    int saved = errno;
    close(fd);
    if (rc)
        return err_set(err, "%s: cannot read the sweep: %s", path, strerror(saved));
    return 0;
}

int sweep_summary_write(FILE *out, const char *csv_path, Err *err)
{
    Buf text = {0};
    if (read_file(csv_path, &text, err))
        return -1;
    StrList header;
    strlist_init(&header);
    Row *rows = NULL;
    size_t n_rows = 0, cap = 0, line_no = 0;
    int rc = -1;
    /* the layout of the table: the grid's dimensions, status, then the metrics present */
    int dims_begin = -1, dims_end = -1, col_id = -1, col_exit = -1;
    int src[N_METRICS][4];
    bool present[N_METRICS];
    const char *p = text.data ? text.data : "", *end = p + text.n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *line = p;
        p = nl ? nl + 1 : end;
        line_no++;
        if (n == 0 || line[0] == '#')
            continue; /* the sweep header */
        if (header.n_items == 0) {
            if (csv_split(line, n, &header) || column(&header, "key") != 1 ||
                column(&header, "status") < 0) {
                err_set(err, "%s: line %zu: expected the column header of a sweep CSV (id, key, "
                             "..., status, ...), got something else", csv_path, line_no);
                goto done;
            }
            col_id = column(&header, "id");
            dims_begin = 2;
            dims_end = column(&header, "status");
            col_exit = column(&header, "exit_code");
            for (int m = 0; m < N_METRICS; m++) {
                present[m] = true;
                for (int k = 0; k < 4; k++) {
                    src[m][k] = metrics[m].sources[k] ? column(&header, metrics[m].sources[k]) : -1;
                    present[m] &= metrics[m].sources[k] == NULL || src[m][k] >= 0;
                }
            }
            continue;
        }
        if (n_rows == cap) {
            cap = cap ? 2 * cap : 16;
            rows = xrealloc(rows, cap * sizeof *rows);
        }
        Row *r = &rows[n_rows];
        strlist_init(&r->cells);
        StrList f;
        strlist_init(&f);
        if (csv_split(line, n, &f) || f.n_items != header.n_items) {
            strlist_fini(&f);
            strlist_fini(&r->cells);
            err_set(err, "%s: line %zu: expected %zu CSV fields, got a damaged row", csv_path,
                    line_no, header.n_items);
            goto done;
        }
        n_rows++;
        r->id = strtoull(f.items[col_id], NULL, 10);
        strlist_addf(&r->cells, "%llu", r->id);
        for (int k = dims_begin; k < dims_end; k++)
            strlist_addf(&r->cells, "%s", f.items[k]);
        const char *status = f.items[dims_end];
        const bool is_oom = col_exit >= 0 && strcmp(f.items[col_exit], "3") == 0;
        strlist_addf(&r->cells, "%s", is_oom ? "no fit" : status);
        for (int m = 0; m < N_METRICS; m++) {
            if (!present[m])
                continue;
            char cell[48];
            metric_cell(&metrics[m], src[m], &f, cell, sizeof cell);
            strlist_addf(&r->cells, "%s", cell);
        }
        strlist_fini(&f);
    }
    if (header.n_items == 0) {
        err_set(err, "%s: expected a sweep CSV, got no column header", csv_path);
        goto done;
    }
    qsort(rows, n_rows, sizeof *rows, by_id);
    /* the header row, then the widths */
    StrList head;
    strlist_init(&head);
    strlist_addf(&head, "id");
    for (int k = dims_begin; k < dims_end; k++)
        strlist_addf(&head, "%s", header.items[k]);
    strlist_addf(&head, "status");
    for (int m = 0; m < N_METRICS; m++)
        if (present[m])
            strlist_addf(&head, "%s", metrics[m].header);
    size_t *width = xcalloc(head.n_items, sizeof *width);
    for (size_t c = 0; c < head.n_items; c++) {
        width[c] = strlen(head.items[c]);
        for (size_t i = 0; i < n_rows; i++) {
            size_t w = strlen(rows[i].cells.items[c]);
            width[c] = w > width[c] ? w : width[c];
        }
    }
    /* text columns (id, dimensions, status) left-aligned, numbers right-aligned */
    const size_t n_text = 1 + (size_t)(dims_end - dims_begin) + 1;
    for (size_t i = 0; i <= n_rows; i++) {
        const StrList *cells = i == 0 ? &head : &rows[i - 1].cells;
        for (size_t c = 0; c < head.n_items; c++)
            fprintf(out, c < n_text ? "%s%-*s" : "%s%*s", c ? "  " : "", (int)width[c],
                    cells->items[c]);
        fputc('\n', out);
    }
    free(width);
    strlist_fini(&head);
    rc = 0;
done:
    for (size_t i = 0; i < n_rows; i++)
        strlist_fini(&rows[i].cells);
    free(rows);
    strlist_fini(&header);
    buf_free(&text);
    return rc;
}
