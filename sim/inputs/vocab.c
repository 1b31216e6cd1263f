/*
 * vocab.c - the "defined by the foreign format, not modelled by zerosim" key lists.
 *
 * Each list is NULL-terminated. A key found here produces a warning (it is real but has no
 * effect on the simulation); a key found neither here nor in the modelled set next to the
 * reading code is rejected as a typo. The modelled keys are deliberately absent from these
 * lists, so the two halves are disjoint.
 *
 * Sources (key names only, read from the source; no code copied):
 *   DeepSpeed  deepspeed/runtime/config.py (DeepSpeedConfig._initialize_params and the get_*
 *              helpers), runtime/constants.py, runtime/precision_config.py (fp16/bf16),
 *              runtime/zero/config.py (DeepSpeedZeroConfig fields and their pydantic aliases),
 *              runtime/zero/offload_config.py, runtime/activation_checkpointing/config.py,
 *              runtime/swap_tensor (aio), monitor/config.py, comm/config.py,
 *              profiling/config.py, autotuning, compression, nebula, datastates, compile,
 *              tensor_parallel, expert_parallel (auto_ep_config.py), deepspeed/__init__.py;
 *              cross-checked against docs/_pages/config-json.md.
 *   transformers  configuration_utils.py (PretrainedConfig v4 __init__ attributes and the
 *              generation defaults it still loads; PreTrainedConfig v5 dataclass fields and the
 *              kwargs it pops), models/{gpt2,gpt_neox,llama,mistral,mpt}/configuration_*.py,
 *              modeling_rope_utils.py, plus keys that appear in published config.json files of
 *              those families (e.g. task_specific_params, rope_scaling, init_config, auto_map).
 *
 * Note: DeepSpeed's ZeRO/offload/fp16/bf16 sections are pydantic models with extra="forbid"
 * and populate_by_name=True: DeepSpeed itself rejects unknown keys there and accepts both a
 * field's name and its alias (e.g. prefetch_bucket_size and stage3_prefetch_bucket_size).
 * The top level of ds_config.json is a plain dict that DeepSpeed does not check.
 */
#include "vocab.h"

#include <stddef.h>
#include <string.h>

/* ---------------------------------------------------------------- ds_config.json top level */

const char *const vocab_ds_top_not_modelled[] = {
    /* batch / gradient handling */
    "managed_gradient_accumulation",
    "gradient_clipping",
    "prescale_gradients",
    "gradient_predivide_factor",
    "gradient_allreduce_op",
    "sparse_gradients",
    "seq_parallel_communication_data_type",
    "disable_allgather",
    "data_types",
    /* precision variants other than fp16/bf16 */
    "amp",
    "torch_autocast",
    /* optimizer / scheduler plumbing */
    "scheduler",
    "zero_allow_untested_optimizer",
    "zero_force_ds_cpu_optimizer",
    /* legacy ZeRO format ("zero_optimization": true + top-level allgather_size) */
    "allgather_size",
    /* logging, monitoring, profiling */
    "steps_per_print",
    "wall_clock_breakdown",
    "memory_breakdown",
    "dump_state",
    "log_level",
    "timers",
    "flops_profiler",
    "comms_logger",
    "tensorboard",
    "wandb",
    "csv_monitor",
    "comet",
    "autotuning",
    /* checkpointing and I/O */
    "checkpoint",
    "nebula",
    "datastates_ckpt",
    "aio",
    "dataloader_drop_last",
    /* other training features */
    "elasticity",
    "compile",
    "graph_harvesting",
    "hybrid_engine",
    "pipeline",
    "tensor_parallel",
    "expert_parallel",
    "use_data_before_expert_parallelism",
    "sequence_parallel_size",
    "data_parallel_size",
    "sparse_attention",
    "progressive_layer_drop",
    "curriculum_learning",
    "data_efficiency",
    "compression_training",
    "quantize_training",
    "weight_quantization",
    "eigenvalue",
    "vocabulary_size",
    NULL,
};

/* ---------------------------------------------------------------- fp16 / bf16 */

const char *const vocab_ds_fp16_not_modelled[] = {
    "auto_cast",
    "loss_scale",
    "initial_scale_power",
    "loss_scale_window",
    "hysteresis",
    "consecutive_hysteresis",
    "min_loss_scale",
    "fp16_master_weights_and_grads",
    NULL,
};

const char *const vocab_ds_bf16_not_modelled[] = {
    "immediate_grad_update",
    "check_grad_overflow",
    NULL,
};

