/*
 * test_run_report.c - `zerosim run`'s text and JSON reports (report/run_report.c).
 *
 * No SimGrid: the run is made by hand, as in test_breakdown.c. One rank, five ops with
 * made-up times (forward [0,1], an all-gather [0.5,3] the backward waits for, backward [3,4],
 * a host optimizer step [4,6], a GPU optimizer kernel [6,7]) standing for two steps, so
 * per-step values are halves; a memory tracker fed by hand (at 1 s parameters 1 GiB,
 * gradients 0.5 GiB, optimizer states 2 GiB; at 2 s activations 3 GiB, freed at 3 s; at 4 s
 * 1 GiB of host optimizer states); bytes per collective and link class set by hand. The
 * analytic side is the real estimate of gpt2-1.5b, zero2, sequence 1024, on one H200.
 * The JSON is parsed back with cJSON and the text is checked line by line against the values
 * worked out here: step 7 s / 2 = 3.5 s, 4 x 1024 tokens / 3.5 s, a 6.5 GiB GPU peak at 2 s,
 * and the breakdown (compute 1 s, exposed all-gather 1 s, exposed CPU optimizer 1 s, GPU
 * optimizer 0.5 s per step); with 6 GiB of HBM the same run is out of memory at 2 s.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/run_report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0
enum { FWD, GATHER, BWD, ADAM, GPU_STEP, N_OPS };
enum { N_STEPS = 2 };

typedef struct Run {
    ModelConfig model;
    TrainConfig train;
    Platform platform;
    Estimate est;
    Graph *graph;
    double start[N_OPS], end[N_OPS];
    double link_bytes[1][LINK_N_CLASSES];
    double coll_bytes[1][COLL_N_KINDS];
    StrList setup_defaults;
    EngineResult result;
    RunReport report;
} Run;

static Graph *timed_graph(Run *run)
{
    Graph *g = graph_create(1);
    const uint32_t me[] = {0};
    uint32_t group = graph_add_group(g, me, 1);
    OpId ops[N_OPS];
    ops[FWD] = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1e12,
                             graph_label(g, "fwd L0"));
    graph_collective(g, COLL_ALL_GATHER, group, STREAM_GATHER, 1e9, 0, graph_label(g, "ag"),
                     &ops[GATHER]);
    ops[BWD] = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_BACKWARD, 2e12,
                             graph_label(g, "bwd L0"));
    ops[ADAM] = graph_compute(g, 0, STREAM_CPU, DEVICE_CPU, PURPOSE_OPTIMIZER, 1e9,
                              graph_label(g, "cpu optimizer step"));
    ops[GPU_STEP] = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_OPTIMIZER, 1e9,
                                  graph_label(g, "optimizer step"));
    graph_depend(g, ops[GATHER], ops[BWD]);
    graph_depend(g, ops[BWD], ops[ADAM]);
    graph_depend(g, ops[ADAM], ops[GPU_STEP]);
    Err err = {0};
    assert_int_equal(graph_finalize(g, &err), 0);
    const double s[N_OPS] = {0, 0.5, 3, 4, 6}, e[N_OPS] = {1, 3, 4, 6, 7};
    memcpy(run->start, s, sizeof s);
    memcpy(run->end, e, sizeof e);
    return g;
}

static void run_build(Run *run, double gpu_capacity_bytes)
{
    memset(run, 0, sizeof *run);
    Err err = {0};
    int rc = model_config_load(&run->model, "gpt2-1.5b", ZEROSIM_SOURCE_DIR, &err) ||
             ds_config_load(&run->train, "zero2", ZEROSIM_SOURCE_DIR, &err) ||
             platform_load(&run->platform, "h200-single", ZEROSIM_SOURCE_DIR, &err);
    if (rc == 0) {
        EstimateOptions opts = {.seq_len = 1024, .recompute = RECOMPUTE_NONE,
                                .checkpoint_every = 1, .is_flash_attention = true};
        rc = estimate_build(&run->model, &run->train, &run->platform, &opts, &run->est, &err);
    }
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(run->est.setup.global_batch, 4); /* micro 4 x accumulation 1 x 1 GPU */

    run->graph = timed_graph(run);
    EngineResult *r = &run->result;
    r->makespan_s = 7;
    r->n_ops = N_OPS;
    r->op_start_s = run->start;
    r->op_end_s = run->end;
    r->n_ranks = 1;
    r->memory = memory_create(1, 1, gpu_capacity_bytes, 64 * GIB, 0, NULL);
    memory_apply(r->memory, 1, 0, MEM_GPU, MEM_PARAMS, 0, STREAM_COMPUTE, 1 * GIB);
    memory_apply(r->memory, 1, 0, MEM_GPU, MEM_GRADS, 1, STREAM_COMPUTE, 0.5 * GIB);
    memory_apply(r->memory, 1, 0, MEM_GPU, MEM_OPTIMIZER, 2, STREAM_COMPUTE, 2 * GIB);
    memory_apply(r->memory, 2, 0, MEM_GPU, MEM_ACTIVATIONS, 3, STREAM_COMPUTE, 3 * GIB);
    memory_apply(r->memory, 3, 0, MEM_GPU, MEM_ACTIVATIONS, 3, STREAM_COMPUTE, -3 * GIB);
    memory_apply(r->memory, 4, 0, MEM_CPU, MEM_OPTIMIZER, 4, STREAM_CPU, 1 * GIB);
    run->coll_bytes[0][COLL_ALL_GATHER] = 4e9;
    run->link_bytes[0][LINK_PCIE] = 6e9;
    r->coll_bytes = run->coll_bytes;
    r->link_bytes = run->link_bytes;
    r->n_activities = 1234;
    r->wall_s = 0.5;

    strlist_init(&run->setup_defaults);
    strlist_addf(&run->setup_defaults, "--schedule deepspeed (test)");
    run->report = (RunReport){
        .inputs = {.model = &run->model, .train = &run->train, .platform = &run->platform,
                   .estimate = &run->est, .setup_defaults = &run->setup_defaults},
        .graph = run->graph,
        .result = r,
        .n_steps = N_STEPS,
        .schedule = "deepspeed",
        .algo = "ring",
        .comm_model = "nccl",
        .mode = "full",
        .simulated_gpus = 1,
        .build_wall_s = 0.25,
    };
    breakdown_rank(run->graph, r, 0, &run->report.breakdown);
}

