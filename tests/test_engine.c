/*
 * test_engine.c - the SimGrid engine against hand-computed times and peaks.
 *
 * SimGrid holds global state and takes one platform per process, so each case runs in a
 * forked child that builds its platform and graphs, runs them and sends its measurements back
 * through a pipe; the parent makes the assertions. Expected values come from the link
 * parameters: a flow of S bytes over a route takes latency + S / bottleneck bandwidth (CM02),
 * a ring all-reduce 2(N-1)/N S/B + 2(N-1) alpha, flows sharing a link split it evenly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/platform_xml.h"
#include "isolated.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int load_shipped(Platform *p, const char *name, uint64_t gpus, Err *err)
{
    return platform_load(p, name, ZEROSIM_SOURCE_DIR, err) || platform_resize(p, gpus, 0, err);
}

/* Two nodes of two GPUs behind one PCIe switch and one NIC each: every bandwidth is chosen so
 * that one link is clearly the bottleneck of each test route. */
static const char *const tiny_platform =
    "{\"name\": \"tiny\", \"nodes\": 2, \"gpus_per_node\": 2,"
    " \"gpu\": {\"model\": \"T\", \"fp32_flops_per_s\": 1e13, \"fp16_flops_per_s\": 1e14,"
    "   \"bf16_flops_per_s\": 1e14, \"gemm_efficiency\": 0.5, \"hbm_bytes\": 17179869184,"
    "   \"hbm_bw_bytes_per_s\": 1e12, \"matmul_flops_per_s\": 9e13, \"sm_count\": 100, "
    "\"gemm_fixed_s\": 0,"
    "\"gemm_wave_s\": 0,"
    "   \"memory_bw_efficiency\": 0.9, \"kernel_launch_s\": 4e-6},"
    " \"pcie\": {\"gpu_link\": {\"bw_bytes_per_s\": %s, \"latency_s\": 1e-6},"
    "   \"gpus_per_switch\": 2, \"nics_per_switch\": 1,"
    "   \"switch_uplink\": {\"bw_bytes_per_s\": 1e11, \"latency_s\": 1e-6}},"
    " \"cpu\": {\"model\": \"C\", \"cores\": 10, \"dram_bytes\": 1099511627776,"
    "   \"dram_bw_bytes_per_s\": 1e11, \"adam_params_per_s_per_core\": 1e8, \"param_host_s\": 2e-5},"
    " \"nic\": {\"per_node\": 1, \"bw_bytes_per_s\": %s, \"latency_s\": 2e-6},"
    " \"fabric\": {\"topology\": \"fat_tree\", \"oversubscription\": 1, \"latency_s\": 2e-6},"
    " \"nccl\": {\"arch\": \"ampere\", \"cpu_vendor\": \"intel\", \"channels\": 2}}";

static int load_tiny(Platform *p, const char *pcie_bw, const char *nic_bw, Err *err)
{
    char text[2048];
    snprintf(text, sizeof text, tiny_platform, pcie_bw, nic_bw);
    return platform_parse(p, "tiny.json", text, strlen(text), err);
}

static Graph *finalized(Graph *g, Probe *probe)
{
    Err err = {0};
    if (graph_finalize(g, &err)) {
        probe_fail(probe, &err);
        graph_destroy(g);
        return NULL;
    }
    return g;
}

static double run_graph(Graph *g, bool stepwise, Probe *probe)
{
    Err err = {0};
    EngineOptions opts = {
        .algo = COLL_ALGO_AUTO, .comm_model = COMM_MODEL_IDEAL, .is_stepwise = stepwise};
    EngineResult r;
    if (engine_run(g, &opts, &r, &err)) {
        probe_fail(probe, &err);
        return -1;
    }
    double t = r.makespan_s;
    engine_result_fini(&r);
    return t;
}

/* ---- a copy over one route: latency + S / bandwidth ---- */

