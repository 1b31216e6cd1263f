/*
 * collective_report.c - nccl-tests style table and JSON rows (see collective_report.h).
 */
#include "collective_report.h"

#include "json_writer.h"

void collective_report_text(FILE *out, const char *title, const CollectiveRow *rows, size_t n_rows)
{
    fprintf(out, "# %s\n#\n", title);
    fprintf(out, "# %14s %12s %12s %12s  %-6s %s\n", "size(B)", "time(us)", "algbw(GB/s)",
            "busbw(GB/s)", "algo", "proto");
    double sum_busbw = 0.0;
    for (size_t i = 0; i < n_rows; i++) {
        const CollectiveRow *r = &rows[i];
        fprintf(out, "  %14.0f %12.2f %12.2f %12.2f  %-6s %s\n", r->bytes, r->time_s * 1e6,
                r->algbw_bytes_per_s / 1e9, r->busbw_bytes_per_s / 1e9, r->algo, r->proto);
        sum_busbw += r->busbw_bytes_per_s;
    }
    if (n_rows > 0)
        fprintf(out, "# Avg bus bandwidth    : %g GB/s\n", sum_busbw / (double)n_rows / 1e9);
}

void collective_report_json(FILE *out, const CollectiveRow *rows, size_t n_rows)
{
    JsonWriter w;
    json_writer_init(&w, out, true);
    json_begin_array(&w);
    for (size_t i = 0; i < n_rows; i++) {
        json_begin_object(&w);
        json_kv_double(&w, "bytes", rows[i].bytes);
        json_kv_double(&w, "time_s", rows[i].time_s);
        json_kv_double(&w, "algbw_bytes_per_s", rows[i].algbw_bytes_per_s);
        json_kv_double(&w, "busbw_bytes_per_s", rows[i].busbw_bytes_per_s);
        json_kv_string(&w, "algo", rows[i].algo);
        json_kv_string(&w, "proto", rows[i].proto);
        json_end_object(&w);
    }
    json_end_array(&w);
}
