/*
 * test_cli.c - the command line's shared helpers (cli/cli.c).
 *
 * The converters (cli_count, cli_bytes, cli_choice, cli_setup_options), the option parser
 * (cli_parse: values, flags, --help, an unknown option with and without a suggestion, a
 * missing value, an option given where a value belongs), cli_require and cli_value. Every refusal must return EXIT_BAD_USAGE, leave
 * the output alone and print exactly one line on stderr, so each call runs with stderr
 * redirected to a temporary file that the case reads back and compares.
 */
#define _POSIX_C_SOURCE 200809L /* dup, fileno */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- stderr capture ---- */

static int saved_stderr = -1;
static FILE *captured;

static void capture_begin(void)
{
    fflush(stderr);
    captured = tmpfile();
    assert_non_null(captured);
    saved_stderr = dup(fileno(stderr));
    assert_true(saved_stderr >= 0);
    assert_true(dup2(fileno(captured), fileno(stderr)) >= 0);
}

/* Restores stderr and returns what was written meanwhile (static storage). */
static const char *capture_end(void)
{
    static char text[2048];
    fflush(stderr);
    assert_true(dup2(saved_stderr, fileno(stderr)) >= 0);
    close(saved_stderr);
    rewind(captured);
    size_t n = fread(text, 1, sizeof text - 1, captured);
    text[n] = '\0';
    fclose(captured);
    return text;
}

/* ---- cli_count ---- */

static int count(const char *text, uint64_t *out, const char **err_text)
{
    capture_begin();
    int rc = cli_count("run", "--gpus", text, out);
    *err_text = capture_end();
    return rc;
}

static void test_cli_count_accepts_positive_integers(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t value;
    } ok[] = {{"1", 1}, {"64", 64}, {"007", 7}, {"1125899906842624", 1ull << 50}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 0;
        const char *msg;
        assert_int_equal(count(ok[i].text, &v, &msg), 0);
        assert_int_equal(v, ok[i].value);
        assert_string_equal(msg, "");
    }
}

static void test_cli_count_null_leaves_value(void **state)
{
    (void)state;
    uint64_t v = 42;
    const char *msg;
    assert_int_equal(count(NULL, &v, &msg), 0);
    assert_int_equal(v, 42);
    assert_string_equal(msg, "");
}

/* Zero, negatives, fractions, suffixes, trailing text, empty, above 2^50 and beyond 64 bits. */
static void test_cli_count_refuses_non_positive_and_junk(void **state)
{
    (void)state;
    static const char *const bad[] = {"0",  "-1",   "1.5", "8K", "8 ", "",
                                      "x8", "1125899906842625", "99999999999999999999", NULL};
    for (size_t i = 0; bad[i] != NULL; i++) {
        uint64_t v = 42;
        const char *msg;
        assert_int_equal(count(bad[i], &v, &msg), EXIT_BAD_USAGE);
        assert_int_equal(v, 42);
        char expected[256];
        snprintf(expected, sizeof expected,
                 "zerosim run: --gpus: expected a positive integer, got \"%s\" (see zerosim run "
                 "--help)\n",
                 bad[i]);
        assert_string_equal(msg, expected);
    }
}

/* ---- cli_bytes ---- */

static void test_cli_bytes_binary_suffixes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t value;
    } ok[] = {{"8", 8},           {"64K", 65536},     {"64k", 65536}, {"1M", 1048576},
              {"3m", 3145728},    {"8G", 8ull << 30}, {"1048576G", 1ull << 50}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 0;
        capture_begin();
        int rc = cli_bytes("collective", "--bytes", ok[i].text, &v);
        const char *msg = capture_end();
        assert_int_equal(rc, 0);
        assert_int_equal(v, ok[i].value);
        assert_string_equal(msg, "");
    }
}

/* A suffix alone, two suffixes, an unknown one, zero, and 2^50 exceeded once scaled. */
static void test_cli_bytes_refuses_bad_sizes(void **state)
{
    (void)state;
    static const char *const bad[] = {"K", "8KB", "8T", "0K", "-1M", "1048577G", "2.5M", NULL};
    for (size_t i = 0; bad[i] != NULL; i++) {
        uint64_t v = 42;
        capture_begin();
        int rc = cli_bytes("collective", "--bytes", bad[i], &v);
        const char *msg = capture_end();
        assert_int_equal(rc, EXIT_BAD_USAGE);
        assert_int_equal(v, 42);
        char expected[256];
        snprintf(expected, sizeof expected,
                 "zerosim collective: --bytes: expected a positive size in bytes (e.g. 8, 64K, "
                 "1M, 8G), got \"%s\" (see zerosim collective --help)\n",
                 bad[i]);
        assert_string_equal(msg, expected);
    }
}

