/*
 * estimate.h - the analytic answer for one model, config and cluster: `zerosim estimate`.
 *
 * Composes the model/ modules into one record: parameters, FLOPs, activations, model-state
 * placement, communication volume, DeepSpeed's estimator, and whether each memory fits. The
 * simulation reuses the same pieces; on idealised configs its bytes must equal these.
 */
#ifndef ZEROSIM_MODEL_ESTIMATE_H
#define ZEROSIM_MODEL_ESTIMATE_H

#include "../inputs/ds_config.h"
#include "../inputs/model_config.h"
#include "../inputs/platform.h"
#include "activations.h"
#include "comm_volume.h"
#include "ds_estimator.h"
#include "flops.h"
#include "kernels.h"
#include "moe.h"
#include "params.h"
#include "runtime_memory.h"
#include "setup.h"
#include "zero_memory.h"

/* The share of GPU memory the verdict keeps free unless --headroom says otherwise: a user's
 * margin for what no model here counts (kernels loaded later in training, framework
 * temporaries, allocator behaviour that differs between PyTorch releases), not a fitted
 * factor. docs/MODEL.md, "Memory as the GPU sees it". */
#define ESTIMATE_DEFAULT_HEADROOM_FRACTION 0.05

typedef struct EstimateOptions {
    uint64_t seq_len; /* 0: model_config_default_seq_len() */
    Recompute recompute;
    uint32_t checkpoint_every; /* RECOMPUTE_FULL: every N-th layer (1: all) */
    bool is_flash_attention;
    double headroom_fraction; /* of GPU memory kept free by the verdict (--headroom) */
    bool is_fsdp;             /* PyTorch FSDP steps its fp32 flat shards in place: no copies */
    unsigned fsdp_param_bytes;    /* FSDP's MixedPrecision.param_dtype bytes (0: the training
                                     precision's) */
    bool has_fsdp_autocast_casts; /* fp32 FSDP parameters cast by 16-bit autocast at each use */
    PlatformFlashKernel flash_kernel; /* --flash-attention v2 (on), v1 or v3 */
    bool is_loaded_whole; /* --zero-init off: the model is built whole on each GPU, not under
                             deepspeed.zero.Init */
    LossKernel loss;                /* --cross-entropy */
    ElementwiseKernels elementwise; /* --elementwise */
    uint64_t ep_size;           /* expert parallelism (--ep-size; 0 or 1: none; model/moe.h) */
    double capacity_factor;     /* expert capacity factor (--moe-capacity-factor; 0: 1.0) */
    double moe_imbalance;       /* busiest expert's share, dropless (--moe-imbalance; 0: 1) */
} EstimateOptions;

typedef struct Estimate {
    ModelParams params;
    RunSetup setup;
    StepFlops flops;
    ActivationBytes act;
    ZeroMemory mem;
    CommVolume comm;
    double all_to_all_bytes; /* MoE token exchange per rank per step (model/moe.h); 0 without
                                expert parallelism */
    bool has_ds_estimate; /* stages 1-3 */
    DsEstimate ds_estimate;
    double paper_model_states_bytes; /* the 16 Psi family at this N (mixed-precision Adam) */

    uint64_t gpu_activations; /* activation peak held on the GPU */
    uint64_t gpu_peak;        /* model states + activations + buffers, per GPU */
    RuntimeMemory runtime;    /* CUDA context, NCCL buffers, cuBLAS workspaces */
    uint64_t gpu_allocated_peak; /* what the tensors hold at the worst moment: model states +
                                    buffers + workspaces + the larger of the activations
                                    (backward) and the optimizer's working copies (step) */
    uint64_t gpu_load_bytes;     /* --zero-init off under ZeRO-3: the whole 16-bit model on
                                    each GPU before deepspeed.initialize partitions it (engine.py
                                    module.to(device)); 0 otherwise */
    uint64_t gpu_device_peak;    /* + memory outside the allocator; no allocator rounding
                                    (only `zerosim run` replays the allocator) */
    uint64_t gpu_headroom;       /* bytes kept free by the verdict */
    uint64_t cpu_peak;        /* per node */
    uint64_t nvme_peak;       /* per node */
    uint64_t gpu_capacity, cpu_capacity, nvme_capacity;
    bool fits_gpu; /* gpu_device_peak + gpu_headroom <= gpu_capacity */
    bool fits_cpu, fits_nvme, fits;
    double compute_bound_step_s; /* one GPU's forward, recomputation and backward kernels
                                    (kernels_step_s), no communication: a lower bound */
    KernelTime compute_kernels;  /* the same by kernel family (total_s is the above) */
    double matmul_ceiling_flops_per_s; /* the GEMMs' ceiling in the run's precision */
} Estimate;

/* Builds the estimate. Resolves the batch against the platform's GPU count, appending the
 * defaults it applies to train->defaults_used. Fails on an inconsistent batch. */
int estimate_build(const ModelConfig *model, TrainConfig *train, const Platform *platform,
                   const EstimateOptions *opts, Estimate *out, Err *err);

#endif
