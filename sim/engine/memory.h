/*
 * memory.h - the memory tracker: usage, peak and breakdown per memory space.
 *
 * Every ALLOC and FREE the engine executes lands here: GPU HBM per rank, host DRAM and NVMe
 * per node. Each account keeps its current bytes by category, its peak, when the peak
 * happened and the breakdown at that moment, and the first time it exceeded its capacity
 * (out-of-memory is a result, not a crash). For chosen ranks it also records a timeline for
 * trace counter tracks. No SimGrid here: times are given by the caller.
 *
 * A GPU account counts two peaks. The allocated peak is what the tensors hold
 * (torch.cuda.max_memory_allocated). Once memory_set_gpu_runtime() is called, every GPU ALLOC
 * and FREE is also replayed through PyTorch's caching allocator (allocator.h), which gives the
 * reserved peak (torch.cuda.max_memory_reserved); beside it lies the memory outside the
 * allocator (CUDA context, NCCL buffers). What nvidia-smi shows, and what decides an
 * out-of-memory error, is reserved + outside: a GPU is out of memory when the allocator
 * cannot take a segment within capacity - outside - headroom.
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
    double oom_bytes; /* usage when capacity was first exceeded (GPU: reserved + outside,
                         with the segment that did not fit) */
    /* GPU accounts with the allocator replay (0 otherwise) */
    double reserved_bytes;      /* segments the caching allocator holds now */
    double reserved_peak_bytes; /* the most it held */
    double reserved_peak_time_s;
    double at_reserved_peak[MEM_N_CATEGORIES]; /* allocated bytes by category then */
    double outside_bytes;  /* CUDA context + NCCL, outside the allocator */
    double headroom_bytes; /* kept free by the verdict */
    bool is_expandable;    /* the allocator replay uses expandable segments */
} MemAccount;

typedef struct MemSample {
    double time_s;
    uint32_t account;
    uint8_t category;      /* the category that changed */
    double bytes;          /* the account's allocated bytes after the change */
    double category_bytes; /* that category's bytes after it */
    double reserved_bytes; /* GPU: the allocator's reserved bytes after it */
} MemSample;

typedef struct MemTracker MemTracker;

/* Accounts: GPU of each rank, then CPU and NVMe of each node. Capacities in bytes (0 = none:
 * any use is out of memory). `traced` (n_ranks flags, may be NULL) selects the ranks whose
 * GPU, and whose node's CPU and NVMe, timelines are recorded. */
MemTracker *memory_create(uint32_t n_ranks, uint32_t gpus_per_node, double gpu_capacity,
                          double cpu_capacity, double nvme_capacity, const bool *traced);
void memory_destroy(MemTracker *t);

/* Turns on the caching-allocator replay for every GPU account: `n_buffers` buffer ids (the
 * graph's), `outside_bytes` per GPU outside the allocator, `headroom_bytes` kept free, and
 * expandable segments or not (allocator.h). */
void memory_set_gpu_runtime(MemTracker *t, uint32_t n_buffers, double outside_bytes,
                            double headroom_bytes, bool is_expandable);

/* Applies an allocation (positive) or release (negative) of `bytes` of `buffer` by `rank` on
 * `space`, issued on stream kind `stream` (the allocator caches blocks per stream). */
void memory_apply(MemTracker *t, double time_s, uint32_t rank, MemSpace space, MemCategory category,
                  uint32_t buffer, uint32_t stream, double bytes);

/* The GPU's peak as nvidia-smi would show it: reserved peak + outside (the allocated peak +
 * outside without the allocator replay). */
double memory_gpu_device_peak_bytes(const MemAccount *a);

/* Before the first op: every GPU's caching allocator takes `bytes` in `n_blocks` equal
 * tensors, frees them and empties its cache (a model built whole on the GPU, then
 * partitioned: EngineOptions.gpu_load_bytes). The reserved peak keeps it; a load that does
 * not fit is the run's first out-of-memory, at time 0. Call after memory_set_gpu_runtime. */
void memory_preload_gpu(MemTracker *t, double bytes, uint32_t n_blocks);

/* The account of (rank, space): a rank's GPU, or its node's CPU or NVMe. */
const MemAccount *memory_account(const MemTracker *t, uint32_t rank, MemSpace space);
uint32_t memory_account_index(const MemTracker *t, uint32_t rank, MemSpace space);

/* The account with the highest peak in a space (GPU: the device peak); *out_rank gets a rank on
 * it. */
const MemAccount *memory_max_peak(const MemTracker *t, MemSpace space, uint32_t *out_rank);

/* The first out-of-memory across all accounts (earliest), or NULL; *out_rank and *out_space
 * say where. */
const MemAccount *memory_first_oom(const MemTracker *t, uint32_t *out_rank, MemSpace *out_space);

/* Recorded timeline samples, in time order. */
const MemSample *memory_samples(const MemTracker *t, uint32_t *out_n);

#endif
