/*
 * zero3_walk.h - DeepSpeed ZeRO-3's parameter coordinator walked over one transformer layer:
 * which submodules arrive by prefetch, how many NCCL calls bring them, and how many gathered
 * parameters (and, in backward, the gradient of the module computing) are alive at once.
 *
 * The rules are those of PartitionedParameterCoordinator.fetch_sub_module
 * (deepspeed/runtime/zero/partitioned_param_coordinator.py, DeepSpeed 0.6 and later), at
 * parameter granularity:
 *  - the module about to compute has its parameters that are not yet available fetched on
 *    demand, in one coalesced all-gather (__all_gather_params -> all_gather_coalesced),
 *    whatever stage3_max_live_parameters says: the limit bounds prefetching only;
 *  - then, with a complete trace, the next parameters of the recorded order are prefetched,
 *    one coalesced all-gather, while fewer than max_params_to_prefetch =
 *    min(stage3_max_live_parameters - available, stage3_prefetch_bucket_size) elements were
 *    taken: a parameter is taken whole, so at least one is prefetched whenever fewer than
 *    stage3_max_live_parameters elements are available;
 *  - after the module computes, release_sub_module partitions its parameters again
 *    (stage3_max_reuse_distance keeps nothing within a layer of distinct modules).
 * Persistent parameters (at most stage3_param_persistence_threshold elements) stay gathered
 * and are not walked. In backward the module's gradients exist in full beside its gathered
 * parameters until the gradient hook (stage3.py reduce_ready_partitions_and_remove_grads ->
 * __add_grad_to_ipg_bucket) copies them into the bucket or reduces them, so the backward peak
 * counts them too. The walk runs over identical layers until the prefetch state repeats
 * (the steady state after the first, traced, step) and reports one layer. Not walked: with
 * activation checkpointing the recorded trace interleaves each layer's recompute fetches
 * (forward order) before its backward ones, and stage3_max_reuse_distance can keep a module
 * gathered from its recompute into its backward; the walk takes the backward order alone
 * and releases every module after use.
 */
#ifndef ZEROSIM_MODEL_ZERO3_WALK_H
#define ZEROSIM_MODEL_ZERO3_WALK_H

#include "params.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Zero3Walk {
    double gathered_elems;  /* the layer's gathered (non-persistent) parameters */
    double early_elems;     /* of which already available, prefetched, when their module ran */
    uint32_t calls_early;   /* prefetch all-gathers launched during the layer */
    uint32_t calls_late;    /* on-demand all-gathers (fetch_sub_module) of the layer */
    uint32_t n_fetched_modules; /* modules with gathered parameters: the on-demand calls of
                                   a step without a trace */
    double live_peak_bytes; /* the most bytes alive at once: the gathered parameters in use
                               and prefetched (param_bytes each), plus in backward the
                               computing module's gradients (grad_bytes each) */
} Zero3Walk;

/* Walks one layer's modules (`modules[0..n_modules)`, in forward order; reversed when
 * is_backward) under the given thresholds (elements; prefetch_bucket 0 disables
 * prefetching, as DeepSpeed does and as its releases before 0.6 did not prefetch either).
 * Bytes per element: param_bytes for gathered parameters, grad_bytes for gradients. */
void zero3_walk(const ParamModule *modules, size_t n_modules, uint64_t persistence_threshold,
                uint64_t prefetch_bucket, uint64_t max_live, bool is_backward,
                unsigned param_bytes, unsigned grad_bytes, Zero3Walk *out);

#endif
