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
 *
 * NVLS and NVLSTree on DGX H100 nodes (Hopper, Intel hosts, 16 ring channels, 370 GB/s of
 * NVLink, 8 NICs of 50 GB/s behind 49 GB/s PCIe links, nvlink.nvls), from search.cc's NVLS
 * graph and tuning.cc's formulas:
 *   NVLS graph, one node: 8 channels (one head per GPU); a GPU carries 9 x bwIntra each way:
 *     9 x 50 = 450 > 370, 9 x 40 = 360 <= 370 -> bwIntra 40; bwInter climbs from 40 while
 *     below 2 x 40: 50, 60 (the top of sm90SpeedArrayIntra) -> 60.
 *   NVLS all-reduce, 8 ranks: min(40 x 0.85 x 7/8 x 2, 60) = 59.5 per channel, x 8 = 476 bus
 *     GB/s, x 8/14 = 272 GB/s algorithm bandwidth; latency the NVLink NVLS hop, 25 us.
 *     8 B: Ring/LL's 15.0 us beats NVLS's 25: NCCL keeps Ring/LL. 1 GB: NVLS 25 + 1e9 / 272
 *     = 3701.5 us against Ring/Simple 56 + 1e9 / (370 x 8/14) = 4785.7 us: NVLS.
 *   NVLS all-gather, 8 ranks: 8 x min(40 x 0.85 x 7/8 x 7/8, 60) = 208.25 GB/s (not converted),
 *     below Ring/Simple's 370 x 8/7: 1 GB stays on the ring.
 *   NVLS graph, 128 nodes: 8 channels (one per NIC); sm90SpeedArrayInter within the NIC path
 *     min(50, 49) = 49 and 9 x speed <= 370: 48, 45, 42 fail, 40 -> bwIntra 40; bwInter climbs
 *     42, 45, 48 (the top) -> 48.
 *   NVLSTree all-reduce, 1,024 ranks: min(59.5, 48, perChMaxNVLSTreeBw 45.5) = 45.5 x 8 = 364
 *     bus GB/s, x 1024/2046 = 182.2 GB/s; latency 25 + 2 x log2(128) x 20.9 = 317.6 us.
 *     8 B: Tree/LL 6.8 + 2 (7 x 0.6 + 7 x 5.0) = 85.2 us wins. 1 GB: NVLSTree 317.6 + 1e9 /
 *     182.2 = 5806.7 us against Tree/Simple 8.4 + 2 (7 x 4 + 7 x 14) = 260.4 + 1e9 /
 *     (min(0.92 x 370, 16 x 36.0) / 2) = 6135.8 us: NVLSTree. NVLS itself needs CollNet
 *     across nodes: not a candidate.
 *
 * The same communicators under older releases (tuning.cc at the tags named):
 *   NCCL 2.12.10 (v2.12.7-1 tables: baseLat Tree {4.4, 4.4, 0}, Ring {3.6, 10.0, 8.4}; hwLat
 *   NVLink Tree {.52, 1.25, 28}, Ring {.47, 1.9, 3.4}; network Tree {5.0, 8.5, 28}, Ring
 *   {2.7, 4.0, 28}; LL x 1/4 for an all-reduce; LL's intra-node hop x 1.8 across nodes; no
 *   network post overhead; a ring all-reduce counts 2 nNodes network steps):
 *   8 ranks, all-reduce 8 B: Ring/LL 3.6 + 14 x 0.47 = 10.18 (Tree/LL 4.4 + 2 x 7 x 0.52 =
 *     11.68) at min(87.7, 230 / 4) x 8/14 GB/s.
 *   8 ranks, all-reduce 1 GB: Ring/Simple 8.4 + 14 x 3.4 = 56.0 + 1e9 / (230 x 8/14), as today.
 *   1,024 ranks, all-reduce 8 B: Tree/LL 4.4 + 2 (7 x 0.52 x 1.8 + 7 x 5.0) = 87.504; Ring/LL
 *     3.6 + (2046 - 256) x 0.846 + 256 x 2.7 = 2209.14.
 *   1,024 ranks, all-reduce 1 GB: Tree/Simple 0 + 2 (7 x 28 + 7 x 28) = 784 + 1e9 /
 *     (min(0.92 x 192, 12 x 17.8) / 2) = 12106.5 us; Tree/LL128 140.9 + 1e9 / (min(0.92 x 192
 *     x 120/128, 12 x 20) / 2) = 12218.2 us; Ring/Simple (8.4 + 1790 x 3.4 + 256 x 28) x 1.9
 *     (plateau: 1 GB >= 1024 / 16 x 64 KiB) = 25198.6 us + 1e9 / (192 x 1024/2046).
 *   NCCL 2.21.5 (v2.21.5-1: NVLink NVLSTree hop 25, network NVLSTree hop 14) on the H100
 *   nodes: NVLSTree latency 25 + 2 x log2(2) x 14 = 53 us on 2 nodes (nccl#1244 measured
 *   ~47), 25 + 2 x 7 x 14 = 221 us on 128.
 *   NCCL 2.17.1 (v2.17.1-1, before the base latencies of v2.18.1-1) on one H100 node, 8 B:
 *   Ring/LL 3.6 + 14 x 0.47 = 10.18 us (NVLS: its base 40 us).
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

