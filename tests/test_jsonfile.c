/*
 * test_jsonfile.c - JSON loading, key vocabulary checks and typed readers (inputs/jsonfile.c).
 *
 * The messages are the user contract: each names the file, the JSON path, what was expected
 * and what was found; syntax errors give file:line:column. Exact texts are checked here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/jsonfile.h"

#include <string.h>

static cJSON *parse_ok(const char *text)
{
    Err err = {0};
    cJSON *root = jsonfile_parse("t.json", text, strlen(text), &err);
    if (root == NULL)
        fail_msg("unexpected error: %s", err.msg);
    assert_false(err.is_set);
    return root;
}

/* Parses text that must fail and checks the message exactly. */
static void assert_syntax_error(const char *text, const char *expected)
{
    Err err = {0};
    cJSON *root = jsonfile_parse("t.json", text, strlen(text), &err);
    assert_null(root);
    assert_true(err.is_set);
    assert_string_equal(err.msg, expected);
}

static const JsonAt at_root = {"t.json", ""};
static const JsonAt at_zero = {"t.json", "zero_optimization"};

/* ------------------------------------------------------------------------ syntax errors */

static void test_syntax_error_gives_line_and_column(void **state)
{
    (void)state;
    assert_syntax_error("{\n  \"a\": 1,\n  \"b\": ]\n}\n",
                        "t.json:3:8: JSON syntax error: expected a valid JSON value, got ']'");
    assert_syntax_error("{\"a\" 1}",
                        "t.json:1:6: JSON syntax error: expected a valid JSON value, got '1}'");
    assert_syntax_error("{\"a\": [1,]}",
                        "t.json:1:10: JSON syntax error: expected a valid JSON value, got ']}'");
}

/* cJSON points one byte past a bad object key; the message points at the key itself. */
static void test_syntax_error_trailing_comma_and_bare_key(void **state)
{
    (void)state;
    assert_syntax_error("{\n  \"stage\": 3,\n}\n",
                        "t.json:3:1: JSON syntax error: expected a valid JSON value, got '}'");
    assert_syntax_error("{\"a\": 1, }",
                        "t.json:1:10: JSON syntax error: expected a valid JSON value, got '}'");
    assert_syntax_error("{ stage: 3 }\n", "t.json:1:3: JSON syntax error: expected a valid "
                                          "JSON value, got 'stage: 3 }'");
    /* In an array the position is cJSON's own (already right). */
    assert_syntax_error("[1,x]", "t.json:1:4: JSON syntax error: expected a valid JSON value, "
                                 "got 'x]'");
    assert_syntax_error("{\"a\": {\"b\": 1,}}\n", "t.json:1:15: JSON syntax error: expected a "
                                                  "valid JSON value, got '}}'");
}

static void test_syntax_error_at_end_of_file(void **state)
{
    (void)state;
    assert_syntax_error("", "t.json:1:1: JSON syntax error: expected a valid JSON value, got "
                            "end of file");
    assert_syntax_error("  \n", "t.json:2:1: JSON syntax error: expected a valid JSON value, "
                                "got end of file");
    assert_syntax_error("{\"a\": 1", "t.json:1:8: JSON syntax error: expected a valid JSON "
                                     "value, got end of file");
    assert_syntax_error("{\n  \"a\": [1, 2\n", "t.json:3:1: JSON syntax error: expected a "
                                               "valid JSON value, got end of file");
}

static void test_syntax_error_trailing_content(void **state)
{
    (void)state;
    assert_syntax_error("{\"a\": 1}}\n", "t.json:1:9: JSON syntax error: expected nothing "
                                         "after the top-level value, got '}'");
    assert_syntax_error("{}\n\n  x", "t.json:3:3: JSON syntax error: expected nothing after "
                                     "the top-level value, got 'x'");
    /* Trailing whitespace is fine. */
    cJSON_Delete(parse_ok("{}\n \t\r\n"));
}

/* The excerpt after "got" is cut at the end of the line and at 16 characters. */
static void test_syntax_error_excerpt_is_short(void **state)
{
    (void)state;
    assert_syntax_error("{\"a\": nope_this_is_a_long_word}",
                        "t.json:1:7: JSON syntax error: expected a valid JSON value, got "
                        "'nope_this_is_a_l'");
    assert_syntax_error("{\"a\": x\n}", "t.json:1:7: JSON syntax error: expected a valid JSON "
                                        "value, got 'x'");
}

