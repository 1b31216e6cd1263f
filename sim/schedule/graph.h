/*
 * graph.h - the event graph: what every rank does in a training step, as data.
 *
 * Ops sit on streams (a rank's compute stream, its parameter all-gather stream, its gradient
 * reduce stream, copy and NVMe streams, the host's optimizer stream), run in stream order, and
 * may also wait for ops on other streams or ranks (like CUDA events). Ops: COMPUTE (FLOPs on
 * the rank's GPU or its node's CPU), COLLECTIVE (one member's part in an all-reduce,
 * all-gather, reduce-scatter, broadcast or all-to-all over a group), COPY (H2D, D2H, D2D), DISK (NVMe read
 * or write), ALLOC/FREE (bytes of a category on a memory space). The graph is built once, then
 * finalised into flat arrays (successors in CSR form), validated (no cycle, every buffer freed
 * once, every collective joined by its whole group), and executed by engine/ or printed.
 * Nothing here knows SimGrid; tests build and check graphs directly.
 */
#ifndef ZEROSIM_SCHEDULE_GRAPH_H
#define ZEROSIM_SCHEDULE_GRAPH_H

#include "../common/err.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum OpKind {
    OP_COMPUTE,
    OP_COLLECTIVE,
    OP_COPY,
    OP_DISK,
    OP_ALLOC,
    OP_FREE,
} OpKind;

/* What a COMPUTE op is for; the breakdown and the trace decide on this, never on a label. */
typedef enum OpPurpose {
    PURPOSE_NONE,      /* transfers, allocations */
    PURPOSE_FORWARD,   /* a layer's (or the head's) forward kernels */
    PURPOSE_BACKWARD,  /* backward kernels (the recomputation before them is its own op) */
    PURPOSE_RECOMPUTE, /* activation recomputation on its own */
    PURPOSE_OPTIMIZER, /* the optimizer step, on the GPU or the host */
    PURPOSE_SYNC,      /* a zero-work op that joins streams ("parameters updated") */
    PURPOSE_N
} OpPurpose;

typedef enum CollectiveKind {
    COLL_ALL_REDUCE,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_BROADCAST,
    COLL_ALL_TO_ALL, /* every member sends 1/n of its buffer to each other member */
    COLL_N_KINDS
} CollectiveKind;

typedef enum CopyKind { COPY_H2D, COPY_D2H, COPY_D2D } CopyKind;

typedef enum DiskKind { DISK_READ, DISK_WRITE } DiskKind;

typedef enum Device { DEVICE_GPU, DEVICE_CPU } Device;

typedef enum MemSpace { MEM_GPU, MEM_CPU, MEM_NVME, MEM_N_SPACES } MemSpace;

typedef enum MemCategory {
    MEM_PARAMS,
    MEM_GRADS,
    MEM_OPTIMIZER,
    MEM_ACTIVATIONS,
    MEM_BUFFERS,
    MEM_STEP_COPIES, /* the optimizer wrappers' working copies during the step */
    MEM_WORKSPACE,   /* cuBLAS workspaces (through the caching allocator) */
    MEM_N_CATEGORIES
} MemCategory;

/* Where a stream runs; the engine places one actor per stream on the matching host. */
typedef enum StreamKind {
    STREAM_COMPUTE, /* GPU kernels */
    STREAM_GATHER,  /* parameter all-gathers (ZeRO-3), broadcasts */
    STREAM_REDUCE,  /* gradient reductions */
    STREAM_H2D,
    STREAM_D2H,
    STREAM_NVME, /* on the node's CPU host */
    STREAM_CPU,  /* CPU optimizer, on the node's CPU host */
    STREAM_N_KINDS
} StreamKind;

typedef uint32_t OpId;
#define GRAPH_NO_OP UINT32_MAX

typedef struct Op {
    uint8_t kind;     /* OpKind */
    uint8_t sub;      /* CollectiveKind, CopyKind, DiskKind, Device or MemSpace */
    uint8_t category; /* MemCategory of ALLOC/FREE */
    uint8_t stream_kind;
    uint8_t purpose; /* OpPurpose */
    uint32_t rank;
    uint32_t stream;     /* index into the graph's streams */
    uint32_t ref;        /* COLLECTIVE: instance; ALLOC/FREE: buffer; else 0 */
    uint32_t label;      /* index into the label table, for traces */
    uint32_t n_deps;     /* cross-stream predecessors */
    uint32_t succ_begin; /* successors: succ[succ_begin .. succ_end) after finalise */
    uint32_t succ_end;
    double amount; /* FLOPs (GPU), parameters (CPU optimizer), or bytes */
} Op;

typedef struct Stream {
    uint32_t rank;
    uint8_t kind;      /* StreamKind */
    uint32_t op_begin; /* ops in order: stream_ops[op_begin .. op_end) after finalise */
    uint32_t op_end;
} Stream;

