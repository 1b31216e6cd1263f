/*
 * samples.h - measured points of zerosim-calibrate, and the raw-samples CSV.
 *
 * Every benchmark adds one Sample per measured point (a GEMM shape, a copy size, a thread
 * count): the time of each repetition, summarised as median, min, max and interquartile range.
 * The set also carries what the fits need besides times (GPU peaks) and what the calibration
 * JSON reports (date, host, versions), so that a CSV written here can be fitted again later
 * (`zerosim-calibrate --samples FILE`) with nothing else at hand. The CSV format:
 *
 *     # zerosim-calibrate samples v1
 *     # date: 2025-01-01T00:00:00Z          (metadata: "# key: value", keys in samples.c)
 *     kind,name,label,n,size,iters,reps,median_s,min_s,max_s,iqr_s,times_s
 *     gemm,bf16,qkv_fwd 2048x12288x4096,0,2.06e+11,50,5,3.1e-4,...,3.1e-4 3.2e-4 ...
 *
 * times_s holds every repetition, space-separated; the loader recomputes the summary columns
 * from it. Reading a CSV fails with "file:line: column: expected ..., got ...".
 */
#ifndef ZEROSIM_CALIBRATE_SAMPLES_H
#define ZEROSIM_CALIBRATE_SAMPLES_H

#include "common/err.h"
#include "inputs/calibration.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum SampleKind {
    SAMPLE_GEMM,       /* name: precision; size: FLOPs (2mnk) */
    SAMPLE_COPY,       /* name: route; size: bytes */
    SAMPLE_COLLECTIVE, /* name: collective; n: GPUs; size: bytes, as nccl-tests counts them */
    SAMPLE_CPU_ADAM,   /* name: "adam"; n: threads; size: parameters */
    SAMPLE_DISK,       /* name: "read" or "write"; n: block bytes; size: file bytes */
    SAMPLE_LAUNCH,     /* name: "empty_kernel"; n: kernels launched back to back per
                          repetition; size: the same count; times per kernel */
    SAMPLE_N_KINDS
} SampleKind;

#define SAMPLE_LABEL_MAX 64
#define SAMPLE_MAX_REPS 1000

typedef struct Sample {
    SampleKind kind;
    int name;                     /* index into samples_names(kind) */
    char label[SAMPLE_LABEL_MAX]; /* shape or other detail; no commas or newlines */
    uint64_t n;
    double size;
    uint64_t iters; /* calls timed together in one repetition; times are per call */
    uint32_t reps;
    double *times_s; /* owned; reps of them */
    double median_s, min_s, max_s, iqr_s;
} Sample;

/* What the fits and the JSON need besides the samples: the header, system and GEMM peaks of
 * a Calibration (the fitted sections stay empty), and the disk run's facts. */
typedef struct SampleSet {
    Sample *items;
    size_t n_items;
    size_t capacity;
    Calibration meta;
} SampleSet;

extern const char *const samples_kind_names[]; /* "gemm", "copy", ... NULL-terminated */

/* The names allowed for a kind (a NULL-terminated table). */
const char *const *samples_names(SampleKind kind);

void samples_init(SampleSet *s);
void samples_fini(SampleSet *s);

/* Appends a point with the n_reps times given (copied; per call, already divided by iters)
 * and computes its summary. A comma or newline in label becomes ';'. Returns the new
 * sample (borrowed; valid until the next add). */
Sample *samples_add(SampleSet *s, SampleKind kind, int name, const char *label, uint64_t n,
                    double size, uint64_t iters, const double *times_s, uint32_t n_reps);

/* Median, min, max and interquartile range (linear interpolation between order statistics)
 * of times[0..n) into the sample's summary fields. n >= 1. */
void samples_summarize(const double *times, uint32_t n, Sample *out);

/* Writes the CSV (metadata lines, header, one row per sample). */
void samples_write_csv(const SampleSet *s, FILE *out);

/* Writes the CSV to path; fails with the path and the system's reason. */
int samples_save_csv(const SampleSet *s, const char *path, Err *err);

/* Reads a CSV written by samples_write_csv into s (initialised here; samples_fini it even on
 * failure). */
int samples_load_csv(SampleSet *s, const char *path, Err *err);

#endif
