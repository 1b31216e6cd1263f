/*
 * gpu_nccl.cu - NCCL collectives over all local GPUs, timed as nccl-tests times them (see
 * gpu.h).
 *
 * One process drives every GPU (ncclCommInitAll, one stream each, calls grouped with
 * ncclGroupStart/End). A repetition launches `iters` collectives back to back, waits for all
 * streams and divides the host-clock time by iters (nccl-tests src/common.cu, out of place).
 * Sizes are nccl-tests' (the -b/-e size): the buffer of all-reduce and broadcast, the
 * gathered output of all-gather, the scattered input of reduce-scatter, rounded down to a
 * whole number of floats per GPU. With one GPU the collectives still run (NCCL copies
 * locally) and are recorded with n = 1: that measures NCCL's fixed cost, not a link.
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "gpu.h"
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct Ranks {
    int n;
    ncclComm_t comm[CALIBRATION_MAX_GPUS];
    cudaStream_t stream[CALIBRATION_MAX_GPUS];
    float *send[CALIBRATION_MAX_GPUS];
    float *recv[CALIBRATION_MAX_GPUS];
} Ranks;

/* Launches one collective on every rank; count is per rank as NCCL takes it. */
static ncclResult_t launch(const Ranks *r, CalibCollective op, size_t count)
{
    ncclResult_t res = ncclGroupStart();
    for (int i = 0; i < r->n && res == ncclSuccess; i++) {
        switch (op) {
        case CALIB_ALL_REDUCE:
            res = ncclAllReduce(r->send[i], r->recv[i], count, ncclFloat, ncclSum, r->comm[i],
                                r->stream[i]);
            break;
        case CALIB_ALL_GATHER:
            res = ncclAllGather(r->send[i], r->recv[i], count, ncclFloat, r->comm[i], r->stream[i]);
            break;
        case CALIB_REDUCE_SCATTER:
            res = ncclReduceScatter(r->send[i], r->recv[i], count, ncclFloat, ncclSum, r->comm[i],
                                    r->stream[i]);
            break;
        default:
            res = ncclBroadcast(r->send[i], r->recv[i], count, ncclFloat, 0, r->comm[i],
                                r->stream[i]);
            break;
        }
    }
    ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? res : end;
}

static int sync_all(const Ranks *r, Err *err)
{
    for (int i = 0; i < r->n; i++) {
        cudaError_t e = cudaStreamSynchronize(r->stream[i]);
        if (e != cudaSuccess)
            return err_set(err, "nccl: cudaStreamSynchronize(GPU %d): %s", i,
                           cudaGetErrorString(e));
    }
    return 0;
}

/* Seconds per collective over iters back-to-back launches, or < 0 with err set. */
static double time_ops(const Ranks *r, CalibCollective op, size_t count, uint64_t iters, Err *err)
{
    double t0 = now_s();
    for (uint64_t k = 0; k < iters; k++) {
        ncclResult_t res = launch(r, op, count);
        if (res != ncclSuccess)
            return err_set(err, "nccl: %s: %s", calibration_collective_names[op],
                           ncclGetErrorString(res));
    }
    if (sync_all(r, err))
        return -1;
    double dt = (now_s() - t0) / (double)iters;
    return dt > 0 ? dt : 1e-9;
}

static void teardown(Ranks *r)
{
    for (int i = 0; i < r->n; i++) {
        cudaSetDevice(i);
        if (r->comm[i])
            ncclCommDestroy(r->comm[i]);
        if (r->stream[i])
            cudaStreamDestroy(r->stream[i]);
        cudaFree(r->send[i]);
        cudaFree(r->recv[i]);
    }
}

