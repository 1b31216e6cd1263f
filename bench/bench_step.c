/*
 * bench_step.c - how fast the simulator builds and runs the training step it simulates for
 * users, at scale.
 *
 *   bench_step --gpus N [--model M] [--config D] [--platform P] [--seq-len S]
 *              [--activation-checkpointing none|selective|full|every:N]
 *              [--mode full|symmetric] [--algo auto|ring|hier|tree] [--stepwise] [--steps K]
 *
 * The same pipeline as `zerosim run` (inputs, estimate, zero_schedule_build, engine_run), on
 * real inputs: by default GPT-3 175B (the shipped preset) with the shipped zero3 config on
 * dgx-a100-80g resized to N GPUs, 2048 tokens, full activation checkpointing, every rank
 * simulated (full mode). Prints the graph's size, the simulated step time and where the host's
 * wall time went (inputs and platform, graph build, simulation), the simulator's rate in
 * activities per second and the peak RSS. A benchmark, not a test: nothing is asserted.
 * Results: docs/PERFORMANCE.md.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "common/choices.h"
#include "common/err.h"
#include "engine/engine.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/estimate.h"
#include "model/setup.h"
#include "schedule/symmetric.h"
#include "schedule/zero_schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifndef ZEROSIM_DATA_DIR
#define ZEROSIM_DATA_DIR "."
#endif

static const char *const usage =
    "usage: bench_step --gpus N [--model M] [--config D] [--platform P] [--seq-len S]\n"
    "                  [--activation-checkpointing none|selective|full|every:N]\n"
    "                  [--mode full|symmetric] [--algo auto|ring|hier|tree] [--stepwise]\n"
    "                  [--steps K]\n"
    "  --gpus N       GPUs (the platform is resized; a multiple of its GPUs per node)\n"
    "  --model M      model preset or config.json (default gpt3-175b)\n"
    "  --config D     ds_config name or path (default zero3)\n"
    "  --platform P   platform name or JSON path (default dgx-a100-80g)\n"
    "  --seq-len S    tokens per sequence (default 2048)\n"
    "  --activation-checkpointing R   (default full)\n"
    "  --mode M       full (default: every rank) or symmetric (two nodes for all)\n"
    "  --algo A       collective algorithm (default auto)\n"
    "  --stepwise     every ring step as its own message (slow)\n"
    "  --steps K      training steps in the graph (default 1)\n"
    "Shipped names are looked up under $ZEROSIM_DATA_DIR or the source tree.\n";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of this process: unlike wall time, it does not count the time other processes on
 * a shared machine take from us. */
static double cpu_s(void)
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

typedef struct Args {
    uint32_t gpus, seq_len, steps;
    const char *model, *config, *platform, *recompute;
    int mode, algo;
    bool is_stepwise;
} Args;

