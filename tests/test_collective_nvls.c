/*
 * test_collective_nvls.c - the NVLS and NVLSTree flow plans (engine/collective.c), without
 * SimGrid.
 *
 * NVLS: the NVSwitch reduces and multicasts, so each member sends one flow through its NVLink
 * port to the next member of its node: (g+1)/g of the buffer for an all-reduce (search.cc
 * charges every GPU (k+1) x bwIntra over k channels), (g-1)/g for an all-gather or
 * reduce-scatter. NVLSTree (whole nodes, all-reduce): that flow, then the tree's per-rail
 * inter-node phase, 2(k-1)/k of buffer/g over k nodes in 2 ceil(log2(k+1)) steps.
 *   8 GPUs, all-reduce of 8e6 B: 9/8 x 8e6 = 9e6 to the next GPU, one phase.
 *   8 GPUs, all-gather of 8e6 B: 7/8 x 8e6 = 7e6.
 *   2 nodes of 8, all-reduce of 8e6 B, rank 10 (node 1, local 2): 9e6 to rank 11; across
 *     nodes 2 x 1/2 x 8e6/8 = 1e6 to rank 2, 2 x ceil(log2 3) = 4 steps.
 *   the same 2 nodes standing for 16 (symmetric mode): 2 x 15/16 x 1e6 = 1.875e6 across
 *     nodes in 2 x ceil(log2 17) = 10 steps.
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

static void assert_bytes(double got, double want)
{
    if (fabs(got - want) > 1e-6 * want)
        fail_msg("got %.9g bytes, want %.9g", got, want);
}

static void test_collective_plan_nvls_one_node(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 1);
    uint32_t m[8];
    fixture_members(m, 8);
    CollPlan plan;
    collective_plan(&p, COLL_ALL_REDUCE, COLL_ALGO_NVLS, false, m, 8, 8, 7, 8e6, 0, &plan);
    assert_int_equal(plan.n_phases, 1);
    assert_int_equal(plan.phase[0].n_flows, 1);
    assert_int_equal(plan.phase[0].flow[0].send_to, 0); /* wraps around the node */
    assert_int_equal(plan.phase[0].flow[0].recv_from, 6);
    assert_bytes(plan.phase[0].flow[0].bytes, 9e6);
    collective_plan(&p, COLL_ALL_GATHER, COLL_ALGO_NVLS, false, m, 8, 8, 3, 8e6, 0, &plan);
    assert_int_equal(plan.n_phases, 1);
    assert_bytes(plan.phase[0].flow[0].bytes, 7e6);
    /* a broadcast has no NVLS: the ring's whole buffer */
    collective_plan(&p, COLL_BROADCAST, COLL_ALGO_NVLS, false, m, 8, 8, 3, 8e6, 0, &plan);
    assert_int_equal(plan.phase[0].steps, 7);
    assert_bytes(plan.phase[0].flow[0].bytes, 8e6);
}

static void test_collective_plan_nvls_tree_whole_nodes(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 2);
    uint32_t m[16];
    fixture_members(m, 16);
    CollPlan plan;
    collective_plan(&p, COLL_ALL_REDUCE, COLL_ALGO_NVLS_TREE, true, m, 16, 16, 10, 8e6, 0, &plan);
    assert_int_equal(plan.n_phases, 2);
    assert_int_equal(plan.phase[0].flow[0].send_to, 11);
    assert_int_equal(plan.phase[0].flow[0].recv_from, 9);
    assert_bytes(plan.phase[0].flow[0].bytes, 9e6);
    assert_int_equal(plan.phase[1].flow[0].send_to, 2);
    assert_int_equal(plan.phase[1].flow[0].recv_from, 2);
    assert_bytes(plan.phase[1].flow[0].bytes, 1e6);
    assert_int_equal(plan.phase[1].steps, 4);
    /* symmetric mode: the two nodes stand for 16 */
    collective_plan(&p, COLL_ALL_REDUCE, COLL_ALGO_NVLS_TREE, true, m, 16, 128, 10, 8e6, 0, &plan);
    assert_bytes(plan.phase[1].flow[0].bytes, 1.875e6);
    assert_int_equal(plan.phase[1].steps, 10);
    /* an all-gather over whole nodes has no NVLS: the channelised ring */
    collective_plan(&p, COLL_ALL_GATHER, COLL_ALGO_NVLS, true, m, 16, 16, 10, 8e6, 0, &plan);
    assert_int_equal(plan.n_phases, 1);
    assert_int_equal(plan.phase[0].n_flows, 2);
}

static void test_collective_has_nvls_shape(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 4);
    const uint32_t same_node[] = {8, 9, 12, 15};
    const uint32_t across[] = {0, 8, 16, 24};
    uint32_t whole[16];
    fixture_members(whole, 16);
    assert_true(collective_has_nvls_shape(&p, same_node, 4, false));
    assert_false(collective_has_nvls_shape(&p, across, 4, false));
    assert_false(collective_has_nvls_shape(&p, same_node, 1, false));
    assert_true(collective_has_nvls_shape(&p, whole, 16, true));
    /* the ideal model has no NVLS: nvls resolves as auto */
    assert_int_equal(collective_resolve(COLL_ALGO_NVLS, true, COLL_ALL_REDUCE, 1e6),
                     COLL_ALGO_TREE);
    assert_int_equal(collective_resolve(COLL_ALGO_NVLS_TREE, false, COLL_ALL_REDUCE, 1e6),
                     COLL_ALGO_RING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collective_plan_nvls_one_node),
        cmocka_unit_test(test_collective_plan_nvls_tree_whole_nodes),
        cmocka_unit_test(test_collective_has_nvls_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