static void scenario_copy(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_shipped(&p, "dgx-a100-80g", 1, &err) || engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    const double bytes = 3e9;
    Graph *g = graph_create(1);
    graph_copy(g, 0, STREAM_H2D, COPY_H2D, bytes, 0);
    if (!finalized(g, probe))
        return;
    probe_record(probe, run_graph(g, false, probe));
    graph_destroy(g);
    double bw = fmin(p.pcie.gpu_link.bw_bytes_per_s, p.pcie.switch_uplink.bw_bytes_per_s);
    probe_record(probe, p.pcie.gpu_link.latency_s + p.pcie.switch_uplink.latency_s + bytes / bw);
}

static void test_engine_copy_takes_latency_plus_size_over_bandwidth(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_copy);
    assert_int_equal(pr.n, 2);
    assert_close(pr.v[0], pr.v[1], 1e-3);
}

/* ---- ring collectives on one NVSwitch node ---- */

static void scenario_ring(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_shipped(&p, "dgx-a100-80g", 8, &err) || engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    const uint32_t n = 8;
    const double bytes = 1e9;
    uint32_t members[8];
    for (uint32_t i = 0; i < n; i++)
        members[i] = i;
    for (int kind = COLL_ALL_REDUCE; kind <= COLL_REDUCE_SCATTER; kind++) {
        Graph *g = graph_create(n);
        uint32_t group = graph_add_group(g, members, n);
        graph_collective(g, (CollectiveKind)kind, group, STREAM_REDUCE, bytes, 0, 0, NULL);
        if (!finalized(g, probe))
            return;
        probe_record(probe, run_graph(g, false, probe));
        graph_destroy(g);
        /* alpha: one NVLink hop, two switch ports of half the platform latency each */
        double share = (double)(n - 1) / n, alpha = p.nvlink.latency_s;
        double b = p.nvlink.bw_bytes_per_s;
        probe_record(probe, kind == COLL_ALL_REDUCE ? 2 * share * bytes / b + 2 * (n - 1) * alpha
                                              : share * bytes / b + (n - 1) * alpha);
    }
}

static void test_engine_ring_matches_alpha_beta_formula(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_ring);
    assert_int_equal(pr.n, 6);
    for (int i = 0; i < 6; i += 2)
        assert_close(pr.v[i], pr.v[i + 1], 0.01);
}

/* ---- contention: two flows on one NIC; a copy and a ring on one PCIe link ---- */

/* A two-member broadcast from `from` to `to` is exactly one flow. */
static void flow(Graph *g, uint32_t from, uint32_t to, double bytes)
{
    uint32_t members[2] = {from, to};
    uint32_t group = graph_add_group(g, members, 2);
    graph_collective(g, COLL_BROADCAST, group, STREAM_GATHER, bytes, from, 0, NULL);
}

static void scenario_nic_sharing(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_tiny(&p, "1e12", "1e10", &err) || engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    const double bytes = 1e9;
    Graph *alone = graph_create(4);
    flow(alone, 0, 2, bytes);
    Graph *shared = graph_create(4);
    flow(shared, 0, 2, bytes);
    flow(shared, 1, 3, bytes);
    if (!finalized(alone, probe) || !finalized(shared, probe))
        return;
    probe_record(probe, run_graph(alone, false, probe));
    probe_record(probe, run_graph(shared, false, probe));
    graph_destroy(alone);
    graph_destroy(shared);
}

static void test_engine_two_flows_sharing_a_nic_take_twice_as_long(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_nic_sharing);
    assert_int_equal(pr.n, 2);
    assert_true(pr.v[0] > 0.1); /* 1 GB at 10 GB/s */
    assert_close(pr.v[1], 2 * pr.v[0], 0.01);
}

