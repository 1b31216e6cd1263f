/*
 * zero_schedule.h - one or more ZeRO training steps as an event graph.
 *
 * Builds, for every data-parallel rank, what DeepSpeed does in a step (docs/SCHEDULES.md):
 *  - stages 0-2: forward and backward layer by layer; gradients reduced in buckets of
 *    reduce_bucket_size as backward produces them (stage 2 in every micro-batch, stages 0-1
 *    at the accumulation boundary), on the reduce stream with two buckets in flight when
 *    overlap_comm is on, blocking the compute stream when it is off; stage 0 (DeepSpeed's
 *    non-ZeRO path) reduces after backward; the optimizer steps the rank's partition on the
 *    GPU; stages 1-2 then all-gather the updated 16-bit parameters.
 *  - stage 3: each layer's parameters all-gathered before its forward and again before its
 *    backward on the gather stream, one NCCL call per submodule (per parameter before
 *    DeepSpeed 0.6.0), the next layer prefetched while one computes (the modules that fit
 *    stage3_max_live_parameters beside the one computing; the rest on demand; nothing in the
 *    first of several steps, which records the trace), released after use; after the
 *    optimizer step the persistent parameters all-gathered once; gradients reduce-scattered
 *    in buckets on the reduce stream, two in flight.
 *  - stage 1-2 gradient buckets are reduce-scatters, or all-reduces keeping a slice when
 *    use_multi_rank_bucket_allreduce is on (DeepSpeed's default) or reduce_scatter is off.
 * The textbook variant replaces these with the seed chapter's algorithms for teaching: DDP
 * all-reduce; ZeRO-1 all-reduce then all-gather of parameters; ZeRO-2 reduce-scatter then
 * all-gather; ZeRO-3 all-gather, all-gather, reduce-scatter per layer; one bucket each.
 * FSDP strategies reuse these: FULL_SHARD and HYBRID_SHARD the stage-3 schedule with one unit
 * per layer (HYBRID_SHARD gathering and reduce-scattering inside a node, then all-reducing the
 * gradient shards across nodes), SHARD_GRAD_OP the same without the backward gathers,
 * NO_SHARD an all-reduce per layer overlapped with backward; all reduce in every micro-batch.
 * Offload (offload.c): ZeRO-Offload copies each rank's gradient share to the host as buckets
 * are reduced and steps the optimizer on the CPU; ZeRO-Infinity also streams optimizer states
 * and parameters through NVMe.
 * Mixtures of experts with expert parallelism (model/moe.h): each MoE layer's forward,
 * backward and recomputation exchange its tokens by a dispatch and a combine all-to-all over
 * the expert-parallel group, expert gradients are reduced (and ZeRO-3 experts gathered) over
 * the expert-data-parallel group only.
 * Memory: model states allocated for the whole run from zero_memory_ep(), activations from
 * activations.h per layer between its forward and its backward, buckets and gathered
 * parameters while they live.
 */
#ifndef ZEROSIM_SCHEDULE_ZERO_SCHEDULE_H
#define ZEROSIM_SCHEDULE_ZERO_SCHEDULE_H

#include "../common/err.h"
#include "../inputs/ds_config.h"
#include "../inputs/model_config.h"
#include "../inputs/platform.h"
#include "../model/setup.h"
#include "graph.h"

typedef enum ScheduleVariant { SCHEDULE_DEEPSPEED, SCHEDULE_TEXTBOOK } ScheduleVariant;

/* PyTorch FSDP sharding strategies, run on the same schedules (schedule/fsdp.h). */
typedef enum FsdpStrategy {
    FSDP_NONE,          /* a DeepSpeed run */
    FSDP_FULL_SHARD,    /* ~ ZeRO-3 */
    FSDP_SHARD_GRAD_OP, /* ~ ZeRO-2: parameters kept gathered from forward to backward */
    FSDP_NO_SHARD,      /* ~ DDP, all-reduce per unit overlapped with backward */
    FSDP_HYBRID_SHARD,  /* ZeRO-3 inside each node, replicas across nodes */
} FsdpStrategy;

/* How DeepSpeed's ZeRO-3 fetches parameters (--deepspeed-version). */
typedef enum Zero3Generation {
    ZERO3_GEN_PER_SUBMODULE, /* DeepSpeed 0.6.0 and later: a coalesced all-gather per
                                submodule, prefetched in the traced order (the default) */
    ZERO3_GEN_PER_PARAMETER, /* before 0.6.0: an all-gather per parameter after a host
                                synchronisation that also drains the reduce stream, nothing
                                fetched under compute; a recomputed module released and
                                gathered again beyond stage3_max_reuse_distance; gradients
                                reduce-scattered per parameter (all-reduced per bucket
                                without contiguous_gradients); the persistent parameters
                                copied into place rank by rank after the step */
} Zero3Generation;

typedef struct ScheduleOptions {
    ScheduleVariant variant;
    uint32_t n_steps;          /* optimizer steps to simulate back to back */
    bool has_activations;      /* false: idealised run (oracles): no activations, optimizer
                                  working copies or cuBLAS workspaces, model states only */
    bool delayed_param_update; /* ZeRO-Offload's one-step delayed parameter update */
    FsdpStrategy fsdp;
    bool fsdp_backward_prefetch; /* FSDP's BACKWARD_PRE: gather the next unit during backward */
    unsigned fsdp_param_bytes;   /* FSDP's MixedPrecision.param_dtype: 4 for fp32 unsharded
                                    parameters under 16-bit autocast (fsdp.h); 0: the
                                    training precision's */
    bool is_fsdp2;               /* FSDP2 (fully_shard): per-parameter shards copied out of
                                    the all-gather and into the reduce-scatter (fsdp.h) */
    uint32_t n_simulated_ranks;  /* symmetric mode: ranks in the graph, standing for all of
                                    setup->n_gpus (whole nodes); 0: every rank */
    Zero3Generation zero3_generation; /* DeepSpeed's ZeRO-3 fetching (0: current) */
    bool is_list_param_gather; /* stages 1-2 before DeepSpeed 0.13.0: the step's parameter
                                  all-gather on c10d's list of one tensor per rank
                                  (runtime/utils.py all_gather_dp_groups; stage2.py step
                                  before 0.7), so each call copies out of NCCL's flat buffer */
} ScheduleOptions;

/* Builds the graph of n_steps steps for all data-parallel ranks of p, offload included
 * (offload.c). The graph is finalised. */
Graph *zero_schedule_build(const ModelConfig *model, const TrainConfig *train, const Platform *p,
                           const RunSetup *setup, const ScheduleOptions *opts, Err *err);

const char *zero_schedule_variant_name(ScheduleVariant v);

/* Whether the schedule charges the framework's host work per parameter (the platform's
 * cpu.param_host_s; schedule/cost.h CostHost): DeepSpeed ZeRO-3's coordinator and FSDP1's
 * sharded units; not FSDP2 (not modelled), the textbook variant or stages 0-2. */
bool zero_schedule_has_host_hooks(const ZeroConfig *z, const ScheduleOptions *opts);

#endif
