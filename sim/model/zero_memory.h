/*
 * zero_memory.h - where model states live under DDP and ZeRO-1/2/3, with offload.
 *
 * The ZeRO paper's accounting (Rajbhandari et al. 2020, sec. 5, Table 1): with mixed-precision
 * Adam a parameter costs 2 bytes (16-bit weight) + 2 (16-bit gradient) + K = 12 (fp32 master
 * weight, momentum, variance), so a GPU holds 16 Psi under DDP, 4 Psi + 12 Psi/N under ZeRO-1,
 * 2 Psi + 14 Psi/N under ZeRO-2 and 16 Psi/N under ZeRO-3. Partitions are ceil(Psi/N) elements,
 * as DeepSpeed pads them. fp32 training (4 + 4 + 4 x states) and other optimizers follow the
 * same split. ZeRO-3 keeps parameters under the persistence threshold gathered on every GPU;
 * that full copy sits beside the partition and is counted with the buffers. Offload moves
 * the optimizer partition (and the fp32 gradient partition DeepSpeed keeps beside it) to CPU
 * or NVMe (there swapped out with the states), and ZeRO-3 parameters to CPU or NVMe. Communication
 * and gather buffers are counted separately, from DeepSpeed's bucket settings.
 */
#ifndef ZEROSIM_MODEL_ZERO_MEMORY_H
#define ZEROSIM_MODEL_ZERO_MEMORY_H

#include "../inputs/ds_config.h"
#include "params.h"

#include <stdint.h>

/* Bytes per GPU (gpu_*) and per GPU's share of host memory and NVMe (cpu_*, nvme_*). */
typedef struct ZeroMemory {
    uint64_t partition_elems;  /* ceil(Psi / N); with experts split over ep ranks,
                                  ceil(Psi_dense / N) + ceil(experts / ep / (N / ep)) */
    uint64_t local_elems;      /* parameters a rank holds unsharded: Psi, or Psi_dense + its
                                  experts_total / ep */
    uint64_t expert_partition_elems; /* of partition_elems, the experts' share */
    uint64_t persistent_elems; /* ZeRO-3 resident parameters */
    uint64_t offloaded_elems;  /* of the partition, stepped on the host (0 without offload) */
    unsigned param_bytes;      /* per element: 2 mixed precision, 4 fp32 */
    unsigned grad_bytes;
    unsigned grad_comm_bytes;  /* per gradient element reduced: communication_data_type's
                                  (DeepSpeed; FSDP's reduce_dtype), else grad_bytes */
    unsigned optimizer_bytes; /* fp32 master (mixed precision only) + 4 x states */

    uint64_t gpu_params;
    uint64_t gpu_grads;
    uint64_t gpu_optimizer;
    uint64_t gpu_model_states; /* the sum of the three above */
    uint64_t gpu_buffers;      /* gradient buckets, gathered and persistent ZeRO-3 params */
    uint64_t gpu_step_copies;  /* optimizer-step working copies, held only during the step */

    uint64_t cpu_params; /* offloaded 16-bit parameter partition */
    uint64_t cpu_grads;  /* fp32 gradient partition beside an offloaded optimizer */
    uint64_t cpu_optimizer;
    uint64_t cpu_buffers; /* pinned staging for NVMe swaps */
    uint64_t nvme_params;
    uint64_t nvme_grads; /* fp32 gradient partition, swapped out with the states */
    uint64_t nvme_optimizer;
} ZeroMemory;

/* Model-state placement for `n_gpus` data-parallel ranks, every rank holding every expert. */
void zero_memory(const TrainConfig *cfg, const ModelParams *params, uint64_t n_layers,
                 uint64_t n_gpus, ZeroMemory *out);

/* The same with a mixture of experts split over expert-parallel groups of `ep_size`
 * (model/moe.h): non-expert parameters are replicated and partitioned over all n_gpus ranks,
 * each rank's experts_total / ep_size expert parameters over its expert-data-parallel group of
 * n_gpus / ep_size (DeepSpeed-MoE: stage 0 16 x local experts, ZeRO-1 4 x local + 12 x
 * experts / N, ZeRO-2 2 x local + 14 x experts / N, ZeRO-3 16 x experts / N). ep_size 1 is
 * zero_memory. */
void zero_memory_ep(const TrainConfig *cfg, const ModelParams *params, uint64_t n_layers,
                    uint64_t n_gpus, uint64_t ep_size, ZeroMemory *out);

/* Bytes per gradient element of a buffer that gradients are reduced from: the gradient, and
 * its copy in the communication type when that differs (DeepSpeed casts each bucket with
 * tensor.to(communication_data_type); FSDP2's foreach_reduce copies into its reduce_dtype). */
unsigned zero_memory_reduce_buffer_bytes(const ZeroMemory *m);

/* The working copies DeepSpeed's optimizer wrappers make on the GPU while they step, beside
 * the model states (bytes; 0 when the optimizer lives on the host):
 * - stage 0, fp16/bf16 (runtime/fp16/fused_optimizer.py FP16_Optimizer.step): every 16-bit
 *   gradient cast to fp32 (4 Psi), then flattened into one fp32 buffer (4 Psi more) = 8 Psi;
 *   fp32 training runs the bare torch optimizer, no copy;
 * - stages 1-2 (runtime/zero/stage_1_and_2.py DeepSpeedZeroOptimizer.step): the gradient
 *   partition flattened (grad_bytes x part) and cast to fp32 (4 x part), the fp32 copy kept
 *   through the optimizer step; in fp32 the cast is the same tensor, only the flatten copies;
 * - stage 3 (runtime/zero/stage3.py _prepare_fp32_grad_for_sub_group): the same per
 *   sub-group of min(sub_group_size, part) elements, one sub-group at a time.
 * The two copies coexist at the cast, so their sum is the peak. */
uint64_t zero_step_copies_bytes(const TrainConfig *cfg, uint64_t psi, uint64_t part);

/* Elements of a `part`-element partition whose optimizer lives off the GPU. ZeRO-3's partial
 * offload (offload_optimizer.ratio, DeepSpeed's stage3.py) works on whole sub-groups of
 * sub_group_size elements: the first int((1 - ratio) x n_sub) stay on the GPU, the rest go
 * to the host. Stages 1-2 ignore the ratio, as DeepSpeed does. */
uint64_t zero_offloaded_elems(const ZeroConfig *z, uint64_t part);

/* GPUs a stage-3 parameter is sharded over: zero_optimization.mics_shard_size (FSDP's
 * HYBRID_SHARD shards inside a node) when set and smaller than n_gpus, else all of them. */
uint64_t zero_shard_gpus(const ZeroConfig *z, uint64_t n_gpus);

/* The paper's closed forms for K = 12 mixed precision, in bytes, for tests and the report:
 * stage 0 16 Psi, 1: 4 Psi + 12 Psi/N, 2: 2 Psi + 14 Psi/N, 3: 16 Psi/N. */
double zero_memory_paper_bytes(int stage, double psi, double n_gpus);

#endif
