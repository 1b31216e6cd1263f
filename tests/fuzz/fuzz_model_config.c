/*
 * fuzz_model_config.c - libFuzzer target for model_config_parse (HuggingFace config.json).
 *
 * Feeds arbitrary bytes to the parser and always releases the result with model_config_fini,
 * so ASan sees every leak and out-of-bounds access on both the accepting and the rejecting
 * paths. A config the parser accepts goes on to params_count and params_persistent: the
 * parser's range checks must keep every product there inside uint64_t (the fuzz build
 * compiles params.c with -fsanitize=unsigned-integer-overflow, see CMakeLists.txt).
 * Seeds: the .json files of workloads/models/; dictionary: model_config.dict.
 */
#include "inputs/model_config.h"
#include "model/params.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ModelConfig cfg;
    Err err = {0};
    if (model_config_parse(&cfg, "fuzz.json", (const char *)data, size, &err) == 0) {
        ModelParams params;
        params_count(&cfg, &params);
        static const uint64_t thresholds[] = {0, 1, 100000, UINT64_MAX};
        for (size_t i = 0; i < sizeof thresholds / sizeof thresholds[0]; i++)
            (void)params_persistent(&params, cfg.n_layers, thresholds[i]);
    }
    model_config_fini(&cfg);
    return 0;
}
