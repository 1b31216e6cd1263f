/*
 * all_to_all.c - pairwise all-to-all flows, summed per route (see all_to_all.h).
 */
#include "all_to_all.h"

#include "topology.h"

#define MAX_NODE_OFFSETS (COLLECTIVE_MAX_PHASES * COLLECTIVE_MAX_FLOWS - 1)

double all_to_all_send_bytes(double bytes, uint32_t n)
{
    return n > 0 ? bytes * (double)(n - 1) / (double)n : 0.0;
}

void all_to_all_plan(const Platform *p, const uint32_t *members, uint32_t n, uint32_t n_logical,
                     uint32_t index, double bytes, CollPlan *out)
{
    out->n_phases = 0;
    if (n < 2)
        return;
    if (n_logical < n)
        n_logical = n;
    const uint32_t me = members[index], my_node = topology_node(p, me);
    /* the group's members on this node, in group order, and where this member sits */
    uint32_t n_local = 0, my_local = 0, first_local = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (topology_node(p, members[i]) != my_node)
            continue;
        if (n_local == 0)
            first_local = i;
        if (i == index)
            my_local = n_local;
        n_local++;
    }
    const uint32_t n_nodes = n / n_local; /* groups are whole blocks of equal size per node */
    const uint32_t logical_nodes = n_logical / n_local;
    const double per_peer = bytes / (double)n_logical;
    for (uint32_t k = 0; k < COLLECTIVE_MAX_PHASES; k++) {
        out->phase[k].n_flows = 0;
        out->phase[k].steps = 0;
    }
    /* slot 0: the peers in this node, summed, to the next member of the node (and from the
     * one before) */
    CollPhase *ph = &out->phase[0];
    out->n_phases = 1;
    ph->steps = 1;
    if (n_local > 1) {
        ph->flow[ph->n_flows++] =
            (CollFlow){members[first_local + (my_local + 1) % n_local],
                       members[first_local + (my_local + n_local - 1) % n_local],
                       per_peer * (double)(n_local - 1)};
    }
    /* slots 1..: the peers on other nodes, summed, over destination nodes at offsets 1.. */
    if (logical_nodes < 2 || n_nodes < 2)
        return;
    const double remote = per_peer * (double)(n_logical - n_local);
    uint32_t n_offsets = logical_nodes - 1 < MAX_NODE_OFFSETS ? logical_nodes - 1 : MAX_NODE_OFFSETS;
    const uint32_t my_block = index / n_local; /* members are node blocks in group order */
    for (uint32_t d = 1; d <= n_offsets; d++) {
        const uint32_t slot = d; /* slot 0 is the node's own */
        const uint32_t phase = slot / COLLECTIVE_MAX_FLOWS;
        CollPhase *q = &out->phase[phase];
        if (phase + 1 > out->n_phases) {
            out->n_phases = phase + 1;
            q->steps = 1;
        }
        while (q->n_flows < slot % COLLECTIVE_MAX_FLOWS) /* keep slots aligned across members */
            q->flow[q->n_flows++] = (CollFlow){COLLECTIVE_NO_PEER, COLLECTIVE_NO_PEER, 0.0};
        /* fewer simulated nodes than offsets (symmetric mode): every offset lands on another
         * simulated node, never on this one */
        const uint32_t off = 1 + (d - 1) % (n_nodes - 1);
        const uint32_t to = ((my_block + off) % n_nodes) * n_local + my_local;
        const uint32_t from = ((my_block + n_nodes - off) % n_nodes) * n_local + my_local;
        q->flow[q->n_flows++] = (CollFlow){members[to], members[from], remote / n_offsets};
    }
}
