/*
 * xalloc.c - allocation that aborts on exhaustion (see xalloc.h).
 */
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

static void *checked(void *p, size_t n_bytes)
{
    if (p == NULL && n_bytes != 0) {
        fprintf(stderr, "zerosim: out of memory allocating %zu bytes\n", n_bytes);
        abort();
    }
    return p;
}

void *xmalloc(size_t n_bytes)
{
    return checked(malloc(n_bytes), n_bytes);
}

void *xcalloc(size_t n_items, size_t item_bytes)
{
    return checked(calloc(n_items, item_bytes), n_items * item_bytes);
}

void *xrealloc(void *ptr, size_t n_bytes)
{
    return checked(realloc(ptr, n_bytes), n_bytes);
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}
