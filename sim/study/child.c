/*
 * child.c - fork, run, pipe back (see child.h).
 */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, dprintf */

#include "child.h"

#include "../common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reads exactly n bytes unless the writer stops first; returns the bytes read. */
static size_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

int child_start(ChildCall *call, void (*fn)(void *arg, void *result), void *arg,
                size_t result_bytes, void *scratch, const char *what, Err *err)
{
    int fds[2];
    call->pid = 0;
    call->fd = -1;
    if (pipe(fds) != 0)
        return err_set(err, "%s: cannot create a pipe: %s", what, strerror(errno));
    fflush(NULL); /* the child must not write the parent's buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return err_set(err, "%s: cannot fork: %s", what, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        memset(scratch, 0, result_bytes);
        fn(arg, scratch);
        size_t put = 0;
        while (put < result_bytes) {
            ssize_t w = write(fds[1], (const char *)scratch + put, result_bytes - put);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                _exit(1);
            put += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    call->pid = pid;
    call->fd = fds[0];
    return 0;
}

int child_finish(ChildCall *call, void *result, size_t result_bytes, const char *what, Err *err)
{
    memset(result, 0, result_bytes);
    size_t got = read_full(call->fd, result, result_bytes);
    close(call->fd);
    call->fd = -1;
    int status = 0;
    while (waitpid(call->pid, &status, 0) < 0 && errno == EINTR)
        ;
    call->pid = 0;
    if (WIFSIGNALED(status))
        return err_set(err, "%s: the simulation process was killed by signal %d (%s)", what,
                       WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (got != result_bytes || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return err_set(err, "%s: the simulation process failed (exit status %d)", what,
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

int child_call(void (*fn)(void *arg, void *result), void *arg, void *result, size_t result_bytes,
               const char *what, Err *err)
{
    ChildCall call;
    if (child_start(&call, fn, arg, result_bytes, result, what, err))
        return -1;
    return child_finish(&call, result, result_bytes, what, err);
}

int child_spawn(Child *c, const char *exe, char *const argv[], Err *err)
{
    c->pid = 0;
    c->fd_out = c->fd_err = -1;
    int out[2], errp[2];
    if (pipe(out) != 0)
        return err_set(err, "cannot start a worker: pipe: %s", strerror(errno));
    if (pipe(errp) != 0) {
        close(out[0]);
        close(out[1]);
        return err_set(err, "cannot start a worker: pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(errp[1], STDERR_FILENO);
        close(out[0]);
        close(out[1]);
        close(errp[0]);
        close(errp[1]);
        if (strchr(exe, '/') != NULL)
            execv(exe, argv);
        else
            execvp(exe, argv);
        dprintf(STDERR_FILENO, "zerosim: cannot execute %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(errp[1]);
    if (pid < 0) {
        close(out[0]);
        close(errp[0]);
        return err_set(err, "cannot start a worker: fork: %s", strerror(errno));
    }
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    fcntl(errp[0], F_SETFD, FD_CLOEXEC);
    c->pid = pid;
    c->fd_out = out[0];
    c->fd_err = errp[0];
    return 0;
}

void child_drain(int *fd, char **data, size_t *n_bytes, size_t *cap, size_t keep_tail_bytes)
{
    char chunk[65536];
    ssize_t got = read(*fd, chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (got <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    if (*n_bytes + (size_t)got + 1 > *cap) {
        *cap = (*n_bytes + (size_t)got + 1) * 2;
        *data = xrealloc(*data, *cap);
    }
    memcpy(*data + *n_bytes, chunk, (size_t)got);
    *n_bytes += (size_t)got;
    (*data)[*n_bytes] = '\0';
    if (keep_tail_bytes > 0 && *n_bytes > 2 * keep_tail_bytes) { /* only the last lines matter */
        memmove(*data, *data + *n_bytes - keep_tail_bytes, keep_tail_bytes);
        *n_bytes = keep_tail_bytes;
        (*data)[*n_bytes] = '\0';
    }
}

int child_wait(Child *c)
{
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

void child_close(Child *c)
{
    if (c->fd_out >= 0)
        close(c->fd_out);
    if (c->fd_err >= 0)
        close(c->fd_err);
    c->fd_out = c->fd_err = -1;
}
