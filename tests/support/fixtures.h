/*
 * fixtures.h - small platforms and rank lists shared by the collective tests.
 *
 * A platform of n_nodes nodes of gpus_per_node GPUs, everything else zero (one GPU per PCIe
 * switch), is all collective_plan() and all_to_all_plan() read; members 0..n-1 in ring order.
 * For the kernel model's tests: a toy GPU (100 TFLOP/s matmul, 1e12 B/s, 50 TFLOP/s
 * attention, 100 SMs, 5 us a launch) and a one-layer MPT (h = 1280, 10 heads of 128, f = 5120,
 * V = 1280, LayerNorm, fused QKV, no biases), whose GEMMs fill whole waves on 100 SMs.
 */
#ifndef ZEROSIM_TESTS_FIXTURES_H
#define ZEROSIM_TESTS_FIXTURES_H

#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/kernels.h"

#include <stdint.h>
#include <string.h>

static inline Platform fixture_nodes(uint64_t gpus_per_node, uint64_t n_nodes)
{
    Platform p;
    memset(&p, 0, sizeof p);
    p.gpus_per_node = gpus_per_node;
    p.n_nodes = n_nodes;
    p.pcie.gpus_per_switch = 1;
    return p;
}

static inline void fixture_members(uint32_t *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        m[i] = i;
}

static inline KernelGpu fixture_toy_gpu(void)
{
    return (KernelGpu){.matmul_flops_per_s = 100e12,
                       .memory_bytes_per_s = 1e12,
                       .attention_flops_per_s = 50e12,
                       .sm_count = 100,
                       .launch_s = 5e-6};
}

static inline ModelConfig fixture_mpt_layer(void)
{
    return (ModelConfig){.family = MODEL_FAMILY_MPT,
                         .hidden = 1280,
                         .n_layers = 1,
                         .n_heads = 10,
                         .n_kv_heads = 10,
                         .head_dim = 128,
                         .ffn_hidden = 5120,
                         .vocab = 1280,
                         .n_layer_norms = 2,
                         .has_final_norm = true,
                         .is_qkv_fused = true};
}

#endif
