/*
 * bench_zero3.c - how fast the simulator runs a ZeRO-3-shaped training step at scale.
 *
 *   bench_zero3 --gpus N [--layers L] [--platform P] [--algo auto|ring|hier] [--stepwise]
 *               [--symmetric]
 *
 * Builds, for N GPUs of platform P (default dgx-a100-80g, resized), the event graph of one
 * ZeRO-3 step of a GPT-3 175B-shaped model (L = 96 layers of 1.81e9 parameters, bf16,
 * micro-batch 1 of 2048 tokens) and runs it once on the SimGrid engine. Per rank and layer:
 *  - forward: ALLOC the gathered parameters and all-gather them over all N ranks (gather
 *    stream), then the forward GEMMs (2 x params x tokens FLOPs, compute stream) and FREE;
 *  - backward, layers in reverse: the same ALLOC + all-gather, the backward GEMMs (2x the
 *    forward FLOPs) and FREE, then a reduce-scatter of the layer's gradients (reduce stream)
 *    after the backward compute;
 *  - prefetch depth 1: the gather for use u+1 waits for the FREE after the compute of use u-1,
 *    so at most two gathered layers are alive per GPU (the memory tracker shows the peak).
 * With --symmetric, two representative nodes are simulated, their collectives standing for all
 * N ranks (the engine's symmetric mode, as `zerosim run --mode symmetric`).
 * Prints the graph's size, the simulated step time and where the host's wall time went
 * (platform load, graph build, simulation), the simulator's rate in activities per second and
 * the peak RSS. A benchmark, not a test: nothing is asserted. Results: docs/PERFORMANCE.md.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "common/err.h"
#include "common/xalloc.h"
#include "engine/engine.h"
#include "inputs/platform.h"
#include "schedule/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifndef ZEROSIM_DATA_DIR
#define ZEROSIM_DATA_DIR "."
#endif

/* GPT-3 175B: 96 layers x 12 h^2 (h = 12288) = 1.74e9, plus embeddings spread over layers. */
#define PARAMS_PER_LAYER 1.81e9
#define BYTES_PER_PARAM 2.0
#define TOKENS (2048.0 * 1.0) /* sequence length x micro-batch */

