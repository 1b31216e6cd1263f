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
