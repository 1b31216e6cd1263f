/*
 * ds_config.h - a DeepSpeed ds_config.json as zerosim understands it.
 *
 * Reads the keys users write (batch sizes, fp16/bf16, optimizer type, zero_optimization with
 * its offload sections, activation_checkpointing), applies DeepSpeed's own defaults to absent
 * keys and records each default applied, records keys DeepSpeed defines but zerosim does not
 * model, and rejects keys DeepSpeed does not define (suggesting the closest). Batch sizes are
 * resolved against the data-parallel size later, by ds_config_resolve_batch().
 */
#ifndef ZEROSIM_INPUTS_DS_CONFIG_H
#define ZEROSIM_INPUTS_DS_CONFIG_H

#include "../common/err.h"
#include "../common/precision.h"
#include "../common/strlist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


typedef enum OffloadDevice { OFFLOAD_NONE, OFFLOAD_CPU, OFFLOAD_NVME } OffloadDevice;

typedef struct OffloadConfig {
    OffloadDevice device;
    bool pin_memory;
    uint64_t buffer_count;
    uint64_t buffer_size; /* elements; offload_param only */
    uint64_t max_in_cpu;  /* elements; offload_param only */
    bool pipeline_read;   /* offload_optimizer only */
    bool pipeline_write;  /* offload_optimizer only */
    double ratio;         /* offload_optimizer only: fraction of the optimizer offloaded */
} OffloadConfig;

typedef struct ZeroConfig {
    int stage; /* 0 (plain data parallel) to 3 */
    bool overlap_comm;
    bool contiguous_gradients;
    bool reduce_scatter;
    bool multi_rank_bucket_allreduce;     /* stage 1/2: reduce_scatter done as bucket all-reduces */
    uint64_t reduce_bucket_size;          /* elements */
    uint64_t allgather_bucket_size;       /* elements */
    uint64_t prefetch_bucket_size;        /* elements, stage 3 */
    uint64_t max_live_parameters;         /* elements, stage 3 */
    uint64_t max_reuse_distance;          /* elements, stage 3 */
    uint64_t param_persistence_threshold; /* elements, stage 3 */
    uint64_t sub_group_size;              /* elements */
    uint64_t shard_size;                  /* stage 3: GPUs a parameter is sharded over
                                             (mics_shard_size; FSDP HYBRID_SHARD); 0 = all */
    OffloadConfig offload_optimizer;
    OffloadConfig offload_param;
} ZeroConfig;

typedef struct TrainConfig {
    char file[256];
    /* As written; 0 when absent. Resolved ones live in BatchPlan. */
    uint64_t train_batch_size;
    uint64_t micro_batch_per_gpu;
    uint64_t grad_accum_steps;
    Precision precision;
    char optimizer[32];     /* optimizer.type, lower case; "adam" when absent */
    int optimizer_n_states; /* fp32 state tensors per parameter: Adam 2, SGD/Lion 1 */
    ZeroConfig zero;
    bool partition_activations; /* activation_checkpointing.partition_activations */
    bool cpu_checkpointing;     /* activation_checkpointing.cpu_checkpointing */
    StrList not_modelled;
    StrList defaults_used;
} TrainConfig;

/* The batch after resolution against the data-parallel size. */
typedef struct BatchPlan {
    uint64_t global_batch; /* sequences per optimizer step */
    uint64_t micro_batch;  /* sequences per GPU per forward/backward */
    uint64_t grad_accum;   /* micro-batches per optimizer step */
} BatchPlan;

/* Parses ds_config text; `file` names it in messages. */
int ds_config_parse(TrainConfig *out, const char *file, const char *text, size_t n_bytes, Err *err);

/* Loads a path, or resolves a name ("zero3") in <data_dir>/workloads/ds_configs/. */
int ds_config_load(TrainConfig *out, const char *name_or_path, const char *data_dir, Err *err);

/* DeepSpeed's rule: train_batch_size = micro_batch * grad_accum * dp_size; any two given
 * determine the third, all three must agree, one alone implies grad_accum = 1. Appends the
 * defaults it applied to cfg->defaults_used. */
int ds_config_resolve_batch(TrainConfig *cfg, uint64_t dp_size, BatchPlan *out, Err *err);

/* Bytes of one element of the 16-bit (or fp32) working copy of params and grads. */
unsigned ds_config_param_bytes(const TrainConfig *cfg);

/* Human name of an offload device ("cpu", "nvme", "none"). */
const char *ds_config_offload_name(OffloadDevice d);

void ds_config_fini(TrainConfig *cfg);

#endif
