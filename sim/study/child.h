/*
 * child.h - work in a child process: SimGrid takes one platform per process and keeps global
 * state, so everything that runs several simulations (advise's candidates, sweep's points, the
 * tests' scenarios) runs each in a child of its own.
 *
 * Two shapes. child_call() forks, runs a function that fills a fixed-size result in the child,
 * and hands the result back through a pipe: a crash in the child is an error here, not a
 * crash of the caller; child_start() and child_finish() are its halves, for several at once. child_spawn() forks and executes a program with its stdout and stderr
 * on pipes, for a caller that polls several children (sweep's worker pool); child_drain() and
 * child_wait() finish the job. Neither allocates in the parent beyond what the caller passes.
 */
#ifndef ZEROSIM_STUDY_CHILD_H
#define ZEROSIM_STUDY_CHILD_H

#include "../common/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Runs fn(arg, result) in a child process; result (result_bytes, zeroed first) is what the
 * child filled in. Returns 0, or -1 with err set when the child could not be started, died
 * or did not hand back a whole result ("WHAT: the simulation process was killed by signal 11"). */
int child_call(void (*fn)(void *arg, void *result), void *arg, void *result, size_t result_bytes,
               const char *what, Err *err);

/* A function started in a child process (child_start), whose result child_finish reads. */
typedef struct ChildCall {
    pid_t pid;
    int fd; /* the read end of the result pipe */
} ChildCall;

/* child_call in two halves, so that several children run at once: child_start forks and runs
 * fn(arg, scratch) in the child (scratch, result_bytes, is the child's copy to fill: the
 * parent's is untouched); child_finish reads the result, waits for the child and reports as
 * child_call does. Each started call must be finished. 0, or -1 with err set. */
int child_start(ChildCall *call, void (*fn)(void *arg, void *result), void *arg,
                size_t result_bytes, void *scratch, const char *what, Err *err);
int child_finish(ChildCall *call, void *result, size_t result_bytes, const char *what, Err *err);

/* A started program: its pid and the read ends of its stdout and stderr (-1 once drained). */
typedef struct Child {
    pid_t pid;
    int fd_out, fd_err;
} Child;

/* Starts exe (a path, or a name looked up in PATH) with argv (NULL-terminated, argv[0]
 * included), stdin from /dev/null, stdout and stderr on pipes. 0, or -1 with err set. */
int child_spawn(Child *c, const char *exe, char *const argv[], Err *err);

/* Reads what is ready on *fd (non-blocking use after poll()) and appends it to *data
 * (*n_bytes, capacity *cap, NUL-terminated; realloc'd). Closes *fd and sets it to -1 at end of
 * file. With keep_tail_bytes > 0 only that much of the end is kept (a chatty stderr). */
void child_drain(int *fd, char **data, size_t *n_bytes, size_t *cap, size_t keep_tail_bytes);

/* Waits for the child (retrying on EINTR) and returns its wait status. */
int child_wait(Child *c);

/* Closes what is still open of the child's pipes. */
void child_close(Child *c);

#endif
