/*
 * test_breakdown.c - where a rank's step went (report/breakdown.c), on a hand-timed graph.
 *
 * One rank, ops given made-up start and end times (no SimGrid): a forward kernel, an exposed
 * all-gather, a backward kernel, a host optimizer step the GPU waits for, and a GPU optimizer
 * kernel whose label is not "optimizer step" (as ZeRO-3's partial offload names it), so that
 * the breakdown is seen to decide on the op's purpose, not on its label.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/breakdown.h"

#include <string.h>

enum { FWD, GATHER, BWD, ADAM, GPU_STEP, N_OPS };

/* Builds the graph and its timeline; the caller frees g. */
static Graph *timed_graph(EngineResult *r, double *start, double *end)
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
                                  graph_label(g, "optimizer step (gpu part)"));
    graph_depend(g, ops[GATHER], ops[BWD]);
    graph_depend(g, ops[BWD], ops[ADAM]);
    graph_depend(g, ops[ADAM], ops[GPU_STEP]);
    Err err = {0};
    assert_int_equal(graph_finalize(g, &err), 0);
    for (int i = 0; i < N_OPS; i++)
        assert_int_equal(ops[i], i);
    /* fwd [0,1]; all-gather [0.5,3]; bwd [3,4]; host Adam [4,6]; GPU step [6,7] */
    const double s[N_OPS] = {0, 0.5, 3, 4, 6}, e[N_OPS] = {1, 3, 4, 6, 7};
    memcpy(start, s, sizeof s);
    memcpy(end, e, sizeof e);
    memset(r, 0, sizeof *r);
    r->makespan_s = 7;
    r->n_ops = N_OPS;
    r->op_start_s = start;
    r->op_end_s = end;
    r->n_ranks = 1;
    return g;
}

static void test_breakdown_rank_charges_waits_to_what_ran(void **state)
{
    (void)state;
    EngineResult r;
    double start[N_OPS], end[N_OPS];
    Graph *g = timed_graph(&r, start, end);
    Breakdown b;
    breakdown_rank(g, &r, 0, &b);
    assert_float_equal(b.total_s, 7, 1e-12);
    assert_float_equal(b.time_s[BD_COMPUTE], 2, 1e-12);      /* fwd + bwd */
    assert_float_equal(b.time_s[BD_ALL_GATHER], 2, 1e-12);   /* the gap [1,3] */
    assert_float_equal(b.time_s[BD_CPU_OPTIMIZER], 2, 1e-12); /* the gap [4,6] */
    assert_float_equal(b.time_s[BD_OPTIMIZER], 1, 1e-12);    /* by purpose, not label */
    assert_float_equal(b.time_s[BD_IDLE], 0, 1e-12);
    assert_float_equal(b.busy_s[BD_CPU_OPTIMIZER], 2, 1e-12);
    assert_float_equal(breakdown_exposed_comm_s(&b), 2, 1e-12);
    double sum = 0;
    for (int c = 0; c < BD_N; c++)
        sum += b.time_s[c];
    assert_float_equal(sum, b.total_s, 1e-12);
    assert_int_equal(breakdown_largest(&b), BD_COMPUTE); /* ties go to the first in table order */
    graph_destroy(g);
}

static void test_breakdown_category_table_is_complete(void **state)
{
    (void)state;
    for (int c = 0; c < BD_N; c++) {
        const BreakdownCategoryInfo *info = breakdown_category((BreakdownCategory)c);
        assert_non_null(info->text);
        assert_non_null(info->short_name);
        assert_non_null(info->json_key);
    }
    for (int k = 0; k < COLL_N_KINDS; k++) {
        BreakdownCategory c = (BreakdownCategory)(BD_ALL_REDUCE + k);
        assert_true(breakdown_is_collective(c));
        assert_string_equal(breakdown_category(c)->json_key,
                            graph_collective_name((CollectiveKind)k));
    }
    assert_false(breakdown_is_collective(BD_COMPUTE));
    assert_false(breakdown_is_collective(BD_H2D));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_breakdown_rank_charges_waits_to_what_ran),
        cmocka_unit_test(test_breakdown_category_table_is_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
