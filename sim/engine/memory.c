/*
 * memory.c - per-space usage, peaks and out-of-memory detection (see memory.h).
 */
#include "memory.h"

#include "allocator.h"

#include "../common/xalloc.h"

#include <string.h>

struct MemTracker {
    uint32_t n_ranks, gpus_per_node, n_nodes;
    MemAccount *accounts; /* n_ranks GPU accounts, then n_nodes CPU, then n_nodes NVMe */
    bool *is_traced;      /* per account */
    MemSample *samples;
    uint32_t n_samples, cap_samples;
    CachingAllocator **allocators; /* per rank, NULL until memory_set_gpu_runtime() */
    uint32_t *block_of;            /* per buffer: its allocator block */
    uint32_t n_buffers;
};

uint32_t memory_account_index(const MemTracker *t, uint32_t rank, MemSpace space)
{
    uint32_t node = rank / t->gpus_per_node;
    switch (space) {
    case MEM_GPU: return rank;
    case MEM_CPU: return t->n_ranks + node;
    default: return t->n_ranks + t->n_nodes + node;
    }
}

MemTracker *memory_create(uint32_t n_ranks, uint32_t gpus_per_node, double gpu_capacity,
                          double cpu_capacity, double nvme_capacity, const bool *traced)
{
    MemTracker *t = xcalloc(1, sizeof *t);
    t->n_ranks = n_ranks;
    t->gpus_per_node = gpus_per_node;
    t->n_nodes = (n_ranks + gpus_per_node - 1) / gpus_per_node;
    uint32_t n = n_ranks + 2 * t->n_nodes;
    t->accounts = xcalloc(n, sizeof *t->accounts);
    t->is_traced = xcalloc(n, sizeof *t->is_traced);
    for (uint32_t r = 0; r < n_ranks; r++) {
        t->accounts[memory_account_index(t, r, MEM_GPU)].capacity_bytes = gpu_capacity;
        t->accounts[memory_account_index(t, r, MEM_CPU)].capacity_bytes = cpu_capacity;
        t->accounts[memory_account_index(t, r, MEM_NVME)].capacity_bytes = nvme_capacity;
        if (traced != NULL && traced[r]) {
            for (int s = 0; s < MEM_N_SPACES; s++)
                t->is_traced[memory_account_index(t, r, (MemSpace)s)] = true;
        }
    }
    return t;
}

void memory_destroy(MemTracker *t)
{
    if (t == NULL)
        return;
    if (t->allocators != NULL)
        for (uint32_t r = 0; r < t->n_ranks; r++)
            allocator_destroy(t->allocators[r]);
    free(t->allocators);
    free(t->block_of);
    free(t->accounts);
    free(t->is_traced);
    free(t->samples);
    free(t);
}

void memory_set_gpu_runtime(MemTracker *t, uint32_t n_buffers, double outside_bytes,
                            double headroom_bytes, bool is_expandable)
{
    if (t->allocators == NULL)
        t->allocators = xcalloc(t->n_ranks, sizeof *t->allocators);
    free(t->block_of);
    t->block_of = xcalloc(n_buffers ? n_buffers : 1, sizeof *t->block_of);
    t->n_buffers = n_buffers;
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        MemAccount *a = &t->accounts[memory_account_index(t, r, MEM_GPU)];
        a->outside_bytes = outside_bytes;
        a->headroom_bytes = headroom_bytes;
        a->is_expandable = is_expandable;
        allocator_destroy(t->allocators[r]);
        t->allocators[r] =
            allocator_create(a->capacity_bytes - outside_bytes - headroom_bytes, is_expandable);
    }
}

double memory_gpu_device_peak_bytes(const MemAccount *a)
{
    return (a->reserved_peak_bytes > 0 ? a->reserved_peak_bytes : a->peak_bytes) +
           a->outside_bytes;
}

static void mark_oom(MemAccount *a, double time_s, double bytes)
{
    if (a->is_oom)
        return;
    a->is_oom = true;
    a->oom_time_s = time_s;
    a->oom_bytes = bytes;
}

/* The GPU's caching allocator replays the request; a segment it cannot have is the OOM. */
static void replay(MemTracker *t, MemAccount *a, double time_s, uint32_t rank, uint32_t buffer,
                   uint32_t stream, double bytes)
{
    CachingAllocator *al = t->allocators[rank];
    if (bytes > 0) {
        bool is_oom = false;
        t->block_of[buffer] = allocator_malloc(al, (uint64_t)bytes, stream, &is_oom);
        if (is_oom)
            mark_oom(a, time_s, (double)allocator_reserved_bytes(al) + a->outside_bytes);
    } else if (bytes < 0) {
        allocator_free(al, t->block_of[buffer]);
    }
    a->reserved_bytes = (double)allocator_reserved_bytes(al);
    if (a->reserved_bytes > a->reserved_peak_bytes) {
        a->reserved_peak_bytes = a->reserved_bytes;
        a->reserved_peak_time_s = time_s;
        memcpy(a->at_reserved_peak, a->by_category, sizeof a->at_reserved_peak);
    }
}

