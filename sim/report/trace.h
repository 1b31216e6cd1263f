/*
 * trace.h - a simulated step as a Chrome trace (the JSON trace event format), for Perfetto.
 *
 * The last stage of the pipeline for timelines: it reads a finalised event graph and the times
 * the engine gave each op and writes a file that ui.perfetto.dev or chrome://tracing opens.
 * Each traced rank is a process named "rank N"; each of its streams is a thread named after the
 * stream (graph_stream_name), including the node's NVMe and CPU-optimizer streams that act for
 * that rank. Every op that took time is a complete ("X") event; memory timelines recorded by
 * the engine's tracker become counter ("C") tracks: "gpu memory" for the rank's GPU, "cpu
 * memory" and "nvme" for its node. Events are streamed, so a trace of millions of ops needs no
 * tree in memory. What to trace (which ranks) is the caller's choice; the engine must have
 * recorded memory timelines for those ranks (EngineOptions.traced) for counters to appear.
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

/* Writes the trace of run r of the finalised graph g to path (created or truncated). traced
 * holds graph_n_ranks(g) flags choosing the ranks to include (NULL = all); a node's CPU and
 * NVMe counters go under the lowest traced rank on that node. Zero-duration ALLOC/FREE ops are
 * left out (their effect is in the counters). Returns 0, or -1 with err set to
 * "PATH: cannot write trace: REASON" when the file cannot be opened or written. */
int trace_write(const char *path, const Graph *g, const EngineResult *r, const bool *traced,
                Err *err);

/* The same trace on an open stream (stdout for `--trace -`); the caller checks the stream. */
void trace_write_to(FILE *out, const Graph *g, const EngineResult *r, const bool *traced);

#endif
