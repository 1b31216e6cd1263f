/*
 * test_allocator.c - the caching-allocator replay against hand-worked block sequences.
 *
 * The rules under test are CUDACachingAllocator.cpp's: round_size (512 B multiples),
 * get_allocation_size (2 MiB small segments, 20 MiB for 1-10 MiB requests, else the request
 * rounded to 2 MiB), best fit within a pool and stream, should_split, free-block merging, and
 * release_cached_blocks before a segment would pass the limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/allocator.h"

#define MIB 1048576ull

static void test_allocator_rounding_and_segments(void **state)
{
    (void)state;
    assert_int_equal(allocator_round_bytes(1), 512);
    assert_int_equal(allocator_round_bytes(512), 512);
    assert_int_equal(allocator_round_bytes(513), 1024);
    assert_int_equal(allocator_segment_bytes(512), 2 * MIB);
    assert_int_equal(allocator_segment_bytes(MIB), 2 * MIB);
    assert_int_equal(allocator_segment_bytes(MIB + 512), 20 * MIB);
    assert_int_equal(allocator_segment_bytes(10 * MIB - 512), 20 * MIB);
    assert_int_equal(allocator_segment_bytes(10 * MIB), 10 * MIB);
    assert_int_equal(allocator_segment_bytes(11 * MIB + 1), 12 * MIB);
}

/* Small requests share a 2 MiB segment; a freed block is reused; large ones get their own. */
static void test_allocator_small_blocks_share_a_segment(void **state)
{
    (void)state;
    CachingAllocator *a = allocator_create(1e12, false);
    bool oom;
    uint32_t x = allocator_malloc(a, 1000, 0, &oom); /* 1024 B of a new 2 MiB segment */
    uint32_t y = allocator_malloc(a, 4096, 0, &oom); /* from the split remainder */
    assert_false(oom);
    assert_int_equal(allocator_reserved_bytes(a), 2 * MIB);
    assert_int_equal(allocator_allocated_bytes(a), 1024 + 4096);
    assert_int_equal(allocator_n_segments(a), 1);
    allocator_free(a, x);
    allocator_free(a, y); /* merges back into one free 2 MiB block */
    assert_int_equal(allocator_allocated_bytes(a), 0);
    uint32_t z = allocator_malloc(a, 2 * MIB - 4096, 0, &oom); /* large pool: 20 MiB segment */
    (void)z;
    assert_int_equal(allocator_reserved_bytes(a), 22 * MIB);
    allocator_destroy(a);
}

/* Fragmentation: 30 MiB then 10 MiB, free the 30, ask for 40: the cached 30 MiB block cannot
 * serve it, so a third segment is taken; reserved 30 + 10 + 40 = 80 MiB while 50 are in use. */
static void test_allocator_fragmentation_takes_new_segments(void **state)
{
    (void)state;
    CachingAllocator *a = allocator_create(1e12, false);
    bool oom;
    uint32_t big = allocator_malloc(a, 30 * MIB, 0, &oom);
    allocator_malloc(a, 10 * MIB, 0, &oom);
    allocator_free(a, big);
    allocator_malloc(a, 40 * MIB, 0, &oom);
    assert_int_equal(allocator_reserved_bytes(a), 80 * MIB);
    assert_int_equal(allocator_allocated_bytes(a), 50 * MIB);
    /* a 20 MiB request is served from the cached 30 MiB block, split (10 MiB > 1 MiB left) */
    allocator_malloc(a, 20 * MIB, 0, &oom);
    assert_int_equal(allocator_reserved_bytes(a), 80 * MIB);
    assert_int_equal(allocator_allocated_bytes(a), 70 * MIB);
    allocator_destroy(a);
}

/* Blocks are cached per stream: a block freed on stream 0 does not serve stream 1. */
static void test_allocator_streams_do_not_share_blocks(void **state)
{
    (void)state;
    CachingAllocator *a = allocator_create(1e12, false);
    bool oom;
    uint32_t x = allocator_malloc(a, 16 * MIB, 0, &oom);
    allocator_free(a, x);
    allocator_malloc(a, 16 * MIB, 1, &oom);
    assert_int_equal(allocator_reserved_bytes(a), 32 * MIB);
    allocator_malloc(a, 16 * MIB, 0, &oom); /* stream 0 reuses its own */
    assert_int_equal(allocator_reserved_bytes(a), 32 * MIB);
    allocator_destroy(a);
}

