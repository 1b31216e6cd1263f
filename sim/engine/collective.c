/*
 * collective.c - per-member flow plans for ring and hierarchical collectives (see
 * collective.h).
 */
#include "collective.h"

#include "all_to_all.h"

#include "../common/choices.h"

_Static_assert(COMM_MODEL_NCCL == 0 && COMM_MODEL_IDEAL == 1,
               "choices_comm_model lists the models in CommModel order");
_Static_assert(COLL_ALGO_AUTO == 0 && COLL_ALGO_RING == 1 && COLL_ALGO_HIER == 2 &&
                   COLL_ALGO_TREE == 3 && COLL_ALGO_NVLS == 4 && COLL_ALGO_NVLS_TREE == 5,
               "choices_algo lists the algorithms in CollAlgo order");

bool collective_is_node_aligned(const Platform *p, const uint32_t *members, uint32_t n)
{
    const uint32_t g = (uint32_t)p->gpus_per_node;
    if (n <= g || n % g != 0 || members[0] % g != 0)
        return false;
    for (uint32_t i = 1; i < n; i++)
        if (members[i] != members[0] + i)
            return false;
    return true;
}

CollAlgo collective_resolve(CollAlgo algo, bool is_node_aligned, CollectiveKind kind, double bytes)
{
    if (algo == COLL_ALGO_NVLS || algo == COLL_ALGO_NVLS_TREE)
        algo = COLL_ALGO_AUTO;
    if (!is_node_aligned)
        return COLL_ALGO_RING;
    if (algo == COLL_ALGO_AUTO)
        return kind == COLL_ALL_REDUCE && bytes < COLLECTIVE_TREE_MAX_BYTES ? COLL_ALGO_TREE
                                                                            : COLL_ALGO_RING;
    if (algo == COLL_ALGO_TREE && kind != COLL_ALL_REDUCE)
        return COLL_ALGO_RING;
    return algo;
}

/* Depth of a binary tree over n nodes: the hops a message climbs (and descends). */
static uint32_t tree_depth(uint32_t n)
{
    uint32_t depth = 0;
    while ((1u << depth) < n + 1)
        depth++;
    return depth;
}

/* Volume one ring member sends for `kind` over n members, and the ring's step count. */
static double ring_volume(CollectiveKind kind, uint32_t n, double bytes, uint32_t *out_steps)
{
    double share = (double)(n - 1) / (double)n;
    switch (kind) {
    case COLL_ALL_REDUCE: *out_steps = 2 * (n - 1); return 2.0 * share * bytes;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER: *out_steps = n - 1; return share * bytes;
    default: *out_steps = n - 1; return bytes;
    }
}

static CollPhase *new_phase(CollPlan *plan, uint32_t steps)
{
    CollPhase *ph = &plan->phase[plan->n_phases++];
    ph->n_flows = 0;
    ph->steps = steps;
    return ph;
}

static void add_flow(CollPhase *ph, uint32_t next, uint32_t prev, double bytes)
{
    ph->flow[ph->n_flows++] = (CollFlow){next, prev, bytes};
}

/* One ring phase over n simulated members standing for n_logical; a broadcast ring starts at
 * the root (the root receives
 * nothing, its predecessor forwards nothing); an idle member only keeps step. */
static void ring_phase_n(CollPlan *plan, CollectiveKind kind, uint32_t n_logical, uint32_t n,
                         uint32_t next, uint32_t prev, double bytes, bool is_root,
                         bool is_root_pred, bool is_idle)
{
    if (n < 2)
        return;
    uint32_t steps;
    double volume = ring_volume(kind, n_logical, bytes, &steps);
    CollPhase *ph = new_phase(plan, steps);
    if (kind == COLL_BROADCAST) {
        if (is_root_pred)
            next = COLLECTIVE_NO_PEER;
        if (is_root)
            prev = COLLECTIVE_NO_PEER;
    }
    if (is_idle)
        next = prev = COLLECTIVE_NO_PEER;
    add_flow(ph, next, prev, volume);
}

/* A ring phase whose simulated and logical sizes agree. */
static void ring_phase(CollPlan *plan, CollectiveKind kind, uint32_t n, uint32_t next,
                       uint32_t prev, double bytes, bool is_root, bool is_root_pred, bool is_idle)
{
    ring_phase_n(plan, kind, n, n, next, prev, bytes, is_root, is_root_pred, is_idle);
}

