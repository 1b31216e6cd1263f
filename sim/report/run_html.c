/*
 * run_html.c - the run's page (see run_html.h).
 *
 * Memory over time: the tracker records each change of rank 0's GPU account (category and
 * bytes after it); the page keeps, in each of a fixed number of time bins, the state at the
 * sample with the most bytes, so peaks survive the binning. The timeline window is one
 * forward op of rank 0's compute stream in the middle of the step (to the start of the
 * next), and the same for backward; every op of rank 0 that overlaps it is drawn on its
 * stream's lane, clipped to the window.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include "run_html.h"

#include "html.h"
#include "verdict.h"

#include "../common/units.h"
#include "../common/xalloc.h"

#include <stdlib.h>
#include <string.h>

enum { N_BINS = 600, WIDTH = 900 };

static const char *const category_colors[MEM_N_CATEGORIES] = {
    "#0072B2", "#56B4E9", "#009E73", "#E69F00", "#CC79A7", "#D55E00", "#999999"};
static const char *const category_text[MEM_N_CATEGORIES] = {
    "parameters", "gradients", "optimizer states", "activations", "buffers",
    "optimizer step copies", "cuBLAS workspaces"};

/* The verdict's lines, as the text report prints them, one paragraph each. */
static void verdict_paragraphs(FILE *out, const Verdict *v)
{
    char *text = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&text, &n);
    if (mem == NULL)
        return;
    verdict_text(mem, v);
    fclose(mem);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        html_paragraph(out, line + (strncmp(line, "verdict      ", 13) == 0 ||
                                            strncmp(line, "hint         ", 13) == 0
                                        ? 13
                                        : 0));
    free(text);
}

static void summary_table(FILE *out, const RunReport *r, const RunMetrics *m)
{
    fprintf(out,
            "<table>\n<tr><td>step time</td><td>%.4f s</td></tr>\n"
            "<tr><td>throughput</td><td>%.0f tokens/s</td></tr>\n"
            "<tr><td>TFLOP/s per GPU (Megatron formula)</td><td>%.1f</td></tr>\n"
            "<tr><td>MFU</td><td>%.1f%%</td></tr>\n"
            "<tr><td>compute-bound lower bound</td><td>%.4f s</td></tr>\n</table>\n",
            m->step_s, m->tokens_per_s, m->tflops_per_gpu, 100.0 * m->mfu,
            r->inputs.estimate->compute_bound_step_s);
}

static void breakdown_bar(FILE *out, const RunReport *r)
{
    HtmlPart parts[BD_N];
    const double k = (double)r->n_steps;
    for (int c = 0; c < BD_N; c++)
        parts[c] = (HtmlPart){breakdown_category((BreakdownCategory)c)->text,
                              r->breakdown.time_s[c] / k, html_color((size_t)c)};
    html_heading(out, "Where the step goes (rank 0)");
    html_stacked_bar(out, "time per step by category", parts, BD_N, 0.0, "%.4f s");
}

