/*
 * topology.c - rank placement and traffic classes (see topology.h).
 */
#include "topology.h"

uint32_t topology_nic(const Platform *p, uint32_t rank)
{
    uint32_t local = topology_local(p, rank);
    if (p->pcie.nics_per_switch == 0)
        return local % (uint32_t)p->nic.per_node;
    uint32_t in_switch = local % (uint32_t)p->pcie.gpus_per_switch;
    return topology_switch(p, rank) * (uint32_t)p->pcie.nics_per_switch +
           in_switch % (uint32_t)p->pcie.nics_per_switch;
}

uint32_t topology_nic_in(const Platform *p, uint32_t rank)
{
    uint32_t nic = topology_nic(p, rank);
    if (p->job.ring_order == PLATFORM_RING_CROSS_NIC)
        nic = (nic + 1) % (uint32_t)p->nic.per_node;
    return nic;
}

uint32_t topology_node_group(const Platform *p, uint32_t node)
{
    const uint64_t npl = p->fabric.nodes_per_leaf;
    if (npl == 0)
        return 0;
    if (p->job.ring_order == PLATFORM_RING_SPREAD)
        return (uint32_t)(node % platform_n_leaf_groups(p));
    return (uint32_t)(node / npl);
}

uint32_t topology_group_pod(const Platform *p, uint32_t group)
{
    if (p->fabric.nodes_per_pod == 0)
        return 0;
    return (uint32_t)(group / (p->fabric.nodes_per_pod / p->fabric.nodes_per_leaf));
}

bool topology_hops_cross_rails(const Platform *p)
{
    return p->fabric.nodes_per_leaf > 0 && p->fabric.topology == FABRIC_RAIL_OPTIMIZED &&
           p->job.ring_order == PLATFORM_RING_CROSS_NIC;
}

LinkClass topology_gpu_pair_class(const Platform *p, uint32_t a, uint32_t b)
{
    if (topology_node(p, a) != topology_node(p, b))
        return LINK_NIC;
    return p->has_nvlink ? LINK_NVLINK : LINK_PCIE;
}

const char *topology_link_class_name(LinkClass c)
{
    static const char *const names[] = {"nvlink", "pcie", "nic", "nvme"};
    return names[c];
}
