/*
 * test_runtime_memory.c - CUDA context, cuBLAS workspaces and NCCL buffers per GPU, against
 * hand-computed bytes, and the platform's "runtime" section as read from a file.
 *
 * NCCL (src/init.cc): LL 8 x 512 x 8 x 16 = 524,288 B, LL128 120 x 640 x 8 x 8 = 4,915,200 B,
 * Simple 4 MiB = 4,194,304 B per connection, mapped in 2 MiB granules (12 MiB a P2P
 * connection, 10 MiB a network end), per channel, per algorithm connected (ring, tree, NVLS)
 * and per communicator, by NCCL release.
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

static Platform platform_file(const char *name)
{
    Platform p;
    Err err = {0};
    assert_int_equal(platform_load(&p, name, ZEROSIM_SOURCE_DIR, &err), 0);
    return p;
}

static ZeroConfig zero_stage(unsigned stage)
{
    ZeroConfig z;
    memset(&z, 0, sizeof z);
    z.stage = stage;
    z.reduce_bucket_size = 500000000; /* DeepSpeed's defaults: 5e8 elements */
    z.allgather_bucket_size = 500000000;
    z.prefetch_bucket_size = 50000000; /* stage3_prefetch_bucket_size 5e7 */
    return z;
}

#define MiB 1048576ull

static void test_runtime_memory_nccl_constants(void **state)
{
    (void)state;
    assert_int_equal(RUNTIME_NCCL_LL_BYTES, 8 * 512 * 8 * 16);
    assert_int_equal(RUNTIME_NCCL_LL128_BYTES, 120 * 640 * 8 * 8);
    assert_int_equal(RUNTIME_NCCL_CONNECTION_BYTES, 9633792);
    /* P2P read: sender 4,096 + 4,194,304 -> 6 MiB, receiver 4,096 + 524,288 + 4,915,200 =
     * 5,443,584 -> 6 MiB; write: sender 4,096 -> 2 MiB, receiver 9,637,888 -> 10 MiB */
    assert_int_equal(RUNTIME_NCCL_P2P_CONNECTION_BYTES, 6 * MiB + 6 * MiB);
    assert_int_equal(RUNTIME_NCCL_P2P_CONNECTION_BYTES, 2 * MiB + 10 * MiB);
    /* network ends: 9,633,792 (receiver) and 9,109,504 (sender) B, each -> 10 MiB */
    assert_int_equal(RUNTIME_NCCL_NET_END_BYTES, 10 * MiB);
}

/* One DGX A100 node, 8 GPUs, 24 execution channels (nccl.channels 12), NCCL 2.30 (lazy):
 * ZeRO-3's all-gathers and reduce-scatters and the scalar all-reduce all run the ring, so
 * only the ring is connected: 8 P2P connections x 12 MiB / 8 GPUs = 12 MiB a channel,
 * x 24 = 288 MiB = 301,989,888 B (before: 24 x 9,633,792 = 231,211,008 B). */
static void test_runtime_memory_ring_one_node(void **state)
{
    (void)state;
    Platform p = platform_file("dgx-a100-80g");
    ZeroConfig z = zero_stage(3);
    assert_int_equal(p.nccl.version, 230);
    assert_int_equal(runtime_nccl_algos(&p, &z, 8, 1), RUNTIME_NCCL_RING);
    RuntimeMemory rt;
    runtime_memory(&p, &z, RUNTIME_FSDP, 8, &rt);
    assert_true(rt.is_counted);
    assert_int_equal(rt.n_communicators, 1);
    assert_int_equal(rt.nccl.ring_bytes, 24ull * 12 * MiB); /* 301,989,888 */
    assert_int_equal(rt.nccl.tree_bytes + rt.nccl.nvls_bytes + rt.nccl.nvls_tree_bytes, 0);
    assert_int_equal(rt.nccl_bytes, 301989888ull);
    assert_int_equal(rt.outside_bytes, p.runtime.cuda_context_bytes + 301989888ull);
    assert_int_equal(rt.cublas_workspace_bytes, 2ull * p.runtime.cublas_workspace_bytes);
}

/* Two DGX A100 nodes, 16 GPUs, NCCL 2.21 (eager: ring and tree at init). Per channel, ring:
 * 2 nodes x (7 P2P x 12 MiB + 2 network ends x 10 MiB) = 208 MiB over 16 GPUs = 13 MiB;
 * tree: 2 x 7 reverse chain links x 12 MiB + 1 tree edge x 2 directions x 2 ends x 10 MiB =
 * 208 MiB, 13 MiB a GPU. x 24 channels: 312 MiB each, 624 MiB = 654,311,424 B. */
