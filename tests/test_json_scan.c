/*
 * test_json_scan.c - what cJSON accepts and zerosim must not (inputs/json_scan.c): duplicate
 * keys (also when spelled with escapes), numbers that overflow a double, bytes that are not
 * UTF-8; each named with line:column and, for keys, the JSON path. Also the same through
 * jsonfile_parse, which every input goes through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/json_scan.h"
#include "inputs/jsonfile.h"

#include <string.h>

static int scan(const char *text, Err *err)
{
    return json_scan_check("f.json", text, strlen(text), err);
}

static void test_json_scan_check_accepts_clean_json(void **state)
{
    (void)state;
    Err err = {0};
    assert_int_equal(scan("{\"a\": 1, \"b\": {\"a\": [1, 1.7e308, -1e-400, \"\\u00e9\"]}, "
                          "\"c\": \"x\\\"y\", \"\\u00e9t\\u00e9\": true}",
                          &err),
                     0);
    assert_int_equal(scan("[{\"a\": 1}, {\"a\": 2}]", &err), 0); /* same key, other objects */
    assert_int_equal(scan("\"caf\xc3\xa9\"", &err), 0);
    assert_false(err.is_set);
}

static void test_json_scan_check_names_a_duplicate_key(void **state)
{
    (void)state;
    Err err = {0};
    assert_int_equal(scan("{\"z\": {\"stage\": 3,\n  \"stage\": 0}}", &err), -1);
    assert_string_equal(err.msg, "f.json:2:3: z.stage: expected each key once in an object, got "
                                 "it again (first at 1:8; DeepSpeed and HuggingFace would take "
                                 "the last)");
    Err escaped = {0};
    assert_int_equal(scan("{\"stage\": 3, \"st\\u0061ge\": 0}", &escaped), -1);
    assert_non_null(strstr(escaped.msg, "f.json:1:14: stage: expected each key once"));
}

static void test_json_scan_check_names_an_overflowing_number(void **state)
{
    (void)state;
    Err err = {0};
    assert_int_equal(scan("{\"a\": {\"b\": [1, -1e999]}}", &err), -1);
    assert_string_equal(err.msg, "f.json:1:17: a.b: expected a number a double can hold, got "
                                 "-1e999");
}

static void test_json_scan_check_names_invalid_utf8(void **state)
{
    (void)state;
    Err err = {0};
    assert_int_equal(scan("{\"a\":\n \"\xc3\xa9\xed\xa0\x80\"}", &err), -1); /* a surrogate */
    assert_string_equal(err.msg, "f.json:2:4: expected UTF-8 text, got the byte 0xed");
}

static void test_jsonfile_parse_refuses_duplicates(void **state)
{
    (void)state;
    const char *text = "{\"stage\": 3, \"stage\": 0}";
    Err err = {0};
    assert_null(jsonfile_parse("ds.json", text, strlen(text), &err));
    assert_non_null(strstr(err.msg, "ds.json:1:14: stage: expected each key once"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_scan_check_accepts_clean_json),
        cmocka_unit_test(test_json_scan_check_names_a_duplicate_key),
        cmocka_unit_test(test_json_scan_check_names_an_overflowing_number),
        cmocka_unit_test(test_json_scan_check_names_invalid_utf8),
        cmocka_unit_test(test_jsonfile_parse_refuses_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
