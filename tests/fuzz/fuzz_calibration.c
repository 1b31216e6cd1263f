/*
 * fuzz_calibration.c - libFuzzer target for calibration_parse (zerosim-calibrate's JSON).
 *
 * Feeds arbitrary bytes to the parser. A calibration the parser accepts is overlaid with
 * calibration_apply on fresh copies of three shipped platforms that take the overlay's
 * different branches (NVSwitch, a PCIe switch per GPU pair and NVMe drives; one GPU on its own
 * root port; two GPUs without NVLink), and the fields it may change must stay usable by the engine:
 * finite, rates and bandwidths > 0, latencies in [0, 1] s, GEMM efficiency in [0.01, 1]. A
 * violation aborts, so libFuzzer reports it with its input. Calibration owns no heap memory
 * (no _fini); ASan still checks the parser's own allocations.
 * Seeds: tests/golden/inputs/calibration-*.json and tests/fuzz/regressions/calibration-*.json;
 * dictionary: calibration.dict.
 */
#include "inputs/calibration.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const platform_names[] = {"dgx-a100-80g", "h200-single",
                                             "workstation-2x-titan-rtx"};
enum { N_PLATFORMS = sizeof platform_names / sizeof platform_names[0] };
static Platform platforms[N_PLATFORMS];
static int is_loaded;

static void check(int ok, const char *platform, const char *field, double value)
{
    if (!ok) {
        fprintf(stderr, "fuzz_calibration: %s: %s = %g after calibration_apply\n", platform,
                field, value);
        abort();
    }
}

static int is_rate(double v)
{
    return isfinite(v) && v > 0;
}

static int is_latency(double v)
{
    return isfinite(v) && v >= 0 && v <= 1.0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!is_loaded) {
        for (int i = 0; i < N_PLATFORMS; i++) {
            Err err = {0};
            if (platform_load(&platforms[i], platform_names[i], ZEROSIM_SOURCE_DIR, &err) != 0) {
                fprintf(stderr, "fuzz_calibration: %s\n", err.msg);
                abort();
            }
        }
        is_loaded = 1;
    }
    Calibration c;
    Err err = {0};
    if (calibration_parse(&c, "fuzz.json", (const char *)data, size, &err) != 0)
        return 0;
    for (int i = 0; i < N_PLATFORMS; i++) {
        Platform p = platforms[i];
        const char *name = platform_names[i];
        if (calibration_apply(&c, &p) < 0)
            abort();
        check(isfinite(p.gpu.gemm_efficiency) && p.gpu.gemm_efficiency >= 0.01 &&
                  p.gpu.gemm_efficiency <= 1.0,
              name, "gpu.gemm_efficiency", p.gpu.gemm_efficiency);
        check(is_rate(p.pcie.gpu_link.bw_bytes_per_s), name, "pcie.gpu_link.bw_bytes_per_s",
              p.pcie.gpu_link.bw_bytes_per_s);
        check(is_latency(p.pcie.gpu_link.latency_s), name, "pcie.gpu_link.latency_s",
              p.pcie.gpu_link.latency_s);
        check(is_rate(p.pcie.switch_uplink.bw_bytes_per_s), name,
              "pcie.switch_uplink.bw_bytes_per_s", p.pcie.switch_uplink.bw_bytes_per_s);
        check(is_latency(p.pcie.switch_uplink.latency_s), name, "pcie.switch_uplink.latency_s",
              p.pcie.switch_uplink.latency_s);
        if (p.has_nvlink) {
            check(is_rate(p.nvlink.bw_bytes_per_s), name, "nvlink.bw_bytes_per_s",
                  p.nvlink.bw_bytes_per_s);
            check(is_latency(p.nvlink.latency_s), name, "nvlink.latency_s", p.nvlink.latency_s);
        }
        check(is_rate(p.cpu.adam_params_per_s_per_core), name, "cpu.adam_params_per_s_per_core",
              p.cpu.adam_params_per_s_per_core);
        if (p.nvme.n_drives > 0) {
            check(is_rate(p.nvme.read_bw_bytes_per_s_per_drive), name,
                  "nvme.read_bw_bytes_per_s_per_drive", p.nvme.read_bw_bytes_per_s_per_drive);
            check(is_rate(p.nvme.write_bw_bytes_per_s_per_drive), name,
                  "nvme.write_bw_bytes_per_s_per_drive", p.nvme.write_bw_bytes_per_s_per_drive);
        }
    }
    return 0;
}
