/*
 * err.c - first-error-wins message buffer (see err.h).
 */
#include "err.h"

#include "utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Rewrites msg so that it prints as one clean line: control characters and bytes that are not
 * valid UTF-8 (from a file's content or a path) become \xNN. */
static void escape_unprintable(char *msg, size_t size)
{
    char out[ERR_MSG_MAX];
    size_t n = strlen(msg), o = 0;
    for (size_t i = 0; i < n && o + 5 < sizeof out;) {
        const unsigned char c = (unsigned char)msg[i];
        size_t len = utf8_sequence_length((const unsigned char *)msg + i, n - i);
        if (len == 0 || c < 32 || c == 127) {
            o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
            i++;
        } else {
            if (o + len >= sizeof out)
                break;
            memcpy(out + o, msg + i, len);
            o += len;
            i += len;
        }
    }
    out[o] = '\0';
    snprintf(msg, size, "%s", out);
}

int err_set(Err *err, const char *fmt, ...)
{
    if (err == NULL || err->is_set)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    escape_unprintable(err->msg, sizeof err->msg);
    err->is_set = true;
    return -1;
}

void err_clear(Err *err)
{
    err->is_set = false;
    err->msg[0] = '\0';
}
