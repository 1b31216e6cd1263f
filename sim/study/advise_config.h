/*
 * advise_config.h - an advise candidate as the DeepSpeed config a user would write for it.
 *
 * The same text serves two ends: advise parses it like a user's file to estimate and simulate
 * the candidate (so what is ranked is exactly what is recommended), and `--write-config` saves
 * it for `zerosim run --config` and for DeepSpeed itself.
 */
#ifndef ZEROSIM_STUDY_ADVISE_CONFIG_H
#define ZEROSIM_STUDY_ADVISE_CONFIG_H

#include "../common/err.h"
#include "../inputs/ds_config.h"
#include "../report/advice.h"

#include <stddef.h>

/* DeepSpeed needs a swap directory for NVMe offload: a placeholder the user edits. */
#define ADVISE_NVME_PATH_PLACEHOLDER "/local_nvme"

/* The ds_config.json text of candidate c with `precision` ("bf16" or "fp16"), NUL-terminated
 * in text (1024 bytes are always enough). */
void advise_config_text(const Candidate *c, const char *precision, char *text, size_t size);

/* The candidate's config parsed as a user's file would be. 0, or -1 with err set. */
int advise_config_parse(const Candidate *c, const char *precision, TrainConfig *out, Err *err);

#endif
