/*
 * collective.c - per-member flow plans for ring and hierarchical collectives (see
 * collective.h).
 */
#include "collective.h"

#include "topology.h"

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

CollAlgo collective_resolve(CollAlgo algo, bool is_node_aligned)
{
    if (algo == COLL_ALGO_RING)
        return COLL_ALGO_RING;
    return is_node_aligned ? COLL_ALGO_HIER : COLL_ALGO_RING;
}

/* Appends one ring phase over n members: this member sends to `next`, receives from `prev`.
 * A broadcast ring starts at the root: the root receives nothing and the member before it
 * forwards nothing. Members outside the ring (`is_idle`) only keep step. */
static void ring_phase(CollPlan *plan, CollectiveKind kind, uint32_t n, uint32_t next,
                       uint32_t prev, double bytes, bool is_root, bool is_root_pred,
                       bool is_idle)
{
    if (n < 2)
        return;
    CollPhase *ph = &plan->phase[plan->n_phases++];
    double share = (double)(n - 1) / (double)n;
    ph->send_to = next;
    ph->recv_from = prev;
    switch (kind) {
    case COLL_ALL_REDUCE:
        ph->bytes = 2.0 * share * bytes;
        ph->steps = 2 * (n - 1);
        break;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
        ph->bytes = share * bytes;
        ph->steps = n - 1;
        break;
    default:
        ph->bytes = bytes;
        ph->steps = n - 1;
        if (is_root_pred)
            ph->send_to = COLLECTIVE_NO_PEER;
        if (is_root)
            ph->recv_from = COLLECTIVE_NO_PEER;
        break;
    }
    if (is_idle)
        ph->send_to = ph->recv_from = COLLECTIVE_NO_PEER;
}

void collective_plan(const Platform *p, CollectiveKind kind, CollAlgo algo,
                     const uint32_t *members, uint32_t n, uint32_t index, double bytes,
                     uint32_t root_index, CollPlan *out)
{
    out->n_phases = 0;
    if (algo != COLL_ALGO_HIER) {
        ring_phase(out, kind, n, members[(index + 1) % n], members[(index + n - 1) % n], bytes,
                   index == root_index, (index + 1) % n == root_index, false);
        return;
    }
    const uint32_t g = (uint32_t)p->gpus_per_node;
    const uint32_t n_nodes = n / g;
    const uint32_t node = index / g, local = index % g;
    const uint32_t next_intra = members[node * g + (local + 1) % g];
    const uint32_t prev_intra = members[node * g + (local + g - 1) % g];
    const uint32_t next_inter = members[((node + 1) % n_nodes) * g + local];
    const uint32_t prev_inter = members[((node + n_nodes - 1) % n_nodes) * g + local];
    const double rail_bytes = bytes / (double)g; /* each rail carries 1/g of the buffer */
    switch (kind) {
    case COLL_REDUCE_SCATTER:
        ring_phase(out, kind, g, next_intra, prev_intra, bytes, false, false, false);
        ring_phase(out, kind, n_nodes, next_inter, prev_inter, rail_bytes, false, false, false);
        break;
    case COLL_ALL_GATHER:
        ring_phase(out, kind, n_nodes, next_inter, prev_inter, rail_bytes, false, false, false);
        ring_phase(out, kind, g, next_intra, prev_intra, bytes, false, false, false);
        break;
    case COLL_ALL_REDUCE:
        ring_phase(out, COLL_REDUCE_SCATTER, g, next_intra, prev_intra, bytes, false, false,
                   false);
        ring_phase(out, COLL_ALL_REDUCE, n_nodes, next_inter, prev_inter, rail_bytes, false,
                   false, false);
        ring_phase(out, COLL_ALL_GATHER, g, next_intra, prev_intra, bytes, false, false, false);
        break;
    default: {
        /* Scatter-all-gather broadcast: the root's node rings the buffer to all its members,
         * every rail then carries 1/g of it to the other nodes, and each of those nodes
         * all-gathers the pieces over NVLink. */
        const uint32_t root_node = root_index / g, root_local = root_index % g;
        const bool in_root_node = node == root_node;
        ring_phase(out, kind, g, next_intra, prev_intra, bytes, local == root_local,
                   (local + 1) % g == root_local, !in_root_node);
        ring_phase(out, kind, n_nodes, next_inter, prev_inter, rail_bytes, in_root_node,
                   (node + 1) % n_nodes == root_node, false);
        ring_phase(out, COLL_ALL_GATHER, g, next_intra, prev_intra, bytes, false, false,
                   in_root_node);
        break;
    }
    }
}

const char *collective_algo_name(CollAlgo algo)
{
    static const char *const names[] = {"auto", "ring", "hier"};
    return names[algo];
}

double collective_busbw_factor(CollectiveKind kind, uint32_t n)
{
    double share = n > 0 ? (double)(n - 1) / (double)n : 0.0;
    switch (kind) {
    case COLL_ALL_REDUCE: return 2.0 * share;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER: return share;
    default: return 1.0;
    }
}
