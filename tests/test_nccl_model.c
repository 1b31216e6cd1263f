/*
 * test_nccl_model.c - NCCL's tuner arithmetic (model/nccl_model.c) against hand-computed
 * values from src/graph/tuning.cc's constants.
 *
 * Two communicators on DGX A100 nodes (Ampere, AMD hosts, 12 channels): one node of 8 GPUs at
 * 230 GB/s of NVLink bus bandwidth, and 128 nodes (1,024 ranks) whose rings run at 8 GPUs x
 * 24 GB/s of NIC path = 192 GB/s. Latencies in microseconds, as NCCL writes them:
 *   8 ranks, all-reduce 8 B:  Ring/LL 6.6 + 14 x 0.6 = 15.0 (Tree/LL 6.8 + 2 x 7 x 0.6 = 15.2)
 *   8 ranks, all-reduce 1 GB: Ring/Simple 8.4 + 14 x 3.4 = 56.0 + 1e9 / (230 x 8/14 GB/s)
 *   1,024 ranks, all-reduce 8 B: Tree/LL 6.8 + 2 (7 x 0.6 + log2(128) x 5.0) = 85.2, while
 *     Ring/LL pays 6.6 + 1792 x 2.0 (AMD's net overhead) + 254 x 2.7 = 4276.4
 *   1,024 ranks, all-gather 8 B: Ring/LL 6.6 + 896 x 2.0 + 127 x 2.7 = 2141.5 (linear in ranks)
 *   1,024 ranks, all-reduce 1 GB: Tree/Simple 8.4 + 2 (7 x 4 + 7 x 14) = 260.4 + 1e9 /
 *     (min(0.92 x 192, 12 x 17.8) / 2 GB/s); Ring/Simple would pay 14316.4 x 1.4 (plateau)
 *   1,024 ranks, all-gather 8 GiB: Ring/LL128 14 + 896 x 2 + 127 x 4 = 2314 + 8 GiB /
 *     (0.92 x 192 x 1024/1023 GB/s), ahead of Ring/Simple's 7162.4 us latency.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/nccl_model.h"

#include <math.h>
#include <string.h>

static NcclComm a100(uint32_t n_ranks, uint32_t n_nodes)
{
    NcclComm c = {.arch = PLATFORM_ARCH_AMPERE,
                  .cpu = PLATFORM_CPU_AMD,
                  .n_ranks = n_ranks,
                  .n_nodes = n_nodes,
                  .n_channels = 12,
                  .is_nvlink_intra = true,
                  .has_ll128 = true};
    double bus = n_nodes == 1 ? 230e9 : 192e9;
    c.bw_intra_bytes_per_s = c.bw_inter_bytes_per_s = bus / 12;
    return c;
}

static void assert_rel(double got, double want, double tol)
{
    if (fabs(got - want) > tol * fabs(want))
        fail_msg("got %.9g, want %.9g (tolerance %g)", got, want, tol);
}

static void test_nccl_model_choose_small_all_reduce_one_node_is_ring_ll(void **state)
{
    (void)state;
    NcclComm c = a100(8, 1);
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_LL);
    assert_rel(ch.latency_s, 15.0e-6, 1e-9);
    /* LL: min(llMaxBw 87.7, 230 / 2) bus GB/s, x 8/14 to algorithm bandwidth */
    assert_rel(ch.algbw_bytes_per_s, 87.7e9 * 8 / 14, 1e-6);
    NcclChoice tree;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL, 8, &tree);
    assert_rel(tree.latency_s, 15.2e-6, 1e-9);
}

static void test_nccl_model_choose_large_all_reduce_one_node_is_ring_simple(void **state)
{
    (void)state;
    NcclComm c = a100(8, 1);
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 1e9, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_SIMPLE);
    assert_rel(ch.latency_s, 56.0e-6, 1e-9);
    assert_rel(ch.time_s, 56.0e-6 + 1e9 / (230e9 * 8 / 14), 1e-6);
}

static void test_nccl_model_choose_small_all_reduce_1024_ranks_is_tree_ll(void **state)
{
    (void)state;
    NcclComm c = a100(1024, 128);
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_TREE);
    assert_int_equal(ch.proto, NCCL_PROTO_LL);
    assert_rel(ch.latency_s, 85.2e-6, 1e-9);
    /* tree LL: min(min(0.92 x 192, 12 x 17.8) / 3.8, llMaxBw AMD 3+ nodes 19.0) x 1/2 */
    assert_rel(ch.algbw_bytes_per_s, 9.5e9, 1e-6);
    NcclChoice ring;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL, 8, &ring);
    assert_rel(ring.latency_s, 4276.4e-6, 1e-9);
}

static void test_nccl_model_ring_all_gather_latency_grows_with_ranks(void **state)
{
    (void)state;
    NcclComm c = a100(1024, 128);
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_GATHER, 8, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_LL);
    assert_rel(ch.latency_s, 2141.5e-6, 1e-9);
    NcclComm d = a100(2048, 256); /* twice the ranks: 1792 + 255 steps */
    NcclChoice ch2 = nccl_model_choose(&d, NCCL_FUNC_ALL_GATHER, 8, false, NCCL_ALGO_RING);
    assert_rel(ch2.latency_s, (6.6 + 1792 * 2.0 + 255 * 2.7) * 1e-6, 1e-9);
}

