/*
 * buf.c - the growable byte buffer (see buf.h).
 */
#include "buf.h"

#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void buf_add(Buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->data = xrealloc(b->data, b->cap);
    }
    memcpy(b->data + b->n, s, n);
    b->n += n;
    b->data[b->n] = '\0';
}

void buf_puts(Buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

void buf_replace_all(Buf *b, const char *what, const char *with)
{
    if (what[0] == '\0' || b->data == NULL)
        return;
    Buf out = {0};
    size_t n = strlen(what);
    for (const char *p = b->data, *hit; (hit = strstr(p, what)) != NULL || *p; p = hit + n) {
        if (hit == NULL) {
            buf_puts(&out, p);
            break;
        }
        buf_add(&out, p, (size_t)(hit - p));
        buf_puts(&out, with);
    }
    buf_add(&out, "", 0);
    buf_free(b);
    *b = out;
}

int buf_read_fd(Buf *b, int fd)
{
    char chunk[65536];
    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            return 0;
        buf_add(b, chunk, (size_t)got);
    }
}

void buf_free(Buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
