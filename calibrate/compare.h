/*
 * compare.h - measured points beside zerosim's predictions for the same operations.
 *
 * The predictions use the platform numbers the way the engine does (sim/engine/platform_xml.c,
 * sim/engine/collective.h, sim/schedule/cost.c), in closed form rather than through SimGrid:
 *  - GEMM: flops / (peak of the precision x gpu.gemm_efficiency);
 *  - H2D/D2H copy (pinned or pageable alike: zerosim does not tell them apart): the GPU<->CPU
 *    route, latency = pcie.gpu_link + pcie.switch_uplink latencies, bandwidth = the lower of
 *    the two; time = latency + bytes / bandwidth;
 *  - D2D copy: 2 bytes / gpu.hbm_bw_bytes_per_s (each byte read and written in HBM);
 *  - ring collective over n GPUs of one node with hop latency alpha and per-member bandwidth B
 *    (NVSwitch: nvlink latency and bandwidth; direct NVLink: bandwidth / (gpus_per_node - 1);
 *    PCIe: two lane latencies, plus two uplink latencies and the uplink's bandwidth when the
 *    ring crosses switches): all-reduce 2(n-1) alpha + 2(n-1)/n S / B, all-gather and
 *    reduce-scatter (n-1) alpha + (n-1)/n S / B, broadcast (n-1) alpha + S / B;
 *  - CPU Adam: params / (cpu.cores x cpu.adam_params_per_s_per_core), the engine's update on
 *    all cores, beside the best thread count measured (the other counts are not printed);
 *  - disk: bytes / (nvme.drives x per-drive bandwidth).
 * In fluid mode (the default) the engine gives these times up to the sharing of links between
 * concurrent flows, which a single operation on an idle platform does not exercise.
 */
#ifndef ZEROSIM_CALIBRATE_COMPARE_H
#define ZEROSIM_CALIBRATE_COMPARE_H

#include "inputs/platform.h"
#include "samples.h"

#include <stdbool.h>
#include <stdio.h>

/* zerosim's time for the sample's operation on p, or a negative value when p does not model
 * it (one-GPU collectives, a precision without a peak, no NVMe drive). */
double compare_predict(const Sample *x, const Platform *p);

/* Prints one row per sample: measured median, p's prediction and its error in percent, and
 * the same for `calibrated` (p with the calibration applied; NULL to leave it out), then the
 * mean |error| per group. */
void compare_print(const SampleSet *s, const Platform *p, const Platform *calibrated, FILE *out);

#endif
