/*
 * compare_html.c - the comparison's page (see compare_html.h).
 */
#include "compare_html.h"

#include "html.h"

#include "../common/units.h"

#include <stdlib.h>
#include <string.h>

/* The table rows of one group, in table order: their indices into out (at most n). */
static size_t group_rows(SummaryGroup g, size_t *out, size_t n)
{
    size_t m = 0;
    for (size_t k = 0; k < RUN_SUMMARY_N_ROWS && m < n; k++)
        if (run_summary_row(k)->group == g)
            out[m++] = k;
    return m;
}

static void cell(FILE *out, const char *text)
{
    fputs("<td>", out);
    html_escape(out, text);
    fputs("</td>", out);
}

static void inputs_table(FILE *out, const CompareReport *r)
{
    fputs("<table>\n<tr><th></th>", out);
    for (size_t c = 0; c < r->n_columns; c++) {
        fputs("<th>", out);
        html_escape(out, r->labels[c]);
        fputs("</th>", out);
    }
    fputs("</tr>\n", out);
    static const char *const names[] = {"model", "platform", "GPUs", "stage",
                                        "micro-batch x accumulation", "checkpointing",
                                        "verdict"};
    for (size_t row = 0; row < sizeof names / sizeof names[0]; row++) {
        fputs("<tr>", out);
        cell(out, names[row]);
        for (size_t c = 0; c < r->n_columns; c++) {
            const RunSummary *s = &r->summaries[c];
            char text[400];
            switch (row) {
            case 0: snprintf(text, sizeof text, "%s", s->model); break;
            case 1: snprintf(text, sizeof text, "%s", s->platform); break;
            case 2: snprintf(text, sizeof text, "%llu", (unsigned long long)s->gpus); break;
            case 3:
                snprintf(text, sizeof text, "ZeRO-%llu, offload %s/%s",
                         (unsigned long long)s->zero_stage, s->offload_optimizer,
                         s->offload_param);
                break;
            case 4:
                snprintf(text, sizeof text, "%llu x %llu", (unsigned long long)s->micro_batch,
                         (unsigned long long)s->grad_accum);
                break;
            case 5: snprintf(text, sizeof text, "%s", s->recompute); break;
            default:
                if (s->fits)
                    snprintf(text, sizeof text, "fits");
                else
                    snprintf(text, sizeof text, "%s memory runs out, %.2f GiB short%s%s",
                             s->runs_out, s->short_bytes / UNITS_GIB,
                             s->hint[0] ? "; hint: " : "", s->hint);
            }
            cell(out, text);
        }
        fputs("</tr>\n", out);
    }
    for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++) {
        const SummaryRow *row = run_summary_row(k);
        if (row->group != SUMMARY_THROUGHPUT)
            continue;
        fputs("<tr>", out);
        cell(out, row->text);
        for (size_t c = 0; c < r->n_columns; c++) {
            const double v = r->summaries[c].values[k];
            char text[64];
            if (row->unit == SUMMARY_SECONDS)
                snprintf(text, sizeof text, "%.4f s", v);
            else if (row->unit == SUMMARY_FRACTION)
                snprintf(text, sizeof text, "%.1f%%", 100.0 * v);
            else
                snprintf(text, sizeof text, "%.1f", v);
            cell(out, text);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

/* One stacked bar per column over the rows of group g, on one scale. */
static void stacked_group(FILE *out, const CompareReport *r, SummaryGroup g, size_t first,
                          size_t n_rows, double scale_per_column_max, const char *fmt,
                          double unit)
{
    size_t rows[RUN_SUMMARY_N_ROWS];
    const size_t n = group_rows(g, rows, RUN_SUMMARY_N_ROWS);
    if (first + n_rows > n)
        n_rows = n - first;
    HtmlPart parts[RUN_SUMMARY_N_ROWS];
    double scale = scale_per_column_max;
    for (size_t c = 0; c < r->n_columns; c++) {
        double sum = 0;
        for (size_t i = 0; i < n_rows; i++)
            sum += r->summaries[c].values[rows[first + i]] / unit;
        if (sum > scale)
            scale = sum;
    }
    for (size_t c = 0; c < r->n_columns; c++) {
        for (size_t i = 0; i < n_rows; i++)
            parts[i] = (HtmlPart){run_summary_row(rows[first + i])->text,
                                  r->summaries[c].values[rows[first + i]] / unit,
                                  html_color(i)};
        html_stacked_bar(out, r->labels[c], parts, n_rows, scale, fmt);
    }
}

/* Bars of every column for each nonzero row of group g. */
static void bars_group(FILE *out, const CompareReport *r, SummaryGroup g, const char *caption)
{
    size_t rows[RUN_SUMMARY_N_ROWS];
    const size_t n = group_rows(g, rows, RUN_SUMMARY_N_ROWS);
    HtmlPart *parts = calloc(n * r->n_columns + 1, sizeof *parts);
    char (*labels)[160] = calloc(n * r->n_columns + 1, sizeof *labels);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bool any = false;
        for (size_t c = 0; c < r->n_columns; c++)
            any = any || r->summaries[c].values[rows[i]] != 0;
        if (!any)
            continue;
        for (size_t c = 0; c < r->n_columns; c++) {
            snprintf(labels[m], sizeof labels[m], "%s, %s", run_summary_row(rows[i])->text,
                     r->labels[c]);
            parts[m] = (HtmlPart){labels[m], r->summaries[c].values[rows[i]] / 1e9,
                                  html_color(c)};
            m++;
        }
    }
    if (m > 0)
        html_bars(out, caption, parts, m, "%.2f GB");
    else
        html_paragraph(out, "nothing sent");
    free(parts);
    free(labels);
}

void compare_html_write(FILE *out, const CompareReport *r)
{
    char title[256];
    snprintf(title, sizeof title, "zerosim compare: %zu configurations of %s on %s",
             r->n_columns, r->summaries[0].model, r->summaries[0].platform);
    html_begin(out, title);
    inputs_table(out, r);
    html_heading(out, "Where the step goes (rank 0, one time scale)");
    stacked_group(out, r, SUMMARY_BREAKDOWN, 0, RUN_SUMMARY_N_ROWS, 0.0, "%.4f s", 1.0);
    html_heading(out, "Memory per GPU at the allocated peak, by category (GiB, one scale)");
    /* the seven categories, scaled to the largest HBM so the bars read against capacity */
    double hbm = 0;
    for (size_t c = 0; c < r->n_columns; c++)
        for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++)
            if (strcmp(run_summary_row(k)->path, "memory.gpu_capacity_bytes") == 0 &&
                r->summaries[c].values[k] / UNITS_GIB > hbm)
                hbm = r->summaries[c].values[k] / UNITS_GIB;
    stacked_group(out, r, SUMMARY_MEMORY, 0, 7, hbm, "%.2f GiB", UNITS_GIB);
    html_paragraph(out, "The bar's full width is the largest HBM of the columns.");
    html_heading(out, "Bytes sent per rank per step");
    bars_group(out, r, SUMMARY_LINK_BYTES, "by link class (GB)");
    bars_group(out, r, SUMMARY_COLLECTIVE_BYTES, "by collective (GB)");
    html_paragraph(out, "Memory over time and one layer's timeline need a run's event graph: "
                        "`zerosim run --html` draws them for one configuration.");
    html_end(out);
}