/* At the limit the cached whole segments go back first; only then is it out of memory. */
static void test_allocator_releases_cache_before_oom(void **state)
{
    (void)state;
    CachingAllocator *a = allocator_create(100.0 * MIB, false);
    bool oom;
    uint32_t x = allocator_malloc(a, 60 * MIB, 0, &oom);
    allocator_free(a, x);
    allocator_malloc(a, 70 * MIB, 0, &oom); /* 60 cached + 70 > 100: release the 60, then fit */
    assert_false(oom);
    assert_int_equal(allocator_reserved_bytes(a), 70 * MIB);
    allocator_malloc(a, 40 * MIB, 0, &oom); /* 70 + 40 > 100 with nothing to release */
    assert_true(oom);
    assert_int_equal(allocator_reserved_bytes(a), 110 * MIB);
    allocator_destroy(a);
}

/* Expandable segments grow the free block at their end: 30 MiB (pages of 20 MiB: 40 mapped),
 * freed, then 50 MiB: the free 40 MiB at the end takes one more page, reserved 60 MiB, where
 * fixed segments need a new 50 MiB one beside the cached 30: 80. */
static void test_allocator_expandable_grows_the_last_block(void **state)
{
    (void)state;
    bool oom;
    CachingAllocator *e = allocator_create(1e12, true);
    uint32_t x = allocator_malloc(e, 30 * MIB, 0, &oom);
    assert_int_equal(allocator_reserved_bytes(e), 40 * MIB);
    allocator_free(e, x);
    allocator_malloc(e, 50 * MIB, 0, &oom);
    assert_int_equal(allocator_reserved_bytes(e), 60 * MIB);
    assert_int_equal(allocator_allocated_bytes(e), 50 * MIB);
    assert_int_equal(allocator_n_segments(e), 1);
    allocator_destroy(e);

    CachingAllocator *f = allocator_create(1e12, false);
    x = allocator_malloc(f, 30 * MIB, 0, &oom);
    allocator_free(f, x);
    allocator_malloc(f, 50 * MIB, 0, &oom);
    assert_int_equal(allocator_reserved_bytes(f), 80 * MIB);
    allocator_destroy(f);

    /* small requests map 2 MiB pages */
    CachingAllocator *s = allocator_create(1e12, true);
    allocator_malloc(s, 1000, 0, &oom);
    assert_int_equal(allocator_reserved_bytes(s), 2 * MIB);
    allocator_destroy(s);
}

/* Under pressure the free pages are unmapped. Limit 70 MiB: 30 MiB (pages [0, 40)), 10 MiB in
 * its remainder [30, 40), the 30 freed, then 40 MiB: 40 + 40 > 70, so the free page [0, 20) is
 * unmapped (reserved 20) and the 40 MiB maps [40, 80): reserved 60, no OOM. Then 20 MiB more:
 * the hole [0, 30) holds it after mapping [0, 20) again: 80 > 70 and nothing left to unmap. */
static void test_allocator_expandable_unmaps_free_pages_under_pressure(void **state)
{
    (void)state;
    bool oom;
    CachingAllocator *e = allocator_create(70.0 * MIB, true);
    uint32_t x = allocator_malloc(e, 30 * MIB, 0, &oom);
    allocator_malloc(e, 10 * MIB, 0, &oom);
    assert_int_equal(allocator_reserved_bytes(e), 40 * MIB);
    allocator_free(e, x);
    allocator_malloc(e, 40 * MIB, 0, &oom);
    assert_false(oom);
    assert_int_equal(allocator_reserved_bytes(e), 60 * MIB);
    assert_int_equal(allocator_allocated_bytes(e), 50 * MIB);
    allocator_malloc(e, 20 * MIB, 0, &oom);
    assert_true(oom);
    assert_int_equal(allocator_reserved_bytes(e), 80 * MIB);
    allocator_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_rounding_and_segments),
        cmocka_unit_test(test_allocator_small_blocks_share_a_segment),
        cmocka_unit_test(test_allocator_fragmentation_takes_new_segments),
        cmocka_unit_test(test_allocator_streams_do_not_share_blocks),
        cmocka_unit_test(test_allocator_releases_cache_before_oom),
        cmocka_unit_test(test_allocator_expandable_grows_the_last_block),
        cmocka_unit_test(test_allocator_expandable_unmaps_free_pages_under_pressure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
