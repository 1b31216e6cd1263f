/*
 * symmetric.c - the choice of symmetric mode (see symmetric.h).
 */
#include "symmetric.h"

bool symmetric_choose(const Platform *p, SimMode mode, Platform *out_simulated,
                      ScheduleOptions *sched)
{
    *out_simulated = *p;
    bool is_symmetric =
        p->n_nodes > 2 && (mode == SIM_MODE_SYMMETRIC || (mode == SIM_MODE_AUTO && p->n_nodes > 4));
    if (is_symmetric) {
        out_simulated->n_nodes = 2;
        sched->n_simulated_ranks = (uint32_t)platform_n_gpus(out_simulated);
    }
    return is_symmetric;
}
