/*
 * fixtures.h - small platforms and rank lists shared by the collective tests.
 *
 * A platform of n_nodes nodes of gpus_per_node GPUs, everything else zero (one GPU per PCIe
 * switch), is all collective_plan() and all_to_all_plan() read; members 0..n-1 in ring order.
 */
#ifndef ZEROSIM_TESTS_FIXTURES_H
#define ZEROSIM_TESTS_FIXTURES_H

#include "inputs/platform.h"

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

#endif
