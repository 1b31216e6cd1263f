/*
 * capacity.h - whether this process can hold a simulation's actors before it starts them.
 *
 * Each stream of the graph is a SimGrid actor, and each actor's stack is its own memory
 * mapping with a guard page below it (SimGrid's raw contexts, src/kernel/context/ContextSwapped:
 * mmap of the stack, then mprotect of one page), so an actor costs two entries of the
 * process's memory map (measured here: 768 actors added 1,560 entries). Linux caps the entries
 * at vm.max_map_count (65,530 by default); past it mmap fails deep inside SimGrid after
 * minutes of work (a full simulation of 16,384 GPUs aborted after 8 minutes). Checking first
 * turns that into an immediate error that says what to do.
 */
#ifndef ZEROSIM_ENGINE_CAPACITY_H
#define ZEROSIM_ENGINE_CAPACITY_H

#include "../common/err.h"

#include <stdint.h>

/* Memory-map entries an actor takes: its stack and the guard page's split of the mapping. */
#define CAPACITY_MAPS_PER_ACTOR 2u

/* Fails (err set, -1) when n_actors more actors would not fit under vm.max_map_count, given
 * the entries the process holds now plus a tenth for what SimGrid maps besides (large
 * allocations). Returns 0 when they fit or when the limit cannot be read (not Linux). */
int capacity_check_actors(uint32_t n_actors, Err *err);

#endif
