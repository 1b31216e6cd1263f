/*
 * test_json_writer.c - the streaming JSON writer (report/json_writer.c).
 *
 * Each case writes a small document into a memory stream and compares the exact bytes with a
 * hand-written expectation: nesting and commas (compact and pretty), escaping of quotes,
 * backslashes, control characters and UTF-8 (valid sequences verbatim, invalid bytes as
 * U+FFFD), integers at their limits, doubles in their
 * shortest exact form, and non-finite numbers written as null. The escaped and numeric cases
 * are also parsed back with cJSON, so a byte-exact expectation that is itself wrong JSON would
 * not go unnoticed.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/json_writer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A writer on a memory stream; text() closes it and returns what was written (caller frees). */
typedef struct Mem {
    FILE *f;
    char *buf;
    size_t len;
    JsonWriter w;
} Mem;

static void mem_open(Mem *m, bool is_pretty)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
    json_writer_init(&m->w, m->f, is_pretty);
}

static char *mem_text(Mem *m)
{
    assert_int_equal(fclose(m->f), 0);
    return m->buf;
}

static void assert_writes(Mem *m, const char *expected)
{
    char *text = mem_text(m);
    assert_string_equal(text, expected);
    free(text);
}

static void test_json_writer_empty_containers(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_object(&m.w);
    json_key(&m.w, "a");
    json_begin_array(&m.w);
    json_end_array(&m.w);
    json_key(&m.w, "o");
    json_begin_object(&m.w);
    json_end_object(&m.w);
    json_end_object(&m.w);
    assert_writes(&m, "{\"a\":[],\"o\":{}}");
}

/* Commas between siblings at every level, none after the last, none after a key. */
static void test_json_writer_nesting_commas_compact(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_object(&m.w);
    json_kv_u64(&m.w, "n", 1);
    json_key(&m.w, "list");
    json_begin_array(&m.w);
    json_u64(&m.w, 1);
    json_begin_object(&m.w);
    json_kv_bool(&m.w, "t", true);
    json_kv_bool(&m.w, "f", false);
    json_end_object(&m.w);
    json_begin_array(&m.w);
    json_null(&m.w);
    json_end_array(&m.w);
    json_string(&m.w, "x");
    json_end_array(&m.w);
    json_kv_string(&m.w, "s", "y");
    json_end_object(&m.w);
    assert_writes(&m, "{\"n\":1,\"list\":[1,{\"t\":true,\"f\":false},[null],\"x\"],\"s\":\"y\"}");
}

/* Pretty: two spaces per level, ": " after keys, empty containers stay on one line, and a
 * newline after the top-level value. */
static void test_json_writer_nesting_pretty(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, true);
    json_begin_object(&m.w);
    json_kv_u64(&m.w, "a", 1);
    json_key(&m.w, "b");
    json_begin_array(&m.w);
    json_u64(&m.w, 2);
    json_begin_object(&m.w);
    json_end_object(&m.w);
    json_end_array(&m.w);
    json_end_object(&m.w);
    assert_writes(&m, "{\n"
                      "  \"a\": 1,\n"
                      "  \"b\": [\n"
                      "    2,\n"
                      "    {}\n"
                      "  ]\n"
                      "}\n");
}

/* Two documents on one stream (json_writer_init again) do not share comma state. */
static void test_json_writer_init_resets_state(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_array(&m.w);
    json_u64(&m.w, 1);
    json_end_array(&m.w);
    json_writer_init(&m.w, m.f, false);
    json_begin_array(&m.w);
    json_u64(&m.w, 2);
    json_end_array(&m.w);
    assert_writes(&m, "[1][2]");
}

/* Quote, backslash, the three named controls, other controls as \u00XX; '/' and DEL (0x7f)
 * need no escape and stay as they are. */
static void test_json_string_escapes_quotes_and_controls(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_array(&m.w);
    json_string(&m.w, "a\"b\\c\nd\re\tf\x01g\x1fh/\x7f");
    json_end_array(&m.w);
    char *text = mem_text(&m);
    assert_string_equal(text, "[\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u001fh/\x7f\"]");
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_string_equal(cJSON_GetArrayItem(root, 0)->valuestring,
                        "a\"b\\c\nd\re\tf\x01g\x1fh/\x7f");
    cJSON_Delete(root);
    free(text);
}

/* Keys are escaped the same way as values. */
static void test_json_key_escaped(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_object(&m.w);
    json_kv_string(&m.w, "k\"\x02", "v");
    json_end_object(&m.w);
    char *text = mem_text(&m);
    assert_string_equal(text, "{\"k\\\"\\u0002\":\"v\"}");
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(root, "k\"\x02")->valuestring, "v");
    cJSON_Delete(root);
    free(text);
}

