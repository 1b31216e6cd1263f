/*
 * test_collective.c - per-member collective plans (engine/collective.c), without SimGrid.
 *
 * Ring volumes are nccl-tests' bus factors: 2(n-1)/n of the buffer for an all-reduce in
 * 2(n-1) steps, (n-1)/n for all-gather and reduce-scatter in n-1 steps. Over whole nodes the
 * ring runs as g rail-aligned channels: 1/g of the volume crosses to the same GPU of the next
 * node, the rest stays on NVLink. The tree keeps the ring's volume across nodes with
 * 2 ceil(log2(n+1)) steps. Symmetric mode: two simulated nodes carry a larger ring's volume.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/collective.h"

#include "fixtures.h"

#include <math.h>
#include <string.h>

static void test_collective_plan_flat_ring_volumes(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 1);
    uint32_t m[8];
    fixture_members(m, 8);
    CollPlan plan;
    collective_plan(&p, COLL_ALL_REDUCE, COLL_ALGO_RING, false, m, 8, 8, 3, 1e9, 0, &plan);
    assert_int_equal(plan.n_phases, 1);
    assert_int_equal(plan.phase[0].steps, 14);
    assert_int_equal(plan.phase[0].flow[0].send_to, 4);
    assert_int_equal(plan.phase[0].flow[0].recv_from, 2);
    assert_true(fabs(plan.phase[0].flow[0].bytes - 2.0 * 7.0 / 8.0 * 1e9) < 1e-3);
    collective_plan(&p, COLL_ALL_GATHER, COLL_ALGO_RING, false, m, 8, 8, 7, 1e9, 0, &plan);
    assert_int_equal(plan.phase[0].steps, 7);
    assert_int_equal(plan.phase[0].flow[0].send_to, 0); /* wraps around */
    assert_true(fabs(plan.phase[0].flow[0].bytes - 7.0 / 8.0 * 1e9) < 1e-3);
}

/* Over 4 nodes of 8 GPUs: rank 10 (node 1, local 2) sends 7/8 of the volume to rank 11 over
 * NVLink and 1/8 to rank 18 (node 2, local 2) over its NIC. */
static void test_collective_plan_channelised_ring_uses_every_rail(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 4);
    uint32_t m[32];
    fixture_members(m, 32);
    assert_true(collective_is_node_aligned(&p, m, 32));
    CollPlan plan;
    collective_plan(&p, COLL_REDUCE_SCATTER, COLL_ALGO_RING, true, m, 32, 32, 10, 1e9, 0,
                    &plan);
    double volume = 31.0 / 32.0 * 1e9;
    assert_int_equal(plan.n_phases, 1);
    assert_int_equal(plan.phase[0].n_flows, 2);
    assert_int_equal(plan.phase[0].flow[0].send_to, 11);
    assert_int_equal(plan.phase[0].flow[1].send_to, 18);
    assert_int_equal(plan.phase[0].flow[1].recv_from, 2);
    assert_true(fabs(plan.phase[0].flow[0].bytes - volume * 7.0 / 8.0) < 1e-3);
    assert_true(fabs(plan.phase[0].flow[1].bytes - volume / 8.0) < 1e-3);
    assert_int_equal(plan.phase[0].steps, 31);
}

/* The tree: intra reduce-scatter, a per-rail all-reduce across nodes with the tree's steps,
 * intra all-gather; auto picks it for all-reduces across nodes below the threshold only. */
static void test_collective_plan_tree_and_auto(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 16);
    uint32_t m[128];
    fixture_members(m, 128);
    CollPlan tree, hier;
    collective_plan(&p, COLL_ALL_REDUCE, COLL_ALGO_TREE, true, m, 128, 128, 9, 1e8, 0, &tree);
    collective_plan(&p, COLL_ALL_REDUCE, COLL_ALGO_HIER, true, m, 128, 128, 9, 1e8, 0, &hier);
    assert_int_equal(tree.n_phases, 3);
    assert_int_equal(tree.phase[1].steps, 2 * 5); /* ceil(log2(17)) = 5 */
    assert_int_equal(hier.phase[1].steps, 2 * 15);
    assert_true(tree.phase[1].flow[0].bytes == hier.phase[1].flow[0].bytes);
    assert_int_equal(collective_resolve(COLL_ALGO_AUTO, true, COLL_ALL_REDUCE, 1e6),
                     COLL_ALGO_TREE);
    assert_int_equal(collective_resolve(COLL_ALGO_AUTO, true, COLL_ALL_REDUCE, 1e9),
                     COLL_ALGO_RING);
    assert_int_equal(collective_resolve(COLL_ALGO_AUTO, true, COLL_ALL_GATHER, 1e6),
                     COLL_ALGO_RING);
    assert_int_equal(collective_resolve(COLL_ALGO_TREE, true, COLL_REDUCE_SCATTER, 1e6),
                     COLL_ALGO_RING);
    assert_int_equal(collective_resolve(COLL_ALGO_HIER, false, COLL_ALL_REDUCE, 1e6),
                     COLL_ALGO_RING);
}

/* Symmetric mode: 2 simulated nodes standing for 64 carry the 512-member ring's volume. */
static void test_collective_plan_logical_ring(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 2);
    uint32_t m[16];
    fixture_members(m, 16);
    CollPlan plan;
    collective_plan(&p, COLL_ALL_GATHER, COLL_ALGO_RING, true, m, 16, 512, 0, 1e9, 0, &plan);
    double volume = 511.0 / 512.0 * 1e9;
    assert_int_equal(plan.phase[0].steps, 511);
    assert_true(fabs(plan.phase[0].flow[0].bytes + plan.phase[0].flow[1].bytes - volume) <
                1e-3);
    assert_int_equal(plan.phase[0].flow[1].send_to, 8); /* the other simulated node */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collective_plan_flat_ring_volumes),
        cmocka_unit_test(test_collective_plan_channelised_ring_uses_every_rail),
        cmocka_unit_test(test_collective_plan_tree_and_auto),
        cmocka_unit_test(test_collective_plan_logical_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
