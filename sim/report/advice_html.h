/*
 * advice_html.h - `zerosim advise --html FILE`: the ranked candidates on one self-contained
 * page (report/html.h).
 *
 * The ranked table and the recommendation exactly as the text report prints them (so the
 * page says what the terminal says), then charts keyed by the table's row numbers: step time
 * and tokens/s of the simulated candidates, and every candidate's GPU memory against the
 * usable HBM, fitting or not.
 */
#ifndef ZEROSIM_REPORT_ADVICE_HTML_H
#define ZEROSIM_REPORT_ADVICE_HTML_H

#include "advice.h"

void advice_html_write(FILE *out, const Advice *a);

#endif
