/*
 * sweep_summary.h - `zerosim sweep --summary`: a sweep's CSV rows as a table a person reads.
 *
 * The CSV keeps full precision (bytes, seconds, fractions) for programs; the summary reads the
 * finished file back (rows written by this run and kept from earlier ones alike), in id order,
 * and prints the grid's dimensions with the headline metrics in rounded human units: times in
 * us, ms or s, memory in MiB or GiB, rates with k or M, fractions in percent, and for `run`
 * sweeps the exposed communication, CPU optimizer and offload (PCIe and NVMe) time. It reads
 * only what sweep_output wrote, through csv_split; the last stage of a sweep.
 */
#ifndef ZEROSIM_STUDY_SWEEP_SUMMARY_H
#define ZEROSIM_STUDY_SWEEP_SUMMARY_H

#include "../common/err.h"

#include <stdio.h>

/* Writes the table of the sweep CSV at csv_path to out. 0, or -1 with err set ("PATH: cannot
 * read the sweep", "PATH: line N: expected ...", a file that is not a sweep CSV). */
int sweep_summary_write(FILE *out, const char *csv_path, Err *err);

/* Rounded human units, for the table and its tests: seconds ("850 us", "12.3 ms", "4.56 s",
 * "123 s"), bytes ("512 MiB", "61.8 GiB"), counts ("950", "12.3 k", "4.56 M"); buf is
 * returned. */
const char *sweep_summary_seconds(double s, char *buf, size_t size);
const char *sweep_summary_bytes(double bytes, char *buf, size_t size);
const char *sweep_summary_count(double n, char *buf, size_t size);

#endif