static void test_expect_object(void **state)
{
    (void)state;
    cJSON *root = parse_ok("[1, 2]");
    Err err = {0};
    assert_int_equal(jsonfile_expect_object(root, at_root, &err), -1);
    assert_string_equal(err.msg, "t.json: (top level): expected an object, got an array");
    cJSON_Delete(root);

    root = parse_ok("{\"zero_optimization\": 3}");
    err_clear(&err);
    assert_int_equal(jsonfile_expect_object(cJSON_GetObjectItem(root, "zero_optimization"),
                                            at_zero, &err), -1);
    assert_string_equal(err.msg, "t.json: zero_optimization: expected an object, got 3");
    err_clear(&err);
    assert_int_equal(jsonfile_expect_object(root, at_root, &err), 0);
    assert_false(err.is_set);
    cJSON_Delete(root);
}

/* --------------------------------------------------------------------------- key checks */

static const char *const modelled[] = {"stage", "reduce_bucket_size", "overlap_comm", NULL};
static const char *const not_modelled[] = {"round_robin_gradients", "load_from_fp32_weights",
                                           NULL};

static void test_check_keys_accepts_known_keys(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"stage\": 2, \"overlap_comm\": true}");
    Err err = {0};
    StrList warnings;
    strlist_init(&warnings);
    assert_int_equal(jsonfile_check_keys(root, at_zero, modelled, not_modelled, &warnings, &err),
                     0);
    assert_false(err.is_set);
    assert_int_equal(warnings.n_items, 0);
    strlist_fini(&warnings);
    cJSON_Delete(root);
}

static void test_check_keys_unknown_key_suggests(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"stage\": 2, \"reduce_bucket_sise\": 5e8}");
    Err err = {0};
    assert_int_equal(jsonfile_check_keys(root, at_zero, modelled, not_modelled, NULL, &err), -1);
    assert_string_equal(err.msg, "t.json: zero_optimization.reduce_bucket_sise: expected a "
                                 "known key, got unknown key \"reduce_bucket_sise\" (did you "
                                 "mean \"reduce_bucket_size\"?)");
    cJSON_Delete(root);
}

/* A typo of a not-modelled key is suggested too (after the modelled ones). */
static void test_check_keys_suggests_not_modelled_key(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"round_robin_gradient\": true}");
    Err err = {0};
    assert_int_equal(jsonfile_check_keys(root, at_root, modelled, not_modelled, NULL, &err), -1);
    assert_string_equal(err.msg, "t.json: round_robin_gradient: expected a known key, got "
                                 "unknown key \"round_robin_gradient\" (did you mean "
                                 "\"round_robin_gradients\"?)");
    cJSON_Delete(root);
}

static void test_check_keys_unknown_key_without_suggestion(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"completely_different\": 1}");
    Err err = {0};
    assert_int_equal(jsonfile_check_keys(root, at_root, modelled, NULL, NULL, &err), -1);
    assert_string_equal(err.msg, "t.json: completely_different: expected a known key, got "
                                 "unknown key \"completely_different\"");
    cJSON_Delete(root);
}

static void test_check_keys_collects_not_modelled(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"stage\": 2, \"round_robin_gradients\": true, "
                           "\"load_from_fp32_weights\": false}");
    Err err = {0};
    StrList warnings;
    strlist_init(&warnings);
    assert_int_equal(jsonfile_check_keys(root, at_zero, modelled, not_modelled, &warnings, &err),
                     0);
    assert_false(err.is_set);
    assert_int_equal(warnings.n_items, 2);
    assert_string_equal(warnings.items[0], "zero_optimization.round_robin_gradients");
    assert_string_equal(warnings.items[1], "zero_optimization.load_from_fp32_weights");
    /* At the root the path is the bare key; a NULL list is allowed. */
    assert_int_equal(jsonfile_check_keys(root, at_root, modelled, not_modelled, NULL, &err), 0);
    strlist_fini(&warnings);
    cJSON_Delete(root);
}

/* ------------------------------------------------------------------------ typed readers */

