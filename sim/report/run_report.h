/*
 * run_report.h - `zerosim run` output: what a simulated step cost and where the time went.
 *
 * Puts the simulation's measurements (step time, throughput, time breakdown, memory peaks
 * from the tracker, bytes per collective and per link class) beside the analytic estimate of
 * the same configuration. The JSON extends the estimate schema (docs/JSON-SCHEMA.md).
 */
#ifndef ZEROSIM_REPORT_RUN_REPORT_H
#define ZEROSIM_REPORT_RUN_REPORT_H

#include "../engine/engine.h"
#include "breakdown.h"
#include "estimate_report.h"
#include "verdict.h"

#include <stdio.h>

typedef struct RunReport {
    EstimateReport inputs; /* model, config, platform and the analytic estimate */
    const Graph *graph;
    const EngineResult *result;
    uint32_t n_steps;
    const char *schedule;    /* "deepspeed" or "textbook", or the FSDP version and strategy
                                ("fsdp1 FULL_SHARD") */
    const char *algo;        /* collective algorithm */
    const char *comm_model;  /* "nccl" or "ideal" (engine's CommModel) */
    const char *mode;        /* "full" or "symmetric" */
    const char *mode_reason; /* why --mode auto simulated every rank beyond four nodes, or
                                NULL */
    uint32_t simulated_gpus; /* ranks in the graph (fewer than the GPUs when symmetric) */
    Breakdown breakdown;     /* of rank 0 */
    double build_wall_s;     /* host time to build the graph */
} RunReport;

/* Derived numbers both outputs print. */
typedef struct RunMetrics {
    double step_s;
    double tokens_per_s;
    double tflops_per_gpu;      /* Megatron's formula over step time and GPUs */
    double mfu;                 /* model FLOPs over step time and GPU peak */
    uint32_t peak_rank;         /* the GPU with the highest memory peak */
    const MemAccount *gpu_peak; /* its account */
    const MemAccount *cpu_peak; /* the busiest node's host memory */
    const MemAccount *nvme_peak;
    const MemAccount *oom; /* first out-of-memory, or NULL */
    uint32_t oom_rank;
    MemSpace oom_space;
} RunMetrics;

void run_report_metrics(const RunReport *r, RunMetrics *out);

/* The simulated verdict (report/verdict.h): the first out-of-memory, else the GPU with the
 * highest device peak. */
void run_report_verdict(const RunReport *r, const RunMetrics *m, Verdict *out);

void run_report_text(FILE *out, const RunReport *r);

void run_report_json(FILE *out, const RunReport *r);

#endif
