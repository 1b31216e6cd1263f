/*
 * advice_html.c - advise's page (see advice_html.h).
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include "advice_html.h"

#include "html.h"

#include "../common/units.h"
#include "../common/xalloc.h"

#include <stdlib.h>
#include <string.h>

void advice_html_write(FILE *out, const Advice *a)
{
    char *text = NULL;
    size_t n_text = 0;
    FILE *mem = open_memstream(&text, &n_text);
    if (mem != NULL) {
        advice_text(mem, a);
        fclose(mem);
    }
    char title[256] = "zerosim advise";
    if (text != NULL) {
        size_t n = strcspn(text, "\n");
        snprintf(title, sizeof title, "%.*s", (int)(n < 255 ? n : 255), text);
    }
    html_begin(out, title);
    html_heading(out, "Candidates, ranked");
    fputs("<pre>", out);
    html_escape(out, text && strchr(text, '\n') ? strchr(text, '\n') + 1 : "");
    fputs("</pre>\n", out);
    free(text);

    const size_t n = a->n_candidates;
    HtmlPart *parts = xcalloc(n + 1, sizeof *parts);
    char (*labels)[24] = xcalloc(n + 1, sizeof *labels);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (a->candidates[k].is_simulated) {
            snprintf(labels[m], sizeof labels[m], "#%zu", k + 1);
            parts[m] = (HtmlPart){labels[m], a->candidates[k].step_s, html_color(0)};
            m++;
        }
    html_heading(out, "Simulated candidates (numbers are the table's rows)");
    if (m > 0) {
        html_bars(out, "step time (s)", parts, m, "%.3f s");
        m = 0;
        for (size_t k = 0; k < n; k++)
            if (a->candidates[k].is_simulated) {
                parts[m] = (HtmlPart){labels[m], a->candidates[k].tokens_per_s, html_color(2)};
                m++;
            }
        html_bars(out, "tokens/s", parts, m, "%.0f");
    } else {
        html_paragraph(out, "No candidate fits, so none was simulated.");
    }
    html_heading(out, "GPU memory per candidate (GiB; blue fits, vermilion does not)");
    for (size_t k = 0; k < n; k++) {
        const Candidate *c = &a->candidates[k];
        snprintf(labels[k], sizeof labels[k], "#%zu", k + 1);
        parts[k] = (HtmlPart){labels[k],
                              (c->is_simulated ? c->sim_gpu_peak_bytes : c->gpu_bytes) /
                                  UNITS_GIB,
                              c->fits ? "#0072B2" : "#D55E00"};
    }
    char caption[128];
    snprintf(caption, sizeof caption, "device peak per GPU (simulated where simulated), of %.0f "
             "GiB HBM", (double)a->platform->gpu.hbm_bytes / UNITS_GIB);
    html_bars(out, caption, parts, n, "%.1f GiB");
    free(parts);
    free(labels);
    html_end(out);
}