static void test_get_u64(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"n\": 8, \"big\": 5e8, \"zero\": 0, \"none\": null, \"neg\": -1, "
                           "\"half\": 5.5, \"text\": \"4\", \"auto\": \"auto\", \"flag\": true, "
                           "\"obj\": {}, \"huge\": 1e30}");
    Err err = {0};
    uint64_t v = 77;
    assert_int_equal(jsonfile_get_u64(root, "n", at_root, 1, 8, &v, &err), 1);
    assert_int_equal(v, 8);
    /* 5e8 is written as a double but is an integer. */
    assert_int_equal(jsonfile_get_u64(root, "big", at_root, 0, UINT64_MAX, &v, &err), 1);
    assert_int_equal(v, 500000000);
    assert_int_equal(jsonfile_get_u64(root, "zero", at_root, 0, 10, &v, &err), 1);
    assert_int_equal(v, 0);
    /* Absent and null leave out untouched. */
    v = 77;
    assert_int_equal(jsonfile_get_u64(root, "missing", at_root, 1, 8, &v, &err), 0);
    assert_int_equal(jsonfile_get_u64(root, "none", at_root, 1, 8, &v, &err), 0);
    assert_int_equal(v, 77);
    assert_false(err.is_set);
    cJSON_Delete(root);
}

static void assert_u64_fails(const char *key, uint64_t min, uint64_t max, const char *expected)
{
    cJSON *root = parse_ok("{\"n\": 8, \"neg\": -1, \"half\": 5.5, \"text\": \"4\", "
                           "\"auto\": \"auto\", \"flag\": true, \"obj\": {}, \"list\": [1], "
                           "\"huge\": 1e30}");
    Err err = {0};
    uint64_t v = 77;
    assert_int_equal(jsonfile_get_u64(root, key, at_zero, min, max, &v, &err), -1);
    assert_int_equal(v, 77);
    assert_string_equal(err.msg, expected);
    cJSON_Delete(root);
}

static void test_get_u64_rejects(void **state)
{
    (void)state;
    assert_u64_fails("n", 1, 4, "t.json: zero_optimization.n: expected integer in [1, 4], got 8");
    assert_u64_fails("n", 10, UINT64_MAX,
                     "t.json: zero_optimization.n: expected integer >= 10, got 8");
    assert_u64_fails("neg", 0, UINT64_MAX,
                     "t.json: zero_optimization.neg: expected integer >= 0, got -1");
    assert_u64_fails("half", 1, 100,
                     "t.json: zero_optimization.half: expected integer in [1, 100], got 5.5");
    assert_u64_fails("text", 1, 100,
                     "t.json: zero_optimization.text: expected integer in [1, 100], got \"4\"");
    assert_u64_fails("auto", 1, 100, "t.json: zero_optimization.auto: expected integer in "
                                     "[1, 100], got \"auto\"");
    assert_u64_fails("flag", 1, 100,
                     "t.json: zero_optimization.flag: expected integer in [1, 100], got true");
    assert_u64_fails("obj", 1, 100, "t.json: zero_optimization.obj: expected integer in "
                                    "[1, 100], got an object");
    assert_u64_fails("list", 1, 100, "t.json: zero_optimization.list: expected integer in "
                                     "[1, 100], got an array");
    assert_u64_fails("huge", 0, UINT64_MAX,
                     "t.json: zero_optimization.huge: expected integer >= 0, got 1e+30");
    /* A bound of 2^53 or more (an overflow guard) is named only to a value beyond it. */
    assert_u64_fails("text", 1, UINT64_MAX / 2,
                     "t.json: zero_optimization.text: expected integer >= 1, got \"4\"");
    assert_u64_fails("half", 1, UINT64_MAX / 2,
                     "t.json: zero_optimization.half: expected integer >= 1, got 5.5");
    assert_u64_fails("huge", 1, UINT64_MAX / 2,
                     "t.json: zero_optimization.huge: expected integer in [1, 9.22e+18], got "
                     "1e+30");
    assert_u64_fails("n", 10, 1ull << 53,
                     "t.json: zero_optimization.n: expected integer >= 10, got 8");
    assert_u64_fails("n", 10, (1ull << 53) - 1,
                     "t.json: zero_optimization.n: expected integer in [10, 9007199254740991], "
                     "got 8");
}

