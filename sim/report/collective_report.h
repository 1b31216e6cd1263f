/*
 * collective_report.h - `zerosim collective` output, in nccl-tests' terms.
 *
 * One row per message size: the simulated time, the algorithm bandwidth (size / time) and the
 * bus bandwidth (algbw x the collective's factor: all-reduce 2(n-1)/n, all-gather and
 * reduce-scatter (n-1)/n, broadcast 1), so rows compare directly with a real nccl-tests run;
 * and the algorithm and protocol the simulation ran (NCCL's choice at that size).
 */
#ifndef ZEROSIM_REPORT_COLLECTIVE_REPORT_H
#define ZEROSIM_REPORT_COLLECTIVE_REPORT_H

#include <stddef.h>
#include <stdio.h>

typedef struct CollectiveRow {
    double bytes;
    double time_s;
    double algbw_bytes_per_s;
    double busbw_bytes_per_s;
    const char *algo;  /* "ring", "tree", "pat", "hier" (static) */
    const char *proto; /* "LL", "LL128", "Simple", or "fluid" under the ideal model */
} CollectiveRow;

/* The table, with a header naming the run (`title`) and the average bus bandwidth. */
void collective_report_text(FILE *out, const char *title, const CollectiveRow *rows, size_t n_rows);

/* A JSON array of objects with keys bytes, time_s, algbw_bytes_per_s, busbw_bytes_per_s,
 * algo, proto. */
void collective_report_json(FILE *out, const CollectiveRow *rows, size_t n_rows);

#endif