/* A DGX H100 as platforms/dgx-h100.json describes it (the fields NCCL's tuner reads). */
static Platform h100_platform(void)
{
    Platform p;
    memset(&p, 0, sizeof p);
    p.gpus_per_node = 8;
    p.has_nvlink = p.has_nvswitch = p.has_nvls = true;
    p.nvlink.bw_bytes_per_s = 370e9;
    p.pcie.gpu_link.bw_bytes_per_s = 49e9;
    p.pcie.switch_uplink.bw_bytes_per_s = 49e9;
    p.pcie.nics_per_switch = 1;
    p.nic.per_node = 8;
    p.nic.link.bw_bytes_per_s = 50e9;
    p.fabric.oversubscription = 1.0;
    p.nccl.arch = PLATFORM_ARCH_HOPPER;
    p.nccl.cpu_vendor = PLATFORM_CPU_INTEL;
    p.nccl.channels = 16;
    return p;
}

static void test_nccl_model_comm_nvls_graph_h100(void **state)
{
    (void)state;
    Platform p = h100_platform();
    NcclComm c;
    nccl_model_comm(&p, 8, 1, &c);
    assert_true(c.has_nvls);
    assert_int_equal(c.nvls_channels, 8);
    assert_rel(c.nvls_bw_intra_bytes_per_s, 40e9, 1e-12);
    assert_rel(c.nvls_bw_inter_bytes_per_s, 60e9, 1e-12);
    nccl_model_comm(&p, 1024, 128, &c);
    assert_true(c.has_nvls);
    assert_int_equal(c.nvls_channels, 8);
    assert_rel(c.nvls_bw_intra_bytes_per_s, 40e9, 1e-12);
    assert_rel(c.nvls_bw_inter_bytes_per_s, 48e9, 1e-12);
    nccl_model_comm(&p, 128, 128, &c); /* one GPU per node: no NVLS graph */
    assert_false(c.has_nvls);
}

static void test_nccl_model_nvls_all_reduce_8_ranks(void **state)
{
    (void)state;
    Platform p = h100_platform();
    NcclComm c;
    nccl_model_comm(&p, 8, 1, &c);
    NcclChoice nvls;
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 8,
                                  &nvls) > 0);
    assert_rel(nvls.latency_s, 25e-6, 1e-9);
    assert_rel(nvls.algbw_bytes_per_s, 476e9 * 8 / 14, 1e-6);
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_LL, 8,
                                  NULL) < 0); /* Simple only */
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE,
                                  8, NULL) < 0); /* not on one node */
    NcclChoice small = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, false, NCCL_ALGO_RING);
    assert_int_equal(small.algo, NCCL_ALGO_RING);
    assert_int_equal(small.proto, NCCL_PROTO_LL);
    assert_rel(small.latency_s, 15.0e-6, 1e-9);
    NcclChoice large = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 1e9, false, NCCL_ALGO_RING);
    assert_int_equal(large.algo, NCCL_ALGO_NVLS);
    assert_int_equal(large.proto, NCCL_PROTO_SIMPLE);
    assert_rel(large.time_s, 25e-6 + 1e9 / (476e9 * 8 / 14), 1e-6);
    NcclChoice ring;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1e9, &ring);
    assert_rel(ring.time_s, 56e-6 + 1e9 / (370e9 * 8 / 14), 1e-6);
    /* all-gather: NVLS runs it, at 208.25 GB/s, slower than the ring */
    NcclChoice ag;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_GATHER, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 1e9, &ag);
    assert_rel(ag.algbw_bytes_per_s, 208.25e9, 1e-6);
    NcclChoice ag_best = nccl_model_choose(&c, NCCL_FUNC_ALL_GATHER, 1e9, false, NCCL_ALGO_RING);
    assert_int_equal(ag_best.algo, NCCL_ALGO_RING);
    /* NCCL_ALGO=NVLS */
    NcclChoice forced = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, true, NCCL_ALGO_NVLS);
    assert_int_equal(forced.algo, NCCL_ALGO_NVLS);
    assert_rel(forced.time_s, 25e-6 + 8 / (476e9 * 8 / 14), 1e-9);
}

