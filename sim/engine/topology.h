/*
 * topology.h - names and placement of the modelled hardware: which node, PCIe switch and NIC
 * a rank sits behind, and how traffic between two endpoints is classified.
 *
 * Shared by the SimGrid platform generator and the collective planner so that both agree on
 * where rank r lives. Pure arithmetic on the Platform record; no SimGrid.
 */
#ifndef ZEROSIM_ENGINE_TOPOLOGY_H
#define ZEROSIM_ENGINE_TOPOLOGY_H

#include "../inputs/platform.h"

#include <stdint.h>

typedef enum LinkClass { LINK_NVLINK, LINK_PCIE, LINK_NIC, LINK_NVME, LINK_N_CLASSES } LinkClass;

static inline uint32_t topology_node(const Platform *p, uint32_t rank)
{
    return (uint32_t)(rank / p->gpus_per_node);
}

static inline uint32_t topology_local(const Platform *p, uint32_t rank)
{
    return (uint32_t)(rank % p->gpus_per_node);
}

/* PCIe switch of a rank within its node. */
static inline uint32_t topology_switch(const Platform *p, uint32_t rank)
{
    return topology_local(p, rank) / (uint32_t)p->pcie.gpus_per_switch;
}

/* The NIC (index within the node) a rank's inter-node traffic leaves through: the NICs behind
 * its PCIe switch, shared round-robin by the switch's GPUs; NICs attached to the CPU root
 * complex (nics_per_switch 0) are shared round-robin by all GPUs. */
uint32_t topology_nic(const Platform *p, uint32_t rank);

/* Class of the traffic between two GPUs: NVLink inside an NVLink node, PCIe inside a node
 * without NVLink, NIC across nodes. */
LinkClass topology_gpu_pair_class(const Platform *p, uint32_t a, uint32_t b);

const char *topology_link_class_name(LinkClass c);

#endif
