/*
 * sweep.h - running the points of a sweep grid in parallel worker processes.
 *
 * Each point is the zerosim executable run as `zerosim run|estimate ... --json -` in a child
 * process (study/child.h), at most n_jobs at a time, its report read from a pipe and its row
 * appended to the output (study/sweep_output.h) as soon as it finishes. `shard`/`n_shards`
 * keep the points whose id % n_shards == shard, so a job array or GNU parallel spreads one
 * grid over machines. A process per point keeps SimGrid's global state apart and turns a
 * crash into a row. SIGINT and SIGTERM stop the workers: the points in flight leave no row
 * and run again when the same sweep is started again.
 */
#ifndef ZEROSIM_STUDY_SWEEP_H
#define ZEROSIM_STUDY_SWEEP_H

#include "../common/err.h"
#include "../inputs/grid.h"
#include "sweep_output.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SweepOptions {
    const char *exe;     /* the zerosim executable the points run */
    const char *tmp_dir; /* where derived inputs go ("" when the grid has none) */
    size_t n_jobs;       /* worker processes, >= 1 */
    uint64_t shard, n_shards;
} SweepOptions;

typedef struct SweepTally {
    size_t total;       /* points in this shard */
    size_t skipped;     /* already in the output */
    size_t finished;    /* computed by this run */
    size_t errors;      /* rows with status error */
    size_t not_fitting; /* memory.fits false: out of memory in a run */
    size_t running;
    bool has_bar; /* draw a progress bar on stderr */
} SweepTally;

typedef enum SweepStatus {
    SWEEP_DONE,        /* every point of the shard has its row (failed points included) */
    SWEEP_INTERRUPTED, /* SIGINT/SIGTERM: the rows written are complete */
    SWEEP_FAILED       /* a worker could not start or a row not be written: err is set */
} SweepStatus;

/* Counts the shard's points and those already in the output into t (total, skipped). */
void sweep_count(const Grid *g, const SweepOutput *o, uint64_t shard, uint64_t n_shards,
                 SweepTally *t);

/* Runs the shard's remaining points. t comes from sweep_count(); finished, errors and
 * not_fitting are added to it. */
SweepStatus sweep_run(const Grid *g, SweepOutput *o, const SweepOptions *opts, SweepTally *t,
                      Err *err);

#endif