/* Stacked area of rank 0's GPU memory by category over the run. */
static void memory_chart(FILE *out, const RunReport *r)
{
    const EngineResult *res = r->result;
    uint32_t n_samples = 0;
    const MemSample *samples = memory_samples(res->memory, &n_samples);
    const uint32_t account = memory_account_index(res->memory, 0, MEM_GPU);
    const MemAccount *a = memory_account(res->memory, 0, MEM_GPU);
    html_heading(out, "GPU memory over time (rank 0, allocated, by category)");
    const double span = res->makespan_s > 0 ? res->makespan_s : 1.0;
    double (*bins)[MEM_N_CATEGORIES] = xcalloc(N_BINS, sizeof *bins);
    double *bin_total = xcalloc(N_BINS, sizeof *bin_total);
    bool *has = xcalloc(N_BINS, sizeof *has);
    double cur[MEM_N_CATEGORIES] = {0};
    for (uint32_t i = 0; i < n_samples; i++) {
        const MemSample *s = &samples[i];
        if (s->account != account || s->category >= MEM_N_CATEGORIES)
            continue;
        cur[s->category] = s->category_bytes;
        int b = (int)(s->time_s / span * N_BINS);
        b = b < 0 ? 0 : b >= N_BINS ? N_BINS - 1 : b;
        double total = 0;
        for (int c = 0; c < MEM_N_CATEGORIES; c++)
            total += cur[c];
        if (!has[b] || total >= bin_total[b]) {
            memcpy(bins[b], cur, sizeof cur);
            bin_total[b] = total;
            has[b] = true;
        }
    }
    for (int b = 1; b < N_BINS; b++) /* carry the state through bins without a change */
        if (!has[b]) {
            memcpy(bins[b], bins[b - 1], sizeof bins[b]);
            bin_total[b] = bin_total[b - 1];
        }
    double top = a->capacity_bytes - a->headroom_bytes;
    for (int b = 0; b < N_BINS; b++)
        if (bin_total[b] > top)
            top = bin_total[b];
    if (top <= 0)
        top = 1.0;
    const double left = 60, plot_w = WIDTH - left - 10, plot_h = 220, top_y = 14;
    const double height = top_y + plot_h + 40;
    html_svg_begin(out, WIDTH, height, "GPU memory over time by category");
    fprintf(out, "<g transform=\"translate(0,%.0f)\">\n", top_y);
    html_rect(out, left, 0, plot_w, plot_h, "#f7f7f7", "");
    for (int c = MEM_N_CATEGORIES - 1; c >= 0; c--) {
        /* the band from the sum of the categories below c to the sum including c */
        fprintf(out, "<polygon fill=\"%s\" points=\"", category_colors[c]);
        for (int b = 0; b < N_BINS; b++) {
            double sum = 0;
            for (int k = 0; k <= c; k++)
                sum += bins[b][k];
            fprintf(out, "%.1f,%.1f ", left + plot_w * (b + 0.5) / N_BINS,
                    plot_h - plot_h * sum / top);
        }
        for (int b = N_BINS - 1; b >= 0; b--) {
            double sum = 0;
            for (int k = 0; k < c; k++)
                sum += bins[b][k];
            fprintf(out, "%.1f,%.1f ", left + plot_w * (b + 0.5) / N_BINS,
                    plot_h - plot_h * sum / top);
        }
        fprintf(out, "\"><title>%s</title></polygon>\n", category_text[c]);
    }
    const double usable = a->capacity_bytes - a->headroom_bytes;
    if (usable > 0) {
        const double y = plot_h - plot_h * usable / top;
        html_line(out, left, y, left + plot_w, y, "#D55E00");
        char label[64];
        snprintf(label, sizeof label, "usable %.2f GiB", usable / UNITS_GIB);
        html_svg_text(out, left + plot_w - 4, y - 4, "end", label);
    }
    char tick[64];
    for (int t = 0; t <= 4; t++) {
        const double y = plot_h - plot_h * t / 4.0;
        snprintf(tick, sizeof tick, "%.1f", top * t / 4.0 / UNITS_GIB);
        html_svg_text(out, left - 6, y + 4, "end", tick);
        snprintf(tick, sizeof tick, "%.3f s", span * t / 4.0);
        html_svg_text(out, left + plot_w * t / 4.0, plot_h + 16, t == 0 ? "start" : t == 4 ? "end" : "middle",
                      tick);
    }
    html_svg_text(out, left, plot_h + 34, "start", "GiB against simulated time");
    fputs("</g>\n", out);
    html_svg_end(out);
    HtmlPart legend[MEM_N_CATEGORIES];
    for (int c = 0; c < MEM_N_CATEGORIES; c++)
        legend[c] = (HtmlPart){category_text[c], 0, category_colors[c]};
    html_legend(out, legend, MEM_N_CATEGORIES);
    free(bins);
    free(bin_total);
    free(has);
}

static void bytes_charts(FILE *out, const RunReport *r)
{
    const EngineResult *res = r->result;
    const double k = (double)r->n_steps;
    html_heading(out, "Bytes sent per rank per step (rank 0)");
    HtmlPart links[LINK_N_CLASSES], colls[COLL_N_KINDS];
    for (int c = 0; c < LINK_N_CLASSES; c++)
        links[c] = (HtmlPart){topology_link_class_name((LinkClass)c),
                              res->link_bytes[0][c] / k / 1e9, html_color((size_t)c)};
    html_bars(out, "by link class (GB)", links, LINK_N_CLASSES, "%.2f GB");
    for (int c = 0; c < COLL_N_KINDS; c++)
        colls[c] = (HtmlPart){graph_collective_name((CollectiveKind)c),
                              res->coll_bytes[0][c] / k / 1e9, html_color((size_t)c + 4)};
    html_bars(out, "by collective (GB)", colls, COLL_N_KINDS, "%.2f GB");
}

