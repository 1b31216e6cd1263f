/*
 * html.c - page skeleton, bars and SVG primitives (see html.h).
 */
#include "html.h"

#include <string.h>

/* Okabe and Ito's colour-blind-safe palette, then greys. */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                      "#56B4E9", "#F0E442", "#000000", "#999999", "#666666",
                                      "#BBBBBB", "#332288"};

const char *html_color(size_t k)
{
    return palette[k % (sizeof palette / sizeof palette[0])];
}

void html_escape(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

void html_begin(FILE *out, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n"
          /* no favicon request: the page needs nothing from outside */
          "<link rel=\"icon\" href=\"data:,\" />\n<title>",
          out);
    html_escape(out, title);
    fputs("</title>\n<style>\n"
          "body { font-family: sans-serif; margin: 2em; max-width: 1100px; color: #222; "
          "background: #fff; }\n"
          "h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }\n"
          "p.caption { margin: 0.6em 0 0.2em 0; font-weight: bold; }\n"
          "ul.legend { list-style: none; padding: 0; margin: 0.3em 0; }\n"
          "ul.legend li { display: inline-block; margin-right: 1.2em; font-size: 0.9em; }\n"
          "span.swatch { display: inline-block; width: 0.9em; height: 0.9em; "
          "margin-right: 0.3em; vertical-align: middle; }\n"
          "svg { display: block; margin: 0.3em 0; }\n"
          "pre { font-size: 12px; white-space: pre-wrap; }\n"
          "svg text { font-size: 12px; fill: #222; }\n"
          "table { border-collapse: collapse; } td, th { padding: 0.15em 0.8em; "
          "text-align: right; } td:first-child, th:first-child { text-align: left; }\n"
          "</style>\n</head>\n<body>\n<h1>",
          out);
    html_escape(out, title);
    fputs("</h1>\n", out);
}

void html_end(FILE *out)
{
    fputs("</body>\n</html>\n", out);
}

void html_heading(FILE *out, const char *text)
{
    fputs("<h2>", out);
    html_escape(out, text);
    fputs("</h2>\n", out);
}

void html_paragraph(FILE *out, const char *text)
{
    fputs("<p>", out);
    html_escape(out, text);
    fputs("</p>\n", out);
}

static void caption(FILE *out, const char *text)
{
    if (text == NULL || text[0] == '\0')
        return;
    fputs("<p class=\"caption\">", out);
    html_escape(out, text);
    fputs("</p>\n", out);
}

static const char *part_color(const HtmlPart *p, size_t k)
{
    return p->color ? p->color : html_color(k);
}

void html_legend(FILE *out, const HtmlPart *parts, size_t n)
{
    fputs("<ul class=\"legend\">", out);
    for (size_t k = 0; k < n; k++) {
        fprintf(out, "<li><span class=\"swatch\" style=\"background: %s\"></span>",
                part_color(&parts[k], k));
        html_escape(out, parts[k].label);
        fputs("</li>", out);
    }
    fputs("</ul>\n", out);
}

enum { BAR_WIDTH = 900, BAR_HEIGHT = 28, LABEL_WIDTH = 230 };

void html_stacked_bar(FILE *out, const char *title, const HtmlPart *parts, size_t n,
                      double full_scale, const char *value_fmt)
{
    caption(out, title);
    double total = 0.0;
    for (size_t k = 0; k < n; k++)
        if (parts[k].value > 0)
            total += parts[k].value;
    const double scale = full_scale > total ? full_scale : total;
    html_svg_begin(out, BAR_WIDTH, BAR_HEIGHT, title);
    html_rect(out, 0, 0, BAR_WIDTH, BAR_HEIGHT, "#eeeeee", "");
    double x = 0.0;
    for (size_t k = 0; k < n && total > 0; k++) {
        if (parts[k].value <= 0)
            continue;
        const double w = BAR_WIDTH * parts[k].value / scale;
        char tip[160], value[64];
        snprintf(value, sizeof value, value_fmt, parts[k].value);
        snprintf(tip, sizeof tip, "%s: %s (%.1f%%)", parts[k].label, value,
                 100.0 * parts[k].value / total);
        html_rect(out, x, 0, w, BAR_HEIGHT, part_color(&parts[k], k), tip);
        x += w;
    }
    html_svg_end(out);
    fputs("<ul class=\"legend\">", out);
    for (size_t k = 0; k < n; k++) {
        if (parts[k].value <= 0)
            continue;
        char value[64];
        snprintf(value, sizeof value, value_fmt, parts[k].value);
        fprintf(out, "<li><span class=\"swatch\" style=\"background: %s\"></span>",
                part_color(&parts[k], k));
        html_escape(out, parts[k].label);
        fputs(" ", out);
        html_escape(out, value);
        if (total > 0)
            fprintf(out, " (%.1f%%)", 100.0 * parts[k].value / total);
        fputs("</li>", out);
    }
    fputs("</ul>\n", out);
}

void html_bars(FILE *out, const char *title, const HtmlPart *parts, size_t n,
               const char *value_fmt)
{
    caption(out, title);
    double top = 0.0;
    for (size_t k = 0; k < n; k++)
        if (parts[k].value > top)
            top = parts[k].value;
    const double row = 22.0, plot = BAR_WIDTH - LABEL_WIDTH - 120;
    html_svg_begin(out, BAR_WIDTH, row * (double)n + 4, title);
    for (size_t k = 0; k < n; k++) {
        const double y = row * (double)k + 2;
        char value[64];
        snprintf(value, sizeof value, value_fmt, parts[k].value);
        html_svg_text(out, LABEL_WIDTH - 8, y + 15, "end", parts[k].label);
        const double w = top > 0 && parts[k].value > 0 ? plot * parts[k].value / top : 0.0;
        html_rect(out, LABEL_WIDTH, y + 2, w, row - 6, part_color(&parts[k], k), value);
        html_svg_text(out, LABEL_WIDTH + w + 6, y + 15, "start", value);
    }
    html_svg_end(out);
}

void html_svg_begin(FILE *out, double width, double height, const char *label)
{
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"",
            width, height, width, height);
    html_escape(out, label ? label : "");
    fputs("\">\n", out);
}

void html_svg_end(FILE *out)
{
    fputs("</svg>\n", out);
}

void html_rect(FILE *out, double x, double y, double w, double h, const char *color,
               const char *title)
{
    fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">", x, y,
            w > 0 ? w : 0, h > 0 ? h : 0, color);
    if (title && title[0]) {
        fputs("<title>", out);
        html_escape(out, title);
        fputs("</title>", out);
    }
    fputs("</rect>\n", out);
}

void html_svg_text(FILE *out, double x, double y, const char *anchor, const char *text)
{
    fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\">", x, y, anchor);
    html_escape(out, text);
    fputs("</text>\n", out);
}

void html_line(FILE *out, double x1, double y1, double x2, double y2, const char *color)
{
    fprintf(out,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
            "stroke-width=\"1\"></line>\n",
            x1, y1, x2, y2, color);
}