static void test_runtime_memory_ring_and_tree_eager_two_nodes(void **state)
{
    (void)state;
    Platform p = platform_file("dgx-a100-80g");
    p.nccl.version = 221;
    ZeroConfig z = zero_stage(2);
    assert_int_equal(runtime_nccl_algos(&p, &z, 16, 2), RUNTIME_NCCL_RING | RUNTIME_NCCL_TREE);
    RuntimeMemory rt;
    runtime_memory(&p, &z, RUNTIME_FSDP, 16, &rt);
    assert_int_equal(rt.nccl.ring_bytes, 24ull * 13 * MiB); /* 327,155,712 */
    assert_int_equal(rt.nccl.tree_bytes, 24ull * 13 * MiB);
    assert_int_equal(rt.nccl_bytes, 654311424ull);
    /* eager on one node: the tree adds 7 reverse links x 12 MiB / 8 GPUs = 10.5 MiB a channel */
    RuntimeNcclBytes b;
    runtime_nccl_comm_bytes(&p, 8, 1, RUNTIME_NCCL_RING | RUNTIME_NCCL_TREE, 221, &b);
    assert_int_equal(b.ring_bytes, 24ull * 12 * MiB);
    assert_int_equal(b.tree_bytes, 24ull * 21 * MiB / 2); /* 264,241,152 */
    /* 2.30 on these two nodes: the scalar all-reduce runs the tree, so it is connected too */
    p.nccl.version = 230;
    assert_true(runtime_nccl_algos(&p, &z, 16, 2) & RUNTIME_NCCL_TREE);
}

/* NVLS on one DGX H100 (8 heads, 16 NVLS CTAs, 32 execution channels):
 *   2.22+: 8 x 16 x 2 x (128 KiB x 8) = 256 MiB + 2 MiB of credits = 270,532,608 B
 *   2.21:  8 x 32 x 2 x (1 MiB + 2 MiB) = 1,536 MiB
 *   2.20:  8 x 32 x 2 x (4 MiB + 2 MiB) = 3,072 MiB
 *   2.19:  8 x 16 x 2 x (4 MiB + 2 MiB) = 1,536 MiB;  2.16: none
 * and the published 2.20 log on 8 H200 with 24 channels: nvlsTotalSize 2,415,919,104. */
static void test_runtime_memory_nvls_dgx_h100(void **state)
{
    (void)state;
    Platform p = platform_file("dgx-h100");
    RuntimeNcclBytes b;
    runtime_nccl_comm_bytes(&p, 8, 1, RUNTIME_NCCL_NVLS, 230, &b);
    assert_int_equal(b.nvls_bytes, 258 * MiB);
    assert_int_equal(b.ring_bytes + b.tree_bytes + b.nvls_tree_bytes, 0);
    runtime_nccl_comm_bytes(&p, 8, 1, RUNTIME_NCCL_NVLS, 221, &b);
    assert_int_equal(b.nvls_bytes, 1536 * MiB);
    runtime_nccl_comm_bytes(&p, 8, 1, RUNTIME_NCCL_NVLS, 220, &b);
    assert_int_equal(b.nvls_bytes, 3072 * MiB);
    runtime_nccl_comm_bytes(&p, 8, 1, RUNTIME_NCCL_NVLS, 219, &b);
    assert_int_equal(b.nvls_bytes, 1536 * MiB);
    runtime_nccl_comm_bytes(&p, 8, 1, RUNTIME_NCCL_NVLS, 216, &b);
    assert_int_equal(b.nvls_bytes, 0);
    /* lazy, NVLS never run: only the credits (ncclNvlsSetup at init) */
    runtime_nccl_comm_bytes(&p, 8, 1, RUNTIME_NCCL_RING, 230, &b);
    assert_int_equal(b.nvls_bytes, 2 * MiB);
    Platform h200 = p;
    h200.nccl.channels = 12; /* 24 execution channels, as the log's */
    runtime_nccl_comm_bytes(&h200, 8, 1, RUNTIME_NCCL_NVLS, 220, &b);
    assert_int_equal(b.nvls_bytes, 2415919104ull);
    /* ZeRO-0's bucket all-reduce runs NVLS on one node under 2.30: 32 x 12 MiB + 258 MiB */
    ZeroConfig z = zero_stage(0);
    assert_true(runtime_nccl_algos(&p, &z, 8, 1) & RUNTIME_NCCL_NVLS);
    RuntimeMemory rt;
    runtime_memory(&p, &z, RUNTIME_FSDP, 8, &rt);
    assert_int_equal(rt.nccl.nvls_bytes, 258 * MiB);
    /* the A100 has no NVLS: nothing, whatever the release */
    Platform a100 = platform_file("dgx-a100-80g");
    runtime_nccl_comm_bytes(&a100, 8, 1, RUNTIME_NCCL_NVLS, 220, &b);
    assert_int_equal(b.nvls_bytes, 0);
}

