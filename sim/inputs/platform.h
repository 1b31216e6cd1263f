/*
 * platform.h - a GPU cluster described in zerosim's platform JSON (platforms/<name>.json).
 *
 * The record holds what the engine and the analytic model need: GPUs (peak FLOP/s, HBM size
 * and bandwidth), NVLink/NVSwitch, the PCIe tree (GPUs and NICs sharing a switch and its
 * uplink), the host CPU (cores, DRAM, optimizer rate), NVMe drives, NICs and the fabric. Every
 * number is in base units (bytes, seconds, per second) with the unit in the key. This is our
 * own format: unknown keys are errors. The file is validated completely here, so that the
 * engine never hands SimGrid something it would throw on.
 */
#ifndef ZEROSIM_INPUTS_PLATFORM_H
#define ZEROSIM_INPUTS_PLATFORM_H

#include "../common/err.h"
#include "../common/precision.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct LinkSpec {
    double bw_bytes_per_s; /* per direction */
    double latency_s;
} LinkSpec;

typedef enum FabricTopology { FABRIC_FAT_TREE, FABRIC_RAIL_OPTIMIZED } FabricTopology;

/* The order of nodes along NCCL's rings (which follow rank order, so the launcher's host
 * order): packed, consecutive nodes fill a leaf before the next one (a topology-aware
 * hostfile); spread, node i on leaf group i mod n_groups (round-robin over leaves, so every
 * ring hop crosses the spine); cross_nic, packed, but a channel that leaves a node through
 * NIC k enters the next one through NIC k+1 (NCCL_CROSS_NIC=1 rings: every hop changes rail). */
typedef enum PlatformRingOrder {
    PLATFORM_RING_PACKED,
    PLATFORM_RING_SPREAD,
    PLATFORM_RING_CROSS_NIC,
    PLATFORM_N_RING_ORDERS
} PlatformRingOrder;

/* The GPU generation, as NCCL's tuner indexes its tables (compute capability 7.x, 8.x, 9.x,
 * 10.x), and the host CPU vendor, which selects its multi-node LL limits and network post
 * overhead (src/graph/tuning.cc). */
typedef enum PlatformArch {
    PLATFORM_ARCH_VOLTA,
    PLATFORM_ARCH_AMPERE,
    PLATFORM_ARCH_HOPPER,
    PLATFORM_ARCH_BLACKWELL,
    PLATFORM_N_ARCHS
} PlatformArch;
typedef enum PlatformCpuVendor { PLATFORM_CPU_INTEL, PLATFORM_CPU_AMD } PlatformCpuVendor;

/* FlashAttention's published throughput (the optional "gpu.flash_attention" table): for one
 * kernel release, head dimension, mask and pass, the FLOP/s it reached at a few sequence
 * lengths, counted as the FlashAttention-2 benchmark counts them (forward 4 b s^2 a d, halved
 * when causal; backward 2.5x the forward; benchmarks/benchmark_flash_attention.py flops()).
 * model/kernels.c interpolates between the points. */
typedef enum PlatformFlashKernel {
    PLATFORM_FLASH_V2, /* FlashAttention-2 (flash-attn 2.x) */
    PLATFORM_FLASH_V1, /* the first FlashAttention (flash-attn 1.x) */
    PLATFORM_FLASH_V3, /* FlashAttention-3, Hopper's kernels (flash-attn-3, hopper/) */
    PLATFORM_FLASH_TRITON, /* the first FlashAttention's algorithm in Triton
                            * (flash_attn/flash_attn_triton.py; llm-foundry's "triton") */
    PLATFORM_N_FLASH_KERNELS
} PlatformFlashKernel;
/* The pass a rate was measured over: forward and backward together (the time of both over
 * the FLOPs of both), the forward alone, the backward alone. */
typedef enum PlatformFlashPass {
    PLATFORM_FLASH_FWD_BWD,
    PLATFORM_FLASH_FWD,
    PLATFORM_FLASH_BWD,
    PLATFORM_N_FLASH_PASSES
} PlatformFlashPass;

#define PLATFORM_FLASH_MAX_ROWS 24
#define PLATFORM_FLASH_MAX_POINTS 12

typedef struct PlatformFlashRow {
    PlatformFlashKernel kernel;
    PlatformFlashPass pass;
    uint64_t head_dim;
    bool is_causal;
    size_t n_points;
    double seq_len[PLATFORM_FLASH_MAX_POINTS]; /* tokens per sequence, increasing */
    double flops_per_s[PLATFORM_FLASH_MAX_POINTS];
} PlatformFlashRow;

typedef struct PlatformFlashTable {
    size_t n_rows; /* 0: no table (attention runs at peak x attention_efficiency) */
    PlatformFlashRow rows[PLATFORM_FLASH_MAX_ROWS];
} PlatformFlashTable;