static void scenario_pcie_sharing(Probe *probe)
{
    Platform p;
    Err err = {0};
    /* GPU lanes of 10 GB/s are the bottleneck; the NIC is ten times faster */
    if (load_tiny(&p, "1e10", "1e11", &err) || engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    const double bytes = 1e9;
    Graph *copy = graph_create(4);
    OpId c = graph_copy(copy, 0, STREAM_H2D, COPY_H2D, bytes, 0);
    (void)c;
    Graph *ring = graph_create(4);
    flow(ring, 2, 0, bytes); /* into GPU 0 over its lanes, like a ring's incoming edge */
    Graph *both = graph_create(4);
    OpId h2d = graph_copy(both, 0, STREAM_H2D, COPY_H2D, bytes, 0);
    (void)h2d;
    flow(both, 2, 0, bytes);
    if (!finalized(copy, probe) || !finalized(ring, probe) || !finalized(both, probe))
        return;
    probe_record(probe, run_graph(copy, false, probe));
    probe_record(probe, run_graph(ring, false, probe));
    probe_record(probe, run_graph(both, false, probe));
    graph_destroy(copy);
    graph_destroy(ring);
    graph_destroy(both);
}

static void test_engine_copy_and_ring_sharing_pcie_slow_each_other(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_pcie_sharing);
    assert_int_equal(pr.n, 3);
    /* Alone each moves 1 GB at 10 GB/s; together they split GPU 0's inbound lanes. */
    assert_close(pr.v[0], 0.1, 0.01);
    assert_close(pr.v[1], 0.1, 0.01);
    assert_close(pr.v[2], 0.2, 0.01);
}

/* ---- fluid and stepwise modes agree on idle rings ---- */

static void scenario_fluid_vs_stepwise(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_shipped(&p, "dgx2-v100", 16, &err) || engine_init(&p, PRECISION_FP16, &err))
        return probe_fail(probe, &err);
    const uint32_t sizes[] = {2, 4, 8, 16};
    uint32_t members[16];
    for (uint32_t i = 0; i < 16; i++)
        members[i] = i;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (int kind = COLL_ALL_REDUCE; kind <= COLL_BROADCAST; kind++) {
            Graph *g = graph_create(16);
            uint32_t group = graph_add_group(g, members, sizes[k]);
            graph_collective(g, (CollectiveKind)kind, group, STREAM_REDUCE, 256e6, 0, 0, NULL);
            if (!finalized(g, probe))
                return;
            probe_record(probe, run_graph(g, false, probe));
            probe_record(probe, run_graph(g, true, probe));
            graph_destroy(g);
        }
    }
}

static void test_engine_fluid_and_stepwise_agree_within_2_percent(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_fluid_vs_stepwise);
    assert_int_equal(pr.n, 32);
    for (int i = 0; i < pr.n; i += 2)
        assert_close(pr.v[i + 1], pr.v[i], 0.02);
}

/* ---- a hand-built step: two ranks, one layer ---- */

#define LAYER_FLOPS 2e12  /* forward FLOPs of the layer */
#define GRAD_BYTES 4e8    /* gradients all-reduced after backward */
#define PARAM_BYTES 1e9
#define ACT_BYTES 3e9

