/*
 * err.h - the one-line error that travels back from any function that can fail on input.
 *
 * A function that can fail on user input returns int (0 ok, -1 failed) and takes `Err *err`
 * last. The first error set wins: later calls to err_set() on a set Err are ignored, so the
 * message that reaches the user names the original cause, not its consequences.
 * Messages follow STYLE.md: "file: json.path: expected ..., got ...". A message always prints
 * as one line: control characters and bytes that are not UTF-8 in it are shown as \xNN.
 */
#ifndef ZEROSIM_COMMON_ERR_H
#define ZEROSIM_COMMON_ERR_H

#include <stdbool.h>

#define ERR_MSG_MAX 1024

typedef struct Err {
    bool is_set;
    char msg[ERR_MSG_MAX];
} Err;

/* Sets the message (printf-style) unless one is already set. Always returns -1 so callers can
 * write `return err_set(err, ...);`. A NULL err is allowed and ignored. */
int err_set(Err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears err for reuse. */
void err_clear(Err *err);

#endif