static void test_nccl_model_nvls_tree_all_reduce_1024_ranks(void **state)
{
    (void)state;
    Platform p = h100_platform();
    NcclComm c;
    nccl_model_comm(&p, 1024, 128, &c);
    NcclChoice nt;
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE,
                                  8, &nt) > 0);
    assert_rel(nt.latency_s, (25 + 2 * 7 * 20.9) * 1e-6, 1e-9);
    assert_rel(nt.algbw_bytes_per_s, 364e9 * 1024 / 2046, 1e-6);
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 8,
                                  NULL) < 0); /* NVLS across nodes needs CollNet */
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_GATHER, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE,
                                  8, NULL) < 0); /* all-reduce only */
    NcclChoice small = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, false, NCCL_ALGO_RING);
    assert_int_equal(small.algo, NCCL_ALGO_TREE);
    assert_int_equal(small.proto, NCCL_PROTO_LL);
    assert_rel(small.latency_s, 85.2e-6, 1e-9);
    NcclChoice large = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 1e9, false, NCCL_ALGO_RING);
    assert_int_equal(large.algo, NCCL_ALGO_NVLS_TREE);
    assert_rel(large.time_s, 317.6e-6 + 1e9 / (364e9 * 1024 / 2046), 1e-6);
    NcclChoice tree;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1e9, &tree);
    assert_rel(tree.time_s, 260.4e-6 + 1e9 / (0.92 * 370e9 / 2), 1e-6);
    /* two nodes: bwInter doubled (96), the 2-node cap 57.7 binds: 8 x 57.7 x 16/30 */
    nccl_model_comm(&p, 16, 2, &c);
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE, 8, &nt);
    assert_rel(nt.latency_s, (25 + 2 * 1 * 20.9) * 1e-6, 1e-9);
    assert_rel(nt.algbw_bytes_per_s, 8 * 57.7e9 * 16 / 30, 1e-6);
}

/* A100: no NVLink SHARP (nvlink.nvls false), so no NVLS graph; and even a communicator that
 * had one would get no NVLS bandwidth on Ampere (nvlsEfficiency 0): never chosen. */
static void test_nccl_model_a100_never_nvls(void **state)
{
    (void)state;
    Platform p = h100_platform();
    p.has_nvls = false;
    p.nvlink.bw_bytes_per_s = 230e9;
    p.nccl.arch = PLATFORM_ARCH_AMPERE;
    p.nccl.cpu_vendor = PLATFORM_CPU_AMD;
    p.nccl.channels = 12;
    const uint32_t ranks[] = {8, 1024}, nodes[] = {1, 128};
    const double sizes[] = {8, 1e9, 8589934592.0};
    for (int i = 0; i < 2; i++) {
        NcclComm c;
        nccl_model_comm(&p, ranks[i], nodes[i], &c);
        assert_false(c.has_nvls);
        NcclComm forged = a100(ranks[i], nodes[i]);
        forged.has_nvls = true;
        forged.nvls_channels = 8;
        forged.nvls_bw_intra_bytes_per_s = forged.nvls_bw_inter_bytes_per_s = 40e9;
        for (int s = 0; s < 3; s++)
            for (int f = 0; f < NCCL_N_FUNCS; f++) {
                NcclChoice ch = nccl_model_choose(&c, (NcclFunc)f, sizes[s], false, NCCL_ALGO_RING);
                assert_true(ch.algo != NCCL_ALGO_NVLS && ch.algo != NCCL_ALGO_NVLS_TREE);
                ch = nccl_model_choose(&c, (NcclFunc)f, sizes[s], true, NCCL_ALGO_NVLS);
                assert_true(ch.algo != NCCL_ALGO_NVLS && ch.algo != NCCL_ALGO_NVLS_TREE);
                ch = nccl_model_choose(&forged, (NcclFunc)f, sizes[s], true, NCCL_ALGO_NVLS_TREE);
                assert_true(ch.algo != NCCL_ALGO_NVLS && ch.algo != NCCL_ALGO_NVLS_TREE);
            }
    }
}