static void run_fini(Run *run)
{
    strlist_fini(&run->setup_defaults);
    memory_destroy(run->result.memory);
    graph_destroy(run->graph);
    model_config_fini(&run->model);
    ds_config_fini(&run->train);
}

static char *capture(void (*writer)(FILE *, const RunReport *), const RunReport *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    writer(f, r);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static cJSON *capture_json(const RunReport *r)
{
    char *text = capture(run_report_json, r);
    cJSON *root = cJSON_Parse(text);
    if (root == NULL)
        fail_msg("invalid JSON near: %.40s", cJSON_GetErrorPtr());
    free(text);
    return root;
}

static const cJSON *at(const cJSON *root, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *node = root;
    for (char *save = NULL, *key = strtok_r(buf, ".", &save); key != NULL;
         key = strtok_r(NULL, ".", &save)) {
        node = cJSON_GetObjectItemCaseSensitive(node, key);
        if (node == NULL)
            fail_msg("missing %s (at %s)", path, key);
    }
    return node;
}

static void assert_num(const cJSON *root, const char *path, double expected)
{
    const cJSON *v = at(root, path);
    if (!cJSON_IsNumber(v))
        fail_msg("%s: expected a number", path);
    if (fabs(v->valuedouble - expected) > fabs(expected) * 1e-12)
        fail_msg("%s: expected %.17g, got %.17g", path, expected, v->valuedouble);
}

static void assert_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("expected the report to contain \"%s\"; it is:\n%s", needle, text);
}

static void test_run_report_metrics_hand_values(void **state)
{
    (void)state;
    Run run;
    run_build(&run, 8 * GIB);
    RunMetrics m;
    run_report_metrics(&run.report, &m);
    assert_float_equal(m.step_s, 3.5, 1e-12);
    assert_float_equal(m.tokens_per_s, 4.0 * 1024 / 3.5, 1e-9);
    assert_float_equal(m.tflops_per_gpu, run.est.flops.megatron / 3.5 / 1e12, 1e-9);
    assert_float_equal(m.mfu, run.est.flops.model / 3.5 / 835.5e12, 1e-12); /* H200 NVL bf16 */
    assert_int_equal(m.peak_rank, 0);
    assert_float_equal(m.gpu_peak->peak_bytes, 6.5 * GIB, 0);
    assert_float_equal(m.gpu_peak->peak_time_s, 2, 0);
    assert_float_equal(m.cpu_peak->peak_bytes, 1 * GIB, 0);
    assert_null(m.oom);
    run_fini(&run);
}

