/*
 * runtime_memory.h - what the CUDA runtime, cuBLAS and NCCL hold on each GPU.
 *
 * Beside the tensors a framework allocates, every training process holds memory that no
 * model-state formula counts: the CUDA context (driver state and the loaded kernels), the
 * cuBLAS workspace of each handle and stream, and NCCL's buffers, per communicator, per
 * algorithm it connects and per channel. The context and NCCL's buffers are allocated outside
 * PyTorch's caching allocator (nvidia-smi shows them, torch.cuda.memory_reserved does not); the
 * cuBLAS workspaces go through the allocator. The sizes per GPU generation come from the
 * platform's "runtime" section; NCCL's buffer sizes are NCCL's compiled-in defaults, and which
 * algorithms it connects, and when, depends on the release (the platform's nccl.version).
 * Place in the pipeline: model/, read by estimate (the analytic verdict) and by the schedule
 * (the workspace allocation) and the engine (the memory outside the allocator).
 */
#ifndef ZEROSIM_MODEL_RUNTIME_MEMORY_H
#define ZEROSIM_MODEL_RUNTIME_MEMORY_H

#include "../inputs/ds_config.h"
#include "../inputs/platform.h"
#include "nccl_model.h"

#include <stdbool.h>
#include <stdint.h>

/* NCCL's per-connection buffers (src/init.cc computeBuffSizes, DEFAULT_*_BUFFSIZE): LL is
 * NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8 x 16 B lines, LL128
 * NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x 8 steps x 8 B, Simple 4 MiB. */
#define RUNTIME_NCCL_LL_BYTES 524288u
#define RUNTIME_NCCL_LL128_BYTES 4915200u
#define RUNTIME_NCCL_SIMPLE_BYTES 4194304u
#define RUNTIME_NCCL_CONNECTION_BYTES                                                              \
    (RUNTIME_NCCL_LL_BYTES + RUNTIME_NCCL_LL128_BYTES + RUNTIME_NCCL_SIMPLE_BYTES)

/* Every buffer NCCL maps for a connection is rounded up to CUDA_IPC_MIN = 2 MiB (src/include/
 * comm.h; p2p.cc p2pSendSetup/p2pRecvSetup ALIGN_SIZE(..., CUDA_IPC_MIN), net.cc
 * sendProxyConnect; ncclCuMemAlloc rounds to the allocation granularity, 2 MiB) and carries a
 * 4 KiB ncclSendMem or ncclRecvMem header (comm.h, pad to MEM_ALIGN). */
#define RUNTIME_NCCL_ALIGN_BYTES 2097152u

/* One NVLink/PCIe P2P connection, both ends together (p2p.cc): with P2P reads (NVLink on
 * Ampere and later) the sender maps 4 KiB + Simple -> 6 MiB and the receiver 4 KiB + LL +
 * LL128 -> 6 MiB; with writes the sender 4 KiB -> 2 MiB and the receiver 4 KiB + all three
 * -> 10 MiB: 12 MiB either way, so a GPU that sends and receives one connection per channel
 * holds 12 MiB per channel whichever mode its link takes. */
#define RUNTIME_NCCL_P2P_CONNECTION_BYTES 12582912u

/* One end of a network connection in GPU memory with GPUDirect RDMA (net.cc): the receiver
 * maps LL + LL128 + Simple (recvProxyConnect, useGdr), the sender LL128 + Simple (LL stays in
 * host memory: sendProxyConnect, p != NCCL_PROTO_LL && useGdr), each rounded to 10 MiB. The
 * platforms modelled are DGX-class nodes whose NICs share a PCIe switch with their GPU, the
 * condition of ncclTopoCheckGdr (path <= PXB); without GDR these buffers are in host memory. */
#define RUNTIME_NCCL_NET_END_BYTES 10485760u

/* NVLS (src/transport/nvls.cc): per head and NVLS channel, a reduce and a broadcast buffer
 * of buffSize; the channels are NCCL_NVLS_NCHANNELS / NVLS_NCHANNELS_SM90 = 16 CTAs except in
 * 2.20-2.21, which sized the buffers by the communicator's channels (comm->nChannels). */
