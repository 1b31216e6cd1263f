/*
 * trace.h - a simulated step as a Chrome trace (the JSON trace event format), for Perfetto.
 *
 * The last stage of the pipeline for timelines: it reads a finalised event graph and the times
 * the engine gave each op and writes a file that ui.perfetto.dev or chrome://tracing opens.
 * Each traced rank is a process named "rank N"; each of its streams is a thread named after the
 * stream (graph_stream_name), including the node's NVMe and CPU-optimizer streams that act for
 * that rank. Every op that took time is a complete ("X") event whose category is its purpose
 * for compute (forward, backward, recompute, optimizer: recomputation is its own slices) and
 * its kind otherwise, with a collective's algorithm, protocol and integer bytes in its args; a
 * flow ("s"/"f") joins each collective to the compute ops it unblocks; an instant event marks
 * where each step starts; counter ("C") tracks give the memory timelines the engine's tracker
 * recorded ("gpu memory", "cpu memory", "nvme", one track per category such as "gpu
 * activations", "gpu reserved") and the rank's send rate and utilisation per link class
 * ("link nvlink", "link pcie", "link nic", "link nvme"). Events are streamed, so a trace of
 * millions of ops needs no tree in memory. What to trace (which ranks) is the caller's choice;
 * the engine must have run with EngineOptions.traced for those ranks (memory timelines and
 * per-op link bytes) for counters to appear. Every track: docs/TRACE.md.
 *
 * Ids: Perfetto treats pid 0 as the kernel's idle task and older releases merge tid 0 into
 * tid 1 (google/perfetto#394, thoren-d/tracing-chrome#32), so pid = rank + 1 and
 * tid = stream kind + 1; the names carry the real rank and stream.
 */
#ifndef ZEROSIM_REPORT_TRACE_H
#define ZEROSIM_REPORT_TRACE_H

#include "../common/err.h"
#include "../engine/engine.h"
#include "../schedule/graph.h"

#include <stdio.h>

#include <stdbool.h>

/* The trace process id of a rank and thread id of a stream kind (see the note above). */
#define TRACE_PID(rank) ((uint64_t)(rank) + 1)
#define TRACE_TID(stream_kind) ((uint64_t)(stream_kind) + 1)

/* What to put in a trace. */
typedef struct TraceOptions {
    const bool *traced;              /* graph_n_ranks(g) flags: the ranks to include; NULL: all */
    uint64_t micro_batches_per_step; /* gradient accumulation, for the step markers; 0: 1 */
    const Platform *platform;        /* the simulated platform, for link utilisation (per GPU:
                                        NVLink, its PCIe lanes, its share of the node's NICs);
                                        NULL: send rates only */
} TraceOptions;

/* Writes the trace of run r of the finalised graph g to path (created or truncated), with
 * opts (NULL: every rank, one micro-batch per step, no platform). A node's CPU and NVMe
 * counters go under the lowest traced rank on that node. Zero-duration ALLOC/FREE ops are left
 * out (their effect is in the counters). Returns 0, or -1 with err set to
 * "PATH: cannot write trace: REASON" when the file cannot be opened or written. */
int trace_write(const char *path, const Graph *g, const EngineResult *r,
                const TraceOptions *opts, Err *err);

/* The same trace on an open stream (stdout for `--trace -`); the caller checks the stream. */
void trace_write_to(FILE *out, const Graph *g, const EngineResult *r, const TraceOptions *opts);

#endif
