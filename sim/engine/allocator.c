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
    uint64_t offset;     /* address within its segment */
    uint32_t prev, next; /* neighbours in the segment, NONE at its ends */
    uint32_t stream;
    bool is_small; /* pool: small (<= 1 MiB requests) or large */
    bool is_free;
    bool is_used;     /* the slot holds a block */
    bool is_unmapped; /* expandable segments: address space without pages behind it */
} Block;

struct CachingAllocator {
    double limit_bytes;
    bool is_expandable;
    uint64_t reserved_bytes, allocated_bytes;
    uint32_t n_segments;
    Block *blocks;
    uint32_t n_blocks, cap_blocks;
    uint32_t *spare; /* unused slots */
    uint32_t n_spare;
};

CachingAllocator *allocator_create(double limit_bytes, bool is_expandable)
{
    CachingAllocator *a = xcalloc(1, sizeof *a);
    a->limit_bytes = limit_bytes;
    a->is_expandable = is_expandable;
    return a;
}

uint64_t allocator_page_bytes(bool is_small)
{
    /* find_expandable_block: segment_size = is_small ? kSmallBuffer : kLargeBuffer */
    return is_small ? ALLOCATOR_SMALL_SEGMENT_BYTES : ALLOCATOR_LARGE_SEGMENT_BYTES;
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
        if (b->is_used && b->is_free && !b->is_unmapped && b->is_small == is_small &&
            b->stream == stream && b->size >= size &&
            (best == NONE || b->size < a->blocks[best].size))
            best = i;
    }
    return best;
}

/* Merges block `next` into `id` (both free and alike, neighbours). */
static void merge(CachingAllocator *a, uint32_t id, uint32_t next)
{
    Block *b = &a->blocks[id], *n = &a->blocks[next];
    b->size += n->size;
    b->next = n->next;
    if (n->next != NONE)
        a->blocks[n->next].prev = id;
    drop_block(a, next);
}

/* Cuts block id at `at` bytes from its start; the new block (returned) takes the rest. */
static uint32_t cut(CachingAllocator *a, uint32_t id, uint64_t at)
{
    uint32_t rest = new_block(a); /* may move a->blocks */
    Block *b = &a->blocks[id];
    a->blocks[rest] = *b;
    a->blocks[rest].offset = b->offset + at;
    a->blocks[rest].size = b->size - at;
    a->blocks[rest].prev = id;
    if (b->next != NONE)
        a->blocks[b->next].prev = rest;
    b->next = rest;
    b->size = at;
    return rest;
}

/* Merges a free block with free neighbours of the same kind (mapped or not). */
static uint32_t coalesce(CachingAllocator *a, uint32_t id)
{
    Block *b = &a->blocks[id];
    if (b->next != NONE && a->blocks[b->next].is_free &&
        a->blocks[b->next].is_unmapped == b->is_unmapped)
        merge(a, id, b->next);
    b = &a->blocks[id];
    if (b->prev != NONE && a->blocks[b->prev].is_free &&
        a->blocks[b->prev].is_unmapped == b->is_unmapped) {
        uint32_t prev = b->prev;
        merge(a, prev, id);
        return prev;
    }
    return id;
}

/* Expandable segments: the whole pages inside a free mapped block are unmapped
 * (release_expandable_segment / unmap_block). */
static void unmap_free_pages(CachingAllocator *a, uint32_t id)
{
    const uint64_t page = allocator_page_bytes(a->blocks[id].is_small);
    const uint64_t begin = a->blocks[id].offset, end = begin + a->blocks[id].size;
    const uint64_t first = (begin + page - 1) / page * page, last = end / page * page;
    if (last <= first)
        return;
    if (first > begin)
        id = cut(a, id, first - begin);
    if (last < end)
        cut(a, id, last - first);
    a->blocks[id].is_unmapped = true;
    a->reserved_bytes -= last - first;
    coalesce(a, id);
}

/* release_cached_blocks: every segment that is one free block goes back to the driver; in
 * expandable segments, every free page. */
static void release_cached(CachingAllocator *a)
{
    for (uint32_t i = 0; i < a->n_blocks; i++) {
        Block *b = &a->blocks[i];
        if (!b->is_used || !b->is_free || b->is_unmapped)
            continue;
        if (a->is_expandable) {
            unmap_free_pages(a, i);
        } else if (b->prev == NONE && b->next == NONE) {
            a->reserved_bytes -= b->size;
            a->n_segments--;
            drop_block(a, i);
        }
    }
}

/* Expandable segments, find_expandable_block: the lowest-addressed unmapped block of the
 * stream's segment that, with the free mapped block before it, offers `size` contiguous bytes;
 * a new segment of unbounded address space when there is none. */