static const char *const usage =
    "usage: bench_zero3 --gpus N [--layers L] [--platform P] [--algo auto|ring|hier]\n"
    "                   [--stepwise] [--symmetric]\n"
    "  --gpus N       GPUs (the platform is resized; a multiple of its GPUs per node)\n"
    "  --layers L     transformer layers (default 96)\n"
    "  --platform P   platform name or JSON path (default dgx-a100-80g); shipped names are\n"
    "                 looked up under $ZEROSIM_DATA_DIR/platforms or the source tree\n"
    "  --algo A       auto (default: the engine's choice, rail-aligned rings), ring or hier\n"
    "  --stepwise     every ring step as its own message (slow: N-1 steps per collective)\n"
    "  --symmetric    simulate two nodes standing for all of them (default: every rank)\n";

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* CPU time of this process (all threads): unlike wall time, it does not count the time other
 * processes on a shared machine take from us. */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int parse_u32(const char *text, uint32_t *out)
{
    char *end = NULL;
    unsigned long v = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || v == 0 || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* One ZeRO-3 step over n ranks and n_layers layers; see the header comment. Each collective
 * stands for n_logical members (symmetric mode when n_logical > n). */
static Graph *build_zero3(uint32_t n, uint32_t n_logical, uint32_t n_layers, Err *err)
{
    Graph *g = graph_create(n);
    uint32_t *members = xmalloc((size_t)n * sizeof *members);
    for (uint32_t r = 0; r < n; r++)
        members[r] = r;
    const uint32_t group = graph_add_group(g, members, n);
    free(members);

    const double layer_bytes = PARAMS_PER_LAYER * BYTES_PER_PARAM;
    const double fwd_flops = 2.0 * PARAMS_PER_LAYER * TOKENS;
    OpId *coll_ops = xmalloc((size_t)n * sizeof *coll_ops);
    OpId *allocs = xmalloc((size_t)n * sizeof *allocs);
    uint32_t *buffers = xmalloc((size_t)n * sizeof *buffers);
    /* FREE ops of the two previous uses, per rank: use u's gather waits for use u-2's FREE. */
    OpId *freed[2];
    for (int k = 0; k < 2; k++) {
        freed[k] = xmalloc((size_t)n * sizeof *freed[k]);
        for (uint32_t r = 0; r < n; r++)
            freed[k][r] = GRAPH_NO_OP;
    }
    char text[64];
    for (uint32_t u = 0; u < 2 * n_layers; u++) {
        const bool is_fwd = u < n_layers;
        const uint32_t layer = is_fwd ? u : 2 * n_layers - 1 - u;
        OpId *two_back = freed[u % 2]; /* use u-2's FREEs; overwritten with use u's below */
        for (uint32_t r = 0; r < n; r++) {
            allocs[r] =
                graph_alloc(g, r, STREAM_GATHER, MEM_GPU, MEM_BUFFERS, layer_bytes, &buffers[r]);
            if (two_back[r] != GRAPH_NO_OP)
                graph_depend(g, two_back[r], allocs[r]);
        }
        snprintf(text, sizeof text, "%s ag L%u", is_fwd ? "fwd" : "bwd", layer);
        uint32_t ag = graph_collective(g, COLL_ALL_GATHER, group, STREAM_GATHER, layer_bytes, 0,
                                       graph_label(g, text), coll_ops);
        if (n_logical > n)
            graph_collective_set_logical(g, ag, n_logical);
        snprintf(text, sizeof text, "%s L%u", is_fwd ? "fwd" : "bwd", layer);
        const uint32_t compute_label = graph_label(g, text);
        const double flops = is_fwd ? fwd_flops : 2.0 * fwd_flops;
        OpId *computes = allocs; /* reused: the ALLOC ids are no longer needed */
        for (uint32_t r = 0; r < n; r++) {
            OpId c = graph_compute(g, r, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, flops, compute_label);
            graph_depend(g, coll_ops[r], c);
            two_back[r] = graph_free(g, r, STREAM_COMPUTE, buffers[r]);
            computes[r] = c;
        }
        if (!is_fwd) {
            snprintf(text, sizeof text, "rs L%u", layer);
            uint32_t rs = graph_collective(g, COLL_REDUCE_SCATTER, group, STREAM_REDUCE,
                                           layer_bytes, 0, graph_label(g, text), coll_ops);
            if (n_logical > n)
                graph_collective_set_logical(g, rs, n_logical);
            for (uint32_t r = 0; r < n; r++)
                graph_depend(g, computes[r], coll_ops[r]);
        }
    }
    free(coll_ops);
    free(allocs);
    free(buffers);
    free(freed[0]);
    free(freed[1]);
    if (graph_finalize(g, err)) {
        graph_destroy(g);
        return NULL;
    }
    return g;
}

int main(int argc, char **argv)
{
    uint32_t n_gpus = 0, n_layers = 96;
    const char *platform_name = "dgx-a100-80g";
    bool is_symmetric = false;
    EngineOptions opts = {.algo = COLL_ALGO_AUTO, .is_stepwise = false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--gpus") == 0 && v && parse_u32(v, &n_gpus) == 0) {
            i++;
        } else if (strcmp(a, "--layers") == 0 && v && parse_u32(v, &n_layers) == 0) {
            i++;
        } else if (strcmp(a, "--platform") == 0 && v) {
            platform_name = v;
            i++;
        } else if (strcmp(a, "--algo") == 0 && v &&
                   (strcmp(v, "auto") == 0 || strcmp(v, "ring") == 0 || strcmp(v, "hier") == 0)) {
            opts.algo = strcmp(v, "auto") == 0   ? COLL_ALGO_AUTO
                        : strcmp(v, "ring") == 0 ? COLL_ALGO_RING
                                                 : COLL_ALGO_HIER;
            i++;
        } else if (strcmp(a, "--stepwise") == 0) {
            opts.is_stepwise = true;
        } else if (strcmp(a, "--symmetric") == 0) {
            is_symmetric = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "bench_zero3: bad argument '%s'\n%s", a, usage);
            return 2;
        }
    }
    if (n_gpus == 0) {
        fprintf(stderr, "bench_zero3: --gpus N is required\n%s", usage);
        return 2;
    }
    const char *data_dir = getenv("ZEROSIM_DATA_DIR");
    if (data_dir == NULL || data_dir[0] == '\0')
        data_dir = ZEROSIM_DATA_DIR;

    Err err = {0};
    Platform p;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (platform_load(&p, platform_name, data_dir, &err) || platform_resize(&p, n_gpus, 0, &err)) {
        fprintf(stderr, "bench_zero3: %s\n", err.msg);
        return 1;
    }
    /* Symmetric mode: two representative nodes stand for all of them (as `zerosim run`). */
    Platform simulated = p;
    if (is_symmetric && p.n_nodes > 2)
        simulated.n_nodes = 2;
    const uint32_t n_simulated = (uint32_t)platform_n_gpus(&simulated);
    if (engine_init(&simulated, PRECISION_BF16, &err)) {
        fprintf(stderr, "bench_zero3: %s\n", err.msg);
        return 1;
    }
    const double load_s = seconds_since(&t0);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    Graph *g = build_zero3(n_simulated, n_gpus, n_layers, &err);
    if (g == NULL) {
        fprintf(stderr, "bench_zero3: %s\n", err.msg);
        return 1;
    }
    const double build_s = seconds_since(&t0);

    EngineResult r;
    const double cpu0 = cpu_seconds();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (engine_run(g, &opts, &r, &err)) {
        fprintf(stderr, "bench_zero3: %s\n", err.msg);
        graph_destroy(g);
        return 1;
    }
    const double sim_s = seconds_since(&t0);
    const double sim_cpu_s = cpu_seconds() - cpu0;

    uint32_t peak_rank = 0;
    const MemAccount *peak = memory_max_peak(r.memory, MEM_GPU, &peak_rank);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("platform          %s, %u GPUs (%llu nodes), %u simulated\n", p.name, n_gpus,
           (unsigned long long)p.n_nodes, n_simulated);
    /* The group is every rank in order: whole nodes once there is more than one node. */
    const bool is_aligned = p.n_nodes > 1 && p.gpus_per_node > 0;
    CollAlgo algo = collective_resolve(opts.algo, is_aligned, COLL_ALL_GATHER, 0.0);
    printf("collectives       %s%s, %s, %s\n", collective_algo_name(algo),
           algo == COLL_ALGO_RING && is_aligned ? " (rail-aligned channels)" : "",
           opts.is_stepwise ? "stepwise" : "fluid", n_simulated < n_gpus ? "symmetric" : "full");
    printf("layers            %u\n", n_layers);
    printf("ops               %u\n", graph_n_ops(g));
    printf("streams           %u\n", graph_n_streams(g));
    printf("collective ops    %u\n", graph_n_collectives(g));
    printf("activities        %llu\n", (unsigned long long)r.n_activities);
    printf("step time         %.6f s (simulated)\n", r.makespan_s);
    printf("gathered peak     %.3f GB on rank %u\n", peak ? peak->at_peak[MEM_BUFFERS] / 1e9 : 0.0,
           peak_rank);
    printf("platform load     %.3f s\n", load_s);
    printf("graph build       %.3f s\n", build_s);
    printf("simulation        %.3f s (%.3f s in SimGrid, %.3f s CPU)\n", sim_s, r.wall_s,
           sim_cpu_s);
    printf("events/s          %.0f\n", sim_s > 0 ? (double)r.n_activities / sim_s : 0.0);
    printf("peak RSS          %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
    engine_result_fini(&r);
    graph_destroy(g);
    return 0;
}
