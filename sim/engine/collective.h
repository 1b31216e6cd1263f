/*
 * collective.h - what one member does in a collective: its flows, phase by phase.
 *
 * Algorithms, as NCCL's bandwidth-optimal ones move data:
 *  - ring: the group in the order given. All-reduce sends 2(n-1)/n of the buffer to the next
 *    member in 2(n-1) steps, all-gather and reduce-scatter (n-1)/n in n-1 steps, broadcast
 *    pipelines the whole buffer from the root. When the group is whole nodes, the ring runs
 *    as NCCL's rail-aligned channels do: g channels (g GPUs per node), each leaving a node
 *    through a different GPU's NIC, so every member sends 1/g of the ring volume to the same
 *    GPU of the next node (over its NIC) and the rest to the next GPU of its node (over
 *    NVLink). Every NIC of a node carries traffic; one ring through one NIC would be g times
 *    too slow.
 *  - hier: for whole-node groups, a two-level algorithm: reduce-scatter intra then inter,
 *    all-gather inter then intra, all-reduce intra reduce-scatter, inter all-reduce, intra
 *    all-gather, broadcast through the root's node then along every rail. Each inter-node
 *    ring runs per rail on 1/g of the buffer: less network traffic than NCCL's ring.
 *  - tree (all-reduce over whole nodes): NCCL's double binary tree across nodes, one per
 *    rail, between an intra-node reduce-scatter and all-gather. In a double binary tree every
 *    rank sends, on average, what a ring member sends (2(n-1)/n of its data: half up and half
 *    down each tree), so the fluid form keeps the ring's volume; what changes is the latency,
 *    2 ceil(log2(n + 1)) hops across nodes instead of 2(n-1). Other collectives use the ring,
 *    as NCCL does.
 *  - nvls and nvls_tree (NCCL's NVLink SHARP algorithms, where NCCL's tuner picks them): the
 *    NVSwitch reduces and multicasts, so inside a node every member sends and receives one
 *    flow through the switch instead of a ring's 2(n-1)/n of the buffer: for an all-reduce
 *    (g+1)/g of it (its own data up for the reduction, plus 1/g multicast back down: what
 *    NCCL's search charges each GPU, src/graph/search.cc ncclTopoSearchTryNvls), for an
 *    all-gather or reduce-scatter (g-1)/g; across whole nodes (NVLSTree) the tree's per-rail
 *    inter-node phase follows. The rate NCCL's tuner gives them bounds the time (engine.c).
 * In fluid mode every flow of every phase starts at once (phases are pipelined, as NCCL
 * pipelines chunks) and the member then waits steps x hop latency; in stepwise mode every step
 * is its own message and a member moves on only when it has sent and received the current
 * step, as a real ring does. Pure arithmetic; the engine executes it.
 */
#ifndef ZEROSIM_ENGINE_COLLECTIVE_H
#define ZEROSIM_ENGINE_COLLECTIVE_H

#include "../inputs/platform.h"
#include "../schedule/graph.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum CollAlgo {
    COLL_ALGO_AUTO,
    COLL_ALGO_RING,
    COLL_ALGO_HIER,
    COLL_ALGO_TREE,
    COLL_ALGO_NVLS,      /* NCCL's NVLS (one node) */
    COLL_ALGO_NVLS_TREE, /* NCCL's NVLSTree (whole nodes, all-reduce) */
} CollAlgo;

/* How a collective's time is made: NCCL's tuner (model/nccl_model.h) picks the algorithm and
 * protocol and gives the latency and the protocol's bandwidth limit, SimGrid the flows'
 * bandwidth under contention (the default); or the ideal fluid ring of the seed chapter, steps
 * x route latency + volume / link rate, kept for teaching and for the alpha-beta tests. */
typedef enum CommModel { COMM_MODEL_NCCL, COMM_MODEL_IDEAL } CommModel;

/* Below this size an all-reduce across nodes uses the tree under COLL_ALGO_AUTO: NCCL's tuner
 * prefers its trees where latency dominates and its rings for large messages. */
#define COLLECTIVE_TREE_MAX_BYTES (256.0 * 1024 * 1024)

#define COLLECTIVE_MAX_PHASES 3
#define COLLECTIVE_MAX_FLOWS 2 /* per phase: NVLink and NIC parts of a channelised ring */
#define COLLECTIVE_NO_PEER UINT32_MAX

typedef struct CollFlow {
    uint32_t send_to;   /* rank this member sends to, or COLLECTIVE_NO_PEER */
    uint32_t recv_from; /* rank this member receives from, or COLLECTIVE_NO_PEER */
    double bytes;       /* volume sent (the predecessor sends the same) */
} CollFlow;

typedef struct CollPhase {
    uint32_t n_flows;
    CollFlow flow[COLLECTIVE_MAX_FLOWS];
    uint32_t steps; /* algorithm steps, each paying the phase's slowest hop latency */
} CollPhase;

typedef struct CollPlan {
    uint32_t n_phases;
    CollPhase phase[COLLECTIVE_MAX_PHASES];
} CollPlan;

/* True when the group is whole nodes in rank order (members[i] = members[0] + i, starting on
 * a node boundary, more than one node). */
bool collective_is_node_aligned(const Platform *p, const uint32_t *members, uint32_t n);

/* The algorithm `algo` resolves to for a collective of `kind` and `bytes` under the ideal model
 * (and the shape of NCCL's tree): auto is the tree for all-reduces over whole nodes below
 * COLLECTIVE_TREE_MAX_BYTES and the ring otherwise; hier and tree need whole nodes (else
 * ring), and tree an all-reduce. The ideal model has no NVLS: nvls and nvls_tree resolve as
 * auto. */
CollAlgo collective_resolve(CollAlgo algo, bool is_node_aligned, CollectiveKind kind, double bytes);

/* Whether the NVLS shape can carry a group: all members on one node, or whole nodes. */
bool collective_has_nvls_shape(const Platform *p, const uint32_t *members, uint32_t n,
                               bool is_node_aligned);

/* Member `index`'s plan in a collective of `bytes` over `members` (n of them), with the
 * broadcast root given as an index into members; `is_node_aligned` as computed above. The
 * volumes and steps are those of a ring of n_logical members (>= n): in symmetric mode the
 * simulated members stand for a larger group whose other nodes behave the same. */
void collective_plan(const Platform *p, CollectiveKind kind, CollAlgo algo, bool is_node_aligned,
                     const uint32_t *members, uint32_t n, uint32_t n_logical, uint32_t index,
                     double bytes, uint32_t root_index, CollPlan *out);

const char *collective_algo_name(CollAlgo algo);
const char *collective_comm_model_name(CommModel model);

/* nccl-tests' bus-bandwidth factor: all-reduce 2(n-1)/n, all-gather and reduce-scatter
 * (n-1)/n, broadcast 1. */
double collective_busbw_factor(CollectiveKind kind, uint32_t n);

#endif
