/*
 * builder.h - the state shared by the files that build a step's event graph (internal to
 * schedule/; not part of its interface).
 *
 * Ranks are symmetric, so a builder walks the step once and emits each op for every rank:
 * per-rank state lives in arrays indexed by rank. zero_schedule.c builds the DeepSpeed and
 * FSDP steps; offload.c adds what ZeRO-Offload and ZeRO-Infinity move over PCIe and NVMe.
 */
#ifndef ZEROSIM_SCHEDULE_BUILDER_H
#define ZEROSIM_SCHEDULE_BUILDER_H

#include "cost.h"
#include "zero_schedule.h"

#include "../model/activations.h"
#include "../model/params.h"
#include "../model/runtime_memory.h"
#include "../model/zero3_walk.h"
#include "../model/zero_memory.h"

/* Groups that together hold every rank once: a collective "over the set" is one instance per
 * group, run concurrently. */
typedef struct GroupSet {
    uint32_t *groups;
    uint32_t n_groups;
    uint32_t n_logical; /* members each group stands for (symmetric mode) */
} GroupSet;

typedef struct Builder {
    Graph *g;
    const ModelConfig *model;
    const TrainConfig *train;
    const ScheduleOptions *opts;
    const RunSetup *setup;
    const ZeroConfig *z;
    uint32_t n_ranks;
    GroupSet world;    /* all ranks */
    GroupSet shards;   /* where stage 3 gathers and reduce-scatters: all ranks, or nodes */
    GroupSet replicas; /* across shard groups (HYBRID_SHARD / MiCS); n_groups 0 if none */
    GroupSet ep_groups;   /* expert parallelism: ep consecutive ranks split the experts */
    GroupSet expert_dp;   /* ranks holding the same experts: their gradients and shards */
    uint32_t ep;          /* expert-parallel size (1: none) */
    double a2a_bytes;     /* one all-to-all buffer per rank (model/moe.h) */
    double *unit_expert;  /* per unit: the local experts' parameters (MoE layers; else 0) */
    double expert_bucket; /* expert gradients waiting for their own reduction */
    uint32_t label_a2a_dispatch, label_a2a_combine;
    uint32_t n_shard;  /* ranks per shard group (logical: of all n_gpus) */
    uint32_t n_gpus;   /* data-parallel size the step stands for (>= n_ranks) */
    bool is_textbook;
    ModelParams params;
    ZeroMemory mem;
    double workspace_bytes; /* cuBLAS workspaces per GPU (runtime_memory.h); 0 when idealised */
    ActivationBytes act;
    StepCost cost;
    double *unit_params;      /* per layer unit: its parameters (first/last carry embeddings) */
    double *unit_gathered;    /* per unit: 16-bit bytes ZeRO-3 gathers (persistent excluded) */
    /* How a unit's parameters arrive, per pass (0 forward, 1 backward): */
    double prefetch_fraction[2]; /* of a unit, the share DeepSpeed's module-by-module
                                    prefetch brings in while the module before computes */
    uint32_t calls_early[2];     /* NCCL calls of a layer's prefetched part: one per prefetch
                                    (current DeepSpeed), per unit (FSDP) */
    uint32_t calls_late[2];      /* ... and of the part fetched on demand: one per submodule,
                                    per parameter before DeepSpeed 0.6 */
    uint32_t calls_traced[2];    /* ... of the first step, without a trace: all on demand */
    double regather_elems;       /* DeepSpeed before 0.6 under full recomputation: a layer's
                                    parameters its recomputed forward releases, gathered
                                    again for its backward (fetch_plan) */
    uint32_t regather_calls;     /* ... their tensors, one all-gather each */
    double regather_largest;     /* ... the largest of those tensors (elements) */
    double live_peak_bytes[2];   /* DeepSpeed ZeRO-3: a layer's gathered parameters alive at
                                    once (model/zero3_walk.h), with the computing module's
                                    gradients in backward; 0 where the unit is held whole */
    bool is_tracing;          /* DeepSpeed's first step records the module order: no prefetch */
    bool is_list_api;         /* DeepSpeed ZeRO-3 before 0.6: per-parameter all-gathers and
                                 reduce-scatters on c10d's per-rank lists (kernels.h) */
    bool is_grad_fallback;    /* ... with contiguous_gradients off: each gradient bucket
                                 flattened and all-reduced whole (buffered_reduce_fallback) */
    bool holds_head;          /* DeepSpeed ZeRO-3 with a loss that reads the output
                                 projection's weight itself: it stays gathered from the
                                 forward's head to the step (zero_schedule.c head_hold_*) */
    bool is_head_held;        /* ... and it is now: head_held is allocated */
    uint32_t *head_held;      /* per rank: the held weight's buffer */
    uint32_t *flat_buffers;   /* per rank: c10d's flat tensor of the list call in flight */
    double largest_tensor;    /* the model's largest parameter tensor (elements) */
    /* The gradient buckets DeepSpeed's code holds (zero_schedule.c grad_holds_*): */
    uint32_t *ipg_buffers;    /* per rank, 2 slots: the backward's ipg buffers (contiguous;
                                 ZeRO-3 before 0.6, ZeRO-1/2 of every release) */
    uint32_t n_ipg;           /* ... how many are allocated (1, or 2 with overlap_comm) */
    uint32_t *ipg_run;        /* per rank: ZeRO-3's ipg buffer from 0.6 on, held for the run */
    bool has_ipg_run;         /* ipg_run is allocated */
    /* DeepSpeed ZeRO-3 before 0.6, the gradients its stage3.py holds: */
    uint32_t *held_grads;     /* per rank: the full gradients of the last reduced bucket,
                                 kept in previous_reduced_grads until the next reduction */
    bool has_held;            /* held_grads is allocated */
    double bucket_large;      /* largest tensor in the bucket above reduce_bucket_size
                                 (elements; 0 if none): reduced from its own param.grad */
    double bucket_max_tensor; /* largest tensor in the bucket (elements) */
    OpId *ops;                /* one op per rank from the last collective_set() */
    OpId *scratch;            /* graph_collective's output, in group order */
    OpId *last_compute;       /* per rank: last op on the compute stream, or GRAPH_NO_OP */
    OpId *wait_gather;        /* per rank: the next compute op waits for this gather */
    OpId *wait_bucket;        /* per rank: ... and for this gradient bucket */
    OpId *wait_copy;          /* per rank: ... and for this copy (a checkpoint coming back) */
    OpId *last_reduce;        /* per rank: last op on the reduce stream */
    OpId *last_gather;        /* per rank: last op on the gather stream */
    OpId *bucket_prev;        /* per rank: the bucket before the last one (two buffers) */
    OpId *bucket_last;
    double bucket_elems;   /* gradients waiting in the current bucket */
    double bucket_fill;    /* DeepSpeed's parameter-level bucket fill within it (elements) */
    uint32_t bucket_calls; /* parameter-level buckets already reduced within it */
    uint32_t bucket_tensors; /* gradient tensors in it (DeepSpeed before 0.6 without
                                contiguous_gradients copies each back after the all-reduce) */
    uint32_t label_fwd_base, label_bwd_base; /* labels "fwd L<i>" and "bwd L<i>" */
    uint32_t label_recompute_base;           /* "recompute L<i>" */
    /* offload (offload.c) */
    OpId *last_d2h;       /* per rank: last gradient copy to the host */
    OpId *pending_update; /* per rank: the parameter update the next step must wait for */
    OpId *older_update;   /* per rank: the one before (delayed parameter update) */
} Builder;

