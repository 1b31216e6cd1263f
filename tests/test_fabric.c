/*
 * test_fabric.c - the fabric as built (leaf groups, spine tiers, pods, rails) against the
 * per-node model that symmetric mode simulates, and stragglers.
 *
 * Where full and symmetric mode must agree (a non-blocking fabric) they agree to the
 * microsecond; where they must differ they differ by what the shared links take, computed by
 * hand from the link rates. Every case is a ring all-gather of S bytes over the whole cluster
 * under the ideal comm model (steps x route latency + volume / bottleneck rate), so the
 * expected times are closed forms: each member sends V = (n-1)/n S to its successor. Each
 * scenario runs in its own child process (SimGrid takes one platform per process).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "isolated.h"
#include "schedule/symmetric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* G GPUs per node, each with its own NIC of 10 GB/s behind one PCIe switch; NVLink and PCIe
 * are 100x faster, so the NICs and the fabric are the only bottlenecks. %s: the fabric. */
static const char *const template =
    "{\"name\": \"fab\", \"nodes\": %u, \"gpus_per_node\": %u,"
    " \"gpu\": {\"model\": \"T\", \"fp32_flops_per_s\": 1e13, \"fp16_flops_per_s\": 1e14,"
    "   \"bf16_flops_per_s\": 1e14, \"gemm_efficiency\": 0.5, \"hbm_bytes\": 17179869184,"
    "   \"hbm_bw_bytes_per_s\": 1e12, \"matmul_flops_per_s\": 9e13, \"sm_count\": 100, "
    "\"gemm_fixed_s\": 0,"
    "\"gemm_wave_s\": 0,"
    "   \"memory_bw_efficiency\": 0.9, \"kernel_launch_s\": 4e-6},"
    " \"nvlink\": {\"bw_bytes_per_s\": 1e12, \"latency_s\": 1e-6, \"nvswitch\": true},"
    " \"pcie\": {\"gpu_link\": {\"bw_bytes_per_s\": 1e12, \"latency_s\": 1e-6},"
    "   \"gpus_per_switch\": %u, \"nics_per_switch\": %u,"
    "   \"switch_uplink\": {\"bw_bytes_per_s\": 1e12, \"latency_s\": 1e-6}},"
    " \"cpu\": {\"model\": \"C\", \"cores\": 10, \"dram_bytes\": 1099511627776,"
    "   \"dram_bw_bytes_per_s\": 1e11, \"adam_params_per_s_per_core\": 1e8, \"param_host_s\": 2e-5},"
    " \"nic\": {\"per_node\": %u, \"bw_bytes_per_s\": 1e10, \"latency_s\": 2e-6},"
    " \"fabric\": {%s, \"latency_s\": 2e-6},"
    " \"nccl\": {\"arch\": \"ampere\", \"cpu_vendor\": \"intel\", \"channels\": 2}}";

#define NIC_BW 1e10
#define BYTES 8e9
/* GPU to GPU across nodes: PCIe lanes twice, NIC and fabric latency once each */
#define INTER_LATENCY_S (2 * 1e-6 + 2e-6 + 2e-6)

static int load(Platform *p, unsigned nodes, unsigned g, const char *fabric, Err *err)
{
    char text[4096];
    snprintf(text, sizeof text, template, nodes, g, g, g, g, fabric);
    return platform_parse(p, "fab.json", text, strlen(text), err);
}

/* The all-gather over all n_ranks ranks, standing for n_logical (symmetric mode). */
static double all_gather(uint32_t n_ranks, uint32_t n_logical, CommModel model, Probe *probe)
{
    Err err = {0};
    Graph *g = graph_create(n_ranks);
    uint32_t *members = malloc(n_ranks * sizeof *members);
    for (uint32_t r = 0; r < n_ranks; r++)
        members[r] = r;
    uint32_t group = graph_add_group(g, members, n_ranks);
    free(members);
    uint32_t c = graph_collective(g, COLL_ALL_GATHER, group, STREAM_GATHER, BYTES, 0, 0, NULL);
    if (n_logical > n_ranks)
        graph_collective_set_logical(g, c, n_logical);
    double t = -1;
    EngineOptions opts = {.algo = COLL_ALGO_RING, .comm_model = model};
    EngineResult r;
    if (graph_finalize(g, &err) || engine_run(g, &opts, &r, &err)) {
        probe_fail(probe, &err);
    } else {
        t = r.makespan_s;
        engine_result_fini(&r);
    }
    graph_destroy(g);
    return t;
}