static void test_get_double(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"r\": 0.25, \"i\": 1, \"bad\": 1.5, \"s\": \"0.5\"}");
    Err err = {0};
    double d = -1;
    assert_int_equal(jsonfile_get_double(root, "r", at_root, 0.0, 1.0, &d, &err), 1);
    assert_true(d == 0.25);
    assert_int_equal(jsonfile_get_double(root, "i", at_root, 0.0, 1.0, &d, &err), 1);
    assert_true(d == 1.0);
    assert_int_equal(jsonfile_get_double(root, "absent", at_root, 0.0, 1.0, &d, &err), 0);
    assert_int_equal(jsonfile_get_double(root, "bad", at_root, 0.0, 1.0, &d, &err), -1);
    assert_string_equal(err.msg, "t.json: bad: expected number in [0, 1], got 1.5");
    err_clear(&err);
    assert_int_equal(jsonfile_get_double(root, "s", at_root, 0.0, 1.0, &d, &err), -1);
    assert_string_equal(err.msg, "t.json: s: expected number in [0, 1], got \"0.5\"");
    cJSON_Delete(root);
}

static void test_get_bool(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"t\": true, \"f\": false, \"auto\": \"auto\", \"one\": 1}");
    Err err = {0};
    bool b = false;
    assert_int_equal(jsonfile_get_bool(root, "t", at_root, &b, &err), 1);
    assert_true(b);
    assert_int_equal(jsonfile_get_bool(root, "f", at_root, &b, &err), 1);
    assert_false(b);
    assert_int_equal(jsonfile_get_bool(root, "absent", at_root, &b, &err), 0);
    JsonAt at_fp16 = {"t.json", "fp16"};
    assert_int_equal(jsonfile_get_bool(root, "auto", at_fp16, &b, &err), -1);
    assert_string_equal(err.msg, "t.json: fp16.auto: expected true or false, got \"auto\"");
    err_clear(&err);
    assert_int_equal(jsonfile_get_bool(root, "one", at_root, &b, &err), -1);
    assert_string_equal(err.msg, "t.json: one: expected true or false, got 1");
    cJSON_Delete(root);
}

static void test_get_string(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"name\": \"dgx\", \"long\": \"abcdefghij\", \"num\": 3}");
    Err err = {0};
    char buf[8];
    assert_int_equal(jsonfile_get_string(root, "name", at_root, buf, sizeof buf, &err), 1);
    assert_string_equal(buf, "dgx");
    assert_int_equal(jsonfile_get_string(root, "absent", at_root, buf, sizeof buf, &err), 0);
    assert_int_equal(jsonfile_get_string(root, "long", at_root, buf, sizeof buf, &err), -1);
    assert_string_equal(err.msg, "t.json: long: expected a string of at most 7 characters, got "
                                 "\"abcdefghij\"");
    err_clear(&err);
    assert_int_equal(jsonfile_get_string(root, "num", at_root, buf, sizeof buf, &err), -1);
    assert_string_equal(err.msg, "t.json: num: expected a string, got 3");
    cJSON_Delete(root);
}

static void test_get_enum(void **state)
{
    (void)state;
    static const char *const devices[] = {"none", "cpu", "nvme", NULL};
    cJSON *root = parse_ok("{\"a\": \"CPU\", \"b\": \"nvme\", \"c\": \"gpu\", \"d\": 1}");
    JsonAt at = {"t.json", "zero_optimization.offload_param"};
    Err err = {0};
    int v = -1;
    assert_int_equal(jsonfile_get_enum(root, "a", at, devices, &v, &err), 1);
    assert_int_equal(v, 1); /* case-insensitive */
    assert_int_equal(jsonfile_get_enum(root, "b", at, devices, &v, &err), 1);
    assert_int_equal(v, 2);
    assert_int_equal(jsonfile_get_enum(root, "absent", at, devices, &v, &err), 0);
    assert_int_equal(jsonfile_get_enum(root, "c", at, devices, &v, &err), -1);
    assert_string_equal(err.msg, "t.json: zero_optimization.offload_param.c: expected one of "
                                 "\"none\", \"cpu\", \"nvme\", got \"gpu\"");
    err_clear(&err);
    assert_int_equal(jsonfile_get_enum(root, "d", at, devices, &v, &err), -1);
    assert_string_equal(err.msg, "t.json: zero_optimization.offload_param.d: expected one of "
                                 "\"none\", \"cpu\", \"nvme\", got 1");
    cJSON_Delete(root);
}