static void scenario_two_rank_layer(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_shipped(&p, "dgx-a100-80g", 2, &err) || engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    Graph *g = graph_create(2);
    uint32_t members[2] = {0, 1};
    uint32_t group = graph_add_group(g, members, 2);
    OpId bwd[2], ar[2];
    uint32_t params[2], acts[2];
    for (uint32_t r = 0; r < 2; r++) {
        graph_alloc(g, r, STREAM_COMPUTE, MEM_GPU, MEM_PARAMS, PARAM_BYTES, &params[r]);
        graph_alloc(g, r, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS, ACT_BYTES, &acts[r]);
        graph_compute(g, r, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, LAYER_FLOPS, graph_label(g, "fwd"));
        bwd[r] = graph_compute(g, r, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_BACKWARD, 2 * LAYER_FLOPS,
                               graph_label(g, "bwd"));
        graph_free(g, r, STREAM_COMPUTE, acts[r]);
    }
    graph_collective(g, COLL_ALL_REDUCE, group, STREAM_REDUCE, GRAD_BYTES, 0,
                     graph_label(g, "grads"), ar);
    for (uint32_t r = 0; r < 2; r++) {
        graph_depend(g, bwd[r], ar[r]);
        OpId f = graph_free(g, r, STREAM_REDUCE, params[r]);
        (void)f;
    }
    if (!finalized(g, probe))
        return;
    const bool traced[2] = {true, true}; /* per-op link bytes are kept for traces */
    EngineOptions opts = {.algo = COLL_ALGO_AUTO,
                          .comm_model = COMM_MODEL_IDEAL,
                          .is_stepwise = false,
                          .traced = traced};
    EngineResult res;
    if (engine_run(g, &opts, &res, &err))
        return probe_fail(probe, &err);
    const MemAccount *gpu0 = memory_account(res.memory, 0, MEM_GPU);
    probe_record(probe, res.makespan_s);
    double speed = p.gpu.bf16_flops_per_s * p.gpu.gemm_efficiency;
    /* 2 ranks: the ring all-reduce sends 2(N-1)/N = 1 x the buffer in 2(N-1) = 2 steps */
    probe_record(probe, 3 * LAYER_FLOPS / speed + GRAD_BYTES / p.nvlink.bw_bytes_per_s +
                      2 * p.nvlink.latency_s);
    probe_record(probe, gpu0->peak_bytes);
    probe_record(probe, gpu0->at_peak[MEM_PARAMS]);
    probe_record(probe, gpu0->at_peak[MEM_ACTIVATIONS]);
    probe_record(probe, gpu0->current_bytes);
    probe_record(probe, res.link_bytes[0][LINK_NVLINK]);
    probe_record(probe, (double)res.n_activities);
    probe_record(probe, res.op_link_bytes ? res.op_link_bytes[ar[0]][LINK_NVLINK] : -1.0);
    probe_record(probe, res.op_link_bytes ? res.op_link_bytes[bwd[0]][LINK_NVLINK] : -1.0);
    engine_result_fini(&res);
    graph_destroy(g);
}

static void test_engine_two_rank_layer_matches_hand_computation(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_two_rank_layer);
    assert_int_equal(pr.n, 10);
    assert_close(pr.v[0], pr.v[1], 1e-6);
    assert_close(pr.v[2], PARAM_BYTES + ACT_BYTES, 1e-12);
    assert_close(pr.v[3], PARAM_BYTES, 1e-12);
    assert_close(pr.v[4], ACT_BYTES, 1e-12);
    assert_true(pr.v[5] == 0.0);          /* everything freed */
    assert_close(pr.v[6], GRAD_BYTES, 1e-12); /* 2(N-1)/N x S with N = 2 */
    assert_close(pr.v[7], 2 * 2 + 2, 1e-12);  /* 4 executions + 2 ring flows */
    assert_close(pr.v[8], GRAD_BYTES, 1e-12); /* the all-reduce op sent all of it on NVLink */
    assert_true(pr.v[9] == 0.0);              /* the backward kernels sent nothing */
}

/* ---- NCCL kernels take their share of the GPU from concurrent compute ---- */

static void scenario_interference(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_tiny(&p, "1e12", "1e9", &err))
        return probe_fail(probe, &err);
    p.gpu.comm_sm_fraction = 0.25;
    if (engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    const double speed = p.gpu.bf16_flops_per_s * p.gpu.gemm_efficiency;
    Graph *g = graph_create(4);
    OpId c = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, speed * 1.0, 0); /* 1 s alone */
    flow(g, 0, 2, 4e9); /* 4 s over the 1 GB/s NIC, overlapping all of the compute */
    if (!finalized(g, probe))
        return;
    EngineOptions opts = {.algo = COLL_ALGO_RING, .comm_model = COMM_MODEL_IDEAL};
    EngineResult r;
    if (engine_run(g, &opts, &r, &err))
        return probe_fail(probe, &err);
    probe_record(probe, r.op_end_s[c] - r.op_start_s[c]);
    engine_result_fini(&r);
    graph_destroy(g);
}