/* Runs the all-gather on platform p in full mode, or in symmetric mode as `zerosim run` does
 * (symmetric_choose cuts it to two nodes on the per-node fabric). */
static void run_on(Platform *p, bool is_symmetric, CommModel model, Probe *probe)
{
    Err err = {0};
    Platform simulated = *p;
    ScheduleOptions sched = {0};
    if (is_symmetric && !symmetric_choose(p, SIM_MODE_SYMMETRIC, &simulated, &sched)) {
        err_set(&err, "symmetric_choose refused %llu nodes", (unsigned long long)p->n_nodes);
        return probe_fail(probe, &err);
    }
    if (engine_init(&simulated, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    probe_record(probe, all_gather((uint32_t)platform_n_gpus(&simulated),
                                   (uint32_t)platform_n_gpus(p), model, probe));
}

/* ---- a 4:1 two-tier fabric: core contention when the ring's hops cross pods ---- */

/* 8 nodes of 1 GPU, leaves of 2 nodes at 1:1, pods of 4 nodes whose uplinks into the core are
 * 4:1: a pod's spine tier carries 2 leaves x 20 GB/s = 40 GB/s, its core uplink 10 GB/s. */
static const char *const two_tier =
    "\"topology\": \"fat_tree\", \"oversubscription\": 1, \"nodes_per_leaf\": 2,"
    " \"spine\": {\"oversubscription\": 1, \"nodes_per_pod\": 4, \"core_oversubscription\": 4}";

static void two_tier_run(PlatformRingOrder order, bool is_symmetric, Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load(&p, 8, 1, two_tier, &err))
        return probe_fail(probe, &err);
    platform_set_ring_order(&p, order);
    run_on(&p, is_symmetric, COMM_MODEL_IDEAL, probe);
}

static void scenario_two_tier_packed(Probe *probe)
{
    two_tier_run(PLATFORM_RING_PACKED, false, probe);
}

static void scenario_two_tier_spread(Probe *probe)
{
    two_tier_run(PLATFORM_RING_SPREAD, false, probe);
}

static void scenario_two_tier_symmetric(Probe *probe)
{
    two_tier_run(PLATFORM_RING_PACKED, true, probe);
}

static double one(Scenario s)
{
    Probe pr = run_isolated(s);
    if (pr.err[0])
        fail_msg("%s", pr.err);
    assert_int_equal(pr.n, 1);
    return pr.v[0];
}

static void test_fabric_two_tier_core_contention_only_when_hops_cross_pods(void **state)
{
    (void)state;
    const double v = 7.0 / 8.0 * BYTES; /* each member's all-gather volume */
    const double alpha = 7 * INTER_LATENCY_S;
    double packed = one(scenario_two_tier_packed);
    double spread = one(scenario_two_tier_spread);
    double symmetric = one(scenario_two_tier_symmetric);
    /* Packed: nodes 0-3 in pod 0, 4-7 in pod 1; only the hops 3->4 and 7->0 cross the core,
     * one flow per uplink direction at the NIC's 10 GB/s: the NIC is the bottleneck. */
    assert_close(packed, alpha + v / NIC_BW, 1e-6);
    /* Spread: node i on leaf i mod 4, so pods {0,4,1,5} and {2,6,3,7}: the hops 1->2, 5->6
     * leave pod 0 together (3->4, 7->0 enter it), two flows on each 10 GB/s core uplink. */
    assert_close(spread, alpha + v / (NIC_BW / 2), 1e-6);
    /* Symmetric mode's per-node model knows no core: it agrees with packed, not spread. */
    assert_true(fabs(symmetric - packed) < 1e-6);
}

/* ---- cross-rail traffic on a rail-optimised leaf group with a 2:1 spine ---- */

/* 4 nodes of 2 GPUs and 2 NICs (2 rails) under one leaf group at 1:1 (uplink 4 x 2 x 10 =
 * 80 GB/s), a spine tier at 2:1 (40 GB/s). */
static const char *const rails = "\"topology\": \"rail_optimized\", \"oversubscription\": 1,"
                                 " \"nodes_per_leaf\": 4, \"spine\": {\"oversubscription\": 2}";

static void rails_run(PlatformRingOrder order, bool is_symmetric, Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load(&p, 4, 2, rails, &err))
        return probe_fail(probe, &err);
    platform_set_ring_order(&p, order);
    run_on(&p, is_symmetric, COMM_MODEL_IDEAL, probe);
}

static void scenario_rails_packed(Probe *probe)
{
    rails_run(PLATFORM_RING_PACKED, false, probe);
}

static void scenario_rails_cross_nic(Probe *probe)
{
    rails_run(PLATFORM_RING_CROSS_NIC, false, probe);
}