static void test_require(void **state)
{
    (void)state;
    Err err = {0};
    assert_int_equal(jsonfile_require(1, "n_layer", at_root, "integer", &err), 0);
    assert_false(err.is_set);
    assert_int_equal(jsonfile_require(0, "n_layer", at_root, "integer in [1, 100000]", &err),
                     -1);
    assert_string_equal(err.msg, "t.json: n_layer: expected integer in [1, 100000], got nothing "
                                 "(key missing)");
    /* -1 keeps the reader's own message. */
    Err err2 = {0};
    err_set(&err2, "first");
    assert_int_equal(jsonfile_require(-1, "x", at_root, "y", &err2), -1);
    assert_string_equal(err2.msg, "first");
}

/* The first error set wins: later ones do not overwrite it. */
static void test_first_error_wins(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"a\": \"x\", \"b\": \"y\"}");
    Err err = {0};
    bool b;
    assert_int_equal(jsonfile_get_bool(root, "a", at_root, &b, &err), -1);
    assert_int_equal(jsonfile_get_bool(root, "b", at_root, &b, &err), -1);
    assert_string_equal(err.msg, "t.json: a: expected true or false, got \"x\"");
    cJSON_Delete(root);
}

static void test_key_path_and_describe(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(jsonfile_key_path(at_root, "stage", buf, sizeof buf), "stage");
    assert_string_equal(jsonfile_key_path(at_zero, "stage", buf, sizeof buf),
                        "zero_optimization.stage");
    JsonAt at_null = {"t.json", NULL};
    assert_string_equal(jsonfile_key_path(at_null, "stage", buf, sizeof buf), "stage");

    assert_string_equal(jsonfile_describe(NULL, buf, sizeof buf), "nothing");
    cJSON *root = parse_ok("{\"s\": \"4k\", \"n\": 3, \"o\": {\"x\": 1}, \"a\": [], \"z\": null, "
                           "\"l\": \"a very long string value that will not fit\"}");
    assert_string_equal(jsonfile_describe(cJSON_GetObjectItem(root, "s"), buf, sizeof buf),
                        "\"4k\"");
    assert_string_equal(jsonfile_describe(cJSON_GetObjectItem(root, "n"), buf, sizeof buf), "3");
    assert_string_equal(jsonfile_describe(cJSON_GetObjectItem(root, "o"), buf, sizeof buf),
                        "an object");
    assert_string_equal(jsonfile_describe(cJSON_GetObjectItem(root, "a"), buf, sizeof buf),
                        "an array");
    assert_string_equal(jsonfile_describe(cJSON_GetObjectItem(root, "z"), buf, sizeof buf),
                        "null");
    char small[16];
    assert_string_equal(jsonfile_describe(cJSON_GetObjectItem(root, "l"), small, sizeof small),
                        "\"a very long...");
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_error_gives_line_and_column),
        cmocka_unit_test(test_syntax_error_trailing_comma_and_bare_key),
        cmocka_unit_test(test_syntax_error_at_end_of_file),
        cmocka_unit_test(test_syntax_error_trailing_content),
        cmocka_unit_test(test_syntax_error_excerpt_is_short),
        cmocka_unit_test(test_expect_object),
        cmocka_unit_test(test_check_keys_accepts_known_keys),
        cmocka_unit_test(test_check_keys_unknown_key_suggests),
        cmocka_unit_test(test_check_keys_suggests_not_modelled_key),
        cmocka_unit_test(test_check_keys_unknown_key_without_suggestion),
        cmocka_unit_test(test_check_keys_collects_not_modelled),
        cmocka_unit_test(test_get_u64),
        cmocka_unit_test(test_get_u64_rejects),
        cmocka_unit_test(test_get_double),
        cmocka_unit_test(test_get_bool),
        cmocka_unit_test(test_get_string),
        cmocka_unit_test(test_get_enum),
        cmocka_unit_test(test_require),
        cmocka_unit_test(test_first_error_wins),
        cmocka_unit_test(test_key_path_and_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
