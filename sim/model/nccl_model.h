/*
 * nccl_model.h - NCCL's own cost model of a collective: which algorithm and protocol it
 * picks for a message size and rank count, and the latency and bandwidth it expects of them.
 *
 * This is the arithmetic of NCCL's tuner (src/graph/tuning.cc, ncclTopoTuneModel and
 * ncclTopoGetAlgoTime, read at every NVIDIA/nccl tag from v2.7.3-1 to v2.30.7-1, the constants
 * and formulas of the release the platform names in nccl.version): for each algorithm (tree, ring,
 * PAT) and protocol (LL, LL128, Simple) a latency = base latency + steps x per-hop latency by link
 * type (NVLink, PCIe, network), and a bandwidth = channels x per-channel bandwidth, scaled by
 * the protocol's payload share (LL carries 8 data bytes per 16, LL128 120 per 128) and capped
 * per channel and protocol; NCCL runs the pair with the smallest latency + bytes / bandwidth.
 * Where the platform's NVSwitches have NVLink SHARP (nvlink.nvls: HGX/DGX H100 and later),
 * NVLS (the switch reduces and multicasts inside one node: all-reduce, all-gather,
 * reduce-scatter) and NVLSTree (NVLS inside each node, a tree between nodes: all-reduce) are
 * candidates too, Simple only, on the NVLS graph that NCCL's search builds (its channels and
 * per-channel bandwidths, src/graph/search.cc). CollNet (network switch offload) is not
 * modelled. Pure arithmetic: the engine asks it once per collective and keeps the flows of the
 * bandwidth part in SimGrid, where they contend.
 */
#ifndef ZEROSIM_MODEL_NCCL_MODEL_H
#define ZEROSIM_MODEL_NCCL_MODEL_H

#include "../inputs/platform.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum NcclAlgo {
    NCCL_ALGO_TREE,
    NCCL_ALGO_RING,
    NCCL_ALGO_PAT,
    NCCL_ALGO_NVLS,
    NCCL_ALGO_NVLS_TREE,
    NCCL_N_ALGOS
} NcclAlgo;
typedef enum NcclProto {
    NCCL_PROTO_LL,
    NCCL_PROTO_LL128,
    NCCL_PROTO_SIMPLE,
    NCCL_N_PROTOS
} NcclProto;
typedef enum NcclFunc {
    NCCL_FUNC_ALL_REDUCE,
    NCCL_FUNC_ALL_GATHER,
    NCCL_FUNC_REDUCE_SCATTER,
    NCCL_FUNC_BROADCAST,
    NCCL_N_FUNCS
} NcclFunc;

/* What NCCL's tuner knows of a communicator. */
typedef struct NcclComm {
    uint32_t release;      /* the NCCL release whose tuner runs (nccl_model_release); 0: the
                            * default release, PLATFORM_NCCL_VERSION */
    PlatformArch arch;     /* NCCL's compute-capability row of its tables */
    PlatformCpuVendor cpu; /* its multi-node LL row, and the network post overhead */
    uint32_t n_ranks;
    uint32_t n_nodes;
    uint32_t n_channels;         /* the ring graph's channels */
    bool is_nvlink_intra;        /* intra-node hops over NVLink (else PCIe) */
    bool has_ll128;              /* LL128 enabled on these paths (tuning.cc's protoEnable) */
    double bw_intra_bytes_per_s; /* per channel, inside a node */
    double bw_inter_bytes_per_s; /* per channel, across nodes */
    /* The NVLS graph (src/graph/search.cc, pattern NVLS); has_nvls false when NCCL has none
     * (no NVLink SHARP, one GPU per node, fewer than 2 channels). */
    bool has_nvls;
    uint32_t nvls_channels;           /* its heads: every GPU on one node, else every NIC */
    double nvls_bw_intra_bytes_per_s; /* per channel: GPU <-> NVSwitch (graph bwIntra) */
    double nvls_bw_inter_bytes_per_s; /* per channel: the graph's bwInter */
} NcclComm;

/* One (algorithm, protocol) as the tuner sees it; bw 0 when NCCL would not run it. */
typedef struct NcclCost {
    double latency_s;
    double algbw_bytes_per_s; /* bytes / (time - latency), the tuner's "bandwidth" */
} NcclCost;

typedef struct NcclChoice {
    NcclAlgo algo;
    NcclProto proto;
    double latency_s;         /* the tuner's latency, plateau factor included */
    double algbw_bytes_per_s; /* the tuner's bandwidth at this size (tree correction included) */
    double time_s;            /* latency + bytes / bandwidth */
} NcclChoice;

/* The NCCL release platform p names (nccl.version), major x 100 + minor (2.21 is 221);
 * PLATFORM_NCCL_VERSION when it names none or p is NULL. The one place that reads it: the
 * tuner here and the memory of model/runtime_memory.c both use it. */
uint32_t nccl_model_version(const Platform *p);

/* The same release with its patch, 20000 + 100 x minor + patch (2.21.5 is 22105; a release
 * given without a patch, "2.18", is 21800: the first tag of that line). The tuner's constants
 * are those of the last NVIDIA/nccl tag at or before it that changed them. */
uint32_t nccl_model_release(const Platform *p);

/* That release as NCCL writes it ("2.30", "2.21.5": the patch when the platform gives one)
 * into buf of n bytes; returns buf. */
const char *nccl_model_release_name(const Platform *p, char *buf, size_t n);

/* The communicator NCCL builds for `n_ranks` ranks over `n_nodes` nodes of platform p. */
void nccl_model_comm(const Platform *p, uint32_t n_ranks, uint32_t n_nodes, NcclComm *out);

/* The tuner's table for `func`: latency and bandwidth of every (algorithm, protocol). */
void nccl_model_tune(const NcclComm *c, NcclFunc func, NcclCost out[NCCL_N_ALGOS][NCCL_N_PROTOS]);

/* ncclTopoGetAlgoTime: the time of one (algorithm, protocol) on `bytes` (nccl-tests' size:
 * the whole buffer of an all-reduce, the gathered buffer of an all-gather); negative when
 * unavailable. Fills *out when not NULL. */
double nccl_model_time_s(const NcclComm *c, NcclFunc func, NcclAlgo algo, NcclProto proto,
                         double bytes, NcclChoice *out);

/* NCCL's choice for `bytes`: the fastest available pair, restricted to `algo` when `force_algo`
 * (nccl's NCCL_ALGO); falls back to the fastest of any algorithm when the forced one cannot run
 * this collective (as a tree for an all-gather). */
NcclChoice nccl_model_choose(const NcclComm *c, NcclFunc func, double bytes, bool force_algo,
                             NcclAlgo algo);

const char *nccl_model_algo_name(NcclAlgo algo);
const char *nccl_model_proto_name(NcclProto proto);

#endif
