/*
 * breakdown.h - where a rank's step time went, from a finished simulation.
 *
 * Walks one rank's compute stream: time in GPU kernels, in the GPU optimizer step, and the
 * gaps between kernels. A gap is charged along the critical path that ends at the next
 * kernel: the dependency that finished last is charged for the part of the gap it was
 * running, the dependency that held it up for the part before, and so on, so a kernel waiting
 * on parameters that waited on the CPU optimizer that waited on gradient copies charges each
 * of them for its own share. What nothing explains is idle. Communication hidden behind
 * compute costs nothing here, which is the point: only exposed time lengthens the step.
 */
#ifndef ZEROSIM_REPORT_BREAKDOWN_H
#define ZEROSIM_REPORT_BREAKDOWN_H

#include "../engine/engine.h"
#include "../schedule/graph.h"

typedef struct Breakdown {
    double total_s;                      /* the run's makespan */
    double compute_s;                    /* forward, backward and recompute kernels */
    double optimizer_s;                  /* GPU optimizer kernels ("optimizer step") */
    double exposed_coll_s[COLL_N_KINDS]; /* waits on collectives, by kind */
    double exposed_comm_s;               /* their sum */
    double exposed_h2d_s;                /* waits on host-to-GPU copies */
    double exposed_d2h_s;                /* waits on GPU-to-host copies */
    double exposed_nvme_read_s;
    double exposed_nvme_write_s;
    double exposed_cpu_s; /* waits on the host optimizer (CPU Adam) */
    double idle_s;        /* waits on nothing modelled (or start-up) */
    /* how long the rank's own transfers and host work ran, hidden or not */
    double busy_h2d_s, busy_d2h_s, busy_nvme_read_s, busy_nvme_write_s, busy_cpu_s;
} Breakdown;

/* The breakdown of rank `rank`. */
void breakdown_rank(const Graph *g, const EngineResult *r, uint32_t rank, Breakdown *out);

#endif