#define RUNTIME_NCCL_NVLS_CTAS 16u
#define RUNTIME_NCCL_NVLS_CHUNK_BYTES 131072u /* NCCL_NVLS_CHUNKSIZE, 2.21 and later */

/* The algorithms whose connections a communicator holds (bits of 1 << NcclAlgo). */
#define RUNTIME_NCCL_TREE (1u << NCCL_ALGO_TREE)
#define RUNTIME_NCCL_RING (1u << NCCL_ALGO_RING)
#define RUNTIME_NCCL_NVLS (1u << NCCL_ALGO_NVLS)
#define RUNTIME_NCCL_NVLS_TREE (1u << NCCL_ALGO_NVLS_TREE)

/* cuBLAS handles a training step uses per GPU: PyTorch hands each thread its own handle
 * (CublasHandlePool.cpp getCurrentCUDABlasHandle, a thread-local pool window) and keys the
 * workspace by (handle, stream); forward runs on the Python thread and backward on autograd's
 * device thread, both on the compute stream. */
#define RUNTIME_CUBLAS_HANDLES 2u

/* NCCL's execution channels per communicator: twice the search channels of its ring graph
 * (the platform's nccl.channels; S. Jeaugey, NVIDIA/nccl#1041: "Execution channels are
 * typically 2x the search channels"); rings and trees run on these channels. */
uint64_t runtime_nccl_channels(const Platform *p);

/* NCCL's buffers per GPU of one communicator, by algorithm. */
typedef struct RuntimeNcclBytes {
    uint64_t ring_bytes;
    uint64_t tree_bytes;      /* the tree's connections the ring does not already hold */
    uint64_t nvls_bytes;      /* multicast buffers and credits */
    uint64_t nvls_tree_bytes; /* NVLSTree's network connections between the node heads */
} RuntimeNcclBytes;

/* The bytes per GPU of a communicator of n_ranks GPUs over n_nodes nodes of p (n_ranks a
 * multiple of n_nodes) that holds the connections of `algos` (RUNTIME_NCCL_* bits) under
 * NCCL release `version` (major x 100 + minor). Per channel a ring holds, per node, its
 * g - 1 P2P connections and its two network ends (one node: g P2P connections); a tree adds
 * the reverse of each chain link inside a node and both directions of each of the double
 * binary tree's n_nodes - 1 edges (init.cc ncclTransportTreeConnect, up to
 * NCCL_MAX_TREE_ARITY children and a parent); the total is shared evenly by the GPUs, as NCCL
 * rotates the network ends of the channels over the GPUs of a node. NVLS is per GPU: heads x
 * channels x 2 x buffSize (ncclNvlsBufferSetup), plus its 2 MiB of credits from 2.22. */
void runtime_nccl_comm_bytes(const Platform *p, uint32_t n_ranks, uint32_t n_nodes, unsigned algos,
                             uint32_t version, RuntimeNcclBytes *out);

/* The algorithms a data-parallel communicator of n_ranks over n_nodes connects under z when it
 * carries every collective of the step: runtime_nccl_algos_of with RUNTIME_COLL_GATHERS |
 * RUNTIME_COLL_REDUCTIONS. */
unsigned runtime_nccl_algos(const Platform *p, const ZeroConfig *z, uint32_t n_ranks,
                            uint32_t n_nodes);

/* The collectives a communicator carries (bits). */
enum {
    RUNTIME_COLL_GATHERS = 1 << 0,    /* the stage's all-gathers (ZeRO-1/2 parameter updates at
                                         allgather_bucket_size, ZeRO-3 fetches at
                                         stage3_prefetch_bucket_size) */
    RUNTIME_COLL_REDUCTIONS = 1 << 1, /* the gradient reductions at reduce_bucket_size and the
                                         per-step one-element all-reduce */
};