/* ---------------------------------------------------------------- optimizer */

const char *const vocab_ds_optimizer_not_modelled[] = {
    "params",
    "legacy_fusion",
    NULL,
};

/* ---------------------------------------------------------------- zero_optimization */

const char *const vocab_ds_zero_not_modelled[] = {
    /* stage 1/2 communication knobs */
    "allgather_partitions",
    "round_robin_gradients",
    "load_from_fp32_weights",
    "elastic_checkpoint", /* deprecated */
    "ignore_unused_parameters",
    "legacy_stage1",
    /* deprecated pre-offload_* switches */
    "cpu_offload_use_pin_memory", /* -> offload_*.pin_memory */
    /* stage 3: field name and its stage3_* alias */
    "model_persistence_threshold",
    "stage3_model_persistence_threshold",
    "gather_16bit_weights_on_model_save",
    "stage3_gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save", /* deprecated */
    "module_granularity_threshold",
    "stage3_module_granularity_threshold",
    "use_all_reduce_for_fetch_params",
    "stage3_use_all_reduce_for_fetch_params",
    "allgather_sequential",
    "stage3_allgather_sequential",
    /* ZeRO++ and MiCS */
    "zero_hpz_partition_size",
    "zero_quantized_weights",
    "zero_quantized_nontrainable_weights",
    "zero_quantized_gradients",
    "zeropp_loco_param",
    "mics_hierarchical_params_gather",
    /* misc */
    "zenflow",
    "memory_efficient_linear",
    "pipeline_loading_checkpoint",
    "override_module_apply",
    "log_trace_cache_warnings",
    "enable_sanity_checks",
    "save_muon_momentum_buffer_in_memory",
    "leaf_module",
    NULL,
};

/* ---------------------------------------------------------------- offload sections */

const char *const vocab_ds_offload_optimizer_not_modelled[] = {
    "nvme_path", "fast_init", "super_offload", "cpuadam_cores_perc", NULL,
};

const char *const vocab_ds_offload_param_not_modelled[] = {
    "nvme_path",
    NULL,
};

/* ---------------------------------------------------------------- activation_checkpointing */

const char *const vocab_ds_act_ckpt_not_modelled[] = {
    "contiguous_memory_optimization",
    "number_checkpoints",
    "synchronize_checkpoint_boundary",
    "profile",
    NULL,
};

/* ---------------------------------------------------------------- HF config.json */

