/*
 * isolated.h - run a SimGrid scenario in a child process and get its numbers back.
 *
 * SimGrid keeps global state and takes one platform per process, so a test that simulates
 * forks: the child builds its platform and graphs, records what it measured in a Probe and
 * sends it back through a pipe; the parent makes the assertions.
 */
#ifndef ZEROSIM_TESTS_ISOLATED_H
#define ZEROSIM_TESTS_ISOLATED_H

#include "common/err.h"

#define PROBE_MAX_VALUES 256

typedef struct Probe {
    int n;
    double v[PROBE_MAX_VALUES];
    char err[ERR_MSG_MAX];
} Probe;

typedef void (*Scenario)(Probe *probe);

/* Runs scenario in a child and returns its probe; fails the test if the child dies. */
Probe run_isolated(Scenario scenario);

/* Records an error message in the probe (the parent prints it). */
void probe_fail(Probe *probe, const Err *err);

/* Appends a measured value. */
void probe_record(Probe *probe, double value);

/* Asserts |got - want| <= rel |want|, printing both when it does not hold. */
void assert_close(double got, double want, double rel);

#endif
