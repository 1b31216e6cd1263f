/*
 * nccl_model.c - NCCL's tuner arithmetic (see nccl_model.h).
 *
 * Every constant below is NCCL's, from src/graph/tuning.cc (baseLat, hwLat, llMaxBws,
 * perChMax*Bws, ncclTopoTuneModel, ncclTopoGetAlgoTime) at the NVIDIA/nccl tag its row names,
 * in NCCL's units: latencies in microseconds, bandwidths in GB/s (1e9 bytes/s). The constants
 * and the formulas that changed across releases are tables with one row per tag that changed
 * them (2.7.3 to 2.30.3; the rows of a release are the last ones at or before it), so the
 * platform's nccl.version selects the tuner the measured software ran. Indices follow NCCL's:
 * tables by algorithm are [tree, ring, pat, nvls, nvls_tree] here (NCCL's NCCL_ALGO_TREE,
 * _RING, _PAT, _NVLS, _NVLS_TREE; CollNet's rows are left out), by protocol [LL, LL128,
 * Simple], by GPU generation [Volta, Ampere, Hopper, Blackwell], by node count [1 node, 2
 * nodes, more]. The NVLS graph's channels and bandwidths are those of NCCL's topology search
 * today (src/graph/search.cc, ncclTopoCompute and ncclTopoSearchTryNvls, with its speed
 * arrays) for every release: the search's own history is not modelled.
 */
#include "nccl_model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stddef.h>

#define US 1e-6  /* NCCL's latency unit */
#define GBPS 1e9 /* NCCL's bandwidth unit */

enum { HW_NVLINK, HW_PCI, HW_NET, N_HW };
enum { GEN_VOLTA, GEN_AMPERE, GEN_HOPPER, GEN_BLACKWELL, N_GEN };

/*
 * NCCL's constants by release. Each table below is a list of rows, one per NVIDIA/nccl tag at
 * which something of that table changed (git show <tag>:src/graph/tuning.cc); a release runs
 * the last row at or before it. Rows are keyed by nccl_model_release's number, 2.M.P as
 * 20000 + 100 M + P, where the first tag of a minor release counts as patch 0 so that "2.18"
 * (no patch) is the line's first tag, 2.18.1, and 2.18.3 the later row.
 */

/* baseLat and hwLat [NVLINK, PCI, NET], by algorithm [tree, ring, pat, nvls, nvls_tree] and
 * protocol [LL, LL128, Simple]. */
typedef struct LatencyRow {
    uint32_t since;
    double base_us[NCCL_N_ALGOS][NCCL_N_PROTOS];
    double hw_us[N_HW][NCCL_N_ALGOS][NCCL_N_PROTOS];
} LatencyRow;
/* clang-format off: one row per tag reads better than the formatter's layout */
static const LatencyRow latency_rows[] = {
    {20700, /* v2.7.3-1 */
     {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{{.52, 1.2, 28}, {.47, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 50}, {2.7, 4.0, 9.6}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}},
    {20800, /* v2.8.3-1: NVLink Tree/LL128 1.25, network Tree/Simple 28 */
     {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{{.52, 1.25, 28}, {.47, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}},
    {21200, /* v2.12.7-1: network Ring/Simple 28 */
     {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{{.52, 1.25, 28}, {.47, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 28}, {2.7, 4.0, 28}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}},
    {21400, /* v2.14.3-1: network Ring/Simple back to 9.6 */
     {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{{.52, 1.25, 28}, {.47, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}},
    {21700, /* v2.17.1-1: NVLS, base latency 40 */
     {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {0, 0, 0}, {0, 0, 40.0}, {0, 0, 0}},
     {{{.52, 1.25, 28}, {.47, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}},
    {21800, /* v2.18.1-1: the base latencies of today, NVLSTree */
     {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 23.0}, {0, 0, 23.0}},
     {{{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 0}, {0, 0, 18}, {0, 0, 19}}}},
    {21803, /* v2.18.3-1: Tree/Simple hops 4, 6, 14 */
     {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 23.0}, {0, 0, 23.0}},
     {{{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{1.0, 1.9, 6}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 0}, {0, 0, 18}, {0, 0, 19}}}},
    {21900, /* v2.19.1-1: Tree/Simple back to 28; the NVLink SHARP hop 23, NVLSTree's 14 */
     {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 0}, {0, 0, 23}, {0, 0, 23}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 0}, {0, 0, 18}, {0, 0, 14}}}},
    {22100, /* v2.21.5-1: the NVLink SHARP hop 25 */
     {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 0}, {0, 0, 25}, {0, 0, 25}},
      {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 0}, {0, 0, 18}, {0, 0, 14}}}},
    {22300, /* v2.23.4-1: Tree/Simple base 8.4 and hops 4, 4, 14; PAT ("8 // Base time"; its
             * hop column, explicit from v2.28.3-1, is never read: PAT runs one GPU per node,
             * where the tree's network hop is used) */
     {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {8.0, 8.0, 8.0}, {0, 0, 0}, {0, 0, 0}},
     {{{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 4.0}, {0, 0, 25}, {0, 0, 25}},
      {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 4.0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 14}, {0, 0, 18}, {0, 0, 14}}}},
    {22809, /* v2.28.9-1: NVLSTree's network hop 20.9 (today's table) */
     {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {8.0, 8.0, 8.0}, {0, 0, 0}, {0, 0, 0}},
     {{{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 4.0}, {0, 0, 25}, {0, 0, 25}},
      {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 4.0}, {0, 0, 0}, {0, 0, 0}},
      {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 14}, {0, 0, 18}, {0, 0, 20.9}}}},
};

/* clang-format on */

/* The per-channel bandwidth caps (GB/s) by GPU generation [Volta, Ampere, Hopper, Blackwell]
 * and node count [1, 2, more]: llMaxBws (rows by generation on one node, by CPU vendor across
 * nodes), perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws, perChMaxNVLSTreeBws.
 * 0 where the release has no such cap. A generation's row is the one that release's
 * compCapIndex reads (tuner_gen). Before v2.10.3-1 LL128's cap was one per collective
 * (ll128MaxBwPerCh, [all-reduce, all-gather, reduce-scatter, broadcast] here) for every GPU. */
