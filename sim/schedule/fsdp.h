/*
 * fsdp.h - PyTorch FSDP sharding strategies as ZeRO configurations and schedule options.
 *
 * FSDP wraps each transformer block as one unit (a flat parameter): it gathers the whole unit
 * before use, prefetches the next unit (implicitly in forward, since the CPU runs ahead;
 * explicitly in backward with BACKWARD_PRE), reduce-scatters each unit's gradients right after
 * its backward, shards everything (no persistence threshold) and reduces in every micro-batch
 * unless no_sync is used. So FULL_SHARD is the ZeRO-3 schedule with one bucket per unit and
 * unbounded prefetch of one unit, HYBRID_SHARD the same sharded inside each node with the
 * gradient shards all-reduced across nodes (DeepSpeed's MiCS with a node-sized shard group),
 * SHARD_GRAD_OP keeps units gathered from forward to backward, NO_SHARD all-reduces each unit's
 * gradients during backward. Batch and precision keys of the ds_config still apply, and
 * MixedPrecision.param_dtype (fsdp_apply_param_dtype) decides the bytes of the gathered units
 * and whether autocast casts them at each use (docs/SCHEDULES.md).
 */
#ifndef ZEROSIM_SCHEDULE_FSDP_H
#define ZEROSIM_SCHEDULE_FSDP_H

#include "../common/err.h"
#include "../inputs/ds_config.h"
#include "cost.h"
#include "zero_schedule.h"

/* Parses "FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD" (case-insensitive); -1 when
 * unknown. */
int fsdp_parse(const char *name, FsdpStrategy *out);

const char *fsdp_name(FsdpStrategy s);

/* Rewrites train->zero for strategy s on nodes of gpus_per_node GPUs (recording what it set in
 * train->defaults_used) and sets the schedule's FSDP options. Fails when the config asks for
 * offload, which FSDP's CPUOffload models differently. */
int fsdp_apply(FsdpStrategy s, bool backward_prefetch, uint64_t gpus_per_node, TrainConfig *train,
               ScheduleOptions *opts, Err *err);

/* FSDP's MixedPrecision.param_dtype for a run in train->precision: the training's 16-bit type
 * (MixedPrecision(param_dtype=bf16), what llm-foundry's PURE and, from Composer 0.13.2, its
 * DEFAULT set) changes nothing; fp32 (no param_dtype: Composer's FULL, and DEFAULT before
 * 0.13.2) gathers and holds fp32 unsharded parameters that torch.autocast casts at each use,
 * and, unless the config's communication_data_type names a reduce_dtype, reduces the fp32
 * gradients (FlatParamHandle._init_param_reduce_dtypes: reduce_dtype defaults to the
 * parameter dtype). Sets opts->fsdp_param_bytes and records the choice in
 * train->defaults_used. Fails when a 16-bit param_dtype is not the training precision. */
int fsdp_apply_param_dtype(Precision param_dtype, TrainConfig *train, ScheduleOptions *opts,
                           Err *err);

/* Whether opts runs FSDP with fp32 parameters under 16-bit autocast (the casts below). */
bool fsdp_has_autocast_casts(const ScheduleOptions *opts, const TrainConfig *train);

/* Adds autocast's parameter casts to cost's layer and head passes (model/kernels.h
 * kernels_weight_casts): each forward and each recomputation of a layer whose forward
 * kernels re-run (full recomputation, and op-level selective, whose policy saves no casts)
 * casts every GEMM weight fp32 -> 16-bit, each backward casts the weight gradients back. */
void fsdp_cost_autocast(const ModelParams *p, const RunSetup *setup, StepCost *cost);

/* FSDP2 (torch.distributed fully_shard) shards each parameter on its own, so a unit's
 * all-gather lands in one flat buffer that the compute stream copies out into the unsharded
 * parameters before the unit runs (_fsdp_collectives.py foreach_all_gather_copy_out:
 * split_with_sizes_copy, after waiting on the all-gather's event): a memory-bound pass that
 * reads and writes the unit's gathered bytes, added to each forward and, where the unit is
 * gathered again for backward (`regathers`), to each backward (a recomputation reuses the
 * gathered unit). `param_bytes` per element. (FSDP1's flat parameter is gathered in place.) */
void fsdp2_cost_copy_out(const ModelParams *p, unsigned param_bytes, bool regathers,
                         StepCost *cost);

/* What FSDP does to a unit's unsharded gradients on its reduce-scatter stream before the
 * call, for a reduce-scatter of `bytes` in the reduce dtype (`reduce_bytes` per element), the
 * gradients made in `grad_bytes`:
 * - FSDP2 builds the reduce-scatter input from them, cast to the reduce dtype
 *   (_fsdp_collectives.py foreach_reduce -> foreach_reduce_scatter_copy_in,
 *   torch._chunk_cat): one pass reading grad_bytes and writing reduce_bytes per element;
 * - FSDP1 casts the flat gradient when the reduce dtype differs (_runtime_utils.py
 *   _post_backward_hook: unsharded_grad.to(reduce_dtype)), then divides it in place by the
 *   predivide factor, which is above 1 for every world size of 2 or more
 *   (_get_gradient_predivide_factor; _reduce_grad -> _div_if_needed): a pass reading and
 *   writing reduce_bytes.
 * Returns the time of those passes (streaming bytes, or their launches). */
double fsdp_reduce_prep_s(const KernelGpu *g, bool is_fsdp2, double bytes, unsigned grad_bytes,
                          unsigned reduce_bytes);

#endif