int gpu_nccl_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    uint64_t sizes[64];
    size_t n_sizes =
        plan_sizes(plan->coll_min_bytes, plan->coll_max_bytes, plan->coll_factor, sizes, 64);
    if (n_sizes == 0)
        return err_set(err, "nccl: expected sizes from --coll-min to --coll-max, got none");
    Ranks r;
    memset(&r, 0, sizeof r);
    if (cudaGetDeviceCount(&r.n) != cudaSuccess || r.n < 1)
        return err_set(err, "nccl: no CUDA GPU");
    if (r.n > CALIBRATION_MAX_GPUS)
        r.n = CALIBRATION_MAX_GPUS;
    const size_t max_bytes = (size_t)sizes[n_sizes - 1];
    int rc = 0;
    for (int i = 0; i < r.n && rc == 0; i++) {
        cudaSetDevice(i);
        cudaError_t e;
        if ((e = cudaMalloc(&r.send[i], max_bytes)) != cudaSuccess ||
            (e = cudaMalloc(&r.recv[i], max_bytes)) != cudaSuccess ||
            (e = cudaStreamCreateWithFlags(&r.stream[i], cudaStreamNonBlocking)) != cudaSuccess)
            rc = err_set(err, "nccl: GPU %d: allocating two %zu-byte buffers: %s", i, max_bytes,
                         cudaGetErrorString(e));
        else
            cudaMemset(r.send[i], 0, max_bytes);
    }
    ncclResult_t res = ncclSuccess;
    if (rc == 0 && (res = ncclCommInitAll(r.comm, r.n, NULL)) != ncclSuccess)
        rc = err_set(err, "nccl: ncclCommInitAll over %d GPUs: %s", r.n, ncclGetErrorString(res));
    if (rc == 0 && r.n == 1)
        fprintf(stderr, "  nccl: one GPU: collectives measured on a single rank (no "
                        "inter-GPU traffic), labelled n = 1\n");
    double times[SAMPLE_MAX_REPS];
    const size_t n_ranks = (size_t)r.n;
    for (int op = 0; op < CALIB_N_COLLECTIVES && rc == 0; op++) {
        for (size_t s = 0; s < n_sizes && rc == 0; s++) {
            /* count: elements per rank's send (all-gather) or receive (reduce-scatter), or
             * the whole buffer; at least one. */
            size_t elems = (size_t)sizes[s] / sizeof(float);
            bool is_split = op == CALIB_ALL_GATHER || op == CALIB_REDUCE_SCATTER;
            size_t count = is_split ? elems / n_ranks : elems;
            if (count == 0)
                count = 1;
            double bytes = (double)(count * sizeof(float) * (is_split ? n_ranks : 1));
            if (bytes > (double)max_bytes)
                continue;
            for (uint32_t w = 0; w < plan->warmup && rc == 0; w++)
                if (time_ops(&r, (CalibCollective)op, count, 1, err) < 0)
                    rc = -1;
            double once = rc ? -1 : time_ops(&r, (CalibCollective)op, count, 1, err);
            if (once < 0) {
                rc = -1;
                break;
            }
            double want = ceil(plan->target_rep_s / once);
            uint64_t iters = want < 1 ? 1 : want > 1000 ? 1000 : (uint64_t)want;
            for (uint32_t k = 0; k < plan->reps && rc == 0; k++)
                if ((times[k] = time_ops(&r, (CalibCollective)op, count, iters, err)) < 0)
                    rc = -1;
            if (rc == 0) {
                char label[32];
                snprintf(label, sizeof label, "%s", r.n == 1 ? "single GPU" : "");
                Sample *x = samples_add(out, SAMPLE_COLLECTIVE, op, label, n_ranks, bytes, iters,
                                        times, plan->reps);
                if (s + 1 == n_sizes)
                    fprintf(stderr, "  nccl %-14s %12.0f B algbw %8.2f GB/s (%d GPU%s)\n",
                            calibration_collective_names[op], bytes, x->size / x->median_s / 1e9,
                            r.n, r.n == 1 ? "" : "s");
            }
        }
    }
    teardown(&r);
    return rc;
}
