/*
 * ds_config.h - a DeepSpeed ds_config.json as zerosim understands it.
 *
 * Reads the keys users write (batch sizes, fp16/bf16, optimizer type, zero_optimization with
 * its offload sections, activation_checkpointing), applies DeepSpeed's own defaults to absent
 * keys and records each default applied, warns about keys DeepSpeed defines that would change
 * the result but are not modelled (saying what is assumed instead; metadata is silent), lists
 * unknown top-level keys in a warning (DeepSpeed ignores them) and rejects unknown keys inside
 * the sections DeepSpeed validates (suggesting the closest). "auto", as HF Trainer and
 * accelerate write it, is resolved as the HF integration resolves it by ds_config_apply();
 * an "auto" left in a key it does not fill is dropped, as DeepSpeed's config models drop it.
 * Batch sizes are resolved against the data-parallel size later, by ds_config_resolve_batch().
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

/* The "auto" values of a config that the HF integration fills (TrainConfig.auto_keys). */
enum {
    DS_AUTO_MICRO_BATCH = 1 << 0,  /* train_micro_batch_size_per_gpu */
    DS_AUTO_GRAD_ACCUM = 1 << 1,   /* gradient_accumulation_steps */
    DS_AUTO_GLOBAL_BATCH = 1 << 2, /* train_batch_size */
    DS_AUTO_FP16 = 1 << 3,         /* fp16.enabled */
    DS_AUTO_BF16 = 1 << 4,         /* bf16.enabled */
    DS_AUTO_REDUCE_BUCKET = 1 << 5, /* zero_optimization.reduce_bucket_size */
    DS_AUTO_PREFETCH = 1 << 6,     /* zero_optimization.stage3_prefetch_bucket_size */
    DS_AUTO_PERSISTENCE = 1 << 7,  /* zero_optimization.stage3_param_persistence_threshold */
    DS_SUB_GROUP_PER_TENSOR = 1 << 8, /* sub_group_size 0: sized from the model too */
};

/* What the command line sets over the config (0 / false: not given), as HF Trainer's
 * arguments do: --micro-batch, --grad-accum, --global-batch, --precision. */
typedef struct TrainOverrides {
    uint64_t micro_batch;
    uint64_t grad_accum;
    uint64_t global_batch;
    bool has_precision;
    Precision precision;
} TrainOverrides;

typedef struct TrainConfig {
    char file[256];
    unsigned auto_keys; /* DS_AUTO_* still to fill (ds_config_apply) */
    /* As written; 0 when absent. Resolved ones live in BatchPlan. */
    uint64_t train_batch_size;
    uint64_t micro_batch_per_gpu;
    uint64_t grad_accum_steps;
    Precision precision;
    char optimizer[32];     /* optimizer.type, lower case; "adam" when absent */
    int optimizer_n_states; /* fp32 state tensors per parameter: Adam 2, SGD/Lion 1 */
    ZeroConfig zero;
    bool is_bf16_master;           /* bf16.bf16_master_weights_and_grads: 2-byte master copy */
    bool is_bf16_optimizer_states; /* bf16.bf16_optimizer_states: 2-byte Adam moments */
    unsigned comm_grad_bytes; /* communication_data_type: the bytes per gradient element of the
                                 gradient reductions, 4 (fp32) or 2 (fp16, bf16); 0 when
                                 absent: the training precision's */
    bool partition_activations; /* activation_checkpointing.partition_activations */
    bool cpu_checkpointing;     /* activation_checkpointing.cpu_checkpointing */
    StrList not_modelled; /* "key (what the result assumes instead)" */
    StrList unknown_keys; /* top-level keys DeepSpeed does not define; ignored */
    StrList defaults_used;
} TrainConfig;

/* The batch after resolution against the data-parallel size. */
typedef struct BatchPlan {
    uint64_t global_batch; /* sequences per optimizer step */
    uint64_t micro_batch;  /* sequences per GPU per forward/backward */
    uint64_t grad_accum;   /* micro-batches per optimizer step */
} BatchPlan;

