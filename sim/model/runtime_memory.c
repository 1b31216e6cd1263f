/*
 * runtime_memory.c - CUDA context, cuBLAS workspaces and NCCL buffers per GPU (see
 * runtime_memory.h). NCCL's allocations as read in NVIDIA/nccl's sources (src/init.cc,
 * src/transport/{p2p,net,nvls,generic}.cc, src/enqueue.cc, src/group.cc) at the releases
 * where they changed: 2.17 (NVLS), 2.18 (NVLSTree), 2.20 and 2.21 (NVLS buffer sizes), 2.22
 * (lazy connection, NVLS credits apart).
 */
#include "runtime_memory.h"

#include "zero_memory.h"

#define MIB 1048576ull

uint64_t runtime_nccl_channels(const Platform *p)
{
    return 2 * p->nccl.channels;
}

/* NVLS buffers per GPU (nvls.cc ncclNvlsSetup / ncclNvlsBufferSetup, per release):
 *   2.17-2.19: heads x NCCL_NVLS_NCHANNELS 16 x 2 x (Simple 4 MiB + NVLS_MEM_ALIGN_SIZE 2 MiB)
 *   2.20:      heads x comm->nChannels x 2 x (4 MiB + 2 MiB)
 *   2.21:      heads x comm->nChannels x 2 x (NCCL_NVLS_CHUNKSIZE 128 KiB x NCCL_STEPS 8 + 2 MiB)
 *   2.22+:     heads x 16 x 2 x (128 KiB x 8), the credits (64 B each) apart in one 2 MiB
 *              granule (nvlsAllocateMem rounds to CU_MEM_ALLOC_GRANULARITY_RECOMMENDED).
 * Check: 2.20 on 8 H200 logs "nHeads 8 buffSize 4194304 memSize 2097152 nvlsPerRankSize
 * 301989888 nvlsTotalSize 2415919104" (vllm-project/vllm#9699): 8 x 24 x 2 x 6 MiB. */
static uint64_t nvls_buffer_bytes(uint64_t heads, uint64_t channels, uint32_t version)
{
    if (version < 217)
        return 0;
    if (version <= 219)
        return heads * RUNTIME_NCCL_NVLS_CTAS * 2 * (RUNTIME_NCCL_SIMPLE_BYTES + 2 * MIB);
    if (version == 220)
        return heads * channels * 2 * (RUNTIME_NCCL_SIMPLE_BYTES + 2 * MIB);
    const uint64_t buff = (uint64_t)RUNTIME_NCCL_NVLS_CHUNK_BYTES * 8; /* NCCL_STEPS */
    if (version == 221)
        return heads * channels * 2 * (buff + 2 * MIB);
    return heads * RUNTIME_NCCL_NVLS_CTAS * 2 * buff;
}

void runtime_nccl_comm_bytes(const Platform *p, uint32_t n_ranks, uint32_t n_nodes, unsigned algos,
                             uint32_t version, RuntimeNcclBytes *out)
{
    *out = (RuntimeNcclBytes){0};
    if (n_ranks < 2 || n_nodes < 1 || n_ranks % n_nodes != 0)
        return;
    const uint64_t r = n_ranks, k = n_nodes, g = r / k;
    const uint64_t ch = runtime_nccl_channels(p);
    const uint64_t p2p = RUNTIME_NCCL_P2P_CONNECTION_BYTES, net = RUNTIME_NCCL_NET_END_BYTES;
    /* generic.cc ncclTransportRingConnect: recv from ring.prev, send to ring.next. */
    if (algos & RUNTIME_NCCL_RING) {
        uint64_t per_channel = k == 1 ? r * p2p : k * ((g - 1) * p2p + 2 * net);
        out->ring_bytes = ch * per_channel / r;
    }
    /* ncclTransportTreeConnect: recv from and send to tree.up and tree.down[]; a connector
     * already connected (the ring's, from the previous GPU of the chain) is not set up again
     * (transport.cc ncclTransportP2pConnect skips connected peers). */
    if (algos & RUNTIME_NCCL_TREE) {
        uint64_t per_channel = k * (g - 1) * p2p + (k - 1) * 4 * net;
        out->tree_bytes = ch * per_channel / r;
    }
    NcclComm c;
    nccl_model_comm(p, n_ranks, n_nodes, &c);
    if (!c.has_nvls || version < 217)
        return;
    if (algos & (RUNTIME_NCCL_NVLS | RUNTIME_NCCL_NVLS_TREE))
        out->nvls_bytes = nvls_buffer_bytes(c.nvls_channels, ch, version);
    if (version >= 222)
        out->nvls_bytes += RUNTIME_NCCL_ALIGN_BYTES; /* credits, in ncclNvlsSetup at init */
    /* ncclNvlsTreeConnect: over the nvlsChannels, tree.up and treeDown[] between the heads
     * of the nodes, network connections of the NVLS graph. */
    if ((algos & RUNTIME_NCCL_NVLS_TREE) && k > 1 && version >= 218)
        out->nvls_tree_bytes = RUNTIME_NCCL_NVLS_CTAS * (k - 1) * 4 * net / r;
}