void memory_preload_gpu(MemTracker *t, double bytes, uint32_t n_blocks)
{
    if (bytes <= 0 || n_blocks == 0 || t->allocators == NULL)
        return;
    const uint64_t each = (uint64_t)(bytes / n_blocks + 0.5);
    uint32_t *ids = xcalloc(n_blocks, sizeof *ids);
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        MemAccount *a = &t->accounts[memory_account_index(t, r, MEM_GPU)];
        CachingAllocator *al = t->allocators[r];
        bool is_oom = false;
        for (uint32_t k = 0; k < n_blocks; k++) {
            bool over = false;
            ids[k] = allocator_malloc(al, each, 0, &over);
            is_oom |= over;
        }
        const double reserved = (double)allocator_reserved_bytes(al);
        if (is_oom)
            mark_oom(a, 0.0, reserved + a->outside_bytes);
        if (reserved > a->reserved_peak_bytes) {
            a->reserved_peak_bytes = reserved;
            a->reserved_peak_time_s = 0.0;
            memset(a->at_reserved_peak, 0, sizeof a->at_reserved_peak);
            a->at_reserved_peak[MEM_PARAMS] = (double)allocator_allocated_bytes(al);
        }
        for (uint32_t k = 0; k < n_blocks; k++)
            allocator_free(al, ids[k]);
        allocator_empty_cache(al);
        a->reserved_bytes = (double)allocator_reserved_bytes(al);
    }
    free(ids);
}

void memory_apply(MemTracker *t, double time_s, uint32_t rank, MemSpace space, MemCategory category,
                  uint32_t buffer, uint32_t stream, double bytes)
{
    uint32_t index = memory_account_index(t, rank, space);
    MemAccount *a = &t->accounts[index];
    a->current_bytes += bytes;
    a->by_category[category] += bytes;
    if (a->current_bytes > a->peak_bytes) {
        a->peak_bytes = a->current_bytes;
        a->peak_time_s = time_s;
        memcpy(a->at_peak, a->by_category, sizeof a->at_peak);
    }
    const bool has_allocator = space == MEM_GPU && t->allocators != NULL && buffer < t->n_buffers;
    if (has_allocator)
        replay(t, a, time_s, rank, buffer, stream, bytes);
    else if (a->current_bytes > a->capacity_bytes)
        mark_oom(a, time_s, a->current_bytes);
    if (t->is_traced[index]) {
        if (t->n_samples == t->cap_samples) {
            t->cap_samples = t->cap_samples ? 2 * t->cap_samples : 1024;
            t->samples = xrealloc(t->samples, t->cap_samples * sizeof *t->samples);
        }
        t->samples[t->n_samples++] = (MemSample){time_s,
                                                 index,
                                                 (uint8_t)category,
                                                 a->current_bytes,
                                                 a->by_category[category],
                                                 a->reserved_bytes};
    }
}

const MemAccount *memory_account(const MemTracker *t, uint32_t rank, MemSpace space)
{
    return &t->accounts[memory_account_index(t, rank, space)];
}

const MemAccount *memory_max_peak(const MemTracker *t, MemSpace space, uint32_t *out_rank)
{
    const MemAccount *best = NULL;
    double best_peak = 0.0;
    uint32_t step = space == MEM_GPU ? 1 : t->gpus_per_node;
    for (uint32_t r = 0; r < t->n_ranks; r += step) {
        const MemAccount *a = memory_account(t, r, space);
        double peak = space == MEM_GPU ? memory_gpu_device_peak_bytes(a) : a->peak_bytes;
        if (best == NULL || peak > best_peak) {
            best_peak = peak;
            best = a;
            *out_rank = r;
        }
    }
    return best;
}

const MemAccount *memory_first_oom(const MemTracker *t, uint32_t *out_rank, MemSpace *out_space)
{
    const MemAccount *first = NULL;
    for (int s = 0; s < MEM_N_SPACES; s++) {
        uint32_t step = s == MEM_GPU ? 1 : t->gpus_per_node;
        for (uint32_t r = 0; r < t->n_ranks; r += step) {
            const MemAccount *a = memory_account(t, r, (MemSpace)s);
            if (a->is_oom && (first == NULL || a->oom_time_s < first->oom_time_s)) {
                first = a;
                *out_rank = r;
                *out_space = (MemSpace)s;
            }
        }
    }
    return first;
}

const MemSample *memory_samples(const MemTracker *t, uint32_t *out_n)
{
    *out_n = t->n_samples;
    return t->samples;
}