static void test_nccl_model_choose_large_all_reduce_1024_ranks_is_tree_simple(void **state)
{
    (void)state;
    NcclComm c = a100(1024, 128);
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 1e9, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_TREE);
    assert_int_equal(ch.proto, NCCL_PROTO_SIMPLE);
    assert_rel(ch.latency_s, 260.4e-6, 1e-9);
    assert_rel(ch.time_s, 260.4e-6 + 1e9 / (0.92 * 192e9 / 2), 1e-6);
    /* forced ring: the multi-node Simple plateau multiplies its latency by 1.4 */
    NcclChoice ring = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 1e9, true, NCCL_ALGO_RING);
    assert_int_equal(ring.algo, NCCL_ALGO_RING);
    assert_int_equal(ring.proto, NCCL_PROTO_LL128);
    assert_rel(ring.latency_s, (14.0 + 1792 * 2.0 + 254 * 4.0) * 1e-6, 1e-9);
    NcclChoice simple;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1e9, &simple);
    assert_rel(simple.latency_s, (8.4 + 1792 * 6.0 + 254 * 14.0) * 1.4e-6, 1e-9);
}

static void test_nccl_model_choose_large_all_gather_1024_ranks_is_ring_ll128(void **state)
{
    (void)state;
    NcclComm c = a100(1024, 128);
    const double bytes = 8589934592.0;
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_GATHER, bytes, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_LL128);
    assert_rel(ch.time_s, 2314e-6 + bytes / (0.92 * 192e9 * 1024 / 1023), 1e-6);
    /* without LL128 (a path beyond PXB) it is Simple's */
    c.has_ll128 = false;
    ch = nccl_model_choose(&c, NCCL_FUNC_ALL_GATHER, bytes, false, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_SIMPLE);
    assert_rel(ch.time_s, 7162.4e-6 + bytes / (192e9 * 1024 / 1023), 1e-6);
}

/* One GPU per node: PAT runs all-gathers (8 + log2(n) x 14/3.5 + n x 2.8 us); forcing the tree
 * on an all-gather falls back to what NCCL can run. */
static void test_nccl_model_pat_and_forced_fallback(void **state)
{
    (void)state;
    NcclComm c = a100(16, 16);
    NcclChoice pat;
    double t =
        nccl_model_time_s(&c, NCCL_FUNC_ALL_GATHER, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 8, &pat);
    assert_true(t > 0);
    assert_rel(pat.latency_s, (8.0 + 4 * 14.0 / 3.5 + 16 * 2.8) * 1e-6, 1e-9);
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_GATHER, NCCL_ALGO_PAT, NCCL_PROTO_LL, 8, NULL) <
                0);
    NcclComm d = a100(8, 1);
    assert_true(
        nccl_model_time_s(&d, NCCL_FUNC_ALL_GATHER, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 8, NULL) < 0);
    NcclChoice ch = nccl_model_choose(&d, NCCL_FUNC_ALL_GATHER, 8, true, NCCL_ALGO_TREE);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
}

/* The communicator from a platform: DGX A100 numbers, one node and 128. */
static void test_nccl_model_comm_from_platform(void **state)
{
    (void)state;
    Platform p;
    memset(&p, 0, sizeof p);
    p.gpus_per_node = 8;
    p.has_nvlink = true;
    p.nvlink.bw_bytes_per_s = 230e9;
    p.pcie.gpu_link.bw_bytes_per_s = 24e9;
    p.pcie.nics_per_switch = 2;
    p.nic.per_node = 8;
    p.nic.link.bw_bytes_per_s = 25e9;
    p.fabric.oversubscription = 1.0;
    p.nccl.arch = PLATFORM_ARCH_AMPERE;
    p.nccl.cpu_vendor = PLATFORM_CPU_AMD;
    p.nccl.channels = 12;
    NcclComm c;
    nccl_model_comm(&p, 8, 1, &c);
    assert_rel(c.bw_intra_bytes_per_s * 12, 230e9, 1e-12);
    assert_true(c.has_ll128);
    nccl_model_comm(&p, 1024, 128, &c);
    assert_rel(c.bw_inter_bytes_per_s * 12, 192e9, 1e-12); /* 8 x min(25, 24) GB/s */
    assert_rel(c.bw_intra_bytes_per_s, c.bw_inter_bytes_per_s, 1e-12);
    p.pcie.nics_per_switch = 0; /* NICs behind the CPU: LL128 off across nodes */
    nccl_model_comm(&p, 1024, 128, &c);
    assert_false(c.has_ll128);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_model_choose_small_all_reduce_one_node_is_ring_ll),
        cmocka_unit_test(test_nccl_model_choose_large_all_reduce_one_node_is_ring_simple),
        cmocka_unit_test(test_nccl_model_choose_small_all_reduce_1024_ranks_is_tree_ll),
        cmocka_unit_test(test_nccl_model_ring_all_gather_latency_grows_with_ranks),
        cmocka_unit_test(test_nccl_model_choose_large_all_reduce_1024_ranks_is_tree_simple),
        cmocka_unit_test(test_nccl_model_choose_large_all_gather_1024_ranks_is_ring_ll128),
        cmocka_unit_test(test_nccl_model_pat_and_forced_fallback),
        cmocka_unit_test(test_nccl_model_comm_from_platform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