static const char *op_color(const Op *op)
{
    static const char *const colls[COLL_N_KINDS] = {"#D55E00", "#E69F00", "#F0E442", "#999999"};
    switch ((OpKind)op->kind) {
    case OP_COMPUTE:
        return op->purpose == PURPOSE_FORWARD     ? "#0072B2"
               : op->purpose == PURPOSE_BACKWARD  ? "#56B4E9"
               : op->purpose == PURPOSE_RECOMPUTE ? "#CC79A7"
                                                  : "#009E73";
    case OP_COLLECTIVE:
        return colls[op->sub < COLL_N_KINDS ? op->sub : 0];
    case OP_COPY:
        return "#332288";
    default:
        return "#666666";
    }
}

/* Rank 0's compute op of `purpose` in the middle of the step: [*t0, *t1). */
static bool middle_window(const RunReport *r, OpPurpose purpose, double *t0, double *t1)
{
    const Graph *g = r->graph;
    const Op *ops = graph_ops(g);
    const Stream *streams = graph_streams(g);
    const OpId *order = graph_stream_ops(g);
    for (uint32_t s = 0; s < graph_n_streams(g); s++) {
        if (streams[s].rank != 0 || streams[s].kind != STREAM_COMPUTE)
            continue;
        uint32_t n = 0;
        for (uint32_t i = streams[s].op_begin; i < streams[s].op_end; i++)
            n += ops[order[i]].kind == OP_COMPUTE && ops[order[i]].purpose == purpose;
        if (n == 0)
            return false;
        uint32_t want = n / 2, seen = 0;
        for (uint32_t i = streams[s].op_begin; i < streams[s].op_end; i++) {
            const OpId id = order[i];
            if (ops[id].kind != OP_COMPUTE || ops[id].purpose != purpose)
                continue;
            if (seen == want) {
                *t0 = r->result->op_start_s[id];
                *t1 = r->result->op_end_s[id];
                for (uint32_t j = i + 1; j < streams[s].op_end; j++)
                    if (ops[order[j]].kind == OP_COMPUTE && ops[order[j]].purpose == purpose) {
                        *t1 = r->result->op_start_s[order[j]];
                        break;
                    }
                if (*t1 <= *t0)
                    *t1 = *t0 + 1e-9;
                return true;
            }
            seen++;
        }
    }
    return false;
}

/* One window's lanes: rank 0's streams with work in [t0, t1). */
static void timeline(FILE *out, const RunReport *r, const char *title, double t0, double t1)
{
    const Graph *g = r->graph;
    const Op *ops = graph_ops(g);
    const Stream *streams = graph_streams(g);
    const OpId *order = graph_stream_ops(g);
    const double *start = r->result->op_start_s, *end = r->result->op_end_s;
    uint32_t lanes[64], n_lanes = 0;
    for (uint32_t s = 0; s < graph_n_streams(g) && n_lanes < 64; s++) {
        if (streams[s].rank != 0)
            continue;
        bool any = false;
        for (uint32_t i = streams[s].op_begin; i < streams[s].op_end && !any; i++) {
            const OpId id = order[i];
            any = ops[id].kind <= OP_DISK && end[id] > start[id] && end[id] > t0 && start[id] < t1;
        }
        if (any)
            lanes[n_lanes++] = s;
    }
    const double left = 90, plot_w = WIDTH - left - 10, lane_h = 26;
    const double height = lane_h * n_lanes + 30;
    fprintf(out, "<p class=\"caption\">");
    html_escape(out, title);
    fprintf(out, ": %.3f ms from %.4f s</p>\n", (t1 - t0) * 1e3, t0);
    html_svg_begin(out, WIDTH, height, title);
    for (uint32_t l = 0; l < n_lanes; l++) {
        const Stream *st = &streams[lanes[l]];
        const double y = lane_h * l;
        html_svg_text(out, left - 6, y + 17, "end", graph_stream_name((StreamKind)st->kind));
        html_rect(out, left, y + 2, plot_w, lane_h - 4, "#f3f3f3", "");
        for (uint32_t i = st->op_begin; i < st->op_end; i++) {
            const OpId id = order[i];
            const Op *op = &ops[id];
            if (op->kind > OP_DISK || end[id] <= start[id] || end[id] <= t0 || start[id] >= t1)
                continue;
            const double a = start[id] < t0 ? t0 : start[id], b = end[id] > t1 ? t1 : end[id];
            char tip[160];
            const char *label = graph_label_text(g, op->label);
            snprintf(tip, sizeof tip, "%s%s%s: %.3f ms",
                     op->kind == OP_COLLECTIVE ? graph_collective_name((CollectiveKind)op->sub)
                     : op->kind == OP_COMPUTE  ? graph_purpose_name((OpPurpose)op->purpose)
                                               : "transfer",
                     label && label[0] ? " " : "", label ? label : "",
                     (end[id] - start[id]) * 1e3);
            html_rect(out, left + plot_w * (a - t0) / (t1 - t0), y + 4,
                      plot_w * (b - a) / (t1 - t0), lane_h - 8, op_color(op), tip);
        }
    }
    char tick[48];
    for (int t = 0; t <= 4; t++) {
        snprintf(tick, sizeof tick, "+%.3f ms", (t1 - t0) * 1e3 * t / 4.0);
        html_svg_text(out, left + plot_w * t / 4.0, lane_h * n_lanes + 16,
                      t == 0 ? "start" : t == 4 ? "end" : "middle", tick);
    }
    html_svg_end(out);
}