const char *const vocab_hf_metadata[] = {
    /* PretrainedConfig: bookkeeping written by save_pretrained */
    "_name_or_path",
    "name_or_path",
    "_commit_hash",
    "transformers_version",
    "architectures",
    "auto_map",
    "torch_dtype",
    "dtype",
    "use_bfloat16",
    "attn_implementation",
    "_attn_implementation_autoset",
    "experts_implementation",
    "per_layer_config",
    /* PretrainedConfig: outputs and structure flags */
    "return_dict",
    "output_hidden_states",
    "output_attentions",
    "torchscript",
    "tf_legacy_loss",
    "pruned_heads",
    "chunk_size_feed_forward",
    "is_encoder_decoder",
    "is_decoder",
    "cross_attention_hidden_size",
    "add_cross_attention",
    "tie_encoder_decoder",
    "gradient_checkpointing", /* deprecated in configs */
    "xla_device",             /* deprecated, ignored */
    "use_cache",
    "output_past",
    /* PretrainedConfig: fine-tuning task */
    "finetuning_task",
    "id2label",
    "label2id",
    "num_labels",
    "_num_labels",
    "problem_type",
    "task_specific_params",
    /* PretrainedConfig: tokenizer-related */
    "tokenizer_class",
    "tokenizer_name",
    "prefix",
    "bos_token_id",
    "pad_token_id",
    "eos_token_id",
    "sep_token_id",
    "decoder_start_token_id",
    /* PretrainedConfig: generation parameters still accepted in config.json */
    "max_length",
    "min_length",
    "do_sample",
    "early_stopping",
    "num_beams",
    "num_beam_groups",
    "diversity_penalty",
    "temperature",
    "top_k",
    "top_p",
    "typical_p",
    "repetition_penalty",
    "length_penalty",
    "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size",
    "bad_words_ids",
    "num_return_sequences",
    "output_scores",
    "return_dict_in_generate",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "remove_invalid_values",
    "exponential_decay_length_penalty",
    "suppress_tokens",
    "begin_suppress_tokens",
    /* initialisation, dropout, normalisation (all families) */
    "initializer_range",
    "resid_pdrop",
    "embd_pdrop",
    "attn_pdrop",
    "emb_pdrop",
    "attention_dropout",
    "hidden_dropout",
    "classifier_dropout",
    "attention_probs_dropout_prob",
    "hidden_dropout_prob",
    "layer_norm_epsilon",
    "layer_norm_eps",
    "rms_norm_eps",
    /* gpt2 */
    "summary_type",
    "summary_use_proj",
    "summary_activation",
    "summary_proj_to_labels",
    "summary_first_dropout",
    "scale_attn_weights",
    "scale_attn_by_inverse_layer_idx",
    "reorder_and_upcast_attn",
    "n_special",
    "predict_special_tokens",
    /* gpt_neox */
    "use_parallel_residual",
    "rotary_pct",
    "rotary_emb_base",
    "partial_rotary_factor",
    /* llama / mistral: rotary embeddings, attention layout */
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "original_max_position_embeddings",
    "pretraining_tp",
    "sliding_window",
    "layer_types",
    "max_sequence_length",
    /* mpt */
    "attn_config",
    "ffn_config",
    "init_config",
    "init_device",
    "logit_scale",
    "verbose",
    "embedding_fraction",
    "norm_type",
    "fc_type",
    "use_pad_tok_in_ffn",
    /* activations and positional encodings: no effect on parameters, FLOPs or bytes */
    "hidden_act",
    "activation_function",
    "hidden_activation",
    "rotary_dim",
    "rotary",
    "rope_type",
    "rope_local_base_freq",
    "alibi",
    "n_ctx",
    "seq_length",
    "scale_attn_weights",
    /* numerics and fused-kernel switches of the families' modeling files */
    "norm_epsilon",
    "clip_qkv",
    "qk_layernorm",
    "apply_residual_connection_post_layernorm",
    "slow_but_exact",
    "masked_softmax_fusion",
    "offset_alibi",
    "attention_softmax_in_fp32",
    "bias_dropout_fusion",
    "skip_bias_add",
    "skip_bias_add_qkv",
    "query_pre_attn_scalar",
    "final_logit_softcapping",
    "cache_implementation",
    "embedding_dropout",
    "residual_dropout",
    "resid_dropout",
    "mlp_dropout",
    "use_parallel_residual",
    /* layouts read by other families (harmless here) */
    "max_window_layers",
    "use_sliding_window",
    "sliding_window_pattern",
    "num_ln_in_parallel_attn",
    "multi_query",
    "parallel_attn",
    "new_decoder_architecture",
    "bias",
    "use_bias",
    "attention_bias",
    "mlp_bias",
    "tie_word_embeddings",
    "head_dim",
    /* OPT (configuration_opt.py) and Qwen2-VL text configs */
    "activation_dropout",
    "dropout",
    "init_std",
    "layerdrop",
    "output_projection",
    "scale_embedding",
    "use_mrope",
    /* mixture-of-experts routing details that change neither shapes nor work: loss
     * coefficients, score functions, normalisation, inference-only fields
     * (configuration_mixtral.py, configuration_qwen3_moe.py, configuration_deepseek_v3.py) */
    "router_aux_loss_coef",
    "output_router_logits",
    "router_jitter_noise",
    "input_jitter_noise", /* Phi-3.5-MoE: a multiplicative noise on the router's input */
    "norm_topk_prob",
    "routed_scaling_factor",
    "scoring_func",
    "aux_loss_alpha",
    "seq_aux",
    "ep_size",
    "use_qk_norm",
    "qkv_bias",
    "shared_expert_intermediate_size", /* Qwen3-MoE files carry it as 0; Qwen2-MoE reads it */
    /* Granite's constant multipliers (configuration_granite.py, modeling_granite.py): the
     * embedding, each residual branch and the logits times a scalar, the attention scores
     * scaled by attention_multiplier instead of 1/sqrt(head_dim); under eager PyTorch a few
     * element-wise passes per layer and one over the logits, not timed (docs/MODEL.md) */
    "embedding_multiplier",
    "residual_multiplier",
    "attention_multiplier",
    "logits_scaling",
    /* hub bookkeeping */
    "custom_pipelines",
    "n_inner", /* read by GPT-2 and GPT-J; BLOOM configs carry it as null */
    "keys_to_ignore_at_inference",
    "model_name",
    NULL,
};

