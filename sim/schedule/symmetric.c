/*
 * symmetric.c - the choice of symmetric mode (see symmetric.h).
 */
#include "symmetric.h"

#include <stdio.h>

bool symmetric_broken_reason(const Platform *p, char *out, size_t out_size)
{
    out[0] = '\0';
    if (p->job.has_straggler) {
        snprintf(out, out_size,
                 "%s %llu computes %gx slower (--straggler): its collectives wait for it, "
                 "the ranks are not symmetric",
                 p->job.is_straggler_node ? "node" : "GPU",
                 (unsigned long long)p->job.straggler_index, p->job.straggler_slowdown);
        return true;
    }
    if (platform_fabric_is_shared(p)) {
        snprintf(out, out_size,
                 "the fabric is oversubscribed (leaf %g:1, spine %g:1, core %g:1) and only some "
                 "ring hops leave their leaf (%llu leaf groups of %llu nodes, ring order %s): "
                 "nodes do not see it alike",
                 p->fabric.oversubscription, p->fabric.spine_oversubscription,
                 p->fabric.core_oversubscription, (unsigned long long)platform_n_leaf_groups(p),
                 (unsigned long long)p->fabric.nodes_per_leaf,
                 choices_name(&choices_ring_order, (int)p->job.ring_order));
        return true;
    }
    return false;
}

bool symmetric_choose(const Platform *p, SimMode mode, Platform *out_simulated,
                      ScheduleOptions *sched)
{
    *out_simulated = *p;
    char reason[2];
    bool is_symmetric =
        p->n_nodes > 2 && (mode == SIM_MODE_SYMMETRIC ||
                           (mode == SIM_MODE_AUTO && p->n_nodes > 4 &&
                            !symmetric_broken_reason(p, reason, sizeof reason)));
    if (is_symmetric) {
        out_simulated->n_nodes = 2;
        /* the per-node model: what every node would see if all were alike */
        out_simulated->fabric.nodes_per_leaf = 0;
        out_simulated->fabric.nodes_per_pod = 0;
        out_simulated->fabric.spine_oversubscription = 1.0;
        out_simulated->fabric.core_oversubscription = 1.0;
        out_simulated->job.ring_order = PLATFORM_RING_PACKED;
        sched->n_simulated_ranks = (uint32_t)platform_n_gpus(out_simulated);
    }
    return is_symmetric;
}