/* A DeepSpeed release (--deepspeed-version): its defaults apply to the keys a config leaves
 * out (ds_config.c, ds_defaults: the zero_optimization defaults at each release tag from
 * v0.3.13, the first with ZeRO-3). is_named false: the current release, whose defaults are
 * recorded without naming it. */
typedef struct DsRelease {
    unsigned major, minor, patch;
    bool is_named;
    char name[24]; /* as the user wrote it ("0.3.14") */
} DsRelease;

/* Whether release r came before major.minor.patch. */
bool ds_config_release_before(const DsRelease *r, unsigned major, unsigned minor, unsigned patch);

/* Parses ds_config text; `file` names it in messages. */
int ds_config_parse(TrainConfig *out, const char *file, const char *text, size_t n_bytes, Err *err);

/* Loads a path, or resolves a name ("zero3") in <data_dir>/workloads/ds_configs/. */
int ds_config_load(TrainConfig *out, const char *name_or_path, const char *data_dir, Err *err);

/* A variant of a config in the terms a user edits: the ZeRO stage and where the optimizer
 * states and the parameters live. */
typedef struct DsShape {
    int stage; /* 0-3 */
    OffloadDevice optimizer, param;
} DsShape;

/* ds_config_parse and ds_config_load reading the file as if its zero_optimization.stage and
 * offload_optimizer/offload_param devices said `shape` (NULL: as written), every other key as
 * written, so DeepSpeed's defaults for the new stage apply to the keys the file leaves out;
 * a deprecated cpu_offload/cpu_offload_param switch gives way to the section, and an NVMe
 * section without nvme_path gets DeepSpeed's example "/local_nvme". What the report's fitting
 * hint (model/remedy.h) re-estimates. */
int ds_config_parse_shape(TrainConfig *out, const char *file, const char *text, size_t n_bytes,
                          const DsShape *shape, Err *err);
int ds_config_load_shape(TrainConfig *out, const char *name_or_path, const char *data_dir,
                         const DsShape *shape, Err *err);

/* ds_config_parse_shape and ds_config_load_shape with the defaults of `release` (NULL: the
 * current release's) for absent keys; each default applied is recorded as "key = value
 * (DeepSpeed V's default)" when the release is named. */
int ds_config_parse_release(TrainConfig *out, const char *file, const char *text, size_t n_bytes,
                            const DsShape *shape, const DsRelease *release, Err *err);
int ds_config_load_release(TrainConfig *out, const char *name_or_path, const char *data_dir,
                           const DsShape *shape, const DsRelease *release, Err *err);

/* Fills the config's "auto" values and applies the command line, as HF Trainer's DeepSpeed
 * integration does (transformers integrations/deepspeed.py, HfTrainerDeepSpeedConfig
 * trainer_config_process and trainer_config_finalize): batch keys from the overrides, else
 * TrainingArguments' defaults (per_device_train_batch_size 8, gradient_accumulation_steps 1,
 * train_batch_size derived); fp16/bf16.enabled from the precision override, else false as
 * TrainingArguments' fp16/bf16 default; reduce_bucket_size = hidden^2 and, under ZeRO-3,
 * stage3_prefetch_bucket_size = int(0.9 hidden^2), stage3_param_persistence_threshold =
 * 10 hidden. Given overrides replace the config's values; the config's train_batch_size gives
 * way to --micro-batch/--grad-accum without --global-batch, and its gradient_accumulation_steps
 * to --global-batch. Every value set is recorded in defaults_used. Every combination is
 * accepted here (their consistency with the GPU count is ds_config_resolve_batch's check), so
 * it returns 0; err may be NULL. */
int ds_config_apply(TrainConfig *cfg, uint64_t hidden, const TrainOverrides *overrides, Err *err);

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
