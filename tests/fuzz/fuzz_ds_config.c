/*
 * fuzz_ds_config.c - libFuzzer target for ds_config_parse (DeepSpeed ds_config.json).
 *
 * Feeds arbitrary bytes to the parser and always releases the result with ds_config_fini.
 * A config the parser accepts is resolved against a few data-parallel sizes (1 up to the
 * largest GPU count a platform can describe) with ds_config_resolve_batch, whose products of
 * batch sizes must stay inside uint64_t (the fuzz build compiles ds_config.c with
 * -fsanitize=unsigned-integer-overflow, see CMakeLists.txt).
 * Seeds: the .json files of workloads/ds_configs/; dictionary: ds_config.dict.
 */
#include "inputs/ds_config.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    TrainConfig cfg;
    Err err = {0};
    if (ds_config_parse(&cfg, "fuzz.json", (const char *)data, size, &err) == 0 &&
        /* "auto" filled from the widest hidden size model_config accepts (2^20) */
        ds_config_apply(&cfg, 1u << 20, NULL, &err) == 0) {
        /* 2^30: 2^20 nodes (platform.c MAX_COUNT) x 1024 GPUs per node. */
        static const uint64_t dp_sizes[] = {1, 3, 8, 1000, 1ull << 20, 1ull << 30};
        for (size_t i = 0; i < sizeof dp_sizes / sizeof dp_sizes[0]; i++) {
            BatchPlan plan;
            Err resolve_err = {0};
            (void)ds_config_resolve_batch(&cfg, dp_sizes[i], &plan, &resolve_err);
        }
        (void)ds_config_param_bytes(&cfg);
    }
    ds_config_fini(&cfg);
    return 0;
}
