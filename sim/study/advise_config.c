/*
 * advise_config.c - a candidate's DeepSpeed config text (see advise_config.h).
 */
#include "advise_config.h"

#include <stdio.h>
#include <string.h>

static const char *nvme_path(OffloadDevice d)
{
    return d == OFFLOAD_NVME ? ", \"nvme_path\": \"" ADVISE_NVME_PATH_PLACEHOLDER "\"" : "";
}

/* An "optimizer" section is written, since DeepSpeed's offload wants its own CPU optimizer,
 * not a client one. */
void advise_config_text(const Candidate *c, const char *precision, char *text, size_t size)
{
    char offload[400] = "", window[160] = "";
    if (c->max_live_parameters)
        snprintf(window, sizeof window,
                 ",\n    \"stage3_prefetch_bucket_size\": %llu,"
                 "\n    \"stage3_max_live_parameters\": %llu",
                 (unsigned long long)c->prefetch_bucket_size,
                 (unsigned long long)c->max_live_parameters);
    if (c->offload_optimizer != OFFLOAD_NONE)
        snprintf(offload, sizeof offload,
                 ",\n    \"offload_optimizer\": {\"device\": \"%s\", \"pin_memory\": true%s%s},"
                 "\n    \"offload_param\": {\"device\": \"%s\"%s}",
                 ds_config_offload_name(c->offload_optimizer),
                 c->offload_optimizer == OFFLOAD_NVME ? ", \"pipeline_read\": true, "
                                                        "\"pipeline_write\": true"
                                                      : "",
                 nvme_path(c->offload_optimizer), ds_config_offload_name(c->offload_param),
                 nvme_path(c->offload_param));
    snprintf(
        text, size,
        "{\n  \"train_micro_batch_size_per_gpu\": %llu,\n"
        "  \"gradient_accumulation_steps\": %llu,\n"
        "  \"%s\": {\"enabled\": true},\n"
        "  \"optimizer\": {\"type\": \"AdamW\"},\n"
        "  \"zero_optimization\": {\n    \"stage\": %d,\n    \"overlap_comm\": true%s%s\n  }\n}\n",
        (unsigned long long)c->micro_batch, (unsigned long long)c->grad_accum, precision,
        c->zero_stage, window, offload);
}

int advise_config_parse(const Candidate *c, const char *precision, TrainConfig *out, Err *err)
{
    char text[1024];
    advise_config_text(c, precision, text, sizeof text);
    return ds_config_parse(out, "(advise candidate)", text, strlen(text), err);
}
