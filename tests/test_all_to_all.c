/*
 * test_all_to_all.c - an all-to-all member's flows (engine/all_to_all.c), without SimGrid.
 *
 * Every member sends bytes / n to each of the n - 1 others. Inside a node those sends are
 * summed onto the next GPU of the node; across nodes onto the same GPU of up to five other
 * nodes, each carrying an equal part. Every member receives from the slot's mirror peer, so
 * sends and receives pair up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/all_to_all.h"

#include "fixtures.h"

#include <math.h>
#include <string.h>

static double sent(const CollPlan *plan)
{
    double s = 0.0;
    for (uint32_t k = 0; k < plan->n_phases; k++)
        for (uint32_t f = 0; f < plan->phase[k].n_flows; f++)
            if (plan->phase[k].flow[f].send_to != COLLECTIVE_NO_PEER)
                s += plan->phase[k].flow[f].bytes;
    return s;
}

/* 8 GPUs of one node: rank 3 sends 7 x 1e9 / 8 to rank 4, receives from rank 2. */
static void test_all_to_all_one_node(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 1);
    uint32_t m[8];
    for (uint32_t i = 0; i < 8; i++)
        m[i] = i;
    CollPlan plan;
    all_to_all_plan(&p, m, 8, 8, 3, 1e9, &plan);
    assert_int_equal(plan.n_phases, 1);
    assert_int_equal(plan.phase[0].n_flows, 1);
    assert_int_equal(plan.phase[0].flow[0].send_to, 4);
    assert_int_equal(plan.phase[0].flow[0].recv_from, 2);
    assert_true(fabs(plan.phase[0].flow[0].bytes - 7e9 / 8.0) < 1e-3);
    assert_true(fabs(all_to_all_send_bytes(1e9, 8) - 7e9 / 8.0) < 1e-3);
}

/* 4 nodes of 8 (32 members): rank 10 (node 1, local 2) sends 7/32 of the buffer inside its
 * node and 24/32 across, 8/32 to each of ranks 18, 26 and 2 (offsets 1, 2, 3), receiving
 * from ranks 2, 26 and 18 in the same slots. */
static void test_all_to_all_across_nodes(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 4);
    uint32_t m[32];
    for (uint32_t i = 0; i < 32; i++)
        m[i] = i;
    CollPlan plan;
    all_to_all_plan(&p, m, 32, 32, 10, 32e6, &plan);
    assert_true(fabs(sent(&plan) - 31e6) < 1e-3);
    assert_int_equal(plan.phase[0].flow[0].send_to, 11);
    assert_true(fabs(plan.phase[0].flow[0].bytes - 7e6) < 1e-3);
    const uint32_t to[3] = {18, 26, 2}, from[3] = {2, 26, 18};
    for (uint32_t d = 1; d <= 3; d++) {
        const CollFlow *f = &plan.phase[d / 2].flow[d % 2];
        assert_int_equal(f->send_to, to[d - 1]);
        assert_int_equal(f->recv_from, from[d - 1]);
        assert_true(fabs(f->bytes - 8e6) < 1e-3);
    }
}

/* Symmetric mode: 2 simulated nodes stand for a 256-member group; the volumes are those of
 * 256 members (31/32 of the buffer crosses nodes for 8 of 256 local), and every offset lands
 * on the other simulated node, never on this one. */
static void test_all_to_all_symmetric(void **state)
{
    (void)state;
    Platform p = fixture_nodes(8, 2);
    uint32_t m[16];
    for (uint32_t i = 0; i < 16; i++)
        m[i] = i;
    CollPlan plan;
    all_to_all_plan(&p, m, 16, 256, 5, 256e6, &plan);
    assert_true(fabs(sent(&plan) - 255e6) < 1e-3);
    for (uint32_t k = 0; k < plan.n_phases; k++)
        for (uint32_t f = 0; f < plan.phase[k].n_flows; f++)
            if (plan.phase[k].flow[f].send_to != COLLECTIVE_NO_PEER && (k || f))
                assert_int_equal(plan.phase[k].flow[f].send_to, 13);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_to_all_one_node),
        cmocka_unit_test(test_all_to_all_across_nodes),
        cmocka_unit_test(test_all_to_all_symmetric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
