/*
 * test_suggest.c - edit distance and "did you mean" (common/suggest.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/suggest.h"

#include <string.h>

static void test_distance(void **state)
{
    (void)state;
    assert_int_equal(suggest_distance("", ""), 0);
    assert_int_equal(suggest_distance("stage", "stage"), 0);
    assert_int_equal(suggest_distance("", "abc"), 3);
    assert_int_equal(suggest_distance("abc", ""), 3);
    assert_int_equal(suggest_distance("kitten", "sitting"), 3);
    assert_int_equal(suggest_distance("stage", "stgae"), 2); /* transposition = 2 edits */
    assert_int_equal(suggest_distance("num_hiden_layers", "num_hidden_layers"), 1);
    assert_int_equal(suggest_distance("stage3_prefetch_bucket_sise",
                                      "stage3_prefetch_bucket_size"), 1);
    /* Symmetric. */
    assert_int_equal(suggest_distance("flaw", "lawn"), suggest_distance("lawn", "flaw"));
    assert_int_equal(suggest_distance("flaw", "lawn"), 2);
}

/* Words longer than the internal limit get the length of the longer one (never crash). */
static void test_distance_long_words(void **state)
{
    (void)state;
    char a[201], b[301];
    memset(a, 'a', 200);
    a[200] = '\0';
    memset(b, 'b', 300);
    b[300] = '\0';
    assert_int_equal(suggest_distance(a, b), 300);
    assert_int_equal(suggest_distance(a, "x"), 200);
    const char *const candidates[] = {"aaa", NULL};
    assert_null(suggest_closest(a, candidates));
}

static const char *const keys[] = {
    "stage", "overlap_comm", "reduce_bucket_size", "allgather_bucket_size",
    "stage3_prefetch_bucket_size", "prefetch_bucket_size", "offload_param", NULL,
};

static void test_closest_finds_typo(void **state)
{
    (void)state;
    assert_string_equal(suggest_closest("stgae", keys), "stage");
    assert_string_equal(suggest_closest("overlap_com", keys), "overlap_comm");
    assert_string_equal(suggest_closest("stage3_prefetch_bucket_sise", keys),
                        "stage3_prefetch_bucket_size");
    assert_string_equal(suggest_closest("prefetch_bucket_sise", keys), "prefetch_bucket_size");
    assert_string_equal(suggest_closest("offload_params", keys), "offload_param");
    assert_string_equal(suggest_closest("Stage", keys), "stage"); /* case counts as an edit */
}

/* Ties go to the first candidate listed. */
static void test_closest_tie_takes_first(void **state)
{
    (void)state;
    const char *const c[] = {"cat", "car", NULL};
    assert_string_equal(suggest_closest("cas", c), "cat");
    const char *const d[] = {"car", "cat", NULL};
    assert_string_equal(suggest_closest("cas", d), "car");
}

/* The threshold is max(2, strlen(word) / 3) edits. */
static void test_closest_threshold(void **state)
{
    (void)state;
    const char *const c[] = {"abcdef", NULL};
    assert_string_equal(suggest_closest("abcdxx", c), "abcdef"); /* 2 edits, limit 2 */
    assert_null(suggest_closest("abcxxx", c));                    /* 3 edits, limit 2 */
    const char *const long_key[] = {"abcdefghijkl", NULL};
    assert_string_equal(suggest_closest("abcdefghixxx", long_key), "abcdefghijkl"); /* 3 <= 4 */
    assert_string_equal(suggest_closest("abcdefghxxxx", long_key), "abcdefghijkl"); /* 4 <= 4 */
    assert_null(suggest_closest("abcdefgxxxxx", long_key));                          /* 5 > 4 */
    assert_null(suggest_closest("completely_unrelated", keys));
    assert_null(suggest_closest("zzz", keys));
}

static void test_closest_empty_candidates(void **state)
{
    (void)state;
    const char *const none[] = {NULL};
    assert_null(suggest_closest("stage", none));
    /* The empty word is within 2 of a 2-letter key. */
    const char *const c[] = {"ab", NULL};
    assert_string_equal(suggest_closest("", c), "ab");
}

/* Command-line options go through the same function. */
static void test_closest_options(void **state)
{
    (void)state;
    const char *const options[] = {"--model", "--config", "--platform", "--gpus", "--nodes",
                                   "--seq-len", "--json", "--help", NULL};
    assert_string_equal(suggest_closest("--modle", options), "--model");
    assert_string_equal(suggest_closest("--gpu", options), "--gpus");
    assert_string_equal(suggest_closest("--platfrom", options), "--platform");
    assert_null(suggest_closest("--verbose", options));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance),
        cmocka_unit_test(test_distance_long_words),
        cmocka_unit_test(test_closest_finds_typo),
        cmocka_unit_test(test_closest_tie_takes_first),
        cmocka_unit_test(test_closest_threshold),
        cmocka_unit_test(test_closest_empty_candidates),
        cmocka_unit_test(test_closest_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
