/*
 * all_to_all.h - one member's flows in an all-to-all: every member sends 1/n of its buffer
 * to every other member.
 *
 * NCCL runs an all-to-all as one send and one receive per peer, all in one group
 * (nccl-tests src/alltoall.cu: ncclSend/ncclRecv to every rank inside ncclGroupStart/End), so
 * every pair exchanges bytes / n at once and the links they share divide their bandwidth.
 * The plan keeps those pairwise volumes on the routes they take, in at most
 * COLLECTIVE_MAX_PHASES x COLLECTIVE_MAX_FLOWS flows a member: the member's peers inside its
 * node, summed, to its next GPU in the node (every NVLink port then sends and receives what
 * the pairwise pattern puts on it), and its peers on other nodes, summed, spread over up to
 * five destination nodes at offsets +1..+5 (each the same local GPU there, so each NIC carries
 * its GPU's share and the fabric sees traffic to several nodes at once). In symmetric mode a
 * group of n_logical members is simulated on fewer nodes: the volumes are those of n_logical.
 * Its latency under the NCCL model is NCCL's ring latency over the same communicator (n - 1
 * peer exchanges, as a ring all-gather's n - 1 steps; NCCL's tuner has no p2p table).
 */
#ifndef ZEROSIM_ENGINE_ALL_TO_ALL_H
#define ZEROSIM_ENGINE_ALL_TO_ALL_H

#include "collective.h"

/* Member `index`'s flows in an all-to-all of `bytes` per member over `members` (n simulated,
 * standing for n_logical). */
void all_to_all_plan(const Platform *p, const uint32_t *members, uint32_t n, uint32_t n_logical,
                     uint32_t index, double bytes, CollPlan *out);

/* Bytes member sends to other members: (n - 1) / n of its buffer (nccl-tests' busbw factor
 * for alltoall). */
double all_to_all_send_bytes(double bytes, uint32_t n);

#endif