static void test_run_report_json_hand_values(void **state)
{
    (void)state;
    Run run;
    run_build(&run, 8 * GIB);
    cJSON *root = capture_json(&run.report);

    assert_string_equal(at(root, "command")->valuestring, "run");
    /* the estimate's inputs are shared with `zerosim estimate` */
    assert_string_equal(at(root, "model.name")->valuestring, "gpt2-1.5b");
    assert_num(root, "cluster.gpus", 1);
    assert_num(root, "config.zero_stage", 2);
    assert_num(root, "config.seq_len", 1024);
    assert_string_equal(cJSON_GetArrayItem(at(root, "config.defaults_applied"), 0)->valuestring,
                        "--schedule deepspeed (test)");

    assert_string_equal(at(root, "simulation.schedule")->valuestring, "deepspeed");
    assert_string_equal(at(root, "simulation.collective_algorithm")->valuestring, "ring");
    assert_string_equal(at(root, "simulation.mode")->valuestring, "full");
    assert_num(root, "simulation.steps", 2);
    assert_num(root, "simulation.simulated_gpus", 1);

    /* the GPU at its peak (2 s): 1 + 0.5 + 2 GiB of model states and 3 GiB of activations */
    assert_num(root, "memory.gpu_model_states_bytes", 3.5 * GIB);
    assert_num(root, "memory.gpu_breakdown_bytes.params", 1 * GIB);
    assert_num(root, "memory.gpu_breakdown_bytes.grads", 0.5 * GIB);
    assert_num(root, "memory.gpu_breakdown_bytes.optimizer", 2 * GIB);
    assert_num(root, "memory.gpu_breakdown_bytes.activations", 3 * GIB);
    assert_num(root, "memory.gpu_breakdown_bytes.buffers", 0);
    assert_num(root, "memory.gpu_peak_bytes", 6.5 * GIB);
    assert_num(root, "memory.gpu_peak_time_s", 2);
    assert_num(root, "memory.gpu_peak_rank", 0);
    assert_num(root, "memory.gpu_capacity_bytes", 8 * GIB);
    assert_num(root, "memory.cpu_peak_bytes", 1 * GIB);
    assert_num(root, "memory.cpu.peak_time_s", 4);
    assert_num(root, "memory.cpu.capacity_bytes", 64 * GIB);
    assert_num(root, "memory.nvme_peak_bytes", 0);
    assert_true(cJSON_IsTrue(at(root, "memory.fits")));
    assert_true(cJSON_IsNull(at(root, "memory.oom")));
    assert_num(root, "memory.estimate_gpu_peak_bytes", (double)run.est.gpu_peak);
    assert_true(cJSON_IsObject(at(root, "memory.deepspeed_estimator"))); /* stage 2 */

    /* per step: the 4 GB all-gathered over two steps, 6 GB over PCIe */
    assert_num(root, "comm.bytes_per_rank.all_gather", 2e9);
    assert_num(root, "comm.bytes_per_rank.all_reduce", 0);
    assert_num(root, "comm.bytes_per_rank.total", 2e9);
    assert_num(root, "comm.bytes_per_link_class.pcie", 3e9);
    assert_num(root, "comm.bytes_per_link_class.nvlink", 0);
    assert_num(root, "comm.estimate_total_bytes", (double)run.est.comm.total);

    /* the breakdown of rank 0 per step: gaps [1,3] (all-gather) and [4,6] (host Adam) */
    assert_num(root, "time.step_s", 3.5);
    assert_num(root, "time.compute_s", 1);
    assert_num(root, "time.optimizer_s", 0.5);
    assert_num(root, "time.exposed_comm_s", 1);
    assert_num(root, "time.exposed_comm_by_collective_s.all_gather", 1);
    assert_num(root, "time.exposed_comm_by_collective_s.all_reduce", 0);
    assert_num(root, "time.exposed_cpu_optimizer_s", 1);
    assert_num(root, "time.exposed_h2d_s", 0);
    assert_num(root, "time.busy_s.cpu_optimizer", 1);
    assert_num(root, "time.busy_s.h2d", 0);
    assert_num(root, "time.idle_s", 0);
    assert_num(root, "time.compute_bound_step_s", run.est.compute_bound_step_s);

    assert_num(root, "throughput.tokens_per_s", 4.0 * 1024 / 3.5);
    assert_num(root, "throughput.mfu", run.est.flops.model / 3.5 / 835.5e12);
    assert_num(root, "sim.ops", N_OPS);
    assert_num(root, "sim.events", 1234);
    assert_num(root, "sim.wall_s", 0.5);
    assert_num(root, "sim.build_wall_s", 0.25);
    cJSON_Delete(root);
    run_fini(&run);
}

