/*
 * test_memory.c - the memory tracker: allocated and reserved peaks, the memory outside the
 * allocator and the out-of-memory verdict with headroom, on hand-worked sequences.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/memory.h"

#define MIB 1048576.0

/* One GPU of 100 MiB, 10 outside the allocator, 10 kept free: the allocator may hold 80. */
static void test_memory_reserved_peak_and_device_peak(void **state)
{
    (void)state;
    MemTracker *t = memory_create(1, 1, 100 * MIB, 1e12, 0, NULL);
    memory_set_gpu_runtime(t, 3, 10 * MIB, 10 * MIB, false);
    memory_apply(t, 1.0, 0, MEM_GPU, MEM_ACTIVATIONS, 0, STREAM_COMPUTE, 30 * MIB);
    memory_apply(t, 2.0, 0, MEM_GPU, MEM_PARAMS, 1, STREAM_COMPUTE, 10 * MIB);
    memory_apply(t, 3.0, 0, MEM_GPU, MEM_ACTIVATIONS, 0, STREAM_COMPUTE, -30 * MIB);
    /* 40 MiB cannot use the cached 30 MiB block: reserved 30 + 10 + 40 = 80, allocated 50 */
    memory_apply(t, 4.0, 0, MEM_GPU, MEM_STEP_COPIES, 2, STREAM_COMPUTE, 40 * MIB);
    const MemAccount *a = memory_account(t, 0, MEM_GPU);
    assert_true(a->peak_bytes == 50 * MIB);
    assert_true(a->reserved_peak_bytes == 80 * MIB);
    assert_true(a->reserved_peak_time_s == 4.0);
    assert_true(a->at_reserved_peak[MEM_STEP_COPIES] == 40 * MIB);
    assert_true(memory_gpu_device_peak_bytes(a) == 90 * MIB);
    assert_false(a->is_oom); /* 80 fits the allocator's 80 */
    uint32_t rank = 9;
    MemSpace space;
    assert_null(memory_first_oom(t, &rank, &space));
    memory_destroy(t);
}

/* The same sequence with 11 MiB outside: the 40 MiB segment would pass 79; releasing the
 * cached whole segment (the 30) makes room, so no OOM; reserved then 10 + 40 = 50. */
static void test_memory_release_then_oom(void **state)
{
    (void)state;
    MemTracker *t = memory_create(1, 1, 100 * MIB, 1e12, 0, NULL);
    memory_set_gpu_runtime(t, 4, 11 * MIB, 10 * MIB, false);
    memory_apply(t, 1.0, 0, MEM_GPU, MEM_ACTIVATIONS, 0, STREAM_COMPUTE, 30 * MIB);
    memory_apply(t, 2.0, 0, MEM_GPU, MEM_PARAMS, 1, STREAM_COMPUTE, 10 * MIB);
    memory_apply(t, 3.0, 0, MEM_GPU, MEM_ACTIVATIONS, 0, STREAM_COMPUTE, -30 * MIB);
    memory_apply(t, 4.0, 0, MEM_GPU, MEM_STEP_COPIES, 2, STREAM_COMPUTE, 40 * MIB);
    const MemAccount *a = memory_account(t, 0, MEM_GPU);
    assert_false(a->is_oom);
    assert_true(a->reserved_bytes == 50 * MIB);
    assert_true(a->reserved_peak_bytes == 50 * MIB); /* 40 then 10 + 40: never more */
    /* 30 more: 50 + 30 = 80 > 79 and nothing cached: out of memory at t = 5, with 80 + 11 */
    memory_apply(t, 5.0, 0, MEM_GPU, MEM_BUFFERS, 3, STREAM_GATHER, 30 * MIB);
    assert_true(a->is_oom);
    assert_true(a->oom_time_s == 5.0);
    assert_true(a->oom_bytes == 91 * MIB);
    uint32_t rank = 9;
    MemSpace space = MEM_CPU;
    assert_ptr_equal(memory_first_oom(t, &rank, &space), a);
    assert_int_equal(rank, 0);
    assert_int_equal(space, MEM_GPU);
    memory_destroy(t);
}

/* A model built whole, then partitioned (--zero-init off): 60 MiB in 3 tensors of 20 MiB
 * are held, freed and the cache emptied before the first op. The reserved peak is those 60
 * MiB at 0 s, the allocator is empty again, and the step's 30 MiB then reserves afresh; 70
 * MiB in the 80 MiB the allocator may use is out of memory at 0 s. */
static void test_memory_preload_gpu(void **state)
{
    (void)state;
    MemTracker *t = memory_create(1, 1, 100 * MIB, 1e12, 0, NULL);
    memory_set_gpu_runtime(t, 1, 10 * MIB, 10 * MIB, false);
    memory_preload_gpu(t, 60 * MIB, 3);
    const MemAccount *a = memory_account(t, 0, MEM_GPU);
    assert_true(a->reserved_peak_bytes == 60 * MIB);
    assert_true(a->reserved_peak_time_s == 0.0);
    assert_true(a->at_reserved_peak[MEM_PARAMS] == 60 * MIB);
    assert_true(a->reserved_bytes == 0.0);
    assert_false(a->is_oom);
    memory_apply(t, 1.0, 0, MEM_GPU, MEM_ACTIVATIONS, 0, STREAM_COMPUTE, 30 * MIB);
    assert_true(a->reserved_bytes == 30 * MIB);
    assert_true(memory_gpu_device_peak_bytes(a) == 70 * MIB);
    memory_destroy(t);
    t = memory_create(1, 1, 100 * MIB, 1e12, 0, NULL);
    memory_set_gpu_runtime(t, 1, 10 * MIB, 10 * MIB, false);
    memory_preload_gpu(t, 100 * MIB, 5);
    a = memory_account(t, 0, MEM_GPU);
    assert_true(a->is_oom);
    assert_true(a->oom_time_s == 0.0);
    assert_true(a->oom_bytes == 110 * MIB);
    memory_destroy(t);
}

/* Without the replay (no memory_set_gpu_runtime) the verdict is allocated bytes > capacity. */
static void test_memory_without_allocator_replay(void **state)
{
    (void)state;
    MemTracker *t = memory_create(1, 1, 100 * MIB, 1e12, 0, NULL);
    memory_apply(t, 1.0, 0, MEM_GPU, MEM_PARAMS, 0, STREAM_COMPUTE, 100 * MIB);
    const MemAccount *a = memory_account(t, 0, MEM_GPU);
    assert_false(a->is_oom);
    assert_true(a->reserved_peak_bytes == 0);
    assert_true(memory_gpu_device_peak_bytes(a) == 100 * MIB);
    memory_apply(t, 2.0, 0, MEM_GPU, MEM_PARAMS, 1, STREAM_COMPUTE, 1);
    assert_true(a->is_oom);
    memory_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_reserved_peak_and_device_peak),
        cmocka_unit_test(test_memory_release_then_oom),
        cmocka_unit_test(test_memory_preload_gpu),
        cmocka_unit_test(test_memory_without_allocator_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
