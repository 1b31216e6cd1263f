/*
 * csv.h - the CSV of sweep outputs (RFC 4180): a field written, quoted when it must be, and a
 * line split back into its fields, strictly, so that a damaged row is told from a complete one.
 */
#ifndef ZEROSIM_STUDY_CSV_H
#define ZEROSIM_STUDY_CSV_H

#include "../common/buf.h"
#include "../common/strlist.h"

#include <stdbool.h>
#include <stddef.h>

/* Appends s as one field (after a comma unless is_first), quoted when it holds a separator, a
 * quote or surrounding spaces; a quote inside is doubled. */
void csv_field(Buf *b, const char *s, bool is_first);

/* Splits one line (n bytes, no newline) into its fields, appended to out (initialised by the
 * caller). Returns 0, or -1 when the line is not valid CSV (a quote left open, text after a
 * closing quote). */
int csv_split(const char *line, size_t n, StrList *out);

#endif
