/*
 * vocab.h - the key vocabularies of the foreign formats zerosim reads.
 *
 * DeepSpeed's ds_config.json and HuggingFace's config.json are not ours. These NULL-terminated
 * lists are the keys they define that zerosim does not read; the modelled keys sit next to the
 * code that reads them. Of the keys not read, only those that would change the result are
 * named in a warning, with what zerosim assumes instead (vocab_*_assumption); the rest are
 * metadata and stay silent. Sources: DeepSpeed deepspeed/runtime/config.py, constants.py,
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

/* Keys whose path (dotted, from the top) DeepSpeed defines and that would change the result:
 * what zerosim assumes instead, or NULL for keys that do not change it (metadata: silent). */
const char *vocab_ds_assumption(const char *path);

/* config.json metadata: keys of PretrainedConfig and of the supported families that change
 * neither parameters, FLOPs nor bytes (any family; silent). */
extern const char *const vocab_hf_metadata[];

/* A config.json key that would change the result: what zerosim assumes instead, else NULL. */
const char *vocab_hf_assumption(const char *key);

#endif