static uint32_t find_run(CachingAllocator *a, uint64_t size, bool is_small, uint32_t stream)
{
    uint32_t start = NONE;
    for (uint32_t i = 0; i < a->n_blocks; i++) {
        const Block *u = &a->blocks[i];
        if (!u->is_used || !u->is_unmapped || u->is_small != is_small || u->stream != stream)
            continue;
        uint32_t c = u->prev != NONE && a->blocks[u->prev].is_free ? u->prev : i;
        uint64_t room = 0;
        for (uint32_t k = c; k != NONE && a->blocks[k].is_free && room < size;
             k = a->blocks[k].next)
            room += a->blocks[k].size;
        if (room >= size && (start == NONE || a->blocks[c].offset < a->blocks[start].offset))
            start = c;
    }
    if (start == NONE) {
        start = new_block(a);
        a->blocks[start] = (Block){.size = UINT64_MAX / 4,
                                   .prev = NONE,
                                   .next = NONE,
                                   .stream = stream,
                                   .is_small = is_small,
                                   .is_free = true,
                                   .is_used = true,
                                   .is_unmapped = true};
        a->n_segments++;
    }
    return start;
}

/* Bytes of pages to map so that the run from `start` holds `size`: whole pages after its free
 * mapped part (ExpandableSegment::map rounds to the page). */
static uint64_t pages_needed(const CachingAllocator *a, uint32_t start, uint64_t size)
{
    const Block *b = &a->blocks[start];
    const uint64_t page = allocator_page_bytes(b->is_small);
    const uint64_t mapped = b->is_unmapped ? 0 : b->size;
    return (size - mapped + page - 1) / page * page;
}

/* try_allocate_expandable_block: maps the missing pages of a run and merges it into one free
 * block of at least `size` bytes. *out_is_oom when the pages pass the limit even after the
 * cache is released. */
static uint32_t expand(CachingAllocator *a, uint64_t size, bool is_small, uint32_t stream,
                       bool *out_is_oom)
{
    uint32_t start = find_run(a, size, is_small, stream);
    uint64_t need = pages_needed(a, start, size);
    if ((double)(a->reserved_bytes + need) > a->limit_bytes) {
        release_cached(a);
        start = find_run(a, size, is_small, stream);
        need = pages_needed(a, start, size);
        if ((double)(a->reserved_bytes + need) > a->limit_bytes)
            *out_is_oom = true;
    }
    uint32_t u = a->blocks[start].is_unmapped ? start : a->blocks[start].next;
    while (need > 0) {
        assert(u != NONE && a->blocks[u].is_unmapped);
        uint64_t take = a->blocks[u].size < need ? a->blocks[u].size : need;
        uint32_t next = a->blocks[u].next;
        if (take < a->blocks[u].size)
            next = cut(a, u, take);
        a->blocks[u].is_unmapped = false;
        a->reserved_bytes += take;
        need -= take;
        u = next;
    }
    while (a->blocks[start].size < size) {
        uint32_t next = a->blocks[start].next;
        assert(next != NONE && a->blocks[next].is_free && !a->blocks[next].is_unmapped);
        merge(a, start, next);
    }
    return start;
}

uint32_t allocator_malloc(CachingAllocator *a, uint64_t bytes, uint32_t stream, bool *out_is_oom)
{
    const uint64_t size = allocator_round_bytes(bytes);
    const bool is_small = size <= ALLOCATOR_SMALL_BYTES;
    *out_is_oom = false;
    uint32_t id = best_fit(a, size, is_small, stream);
    if (id == NONE && a->is_expandable) {
        id = expand(a, size, is_small, stream, out_is_oom);
    } else if (id == NONE) {
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
    /* should_split: the remainder becomes a free block if it can serve its pool (any 512 B
     * with expandable segments) */
    const uint64_t remaining = a->blocks[id].size - size;
    if (is_small || a->is_expandable ? remaining >= ALLOCATOR_MIN_BLOCK_BYTES
                                     : remaining > ALLOCATOR_SMALL_BYTES)
        cut(a, id, size);
    a->blocks[id].is_free = false;
    a->allocated_bytes += a->blocks[id].size;
    return id;
}

void allocator_free(CachingAllocator *a, uint32_t id)
{
    assert(id < a->n_blocks && a->blocks[id].is_used && !a->blocks[id].is_free);
    a->blocks[id].is_free = true;
    a->allocated_bytes -= a->blocks[id].size;
    coalesce(a, id);
}

void allocator_empty_cache(CachingAllocator *a)
{
    release_cached(a);
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
