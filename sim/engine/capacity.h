/*
 * capacity.h - whether this process can hold a simulation's actors before it starts them.
 *
 * Each stream of the graph is a SimGrid actor with its own stack. With SimGrid's default
 * contexts/guard-size (one page), each stack is its own memory mapping with a guard page
 * below it (raw contexts, src/kernel/context/ContextSwapped: mmap of the stack, then mprotect
 * of the guard), two entries of the process's memory map per actor (measured here: 768
 * actors added 1,560 entries). Linux caps the entries at vm.max_map_count (65,530 by
 * default), so 16,384 GPUs' 49,152 actors could not start (a full simulation aborted inside
 * SimGrid after 8 minutes). The engine therefore runs SimGrid with contexts/guard-size:0:
 * a stack then comes from malloc (xbt_malloc0) and takes no mapping of its own (measured: 176
 * entries in all with 768 actors, 179 with 3,072). What is left to check is the process's
 * own entries; the check keeps the per-actor term for a configuration with guard pages.
 */
#ifndef ZEROSIM_ENGINE_CAPACITY_H
#define ZEROSIM_ENGINE_CAPACITY_H

#include "../common/err.h"

#include <stdint.h>

/* Memory-map entries an actor takes under the engine's SimGrid configuration (no guard page:
 * none), and with SimGrid's default guard page (its stack and the guard's split). */
#define CAPACITY_MAPS_PER_ACTOR 0u
#define CAPACITY_MAPS_PER_GUARDED_ACTOR 2u

/* Fails (err set, -1) when n_actors more actors taking maps_per_actor entries each would not
 * fit under vm.max_map_count, given the entries the process holds now plus a tenth of the
 * actors' for what SimGrid maps besides. Returns 0 when they fit or when the limit cannot be
 * read (not Linux). */
int capacity_check_maps(uint32_t n_actors, unsigned maps_per_actor, Err *err);

/* capacity_check_maps for the engine's actors (CAPACITY_MAPS_PER_ACTOR each). */
int capacity_check_actors(uint32_t n_actors, Err *err);

/* Entries of this process's memory map now (lines of /proc/self/maps), or -1 where it cannot
 * be read. */
long capacity_count_maps(void);

#endif
