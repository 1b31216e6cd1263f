/*
 * fuzz_pipeline.c - libFuzzer target past the parsers: a fuzzed model config and DeepSpeed
 * config through the estimate and the schedule builder, whose graph must validate.
 *
 * The input is a HuggingFace config.json, a line "---", and a ds_config.json. Whatever both
 * parsers accept is applied ("auto" filled), estimated and built into the event graph of one
 * step on two A100s (dgx-a100-80g resized, loaded once) at 128 tokens, without and with full
 * recomputation and under both ZeRO-3 generations (--deepspeed-version): estimate_build and
 * zero_schedule_build may refuse the combination with an error, but must never crash, and a
 * graph they return has passed graph_finalize (no cycle, every buffer freed once, every
 * collective joined). To keep each run short the harness skips models of more than 8 layers
 * or hidden sizes above 2048 and configs of more than 4 accumulation steps (limits of this
 * harness, not of zerosim). Seeds: tests/fuzz/seeds/pipeline-*.txt; dictionary: the model
 * and ds_config dictionaries together (pipeline.dict).
 */
#define _GNU_SOURCE /* memmem */

#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/estimate.h"
#include "schedule/graph.h"
#include "schedule/zero_schedule.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Platform platform;
static int platform_state; /* 0: not loaded, 1: loaded, -1: failed */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (platform_state == 0) {
        Err err = {0};
        platform_state = platform_load(&platform, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err) == 0 &&
                                 platform_resize(&platform, 2, 0, &err) == 0
                             ? 1
                             : -1;
    }
    if (platform_state < 0)
        abort(); /* the shipped platform must load */
    const char *text = (const char *)data;
    const char *sep = memmem(text, size, "\n---\n", 5);
    if (sep == NULL)
        return 0;
    const size_t n_model = (size_t)(sep - text), n_config = size - n_model - 5;
    ModelConfig model = {0};
    TrainConfig train = {0};
    Err err = {0};
    if (model_config_parse(&model, "model.json", text, n_model, &err) == 0 &&
        ds_config_parse(&train, "ds.json", sep + 5, n_config, &err) == 0 &&
        ds_config_apply(&train, model.hidden, NULL, &err) == 0 && model.n_layers <= 8 &&
        model.hidden <= 2048) {
        /* without and with full recomputation, under current DeepSpeed's ZeRO-3 and under the
         * per-parameter generation before 0.6 (its flat tensors, re-gathers and holds) */
        const Recompute recomputes[2] = {RECOMPUTE_NONE, RECOMPUTE_FULL};
        const Zero3Generation generations[2] = {ZERO3_GEN_PER_SUBMODULE,
                                                ZERO3_GEN_PER_PARAMETER};
        for (int r = 0; r < 2; r++) {
            EstimateOptions opts = {.seq_len = 128,
                                    .recompute = recomputes[r],
                                    .checkpoint_every = 1,
                                    .is_flash_attention = true};
            Estimate est;
            Err est_err = {0};
            if (estimate_build(&model, &train, &platform, &opts, &est, &est_err) != 0 ||
                est.setup.grad_accum > 4)
                break;
            for (int k = 0; k < 2; k++) {
                ScheduleOptions sched = {.variant = SCHEDULE_DEEPSPEED,
                                         .n_steps = 1,
                                         .has_activations = true,
                                         .zero3_generation = generations[k]};
                Err build_err = {0};
                Graph *g = zero_schedule_build(&model, &train, &platform, &est.setup, &sched,
                                               &build_err);
                if (g != NULL && graph_n_ranks(g) != 2)
                    abort(); /* one rank per GPU of the platform */
                graph_destroy(g);
            }
        }
    }
    model_config_fini(&model);
    ds_config_fini(&train);
    return 0;
}
