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

/* Where a rank's step went. The exposed categories are waits of the compute stream charged
 * along the critical path; the busy ones below also say how long the rank's own transfers and
 * host work ran, hidden or not. One table (breakdown_category) names each, for the text report,
 * the JSON report and advise alike. */
typedef enum BreakdownCategory {
    BD_COMPUTE,   /* forward, backward and recompute kernels */
    BD_OPTIMIZER, /* GPU optimizer kernels */
    BD_ALL_REDUCE, /* exposed collectives, in CollectiveKind order */
    BD_ALL_GATHER,
    BD_REDUCE_SCATTER,
    BD_BROADCAST,
    BD_ALL_TO_ALL, /* MoE token dispatch and combine (expert parallelism) */
    BD_H2D, /* exposed host-to-GPU copies */
    BD_D2H, /* exposed GPU-to-host copies */
    BD_NVME_READ,
    BD_NVME_WRITE,
    BD_CPU_OPTIMIZER, /* exposed host optimizer (CPU Adam) */
    BD_IDLE,          /* waits on nothing modelled (or start-up) */
    BD_N
} BreakdownCategory;

typedef struct BreakdownCategoryInfo {
    const char *text;     /* the text report's line: "exposed PCIe host-to-GPU" */
    const char *short_name; /* advise's bottleneck: "PCIe host-to-GPU" */
    const char *json_key; /* key under the JSON report's "time" (collectives: under
                             "exposed_comm_by_collective_s", named by graph_collective_name) */
    const char *busy_key; /* key under "busy_s" for offload work, or NULL */
} BreakdownCategoryInfo;

typedef struct Breakdown {
    double total_s;           /* the run's makespan */
    double time_s[BD_N];      /* the step, category by category; sums to total_s */
    double busy_s[BD_N];      /* offload work (categories with a busy_key), hidden or not */
} Breakdown;

/* The names of a category; never NULL. */
const BreakdownCategoryInfo *breakdown_category(BreakdownCategory c);

/* True for the categories that are an exposed collective. */
bool breakdown_is_collective(BreakdownCategory c);

/* Exposed communication: the sum of the collective categories. */
double breakdown_exposed_comm_s(const Breakdown *b);

/* The breakdown of rank `rank`. */
void breakdown_rank(const Graph *g, const EngineResult *r, uint32_t rank, Breakdown *out);

/* The category that took the largest share of the step (ties: the first in table order). */
BreakdownCategory breakdown_largest(const Breakdown *b);

#endif
