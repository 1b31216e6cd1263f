/*
 * test_child.c - work in child processes (study/child.c): a result handed back, a child that
 * exits early or is killed reported as an error naming what failed, and a spawned program's
 * output and exit status.
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "study/child.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct Result {
    int n;
    double squares[64];
} Result;

static void squares(void *arg, void *result)
{
    Result *r = result;
    r->n = *(int *)arg;
    for (int i = 0; i < r->n; i++)
        r->squares[i] = (double)i * i;
}

static void exits_early(void *arg, void *result)
{
    (void)arg;
    (void)result;
    _exit(5);
}

static void is_killed(void *arg, void *result)
{
    (void)arg;
    (void)result;
    raise(SIGKILL);
}

static void test_child_call_hands_the_result_back(void **state)
{
    (void)state;
    int n = 50;
    Result r;
    Err err = {0};
    assert_int_equal(child_call(squares, &n, &r, sizeof r, "squares", &err), 0);
    assert_int_equal(r.n, 50);
    assert_true(r.squares[49] == 49.0 * 49.0);
    assert_false(err.is_set);
}

static void test_child_call_reports_a_failed_child(void **state)
{
    (void)state;
    Result r;
    Err err = {0};
    assert_int_equal(child_call(exits_early, NULL, &r, sizeof r, "early", &err), -1);
    assert_string_equal(err.msg, "early: the simulation process failed (exit status 5)");
    Err killed = {0};
    assert_int_equal(child_call(is_killed, NULL, &r, sizeof r, "killed", &killed), -1);
    assert_non_null(strstr(killed.msg, "killed: the simulation process was killed by signal 9"));
}

static void test_child_spawn_captures_output_and_status(void **state)
{
    (void)state;
    Child c;
    Err err = {0};
    char *const argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    assert_int_equal(child_spawn(&c, "sh", argv, &err), 0);
    char *out = NULL, *errs = NULL;
    size_t n_out = 0, cap_out = 0, n_err = 0, cap_err = 0;
    while (c.fd_out >= 0 || c.fd_err >= 0) {
        struct pollfd fds[2];
        nfds_t n = 0;
        if (c.fd_out >= 0)
            fds[n++] = (struct pollfd){.fd = c.fd_out, .events = POLLIN};
        if (c.fd_err >= 0)
            fds[n++] = (struct pollfd){.fd = c.fd_err, .events = POLLIN};
        assert_true(poll(fds, n, 5000) > 0);
        for (nfds_t i = 0; i < n; i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            if (fds[i].fd == c.fd_out)
                child_drain(&c.fd_out, &out, &n_out, &cap_out, 0);
            else
                child_drain(&c.fd_err, &errs, &n_err, &cap_err, 0);
        }
    }
    int status = child_wait(&c);
    child_close(&c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
    assert_string_equal(out, "out\n");
    assert_string_equal(errs, "err\n");
    free(out);
    free(errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_call_hands_the_result_back),
        cmocka_unit_test(test_child_call_reports_a_failed_child),
        cmocka_unit_test(test_child_spawn_captures_output_and_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
