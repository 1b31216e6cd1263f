/*
 * test_zero3_walk.c - DeepSpeed ZeRO-3's fetch/prefetch/release walk against hand traces.
 *
 * A layer of three modules A = 6, B = 2, C = 5 elements (weights only, nothing persistent),
 * stage3_max_live_parameters 8, stage3_prefetch_bucket_size 3, 2 bytes per parameter and per
 * gradient, walked as fetch_sub_module does (zero3_walk.h): the module's missing parameters on
 * demand, then the next ones of the trace while fewer than min(8 - available, 3) were taken,
 * a parameter taken whole; release after the module.
 *
 * Forward, A B C A' B' C' ... from nothing:
 *   A  fetch 6 (on demand); room min(2, 3) = 2: B (2) -> available 8; release A -> 2
 *   B  ready; room min(6, 3) = 3: C (5) -> 7; release B -> 5
 *   C  ready; room min(3, 3) = 3: A' (6) -> 11; release C -> 6
 *   A' ready; room 2: B' -> 8; release -> 2 ... the cycle repeats from here.
 * Steady state per layer: every module arrives early (13 elements), 3 prefetch calls, none
 * on demand, and the peak is the 11 elements alive at C: 22 bytes.
 *
 * Backward, C B A C' B' A' ... (each module's gradients, 2 bytes each, beside its params):
 *   C  fetch 5; room 3: B (2, taken 2 < 3) then A (6) -> 13; live 13 x 2 + 5 x 2 = 36
 *   B  ready; release C -> 8; room 0: nothing; live 8 x 2 + 2 x 2 = 20
 *   A  ready; release B -> 6; room 2: C' (5) -> 11; live 11 x 2 + 6 x 2 = 34
 *   C' ready; release A -> 5; room 3: B', A' -> 13; live 36 again ...
 * Steady state: 2 prefetch calls per layer, peak 36 bytes.
 * Without prefetching (bucket 0, DeepSpeed before 0.6): each module alone, on demand:
 * forward peak 6 x 2 = 12, backward 6 x 2 + 6 x 2 = 24, three calls per layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/zero3_walk.h"

static const ParamModule layer[3] = {
    {.name = "A", .weight = 6}, {.name = "B", .weight = 2}, {.name = "C", .weight = 5}};

static void test_zero3_walk_forward_by_hand(void **state)
{
    (void)state;
    Zero3Walk w;
    zero3_walk(layer, 3, 0, 3, 8, false, 2, 2, &w);
    assert_true(w.gathered_elems == 13.0);
    assert_true(w.early_elems == 13.0);
    assert_int_equal(w.calls_early, 3);
    assert_int_equal(w.calls_late, 0);
    assert_int_equal(w.n_fetched_modules, 3);
    assert_true(w.live_peak_bytes == 22.0);
}

static void test_zero3_walk_backward_by_hand(void **state)
{
    (void)state;
    Zero3Walk w;
    zero3_walk(layer, 3, 0, 3, 8, true, 2, 2, &w);
    assert_true(w.early_elems == 13.0);
    assert_int_equal(w.calls_early, 2);
    assert_int_equal(w.calls_late, 0);
    assert_true(w.live_peak_bytes == 36.0);
}

static void test_zero3_walk_without_prefetch(void **state)
{
    (void)state;
    Zero3Walk w;
    zero3_walk(layer, 3, 0, 0, 8, false, 2, 2, &w);
    assert_true(w.early_elems == 0.0);
    assert_int_equal(w.calls_early, 0);
    assert_int_equal(w.calls_late, 3);
    assert_true(w.live_peak_bytes == 12.0);
    zero3_walk(layer, 3, 0, 0, 8, true, 2, 2, &w);
    assert_true(w.live_peak_bytes == 24.0);
}

/* Persistent parameters are not walked: with the threshold at 2 elements, B stays resident.
 * Forward A C A' C' ...: A fetch 6, room 2: C (5) -> 11; release -> 5; C ready, room 3: A'
 * -> 11; steady peak 11 x 2 = 22 with 11 gathered elements per layer. A module larger than
 * stage3_max_live_parameters is still fetched whole when it computes: with the limit at 4,
 * A is fetched alone (6 > 4: no room), B (2) leaves room min(2, 3) = 2 and C (5) comes whole
 * beside it, 7 elements = 14 bytes, the peak; C then has no room. */
static void test_zero3_walk_persistent_and_oversized(void **state)
{
    (void)state;
    Zero3Walk w;
    zero3_walk(layer, 3, 2, 3, 8, false, 2, 2, &w);
    assert_true(w.gathered_elems == 11.0);
    assert_true(w.live_peak_bytes == 22.0);
    zero3_walk(layer, 3, 0, 3, 4, false, 2, 2, &w);
    assert_true(w.live_peak_bytes == 14.0);
    assert_int_equal(w.calls_early, 1);
    assert_int_equal(w.calls_late, 2);
    assert_int_equal(w.n_fetched_modules, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero3_walk_forward_by_hand),
        cmocka_unit_test(test_zero3_walk_backward_by_hand),
        cmocka_unit_test(test_zero3_walk_without_prefetch),
        cmocka_unit_test(test_zero3_walk_persistent_and_oversized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