static void timelines(FILE *out, const RunReport *r)
{
    html_heading(out, "One layer's timeline (rank 0, a layer in the middle of the step)");
    double t0, t1;
    if (middle_window(r, PURPOSE_FORWARD, &t0, &t1))
        timeline(out, r, "forward", t0, t1);
    if (middle_window(r, PURPOSE_BACKWARD, &t0, &t1))
        timeline(out, r, "backward", t0, t1);
    const HtmlPart legend[] = {
        {"forward", 0, "#0072B2"},        {"backward", 0, "#56B4E9"},
        {"recompute", 0, "#CC79A7"},      {"optimizer", 0, "#009E73"},
        {"all-reduce", 0, "#D55E00"},     {"all-gather", 0, "#E69F00"},
        {"reduce-scatter", 0, "#F0E442"}, {"broadcast", 0, "#999999"},
        {"PCIe copy", 0, "#332288"},      {"NVMe", 0, "#666666"}};
    html_legend(out, legend, sizeof legend / sizeof legend[0]);
}

void run_html_write(FILE *out, const RunReport *r)
{
    const EstimateReport *in = &r->inputs;
    RunMetrics m;
    run_report_metrics(r, &m);
    char title[256];
    snprintf(title, sizeof title, "zerosim run: %s with ZeRO-%d on %s, %llu GPUs",
             in->model->name, in->train->zero.stage, in->platform->name,
             (unsigned long long)platform_n_gpus(in->platform));
    html_begin(out, title);
    char line[256], rec[32];
    snprintf(line, sizeof line,
             "batch %llu = micro %llu x accumulation %llu x %llu GPUs, sequence %llu, "
             "recompute %s, %s; %u step%s simulated (%s mode)",
             (unsigned long long)in->estimate->setup.global_batch,
             (unsigned long long)in->estimate->setup.micro_batch,
             (unsigned long long)in->estimate->setup.grad_accum,
             (unsigned long long)in->estimate->setup.n_gpus,
             (unsigned long long)in->estimate->setup.seq_len,
             setup_recompute_name(in->estimate->setup.recompute,
                                  in->estimate->setup.checkpoint_every, rec, sizeof rec),
             precision_name(in->train->precision), r->n_steps, r->n_steps == 1 ? "" : "s",
             r->mode ? r->mode : "full");
    html_paragraph(out, line);
    Verdict v;
    run_report_verdict(r, &m, &v);
    html_heading(out, "Verdict");
    verdict_paragraphs(out, &v);
    summary_table(out, r, &m);
    breakdown_bar(out, r);
    memory_chart(out, r);
    bytes_charts(out, r);
    timelines(out, r);
    html_end(out);
}
