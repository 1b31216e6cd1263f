/*
 * memory.h - the memory tracker: usage, peak and breakdown per memory space.
 *
 * Every ALLOC and FREE the engine executes lands here: GPU HBM per rank, host DRAM and NVMe
 * per node. Each account keeps its current bytes by category, its peak, when the peak
 * happened and the breakdown at that moment, and the first time it exceeded its capacity
 * (out-of-memory is a result, not a crash). For chosen ranks it also records a timeline for
 * trace counter tracks. No SimGrid here: times are given by the caller.
 */
#ifndef ZEROSIM_ENGINE_MEMORY_H
#define ZEROSIM_ENGINE_MEMORY_H

#include "../schedule/graph.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct MemAccount {
    double current_bytes;
    double by_category[MEM_N_CATEGORIES];
    double peak_bytes;
    double peak_time_s;
    double at_peak[MEM_N_CATEGORIES];
    double capacity_bytes;
    bool is_oom;
    double oom_time_s;
    double oom_bytes; /* usage when capacity was first exceeded */
} MemAccount;

typedef struct MemSample {
    double time_s;
    uint32_t account;
    double bytes;
} MemSample;

typedef struct MemTracker MemTracker;

/* Accounts: GPU of each rank, then CPU and NVMe of each node. Capacities in bytes (0 = none:
 * any use is out of memory). `traced` (n_ranks flags, may be NULL) selects the ranks whose
 * GPU, and whose node's CPU and NVMe, timelines are recorded. */
MemTracker *memory_create(uint32_t n_ranks, uint32_t gpus_per_node, double gpu_capacity,
                          double cpu_capacity, double nvme_capacity, const bool *traced);
void memory_destroy(MemTracker *t);

/* Applies an allocation (positive) or release (negative) of `bytes` by `rank` on `space`. */
void memory_apply(MemTracker *t, double time_s, uint32_t rank, MemSpace space, MemCategory category,
                  double bytes);

/* The account of (rank, space): a rank's GPU, or its node's CPU or NVMe. */
const MemAccount *memory_account(const MemTracker *t, uint32_t rank, MemSpace space);
uint32_t memory_account_index(const MemTracker *t, uint32_t rank, MemSpace space);

/* The account with the highest peak in a space; *out_rank gets a rank on it. */
const MemAccount *memory_max_peak(const MemTracker *t, MemSpace space, uint32_t *out_rank);

/* The first out-of-memory across all accounts (earliest), or NULL; *out_rank and *out_space
 * say where. */
const MemAccount *memory_first_oom(const MemTracker *t, uint32_t *out_rank, MemSpace *out_space);

/* Recorded timeline samples, in time order. */
const MemSample *memory_samples(const MemTracker *t, uint32_t *out_n);

#endif
