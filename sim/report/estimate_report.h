/*
 * estimate_report.h - `zerosim estimate` output: a readable table and the JSON report.
 *
 * Both open with the verdict (report/verdict.h): fits, or what runs out and the cheapest
 * change that fits. The text goes to a terminal; the JSON schema is documented in docs/JSON-SCHEMA.md and is
 * stable (keys carry their units). Both print every default applied and every key read but
 * not modelled, so no assumption is silent.
 */
#ifndef ZEROSIM_REPORT_ESTIMATE_REPORT_H
#define ZEROSIM_REPORT_ESTIMATE_REPORT_H

#include "../model/estimate.h"
#include "../model/remedy.h"
#include "json_writer.h"

#include <stdio.h>

typedef struct EstimateReport {
    const ModelConfig *model;
    const TrainConfig *train;
    const Platform *platform;
    const Estimate *estimate;
    const StrList *setup_defaults; /* command-line defaults (sequence length, ...) */
    const Remedy *remedy; /* the cheapest variant that fits when this does not, or NULL */
} EstimateReport;

void estimate_report_text(FILE *out, const EstimateReport *r);

void estimate_report_json(FILE *out, const EstimateReport *r);

/* "defaults applied:" and one line per default the command line, the model file and the
 * DeepSpeed config left to zerosim (shared with `zerosim run`). */
void estimate_report_defaults_text(FILE *out, const EstimateReport *r);

/* The "model", "cluster" and "config" members of the report, into an open object (shared
 * with `zerosim run`'s report). */
/* The "flops" object both reports carry: hardware, model and Megatron-formula FLOPs per step. */
void estimate_report_json_flops(JsonWriter *w, const StepFlops *f);

void estimate_report_json_inputs(JsonWriter *w, const EstimateReport *r);

/* The compute-bound step by kernel family (model/kernels.h KernelTime): GEMMs with their
 * achieved rate against the matmul ceiling, fused attention, element-wise and reduction
 * kernels, the host's issue beyond the GPU and host work behind synchronisations (shared
 * with `zerosim run`'s report). */
void estimate_report_kernels_text(FILE *out, const Estimate *e);

/* ... as the "compute_by_kernel" member, into an open object. */
void estimate_report_kernels_json(JsonWriter *w, const Estimate *e);

#endif
