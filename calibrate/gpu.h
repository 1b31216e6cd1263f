/*
 * gpu.h - the CUDA half of zerosim-calibrate: device probe, cuBLAS GEMMs, copies, kernel
 * launches, NCCL.
 *
 * Implemented in CUDA C (gpu_*.cu, compiled by nvcc) and called from C; built only when the
 * CUDA toolkit and NCCL are found. Every benchmark warms up, then times `plan->reps`
 * repetitions, each of enough back-to-back calls to last about plan->target_rep_s, and adds
 * one sample per point (times per call). GPU-side times come from CUDA events on the stream
 * the work runs on, collectives' from the host clock around all GPUs' streams as nccl-tests
 * does. A CUDA, cuBLAS or NCCL error stops the benchmark with the library's message.
 */
#ifndef ZEROSIM_CALIBRATE_GPU_H
#define ZEROSIM_CALIBRATE_GPU_H

#include "common/err.h"
#include "plan.h"
#include "samples.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counts the GPUs and fills s->meta.system (names, driver, CUDA, cuBLAS and NCCL versions).
 * For each precision whose s->meta.gemm[].peak_flops_per_s is 0, fills in plan_peak_estimate
 * for GPU 0 and says so in s->meta.gemm_peak_source. Returns the number of GPUs, or -1 with
 * err set when there is none (no driver, no device). */
int gpu_info_probe(SampleSet *s, Err *err);

/* cuBLAS cublasGemmEx on GPU 0 for each precision in plan->has_precision, at
 * plan_gemm_shapes(); inputs are random in [-1, 1] (zeros would flatter the tensor cores'
 * power draw). SAMPLE_GEMM samples, size = 2mnk. Precisions the GPU lacks are skipped with a
 * line on stderr. */
int gpu_gemm_bench(const BenchPlan *plan, SampleSet *out, Err *err);

/* cudaMemcpyAsync on GPU 0: H2D and D2H from pinned (cudaHostAlloc) and pageable (malloc)
 * memory, and D2D, at plan_sizes(copy_min_bytes, copy_max_bytes, copy_factor). */
int gpu_copy_bench(const BenchPlan *plan, SampleSet *out, Err *err);

/* The launch floor on GPU 0: an empty kernel launched 1000 and 10000 times back to back on
 * one stream, host clock around the loop and its synchronisation. SAMPLE_LAUNCH samples,
 * n = size = kernels, times per kernel. */
int gpu_launch_bench(const BenchPlan *plan, SampleSet *out, Err *err);

/* NCCL all-reduce, all-gather, reduce-scatter and broadcast over all local GPUs (one process,
 * ncclCommInitAll) on float data, at plan_sizes(coll_min_bytes, coll_max_bytes, coll_factor);
 * sizes as nccl-tests counts them (the larger buffer). SAMPLE_COLLECTIVE samples, n = GPUs. */
int gpu_nccl_bench(const BenchPlan *plan, SampleSet *out, Err *err);

#ifdef __cplusplus
}
#endif

#endif
