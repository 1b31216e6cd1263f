/*
 * test_capacity.c - the memory-map budget checked before a simulation starts its actors
 * (engine/capacity.c): a handful of actors fit, a number no vm.max_map_count allows is
 * refused with a message that names the limit and the way out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/capacity.h"

#include <stdio.h>
#include <string.h>

static void test_capacity_check_actors_accepts_a_few(void **state)
{
    (void)state;
    Err err = {0};
    assert_int_equal(capacity_check_actors(16, &err), 0);
    assert_false(err.is_set);
}

static void test_capacity_check_actors_refuses_too_many(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f == NULL)
        skip(); /* not Linux: the limit cannot be read and nothing is checked */
    long limit = 0;
    assert_int_equal(fscanf(f, "%ld", &limit), 1);
    fclose(f);
    Err err = {0};
    /* more actors than the limit allows entries, whatever the limit is (it is an int) */
    const uint32_t n = limit < (long)(UINT32_MAX / 4) ? (uint32_t)limit : UINT32_MAX / 4;
    assert_int_equal(capacity_check_actors(n, &err), -1);
    assert_non_null(strstr(err.msg, "memory mappings"));
    assert_non_null(strstr(err.msg, "vm.max_map_count allows"));
    assert_non_null(strstr(err.msg, "--mode symmetric"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_check_actors_accepts_a_few),
        cmocka_unit_test(test_capacity_check_actors_refuses_too_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
