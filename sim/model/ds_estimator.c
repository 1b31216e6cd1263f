/*
 * ds_estimator.c - DeepSpeed's estimate_zero{2,3}_model_states_mem_needs arithmetic, with the
 * same integer truncations (see ds_estimator.h).
 */
#include "ds_estimator.h"

static double max_d(double a, double b)
{
    return a > b ? a : b;
}

DsEstimate ds_estimator_zero2(uint64_t total_params, uint64_t gpus_per_node, uint64_t n_nodes,
                              bool cpu_offload, double buffer_factor)
{
    const double p = (double)total_params;
    const uint64_t total_gpus = gpus_per_node * n_nodes;
    DsEstimate e;
    if (cpu_offload) {
        e.gpu_bytes = 2 * total_params;
        e.cpu_bytes = (uint64_t)(p * max_d(4.0 * (double)total_gpus, 16.0) * buffer_factor);
    } else {
        e.gpu_bytes = 2 * total_params + (uint64_t)(18.0 * p / (double)total_gpus);
        e.cpu_bytes = (uint64_t)(p * 4.0 * (double)gpus_per_node * buffer_factor);
    }
    return e;
}

DsEstimate ds_estimator_zero3(uint64_t total_params, uint64_t largest_layer_params,
                              uint64_t gpus_per_node, uint64_t n_nodes, bool cpu_offload,
                              bool cpu_offload_params, bool zero_init, double buffer_factor)
{
    const double p = (double)total_params;
    const double g = (double)gpus_per_node;
    const double gpus_factor = 1.0 / (double)n_nodes;
    const double total_gpus = g * (double)n_nodes;
    const uint64_t largest_layer_memory = 4 * largest_layer_params;
    DsEstimate e;
    if (cpu_offload) {
        if (cpu_offload_params) {
            e.gpu_bytes = largest_layer_memory;
            e.cpu_bytes =
                (uint64_t)(zero_init ? p * 18.0 * gpus_factor * buffer_factor
                                     : p * max_d(4.0 * g, 18.0 * gpus_factor) * buffer_factor);
        } else {
            e.gpu_bytes = largest_layer_memory + (uint64_t)(2.0 * p / total_gpus);
            e.cpu_bytes =
                (uint64_t)(zero_init ? p * 16.0 * gpus_factor * buffer_factor
                                     : p * max_d(4.0 * g, 16.0 * gpus_factor) * buffer_factor);
        }
    } else {
        e.gpu_bytes = largest_layer_memory + (uint64_t)(18.0 * p / total_gpus);
        e.cpu_bytes = (uint64_t)(zero_init ? (double)largest_layer_params * 4.0 * g * buffer_factor
                                           : p * 4.0 * g * buffer_factor);
    }
    return e;
}
