/*
 * nccl_model.c - NCCL's tuner arithmetic (see nccl_model.h).
 *
 * Every constant below is NCCL's, from src/graph/tuning.cc at NVIDIA/nccl HEAD
 * (ncclTunerConstantsDefaults, ncclTopoTuneModel, ncclTopoGetAlgoTime), in NCCL's units:
 * latencies in microseconds, bandwidths in GB/s (1e9 bytes/s). Indices follow NCCL's: tables
 * by algorithm are [tree, ring, pat, nvls, nvls_tree] here (NCCL's NCCL_ALGO_TREE, _RING, _PAT,
 * _NVLS, _NVLS_TREE; CollNet's rows are left out), by protocol [LL, LL128, Simple], by GPU
 * generation [Volta, Ampere, Hopper, Blackwell], by node count [1 node, 2 nodes, more]. The
 * NVLS graph's channels and bandwidths are those of NCCL's topology search (src/graph/search.cc,
 * ncclTopoCompute and ncclTopoSearchTryNvls, with its speed arrays).
 */
#include "nccl_model.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

#define US 1e-6  /* NCCL's latency unit */
#define GBPS 1e9 /* NCCL's bandwidth unit */

enum { HW_NVLINK, HW_PCI, HW_NET, N_HW };

/* tuning.cc baseLatencies: Tree, Ring, PAT, NVLS, NVLSTree rows (LL, LL128, Simple). */
static const double base_lat_us[NCCL_N_ALGOS][NCCL_N_PROTOS] = {
    {6.8, 14.0, 8.4}, /* Tree */
    {6.6, 14.0, 8.4}, /* Ring */
    {8.0, 8.0, 8.0},  /* PAT */
    {0, 0, 0},        /* NVLS */
    {0, 0, 0},        /* NVLSTree */
};

/* tuning.cc hwLatencies [NVLINK, PCI, NET][algorithm][protocol]. */
static const double hw_lat_us[N_HW][NCCL_N_ALGOS][NCCL_N_PROTOS] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 4.0}, {0, 0, 25}, {0, 0, 25}},     /* NVLink */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 4.0}, {0, 0, 0}, {0, 0, 0}},        /* PCI */
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}, {0, 0, 14.0}, {0, 0, 18}, {0, 0, 20.9}}, /* NET */
};

/* tuning.cc nvlsEfficiency [generation]: the share of the NVLS graph's bandwidth that the
 * switch's reductions deliver (none before Hopper). */
static const double nvls_efficiency[PLATFORM_N_ARCHS] = {0.0, 0.0, 0.85, 0.74};
/* tuning.cc perChMaxNVLSTreeBws [generation][nodes]. */
static const double per_ch_nvls_tree_bw[PLATFORM_N_ARCHS][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};

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
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
/* device.h NCCL_MAX_NVLS_ARITY: the most heads (channels) of an NVLS graph. */
#define NVLS_MAX_ARITY 32

/* tuning.cc llMaxBws [row][nodes]: rows are the GPU generation on one node, and the CPU vendor
 * (0 Intel, 1 AMD) across nodes. */
