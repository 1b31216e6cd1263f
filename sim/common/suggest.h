/*
 * suggest.h - "did you mean" for misspelled keys and names.
 *
 * Edit distance (Levenshtein) between a typo and each valid candidate; the closest one within
 * a distance that still looks like a typo is suggested.
 */
#ifndef ZEROSIM_COMMON_SUGGEST_H
#define ZEROSIM_COMMON_SUGGEST_H

#include <stddef.h>

/* Edit distance between a and b (insert, delete, substitute: cost 1 each). */
size_t suggest_distance(const char *a, const char *b);

/* The candidate closest to word, or NULL when none is within max(2, strlen(word)/3) edits.
 * candidates is a NULL-terminated array; the result is borrowed from it. */
const char *suggest_closest(const char *word, const char *const *candidates);

#endif