/* `after` waits for `before` unless before is GRAPH_NO_OP. */
void builder_depend(Builder *b, OpId before, OpId after);

/* ---- offload.c ---- */

/* True when the optimizer (and its fp32 gradients) live on the host or NVMe. */
bool offload_has_optimizer(const Builder *b);

/* After a gradient bucket was reduced (ops in after[r], or the ranks' last compute when
 * nothing was reduced): each rank copies its share of the bucket's gradients to the host. */
void offload_gradients(Builder *b, double bucket_elems, const OpId *after);

/* Before a unit is gathered (ZeRO-3 with offload_param): each rank's shard of it comes from
 * NVMe (ZeRO-Infinity) and over PCIe. Returns, in ready[r], the op the gather must wait for;
 * before[r] is when the fetch may start. */
void offload_fetch_shard(Builder *b, double shard_bytes, const OpId *before, OpId *ready);

/* At the accumulation boundary: the host optimizer steps each rank's partition (reading and
 * writing its states on NVMe for ZeRO-Infinity, sub-group by sub-group), then the updated
 * 16-bit parameters go back over PCIe (or to NVMe when parameters are offloaded). Sets
 * b->pending_update[r] to what the next forward needs. */
void offload_optimizer_step(Builder *b);

/* Offloaded parameters updated by the GPU's optimizer (all of them, or the sub-groups ZeRO-3's
 * partial offload keeps on the GPU): after the GPU step, `elems` updated parameters per rank
 * go back to the host (and on to NVMe), joined with the host's part of the update. */
void offload_updated_params(Builder *b, double elems);

/* Host and NVMe model states: allocated before the first op, released after the last. */
void offload_model_states(Builder *b, uint32_t *buffers, bool is_alloc);

#endif
