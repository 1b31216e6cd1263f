/*
 * strlist.h - a growable list of owned strings.
 *
 * Used for what a parser wants to tell the user without failing: defaults it applied and keys
 * it read but does not model. The list owns copies of the strings it is given.
 */
#ifndef ZEROSIM_COMMON_STRLIST_H
#define ZEROSIM_COMMON_STRLIST_H

#include <stddef.h>

typedef struct StrList {
    char **items;
    size_t n_items;
    size_t capacity;
} StrList;

/* Prepares an empty list in caller storage. */
void strlist_init(StrList *list);

/* Frees every string and the array; the list is empty and reusable afterwards. */
void strlist_fini(StrList *list);

/* Appends a printf-formatted copy. Aborts on out-of-memory (not an input error). */
void strlist_addf(StrList *list, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Joins the items with sep into buf (truncating to buf_size); returns buf. */
char *strlist_join(const StrList *list, const char *sep, char *buf, size_t buf_size);

#endif
