/*
 * test_choices.c - the tables of option values (common/choices.c): parsing by name (FSDP in
 * any case), names in enum order, and the "a, b or c" lists the error messages print.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/choices.h"
#include "engine/collective.h"
#include "schedule/fsdp.h"
#include "schedule/graph.h"

static void test_choices_parse_names_in_enum_order(void **state)
{
    (void)state;
    assert_int_equal(choices_parse(&choices_algo, "tree"), COLL_ALGO_TREE);
    assert_int_equal(choices_parse(&choices_algo, "hier"), COLL_ALGO_HIER);
    assert_int_equal(choices_parse(&choices_algo, "Tree"), -1); /* exact for our own names */
    assert_int_equal(choices_parse(&choices_fsdp, "hybrid_shard"), FSDP_HYBRID_SHARD);
    assert_int_equal(choices_parse(&choices_collective, "reduce_scatter"), COLL_REDUCE_SCATTER);
    assert_int_equal(choices_parse(&choices_mode, NULL), -1);
    assert_string_equal(choices_name(&choices_algo, COLL_ALGO_HIER), "hier");
    assert_string_equal(collective_algo_name(COLL_ALGO_TREE), "tree");
    assert_string_equal(graph_collective_name(COLL_BROADCAST), "broadcast");
    assert_string_equal(fsdp_name(FSDP_SHARD_GRAD_OP), "SHARD_GRAD_OP");
    assert_int_equal(choices_count(&choices_collective), COLL_N_KINDS);
}

static void test_choices_expected_lists_them(void **state)
{
    (void)state;
    char buf[128];
    assert_string_equal(choices_expected(&choices_mode, false, buf, sizeof buf),
                        "auto, full or symmetric");
    assert_string_equal(choices_expected(&choices_fsdp, true, buf, sizeof buf),
                        "FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD");
    assert_string_equal(choices_expected(&choices_on_off, false, buf, sizeof buf), "on or off");
    char tiny[8];
    choices_expected(&choices_mode, false, tiny, sizeof tiny); /* truncates, never overflows */
    assert_string_equal(tiny, "auto, f");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choices_parse_names_in_enum_order),
        cmocka_unit_test(test_choices_expected_lists_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