typedef struct Collective {
    uint8_t kind;       /* CollectiveKind */
    uint32_t group;     /* index into groups */
    double bytes;       /* the logical size: the full buffer (all-reduce, all-gather output,
                           reduce-scatter input, broadcast payload) */
    uint32_t root;      /* broadcast root, as a rank */
    OpId first_op;      /* member i's op is first_op + i */
    uint32_t n_logical; /* members it stands for (symmetric mode); 0: its group's size */
    uint32_t n_calls;   /* NCCL calls it stands for, back to back on its stream, each of
                           bytes / n_calls (ZeRO-3's per-submodule fetches); 0 or 1: one */
    double overhead_s;  /* time each member spends on the calls beyond NCCL's: the framework's
                           work around them (DeepSpeed < 0.6's c10d list copies); 0: none */
} Collective;

typedef struct Graph Graph;

/* An empty graph for n_ranks ranks. Never fails (aborts on out-of-memory). */
Graph *graph_create(uint32_t n_ranks);
void graph_destroy(Graph *g);

/* A group of ranks for collectives (ring order as given). Returns its index. */
uint32_t graph_add_group(Graph *g, const uint32_t *ranks, uint32_t n_ranks);

/* Interns a label ("fwd L3", "ag L3") for traces; returns its index. */
uint32_t graph_label(Graph *g, const char *label);

/* The index of an interned label, or UINT32_MAX when the graph has none such. */
uint32_t graph_find_label(const Graph *g, const char *label);

/* Appends an op at the end of (rank, stream_kind). */
OpId graph_compute(Graph *g, uint32_t rank, StreamKind stream, Device device, OpPurpose purpose,
                   double amount, uint32_t label);
OpId graph_copy(Graph *g, uint32_t rank, StreamKind stream, CopyKind kind, double bytes,
                uint32_t label);
OpId graph_disk(Graph *g, uint32_t rank, DiskKind kind, double bytes, uint32_t label);
/* A collective instance over `group`: one op per member, each on (member, stream). out_ops
 * (may be NULL) receives them in group order. Returns the instance index. */
uint32_t graph_collective(Graph *g, CollectiveKind kind, uint32_t group, StreamKind stream,
                          double bytes, uint32_t root, uint32_t label, OpId *out_ops);
/* Makes collective `instance` stand for `n_logical` members while its group holds fewer: in
 * symmetric mode a few representative nodes carry the volume and steps of the whole ring. */
void graph_collective_set_logical(Graph *g, uint32_t instance, uint32_t n_logical);

/* Makes collective `instance` stand for `n_calls` back-to-back calls of bytes / n_calls each
 * (the engine charges each call's latency): a framework that launches one NCCL call per
 * submodule or parameter, kept as one op so the event count does not grow with them. */
void graph_collective_set_calls(Graph *g, uint32_t instance, uint32_t n_calls);

/* Adds `seconds` of work each member of collective `instance` does beyond the NCCL calls
 * (copies the framework makes around them), after its flows. */
void graph_collective_set_overhead(Graph *g, uint32_t instance, double seconds);

/* A buffer: ALLOC now on (rank, stream); graph_free() later releases it. Returns the ALLOC op;
 * *out_buffer identifies the buffer. */
OpId graph_alloc(Graph *g, uint32_t rank, StreamKind stream, MemSpace space, MemCategory category,
                 double bytes, uint32_t *out_buffer);
OpId graph_free(Graph *g, uint32_t rank, StreamKind stream, uint32_t buffer);

/* `after` waits for `before` (on any stream or rank). */
void graph_depend(Graph *g, OpId before, OpId after);

/* Builds the flat arrays and checks the graph: no cycle (stream order included), every buffer
 * freed exactly once on its own rank and space, every collective joined by its whole group.
 * The graph cannot be changed afterwards. */
int graph_finalize(Graph *g, Err *err);

/* Read access after finalise. Pointers are borrowed and stay valid until destroy. */
uint32_t graph_n_ranks(const Graph *g);
uint32_t graph_n_ops(const Graph *g);
uint32_t graph_n_streams(const Graph *g);
const Op *graph_ops(const Graph *g);
const Stream *graph_streams(const Graph *g);
const OpId *graph_stream_ops(const Graph *g);
const OpId *graph_successors(const Graph *g);
const Collective *graph_collectives(const Graph *g);
uint32_t graph_n_collectives(const Graph *g);
/* Members of a group, and its size. */
const uint32_t *graph_group(const Graph *g, uint32_t group, uint32_t *out_n_ranks);
const char *graph_label_text(const Graph *g, uint32_t label);
/* Buffers the graph allocates (ids 0 .. n-1). */
uint32_t graph_n_buffers(const Graph *g);
/* Bytes and space of a buffer. */
double graph_buffer_bytes(const Graph *g, uint32_t buffer, MemSpace *out_space,
                          MemCategory *out_category);

/* One line per op, stream by stream, for reading and diffing. */
void graph_dump(const Graph *g, FILE *out);

const char *graph_collective_name(CollectiveKind kind);
const char *graph_purpose_name(OpPurpose purpose);
const char *graph_stream_name(StreamKind kind);
const char *graph_category_name(MemCategory category);
const char *graph_space_name(MemSpace space);

#endif