/* NCCL's ring over whole nodes with g rail-aligned channels: 1/g of the ring volume crosses to
 * the same GPU of the next node, the rest goes to the next GPU of this node. */
static void channelised_ring(CollPlan *plan, CollectiveKind kind, uint32_t g, uint32_t n,
                             uint32_t n_logical, uint32_t index, const uint32_t *members,
                             double bytes)
{
    const uint32_t n_nodes = n / g, node = index / g, local = index % g;
    uint32_t steps;
    double volume = ring_volume(kind, n_logical, bytes, &steps);
    CollPhase *ph = new_phase(plan, steps);
    add_flow(ph, members[node * g + (local + 1) % g], members[node * g + (local + g - 1) % g],
             volume * (double)(g - 1) / (double)g);
    add_flow(ph, members[((node + 1) % n_nodes) * g + local],
             members[((node + n_nodes - 1) % n_nodes) * g + local], volume / (double)g);
}

static void hierarchical(CollPlan *plan, CollectiveKind kind, uint32_t g, uint32_t n,
                         uint32_t n_logical, uint32_t index, const uint32_t *members, double bytes,
                         uint32_t root_index)
{
    const uint32_t n_nodes = n / g, node = index / g, local = index % g;
    const uint32_t logical_nodes = n_logical / g; /* inter-node rings stand for these */
    const uint32_t next_intra = members[node * g + (local + 1) % g];
    const uint32_t prev_intra = members[node * g + (local + g - 1) % g];
    const uint32_t next_inter = members[((node + 1) % n_nodes) * g + local];
    const uint32_t prev_inter = members[((node + n_nodes - 1) % n_nodes) * g + local];
    const double rail_bytes = bytes / (double)g; /* each rail carries 1/g of the buffer */
    switch (kind) {
    case COLL_REDUCE_SCATTER:
        ring_phase(plan, kind, g, next_intra, prev_intra, bytes, false, false, false);
        ring_phase_n(plan, kind, logical_nodes, n_nodes, next_inter, prev_inter, rail_bytes, false,
                     false, false);
        break;
    case COLL_ALL_GATHER:
        ring_phase_n(plan, kind, logical_nodes, n_nodes, next_inter, prev_inter, rail_bytes, false,
                     false, false);
        ring_phase(plan, kind, g, next_intra, prev_intra, bytes, false, false, false);
        break;
    case COLL_ALL_REDUCE:
        ring_phase(plan, COLL_REDUCE_SCATTER, g, next_intra, prev_intra, bytes, false, false,
                   false);
        ring_phase_n(plan, COLL_ALL_REDUCE, logical_nodes, n_nodes, next_inter, prev_inter,
                     rail_bytes, false, false, false);
        ring_phase(plan, COLL_ALL_GATHER, g, next_intra, prev_intra, bytes, false, false, false);
        break;
    default: {
        /* Through the root's node, along every rail, then all-gathered in the other nodes. */
        const uint32_t root_node = root_index / g, root_local = root_index % g;
        const bool in_root_node = node == root_node;
        ring_phase(plan, kind, g, next_intra, prev_intra, bytes, local == root_local,
                   (local + 1) % g == root_local, !in_root_node);
        ring_phase_n(plan, kind, logical_nodes, n_nodes, next_inter, prev_inter, rail_bytes,
                     in_root_node, (node + 1) % n_nodes == root_node, false);
        ring_phase(plan, COLL_ALL_GATHER, g, next_intra, prev_intra, bytes, false, false,
                   in_root_node);
        break;
    }
    }
}

/* NCCL's all-reduce tree over whole nodes: a reduce-scatter inside the node, a double binary
 * tree per rail across nodes (the ring's volume, the tree's latency), an all-gather inside. */
static void tree(CollPlan *plan, uint32_t g, uint32_t n, uint32_t n_logical, uint32_t index,
                 const uint32_t *members, double bytes)
{
    hierarchical(plan, COLL_ALL_REDUCE, g, n, n_logical, index, members, bytes, 0);
    /* phases: intra reduce-scatter (when g > 1), inter-node all-reduce, intra all-gather */
    uint32_t inter = g > 1 ? 1 : 0;
    if (inter < plan->n_phases)
        plan->phase[inter].steps = 2 * tree_depth(n_logical / g);
}