static void test_engine_collective_kernels_slow_concurrent_compute(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_interference);
    assert_int_equal(pr.n, 1);
    assert_close(pr.v[0], 1.0 / 0.75, 1e-6); /* the compute gets 1 - 0.25 of the GPU */
}

/* Two collectives at once on one GPU (a gather and a reduce, 4e9 bytes each sharing the NIC:
 * 8 s): the compute beside them gets 1 - 2 x 0.25 of the GPU (pstate 2). */
static void scenario_interference_twice(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_tiny(&p, "1e12", "1e9", &err))
        return probe_fail(probe, &err);
    p.gpu.comm_sm_fraction = 0.25;
    if (engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    const double speed = p.gpu.bf16_flops_per_s * p.gpu.gemm_efficiency;
    Graph *g = graph_create(4);
    OpId c = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, speed * 1.0, 0);
    flow(g, 0, 2, 4e9);
    uint32_t members[2] = {0, 2};
    graph_collective(g, COLL_BROADCAST, graph_add_group(g, members, 2), STREAM_REDUCE, 4e9, 0, 0,
                     NULL);
    if (!finalized(g, probe))
        return;
    EngineOptions opts = {.algo = COLL_ALGO_RING, .comm_model = COMM_MODEL_IDEAL};
    EngineResult r;
    if (engine_run(g, &opts, &r, &err))
        return probe_fail(probe, &err);
    probe_record(probe, r.op_end_s[c] - r.op_start_s[c]);
    engine_result_fini(&r);
    graph_destroy(g);
}

static void test_engine_two_collectives_slow_compute_twice(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_interference_twice);
    assert_int_equal(pr.n, 1);
    assert_close(pr.v[0], 1.0 / 0.5, 1e-6);
}

/* The GPU's pstates are what max-min gives one compute beside k kernel sets bounded to the
 * share: speed - k x bound while that exceeds the fair share speed / (k + 1), else that. */
static void test_engine_kernel_pstates_follow_maxmin(void **state)
{
    (void)state;
    assert_true(platform_xml_gpu_pstate_speed(100.0, 0.15, 0) == 100.0);
    assert_close(platform_xml_gpu_pstate_speed(100.0, 0.15, 1), 85.0, 1e-12);
    assert_close(platform_xml_gpu_pstate_speed(100.0, 0.15, 2), 70.0, 1e-12);
    assert_close(platform_xml_gpu_pstate_speed(100.0, 0.15, 5), 25.0, 1e-12); /* 15 < 16.7 */
    assert_close(platform_xml_gpu_pstate_speed(100.0, 0.4, 1), 60.0, 1e-12);
    assert_close(platform_xml_gpu_pstate_speed(100.0, 0.4, 2), 100.0 / 3.0, 1e-12); /* fair */
    assert_true(platform_xml_gpu_pstate_speed(100.0, 0.0, 3) == 100.0);
}

/* ---- a collective whose members wait on each other is reported, not hung ---- */

static void scenario_deadlock(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_shipped(&p, "dgx-a100-80g", 2, &err) || engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    Graph *g = graph_create(2);
    uint32_t members[2] = {0, 1};
    uint32_t group = graph_add_group(g, members, 2);
    OpId x[2], y[2];
    /* rank 0 runs X then Y, rank 1 must run Y before X: neither can finish */
    graph_collective(g, COLL_ALL_REDUCE, group, STREAM_GATHER, 1e6, 0, 0, x);
    graph_collective(g, COLL_ALL_REDUCE, group, STREAM_REDUCE, 1e6, 0, 0, y);
    graph_depend(g, y[1], x[1]);
    graph_depend(g, x[0], y[0]);
    if (!finalized(g, probe))
        return;
    EngineOptions opts = {
        .algo = COLL_ALGO_AUTO, .comm_model = COMM_MODEL_IDEAL, .is_stepwise = false};
    EngineResult res;
    probe_record(probe, engine_run(g, &opts, &res, &err));
    snprintf(probe->err, sizeof probe->err, "%s", err.msg);
    engine_result_fini(&res);
    graph_destroy(g);
}