static unsigned chosen(const NcclComm *c, NcclFunc f, double bytes)
{
    if (bytes <= 0.0)
        return 0;
    return 1u << nccl_model_choose(c, f, bytes, false, NCCL_ALGO_RING).algo;
}

unsigned runtime_nccl_algos_of(const Platform *p, const ZeroConfig *z, uint32_t n_ranks,
                               uint32_t n_nodes, unsigned colls)
{
    if (n_ranks < 2 || colls == 0)
        return 0;
    NcclComm c;
    nccl_model_comm(p, n_ranks, n_nodes, &c);
    const uint32_t version = nccl_model_version(p);
    if (version < 222) {
        unsigned a = RUNTIME_NCCL_RING | RUNTIME_NCCL_TREE;
        if (c.has_nvls && version >= 217)
            a |= RUNTIME_NCCL_NVLS;
        if (c.has_nvls && version >= 218 && n_nodes > 1)
            a |= RUNTIME_NCCL_NVLS_TREE;
        return a;
    }
    /* 2-byte (fp16/bf16) elements in the buckets; the per-step scalar: DeepSpeed's
     * get_grad_norm / has_overflow all-reduce one fp32 element. */
    const double reduce_bytes = 2.0 * (double)z->reduce_bucket_size;
    unsigned a = 0;
    if (colls & RUNTIME_COLL_REDUCTIONS) {
        a |= chosen(&c, NCCL_FUNC_ALL_REDUCE, 4.0);
        if (z->stage == 0)
            a |= chosen(&c, NCCL_FUNC_ALL_REDUCE, reduce_bytes);
        else if (z->stage <= 2)
            a |= chosen(&c,
                        z->multi_rank_bucket_allreduce ? NCCL_FUNC_ALL_REDUCE
                                                       : NCCL_FUNC_REDUCE_SCATTER,
                        reduce_bytes);
        else
            a |= chosen(&c, NCCL_FUNC_REDUCE_SCATTER, reduce_bytes);
    }
    if ((colls & RUNTIME_COLL_GATHERS) && z->stage >= 1)
        a |= chosen(&c, NCCL_FUNC_ALL_GATHER,
                    2.0 * (double)(z->stage <= 2 ? z->allgather_bucket_size
                                                 : z->prefetch_bucket_size));
    return a;
}

unsigned runtime_nccl_algos(const Platform *p, const ZeroConfig *z, uint32_t n_ranks,
                            uint32_t n_nodes)
{
    return runtime_nccl_algos_of(p, z, n_ranks, n_nodes,
                                 RUNTIME_COLL_GATHERS | RUNTIME_COLL_REDUCTIONS);
}

