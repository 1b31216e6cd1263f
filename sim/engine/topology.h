/*
 * topology.h - names and placement of the modelled hardware: which node, PCIe switch and NIC
 * a rank sits behind, and how traffic between two endpoints is classified.
 *
 * Shared by the SimGrid platform generator and the collective planner so that both agree on
 * where rank r lives, and which leaf group and pod of the fabric its node sits in (the job's
 * ring order decides the node-to-leaf placement). Pure arithmetic on the Platform record; no SimGrid.
 */
#ifndef ZEROSIM_ENGINE_TOPOLOGY_H
#define ZEROSIM_ENGINE_TOPOLOGY_H

#include "../inputs/platform.h"

#include <stdbool.h>
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

/* The NIC (index within the node) through which a rank receives inter-node traffic: its own
 * (topology_nic), or the next one under cross-NIC rings (PLATFORM_RING_CROSS_NIC), so that
 * a channel leaving through NIC k enters through NIC k + 1. */
uint32_t topology_nic_in(const Platform *p, uint32_t rank);

/* The leaf group (fabric.nodes_per_leaf nodes under the same leaf switches) of a job node:
 * node / nodes_per_leaf in packed ring order, node mod n_groups when spread. 0 without
 * leaves (the per-node model). */
uint32_t topology_node_group(const Platform *p, uint32_t node);

/* The pod of a leaf group (fabric.spine.nodes_per_pod); 0 with one spine tier. */
uint32_t topology_group_pod(const Platform *p, uint32_t group);

/* Whether node-to-node routes go up to the spine even inside a leaf group: cross-NIC rings
 * on a rail-optimised fabric, where every hop changes rail. */
bool topology_hops_cross_rails(const Platform *p);

/* Class of the traffic between two GPUs: NVLink inside an NVLink node, PCIe inside a node
 * without NVLink, NIC across nodes. */
LinkClass topology_gpu_pair_class(const Platform *p, uint32_t a, uint32_t b);

const char *topology_link_class_name(LinkClass c);

#endif
