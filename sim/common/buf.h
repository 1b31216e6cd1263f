/*
 * buf.h - a growable byte buffer, always NUL-terminated: for text assembled piece by piece
 * (CSV rows, a child's output) where the length is not known in advance.
 *
 * A zeroed Buf is empty and valid; buf_free() returns it to that state. Growth doubles, so
 * appending is amortised O(1); allocation failure aborts (common/xalloc.h).
 */
#ifndef ZEROSIM_COMMON_BUF_H
#define ZEROSIM_COMMON_BUF_H

#include <stddef.h>

typedef struct Buf {
    char *data; /* NULL while nothing was added */
    size_t n, cap;
} Buf;

/* Appends n bytes of s. */
void buf_add(Buf *b, const char *s, size_t n);

/* Appends the string s. */
void buf_puts(Buf *b, const char *s);

/* Replaces every occurrence of `what` (non-empty) with `with`. */
void buf_replace_all(Buf *b, const char *what, const char *with);

/* Appends everything left to read on file descriptor fd (retrying on EINTR). 0, or -1 with
 * errno set by read(). */
int buf_read_fd(Buf *b, int fd);

/* Frees the bytes; the buffer is empty again. */
void buf_free(Buf *b);

#endif
