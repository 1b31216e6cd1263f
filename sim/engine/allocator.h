/*
 * allocator.h - PyTorch's CUDA caching allocator, replayed on one GPU's allocation sequence.
 *
 * What nvidia-smi shows of a PyTorch process is not what its tensors hold: the caching
 * allocator (c10/cuda/CUDACachingAllocator.cpp) rounds every request up to 512 bytes, takes
 * memory from the driver in segments (2 MiB for requests up to 1 MiB, 20 MiB for requests
 * under 10 MiB, else the request rounded up to 2 MiB), splits segments into blocks, keeps
 * freed blocks cached for later requests on the same stream (best fit: the smallest cached
 * block that is large enough), merges free neighbours, and returns whole free segments to
 * the driver only when a new segment would not fit. What it has taken from the driver is the
 * reserved memory (torch.cuda.memory_reserved); free pieces of split segments that no later
 * request fits are fragmentation. This module replays ALLOC/FREE in the order the engine
 * executes them and answers the reserved bytes and whether a segment could not be had (an
 * out-of-memory error in PyTorch). No SimGrid; storage grows to the most blocks ever live
 * and is reused, so a run allocates nothing per event once warm. Place: engine/, under the
 * memory tracker.
 */
#ifndef ZEROSIM_ENGINE_ALLOCATOR_H
#define ZEROSIM_ENGINE_ALLOCATOR_H

#include <stdbool.h>
#include <stdint.h>

/* CUDACachingAllocator.cpp's constants (namespace c10::cuda::CUDACachingAllocator). */
#define ALLOCATOR_MIN_BLOCK_BYTES 512u             /* kMinBlockSize: every size rounds to it */
#define ALLOCATOR_SMALL_BYTES 1048576u             /* kSmallSize: largest small request */
#define ALLOCATOR_SMALL_SEGMENT_BYTES 2097152u     /* kSmallBuffer */
#define ALLOCATOR_LARGE_SEGMENT_BYTES 20971520u    /* kLargeBuffer */
#define ALLOCATOR_MIN_LARGE_ALLOC_BYTES 10485760u  /* kMinLargeAlloc */
#define ALLOCATOR_ROUND_LARGE_BYTES 2097152u       /* kRoundLarge */

typedef struct CachingAllocator CachingAllocator;

/* An empty allocator that may take up to limit_bytes from the driver (the GPU's memory less
 * what lies outside the allocator and the headroom kept free). With `is_expandable`
 * (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) each stream and pool has one segment of
 * unbounded address space into which pages (2 MiB small, 20 MiB large) are mapped as needed,
 * a free block at its end grows instead of a new segment being taken, blocks split down to
 * 512 B, and under pressure the free pages are unmapped: fragmentation mostly goes. */
CachingAllocator *allocator_create(double limit_bytes, bool is_expandable);
void allocator_destroy(CachingAllocator *a);

/* The size a request is rounded to (round_size) and the segment a request that finds no
 * cached block takes from the driver (get_allocation_size). */
uint64_t allocator_round_bytes(uint64_t bytes);
uint64_t allocator_segment_bytes(uint64_t rounded_bytes);
/* The page an expandable segment maps at a time (find_expandable_block's segment_size). */
uint64_t allocator_page_bytes(bool is_small);

/* Allocates `bytes` on `stream` and returns the block's handle. When no cached block fits and
 * a new segment would pass the limit, the free segments are returned to the driver and the
 * segment asked for again (release_cached_blocks); if it still does not fit, *out_is_oom is
 * set and the segment is taken anyway, so the replay goes on and reports by how much. */
uint32_t allocator_malloc(CachingAllocator *a, uint64_t bytes, uint32_t stream, bool *out_is_oom);

/* Returns a block to the cache, merged with free neighbours of its segment. */
void allocator_free(CachingAllocator *a, uint32_t handle);

/* torch.cuda.empty_cache(): every segment without a block in use goes back to the driver
 * (expandable segments: every free page). */
void allocator_empty_cache(CachingAllocator *a);

uint64_t allocator_reserved_bytes(const CachingAllocator *a);  /* segments held */
uint64_t allocator_allocated_bytes(const CachingAllocator *a); /* rounded blocks in use */
uint32_t allocator_n_segments(const CachingAllocator *a);

#endif