static const double ll_max_bw[PLATFORM_N_ARCHS][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}};
/* tuning.cc perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws [generation][nodes]. */
static const double per_ch_ring_ll128_bw[PLATFORM_N_ARCHS][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double per_ch_tree_ll128_bw[PLATFORM_N_ARCHS][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double per_ch_tree_bw[PLATFORM_N_ARCHS][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};

/* tuning.cc treeCorrectionFactor [protocol][log2(bytes / 64)], 64 B to 512 MB (the tree reads
 * the first 23 entries, NVLSTree all 24). */
static const double tree_correction[NCCL_N_PROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};

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
    out->has_ll128 = intra_ok && (n_nodes <= 1 || nic_near);
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
static bool is_candidate(const NcclComm *c, NcclFunc f, NcclAlgo a, NcclProto p)
{
    if (f == NCCL_FUNC_BROADCAST && a != NCCL_ALGO_RING)
        return false;
    if ((f == NCCL_FUNC_ALL_GATHER || f == NCCL_FUNC_REDUCE_SCATTER) && a == NCCL_ALGO_TREE)
        return false;
    if (a == NCCL_ALGO_PAT) {
        /* PAT: all-gather and reduce-scatter, Simple, one GPU per node (ncclPatEnable). */
        if (f != NCCL_FUNC_ALL_GATHER && f != NCCL_FUNC_REDUCE_SCATTER)
            return false;
        if (p != NCCL_PROTO_SIMPLE || c->n_nodes != c->n_ranks)
            return false;
    }
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) {
        /* Simple only (tuning.cc); an NVLS graph (nvlsSupport); NVLS on one node (across nodes
         * it needs CollNet) for all-reduce, all-gather and reduce-scatter, the latter two with
         * at most NCCL_MAX_NVLS_ARITY local ranks (enqueue.cc updateCollCostTable); NVLSTree
         * across nodes for all-reduce (tuning.cc: disabled on a single node) */
        if (p != NCCL_PROTO_SIMPLE || !c->has_nvls)
            return false;
        if (a == NCCL_ALGO_NVLS)
            return c->n_nodes <= 1 &&
                   (f == NCCL_FUNC_ALL_REDUCE ||
                    ((f == NCCL_FUNC_ALL_GATHER || f == NCCL_FUNC_REDUCE_SCATTER) &&
                     c->n_ranks <= NVLS_MAX_ARITY));
        return c->n_nodes > 1 && f == NCCL_FUNC_ALL_REDUCE;
    }
    if (p == NCCL_PROTO_LL128 && !c->has_ll128)
        return false;
    return true;
}

void nccl_model_tune(const NcclComm *c, NcclFunc f, NcclCost out[NCCL_N_ALGOS][NCCL_N_PROTOS])
{
    const uint32_t n_ranks = c->n_ranks, n_nodes = c->n_nodes > 0 ? c->n_nodes : 1;
    const int arch = (int)c->arch;
    const int index2 = n_nodes <= 2 ? (int)n_nodes - 1 : 2;
    const int index1 = n_nodes == 1 ? arch : (c->cpu == PLATFORM_CPU_AMD ? 1 : 0);
    const double ll_max = ll_max_bw[index1][index2];
    const double ppn = (double)n_ranks / n_nodes;
    const double n_ch = (double)c->n_channels;
    const uint32_t nsteps = func_steps(f, n_ranks);
    const int intra_hw = c->is_nvlink_intra ? HW_NVLINK : HW_PCI;
    for (int a = 0; a < NCCL_N_ALGOS; a++) {
        for (int p = 0; p < NCCL_N_PROTOS; p++) {
            out[a][p] = (NcclCost){0.0, 0.0};
            if (n_ranks < 2 || !is_candidate(c, f, (NcclAlgo)a, (NcclProto)p))
                continue;
            /* tuning.cc: bw = nNodes <= 2 ? bwIntra : bwInter; busBw = nChannels x bw */
            double bw = (n_nodes <= 2 ? c->bw_intra_bytes_per_s : c->bw_inter_bytes_per_s) / GBPS;
            double bus = n_ch * bw;
            if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) {
                /* tuning.cc: the NVLS busBW per channel, bwIntra x nvlsEfficiency x (nCh-1)/nCh,
                 * doubled for an all-reduce (it pipelines two operations), else x (ppn-1)/ppn;
                 * the graph's bwInter (doubled for NVLSTree on 2 nodes); NVLSTree capped at
                 * perChMaxNVLSTreeBw; times the NVLS graph's channels */
                const double nvls_ch = (double)c->nvls_channels;
                double intra = c->nvls_bw_intra_bytes_per_s / GBPS * nvls_efficiency[arch] *
                               (nvls_ch - 1) / nvls_ch;
                intra *= f == NCCL_FUNC_ALL_REDUCE ? 2.0 : (ppn - 1) / ppn;
                double inter = c->nvls_bw_inter_bytes_per_s / GBPS *
                               (n_nodes <= 2 && a == NCCL_ALGO_NVLS_TREE ? 2.0 : 1.0);
                bw = min2(intra, inter);
                if (a == NCCL_ALGO_NVLS_TREE)
                    bw = min2(bw, per_ch_nvls_tree_bw[arch][index2]);
                bus = nvls_ch * bw;
            }
            if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL)
                bus = min2(ll_max, bus * 0.5); /* LL: 8 data bytes per 16-byte line */
            if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128) /* 120 data bytes per 128 */
                bus = min2(bus * 0.92, n_ch * per_ch_ring_ll128_bw[arch][index2]);
            if (a == NCCL_ALGO_TREE && f == NCCL_FUNC_ALL_REDUCE)
                bus = min2(bus * 0.92, n_ch * per_ch_tree_bw[arch][index2]);
            if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL)
                bus = min2(bus / 3.8, ll_max);
            if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128)
                bus = min2(bus * (n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                           n_ch * per_ch_tree_ll128_bw[arch][index2]);
            if (a == NCCL_ALGO_PAT)
                bus *= 0.75;
            /* bus bandwidth to algorithm bandwidth: rings, NVLS and NVLSTree nRanks / nsteps,
             * trees 1/2; every non-ring all-gather and reduce-scatter (PAT, NVLS) keeps the
             * bus figure */
            const bool is_ag_rs = f == NCCL_FUNC_ALL_GATHER || f == NCCL_FUNC_REDUCE_SCATTER;
            if (a == NCCL_ALGO_RING ||
                (!is_ag_rs && (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE)))
                bus *= (double)n_ranks / nsteps;
            else if (a == NCCL_ALGO_TREE)
                bus *= 0.5;
            double lat = base_lat_us[a][p];
            double intra_lat = hw_lat_us[intra_hw][a][p];
            /* with one rank per node every hop is a network one: the tree's network latency */
            double inter_lat =
                ppn == 1.0 ? hw_lat_us[HW_NET][NCCL_ALGO_TREE][p] : hw_lat_us[HW_NET][a][p];
            /* graphs[a]->latencyInter: 0 for InfiniBand and RoCE NICs (NCCL's net plugins
             * report no latency), so the flush term of Simple adds nothing either */
            if (a == NCCL_ALGO_RING) {
                if (f == NCCL_FUNC_BROADCAST) {
                    /* sameChannels rings: one hop of the ring's hardware latency */
                    lat += hw_lat_us[n_nodes == 1 ? intra_hw : HW_NET][a][p];
                } else {
                    double overhead = 0.0;
                    if (n_nodes > 1) {
                        overhead = net_overhead_us(c);
                        if (p == NCCL_PROTO_SIMPLE)
                            overhead *= 3;
                    }
                    if (overhead > intra_lat)
                        intra_lat = overhead;
                    uint32_t inter_steps = n_nodes == 1                ? 0
                                           : f == NCCL_FUNC_ALL_REDUCE ? 2 * (n_nodes - 1)
                                                                       : n_nodes - 1;
                    lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
                }
            } else if (a == NCCL_ALGO_TREE) {
                lat += 2 * ((ppn - 1) * intra_lat + log2i(n_nodes) * inter_lat);
            } else if (a == NCCL_ALGO_NVLS) {
                /* the switch's hop replaces the base latency (tuning.cc assigns, not adds) */
                lat = intra_lat + (n_nodes > 1 ? inter_lat : 0.0);
            } else if (a == NCCL_ALGO_NVLS_TREE) {
                lat += intra_lat + 2 * log2i(n_nodes) * inter_lat;
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
    int log_size = log2i(floor(bytes / 64.0));
    if (algo == NCCL_ALGO_TREE && f == NCCL_FUNC_ALL_REDUCE && log_size >= 0 && log_size < 23)
        bw *= tree_correction[proto][log_size];
    /* NVLSTree's correction, on Blackwell with x86 hosts (both of zerosim's CPU vendors) */
    if (algo == NCCL_ALGO_NVLS_TREE && f == NCCL_FUNC_ALL_REDUCE && log_size >= 0 &&
        log_size < 24 && c->arch >= PLATFORM_ARCH_BLACKWELL)
        bw *= tree_correction[proto][log_size];
    /* the ring's plateau: multi-node Simple all-reduces with >= 64 B per channel and rank */
    if (algo == NCCL_ALGO_RING && proto == NCCL_PROTO_SIMPLE && c->n_nodes > 1 &&
        f == NCCL_FUNC_ALL_REDUCE && bytes / ((double)c->n_channels * c->n_ranks) >= 64)
        lat *= c->arch < PLATFORM_ARCH_AMPERE ? 1.9 : 1.4;
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
