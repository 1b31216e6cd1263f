/*
 * breakdown.h - where a rank's step time went, from a finished simulation.
 *
 * Walks one rank's compute stream: time in compute kernels, in the optimizer step, and the
 * gaps between kernels. Each gap is charged to what the next kernel was waiting for (the
 * dependency that finished last): a collective of some kind (exposed communication), a copy,
 * an NVMe transfer, or nothing (idle). The tail after the last kernel is charged to the last
 * op the rank finished. Communication hidden behind compute costs nothing here, which is the
 * point: only exposed time lengthens the step.
 */
#ifndef ZEROSIM_REPORT_BREAKDOWN_H
#define ZEROSIM_REPORT_BREAKDOWN_H

#include "../engine/engine.h"
#include "../schedule/graph.h"

typedef struct Breakdown {
    double total_s;                       /* the run's makespan */
    double compute_s;                     /* forward, backward and recompute kernels */
    double optimizer_s;                   /* optimizer kernels (labelled "optimizer step") */
    double exposed_coll_s[COLL_N_KINDS];  /* waits on collectives, by kind */
    double exposed_comm_s;                /* their sum */
    double exposed_copy_s;                /* waits on H2D/D2H copies */
    double exposed_nvme_s;                /* waits on NVMe */
    double idle_s;                        /* waits on nothing we model (or start-up) */
} Breakdown;

/* The breakdown of rank `rank`. */
void breakdown_rank(const Graph *g, const EngineResult *r, uint32_t rank, Breakdown *out);

#endif