static void test_run_report_text_hand_values(void **state)
{
    (void)state;
    Run run;
    run_build(&run, 8 * GIB);
    char *text = capture(run_report_text, &run.report);
    static const char head[] =
        "zerosim run: gpt2-1.5b with ZeRO-2 on h200-single, 1 GPUs (1 node x 1)\n";
    if (strncmp(text, head, sizeof head - 1) != 0)
        fail_msg("expected the report to start with \"%s\"; it is:\n%s", head, text);
    assert_contains(text, "schedule deepspeed, collectives ring (nccl model, NCCL 2.30), 2 steps; batch 4 = "
                          "micro 4 x "
                          "accumulation 1 x 1 GPUs, sequence 1024, recompute none, bf16\n\n");
    assert_contains(text, "step time        3.5000 s");
    assert_contains(text, "throughput       1170 tokens/s"); /* 4096 / 3.5 = 1170.3 */
    /* per step, with the share of 3.5 s; zero categories are left out */
    assert_contains(text, "  compute (forward, backward)            1.0000    28.6%\n");
    assert_contains(text, "  optimizer step                         0.5000    14.3%\n");
    assert_contains(text, "  exposed all-gather                     1.0000    28.6%\n");
    assert_contains(text, "  exposed CPU optimizer                  1.0000    28.6%\n");
    assert_null(strstr(text, "exposed all-reduce"));
    assert_null(strstr(text, "  idle"));
    assert_contains(text, "CPU optimizer 1.000 / 1.000\n");
    assert_contains(text, "  parameters                               1.00\n");
    assert_contains(text, "  gradients                                0.50\n");
    assert_contains(text, "  optimizer states                         2.00\n");
    assert_contains(text, "  activations                              3.00\n");
    assert_contains(text, "  = allocated peak                         6.50   at 2.0000 s on rank 0");
    assert_contains(text, "  = device peak (reserved + outside)       6.50   of 8.00 with 0.00 kept "
                          "free (--headroom)\n");
    assert_contains(text, "  host memory peak                         1.00   host per node");
    assert_null(strstr(text, "NVMe peak"));
    /* the verdict first: 8 - 6.5 = 1.5 GiB to spare, 1 of 64 GiB of host memory */
    assert_contains(text, "bf16\n\nverdict      fits: 6.50 GiB per GPU of 8.00 usable, 1.50 "
                          "to spare; host 1.00 of 64.00 GiB per node\n\n"
                          "step time");
    assert_contains(text, "  all-gather                               2.00\n");
    assert_contains(text, "  over pcie                                3.00\n");
    assert_null(strstr(text, "  all-reduce "));
    assert_contains(text, "simulation: full mode, 1 of 1 GPUs simulated, 5 ops, 1234 activities "
                          "in 0.50 s (graph built in 0.25 s, 2468 activities/s)\n");
    free(text);
    run_fini(&run);
}

/* With 6 GiB of HBM the 6.5 GiB peak at 2 s is the first out-of-memory. */
static void test_run_report_out_of_memory(void **state)
{
    (void)state;
    Run run;
    run_build(&run, 6 * GIB);
    cJSON *root = capture_json(&run.report);
    assert_true(cJSON_IsFalse(at(root, "memory.fits")));
    assert_string_equal(at(root, "memory.oom.space")->valuestring, "gpu");
    assert_num(root, "memory.oom.rank", 0);
    assert_num(root, "memory.oom.time_s", 2);
    assert_num(root, "memory.oom.bytes", 6.5 * GIB);
    assert_num(root, "memory.oom.capacity_bytes", 6 * GIB);
    assert_true(cJSON_IsFalse(at(root, "verdict.fits")));
    assert_string_equal(at(root, "verdict.runs_out")->valuestring, "gpu");
    assert_num(root, "verdict.rank", 0);
    assert_num(root, "verdict.time_s", 2);
    assert_num(root, "verdict.needed_bytes", 6.5 * GIB);
    assert_num(root, "verdict.usable_bytes", 6 * GIB);
    assert_num(root, "verdict.short_bytes", 0.5 * GIB);
    assert_true(cJSON_IsNull(at(root, "verdict.hint")));
    cJSON_Delete(root);
    char *text = capture(run_report_text, &run.report);
    /* 6.5 - 6 = 0.5 GiB short: 1 + 0.5 + 2 GiB of model states, 3 of activations */
    assert_contains(text, "\n\nverdict      DOES NOT FIT: GPU memory runs out on rank 0 (first "
                          "over at 2.0000 s): 6.50 GiB needed, 6.00 usable, 0.50 short; model "
                          "states 3.50, activations 3.00, buffers, copies and runtime 0.00\n");
    assert_null(strstr(text, "verdict      fits"));
    assert_null(strstr(text, "hint ")); /* no search was run */
    free(text);
    run_fini(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_report_metrics_hand_values),
        cmocka_unit_test(test_run_report_json_hand_values),
        cmocka_unit_test(test_run_report_text_hand_values),
        cmocka_unit_test(test_run_report_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