typedef struct Platform {
    char name[64];
    char description[256];
    uint64_t n_nodes;
    uint64_t gpus_per_node;

    struct {
        char model[64];
        double fp32_flops_per_s;     /* dense peak */
        double fp16_flops_per_s;     /* dense tensor-core peak */
        double bf16_flops_per_s;     /* dense tensor-core peak; 0 when unsupported (V100) */
        double gemm_efficiency;      /* achieved / peak for large GEMMs, before calibration */
        double attention_efficiency; /* achieved / peak for attention kernels (FlashAttention)
                                        where the flash table has no rate; gemm_efficiency
                                        when the file gives none */
        bool has_attention_efficiency;
        PlatformFlashTable flash; /* FlashAttention's published rates; n_rows 0 when absent */
        double comm_sm_fraction; /* share of the GPU's compute that running NCCL kernels take
                                    from concurrent kernels; 0 when the file gives none */
        /* the kernel model (model/kernels.h) */
        double matmul_flops_per_s;   /* measured 16-bit matmul ceiling: sustained (MSMF) where
                                        published, else the best shape's burst (MAMF) */
        uint64_t sm_count;           /* streaming multiprocessors (tiles per GEMM wave) */
        double gemm_fixed_s;         /* a GEMM kernel's device time beyond its roofline: start,
                                        tail (the Hockney t0 of its fit) */
        double gemm_wave_s;          /* each wave of output tiles: its k-loop's pipeline fill
                                        and its tiles' epilogue */
        double memory_bw_efficiency; /* achievable / datasheet HBM bandwidth, streaming kernels */
        double kernel_launch_s;      /* host time to issue one kernel (the launch floor) */
        uint64_t hbm_bytes;
        double hbm_bw_bytes_per_s;
    } gpu;

    bool has_nvlink;   /* false: GPUs talk over PCIe through the host */
    bool has_nvswitch; /* all-to-all at full port bandwidth; false: direct links */
    bool has_nvls;     /* the NVSwitches reduce and multicast (NVLink SHARP, "nvlink.nvls";
                          false when absent): NCCL's NVLS and NVLSTree algorithms */
    LinkSpec nvlink;   /* per GPU, aggregated over its links */

    struct {
        LinkSpec gpu_link; /* each GPU's own lanes */
        uint64_t gpus_per_switch;
        uint64_t nics_per_switch;
        LinkSpec switch_uplink; /* switch to CPU root complex */
    } pcie;

    struct {
        char model[64];
        uint64_t cores; /* per node, all sockets */
        uint64_t dram_bytes;
        double dram_bw_bytes_per_s;
        double adam_params_per_s_per_core; /* fused CPU Adam update rate */
        double param_host_s; /* host (Python) seconds a sharding framework spends on one
                                parameter each time it gathers and releases it: swapping the
                                parameter's data to the gathered view and back, status and
                                stream bookkeeping (schedule/cost.h CostHost); optional: 0,
                                not counted, when the platform does not give it */
    } cpu;

    struct {
        uint64_t n_drives; /* per node; 0 = none */
        uint64_t capacity_bytes_per_drive;
        double read_bw_bytes_per_s_per_drive;
        double write_bw_bytes_per_s_per_drive;
    } nvme;

    struct {
        uint64_t per_node;
        LinkSpec link;
    } nic;

    /* What the CUDA runtime and libraries hold per GPU (the optional "runtime" section; when
     * absent, has_runtime is false and reports say these are not counted). */
    bool has_runtime;
    struct {
        uint64_t cuda_context_bytes;     /* context + loaded kernels, outside the allocator:
                                            lazy module loading (CUDA_MODULE_LOADING=LAZY) */
        uint64_t cuda_context_eager_bytes; /* ... with every kernel loaded at start (eager
                                              loading, before CUDA 11.7 and PyTorch 1.13);
                                              0: not given */
        uint64_t cublas_workspace_bytes; /* per cuBLAS handle and stream, inside it */
        bool is_eager_loading;           /* cuda_context_bytes is the eager one */
    } runtime;

    /* The switch network as built (docs/PLATFORM-FORMAT.md, "fabric"). Leaf switches serve
     * nodes_per_leaf nodes (one leaf per rail and group of nodes when rail-optimised); each
     * leaf's uplink carries its downlinks' capacity / oversubscription into the spine tier,
     * whose aggregate capacity is its leaves' uplinks / spine_oversubscription; with
     * nodes_per_pod, pods of that many nodes (whole leaf groups) each have their spine tier and
     * an uplink of that tier's capacity / core_oversubscription into an unlimited core. Without
     * nodes_per_leaf (0) every node is its own leaf with one uplink for all its NICs, into a
     * spine without a limit: the per-node model of earlier versions. */
    struct {
        FabricTopology topology;
        double oversubscription;       /* leaf down:up, >= 1; 1 = full bisection */
        double latency_s;              /* every inter-node path's switch traversal */
        uint64_t nodes_per_leaf;       /* 0: the per-node uplink */
        double spine_oversubscription; /* >= 1; 1 without a spine section */
        uint64_t nodes_per_pod;        /* 0: one spine tier over all leaves */
        double core_oversubscription;  /* >= 1; pods' uplinks into the core */
    } fabric;

    /* How a job sits on the cluster: set from the command line (platform_set_ring_order,
     * platform_set_straggler), zero-initialised by the parser to the symmetric default. */
    struct {
        PlatformRingOrder ring_order;
        bool has_straggler;
        bool is_straggler_node; /* the straggler is a whole node, else one GPU */
        uint64_t straggler_index;  /* node or GPU rank */
        double straggler_slowdown; /* > 1: its GPUs compute this many times slower */
    } job;

    struct {
        PlatformArch arch;
        PlatformCpuVendor cpu_vendor;
        uint64_t channels; /* the channels of NCCL's ring graph on this machine */
        /* The NCCL release the cluster's software stack runs, major x 100 + minor (2.21 is
         * 221): what NCCL allocates on the GPU, and when, changed across releases
         * (model/runtime_memory.h), and so did its tuner's constants (model/nccl_model.h).
         * Optional "version" key; absent, PLATFORM_NCCL_VERSION. */
        uint32_t version;
        /* Its patch release (2.21.5: 5), 0 when the key gave none: the tuner's constants
         * changed between patch releases too (model/nccl_model.h, nccl_model_release). */
        uint32_t version_patch;
    } nccl;
} Platform;

