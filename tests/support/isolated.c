/*
 * isolated.c - a scenario in a child process, through study/child.h (see isolated.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "isolated.h"

#include "study/child.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Job {
    Scenario scenario;
} Job;

static void run_scenario(void *arg, void *result)
{
    ((Job *)arg)->scenario(result);
}

Probe run_isolated(Scenario scenario)
{
    static Probe probe;
    Job job = {scenario};
    Err err = {0};
    int rc = child_call(run_scenario, &job, &probe, sizeof probe, "test scenario", &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
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