/* Keys that would change the result, with what zerosim assumes instead. */
static const struct {
    const char *key;
    const char *assumed;
} hf_assumptions[] = {
    {"quantization_config", "the result assumes 16-bit or fp32 weights as the DeepSpeed config "
                            "says; quantized (QLoRA-style) training is not modelled"},
    {"attn_logit_softcapping",
     "the result assumes attention runs as --flash-attention says; FlashAttention supports "
     "soft-capping only from 2.6, older stacks fall back to eager attention"},
    {"n_group", "the result assumes tokens spread evenly over every expert's rank; "
                "DeepSeek's node-limited routing (n_group, topk_group) is not modelled"},
    {"topk_group", "the result assumes tokens spread evenly over every expert's rank; "
                   "DeepSeek's node-limited routing (n_group, topk_group) is not modelled"},
};

const char *vocab_hf_assumption(const char *key)
{
    for (size_t i = 0; i < sizeof hf_assumptions / sizeof hf_assumptions[0]; i++)
        if (strcmp(key, hf_assumptions[i].key) == 0)
            return hf_assumptions[i].assumed;
    return NULL;
}

/* ds_config.json keys DeepSpeed defines that would change the result, by JSON path. */
static const struct {
    const char *path;
    const char *assumed;
} ds_assumptions[] = {
    {"tensor_parallel", "the result assumes no tensor parallelism: each GPU holds whole layers"},
    {"pipeline", "the result assumes no pipeline parallelism"},
    {"sequence_parallel_size", "the result assumes no sequence parallelism"},
    {"sparse_attention", "the result assumes dense attention"},
    {"progressive_layer_drop", "the result assumes every layer runs in every step"},
    {"compression_training", "the result assumes uncompressed training"},
    {"quantize_training", "the result assumes unquantized training"},
    {"weight_quantization", "the result assumes unquantized weights"},
    {"data_types", "the result assumes gradients accumulate in the training precision "
                   "(data_types.grad_accum_dtype fp32 would add 4 bytes per parameter)"},
    {"torch_autocast", "the result assumes the precision fp16/bf16.enabled gives; fp32 weights "
                       "under autocast are not modelled"},
    {"amp", "the result assumes the precision fp16/bf16.enabled gives; apex AMP is not "
            "modelled"},
    {"fp16.fp16_master_weights_and_grads",
     "the result assumes fp32 master weights and gradients"},
    {"zero_optimization.zero_quantized_weights",
     "ZeRO++ qwZ is not modelled: the result assumes 16-bit parameter all-gathers"},
    {"zero_optimization.zero_quantized_nontrainable_weights",
     "ZeRO++ is not modelled: the result assumes 16-bit frozen weights"},
    {"zero_optimization.zero_quantized_gradients",
     "ZeRO++ qgZ is not modelled: the result assumes 16-bit gradient reduce-scatters"},
    {"zero_optimization.zero_hpz_partition_size",
     "ZeRO++ hpZ is not modelled: the result assumes one parameter partition over all GPUs"},
    {"zero_optimization.zenflow", "ZenFlow is not modelled: the result assumes every "
                                  "gradient is applied in every step"},
    {"zero_optimization.offload_optimizer.super_offload",
     "SuperOffload is not modelled: the result assumes DeepSpeed's CPU Adam path"},
};

const char *vocab_ds_assumption(const char *path)
{
    for (size_t i = 0; i < sizeof ds_assumptions / sizeof ds_assumptions[0]; i++)
        if (strcmp(path, ds_assumptions[i].path) == 0)
            return ds_assumptions[i].assumed;
    return NULL;
}

/*
 * Versions read (August 2026 snapshots):
 *   DeepSpeed: deepspeedai/DeepSpeed master at edaa722 (version.txt 0.19.6, v0.19.5-27);
 *     removed keys checked against the history of runtime/constants.py and
 *     runtime/zero/{constants,offload_constants}.py (e.g. fp32_allreduce,
 *     seq_parallel_comm_data_type, cpu_offload_params are no longer accepted and are left out).
 *   transformers: configuration_utils.py both as v4 PretrainedConfig (kwargs.pop list,
 *     _get_global_generation_defaults) and as the v5 dataclass PreTrainedConfig (commit
 *     008e574); configuration_gpt2.py (01ae98a), configuration_gpt_neox.py (008e574, v5),
 *     configuration_llama.py (008e574, v5), configuration_mistral.py (001f85b),
 *     configuration_mpt.py (05699a7), modeling_rope_utils.py (0044e3b).
 */
