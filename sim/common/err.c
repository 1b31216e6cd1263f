/*
 * err.c - first-error-wins message buffer (see err.h).
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>

int err_set(Err *err, const char *fmt, ...)
{
    if (err == NULL || err->is_set)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->is_set = true;
    return -1;
}

void err_clear(Err *err)
{
    err->is_set = false;
    err->msg[0] = '\0';
}