/* ---- cli_choice ---- */

/* Rank lists: ranks and ascending ranges below n; signs, blanks, empty items and ranks past
 * the end are refused (strtoul alone would take " 1", "+1" and wrap "-1"). */
static void test_cli_ranks_lists_and_ranges(void **state)
{
    (void)state;
    bool flags[16] = {0};
    assert_int_equal(cli_ranks("0,2,8-10", 16, flags), 0);
    const bool want[16] = {[0] = true, [2] = true, [8] = true, [9] = true, [10] = true};
    assert_memory_equal(flags, want, sizeof want);
    memset(flags, 0, sizeof flags);
    assert_int_equal(cli_ranks("15", 16, flags), 0);
    assert_true(flags[15]);
    const char *bad[] = {"", "16", "0-16", "3-2", "-1", "+1", " 1", "1,", ",1", "1,,2", "1-",
                         "1-x", "a", "18446744073709551616", "0-18446744073709551615"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (cli_ranks(bad[i], 16, flags) != -1)
            fail_msg("cli_ranks accepted \"%s\"", bad[i]);
}

static void test_cli_shard_parses_and_refuses(void **state)
{
    (void)state;
    uint64_t i = 7, n = 9;
    assert_int_equal(cli_shard("sweep", NULL, &i, &n), 0);
    assert_true(i == 7 && n == 9);
    assert_int_equal(cli_shard("sweep", "3/4", &i, &n), 0);
    assert_true(i == 3 && n == 4);
    assert_int_equal(cli_shard("sweep", "0/4294967296", &i, &n), 0);
    const char *bad[] = {"4/4", "0/0", "-1/4", "1/-4", "+1/4", " 1/4", "1/ 4", "1/4x", "1",
                         "/4", "1/", "0/4294967297", "0/18446744073709551616"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        if (cli_shard("sweep", bad[k], &i, &n) != EXIT_BAD_USAGE)
            fail_msg("cli_shard accepted \"%s\"", bad[k]);
}

static void test_cli_choice_parses_table_values(void **state)
{
    (void)state;
    int v = -7;
    capture_begin();
    int rc = cli_choice("run", "--fsdp", &choices_fsdp, true, "hybrid_shard", &v);
    const char *msg = capture_end();
    assert_int_equal(rc, 0);
    assert_int_equal(v, 4); /* FSDP_HYBRID_SHARD: the fsdp table is case-insensitive */
    assert_string_equal(msg, "");

    v = -7;
    assert_int_equal(cli_choice("run", "--fsdp", &choices_fsdp, true, NULL, &v), 0);
    assert_int_equal(v, -7); /* absent: unchanged */

    assert_int_equal(cli_choice("run", "--flash-attention", &choices_on_off, false, "off", &v), 0);
    assert_int_equal(v, 1);
}

/* Unknown values, and the first value when skip_first says it is expressed by leaving the
 * option out, are refused with the list of accepted values. */
static void test_cli_choice_refuses_with_accepted_list(void **state)
{
    (void)state;
    int v = -7;
    capture_begin();
    int rc = cli_choice("run", "--fsdp", &choices_fsdp, true, "none", &v);
    const char *msg = capture_end();
    assert_int_equal(rc, EXIT_BAD_USAGE);
    assert_int_equal(v, -7);
    char expected_list[256];
    choices_expected(&choices_fsdp, true, expected_list, sizeof expected_list);
    assert_null(strstr(expected_list, "none"));
    assert_non_null(strstr(expected_list, "FULL_SHARD"));
    char expected[512];
    snprintf(expected, sizeof expected,
             "zerosim run: --fsdp: expected %s, got \"none\" (see zerosim run --help)\n",
             expected_list);
    assert_string_equal(msg, expected);

    capture_begin();
    rc = cli_choice("run", "--flash-attention", &choices_on_off, false, "ON", &v);
    msg = capture_end();
    assert_int_equal(rc, EXIT_BAD_USAGE); /* on/off is case-sensitive */
    assert_string_equal(msg, "zerosim run: --flash-attention: expected on or off, got \"ON\" "
                             "(see zerosim run --help)\n");
}

/* ---- cli_parse, cli_value, cli_require ---- */

enum { OPT_MODEL, OPT_GPUS, OPT_DRY_RUN, OPT_FLASH, N_OPTS };

static void options_init(CliOption *o)
{
    o[OPT_MODEL] = (CliOption){"--model", true, NULL};
    o[OPT_GPUS] = (CliOption){"--gpus", true, NULL};
    o[OPT_DRY_RUN] = (CliOption){"--dry-run", false, NULL};
    o[OPT_FLASH] = (CliOption){"--flash-attention", true, NULL};
}

static int parse(CliOption *o, int argc, char **argv, const char **out_err)
{
    options_init(o);
    capture_begin();
    int rc = cli_parse("run", "HELP TEXT\n", argc, argv, 2, o, N_OPTS);
    *out_err = capture_end();
    return rc;
}

static void test_cli_parse_values_and_flags(void **state)
{
    (void)state;
    char *argv[] = {"zerosim", "run", "--gpus", "8", "--dry-run", "--model", "gpt2", "--gpus",
                    "16"};
    CliOption o[N_OPTS];
    const char *msg;
    assert_int_equal(parse(o, 9, argv, &msg), 0);
    assert_string_equal(msg, "");
    assert_string_equal(o[OPT_MODEL].value, "gpt2");
    assert_string_equal(o[OPT_GPUS].value, "16"); /* the last one given wins */
    assert_string_equal(o[OPT_DRY_RUN].value, "");
    assert_null(o[OPT_FLASH].value);
    assert_string_equal(cli_value(o, N_OPTS, "--model"), "gpt2");
    assert_null(cli_value(o, N_OPTS, "--flash-attention"));
    assert_null(cli_value(o, N_OPTS, "--nonexistent"));
    /* a value that starts with dashes but is no option of the command is a value */
    char *argv2[] = {"zerosim", "run", "--model", "--my-model.json"};
    assert_int_equal(parse(o, 4, argv2, &msg), 0);
    assert_string_equal(o[OPT_MODEL].value, "--my-model.json");
}

/* "--model --gpus 8": --model has no value; the next option is not taken as one. */
static void test_cli_parse_option_as_value_refused(void **state)
{
    (void)state;
    char *argv[] = {"zerosim", "run", "--model", "--gpus", "8"};
    CliOption o[N_OPTS];
    const char *msg;
    assert_int_equal(parse(o, 5, argv, &msg), EXIT_BAD_USAGE);
    assert_string_equal(msg, "zerosim run: --model: expected a value, got the option --gpus "
                             "(see zerosim run --help)\n");
    assert_null(o[OPT_MODEL].value);
}

static void test_cli_parse_help_returns_one(void **state)
{
    (void)state;
    char *argv[] = {"zerosim", "run", "--gpus", "8", "-h", "--bogus"};
    CliOption o[N_OPTS];
    const char *msg;
    fflush(stdout);
    assert_int_equal(parse(o, 6, argv, &msg), 1); /* before --bogus is looked at */
    assert_string_equal(msg, "");
}

static void test_cli_parse_unknown_option_suggests_closest(void **state)
{
    (void)state;
    char *argv[] = {"zerosim", "run", "--gpu", "8"};
    CliOption o[N_OPTS];
    const char *msg;
    assert_int_equal(parse(o, 4, argv, &msg), EXIT_BAD_USAGE);
    assert_string_equal(msg, "zerosim run: unknown option \"--gpu\" (did you mean \"--gpus\"?) "
                             "(see zerosim run --help)\n");

    char *argv2[] = {"zerosim", "run", "--flash-atention", "on"};
    assert_int_equal(parse(o, 4, argv2, &msg), EXIT_BAD_USAGE);
    assert_string_equal(msg, "zerosim run: unknown option \"--flash-atention\" (did you mean "
                             "\"--flash-attention\"?) (see zerosim run --help)\n");
}

static void test_cli_parse_unknown_option_far_from_all(void **state)
{
    (void)state;
    char *argv[] = {"zerosim", "run", "--zzzzzzzzzzzzzz"};
    CliOption o[N_OPTS];
    const char *msg;
    assert_int_equal(parse(o, 3, argv, &msg), EXIT_BAD_USAGE);
    assert_string_equal(msg, "zerosim run: unknown option \"--zzzzzzzzzzzzzz\" (see zerosim run "
                             "--help)\n");
}

static void test_cli_parse_missing_value(void **state)
{
    (void)state;
    char *argv[] = {"zerosim", "run", "--dry-run", "--gpus"};
    CliOption o[N_OPTS];
    const char *msg;
    assert_int_equal(parse(o, 4, argv, &msg), EXIT_BAD_USAGE);
    assert_string_equal(msg, "zerosim run: --gpus: expected a value, got nothing (see zerosim run "
                             "--help)\n");
    assert_null(o[OPT_GPUS].value);
}

static void test_cli_require_names_first_missing(void **state)
{
    (void)state;
    CliOption o[N_OPTS];
    options_init(o);
    o[OPT_MODEL].value = "gpt2";
    capture_begin();
    int rc = cli_require("run", o, OPT_MODEL, OPT_GPUS);
    const char *msg = capture_end();
    assert_int_equal(rc, EXIT_BAD_USAGE);
    assert_string_equal(msg, "zerosim run: --gpus: expected a value for this required option, "
                             "got nothing (see zerosim run --help)\n");
    o[OPT_GPUS].value = "8";
    assert_int_equal(cli_require("run", o, OPT_MODEL, OPT_GPUS), 0);
}

/* ---- cli_setup_options ---- */

static void test_cli_setup_options_defaults_and_values(void **state)
{
    (void)state;
    EstimateOptions e;
    assert_int_equal(cli_setup_options("estimate", NULL, NULL, NULL, &e), 0);
    assert_int_equal(e.seq_len, 0);
    assert_int_equal(e.recompute, RECOMPUTE_NONE);
    assert_int_equal(e.checkpoint_every, 1);
    assert_true(e.is_flash_attention);

    assert_int_equal(cli_setup_options("estimate", "4096", "every:3", "off", &e), 0);
    assert_int_equal(e.seq_len, 4096);
    assert_int_equal(e.recompute, RECOMPUTE_FULL);
    assert_int_equal(e.checkpoint_every, 3);
    assert_false(e.is_flash_attention);

    capture_begin();
    int rc = cli_setup_options("estimate", NULL, "some", NULL, &e);
    const char *msg = capture_end();
    assert_int_equal(rc, EXIT_BAD_USAGE);
    assert_string_equal(msg, "zerosim estimate: --activation-checkpointing: expected none, "
                             "selective, full, selective-op or every:N, got \"some\" (see "
                             "zerosim estimate "
                             "--help)\n");
}

/* cli_setup_defaults names exactly the options left out. */
static void test_cli_setup_defaults_lists_absent_options(void **state)
{
    (void)state;
    StrList d;
    strlist_init(&d);
    ModelConfig model = {.max_seq = 4096};
    cli_setup_defaults(NULL, "full", NULL, &model, &d);
    assert_int_equal(d.n_items, 2);
    assert_string_equal(d.items[0], "--seq-len 2048 (training default: 2048 tokens, or the "
                                    "model's context when shorter; the model's context is "
                                    "4096)");
    assert_string_equal(d.items[1], "--flash-attention on");
    strlist_fini(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_count_accepts_positive_integers),
        cmocka_unit_test(test_cli_count_null_leaves_value),
        cmocka_unit_test(test_cli_count_refuses_non_positive_and_junk),
        cmocka_unit_test(test_cli_bytes_binary_suffixes),
        cmocka_unit_test(test_cli_bytes_refuses_bad_sizes),
        cmocka_unit_test(test_cli_ranks_lists_and_ranges),
        cmocka_unit_test(test_cli_shard_parses_and_refuses),
        cmocka_unit_test(test_cli_choice_parses_table_values),
        cmocka_unit_test(test_cli_choice_refuses_with_accepted_list),
        cmocka_unit_test(test_cli_parse_values_and_flags),
        cmocka_unit_test(test_cli_parse_option_as_value_refused),
        cmocka_unit_test(test_cli_parse_help_returns_one),
        cmocka_unit_test(test_cli_parse_unknown_option_suggests_closest),
        cmocka_unit_test(test_cli_parse_unknown_option_far_from_all),
        cmocka_unit_test(test_cli_parse_missing_value),
        cmocka_unit_test(test_cli_require_names_first_missing),
        cmocka_unit_test(test_cli_setup_options_defaults_and_values),
        cmocka_unit_test(test_cli_setup_defaults_lists_absent_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
