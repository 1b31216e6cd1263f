/*
 * verdict.h - the first thing a report says: whether the configuration fits, or which memory
 * runs out, where and by how much, and the cheapest change that would fit (model/remedy.h).
 *
 * `zerosim estimate` judges the analytic peaks, `zerosim run` the simulated ones (the caching
 * allocator's reserve included); both print the verdict as the report's opening lines and as
 * the JSON report's "verdict" object (docs/JSON-SCHEMA.md).
 */
#ifndef ZEROSIM_REPORT_VERDICT_H
#define ZEROSIM_REPORT_VERDICT_H

#include "../model/remedy.h"
#include "json_writer.h"

#include <stdio.h>

typedef enum VerdictSpace { VERDICT_FITS, VERDICT_GPU, VERDICT_CPU, VERDICT_NVME } VerdictSpace;

typedef struct Verdict {
    VerdictSpace runs_out;  /* VERDICT_FITS when everything fits */
    bool has_rank;          /* a simulated run names the rank and the time */
    uint32_t rank;          /* GPU rank, or a node's first rank for host and NVMe */
    double time_s;
    double needed_bytes;    /* of the memory that runs out (fits: the GPU's peak) */
    double capacity_bytes;
    double headroom_bytes;  /* GPU: kept free by --headroom (else 0) */
    /* what fills the GPU at its peak, for naming the largest part */
    double model_states_bytes, activations_bytes, other_bytes;
    double cpu_needed_bytes, cpu_capacity_bytes; /* host per node, for the "fits" line */
    double nvme_needed_bytes, nvme_capacity_bytes;
    const Remedy *remedy; /* NULL when it fits or no search ran */
} Verdict;

/* The verdict of an analytic estimate. */
void verdict_of_estimate(const Estimate *e, const Remedy *remedy, Verdict *out);

/* "verdict      ..." and, when it does not fit, "hint         ..." lines. */
void verdict_text(FILE *out, const Verdict *v);

/* The "verdict" member, into an open object. */
void verdict_json(JsonWriter *w, const Verdict *v);

#endif
