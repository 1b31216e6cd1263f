/*
 * compare_report.c - text and JSON of `zerosim compare` (see compare_report.h).
 */
#include "compare_report.h"

#include "json_writer.h"

#include "../common/units.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { LABEL_WIDTH = 34, MIN_COLUMN = 12, MAX_COLUMN = 26 };

/* A column's verdict cell: "fits", or "gpu 1.00 GiB short". */
static void verdict_cell(const RunSummary *s, char *buf, size_t n)
{
    if (s->fits)
        snprintf(buf, n, "fits");
    else
        snprintf(buf, n, "%s %.2f GiB short", s->runs_out, s->short_bytes / UNITS_GIB);
}

/* Wide enough for the labels and verdicts (labels beyond MAX_COLUMN are cut). */
static int column_width(const CompareReport *r)
{
    int w = MIN_COLUMN;
    for (size_t c = 0; c < r->n_columns; c++) {
        char v[64];
        verdict_cell(&r->summaries[c], v, sizeof v);
        int n = (int)strlen(r->labels[c]) + 2, nv = (int)strlen(v) + 2;
        if (n > w)
            w = n;
        if (nv > w)
            w = nv;
    }
    return w > MAX_COLUMN ? MAX_COLUMN : w;
}

/* A row's value as printed (without unit). */
static void format_value(const SummaryRow *row, double v, char *buf, size_t n)
{
    switch (row->unit) {
    case SUMMARY_SECONDS:
        snprintf(buf, n, "%.4f", v);
        break;
    case SUMMARY_RATE:
        snprintf(buf, n, fabs(v) >= 10000 ? "%.0f" : "%.1f", v);
        break;
    case SUMMARY_FRACTION:
        snprintf(buf, n, "%.1f%%", 100.0 * v);
        break;
    case SUMMARY_GIB:
        snprintf(buf, n, "%.2f", v / UNITS_GIB);
        break;
    case SUMMARY_GB:
        snprintf(buf, n, "%.2f", v / 1e9);
        break;
    }
}

/* "+13.9%", "-2.0%", "0.0%"; "new" from zero; "" when both are zero. */
static void format_change(double a, double b, char *buf, size_t n)
{
    if (a == 0 && b == 0)
        snprintf(buf, n, "%s", "");
    else if (a == 0)
        snprintf(buf, n, "%s", "new");
    else
        snprintf(buf, n, "%+.1f%%", 100.0 * (b - a) / fabs(a));
}

static void text_row(FILE *out, const CompareReport *r, int w, const char *label,
                     const char *const *cells, const char *change)
{
    fprintf(out, "%-*s", LABEL_WIDTH, label);
    for (size_t c = 0; c < r->n_columns; c++)
        fprintf(out, " %*.*s", w, w, cells[c]);
    if (change != NULL && change[0])
        fprintf(out, " %*s", w, change);
    fprintf(out, "\n");
}

/* Whether every column has the same string at offset `field` of RunSummary. */
static bool same_text(const CompareReport *r, size_t offset)
{
    for (size_t c = 1; c < r->n_columns; c++)
        if (strcmp((const char *)&r->summaries[c] + offset,
                   (const char *)&r->summaries[0] + offset) != 0)
            return false;
    return true;
}

static bool same_gpus(const CompareReport *r)
{
    for (size_t c = 1; c < r->n_columns; c++)
        if (r->summaries[c].gpus != r->summaries[0].gpus)
            return false;
    return true;
}

enum { CELL = 160 };

