/*
 * runtime_memory.h - what the CUDA runtime, cuBLAS and NCCL hold on each GPU.
 *
 * Beside the tensors a framework allocates, every training process holds memory that no
 * model-state formula counts: the CUDA context (driver state and the loaded kernels), the
 * cuBLAS workspace of each handle and stream, and NCCL's buffers, per communicator and per
 * channel. The context and NCCL's buffers are allocated outside PyTorch's caching allocator
 * (nvidia-smi shows them, torch.cuda.memory_reserved does not); the cuBLAS workspaces go
 * through the allocator. The sizes per GPU generation come from the platform's "runtime"
 * section; NCCL's buffer sizes are NCCL's compiled-in defaults. Place in the pipeline: model/,
 * read by estimate (the analytic verdict) and by the schedule (the workspace allocation) and
 * the engine (the memory outside the allocator).
 */
#ifndef ZEROSIM_MODEL_RUNTIME_MEMORY_H
#define ZEROSIM_MODEL_RUNTIME_MEMORY_H

#include "../inputs/ds_config.h"
#include "../inputs/platform.h"

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

/* cuBLAS handles a training step uses per GPU: PyTorch hands each thread its own handle
 * (CublasHandlePool.cpp getCurrentCUDABlasHandle, a thread-local pool window) and keys the
 * workspace by (handle, stream); forward runs on the Python thread and backward on autograd's
 * device thread, both on the compute stream. */
#define RUNTIME_CUBLAS_HANDLES 2u

/* NCCL's execution channels per communicator: twice the search channels of its ring graph
 * (the platform's nccl.channels; S. Jeaugey, NVIDIA/nccl#1041: "Execution channels are
 * typically 2x the search channels"); each holds one connection's buffers. */
uint64_t runtime_nccl_channels(const Platform *p);

typedef struct RuntimeMemory {
    bool is_counted;              /* the platform gives a runtime section */
    uint64_t n_communicators;     /* NCCL communicators a rank joins */
    uint64_t cuda_context_bytes;  /* outside the allocator */
    uint64_t nccl_bytes;          /* outside the allocator: NCCL's own cudaMalloc */
    uint64_t outside_bytes;       /* context + NCCL */
    uint64_t cublas_workspace_bytes; /* inside the allocator: handles x workspace */
} RuntimeMemory;

/* The runtime's memory per GPU for n_gpus data-parallel ranks under z. Each communicator
 * holds one ring connection per channel (the buffers of the connection from the previous
 * rank: NCCL allocates them at the receiver): the world, plus the shard and replica groups
 * when ZeRO-3 shards over fewer GPUs than the world (mics_shard_size, HYBRID_SHARD). A single
 * GPU opens no communicator. Without a runtime section everything is 0 and is_counted false. */
void runtime_memory(const Platform *p, const ZeroConfig *z, uint64_t n_gpus, RuntimeMemory *out);

/* The same for a mixture of experts split over expert-parallel groups of ep_size: each rank
 * also joins its expert-parallel and its expert-data-parallel group (DeepSpeed's groups.py
 * creates both, and the all-to-alls and expert reductions open their communicators), two more
 * communicators. ep_size 1 is runtime_memory. */
void runtime_memory_ep(const Platform *p, const ZeroConfig *z, uint64_t n_gpus, uint64_t ep_size,
                       RuntimeMemory *out);

#endif
