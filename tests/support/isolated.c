/*
 * isolated.c - fork, run, pipe back (see isolated.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "isolated.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

Probe run_isolated(Scenario scenario)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        static Probe probe;
        scenario(&probe);
        ssize_t w = write(fds[1], &probe, sizeof probe);
        _exit(w == (ssize_t)sizeof probe ? 0 : 1);
    }
    close(fds[1]);
    static Probe probe;
    memset(&probe, 0, sizeof probe);
    size_t got = 0;
    while (got < sizeof probe) {
        ssize_t r = read(fds[0], (char *)&probe + got, sizeof probe - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_int_equal(got, sizeof probe);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (probe.err[0])
        fprintf(stderr, "child error: %s\n", probe.err);
    return probe;
}

void probe_fail(Probe *probe, const Err *err)
{
    snprintf(probe->err, sizeof probe->err, "%s", err->msg);
}

void probe_record(Probe *probe, double value)
{
    if (probe->n < PROBE_MAX_VALUES)
        probe->v[probe->n++] = value;
}

void assert_close(double got, double want, double rel)
{
    if (fabs(got - want) > rel * fabs(want))
        fprintf(stderr, "got %.9g, want %.9g (rel %.3g > %.3g)\n", got, want,
                fabs(got - want) / fabs(want), rel);
    assert_true(fabs(got - want) <= rel * fabs(want));
}
