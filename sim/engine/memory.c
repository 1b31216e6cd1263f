/*
 * memory.c - per-space usage, peaks and out-of-memory detection (see memory.h).
 */
#include "memory.h"

#include "../common/xalloc.h"

#include <string.h>

struct MemTracker {
    uint32_t n_ranks, gpus_per_node, n_nodes;
    MemAccount *accounts; /* n_ranks GPU accounts, then n_nodes CPU, then n_nodes NVMe */
    bool *is_traced;      /* per account */
    MemSample *samples;
    uint32_t n_samples, cap_samples;
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
    free(t->accounts);
    free(t->is_traced);
    free(t->samples);
    free(t);
}

void memory_apply(MemTracker *t, double time_s, uint32_t rank, MemSpace space, MemCategory category,
                  double bytes)
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
    if (!a->is_oom && a->current_bytes > a->capacity_bytes) {
        a->is_oom = true;
        a->oom_time_s = time_s;
        a->oom_bytes = a->current_bytes;
    }
    if (t->is_traced[index]) {
        if (t->n_samples == t->cap_samples) {
            t->cap_samples = t->cap_samples ? 2 * t->cap_samples : 1024;
            t->samples = xrealloc(t->samples, t->cap_samples * sizeof *t->samples);
        }
        t->samples[t->n_samples++] = (MemSample){time_s, index, a->current_bytes};
    }
}

const MemAccount *memory_account(const MemTracker *t, uint32_t rank, MemSpace space)
{
    return &t->accounts[memory_account_index(t, rank, space)];
}

const MemAccount *memory_max_peak(const MemTracker *t, MemSpace space, uint32_t *out_rank)
{
    const MemAccount *best = NULL;
    uint32_t step = space == MEM_GPU ? 1 : t->gpus_per_node;
    for (uint32_t r = 0; r < t->n_ranks; r += step) {
        const MemAccount *a = memory_account(t, r, space);
        if (best == NULL || a->peak_bytes > best->peak_bytes) {
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
