/*
 * engine.h - executes an event graph on a SimGrid model of the platform.
 *
 * Each stream of the graph is an actor on its host (GPU streams on the rank's GPU host, NVMe
 * and CPU-optimizer streams on the node's CPU host) that runs its ops in order; an op whose
 * cross-stream dependencies are not done parks its actor on the stream's semaphore until the
 * last one completes (O(1) per dependency, no allocation while running). COMPUTE becomes a
 * SimGrid execution, COPY a flow between the host and GPU (D2D a local HBM transfer), DISK an
 * I/O on the node's NVMe, COLLECTIVE the member's flows from collective.h with the latency
 * and protocol bound of NCCL's cost model (model/nccl_model.h, resolved once per collective
 * before the run), ALLOC/FREE an update of the memory tracker. All contention comes from
 * SimGrid's flow model (CM02, shared links). SimGrid keeps global state: engine_init() once
 * per process, then any number of engine_run() calls on that platform. The only place that
 * includes SimGrid headers.
 */
#ifndef ZEROSIM_ENGINE_ENGINE_H
#define ZEROSIM_ENGINE_ENGINE_H

#include "../common/err.h"
#include "../common/precision.h"
#include "../inputs/platform.h"
#include "../model/nccl_model.h"
#include "../schedule/graph.h"
#include "collective.h"
#include "memory.h"
#include "topology.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct EngineOptions {
    CollAlgo algo;        /* auto: NCCL's choice (the ideal model: tree below 256 MiB for
                             whole-node all-reduces, else ring); ring, tree: NCCL_ALGO */
    CommModel comm_model; /* nccl (0, the default) or ideal */
    bool is_stepwise;     /* every ring step as its own flow (validation of fluid mode) */
    const bool *traced;   /* n_ranks flags: record memory timelines; may be NULL */
    bool show_progress;   /* on stderr, once the run has taken more than a second */
    double gpu_outside_bytes;  /* per GPU outside the caching allocator (runtime_memory.h) */
    double gpu_headroom_bytes; /* per GPU kept free by the out-of-memory verdict */
    bool is_expandable_segments; /* PyTorch's expandable_segments allocator mode */
    double gpu_load_bytes;       /* per GPU held and released before the first op (a model
                                    built whole, then partitioned: memory_preload_gpu) */
    uint32_t gpu_load_tensors;   /* in this many tensors */
} EngineOptions;

/* How one collective ran (the same for all its members). */
typedef struct EngineCollInfo {
    const char *algo;  /* "ring", "tree", "pat", "hier" (static strings) */
    const char *proto; /* "LL", "LL128", "Simple"; "fluid" under the ideal model */
    uint32_t n_ranks;  /* the communicator's ranks (symmetric mode: the logical group) */
    uint32_t n_nodes;
    uint32_t n_calls; /* NCCL calls it stands for (graph.h's n_calls), 1 at least */
    double latency_s; /* the latency term charged to every member, all calls together */
} EngineCollInfo;

typedef struct EngineResult {
    double makespan_s; /* from the first op to the last */
    uint32_t n_ops;
    double *op_start_s; /* per op, relative to the run's start */
    double *op_end_s;
    MemTracker *memory;
    uint32_t n_ranks;
    double (*link_bytes)[LINK_N_CLASSES]; /* per rank: bytes it sent over each link class */
    double (*coll_bytes)[COLL_N_KINDS];   /* per rank: bytes it sent in each collective kind */
    double (*op_link_bytes)[LINK_N_CLASSES]; /* per op, only when EngineOptions.traced is set
                                                (traces' link tracks): bytes it sent over
                                                each link class; else NULL */
    EngineCollInfo *coll_info;            /* per collective of the graph */
    uint64_t n_activities;                /* SimGrid executions, flows and I/Os started */
    double wall_s;                        /* host time spent in SimGrid */
    long n_memory_maps; /* entries of the process's memory map once every actor was started
                           (capacity.h), -1 where unknown */
} EngineResult;

/* Builds the SimGrid platform for p (validated and resized) with GPU speeds for `precision`.
 * Once per process; fails if called again. */
int engine_init(const Platform *p, Precision precision, Err *err);

/* Runs a finalised graph whose ranks fit on the platform. Fails (err set) on a deadlock. */
int engine_run(const Graph *g, const EngineOptions *opts, EngineResult *out, Err *err);

void engine_result_fini(EngineResult *r);

#endif
