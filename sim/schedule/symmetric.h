/*
 * symmetric.h - whether a run simulates every rank or two representative nodes.
 *
 * Data-parallel ranks are symmetric: in symmetric mode the graph holds the ranks of two nodes
 * and its collectives stand for the whole ring (graph_collective_set_logical), so a cluster
 * of thousands of GPUs costs what two nodes cost. `--mode auto` chooses it above four nodes;
 * with two nodes or fewer there is nothing to save. Used by `zerosim run` and bench/.
 */
#ifndef ZEROSIM_SCHEDULE_SYMMETRIC_H
#define ZEROSIM_SCHEDULE_SYMMETRIC_H

#include "../common/choices.h"
#include "../inputs/platform.h"
#include "zero_schedule.h"

#include <stdbool.h>

/* Decides for `mode` on platform p. When symmetric, *out_simulated is p cut to two nodes (the
 * platform the engine builds) and sched->n_simulated_ranks is set; else *out_simulated is p.
 * Returns whether the run is symmetric. */
bool symmetric_choose(const Platform *p, SimMode mode, Platform *out_simulated,
                      ScheduleOptions *sched);

#endif
