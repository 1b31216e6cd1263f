/*
 * vocab.h - the key vocabularies of the foreign formats zerosim reads.
 *
 * DeepSpeed's ds_config.json and HuggingFace's config.json are not ours: a key they define but
 * zerosim does not model is a warning, a key they do not define is an error (a typo). These
 * NULL-terminated lists are the "defined but not modelled" halves; the modelled keys sit next
 * to the code that reads them. Sources: DeepSpeed deepspeed/runtime/config.py, constants.py,
 * zero/config.py, zero/offload_config.py, activation_checkpointing/config.py; transformers
 * configuration_utils.py and the gpt2, gpt_neox, llama, mistral, mpt configuration files.
 */
#ifndef ZEROSIM_INPUTS_VOCAB_H
#define ZEROSIM_INPUTS_VOCAB_H

/* ds_config.json */
extern const char *const vocab_ds_top_not_modelled[];
extern const char *const vocab_ds_fp16_not_modelled[];
extern const char *const vocab_ds_bf16_not_modelled[];
extern const char *const vocab_ds_optimizer_not_modelled[];
extern const char *const vocab_ds_zero_not_modelled[];
extern const char *const vocab_ds_offload_optimizer_not_modelled[];
extern const char *const vocab_ds_offload_param_not_modelled[];
extern const char *const vocab_ds_act_ckpt_not_modelled[];

/* config.json (any family; the union of PretrainedConfig and the supported families) */
extern const char *const vocab_hf_not_modelled[];

#endif