static int parse_args(int argc, char **argv, Args *a)
{
    *a = (Args){.seq_len = 2048,
                .steps = 1,
                .model = "gpt3-175b",
                .config = "zero3",
                .platform = "dgx-a100-80g",
                .recompute = "full",
                .mode = SIM_MODE_FULL,
                .algo = 0};
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (strcmp(k, "--stepwise") == 0) {
            a->is_stepwise = true;
            continue;
        } else if (strcmp(k, "--gpus") == 0 && v) {
            ok = parse_u32(v, &a->gpus) == 0;
        } else if (strcmp(k, "--seq-len") == 0 && v) {
            ok = parse_u32(v, &a->seq_len) == 0;
        } else if (strcmp(k, "--steps") == 0 && v) {
            ok = parse_u32(v, &a->steps) == 0;
        } else if (strcmp(k, "--model") == 0 && v) {
            a->model = v;
        } else if (strcmp(k, "--config") == 0 && v) {
            a->config = v;
        } else if (strcmp(k, "--platform") == 0 && v) {
            a->platform = v;
        } else if (strcmp(k, "--activation-checkpointing") == 0 && v) {
            a->recompute = v;
        } else if (strcmp(k, "--mode") == 0 && v) {
            ok = (a->mode = choices_parse(&choices_mode, v)) > SIM_MODE_AUTO;
        } else if (strcmp(k, "--algo") == 0 && v) {
            ok = (a->algo = choices_parse(&choices_algo, v)) >= 0;
        } else {
            ok = 0;
        }
        if (!ok) {
            fprintf(stderr, "bench_step: bad argument '%s'\n%s", k, usage);
            return -1;
        }
        i++;
    }
    if (a->gpus == 0) {
        fprintf(stderr, "bench_step: --gpus N is required\n%s", usage);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    Args a;
    if (parse_args(argc, argv, &a))
        return 2;
    const char *env = getenv("ZEROSIM_DATA_DIR");
    const char *data_dir = env && env[0] ? env : ZEROSIM_DATA_DIR;
    Err err = {0};
    ModelConfig model = {0};
    TrainConfig train = {0};
    Platform p, simulated;
    Graph *g = NULL;
    EngineResult r = {0};
    EstimateOptions est_opts = {.seq_len = a.seq_len, .is_flash_attention = true};
    ScheduleOptions sched = {.variant = SCHEDULE_DEEPSPEED,
                             .n_steps = a.steps,
                             .has_activations = true};
    EngineOptions eng = {.algo = (CollAlgo)a.algo, .is_stepwise = a.is_stepwise};
    int rc = 1;
    double t0 = now_s();
    if (setup_recompute_parse(a.recompute, &est_opts.recompute, &est_opts.checkpoint_every)) {
        fprintf(stderr, "bench_step: --activation-checkpointing: bad value '%s'\n", a.recompute);
        return 2;
    }
    Estimate est;
    if (model_config_load(&model, a.model, data_dir, &err) ||
        ds_config_load(&train, a.config, data_dir, &err) ||
        platform_load(&p, a.platform, data_dir, &err) ||
        platform_resize(&p, a.gpus, 0, &err) ||
        estimate_build(&model, &train, &p, &est_opts, &est, &err))
        goto done;
    const bool is_symmetric = symmetric_choose(&p, (SimMode)a.mode, &simulated, &sched);
    if (engine_init(&simulated, train.precision, &err))
        goto done;
    const double load_s = now_s() - t0;

    t0 = now_s();
    g = zero_schedule_build(&model, &train, &p, &est.setup, &sched, &err);
    if (g == NULL)
        goto done;
    const double build_s = now_s() - t0;

    t0 = now_s();
    const double cpu0 = cpu_s();
    if (engine_run(g, &eng, &r, &err))
        goto done;
    const double sim_s = now_s() - t0, sim_cpu_s = cpu_s() - cpu0;

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("model             %s, %s, %u tokens, checkpointing %s\n", model.name, train.file,
           a.seq_len, a.recompute);
    printf("platform          %s, %u GPUs (%llu nodes), %u simulated (%s)\n", p.name, a.gpus,
           (unsigned long long)p.n_nodes, graph_n_ranks(g), is_symmetric ? "symmetric" : "full");
    printf("collectives       %s, %s\n", collective_algo_name(eng.algo),
           eng.is_stepwise ? "stepwise" : "fluid");
    printf("ops               %u\n", graph_n_ops(g));
    printf("streams           %u\n", graph_n_streams(g));
    printf("collective ops    %u\n", graph_n_collectives(g));
    printf("activities        %llu\n", (unsigned long long)r.n_activities);
    printf("step time         %.6f s (simulated, %u step%s)\n", r.makespan_s, a.steps,
           a.steps > 1 ? "s" : "");
    printf("inputs + platform %.3f s\n", load_s);
    printf("graph build       %.3f s\n", build_s);
    printf("simulation        %.3f s (%.3f s in SimGrid, %.3f s CPU)\n", sim_s, r.wall_s,
           sim_cpu_s);
    printf("events/s          %.0f\n", sim_s > 0 ? (double)r.n_activities / sim_s : 0.0);
    printf("peak RSS          %.1f MB (%.1f kB per simulated GPU)\n", (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_maxrss / (double)graph_n_ranks(g));
    printf("memory maps       %ld while running (vm.max_map_count caps them)\n", r.n_memory_maps);
    rc = 0;
done:
    if (err.is_set)
        fprintf(stderr, "bench_step: %s\n", err.msg);
    engine_result_fini(&r);
    graph_destroy(g);
    model_config_fini(&model);
    ds_config_fini(&train);
    return rc;
}
