/*
 * moe.h - expert parallelism: where a mixture of experts' parameters live and what its
 * tokens move.
 *
 * DeepSpeed-MoE's grouping (deepspeed/utils/groups.py, _create_expert_and_data_parallel;
 * deepspeed/moe/layer.py MoE(ep_size=...)): the N data-parallel ranks form N / ep_size
 * expert-parallel groups of ep_size consecutive ranks; each group splits every MoE layer's
 * experts, n_experts / ep_size per rank, and the ranks holding the same experts (one per
 * expert-parallel group) form an expert-data-parallel group of N / ep_size. Non-expert
 * parameters are data-parallel over all N ranks; expert parameters over their
 * expert-data-parallel group only: their gradients are reduced there, and ZeRO partitions
 * them there (stage_1_and_2.py's real_dp_process_group per parameter group; FSDP2 + EP in
 * torchtitan shards experts over dp_shard_mod_ep). Each MoE layer's tokens go to their
 * experts and back by two all-to-alls over the expert-parallel group (deepspeed/moe/
 * sharded_moe.py MOELayer.forward: _AllToAll of the dispatched tensor, experts, _AllToAll
 * back), each a tensor of n_experts x capacity x h, capacity = capacity_factor x tokens x
 * top_k / n_experts (top1gating/topkgating); backward runs both again on the gradients.
 * Tokens are spread evenly over the experts by default (the balanced case, which the
 * load-balancing loss aims at); --moe-imbalance gives the busiest expert a larger share.
 * Pure arithmetic.
 */
#ifndef ZEROSIM_MODEL_MOE_H
#define ZEROSIM_MODEL_MOE_H

#include "params.h"
#include "setup.h"

/* The expert-parallel size in effect: setup->ep_size, 1 when unset or for a dense model. */
uint64_t moe_ep_size(const ModelParams *p, const RunSetup *setup);

/* The capacity factor in effect (1.0 when unset). */
double moe_capacity_factor(const RunSetup *setup);

/* The busiest expert's tokens, in balanced shares: the capacity factor (DeepSpeed pads every
 * expert's buffer to its capacity and computes on all of it), or the imbalance of a dropless
 * router (its busiest expert gets that many times its share) when larger. Every rank waits
 * for the busiest at each all-to-all, so the step runs at its pace. */
double moe_load_factor(const RunSetup *setup);

/* Expert parameters one rank holds unsharded: experts_total / ep. */
uint64_t moe_local_expert_params(const ModelParams *p, uint64_t ep);

/* Token copies the busiest rank's experts process in one MoE layer of one micro-batch:
 * moe_load_factor x tokens x top_k (balanced: every rank receives what it sends). */
double moe_routed_tokens(const ModelParams *p, const RunSetup *setup);

/* Bytes of one all-to-all buffer per rank (one MoE layer, one direction, one micro-batch):
 * routed tokens x h x activation bytes. */
double moe_all_to_all_buffer_bytes(const ModelConfig *cfg, const ModelParams *p,
                                   const RunSetup *setup);

/* Bytes one rank sends over the expert-parallel group in a step: per micro-batch and MoE
 * layer four all-to-alls (dispatch and combine, forward and backward) and two more for each
 * recomputed MoE layer, each sending (ep - 1) / ep of its buffer to the other members. */
double moe_all_to_all_step_bytes(const ModelConfig *cfg, const ModelParams *p,
                                 const RunSetup *setup);

#endif