bool collective_has_nvls_shape(const Platform *p, const uint32_t *members, uint32_t n,
                               bool is_node_aligned)
{
    const uint32_t g = (uint32_t)p->gpus_per_node;
    if (is_node_aligned)
        return true;
    for (uint32_t i = 1; i < n; i++)
        if (members[i] / g != members[0] / g)
            return false;
    return n >= 2;
}

/* NCCL's NVLS: one flow per member through the NVSwitch (to the next member of its node, so
 * that every NVLink port carries it once each way), of (g+1)/g of the buffer for an
 * all-reduce (search.cc's (k+1) x bwIntra per GPU) and (g-1)/g for an all-gather or
 * reduce-scatter; over whole nodes (NVLSTree, all-reduce) the tree's per-rail phase across
 * nodes, pipelined with it. */
static void nvls(CollPlan *plan, CollectiveKind kind, uint32_t g, uint32_t n, uint32_t n_logical,
                 uint32_t index, const uint32_t *members, bool is_node_aligned, double bytes)
{
    const uint32_t local_n = is_node_aligned ? g : n;
    const uint32_t node = is_node_aligned ? index / g : 0, local = index % local_n;
    const uint32_t base = node * local_n;
    const double share =
        kind == COLL_ALL_REDUCE ? (double)(local_n + 1) / local_n : (double)(local_n - 1) / local_n;
    if (local_n > 1) {
        CollPhase *ph = new_phase(plan, 1);
        add_flow(ph, members[base + (local + 1) % local_n],
                 members[base + (local + local_n - 1) % local_n], share * bytes);
    }
    if (is_node_aligned) {
        const uint32_t n_nodes = n / g;
        ring_phase_n(plan, COLL_ALL_REDUCE, n_logical / g, n_nodes,
                     members[((node + 1) % n_nodes) * g + local],
                     members[((node + n_nodes - 1) % n_nodes) * g + local], bytes / (double)g,
                     false, false, false);
        plan->phase[plan->n_phases - 1].steps = 2 * tree_depth(n_logical / g);
    }
}

void collective_plan(const Platform *p, CollectiveKind kind, CollAlgo algo, bool is_node_aligned,
                     const uint32_t *members, uint32_t n, uint32_t n_logical, uint32_t index,
                     double bytes, uint32_t root_index, CollPlan *out)
{
    const uint32_t g = (uint32_t)p->gpus_per_node;
    out->n_phases = 0;
    if (kind == COLL_ALL_TO_ALL) { /* pairwise, whatever the algorithm (all_to_all.h) */
        all_to_all_plan(p, members, n, n_logical, index, bytes, out);
        return;
    }
    if (n_logical < n)
        n_logical = n;
    if ((algo == COLL_ALGO_NVLS || algo == COLL_ALGO_NVLS_TREE) &&
        (kind == COLL_ALL_REDUCE || kind == COLL_ALL_GATHER || kind == COLL_REDUCE_SCATTER) &&
        collective_has_nvls_shape(p, members, n, is_node_aligned) &&
        (!is_node_aligned || kind == COLL_ALL_REDUCE))
        nvls(out, kind, g, n, n_logical, index, members, is_node_aligned, bytes);
    else if (algo == COLL_ALGO_TREE && is_node_aligned && kind == COLL_ALL_REDUCE)
        tree(out, g, n, n_logical, index, members, bytes);
    else if (algo == COLL_ALGO_HIER && is_node_aligned)
        hierarchical(out, kind, g, n, n_logical, index, members, bytes, root_index);
    else if (is_node_aligned) /* a broadcast's root still receives here: one hop, no more */
        channelised_ring(out, kind, g, n, n_logical, index, members, bytes);
    else
        ring_phase_n(out, kind, n_logical, n, members[(index + 1) % n],
                     members[(index + n - 1) % n], bytes, index == root_index,
                     (index + 1) % n == root_index, false);
}

const char *collective_algo_name(CollAlgo algo)
{
    return choices_name(&choices_algo, (int)algo); /* in CollAlgo order */
}

const char *collective_comm_model_name(CommModel model)
{
    return choices_name(&choices_comm_model, (int)model); /* in CommModel order */
}

double collective_busbw_factor(CollectiveKind kind, uint32_t n)
{
    double share = n > 0 ? (double)(n - 1) / (double)n : 0.0;
    switch (kind) {
    case COLL_ALL_REDUCE: return 2.0 * share;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL: return share;
    default: return 1.0;
    }
}