static void test_engine_deadlock_is_reported(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_deadlock);
    assert_int_equal(pr.n, 1);
    assert_true(pr.v[0] == -1);
    assert_non_null(strstr(pr.err, "engine: deadlock"));
}

/* ---- NCCL's model: latency and protocol bound on one DGX A100 node ---- */

/* All-reduces over 8 A100s (12 channels, 230 GB/s): 8 B and 64 KiB run Ring/LL, whose
 * latency is 6.6 + 14 x 0.6 = 15.0 us and whose bandwidth is llMaxBw 87.7 GB/s x 8/14 (the
 * flows alone would take 2 x 7/8 x 64 KiB / 230 GB/s = 0.5 us, LL's bound 1.31 us); 1 GB runs
 * Ring/Simple: 8.4 + 14 x 3.4 = 56 us plus the flows at the NVLink rate. */
static void scenario_nccl(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load_shipped(&p, "dgx-a100-80g", 8, &err) || engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    uint32_t members[8];
    for (uint32_t i = 0; i < 8; i++)
        members[i] = i;
    const double sizes[] = {8, 65536, 1e9};
    const double ll_algbw = 87.7e9 * 8 / 14;
    const double want[] = {15.0e-6 + 8 / ll_algbw, 15.0e-6 + 65536 / ll_algbw,
                           56.0e-6 + 2 * 7.0 / 8 * 1e9 / p.nvlink.bw_bytes_per_s};
    for (int i = 0; i < 3; i++) {
        Graph *g = graph_create(8);
        uint32_t group = graph_add_group(g, members, 8);
        graph_collective(g, COLL_ALL_REDUCE, group, STREAM_REDUCE, sizes[i], 0, 0, NULL);
        if (!finalized(g, probe))
            return;
        EngineOptions opts = {.algo = COLL_ALGO_AUTO};
        EngineResult r;
        if (engine_run(g, &opts, &r, &err))
            return probe_fail(probe, &err);
        probe_record(probe, r.makespan_s);
        probe_record(probe, want[i]);
        probe_record(probe, strcmp(r.coll_info[0].proto, i < 2 ? "LL" : "Simple") == 0 &&
                                strcmp(r.coll_info[0].algo, "ring") == 0);
        engine_result_fini(&r);
        graph_destroy(g);
    }
}

static void test_engine_nccl_model_latency_and_protocol_bound(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_nccl);
    assert_int_equal(pr.n, 9);
    for (int i = 0; i < 9; i += 3) {
        assert_close(pr.v[i], pr.v[i + 1], 0.002);
        assert_true(pr.v[i + 2] == 1.0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_copy_takes_latency_plus_size_over_bandwidth),
        cmocka_unit_test(test_engine_ring_matches_alpha_beta_formula),
        cmocka_unit_test(test_engine_two_flows_sharing_a_nic_take_twice_as_long),
        cmocka_unit_test(test_engine_copy_and_ring_sharing_pcie_slow_each_other),
        cmocka_unit_test(test_engine_fluid_and_stepwise_agree_within_2_percent),
        cmocka_unit_test(test_engine_two_rank_layer_matches_hand_computation),
        cmocka_unit_test(test_engine_collective_kernels_slow_concurrent_compute),
        cmocka_unit_test(test_engine_two_collectives_slow_compute_twice),
        cmocka_unit_test(test_engine_kernel_pstates_follow_maxmin),
        cmocka_unit_test(test_engine_deadlock_is_reported),
        cmocka_unit_test(test_engine_nccl_model_latency_and_protocol_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