/* UTF-8 (2-, 3- and 4-byte sequences: é, €, 😀) passes through byte for byte. */
static void test_json_string_utf8_verbatim(void **state)
{
    (void)state;
    const char *s = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
    Mem m;
    mem_open(&m, false);
    json_string(&m.w, s);
    char *text = mem_text(&m);
    assert_string_equal(text, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_string_equal(root->valuestring, s);
    cJSON_Delete(root);
    free(text);
}

/* Bytes that are not UTF-8 become U+FFFD, one per byte that starts no valid sequence: a stray
 * continuation or 0xff, an overlong '/' (c0 af), a UTF-16 surrogate (ed a0 80), a sequence cut
 * short (e2 82 at the end). The report stays valid JSON. */
static void test_json_string_invalid_utf8_replaced(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_array(&m.w);
    json_string(&m.w, "a\x80" "b\xff");
    json_string(&m.w, "\xc0\xaf");
    json_string(&m.w, "\xed\xa0\x80");
    json_string(&m.w, "\xc3\xa9\xe2\x82");
    json_end_array(&m.w);
    char *text = mem_text(&m);
    assert_string_equal(text, "[\"a\\ufffdb\\ufffd\",\"\\ufffd\\ufffd\","
                              "\"\\ufffd\\ufffd\\ufffd\",\"\xc3\xa9\\ufffd\\ufffd\"]");
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_string_equal(cJSON_GetArrayItem(root, 0)->valuestring, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    cJSON_Delete(root);
    free(text);
}

static void test_json_string_empty(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_string(&m.w, "");
    assert_writes(&m, "\"\"");
}

static void test_json_u64_limits(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_array(&m.w);
    json_u64(&m.w, 0);
    json_u64(&m.w, UINT64_MAX);
    json_end_array(&m.w);
    assert_writes(&m, "[0,18446744073709551615]");
}

/* %.15g when it reads back exactly (0.1, 1e-300, 175e9, -2.5), %.17g when not (1/3, 0.1+0.2),
 * integers without a fraction, negative zero kept. */
static void test_json_double_shortest_exact(void **state)
{
    (void)state;
    const double values[] = {0.1, 1.0 / 3.0, 0.1 + 0.2, 1e-300, 175e9, -2.5, 3.0, -0.0};
    Mem m;
    mem_open(&m, false);
    json_begin_array(&m.w);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        json_double(&m.w, values[i]);
    json_end_array(&m.w);
    char *text = mem_text(&m);
    assert_string_equal(text, "[0.1,0.33333333333333331,0.30000000000000004,1e-300,175000000000,"
                              "-2.5,3,-0]");
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_int_equal(cJSON_GetArraySize(root), 8);
    for (int i = 0; i < 8; i++)
        assert_true(cJSON_GetArrayItem(root, i)->valuedouble == values[i]); /* exact */
    cJSON_Delete(root);
    free(text);
}

/* JSON has no NaN or infinity: they become null, and the document stays valid. */
static void test_json_double_non_finite_is_null(void **state)
{
    (void)state;
    Mem m;
    mem_open(&m, false);
    json_begin_object(&m.w);
    json_kv_double(&m.w, "nan", NAN);
    json_kv_double(&m.w, "inf", INFINITY);
    json_kv_double(&m.w, "ninf", -INFINITY);
    json_kv_double(&m.w, "one", 1.0);
    json_end_object(&m.w);
    char *text = mem_text(&m);
    assert_string_equal(text, "{\"nan\":null,\"inf\":null,\"ninf\":null,\"one\":1}");
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "inf")));
    cJSON_Delete(root);
    free(text);
}

/* A deep but allowed nesting (JSON_WRITER_MAX_DEPTH - 1 levels) closes correctly. */
static void test_json_writer_max_depth(void **state)
{
    (void)state;
    enum { LEVELS = JSON_WRITER_MAX_DEPTH - 1 };
    Mem m;
    mem_open(&m, false);
    for (int i = 0; i < LEVELS; i++)
        json_begin_array(&m.w);
    json_u64(&m.w, 7);
    json_u64(&m.w, 8);
    for (int i = 0; i < LEVELS; i++)
        json_end_array(&m.w);
    char expected[2 * LEVELS + 8];
    memset(expected, '[', LEVELS);
    memcpy(expected + LEVELS, "7,8", 3);
    memset(expected + LEVELS + 3, ']', LEVELS);
    expected[2 * LEVELS + 3] = '\0';
    assert_writes(&m, expected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_writer_empty_containers),
        cmocka_unit_test(test_json_writer_nesting_commas_compact),
        cmocka_unit_test(test_json_writer_nesting_pretty),
        cmocka_unit_test(test_json_writer_init_resets_state),
        cmocka_unit_test(test_json_string_escapes_quotes_and_controls),
        cmocka_unit_test(test_json_key_escaped),
        cmocka_unit_test(test_json_string_utf8_verbatim),
        cmocka_unit_test(test_json_string_invalid_utf8_replaced),
        cmocka_unit_test(test_json_string_empty),
        cmocka_unit_test(test_json_u64_limits),
        cmocka_unit_test(test_json_double_shortest_exact),
        cmocka_unit_test(test_json_double_non_finite_is_null),
        cmocka_unit_test(test_json_writer_max_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