/* The NCCL release assumed when a platform names none: 2.30, the release whose sources
 * model/runtime_memory.c was read at (NVIDIA/nccl v2.30.7-1; nothing it models changed
 * after 2.22). */
#define PLATFORM_NCCL_VERSION 230u

/* Parses platform JSON text; `file` names it in messages. */
int platform_parse(Platform *out, const char *file, const char *text, size_t n_bytes, Err *err);

/* Loads a path, or resolves a name in <data_dir>/platforms/. */
int platform_load(Platform *out, const char *name_or_path, const char *data_dir, Err *err);

/* Resizes to `gpus` GPUs and/or `nodes` nodes (0 = keep). Fewer GPUs than a node holds gives
 * one partial node; more must be a multiple of gpus_per_node. */
int platform_resize(Platform *p, uint64_t gpus, uint64_t nodes, Err *err);

/* Sets the ring order (after resizing). */
void platform_set_ring_order(Platform *p, PlatformRingOrder order);

/* CUDA's module loading for the run: eager replaces the context with
 * runtime.cuda_context_eager_bytes (what the CUDA runtime holds when it loads every kernel of
 * the libraries at start, as before CUDA 11.7 and PyTorch 1.13). 0, or -1 with err set when
 * eager is asked of a platform without that key. */
int platform_set_module_loading(Platform *p, bool is_eager, Err *err);

/* Makes one node (is_node) or one GPU rank `index` compute `slowdown` (> 1) times slower;
 * fails when index is not in the (resized) platform. `what` names the option in messages. */
int platform_set_straggler(Platform *p, bool is_node, uint64_t index, double slowdown,
                           const char *what, Err *err);

/* Leaf switches of the fabric as built: groups of nodes_per_leaf nodes (the last one may be
 * partly empty), times the rails when rail-optimised; 0 for the per-node model. */
uint64_t platform_n_leaf_groups(const Platform *p);

/* True when some ring hop's traffic must leave a leaf switch (the job spans several leaf
 * groups, or cross-NIC rings change rail) through an oversubscribed leaf uplink, spine tier
 * or core: where the per-node model and the fabric as built can differ. */
bool platform_fabric_is_shared(const Platform *p);

/* A flash kernel's name as platform files and reports write it: "v2", "v1", "v3", "triton". */
const char *platform_flash_kernel_name(PlatformFlashKernel kernel);

static inline uint64_t platform_n_gpus(const Platform *p)
{
    return p->n_nodes * p->gpus_per_node;
}

/* True when the GPU's flash_attention table has rows of that kernel. */
static inline bool platform_has_flash_kernel(const Platform *p, PlatformFlashKernel kernel)
{
    for (size_t i = 0; i < p->gpu.flash.n_rows; i++)
        if (p->gpu.flash.rows[i].kernel == kernel)
            return true;
    return false;
}

/* Dense peak for the training precision's GEMMs (bf16 falls back to fp16 when absent). */
double platform_peak_flops_per_s(const Platform *p, Precision precision);

#endif
