/*
 * test_capacity.c - the memory-map budget checked before a simulation starts its actors
 * (engine/capacity.c): a handful of actors fit, and so do 16,384 GPUs' 49,152 (the engine's
 * actors take no mapping of their own); actors with guard pages in a number no
 * vm.max_map_count allows are refused with a message that names the limit and the way out.
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

/* Three streams per rank (compute, gather, reduce) on 16,384 GPUs, under the default limit
 * (65,530), which two mappings per actor would exceed 1.5 times over. */
static void test_capacity_check_actors_fits_16384_gpus(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f == NULL)
        skip();
    long limit = 0;
    assert_int_equal(fscanf(f, "%ld", &limit), 1);
    fclose(f);
    if (limit < 65530)
        skip(); /* a machine below Linux's default */
    Err err = {0};
    assert_int_equal(capacity_check_actors(3 * 16384, &err), 0);
    assert_int_equal(capacity_check_maps(3 * 16384, CAPACITY_MAPS_PER_GUARDED_ACTOR, &err),
                     limit < 2 * 3 * 16384 ? -1 : 0);
}

static void test_capacity_check_maps_refuses_too_many(void **state)
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
    assert_int_equal(capacity_check_maps(n, CAPACITY_MAPS_PER_GUARDED_ACTOR, &err), -1);
    assert_non_null(strstr(err.msg, "memory mappings"));
    assert_non_null(strstr(err.msg, "vm.max_map_count allows"));
    assert_non_null(strstr(err.msg, "--mode symmetric"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_check_actors_accepts_a_few),
        cmocka_unit_test(test_capacity_check_actors_fits_16384_gpus),
        cmocka_unit_test(test_capacity_check_maps_refuses_too_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
