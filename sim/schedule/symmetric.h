/*
 * symmetric.h - whether a run simulates every rank or two representative nodes, and why.
 *
 * Data-parallel ranks are symmetric: in symmetric mode the graph holds the ranks of two nodes
 * and its collectives stand for the whole ring (graph_collective_set_logical), so a cluster
 * of thousands of GPUs costs what two nodes cost. The two nodes run on the per-node model of
 * the fabric (docs/PLATFORM-FORMAT.md): each node's own uplink, divided by the leaf's
 * oversubscription, into an unlimited spine. That is exact when every node sees the fabric
 * alike; it is not when the job breaks the symmetry: a straggler, or an oversubscribed leaf
 * uplink, spine or core that only some ring hops cross (leaf groups of several nodes, cross-
 * NIC rings on rails). `--mode auto` then simulates every rank, and says why; otherwise it
 * chooses symmetric mode above four nodes (with fewer there is nothing to save). Used by
 * `zerosim run` and bench/.
 */
#ifndef ZEROSIM_SCHEDULE_SYMMETRIC_H
#define ZEROSIM_SCHEDULE_SYMMETRIC_H

#include "../common/choices.h"
#include "../inputs/platform.h"
#include "zero_schedule.h"

#include <stdbool.h>
#include <stddef.h>

/* Decides for `mode` on platform p. When symmetric, *out_simulated is p cut to two nodes on
 * the per-node fabric (the platform the engine builds) and sched->n_simulated_ranks is set;
 * else *out_simulated is p. Returns whether the run is symmetric. */
bool symmetric_choose(const Platform *p, SimMode mode, Platform *out_simulated,
                      ScheduleOptions *sched);

/* Why `--mode auto` simulates every rank of p although it has more than four nodes: one line
 * into out (NUL-terminated, cut to out_size), true; false (out empty) when nothing breaks the
 * symmetry. */
bool symmetric_broken_reason(const Platform *p, char *out, size_t out_size);

#endif