static void test_runtime_memory_hybrid_and_single_gpu(void **state)
{
    (void)state;
    Platform p = platform_file("dgx-a100-80g");
    ZeroConfig z = zero_stage(3);
    z.shard_size = 8; /* shards inside a node: world + shard + replica communicators */
    RuntimeMemory rt;
    runtime_memory(&p, &z, RUNTIME_FSDP, 16, &rt);
    assert_int_equal(rt.n_communicators, 3);
    /* the shard group is one node's ring, 288 MiB; the replica group is 2 ranks on 2 nodes,
     * one GPU each: per channel 2 nodes x 2 network ends x 10 MiB / 2 = 20 MiB a GPU */
    RuntimeNcclBytes shard, replica;
    runtime_nccl_comm_bytes(&p, 8, 1, runtime_nccl_algos(&p, &z, 8, 1), 230, &shard);
    assert_int_equal(shard.ring_bytes, 288 * MiB);
    runtime_nccl_comm_bytes(&p, 2, 2, RUNTIME_NCCL_RING, 230, &replica);
    assert_int_equal(replica.ring_bytes, 24 * 20 * MiB);
    runtime_memory(&p, &z, RUNTIME_FSDP, 1, &rt); /* one GPU: no NCCL */
    assert_int_equal(rt.n_communicators, 0);
    assert_int_equal(rt.nccl_bytes, 0);
    assert_int_equal(rt.outside_bytes, p.runtime.cuda_context_bytes);
    p.has_runtime = false;
    runtime_memory(&p, &z, RUNTIME_FSDP, 16, &rt);
    assert_false(rt.is_counted);
    assert_int_equal(rt.outside_bytes + rt.cublas_workspace_bytes, 0);
}

/* DeepSpeed's ZeRO-3 holds two communicators over the same 16 GPUs: zero.Init's world group
 * for the parameter all-gathers and the engine's clone of it for the gradient reductions
 * (partition_parameters.py Init ds_process_group; groups.py _clone_world_group). Two DGX A100
 * nodes, NCCL 2.30 (lazy): the world connects the all-gathers' ring, 24 x 13 MiB = 312 MiB;
 * the clone the reduce-scatters' ring and the scalar all-reduce's tree, 312 + 312 MiB; 936 MiB
 * in all, against 624 MiB for FSDP's one group carrying everything. Under 2.21 (eager) each
 * connects ring and tree: 2 x 624 MiB. ZeRO-2 runs everything on the clone: one. */
static void test_runtime_memory_deepspeed_zero3_two_groups(void **state)
{
    (void)state;
    Platform p = platform_file("dgx-a100-80g");
    ZeroConfig z = zero_stage(3);
    assert_int_equal(runtime_nccl_algos_of(&p, &z, 16, 2, RUNTIME_COLL_GATHERS),
                     RUNTIME_NCCL_RING);
    assert_int_equal(runtime_nccl_algos_of(&p, &z, 16, 2, RUNTIME_COLL_REDUCTIONS),
                     RUNTIME_NCCL_RING | RUNTIME_NCCL_TREE);
    RuntimeMemory ds, fsdp;
    runtime_memory(&p, &z, RUNTIME_DEEPSPEED, 16, &ds);
    runtime_memory(&p, &z, RUNTIME_FSDP, 16, &fsdp);
    assert_int_equal(ds.n_communicators, 2);
    assert_int_equal(fsdp.n_communicators, 1);
    assert_int_equal(ds.nccl.ring_bytes, 2 * 312 * MiB);
    assert_int_equal(ds.nccl.tree_bytes, 312 * MiB);
    assert_int_equal(ds.nccl_bytes, 936 * MiB);
    assert_int_equal(fsdp.nccl_bytes, 624 * MiB);
    assert_int_equal(ds.outside_bytes, p.runtime.cuda_context_bytes + 936 * MiB);
    p.nccl.version = 221;
    runtime_memory(&p, &z, RUNTIME_DEEPSPEED, 16, &ds);
    assert_int_equal(ds.nccl_bytes, 2 * 624 * MiB);
    p.nccl.version = 230;
    ZeroConfig z2 = zero_stage(2);
    runtime_memory(&p, &z2, RUNTIME_DEEPSPEED, 16, &ds);
    assert_int_equal(ds.n_communicators, 1);
    z.shard_size = 8; /* MiCS: its shard and replica groups, as FSDP's HYBRID_SHARD */
    runtime_memory(&p, &z, RUNTIME_DEEPSPEED, 16, &ds);
    assert_int_equal(ds.n_communicators, 3);
}

