/*
 * html.h - self-contained HTML pages with inline SVG charts: one file that opens anywhere,
 * with no network, no script and no framework.
 *
 * The pieces the reports' pages are made of: the page's head (inline CSS) and end, headings
 * and paragraphs (text escaped), a stacked horizontal bar with its legend, a set of
 * horizontal bars on one scale, and SVG primitives for the charts a page draws itself
 * (run_html.c's memory over time and one-layer timeline). Every element is closed, so the
 * page is also well-formed XML, which the tests check.
 */
#ifndef ZEROSIM_REPORT_HTML_H
#define ZEROSIM_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* One part of a bar chart: its label, value and colour (NULL: the palette's k-th). */
typedef struct HtmlPart {
    const char *label;
    double value;
    const char *color;
} HtmlPart;

/* A colour of the palette (k wraps around). */
const char *html_color(size_t k);

/* Writes s with &, <, >, " escaped. */
void html_escape(FILE *out, const char *s);

/* <!DOCTYPE html>, the head (title, inline style) and the body's <h1>. */
void html_begin(FILE *out, const char *title);

/* Closes the body and the page. */
void html_end(FILE *out);

void html_heading(FILE *out, const char *text);
void html_paragraph(FILE *out, const char *text);

/* One horizontal bar of `n` parts, widths proportional to their values (those <= 0 left
 * out) against full_scale (0: their sum fills the bar; bars meant to be compared share one),
 * with a legend of every part and its value printed with value_fmt ("%.3f s"). */
void html_stacked_bar(FILE *out, const char *caption, const HtmlPart *parts, size_t n,
                      double full_scale, const char *value_fmt);

/* One horizontal bar per part on a shared scale (the largest value fills the width), each
 * with its label and value. */
void html_bars(FILE *out, const char *caption, const HtmlPart *parts, size_t n,
               const char *value_fmt);

/* SVG primitives in user units (px). */
void html_svg_begin(FILE *out, double width, double height, const char *label);
void html_svg_end(FILE *out);
void html_rect(FILE *out, double x, double y, double w, double h, const char *color,
               const char *title);
void html_svg_text(FILE *out, double x, double y, const char *anchor, const char *text);
void html_line(FILE *out, double x1, double y1, double x2, double y2, const char *color);

/* A legend of n coloured labels as an HTML list. */
void html_legend(FILE *out, const HtmlPart *parts, size_t n);

#endif
