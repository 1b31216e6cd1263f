/*
 * fuzz_platform.c - libFuzzer target for platform_parse (zerosim's platform JSON).
 *
 * Feeds arbitrary bytes to the parser. A platform the parser accepts is resized the ways the
 * CLI's --gpus/--nodes can (a partial node, whole nodes, a node count, out-of-range values),
 * each on a fresh copy, and asked for its peak rate per precision. Platform owns no heap
 * memory, so there is no _fini; ASan still checks the parser's own allocations.
 * Seeds: the .json files of platforms/; dictionary: platform.dict.
 */
#include "inputs/platform.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Platform p;
    Err err = {0};
    if (platform_parse(&p, "fuzz.json", (const char *)data, size, &err) != 0)
        return 0;
    static const struct {
        uint64_t gpus, nodes;
    } sizes[] = {{1, 0}, {2, 0}, {3, 0}, {16, 0}, {0, 4}, {8, 1}, {16, 2}, {1u << 20, 0},
                 {0, (1u << 20) + 1}, {(1u << 20) + 1, 1}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        Platform q = p;
        Err resize_err = {0};
        if (platform_resize(&q, sizes[i].gpus, sizes[i].nodes, &resize_err) == 0) {
            (void)platform_n_gpus(&q);
            (void)platform_peak_flops_per_s(&q, PRECISION_FP32);
            (void)platform_peak_flops_per_s(&q, PRECISION_FP16);
            (void)platform_peak_flops_per_s(&q, PRECISION_BF16);
        }
    }
    return 0;
}