static void scenario_rails_symmetric(Probe *probe)
{
    rails_run(PLATFORM_RING_PACKED, true, probe);
}

static void test_fabric_cross_rail_hops_share_the_spine(void **state)
{
    (void)state;
    /* NCCL's rail-aligned channels: each member sends V/2 to the same GPU of the next node
     * (its NIC) and V/2 to the next GPU of its node (NVLink, 100x faster). */
    const double v = 7.0 / 8.0 * BYTES;
    const double alpha = 7 * INTER_LATENCY_S;
    double packed = one(scenario_rails_packed);
    double cross = one(scenario_rails_cross_nic);
    double symmetric = one(scenario_rails_symmetric);
    /* Rail-aligned: every hop stays on its rail's leaf, at the NIC's rate. */
    assert_close(packed, alpha + v / 2 / NIC_BW, 1e-6);
    /* Cross-NIC: all 8 inter-node flows climb to the 40 GB/s spine tier: 5 GB/s each. */
    assert_close(cross, alpha + v / 2 / (NIC_BW / 2), 1e-6);
    assert_true(fabs(symmetric - packed) < 1e-6);
}

/* ---- a non-blocking fabric: full and symmetric agree to the microsecond ---- */

static const char *const non_blocking =
    "\"topology\": \"rail_optimized\", \"oversubscription\": 1, \"nodes_per_leaf\": 2,"
    " \"spine\": {\"oversubscription\": 1, \"nodes_per_pod\": 4, \"core_oversubscription\": 1}";

static void non_blocking_run(PlatformRingOrder order, bool is_symmetric, Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load(&p, 8, 2, non_blocking, &err))
        return probe_fail(probe, &err);
    platform_set_ring_order(&p, order);
    run_on(&p, is_symmetric, COMM_MODEL_NCCL, probe);
}

static void scenario_non_blocking_packed(Probe *probe)
{
    non_blocking_run(PLATFORM_RING_PACKED, false, probe);
}

static void scenario_non_blocking_spread(Probe *probe)
{
    non_blocking_run(PLATFORM_RING_SPREAD, false, probe);
}

static void scenario_non_blocking_symmetric(Probe *probe)
{
    non_blocking_run(PLATFORM_RING_PACKED, true, probe);
}

static void test_fabric_non_blocking_full_and_symmetric_agree(void **state)
{
    (void)state;
    double packed = one(scenario_non_blocking_packed);
    double spread = one(scenario_non_blocking_spread);
    double symmetric = one(scenario_non_blocking_symmetric);
    /* each NIC carries half of 15/16 of 8 GB at 10 GB/s: 0.375 s, plus NCCL's latency */
    assert_true(packed > 0.375 && packed < 0.376);
    assert_true(fabs(packed - symmetric) < 1e-6);
    assert_true(fabs(spread - symmetric) < 1e-6);
}

/* ---- a straggler: its compute takes slowdown times longer ---- */

static void scenario_straggler(Probe *probe)
{
    Platform p;
    Err err = {0};
    if (load(&p, 2, 1, "\"topology\": \"fat_tree\", \"oversubscription\": 1", &err) ||
        platform_set_straggler(&p, true, 1, 2.5, "--straggler", &err) ||
        engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    const double flops = 5e13; /* 1 s at the GPU's 5e13 (peak 1e14 x efficiency 0.5) */
    for (uint32_t rank = 0; rank < 2; rank++) {
        Graph *g = graph_create(2);
        graph_compute(g, rank, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, flops, 0);
        EngineOptions opts = {.algo = COLL_ALGO_RING, .comm_model = COMM_MODEL_IDEAL};
        EngineResult r;
        if (graph_finalize(g, &err) || engine_run(g, &opts, &r, &err)) {
            graph_destroy(g);
            return probe_fail(probe, &err);
        }
        probe_record(probe, r.makespan_s);
        engine_result_fini(&r);
        graph_destroy(g);
    }
}

static void test_fabric_straggler_node_computes_slower(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_straggler);
    if (pr.err[0])
        fail_msg("%s", pr.err);
    assert_int_equal(pr.n, 2);
    assert_close(pr.v[0], 1.0, 1e-9);
    assert_close(pr.v[1], 2.5, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fabric_two_tier_core_contention_only_when_hops_cross_pods),
        cmocka_unit_test(test_fabric_cross_rail_hops_share_the_spine),
        cmocka_unit_test(test_fabric_non_blocking_full_and_symmetric_agree),
        cmocka_unit_test(test_fabric_straggler_node_computes_slower),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