/* Adds one communicator of n_ranks over n_nodes with algos. */
static void add_comm(const Platform *p, uint32_t n_ranks, uint32_t n_nodes, unsigned algos,
                     RuntimeMemory *out)
{
    if (n_ranks < 2)
        return;
    RuntimeNcclBytes b;
    runtime_nccl_comm_bytes(p, n_ranks, n_nodes, algos, nccl_model_version(p), &b);
    out->n_communicators++;
    out->nccl.ring_bytes += b.ring_bytes;
    out->nccl.tree_bytes += b.tree_bytes;
    out->nccl.nvls_bytes += b.nvls_bytes;
    out->nccl.nvls_tree_bytes += b.nvls_tree_bytes;
    out->nccl_bytes = out->nccl.ring_bytes + out->nccl.tree_bytes + out->nccl.nvls_bytes +
                      out->nccl.nvls_tree_bytes;
    out->outside_bytes = out->cuda_context_bytes + out->nccl_bytes;
}

/* The nodes a group of n ranks spans when its members are `stride` GPUs apart. */
static uint32_t group_nodes(const Platform *p, uint64_t n, uint64_t stride)
{
    const uint64_t gpn = p->gpus_per_node > 0 ? p->gpus_per_node : 1;
    if (stride >= gpn)
        return (uint32_t)n; /* one member per node */
    uint64_t per_node = gpn / stride;
    return (uint32_t)(n <= per_node ? 1 : (n + per_node - 1) / per_node);
}

/* A group's shape for NCCL: ranks over nodes, the ranks a multiple of the nodes. */
static void comm_of(const Platform *p, const ZeroConfig *z, uint64_t n, uint64_t stride,
                    unsigned colls, RuntimeMemory *out)
{
    uint32_t nodes = group_nodes(p, n, stride);
    if (n % nodes != 0)
        nodes = 1; /* ragged groups: counted as one node's */
    add_comm(p, (uint32_t)n, nodes, runtime_nccl_algos_of(p, z, (uint32_t)n, nodes, colls), out);
}

void runtime_memory(const Platform *p, const ZeroConfig *z, RuntimeFramework f, uint64_t n_gpus,
                    RuntimeMemory *out)
{
    *out = (RuntimeMemory){0};
    if (!p->has_runtime)
        return;
    out->is_counted = true;
    out->cuda_context_bytes = p->runtime.cuda_context_bytes;
    out->is_eager_loading = p->runtime.is_eager_loading;
    out->cublas_workspace_bytes = RUNTIME_CUBLAS_HANDLES * p->runtime.cublas_workspace_bytes;
    out->outside_bytes = out->cuda_context_bytes;
    if (n_gpus < 2)
        return;
    const unsigned every = RUNTIME_COLL_GATHERS | RUNTIME_COLL_REDUCTIONS;
    const uint64_t shard = zero_shard_gpus(z, n_gpus);
    if (f == RUNTIME_DEEPSPEED && z->stage == 3 && shard == n_gpus) {
        comm_of(p, z, n_gpus, 1, RUNTIME_COLL_GATHERS, out);    /* zero.Init's world group */
        comm_of(p, z, n_gpus, 1, RUNTIME_COLL_REDUCTIONS, out); /* the engine's clone */
        return;
    }
    comm_of(p, z, n_gpus, 1, every, out);
    if (shard < n_gpus) {
        comm_of(p, z, shard, 1, every, out);              /* the shard group: consecutive GPUs */
        comm_of(p, z, n_gpus / shard, shard, every, out); /* the replica group: one per shard */
    }
}

void runtime_memory_ep(const Platform *p, const ZeroConfig *z, RuntimeFramework f, uint64_t n_gpus,
                       uint64_t ep_size, RuntimeMemory *out)
{
    runtime_memory(p, z, f, n_gpus, out);
    if (!out->is_counted || ep_size < 2 || n_gpus < 2)
        return;
    uint32_t nodes = group_nodes(p, ep_size, 1);
    add_comm(p, (uint32_t)ep_size, ep_size % nodes ? 1 : nodes, RUNTIME_NCCL_RING, out);
    if (ep_size < n_gpus) { /* the expert-data-parallel group: one rank per EP group */
        uint64_t n = n_gpus / ep_size;
        uint32_t dn = group_nodes(p, n, ep_size);
        add_comm(p, (uint32_t)n, n % dn ? 1 : dn, RUNTIME_NCCL_RING, out);
    }
}