/* The algorithms a communicator of n_ranks over n_nodes connects under z, carrying `colls`.
 * Before 2.22 NCCL connects ring and tree, and NVLS (2.17+) and NVLSTree (2.18+, across
 * nodes) where the NVLS graph exists, in ncclCommInitRank (init.cc initTransportsRank),
 * whatever runs on it. From 2.22 (NCCL_RUNTIME_CONNECT=1, lazy connection, where cuMem is
 * supported: a CUDA 12 driver, misc/cudawrap.cc ncclIsCuMemSupported; not with
 * NCCL_CUMEM_ENABLE=0) an algorithm is connected by the first collective that runs it
 * (enqueue.cc ncclPrepareTasks, group.cc ncclCollPreconnect): those NCCL's tuner
 * (nccl_model_choose) picks for the collectives it carries, the stage's bucketed all-reduce,
 * reduce-scatter or all-gather at their 2-byte bucket sizes and the per-step one-element
 * all-reduce of the gradient norm and overflow check (DeepSpeed get_grad_norm_direct,
 * has_overflow). */
unsigned runtime_nccl_algos_of(const Platform *p, const ZeroConfig *z, uint32_t n_ranks,
                               uint32_t n_nodes, unsigned colls);

/* Whose process groups the step's collectives run on. */
typedef enum RuntimeFramework {
    RUNTIME_DEEPSPEED, /* the engine's data-parallel group, a clone of the world group, and for
                          ZeRO-3 the world group itself: see runtime_memory */
    RUNTIME_FSDP,      /* the group FSDP is given: the default (world) group */
} RuntimeFramework;

typedef struct RuntimeMemory {
    bool is_counted;                 /* the platform gives a runtime section */
    uint64_t n_communicators;        /* NCCL communicators a rank joins */
    uint64_t cuda_context_bytes;     /* outside the allocator */
    bool is_eager_loading;           /* the context with every kernel loaded at start */
    uint64_t nccl_bytes;             /* outside the allocator: NCCL's own allocations, the sum: */
    RuntimeNcclBytes nccl;           /*   by algorithm, over the communicators */
    uint64_t outside_bytes;          /* context + NCCL */
    uint64_t cublas_workspace_bytes; /* inside the allocator: handles x workspace */
} RuntimeMemory;

/* The runtime's memory per GPU for n_gpus data-parallel ranks under z, run by framework f.
 * The communicators:
 * - FSDP, and DeepSpeed's ZeRO-0/1/2: one over the world's ranks carrying every collective.
 *   DeepSpeed runs them on its engine's data-parallel group (engine.py
 *   _configure_distributed_model: _initialize_parameter_parallel_groups' new_group before
 *   0.5, groups._get_data_parallel_group -> _clone_world_group, a new_group of every rank,
 *   since), FSDP on the default group;
 * - DeepSpeed's ZeRO-3: two over the world's ranks. zero.Init, as HF transformers'
 *   from_pretrained and stage 3's own _convert_to_zero_parameters call it without an mpu,
 *   gives every parameter ds_process_group = the world group (partition_parameters.py
 *   Init.__init__, every release from 0.3.13), so the parameter all-gathers run on the world
 *   communicator, while the optimizer's gradient reductions and its one-element all-reduces
 *   run on the engine's data-parallel clone (stage3 dp_process_group): a communicator each,
 *   with its own buffers (c10d creates one NCCL communicator per process group);
 * plus the shard and replica groups when ZeRO-3 shards over fewer GPUs than the world
 * (mics_shard_size, HYBRID_SHARD), each with the algorithms runtime_nccl_algos gives it.
 * A single GPU opens no communicator. Without a runtime section everything is 0 and
 * is_counted false. */
void runtime_memory(const Platform *p, const ZeroConfig *z, RuntimeFramework f, uint64_t n_gpus,
                    RuntimeMemory *out);

/* The same for a mixture of experts split over expert-parallel groups of ep_size: each rank
 * also joins its expert-parallel and its expert-data-parallel group (DeepSpeed's groups.py
 * creates both, and the all-to-alls and expert reductions open their communicators), two more
 * communicators, each counted with its ring (the expert gradients' all-reduce; the
 * all-to-all's send/recv buffers are not modelled). ep_size 1 is runtime_memory. */
void runtime_memory_ep(const Platform *p, const ZeroConfig *z, RuntimeFramework f, uint64_t n_gpus,
                       uint64_t ep_size, RuntimeMemory *out);

#endif
