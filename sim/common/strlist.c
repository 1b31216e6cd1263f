/*
 * strlist.c - growable list of owned strings (see strlist.h).
 */
#include "strlist.h"

#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void strlist_init(StrList *list)
{
    list->items = NULL;
    list->n_items = 0;
    list->capacity = 0;
}

void strlist_fini(StrList *list)
{
    for (size_t i = 0; i < list->n_items; i++)
        free(list->items[i]);
    free(list->items);
    strlist_init(list);
}

void strlist_addf(StrList *list, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xmalloc((size_t)len + 1);
    vsnprintf(s, (size_t)len + 1, fmt, ap2);
    va_end(ap2);
    if (list->n_items == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 8;
        list->items = xrealloc(list->items, list->capacity * sizeof *list->items);
    }
    list->items[list->n_items++] = s;
}

char *strlist_join(const StrList *list, const char *sep, char *buf, size_t buf_size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < list->n_items && used + 1 < buf_size; i++) {
        int n = snprintf(buf + used, buf_size - used, "%s%s", i ? sep : "", list->items[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf;
}