typedef struct BandwidthRow {
    uint32_t since;
    double ll_max[N_GEN][3];
    double ring_ll128[N_GEN][3];
    double tree_ll128[N_GEN][3];
    double tree[N_GEN][3];
    double nvls_tree[N_GEN][3];
    double ll128_by_func[NCCL_N_FUNCS];
} BandwidthRow;
/* clang-format off */
#define LL_V {39.0, 39.0, 20.4}
#define LL_A {87.7, 22.5, 19.0}
#define LL_H {141.0, 45.0, 35.0}
#define C20 {20.0, 20.0, 20.0}
#define TREE_V {26.5, 18.5, 10.0}
#define TREE_A {24.0, 23.6, 17.8}
#define TREE_H {38.7, 41.4, 36.0}
static const BandwidthRow bandwidth_rows[] = {
    {20700, /* v2.7.3-1: no LL cap, the tree's caps are global (tree_caps_2_7) */
     {{0}}, {{0}}, {{0}}, {{0}}, {{0}}, {16.7, 18.3, 15.2, 18.8}},
    {20800, /* v2.8.3-1: llMaxBws and perChMaxTreeBws for Volta and Ampere */
     {LL_V, LL_A}, {{0}}, {{0}}, {TREE_V, {24.0, 22.5, 16.0}}, {{0}}, {16.9, 18.3, 15.2, 18.8}},
    {21000, /* v2.10.3-1: LL128 20 per channel for all; Ampere's tree 23.6, 17.8 */
     {LL_V, LL_A}, {C20, C20}, {C20, C20}, {TREE_V, TREE_A}, {{0}}, {0}},
    {21500, /* v2.15.1-1: Hopper rows, Ampere's numbers */
     {LL_V, LL_A, LL_A}, {C20, C20, C20}, {C20, C20, C20}, {TREE_V, TREE_A, TREE_A}, {{0}},
     {0}},
    {21700, /* v2.17.1-1: Hopper's LL128 36.7, tree 38.7, 41.4, 33.0 */
     {LL_V, LL_A, LL_A}, {C20, C20, {36.7, 36.7, 36.7}}, {C20, C20, {36.7, 36.7, 36.7}},
     {TREE_V, TREE_A, {38.7, 41.4, 33.0}}, {{0}}, {0}},
    {21803, /* v2.18.3-1: perChMaxRingLL128Bws / perChMaxTreeLL128Bws; Hopper's tree 36.0 */
     {LL_V, LL_A, LL_A}, {C20, C20, {36.7, 36.7, 36.7}}, {C20, C20, {36.7, 36.7, 29.0}},
     {TREE_V, TREE_A, TREE_H}, {{0}}, {0}},
    {22100, /* v2.21.5-1: Hopper's llMaxBws 141, 45, 35 */
     {LL_V, LL_A, LL_H}, {C20, C20, {36.7, 36.7, 36.7}}, {C20, C20, {36.7, 36.7, 29.0}},
     {TREE_V, TREE_A, TREE_H}, {{0}}, {0}},
    {22500, /* v2.25.1-1: Blackwell rows, twice Hopper's */
     {LL_V, LL_A, LL_H, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
     {C20, C20, {36.7, 36.7, 36.7}, {2 * 36.7, 2 * 36.7, 2 * 36.7}},
     {C20, C20, {36.7, 36.7, 29.0}, {2 * 36.7, 2 * 36.7, 2 * 29.0}},
     {TREE_V, TREE_A, TREE_H, {2 * 38.7, 2 * 41.4, 2 * 36.0}}, {{0}}, {0}},
    {22800, /* v2.28.3-1: Blackwell's tree rows; perChMaxNVLSTreeBws */
     {LL_V, LL_A, LL_H, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
     {C20, C20, {36.7, 36.7, 36.7}, {2 * 36.7, 2 * 36.7, 2 * 36.7}},
     {C20, C20, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
     {TREE_V, TREE_A, TREE_H, {70.0, 42.8, 24.0}},
     {TREE_V, TREE_A, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.1}}, {0}},
    {22807, /* v2.28.7-1: Blackwell's ring LL128 on 2 nodes 34.6 */
     {LL_V, LL_A, LL_H, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
     {C20, C20, {36.7, 36.7, 36.7}, {2 * 36.7, 34.6, 2 * 36.7}},
     {C20, C20, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
     {TREE_V, TREE_A, TREE_H, {70.0, 42.8, 24.0}},
     {TREE_V, TREE_A, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.1}}, {0}},
    {22809, /* v2.28.9-1: Blackwell's NVLSTree on more nodes 43.8 */
     {LL_V, LL_A, LL_H, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
     {C20, C20, {36.7, 36.7, 36.7}, {2 * 36.7, 34.6, 2 * 36.7}},
     {C20, C20, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
     {TREE_V, TREE_A, TREE_H, {70.0, 42.8, 24.0}},
     {TREE_V, TREE_A, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}}, {0}},
    {22900, /* v2.29.2-1: Blackwell's ring LL128 34.5, 34.6, 34.5 */
     {LL_V, LL_A, LL_H, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
     {C20, C20, {36.7, 36.7, 36.7}, {34.5, 34.6, 34.5}},
     {C20, C20, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
     {TREE_V, TREE_A, TREE_H, {70.0, 42.8, 24.0}},
     {TREE_V, TREE_A, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}}, {0}},
    {22907, /* v2.29.7-1: Blackwell's ring LL128 40 */
     {LL_V, LL_A, LL_H, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
     {C20, C20, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
     {C20, C20, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
     {TREE_V, TREE_A, TREE_H, {70.0, 42.8, 24.0}},
     {TREE_V, TREE_A, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}}, {0}},
    {23000, /* v2.30.3-1: Blackwell's NVLSTree on more nodes 80 (today's table) */
     {LL_V, LL_A, LL_H, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
     {C20, C20, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
     {C20, C20, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
     {TREE_V, TREE_A, TREE_H, {70.0, 42.8, 24.0}},
     {TREE_V, TREE_A, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}, {0}},
};

/* clang-format on */

/* How NCCL's generations of NVLS are costed (the formulas, not the constants). */
typedef enum NvlsForm {
    NVLS_NONE, /* before 2.17: no NVLS */
    NVLS_2_17, /* ring graph x 0.75, latency the base 40 */
    NVLS_2_18, /* NVLS graph; ratio 0.75 (5/6 from 2.18.3); NVLSTree 0.70 n/(2(n-1)) */
    NVLS_2_19, /* min(bwIntra, bwInter) x 5/6; latency the NVLink hop (+ network) */
    NVLS_2_27, /* the all-gather / reduce-scatter form min(bwIntra (ppn-1)/ppn, 0.9 bwInter) */
    NVLS_2_28  /* nvlsEfficiency, all-reduce x 2, perChMaxNVLSTreeBw (today) */
} NvlsForm;

/* The formulas of ncclTopoTuneModel and ncclTopoGetAlgoTime that changed, by release. */
typedef struct FormulaRow {
    uint32_t since;
    bool is_ll_quarter;             /* ring LL x 1/4 across nodes or for an all-reduce, else 1/3
                                     * (before 2.21); else x 0.5 */
    bool is_ll_intra_x18;           /* LL's intra-node hop x 1.8 across nodes (before 2.18) */
    bool has_net_overhead;          /* getNetOverhead's floor on ring hops (2.18 and later) */
    bool is_ar_inter_2n;            /* ring all-reduce network steps 2 nNodes (2.12-2.22) */
    bool is_inter_ppn1_tree;        /* one rank per node: the tree's network hop (2.23 and later) */
    bool is_plateau_per_channel;    /* plateau when bytes / (channels x ranks) >= 64; before 2.18
                                     * when bytes >= ranks / 16 x 65536 */
    PlatformArch plateau_fast_from; /* GPUs from this generation get the smaller factor */
    double plateau_fast;            /* 1.5 (2.17), 1.4 (2.18 and later); 1.9 before */
    double a100_scale;              /* Ampere busBw x 0.92 (2.7.3) */
    double a100_cap_gbps;           /* Ampere busBw at most 235 (2.7.5-2.17) */
    double h100_cap_gbps;           /* Hopper busBw at most 370 (2.17) */
    double ll128_ring_ppn1;         /* ring LL128 payload share with one rank per node: 0.7 before
                                     * 2.23, then 0.92 like the others */
    double tree_scale;              /* tree x 0.9 (2.7), x 0.92 after */
    double tree_ll128_inter;        /* tree LL128 across nodes: 0.915 before 2.10, then 120/128 */
    bool is_tree_caps_2_7;          /* 2.7: tree capped at 110/130 (<= 2 nodes) or 80/105 GB/s,
                                     * its LL128 at ll128MaxBwPerCh x channels x 7/9 */
    double pat_scale;               /* PAT busBw x 0.85 (2.23), 0.75 (2.24 and later); 0: no PAT */
    NvlsForm nvls;
    bool has_nvls_ag_rs;           /* NVLS all-gather / reduce-scatter (not in 2.18) */
    bool is_nvls_ag_rs_ratio;      /* those converted by 5/6 too (2.19-2.22) */
    bool has_nvls_tree_correction; /* NVLSTree's treeCorrectionFactor on Blackwell (2.29) */
    int tree_correction;           /* treeCorrectionFactor's version (tree_corrections) */
    PlatformArch ll128_last_gen;   /* the newest generation LL128 is enabled on */
} FormulaRow;
/* clang-format off */
static const FormulaRow formula_rows[] = {
    /* since  llq    x1.8   ovh    2n     ppn1   perch  fast_from             fast  a100s
     * a100c  h100c  ll128p1 tree  tll128i  caps27 pat  nvls       ag_rs  agrs5/6 nvtc  corr
     * ll128 newest */
    {20700, true, true, false, false, false, false, PLATFORM_ARCH_BLACKWELL, 1.9, 0.92, 0, 0,
     0.7, 0.9, 0.915, true, 0, NVLS_NONE, false, false, false, 0, PLATFORM_ARCH_AMPERE},
    {20705, true, true, false, false, false, false, PLATFORM_ARCH_BLACKWELL, 1.9, 1.0, 235, 0,
     0.7, 0.9, 0.915, true, 0, NVLS_NONE, false, false, false, 0, PLATFORM_ARCH_AMPERE},
    {20800, true, true, false, false, false, false, PLATFORM_ARCH_BLACKWELL, 1.9, 1.0, 235, 0,
     0.7, 0.92, 0.915, false, 0, NVLS_NONE, false, false, false, 1, PLATFORM_ARCH_AMPERE},
    {21000, true, true, false, false, false, false, PLATFORM_ARCH_BLACKWELL, 1.9, 1.0, 235, 0,
     0.7, 0.92, 120.0 / 128.0, false, 0, NVLS_NONE, false, false, false, 2,
     PLATFORM_ARCH_AMPERE},
    {21200, true, true, false, true, false, false, PLATFORM_ARCH_BLACKWELL, 1.9, 1.0, 235, 0,
     0.7, 0.92, 120.0 / 128.0, false, 0, NVLS_NONE, false, false, false, 2,
     PLATFORM_ARCH_AMPERE},
    {21500, true, true, false, true, false, false, PLATFORM_ARCH_BLACKWELL, 1.9, 1.0, 235, 0,
     0.7, 0.92, 120.0 / 128.0, false, 0, NVLS_NONE, false, false, false, 2,
     PLATFORM_ARCH_HOPPER},
    {21700, true, true, false, true, false, false, PLATFORM_ARCH_HOPPER, 1.5, 1.0, 235, 370,
     0.7, 0.92, 120.0 / 128.0, false, 0, NVLS_2_17, true, true, false, 2, PLATFORM_ARCH_HOPPER},
    {21800, true, false, true, true, false, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.7,
     0.92, 120.0 / 128.0, false, 0, NVLS_2_18, false, false, false, 2, PLATFORM_ARCH_HOPPER},
    {21900, true, false, true, true, false, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.7,
     0.92, 120.0 / 128.0, false, 0, NVLS_2_19, true, true, false, 2, PLATFORM_ARCH_HOPPER},
    {22100, false, false, true, true, false, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.7,
     0.92, 120.0 / 128.0, false, 0, NVLS_2_19, true, true, false, 2, PLATFORM_ARCH_HOPPER},
    {22300, false, false, true, false, true, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.92,
     0.92, 120.0 / 128.0, false, 0.85, NVLS_2_19, true, false, false, 2, PLATFORM_ARCH_HOPPER},
    {22400, false, false, true, false, true, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.92,
     0.92, 120.0 / 128.0, false, 0.75, NVLS_2_19, true, false, false, 2, PLATFORM_ARCH_HOPPER},
    {22500, false, false, true, false, true, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.92,
     0.92, 120.0 / 128.0, false, 0.75, NVLS_2_19, true, false, false, 2,
     PLATFORM_ARCH_BLACKWELL},
    {22700, false, false, true, false, true, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.92,
     0.92, 120.0 / 128.0, false, 0.75, NVLS_2_27, true, false, false, 2,
     PLATFORM_ARCH_BLACKWELL},
    {22800, false, false, true, false, true, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.92,
     0.92, 120.0 / 128.0, false, 0.75, NVLS_2_28, true, false, false, 2,
     PLATFORM_ARCH_BLACKWELL},
    {22900, false, false, true, false, true, true, PLATFORM_ARCH_AMPERE, 1.4, 1.0, 0, 0, 0.92,
     0.92, 120.0 / 128.0, false, 0.75, NVLS_2_28, true, false, true, 2,
     PLATFORM_ARCH_BLACKWELL},
};

/* clang-format on */

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The last row of a table at or before `release` (the first row for an older one). */
#define ROW_FOR(table, release)                                                                    \
    do {                                                                                           \
        size_t i_ = 0;                                                                             \
        while (i_ + 1 < N_OF(table) && table[i_ + 1].since <= (release))                           \
            i_++;                                                                                  \
        row = &table[i_];                                                                          \
    } while (0)

static uint32_t release_of(const NcclComm *c)
{
    return c->release ? c->release : nccl_model_release(NULL);
}

static const LatencyRow *latency_row(uint32_t release)
{
    const LatencyRow *row;
    ROW_FOR(latency_rows, release);
    return row;
}

static const BandwidthRow *bandwidth_row(uint32_t release)
{
    const BandwidthRow *row;
    ROW_FOR(bandwidth_rows, release);
    return row;
}

static const FormulaRow *formula_row(uint32_t release)
{
    const FormulaRow *row;
    ROW_FOR(formula_rows, release);
    return row;
}

/* The row of the generation tables a release's compCapIndex reads: before 2.15 Ampere
 * (exactly sm80) or else Volta's; 2.15-2.16 Hopper (exactly sm90) too; 2.17-2.24 sm90 and
 * later Hopper's; Blackwell its own from 2.25. */
static int tuner_gen(PlatformArch arch, uint32_t release)
{
    if (release < 21500)
        return arch == PLATFORM_ARCH_AMPERE ? GEN_AMPERE : GEN_VOLTA;
    if (release < 21700)
        return arch == PLATFORM_ARCH_AMPERE   ? GEN_AMPERE
               : arch == PLATFORM_ARCH_HOPPER ? GEN_HOPPER
                                              : GEN_VOLTA;
    if (release < 22500)
        return arch >= PLATFORM_ARCH_HOPPER ? GEN_HOPPER : (int)arch;
    return (int)arch;
}

/* tuning.cc treeCorrectionFactor [protocol][log2(bytes / 64)], 64 B up: v2.7.3-1 (22
 * entries), v2.8.3-1 (23, LL128 and Simple changed), v2.10.3-1 (LL128 changed; v2.29.2-1
 * added a 24th entry, equal to the 23rd, which NVLSTree reads). */
/* clang-format off */
static const double tree_corrections[3][NCCL_N_PROTOS][24] = {
    {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0},
     {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9}},
    {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
      1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9,
      .92, .92},
     {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
      .9}},
    {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
      1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
      1.0, 1.0, 1.0},
     {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
      .9, .9}},
};
/* clang-format on */
static const int tree_correction_entries[3] = {22, 23, 23};

/* tuning.cc nvlsEfficiency [generation] (2.28 and later): the share of the NVLS graph's
 * bandwidth that the switch's reductions deliver (none before Hopper). */
static const double nvls_efficiency[PLATFORM_N_ARCHS] = {0.0, 0.0, 0.85, 0.74};

/* search.cc sm90SpeedArrayIntra/Inter and sm100SpeedArrayIntra/Inter: the per-channel
 * bandwidths (GB/s) the topology search tries, fastest first, on one node and across nodes. */
static const double sm90_speed_intra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                          15.0, 12.0, 11.0, 6.0,  3.0};
static const double sm90_speed_inter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                          15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
static const double sm100_speed_intra[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                           40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
static const double sm100_speed_inter[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                           30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                           6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
/* device.h NCCL_MAX_NVLS_ARITY: the most heads (channels) of an NVLS graph. */
#define NVLS_MAX_ARITY 32

uint32_t nccl_model_version(const Platform *p)
{
    return p != NULL && p->nccl.version ? p->nccl.version : PLATFORM_NCCL_VERSION;
}

uint32_t nccl_model_release(const Platform *p)
{
    const uint32_t v = nccl_model_version(p);
    const uint32_t patch = p != NULL && p->nccl.version ? p->nccl.version_patch : 0;
    return (v / 100) * 10000 + (v % 100) * 100 + patch;
}

const char *nccl_model_release_name(const Platform *p, char *buf, size_t n)
{
    const uint32_t r = nccl_model_release(p); /* 20000 + 100 x minor + patch */
    if (r % 100 > 0)
        snprintf(buf, n, "%u.%u.%u", r / 10000, r / 100 % 100, r % 100);
    else
        snprintf(buf, n, "%u.%u", r / 10000, r / 100 % 100);
    return buf;
}

/* NCCL's log2i: floor(log2(n)), -1 for 0. */
static int log2i(double n)
{
    int l = -1;
    while (n >= 1.0) {
        n /= 2.0;
        l++;
    }
    return l;
}

static double min2(double a, double b)
{
    return a < b ? a : b;
}

/* The NVLS graph NCCL's search finds (search.cc ncclTopoCompute, pattern NVLS). NCCL builds one
 * only with an NVSwitch on sm90 or later (here: nvlink.nvls) and at least two GPUs per node
 * (transport/nvls.cc ncclNvlsInit). Its channels are heads: on one node every GPU
 * (minChannels = maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs)), across nodes every NIC with
 * its own local GPU (ncclTopoSearchRecNet). In each channel every GPU moves the channel's
 * bandwidth to and from the switch and its head twice that (ncclTopoSearchTryNvls: mult 2 for
 * d == g), so with k channels a GPU's NVLink carries (k + 1) x bwIntra each way: bwIntra is
 * the fastest speed of the array for which that fits (across nodes also within the NIC and
 * its PCIe path, which carry bwInter). Pass 2 then raises bwInter alone, one speed at a time,
 * while it is below 2 x bwIntra and the NIC path allows it (on one node nothing limits it). */
static void nvls_graph(const Platform *p, uint32_t ppn, uint32_t n_nodes, NcclComm *out)
{
    out->has_nvls = false;
    out->nvls_channels = 0;
    out->nvls_bw_intra_bytes_per_s = out->nvls_bw_inter_bytes_per_s = 0.0;
    if (!p->has_nvls || !p->has_nvlink || ppn < 2)
        return;
    const bool is_sm100 = p->nccl.arch >= PLATFORM_ARCH_BLACKWELL;
    const double *speed = n_nodes <= 1 ? (is_sm100 ? sm100_speed_intra : sm90_speed_intra)
                                       : (is_sm100 ? sm100_speed_inter : sm90_speed_inter);
    const size_t n_speeds = n_nodes <= 1
                                ? (is_sm100 ? N_OF(sm100_speed_intra) : N_OF(sm90_speed_intra))
                                : (is_sm100 ? N_OF(sm100_speed_inter) : N_OF(sm90_speed_inter));
    uint32_t k = ppn < NVLS_MAX_ARITY ? ppn : NVLS_MAX_ARITY;
    double net_gbps = INFINITY;
    if (n_nodes > 1) {
        if (p->nic.per_node < k)
            k = (uint32_t)p->nic.per_node;
        net_gbps = min2(p->nic.link.bw_bytes_per_s, p->pcie.gpu_link.bw_bytes_per_s) / GBPS;
    }
    if (k < 2) /* tuning.cc: "NVLS/NVLStree needs at least 2 channels" */
        return;
    const double nvlink_gbps = p->nvlink.bw_bytes_per_s / GBPS;
    size_t i = 0;
    while (i + 1 < n_speeds && ((k + 1) * speed[i] > nvlink_gbps || speed[i] > net_gbps))
        i++;
    const double intra = speed[i];
    while (i > 0 && speed[i] < 2 * intra && speed[i - 1] <= net_gbps)
        i--;
    out->has_nvls = true;
    out->nvls_channels = k;
    out->nvls_bw_intra_bytes_per_s = intra * GBPS;
    out->nvls_bw_inter_bytes_per_s = speed[i] * GBPS;
}

void nccl_model_comm(const Platform *p, uint32_t n_ranks, uint32_t n_nodes, NcclComm *out)
{
    const double g = (double)p->gpus_per_node;
    const double ppn = n_nodes > 0 ? (double)n_ranks / n_nodes : 1.0;
    out->arch = p->nccl.arch;
    out->cpu = p->nccl.cpu_vendor;
    out->n_ranks = n_ranks;
    out->n_nodes = n_nodes;
    out->n_channels = (uint32_t)p->nccl.channels;
    out->is_nvlink_intra = p->has_nvlink;
    /* The bus bandwidth a ring reaches on these links when nothing else runs: NVLink inside a
     * node (else PCIe through the host); across nodes each member's NIC share, ppn of them per
     * node (the rail-aligned channels of collective.h). NCCL's topology knows the NICs' speed
     * (ncclTopoGetNetBw, from the device's reported rate), not the fabric behind them: an
     * oversubscribed fabric slows the flows in SimGrid, not the tuner's choice. */
    double intra =
        p->has_nvlink ? p->nvlink.bw_bytes_per_s
                      : min2(p->pcie.gpu_link.bw_bytes_per_s, p->pcie.switch_uplink.bw_bytes_per_s);
    double nic_share = (double)p->nic.per_node * p->nic.link.bw_bytes_per_s / g;
    double per_gpu = min2(nic_share, p->pcie.gpu_link.bw_bytes_per_s);
    double inter = min2(intra, ppn * per_gpu);
    const double ch = out->n_channels > 0 ? (double)out->n_channels : 1.0;
    out->bw_intra_bytes_per_s = (n_nodes > 1 ? inter : intra) / ch;
    out->bw_inter_bytes_per_s = inter / ch;
    /* tuning.cc enables LL128 only up to PXB (NIC behind the GPU's PCIe switch; Hopper and
     * later: up to PXN) and intra paths up to NVB: NVLink, or a single GPU per node. */
    bool nic_near = p->pcie.nics_per_switch > 0;
    bool intra_ok = p->has_nvlink || ppn <= 1.0;
    out->release = nccl_model_release(p);
    /* and only on the GPU generations the release enables it on (sm70/sm80 before 2.15,
     * sm90 from 2.15, sm100 from 2.25) */
    out->has_ll128 = intra_ok && (n_nodes <= 1 || nic_near) &&
                     p->nccl.arch <= formula_row(out->release)->ll128_last_gen;
    nvls_graph(p, (uint32_t)(ppn + 0.5), n_nodes > 0 ? n_nodes : 1, out);
}

/* NCCL's network post overhead (getNetOverhead): 1 us on Intel hosts, 2 us on AMD. */
static double net_overhead_us(const NcclComm *c)
{
    return c->cpu == PLATFORM_CPU_AMD ? 2.0 : 1.0;
}

static uint32_t func_steps(NcclFunc f, uint32_t n_ranks)
{
    switch (f) {
    case NCCL_FUNC_ALL_REDUCE: return 2 * (n_ranks - 1);
    case NCCL_FUNC_ALL_GATHER:
    case NCCL_FUNC_REDUCE_SCATTER: return n_ranks - 1;
    default: return n_ranks;
    }
}

/* Whether tuning.cc gives this (function, algorithm, protocol) a bandwidth at all. */
static bool is_candidate(const NcclComm *c, const FormulaRow *fr, NcclFunc f, NcclAlgo a,
                         NcclProto p)
{
    if (f == NCCL_FUNC_BROADCAST && a != NCCL_ALGO_RING)
        return false;
    if ((f == NCCL_FUNC_ALL_GATHER || f == NCCL_FUNC_REDUCE_SCATTER) && a == NCCL_ALGO_TREE)
        return false;
    if (a == NCCL_ALGO_PAT) {
        /* PAT (2.23 and later): all-gather and reduce-scatter, Simple, one GPU per node
         * (ncclPatEnable). */
        if (fr->pat_scale <= 0.0)
            return false;
        if (f != NCCL_FUNC_ALL_GATHER && f != NCCL_FUNC_REDUCE_SCATTER)
            return false;
        if (p != NCCL_PROTO_SIMPLE || c->n_nodes != c->n_ranks)
            return false;
    }
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) {
        /* Simple only (tuning.cc); an NVLS graph (nvlsSupport); NVLS on one node (across nodes
         * it needs CollNet) for all-reduce, all-gather and reduce-scatter (2.17, 2.19 and
         * later), the latter two with at most NCCL_MAX_NVLS_ARITY local ranks (enqueue.cc
         * updateCollCostTable); NVLSTree (2.18 and later) across nodes for all-reduce
         * (tuning.cc: disabled on a single node) */
        if (fr->nvls == NVLS_NONE || p != NCCL_PROTO_SIMPLE || !c->has_nvls)
            return false;
        if (a == NCCL_ALGO_NVLS)
            return c->n_nodes <= 1 &&
                   (f == NCCL_FUNC_ALL_REDUCE ||
                    ((f == NCCL_FUNC_ALL_GATHER || f == NCCL_FUNC_REDUCE_SCATTER) &&
                     fr->has_nvls_ag_rs && c->n_ranks <= NVLS_MAX_ARITY));
        return fr->nvls != NVLS_2_17 && c->n_nodes > 1 && f == NCCL_FUNC_ALL_REDUCE;
    }
    if (p == NCCL_PROTO_LL128 && !c->has_ll128)
        return false;
    return true;
}

/* The NVLS / NVLSTree bus bandwidth (GB/s) of a release: busBw before the bus-to-algorithm
 * conversion (tuning.cc's formulas, by NvlsForm). */
static double nvls_bus_gbps(const NcclComm *c, const FormulaRow *fr, const BandwidthRow *br,
                            NcclFunc f, NcclAlgo a, int gen, int index2)
{
    const double n_nodes = c->n_nodes > 0 ? (double)c->n_nodes : 1.0;
    const double ppn = (double)c->n_ranks / n_nodes;
    const double nvls_ch = (double)c->nvls_channels;
    const double bw_intra = c->nvls_bw_intra_bytes_per_s / GBPS;
    const double bw_inter = c->nvls_bw_inter_bytes_per_s / GBPS;
    const bool is_ag_rs = f == NCCL_FUNC_ALL_GATHER || f == NCCL_FUNC_REDUCE_SCATTER;
    switch (fr->nvls) {
    case NVLS_2_17: {
        /* graphs[NVLS] is the ring graph ("we only need the NVSwitch speed for NVLS"), under
         * Hopper's 370 GB/s cap */
        double bus = (double)c->n_channels * c->bw_intra_bytes_per_s / GBPS;
        return fr->h100_cap_gbps > 0 && gen == GEN_HOPPER ? min2(bus, fr->h100_cap_gbps) : bus;
    }
    case NVLS_2_18:
        /* the NVLS graph's bwIntra (<= 2 nodes) or bwInter x its channels */
        return nvls_ch * (n_nodes <= 2 ? bw_intra : bw_inter);
    case NVLS_2_19:
    case NVLS_2_27:
        if (a == NCCL_ALGO_NVLS_TREE)
            return nvls_ch * min2(bw_intra, n_nodes <= 2 ? bw_inter : bw_inter / 2);
        if (is_ag_rs && fr->nvls == NVLS_2_27)
            return nvls_ch * min2(bw_intra * (ppn - 1) / ppn, bw_inter * 0.9);
        return nvls_ch * min2(bw_intra, bw_inter);
    case NVLS_2_28:
    default: {
        /* the NVLS busBW per channel, bwIntra x nvlsEfficiency x (nCh-1)/nCh, doubled for an
         * all-reduce (it pipelines two operations), else x (ppn-1)/ppn; the graph's bwInter
         * (doubled for NVLSTree on 2 nodes); NVLSTree capped at perChMaxNVLSTreeBw */
        double intra = bw_intra * nvls_efficiency[c->arch] * (nvls_ch - 1) / nvls_ch;
        intra *= f == NCCL_FUNC_ALL_REDUCE ? 2.0 : (ppn - 1) / ppn;
        double inter = bw_inter * (n_nodes <= 2 && a == NCCL_ALGO_NVLS_TREE ? 2.0 : 1.0);
        double bw = min2(intra, inter);
        if (a == NCCL_ALGO_NVLS_TREE)
            bw = min2(bw, br->nvls_tree[gen][index2]);
        return nvls_ch * bw;
    }
    }
}

/* The bus-to-algorithm ratio of NVLS and NVLSTree (tuning.cc "Convert bus BW to algorithm
 * BW"), by release. */
static double nvls_ratio(const NcclComm *c, const FormulaRow *fr, NcclFunc f, NcclAlgo a,
                         uint32_t nsteps)
{
    const bool is_ag_rs = f == NCCL_FUNC_ALL_GATHER || f == NCCL_FUNC_REDUCE_SCATTER;
    const double n = (double)c->n_nodes;
    switch (fr->nvls) {
    case NVLS_2_17: return 0.75;
    case NVLS_2_18:
        if (a == NCCL_ALGO_NVLS_TREE)
            return 0.70 * n / (2 * (n - 1));
        return release_of(c) >= 21803 ? 5.0 / 6.0 : 0.75;
    case NVLS_2_19:
    case NVLS_2_27: return is_ag_rs && !fr->is_nvls_ag_rs_ratio ? 1.0 : 5.0 / 6.0;
    case NVLS_2_28:
    default: return is_ag_rs ? 1.0 : (double)c->n_ranks / nsteps;
    }
}

void nccl_model_tune(const NcclComm *c, NcclFunc f, NcclCost out[NCCL_N_ALGOS][NCCL_N_PROTOS])
{
    const uint32_t release = release_of(c);
    const LatencyRow *lr = latency_row(release);
    const BandwidthRow *br = bandwidth_row(release);
    const FormulaRow *fr = formula_row(release);
    const uint32_t n_ranks = c->n_ranks, n_nodes = c->n_nodes > 0 ? c->n_nodes : 1;
    const int gen = tuner_gen(c->arch, release);
    const int index2 = n_nodes <= 2 ? (int)n_nodes - 1 : 2;
    /* LL: for single node, the GPU type's row; for multi-node, the CPU vendor's */
    const int index1 = n_nodes == 1 ? gen : (c->cpu == PLATFORM_CPU_AMD ? 1 : 0);
    const double ll_max = br->ll_max[index1][index2] > 0 ? br->ll_max[index1][index2] : INFINITY;
    const double ppn = (double)n_ranks / n_nodes;
    const double n_ch = (double)c->n_channels;
    const uint32_t nsteps = func_steps(f, n_ranks);
    const int intra_hw = c->is_nvlink_intra ? HW_NVLINK : HW_PCI;
    /* LL128's per-channel caps: by generation, or (before 2.10) one per collective */
    const double ll128_func = br->ll128_by_func[f];
    const double ring_ll128_cap = ll128_func > 0 ? ll128_func : br->ring_ll128[gen][index2];
    const double tree_ll128_cap = ll128_func > 0 ? ll128_func : br->tree_ll128[gen][index2];
    for (int a = 0; a < NCCL_N_ALGOS; a++) {
        for (int p = 0; p < NCCL_N_PROTOS; p++) {
            out[a][p] = (NcclCost){0.0, 0.0};
            if (n_ranks < 2 || !is_candidate(c, fr, f, (NcclAlgo)a, (NcclProto)p))
                continue;
            /* tuning.cc: bw = nNodes <= 2 ? bwIntra : bwInter; busBw = nChannels x bw */
            double bw = (n_nodes <= 2 ? c->bw_intra_bytes_per_s : c->bw_inter_bytes_per_s) / GBPS;
            double bus = n_ch * bw;
            const bool is_nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE;
            if (is_nvls) {
                bus = nvls_bus_gbps(c, fr, br, f, (NcclAlgo)a, gen, index2);
            } else {
                /* the global caps of early releases: Ampere x 0.92 (2.7.3), <= 235 (to
                 * 2.17); Hopper <= 370 (2.17) */
                if (gen == GEN_AMPERE && c->arch == PLATFORM_ARCH_AMPERE) {
                    bus *= fr->a100_scale;
                    if (fr->a100_cap_gbps > 0)
                        bus = min2(bus, fr->a100_cap_gbps);
                }
                if (gen == GEN_HOPPER && fr->h100_cap_gbps > 0)
                    bus = min2(bus, fr->h100_cap_gbps);
            }
            if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL) {
                /* LL: 8 data bytes per 16-byte line (x 0.5, 2.21 and later); before, x 1/4
                 * across nodes or for an all-reduce, else 1/3 */
                double share = !fr->is_ll_quarter                           ? 0.5
                               : (n_nodes > 1 || f == NCCL_FUNC_ALL_REDUCE) ? 0.25
                                                                            : 1.0 / 3.0;
                bus = min2(ll_max, bus * share);
            }
            if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128) /* 120 data bytes per 128 */
                bus = min2(bus * (ppn < 2 ? fr->ll128_ring_ppn1 : 0.92), n_ch * ring_ll128_cap);
            if (a == NCCL_ALGO_TREE && f == NCCL_FUNC_ALL_REDUCE) {
                if (fr->is_tree_caps_2_7) {
                    bool is_a100_ll128 = gen == GEN_AMPERE && p == NCCL_PROTO_LL128;
                    double cap = n_nodes > 2 ? (is_a100_ll128 ? 105.0 : 80.0)
                                             : (is_a100_ll128 ? 130.0 : 110.0);
                    bus = min2(bus * fr->tree_scale, cap);
                } else {
                    bus = min2(bus * fr->tree_scale, n_ch * br->tree[gen][index2]);
                }
            }
            if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL)
                bus = min2(bus / 3.8, ll_max);
            if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128)
                bus = min2(bus * (n_nodes == 1 ? 7.0 / 9.0 : fr->tree_ll128_inter),
                           n_ch * tree_ll128_cap * (fr->is_tree_caps_2_7 ? 7.0 / 9.0 : 1.0));
            if (a == NCCL_ALGO_PAT)
                bus *= fr->pat_scale;
            /* bus bandwidth to algorithm bandwidth: rings nRanks / nsteps, trees 1/2, NVLS by
             * release; every non-ring all-gather and reduce-scatter from 2.23 (PAT, NVLS) keeps
             * the bus figure */
            if (a == NCCL_ALGO_RING)
                bus *= (double)n_ranks / nsteps;
            else if (is_nvls)
                bus *= nvls_ratio(c, fr, f, (NcclAlgo)a, nsteps);
            else if (a == NCCL_ALGO_TREE)
                bus *= 0.5;
            double lat = lr->base_us[a][p];
            double intra_lat = lr->hw_us[intra_hw][a][p];
            /* with one rank per node every hop is a network one: the tree's network latency
             * (2.23 and later) */
            double inter_lat = ppn == 1.0 && fr->is_inter_ppn1_tree
                                   ? lr->hw_us[HW_NET][NCCL_ALGO_TREE][p]
                                   : lr->hw_us[HW_NET][a][p];
            if (n_nodes > 1 && p == NCCL_PROTO_LL && fr->is_ll_intra_x18)
                intra_lat *= 1.8;
            /* graphs[a]->latencyInter: 0 for InfiniBand and RoCE NICs (NCCL's net plugins
             * report no latency), so the flush term of Simple adds nothing either */
            if (a == NCCL_ALGO_RING) {
                if (f == NCCL_FUNC_BROADCAST) {
                    /* sameChannels rings: one hop of the ring's hardware latency */
                    lat += lr->hw_us[n_nodes == 1 ? intra_hw : HW_NET][a][p];
                } else {
                    double overhead = 0.0;
                    if (n_nodes > 1 && fr->has_net_overhead) {
                        overhead = net_overhead_us(c);
                        if (p == NCCL_PROTO_SIMPLE)
                            overhead *= 3;
                    }
                    if (overhead > intra_lat)
                        intra_lat = overhead;
                    /* 2.12-2.22 counted 2 nNodes network steps for an all-reduce */
                    uint32_t inter_steps =
                        n_nodes == 1 ? 0
                        : f == NCCL_FUNC_ALL_REDUCE
                            ? (fr->is_ar_inter_2n ? 2 * n_nodes : 2 * (n_nodes - 1))
                            : n_nodes - 1;
                    lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
                }
            } else if (a == NCCL_ALGO_TREE) {
                lat += 2 * ((ppn - 1) * intra_lat + log2i(n_nodes) * inter_lat);
            } else if (a == NCCL_ALGO_NVLS) {
                if (fr->nvls >= NVLS_2_19) /* the switch's hop replaces the base latency */
                    lat = intra_lat + (n_nodes > 1 ? inter_lat : 0.0);
                else if (fr->nvls == NVLS_2_18 && n_nodes > 1)
                    lat += inter_lat;
            } else if (a == NCCL_ALGO_NVLS_TREE) {
                if (fr->nvls >= NVLS_2_19)
                    lat += intra_lat + 2 * log2i(n_nodes) * inter_lat;
                else /* 2.18: 2 (nNodes - 1) network hops */
                    lat += 2 * (n_nodes - 1) * inter_lat;
            } else { /* PAT */
                lat += log2i(n_nodes) * (inter_lat / 3.5) + n_ranks * 2.8;
            }
            out[a][p] = (NcclCost){lat * US, bus * GBPS};
        }
    }
}

double nccl_model_time_s(const NcclComm *c, NcclFunc f, NcclAlgo algo, NcclProto proto,
                         double bytes, NcclChoice *out)
{
    NcclCost table[NCCL_N_ALGOS][NCCL_N_PROTOS];
    nccl_model_tune(c, f, table);
    double bw = table[algo][proto].algbw_bytes_per_s, lat = table[algo][proto].latency_s;
    if (bw <= 0)
        return -1.0;
    const FormulaRow *fr = formula_row(release_of(c));
    const double(*corr)[24] = tree_corrections[fr->tree_correction];
    const int n_corr = tree_correction_entries[fr->tree_correction];
    int log_size = log2i(floor(bytes / 64.0));
    if (algo == NCCL_ALGO_TREE && f == NCCL_FUNC_ALL_REDUCE && log_size >= 0 && log_size < n_corr)
        bw *= corr[proto][log_size];
    /* NVLSTree's correction (2.29 and later), on Blackwell with x86 hosts (both of zerosim's
     * CPU vendors) */
    if (algo == NCCL_ALGO_NVLS_TREE && f == NCCL_FUNC_ALL_REDUCE && log_size >= 0 &&
        log_size < 24 && c->arch >= PLATFORM_ARCH_BLACKWELL && fr->has_nvls_tree_correction)
        bw *= corr[proto][log_size];
    /* the ring's plateau: multi-node Simple all-reduces with >= 64 B per channel and rank
     * (before 2.18: bytes >= ranks / 16 x 64 KiB); x 1.9, less on newer GPUs */
    const bool is_plateau = fr->is_plateau_per_channel
                                ? bytes / ((double)c->n_channels * c->n_ranks) >= 64
                                : bytes >= c->n_ranks / 16.0 * 65536;
    if (algo == NCCL_ALGO_RING && proto == NCCL_PROTO_SIMPLE && c->n_nodes > 1 &&
        f == NCCL_FUNC_ALL_REDUCE && is_plateau)
        lat *= c->arch < fr->plateau_fast_from ? 1.9 : fr->plateau_fast;
    double t = lat + bytes / bw;
    if (out)
        *out = (NcclChoice){algo, proto, lat, bw, t};
    return t;
}

NcclChoice nccl_model_choose(const NcclComm *c, NcclFunc f, double bytes, bool force_algo,
                             NcclAlgo algo)
{
    NcclChoice best = {NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0.0, 0.0, -1.0};
    for (int pass = force_algo ? 0 : 1; pass < 2 && best.time_s < 0; pass++) {
        for (int a = 0; a < NCCL_N_ALGOS; a++) {
            if (pass == 0 && a != (int)algo)
                continue;
            for (int p = 0; p < NCCL_N_PROTOS; p++) {
                NcclChoice ch;
                double t = nccl_model_time_s(c, f, (NcclAlgo)a, (NcclProto)p, bytes, &ch);
                if (t >= 0 && (best.time_s < 0 || t < best.time_s))
                    best = ch;
            }
        }
    }
    assert(c->n_ranks < 2 || best.time_s >= 0); /* ring Simple always runs */
    return best;
}

const char *nccl_model_algo_name(NcclAlgo algo)
{
    static const char *const names[] = {"tree", "ring", "pat", "nvls", "nvls_tree"};
    return names[algo];
}

const char *nccl_model_proto_name(NcclProto proto)
{
    static const char *const names[] = {"LL", "LL128", "Simple"};
    return names[proto];
}
