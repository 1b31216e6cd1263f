/*
 * test_runtime_memory.c - CUDA context, cuBLAS workspaces and NCCL buffers per GPU, against
 * hand-computed bytes, and the platform's "runtime" section as read from a file.
 *
 * NCCL (src/init.cc): LL 8 x 512 x 8 x 16 = 524,288 B, LL128 120 x 640 x 8 x 8 = 4,915,200 B,
 * Simple 4 MiB = 4,194,304 B: 9,633,792 B per connection, one per channel per communicator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/platform.h"
#include "model/runtime_memory.h"

#include <stdio.h>
#include <string.h>

static Platform platform_with_runtime(void)
{
    Platform p;
    memset(&p, 0, sizeof p);
    p.n_nodes = 2;
    p.gpus_per_node = 8;
    p.has_runtime = true;
    p.runtime.cuda_context_bytes = 266076160;
    p.runtime.cublas_workspace_bytes = 8519680;
    p.nccl.channels = 8; /* search channels: 16 execution channels */
    return p;
}

static void test_runtime_memory_nccl_constants(void **state)
{
    (void)state;
    assert_int_equal(RUNTIME_NCCL_LL_BYTES, 8 * 512 * 8 * 16);
    assert_int_equal(RUNTIME_NCCL_LL128_BYTES, 120 * 640 * 8 * 8);
    assert_int_equal(RUNTIME_NCCL_CONNECTION_BYTES, 9633792);
}

static void test_runtime_memory_world_group(void **state)
{
    (void)state;
    Platform p = platform_with_runtime();
    ZeroConfig z;
    memset(&z, 0, sizeof z);
    z.stage = 2;
    RuntimeMemory rt;
    runtime_memory(&p, &z, 16, &rt);
    assert_true(rt.is_counted);
    assert_int_equal(rt.n_communicators, 1);
    assert_int_equal(rt.nccl_bytes, 16ull * 9633792);                /* 154,140,672 */
    assert_int_equal(rt.outside_bytes, 266076160ull + 154140672ull); /* 420,216,832 */
    assert_int_equal(rt.cublas_workspace_bytes, 2ull * 8519680);     /* two handles */
}

static void test_runtime_memory_hybrid_and_single_gpu(void **state)
{
    (void)state;
    Platform p = platform_with_runtime();
    ZeroConfig z;
    memset(&z, 0, sizeof z);
    z.stage = 3;
    z.shard_size = 8; /* shards inside a node: world + shard + replica communicators */
    RuntimeMemory rt;
    runtime_memory(&p, &z, 16, &rt);
    assert_int_equal(rt.n_communicators, 3);
    assert_int_equal(rt.nccl_bytes, 3ull * 16 * 9633792);
    runtime_memory(&p, &z, 1, &rt); /* one GPU: no NCCL */
    assert_int_equal(rt.n_communicators, 0);
    assert_int_equal(rt.nccl_bytes, 0);
    assert_int_equal(rt.outside_bytes, 266076160);
    p.has_runtime = false;
    runtime_memory(&p, &z, 16, &rt);
    assert_false(rt.is_counted);
    assert_int_equal(rt.outside_bytes + rt.cublas_workspace_bytes, 0);
}

/* Expert parallelism: the EP group and the expert-data-parallel group are two communicators
 * more (16 GPUs, ep 8: 3 x 16 channels x 9,633,792 B); ep = N leaves no expert-DP group. */
static void test_runtime_memory_expert_parallel_groups(void **state)
{
    (void)state;
    Platform p = platform_with_runtime();
    ZeroConfig z;
    memset(&z, 0, sizeof z);
    z.stage = 3;
    RuntimeMemory rt;
    runtime_memory_ep(&p, &z, 16, 8, &rt);
    assert_int_equal(rt.n_communicators, 3);
    assert_int_equal(rt.nccl_bytes, 3ull * 16 * 9633792);
    runtime_memory_ep(&p, &z, 16, 16, &rt);
    assert_int_equal(rt.n_communicators, 2);
    runtime_memory_ep(&p, &z, 16, 1, &rt);
    assert_int_equal(rt.n_communicators, 1);
}

static void test_runtime_memory_platform_section(void **state)
{
    (void)state;
    Platform p;
    Err err = {0};
    assert_int_equal(platform_load(&p, "dgx-h100", ZEROSIM_SOURCE_DIR, &err), 0);
    assert_true(p.has_runtime);
    assert_int_equal(p.runtime.cublas_workspace_bytes, 33554432); /* 32 MiB on sm90 */
    assert_int_equal(p.nccl.channels, 16);
    assert_int_equal(runtime_nccl_channels(&p), 32); /* execution channels: twice the search */
    /* the same file without runtime.cuda_context_bytes: one line naming the key */
    FILE *f = fopen(ZEROSIM_SOURCE_DIR "/platforms/dgx-h100.json", "rb");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *key = strstr(text, "\"cuda_context_bytes\": 266076160,");
    assert_non_null(key);
    memset(key, ' ', strlen("\"cuda_context_bytes\": 266076160,"));
    Err e2 = {0};
    assert_int_equal(platform_parse(&p, "h100.json", text, n, &e2), -1);
    assert_non_null(strstr(e2.msg, "h100.json: runtime.cuda_context_bytes: expected integer"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_memory_nccl_constants),
        cmocka_unit_test(test_runtime_memory_world_group),
        cmocka_unit_test(test_runtime_memory_hybrid_and_single_gpu),
        cmocka_unit_test(test_runtime_memory_platform_section),
        cmocka_unit_test(test_runtime_memory_expert_parallel_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
