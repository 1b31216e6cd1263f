/*
 * ds_estimator.h - DeepSpeed's own memory estimators, reproduced for side-by-side reports.
 *
 * estimate_zero2_model_states_mem_needs (deepspeed/runtime/zero/stage_1_and_2.py) and
 * estimate_zero3_model_states_mem_needs (deepspeed/runtime/zero/stage3.py), DeepSpeed 0.19
 * (2026): model states only, no activations, no fragmentation, with a host-side
 * additional_buffer_factor (1.5 by default). They are what users compare against, so zerosim
 * shows them beside its own accounting; they are not zerosim's model.
 */
#ifndef ZEROSIM_MODEL_DS_ESTIMATOR_H
#define ZEROSIM_MODEL_DS_ESTIMATOR_H

#include <stdbool.h>
#include <stdint.h>

typedef struct DsEstimate {
    uint64_t gpu_bytes; /* per GPU */
    uint64_t cpu_bytes; /* per node */
} DsEstimate;

#define DS_ESTIMATOR_BUFFER_FACTOR 1.5

/* ZeRO-2 (also used by DeepSpeed for stage 1):
 *   offload:    gpu = 2P,              cpu = P max(4 G, 16) abf
 *   no offload: gpu = 2P + int(18P/G), cpu = 4 P g abf
 * with G all GPUs and g GPUs per node. */
DsEstimate ds_estimator_zero2(uint64_t total_params, uint64_t gpus_per_node, uint64_t n_nodes,
                              bool cpu_offload, double buffer_factor);

/* ZeRO-3, with L the largest module's parameters:
 *   gpu = 4L (+ int(2P/G) unless params are offloaded; + int(18P/G) without offload)
 *   cpu: offload both: 18 P/nodes abf (zero_init) or P max(4 g, 18/nodes) abf
 *        offload optimizer: 16 P/nodes abf (zero_init) or P max(4 g, 16/nodes) abf
 *        none: 4 L g abf (zero_init) or 4 P g abf */
DsEstimate ds_estimator_zero3(uint64_t total_params, uint64_t largest_layer_params,
                              uint64_t gpus_per_node, uint64_t n_nodes, bool cpu_offload,
                              bool cpu_offload_params, bool zero_init, double buffer_factor);

#endif