/* nccl.version with its patch: 20000 + 100 x minor + patch; none: the default 2.30. */
static void test_nccl_model_release_from_platform(void **state)
{
    (void)state;
    Platform p;
    memset(&p, 0, sizeof p);
    assert_int_equal(nccl_model_version(&p), PLATFORM_NCCL_VERSION);
    assert_int_equal(nccl_model_release(&p), 23000);
    assert_int_equal(nccl_model_release(NULL), 23000);
    p.nccl.version = 221;
    p.nccl.version_patch = 5;
    assert_int_equal(nccl_model_version(&p), 221);
    assert_int_equal(nccl_model_release(&p), 22105);
    p.nccl.version = 212;
    p.nccl.version_patch = 10;
    assert_int_equal(nccl_model_release(&p), 21210);
}

static void test_nccl_model_release_2_12_small_and_large(void **state)
{
    (void)state;
    NcclComm c = a100(8, 1);
    c.release = 21210; /* NCCL 2.12.10 */
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_LL);
    assert_rel(ch.latency_s, 10.18e-6, 1e-9);
    assert_rel(ch.algbw_bytes_per_s, 57.5e9 * 8 / 14, 1e-6);
    NcclChoice tree;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL, 8, &tree);
    assert_rel(tree.latency_s, 11.68e-6, 1e-9);
    ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 1e9, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_SIMPLE);
    assert_rel(ch.time_s, 56.0e-6 + 1e9 / (230e9 * 8 / 14), 1e-6);

    c = a100(1024, 128);
    c.release = 21210;
    ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_TREE);
    assert_int_equal(ch.proto, NCCL_PROTO_LL);
    assert_rel(ch.latency_s, 87.504e-6, 1e-9);
    NcclChoice ring;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL, 8, &ring);
    assert_rel(ring.latency_s, 2209.14e-6, 1e-9);
    ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 1e9, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_TREE);
    assert_int_equal(ch.proto, NCCL_PROTO_SIMPLE);
    assert_rel(ch.latency_s, 784e-6, 1e-9);
    assert_rel(ch.time_s, 784e-6 + 1e9 / (0.92 * 192e9 / 2), 1e-6);
    NcclChoice ll128;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 1e9, &ll128);
    assert_rel(ll128.time_s, 140.9e-6 + 1e9 / (0.92 * 192e9 * 120 / 128 / 2), 1e-6);
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1e9, &ring);
    assert_rel(ring.latency_s, 13262.4e-6 * 1.9, 1e-9);
}

static void test_nccl_model_release_nvls_tree_2_21_and_ring_2_17(void **state)
{
    (void)state;
    Platform p = h100_platform();
    p.nccl.version = 221;
    p.nccl.version_patch = 5;
    NcclComm c;
    nccl_model_comm(&p, 16, 2, &c);
    assert_int_equal(c.release, 22105);
    NcclChoice nt;
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE,
                                  8, &nt) > 0);
    assert_rel(nt.latency_s, 53e-6, 1e-9);
    nccl_model_comm(&p, 1024, 128, &c);
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE, 8, &nt);
    assert_rel(nt.latency_s, 221e-6, 1e-9);
    p.nccl.version = 217;
    p.nccl.version_patch = 1;
    nccl_model_comm(&p, 8, 1, &c);
    NcclChoice ch = nccl_model_choose(&c, NCCL_FUNC_ALL_REDUCE, 8, false, NCCL_ALGO_RING);
    assert_int_equal(ch.algo, NCCL_ALGO_RING);
    assert_int_equal(ch.proto, NCCL_PROTO_LL);
    assert_rel(ch.latency_s, 10.18e-6, 1e-9);
    NcclChoice nvls;
    nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 8, &nvls);
    assert_rel(nvls.latency_s, 40e-6, 1e-9);
    nccl_model_comm(&p, 16, 2, &c); /* no NVLSTree before 2.18 */
    assert_true(nccl_model_time_s(&c, NCCL_FUNC_ALL_REDUCE, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE,
                                  8, NULL) < 0);
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
        cmocka_unit_test(test_nccl_model_comm_nvls_graph_h100),
        cmocka_unit_test(test_nccl_model_nvls_all_reduce_8_ranks),
        cmocka_unit_test(test_nccl_model_nvls_tree_all_reduce_1024_ranks),
        cmocka_unit_test(test_nccl_model_a100_never_nvls),
        cmocka_unit_test(test_nccl_model_release_from_platform),
        cmocka_unit_test(test_nccl_model_release_2_12_small_and_large),
        cmocka_unit_test(test_nccl_model_release_nvls_tree_2_21_and_ring_2_17),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
