/*
 * runtime_memory.c - CUDA context, cuBLAS workspaces and NCCL buffers per GPU (see
 * runtime_memory.h).
 */
#include "runtime_memory.h"

#include "zero_memory.h"

uint64_t runtime_nccl_channels(const Platform *p)
{
    return 2 * p->nccl.channels;
}

void runtime_memory(const Platform *p, const ZeroConfig *z, uint64_t n_gpus, RuntimeMemory *out)
{
    *out = (RuntimeMemory){0};
    if (!p->has_runtime)
        return;
    out->is_counted = true;
    out->cuda_context_bytes = p->runtime.cuda_context_bytes;
    out->cublas_workspace_bytes = RUNTIME_CUBLAS_HANDLES * p->runtime.cublas_workspace_bytes;
    if (n_gpus > 1)
        out->n_communicators = zero_shard_gpus(z, n_gpus) < n_gpus ? 3 : 1;
    out->nccl_bytes =
        out->n_communicators * runtime_nccl_channels(p) * (uint64_t)RUNTIME_NCCL_CONNECTION_BYTES;
    out->outside_bytes = out->cuda_context_bytes + out->nccl_bytes;
}

void runtime_memory_ep(const Platform *p, const ZeroConfig *z, uint64_t n_gpus, uint64_t ep_size,
                       RuntimeMemory *out)
{
    runtime_memory(p, z, n_gpus, out);
    if (!out->is_counted || ep_size < 2 || n_gpus < 2)
        return;
    out->n_communicators += ep_size < n_gpus ? 2 : 1; /* the EP group; expert DP unless 1 */
    out->nccl_bytes =
        out->n_communicators * runtime_nccl_channels(p) * (uint64_t)RUNTIME_NCCL_CONNECTION_BYTES;
    out->outside_bytes = out->cuda_context_bytes + out->nccl_bytes;
}
