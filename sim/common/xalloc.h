/*
 * xalloc.h - allocation that cannot return NULL.
 *
 * Running out of memory is not an input error the user can fix in a file, so these abort with a
 * message instead of threading an error through every caller.
 */
#ifndef ZEROSIM_COMMON_XALLOC_H
#define ZEROSIM_COMMON_XALLOC_H

#include <stdlib.h>

void *xmalloc(size_t n_bytes);
void *xcalloc(size_t n_items, size_t item_bytes);
void *xrealloc(void *ptr, size_t n_bytes);
char *xstrdup(const char *s);

#endif