void compare_report_text(FILE *out, const CompareReport *r)
{
    const size_t n = r->n_columns;
    const int w = column_width(r);
    const RunSummary *s0 = &r->summaries[0];
    char (*cells)[CELL] = calloc(n, CELL);
    const char **ptrs = calloc(n, sizeof *ptrs);
    for (size_t c = 0; c < n; c++)
        ptrs[c] = cells[c];
    const bool same_model = same_text(r, offsetof(RunSummary, model));
    const bool same_platform = same_text(r, offsetof(RunSummary, platform));
    fprintf(out, "zerosim compare: %zu configurations", n);
    if (same_model)
        fprintf(out, " of %s", s0->model);
    if (same_platform)
        fprintf(out, " on %s", s0->platform);
    if (same_gpus(r))
        fprintf(out, ", %llu GPUs", (unsigned long long)s0->gpus);
    fprintf(out, "\n\n");

    for (size_t c = 0; c < n; c++)
        snprintf(cells[c], CELL, "%s", r->labels[c]);
    char change_title[CELL] = "";
    if (n == 2)
        snprintf(change_title, sizeof change_title, "%s", "change");
    text_row(out, r, w, "", ptrs, change_title);
    if (!same_model) {
        for (size_t c = 0; c < n; c++)
            snprintf(cells[c], CELL, "%s", r->summaries[c].model);
        text_row(out, r, w, "model", ptrs, NULL);
    }
    if (!same_platform) {
        for (size_t c = 0; c < n; c++)
            snprintf(cells[c], CELL, "%s", r->summaries[c].platform);
        text_row(out, r, w, "platform", ptrs, NULL);
    }
    if (!same_gpus(r)) {
        for (size_t c = 0; c < n; c++)
            snprintf(cells[c], CELL, "%llu", (unsigned long long)r->summaries[c].gpus);
        text_row(out, r, w, "GPUs", ptrs, NULL);
    }
    for (size_t c = 0; c < n; c++) {
        const RunSummary *s = &r->summaries[c];
        const bool off = strcmp(s->offload_optimizer, "none") != 0 ||
                         strcmp(s->offload_param, "none") != 0;
        snprintf(cells[c], CELL, "ZeRO-%llu%s", (unsigned long long)s->zero_stage,
                 off ? " + offload" : "");
    }
    text_row(out, r, w, "stage", ptrs, NULL);
    for (size_t c = 0; c < n; c++)
        snprintf(cells[c], CELL, "%llu x %llu", (unsigned long long)r->summaries[c].micro_batch,
                 (unsigned long long)r->summaries[c].grad_accum);
    text_row(out, r, w, "micro-batch x accumulation", ptrs, NULL);
    for (size_t c = 0; c < n; c++)
        snprintf(cells[c], CELL, "%s", r->summaries[c].recompute);
    text_row(out, r, w, "activation checkpointing", ptrs, NULL);
    for (size_t c = 0; c < n; c++)
        verdict_cell(&r->summaries[c], cells[c], CELL);
    text_row(out, r, w, "verdict", ptrs, NULL);

    for (int g = 0; g < SUMMARY_N_GROUPS; g++) {
        fprintf(out, "\n%s\n", run_summary_group_title((SummaryGroup)g));
        for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++) {
            const SummaryRow *row = run_summary_row(k);
            if ((int)row->group != g)
                continue;
            bool any = g == SUMMARY_THROUGHPUT; /* other rows only where some column has it */
            for (size_t c = 0; c < n; c++)
                any = any || r->summaries[c].values[k] != 0;
            if (!any)
                continue;
            for (size_t c = 0; c < n; c++)
                format_value(row, r->summaries[c].values[k], cells[c], CELL);
            char label[64], change[CELL] = "";
            snprintf(label, sizeof label, "  %s%s", row->text,
                     row->unit == SUMMARY_SECONDS && g == SUMMARY_THROUGHPUT ? " (s)" : "");
            if (n == 2)
                format_change(r->summaries[0].values[k], r->summaries[1].values[k], change,
                              sizeof change);
            text_row(out, r, w, label, ptrs, change);
        }
    }
    bool any_hint = false;
    for (size_t c = 0; c < n; c++)
        if (r->summaries[c].hint[0]) {
            if (!any_hint)
                fprintf(out, "\n");
            any_hint = true;
            fprintf(out, "hint for %s: change to %s\n", r->labels[c], r->summaries[c].hint);
        }
    free(cells);
    free(ptrs);
}

void compare_report_json(FILE *out, const CompareReport *r)
{
    JsonWriter w;
    json_writer_init(&w, out, true);
    json_begin_object(&w);
    json_kv_string(&w, "zerosim_version", ZEROSIM_VERSION_STRING);
    json_kv_string(&w, "command", "compare");
    json_key(&w, "columns");
    json_begin_array(&w);
    for (size_t c = 0; c < r->n_columns; c++) {
        const RunSummary *s = &r->summaries[c];
        json_begin_object(&w);
        json_kv_string(&w, "label", r->labels[c]);
        json_key(&w, "run_args");
        json_begin_array(&w);
        for (size_t i = 0; i < r->args[c]->n_items; i++)
            json_string(&w, r->args[c]->items[i]);
        json_end_array(&w);
        json_kv_string(&w, "model", s->model);
        json_kv_string(&w, "config_file", s->config_file);
        json_kv_string(&w, "platform", s->platform);
        json_kv_u64(&w, "gpus", s->gpus);
        json_kv_u64(&w, "zero_stage", s->zero_stage);
        json_kv_string(&w, "offload_optimizer", s->offload_optimizer);
        json_kv_string(&w, "offload_param", s->offload_param);
        json_kv_string(&w, "precision", s->precision);
        json_kv_u64(&w, "micro_batch", s->micro_batch);
        json_kv_u64(&w, "grad_accum", s->grad_accum);
        json_kv_u64(&w, "global_batch", s->global_batch);
        json_kv_u64(&w, "seq_len", s->seq_len);
        json_kv_string(&w, "activation_checkpointing", s->recompute);
        json_key(&w, "verdict");
        json_begin_object(&w);
        json_kv_bool(&w, "fits", s->fits);
        json_key(&w, "runs_out");
        if (s->runs_out[0])
            json_string(&w, s->runs_out);
        else
            json_null(&w);
        json_kv_double(&w, "short_bytes", s->short_bytes);
        json_key(&w, "hint");
        if (s->hint[0])
            json_string(&w, s->hint);
        else
            json_null(&w);
        json_end_object(&w);
        json_key(&w, "metrics");
        json_begin_object(&w);
        for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++)
            json_kv_double(&w, run_summary_row(k)->path, s->values[k]);
        json_end_object(&w);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
}