/* Expert parallelism: the EP group and the expert-data-parallel group are two communicators
 * more, each with its ring (16 GPUs on 2 nodes, ep 8: the EP group is one node's ring,
 * 288 MiB; the expert-DP group 2 ranks on 2 nodes, 480 MiB); ep = N leaves no expert-DP
 * group. */
static void test_runtime_memory_expert_parallel_groups(void **state)
{
    (void)state;
    Platform p = platform_file("dgx-a100-80g");
    ZeroConfig z = zero_stage(3);
    RuntimeMemory base, rt;
    runtime_memory(&p, &z, RUNTIME_FSDP, 16, &base);
    runtime_memory_ep(&p, &z, RUNTIME_FSDP, 16, 8, &rt);
    assert_int_equal(rt.n_communicators, 3);
    assert_int_equal(rt.nccl_bytes - base.nccl_bytes, 288 * MiB + 480 * MiB);
    runtime_memory_ep(&p, &z, RUNTIME_FSDP, 16, 16, &rt);
    assert_int_equal(rt.n_communicators, 2);
    runtime_memory_ep(&p, &z, RUNTIME_FSDP, 16, 1, &rt);
    assert_int_equal(rt.n_communicators, 1);
}

/* nccl.version: "2.M" or "2.M.P", absent the default; anything else one line naming it. */
static void test_runtime_memory_nccl_version_key(void **state)
{
    (void)state;
    static const char head[] =
        "{\"nccl\": {\"arch\": \"ampere\", \"cpu_vendor\": \"amd\", \"channels\": 12";
    struct {
        const char *tail;
        int rc;
        uint32_t version;
    } cases[] = {{", \"version\": \"2.21.5\"}}", 0, 221}, {", \"version\": \"2.18\"}}", 0, 218},
                 {"}}", 0, PLATFORM_NCCL_VERSION},        {", \"version\": \"3.0\"}}", -1, 0},
                 {", \"version\": \"2.x\"}}", -1, 0},     {", \"version\": 2.21}}", -1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Platform p = platform_file("dgx-a100-80g");
        FILE *f = fopen(ZEROSIM_SOURCE_DIR "/platforms/dgx-a100-80g.json", "rb");
        assert_non_null(f);
        static char text[65536];
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        /* replace the file's nccl section with the case's */
        char *sec = strstr(text, "\"nccl\": {");
        assert_non_null(sec);
        char buf[65536];
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(sec - text), text, head + 1, cases[i].tail);
        /* head + 1 drops the opening brace: the section closes the object */
        Err e = {0};
        int rc = platform_parse(&p, "a100.json", buf, strlen(buf), &e);
        assert_int_equal(rc, cases[i].rc);
        if (rc == 0)
            assert_int_equal(p.nccl.version, cases[i].version);
        else
            assert_non_null(strstr(e.msg, "a100.json: nccl.version: expected"));
    }
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
        cmocka_unit_test(test_runtime_memory_ring_one_node),
        cmocka_unit_test(test_runtime_memory_ring_and_tree_eager_two_nodes),
        cmocka_unit_test(test_runtime_memory_nvls_dgx_h100),
        cmocka_unit_test(test_runtime_memory_hybrid_and_single_gpu),
        cmocka_unit_test(test_runtime_memory_platform_section),
        cmocka_unit_test(test_runtime_memory_deepspeed_zero3_two_groups),
        cmocka_unit_test(test_runtime_memory_expert_parallel_groups),
        cmocka_unit_test(test_runtime_memory_nccl_version_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
