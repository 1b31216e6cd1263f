/*
 * run_html.h - `zerosim run --html FILE`: the run on one self-contained page.
 *
 * The verdict and throughput, where rank 0's step goes (a stacked bar of the breakdown),
 * rank 0's GPU memory over time by category (a stacked area from the memory tracker's
 * samples, with the usable capacity), bytes per link class and per collective, and one
 * layer's timeline of compute and communication on rank 0's streams (a layer in the middle
 * of the step, forward and backward), all inline SVG (report/html.h).
 */
#ifndef ZEROSIM_REPORT_RUN_HTML_H
#define ZEROSIM_REPORT_RUN_HTML_H

#include "run_report.h"

#include <stdio.h>

void run_html_write(FILE *out, const RunReport *r);

#endif
