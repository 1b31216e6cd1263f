/*
 * collective.h - what one member does in a collective: its flows, phase by phase.
 *
 * Algorithms, as NCCL's bandwidth-optimal ones move data:
 *  - ring: the group in the order given; all-reduce sends 2(n-1)/n of the buffer to the next
 *    member in 2(n-1) steps, all-gather and reduce-scatter (n-1)/n in n-1 steps, broadcast
 *    pipelines the whole buffer from the root around the ring.
 *  - hier: for groups made of whole nodes, an inter-node ring per rail (the members with the
 *    same local index, each through its own NIC: every NIC of a node carries traffic, as
 *    NCCL's rail-aligned channels do) and an intra-node ring over NVLink: reduce-scatter is
 *    intra then inter, all-gather inter then intra, all-reduce intra reduce-scatter, inter
 *    all-reduce, intra all-gather; broadcast rings the buffer through the root's node, sends
 *    1/g of it along every rail, and all-gathers the pieces in the other nodes.
 * Each phase is a ring: a member sends to the next and receives from the previous. In fluid
 * mode a phase is one flow of the phase's whole volume plus steps x the hop latency, and the
 * phases of a hierarchical collective run concurrently, as NCCL pipelines chunks through
 * them; in stepwise mode every step is its own flow (step s of every phase at once, for the
 * same pipelining) and a member moves to the next step only when it has sent and received the
 * current one, as a real ring does. Pure arithmetic; the engine executes it.
 */
#ifndef ZEROSIM_ENGINE_COLLECTIVE_H
#define ZEROSIM_ENGINE_COLLECTIVE_H

#include "../inputs/platform.h"
#include "../schedule/graph.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum CollAlgo { COLL_ALGO_AUTO, COLL_ALGO_RING, COLL_ALGO_HIER } CollAlgo;

#define COLLECTIVE_MAX_PHASES 3
#define COLLECTIVE_NO_PEER UINT32_MAX

typedef struct CollPhase {
    uint32_t send_to;   /* rank this member sends to, or COLLECTIVE_NO_PEER */
    uint32_t recv_from; /* rank this member receives from, or COLLECTIVE_NO_PEER */
    double bytes;       /* volume this member sends in the phase (its predecessor sends it
                           the same, except around a broadcast root) */
    uint32_t steps;     /* algorithm steps, each paying the hop latency */
} CollPhase;

typedef struct CollPlan {
    uint32_t n_phases;
    CollPhase phase[COLLECTIVE_MAX_PHASES];
} CollPlan;

/* True when the group is whole nodes in rank order (members[i] = members[0] + i, starting on
 * a node boundary, more than one node): the groups hier can serve. */
bool collective_is_node_aligned(const Platform *p, const uint32_t *members, uint32_t n);

/* The algorithm `algo` resolves to for this group: auto picks hier for node-aligned groups
 * spanning several nodes, ring otherwise; hier on a group it cannot serve falls back to
 * ring. */
CollAlgo collective_resolve(CollAlgo algo, bool is_node_aligned);

/* Member `index`'s plan in a collective of `bytes` over `members` (n of them), with the
 * broadcast root given as an index into members. */
void collective_plan(const Platform *p, CollectiveKind kind, CollAlgo algo,
                     const uint32_t *members, uint32_t n, uint32_t index, double bytes,
                     uint32_t root_index, CollPlan *out);

const char *collective_algo_name(CollAlgo algo);

/* nccl-tests' bus-bandwidth factor: all-reduce 2(n-1)/n, all-gather and reduce-scatter
 * (n-1)/n, broadcast 1. */
double collective_busbw_factor(CollectiveKind kind, uint32_t n);

#endif
