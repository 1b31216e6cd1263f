/*
 * compare_html.h - `zerosim compare --html FILE`: the columns side by side on one
 * self-contained page (report/html.h).
 *
 * The inputs and verdict of each column, the throughput rows, where each column's step goes
 * (stacked bars on one time scale), memory per GPU by category (stacked bars on one byte
 * scale, with HBM) and bytes per link class and per collective. Memory over time and the
 * one-layer timeline need a run's event graph, which compare does not keep: each column's
 * `zerosim run --html` page has them.
 */
#ifndef ZEROSIM_REPORT_COMPARE_HTML_H
#define ZEROSIM_REPORT_COMPARE_HTML_H

#include "compare_report.h"

void compare_html_write(FILE *out, const CompareReport *r);

#endif
