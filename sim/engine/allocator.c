/*
 * allocator.c - the caching allocator's blocks and segments (see allocator.h).
 *
 * Blocks live in one array; a segment's blocks are chained in address order (prev/next) so
 * that a freed block merges with free neighbours as CUDACachingAllocator's free_block does.
 * Finding a cached block scans the free blocks of the request's pool and stream for the
 * smallest one that fits (the allocator's std::set ordered by stream, size, address).
 */
#include "allocator.h"

#include "../common/xalloc.h"

#include <assert.h>
#include <stdlib.h>

#define NONE UINT32_MAX

typedef struct Block {
    uint64_t size;
    uint32_t prev, next; /* neighbours in the segment, NONE at its ends */
    uint32_t stream;
    bool is_small; /* pool: small (<= 1 MiB requests) or large */
    bool is_free;
    bool is_used; /* the slot holds a block */
} Block;

struct CachingAllocator {
    double limit_bytes;
    uint64_t reserved_bytes, allocated_bytes;
    uint32_t n_segments;
    Block *blocks;
    uint32_t n_blocks, cap_blocks;
    uint32_t *spare; /* unused slots */
    uint32_t n_spare;
};

CachingAllocator *allocator_create(double limit_bytes)
{
    CachingAllocator *a = xcalloc(1, sizeof *a);
    a->limit_bytes = limit_bytes;
    return a;
}

void allocator_destroy(CachingAllocator *a)
{
    if (a == NULL)
        return;
    free(a->blocks);
    free(a->spare);
    free(a);
}

uint64_t allocator_round_bytes(uint64_t bytes)
{
    /* round_size: below kMinBlockSize -> kMinBlockSize, else up to a multiple of it */
    if (bytes < ALLOCATOR_MIN_BLOCK_BYTES)
        return ALLOCATOR_MIN_BLOCK_BYTES;
    return (bytes + ALLOCATOR_MIN_BLOCK_BYTES - 1) / ALLOCATOR_MIN_BLOCK_BYTES *
           ALLOCATOR_MIN_BLOCK_BYTES;
}

uint64_t allocator_segment_bytes(uint64_t size)
{
    /* get_allocation_size */
    if (size <= ALLOCATOR_SMALL_BYTES)
        return ALLOCATOR_SMALL_SEGMENT_BYTES;
    if (size < ALLOCATOR_MIN_LARGE_ALLOC_BYTES)
        return ALLOCATOR_LARGE_SEGMENT_BYTES;
    return (size + ALLOCATOR_ROUND_LARGE_BYTES - 1) / ALLOCATOR_ROUND_LARGE_BYTES *
           ALLOCATOR_ROUND_LARGE_BYTES;
}

static uint32_t new_block(CachingAllocator *a)
{
    if (a->n_spare > 0)
        return a->spare[--a->n_spare];
    if (a->n_blocks == a->cap_blocks) {
        a->cap_blocks = a->cap_blocks ? 2 * a->cap_blocks : 64;
        a->blocks = xrealloc(a->blocks, (size_t)a->cap_blocks * sizeof *a->blocks);
        a->spare = xrealloc(a->spare, (size_t)a->cap_blocks * sizeof *a->spare);
    }
    return a->n_blocks++;
}

static void drop_block(CachingAllocator *a, uint32_t id)
{
    a->blocks[id].is_used = false;
    a->spare[a->n_spare++] = id;
}

/* The smallest free block of the pool and stream holding `size` (NONE: none). */
static uint32_t best_fit(const CachingAllocator *a, uint64_t size, bool is_small, uint32_t stream)
{
    uint32_t best = NONE;
    for (uint32_t i = 0; i < a->n_blocks; i++) {
        const Block *b = &a->blocks[i];
        if (b->is_used && b->is_free && b->is_small == is_small && b->stream == stream &&
            b->size >= size && (best == NONE || b->size < a->blocks[best].size))
            best = i;
    }
    return best;
}

/* release_cached_blocks: every segment that is one free block goes back to the driver. */
static void release_cached(CachingAllocator *a)
{
    for (uint32_t i = 0; i < a->n_blocks; i++) {
        Block *b = &a->blocks[i];
        if (b->is_used && b->is_free && b->prev == NONE && b->next == NONE) {
            a->reserved_bytes -= b->size;
            a->n_segments--;
            drop_block(a, i);
        }
    }
}

uint32_t allocator_malloc(CachingAllocator *a, uint64_t bytes, uint32_t stream, bool *out_is_oom)
{
    const uint64_t size = allocator_round_bytes(bytes);
    const bool is_small = size <= ALLOCATOR_SMALL_BYTES;
    *out_is_oom = false;
    uint32_t id = best_fit(a, size, is_small, stream);
    if (id == NONE) {
        const uint64_t segment = allocator_segment_bytes(size);
        if ((double)(a->reserved_bytes + segment) > a->limit_bytes)
            release_cached(a);
        if ((double)(a->reserved_bytes + segment) > a->limit_bytes)
            *out_is_oom = true;
        id = new_block(a);
        a->blocks[id] = (Block){.size = segment,
                                .prev = NONE,
                                .next = NONE,
                                .stream = stream,
                                .is_small = is_small,
                                .is_free = true,
                                .is_used = true};
        a->reserved_bytes += segment;
        a->n_segments++;
    }
    /* should_split: the remainder becomes a free block if it can serve its pool */
    const uint64_t remaining = a->blocks[id].size - size;
    if (is_small ? remaining >= ALLOCATOR_MIN_BLOCK_BYTES : remaining > ALLOCATOR_SMALL_BYTES) {
        uint32_t rest = new_block(a); /* may move a->blocks */
        Block *b = &a->blocks[id];
        a->blocks[rest] = (Block){.size = remaining,
                                  .prev = id,
                                  .next = b->next,
                                  .stream = stream,
                                  .is_small = is_small,
                                  .is_free = true,
                                  .is_used = true};
        if (b->next != NONE)
            a->blocks[b->next].prev = rest;
        b->next = rest;
        b->size = size;
    }
    a->blocks[id].is_free = false;
    a->allocated_bytes += a->blocks[id].size;
    return id;
}

/* Merges block `next` into `id` (both free, neighbours). */
static void merge(CachingAllocator *a, uint32_t id, uint32_t next)
{
    Block *b = &a->blocks[id], *n = &a->blocks[next];
    b->size += n->size;
    b->next = n->next;
    if (n->next != NONE)
        a->blocks[n->next].prev = id;
    drop_block(a, next);
}

void allocator_free(CachingAllocator *a, uint32_t id)
{
    assert(id < a->n_blocks && a->blocks[id].is_used && !a->blocks[id].is_free);
    Block *b = &a->blocks[id];
    b->is_free = true;
    a->allocated_bytes -= b->size;
    if (b->next != NONE && a->blocks[b->next].is_free)
        merge(a, id, b->next);
    if (b->prev != NONE && a->blocks[b->prev].is_free)
        merge(a, b->prev, id);
}

uint64_t allocator_reserved_bytes(const CachingAllocator *a)
{
    return a->reserved_bytes;
}

uint64_t allocator_allocated_bytes(const CachingAllocator *a)
{
    return a->allocated_bytes;
}

uint32_t allocator_n_segments(const CachingAllocator *a)
{
    return a->n_segments;
}
