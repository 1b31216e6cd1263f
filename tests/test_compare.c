/*
 * test_compare.c - `zerosim compare`'s pieces: a run report read back (inputs/run_summary.c),
 * the side-by-side text and JSON (report/compare_report.c) and the CSV (study/compare.c).
 *
 * Two hand-made reports: column A steps in 2 s with 4 GiB of activations, column B in 3 s
 * with 2 GiB and runs out of GPU memory 1 GiB short; the text must show 2.0000 and 3.0000
 * with the change +50.0%, activations 4.00 -> 2.00 (-50.0%), and B's verdict and hint; rows
 * that are zero in every column are left out. A report without one of the table's numbers is
 * refused naming the path.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/compare_report.h"
#include "study/compare.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A run report with every row of the table: value for time.step_s and the activations,
 * 0 elsewhere. */
static char *report(double step_s, double activations_bytes, bool fits)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "command", "run");
    for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++) {
        const char *path = run_summary_row(k)->path;
        cJSON *node = root;
        char key[96];
        for (const char *p = path;;) {
            size_t n = strcspn(p, ".");
            memcpy(key, p, n);
            key[n] = '\0';
            if (p[n] == '\0') {
                double v = strcmp(path, "time.step_s") == 0 ? step_s
                           : strcmp(path, "memory.gpu_breakdown_bytes.activations") == 0
                               ? activations_bytes
                               : 0.0;
                cJSON_AddNumberToObject(node, key, v);
                break;
            }
            cJSON *child = cJSON_GetObjectItemCaseSensitive(node, key);
            if (child == NULL)
                child = cJSON_AddObjectToObject(node, key);
            node = child;
            p += n + 1;
        }
    }
    cJSON *model = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(model, "name", "tiny");
    cJSON *cluster = cJSON_AddObjectToObject(root, "cluster");
    cJSON_AddStringToObject(cluster, "platform", "p");
    cJSON_AddNumberToObject(cluster, "gpus", 8);
    cJSON *config = cJSON_AddObjectToObject(root, "config");
    cJSON_AddNumberToObject(config, "zero_stage", fits ? 2 : 3);
    cJSON_AddNumberToObject(config, "micro_batch", 4);
    cJSON_AddNumberToObject(config, "grad_accum", 2);
    cJSON_AddStringToObject(config, "offload_optimizer", "none");
    cJSON_AddStringToObject(config, "offload_param", "none");
    cJSON_AddStringToObject(config, "activation_checkpointing", "none");
    cJSON *verdict = cJSON_AddObjectToObject(root, "verdict");
    cJSON_AddBoolToObject(verdict, "fits", fits);
    if (!fits) {
        cJSON_AddStringToObject(verdict, "runs_out", "gpu");
        cJSON_AddNumberToObject(verdict, "short_bytes", GIB);
        cJSON *hint = cJSON_AddObjectToObject(verdict, "hint");
        cJSON_AddStringToObject(hint, "change", "--micro-batch 2 --grad-accum 4");
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static char *capture(void (*fn)(FILE *, const void *), const void *data)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    fn(f, data);
    fclose(f);
    return buf;
}

static void text_writer(FILE *f, const void *r)
{
    compare_report_text(f, r);
}

static void json_writer(FILE *f, const void *r)
{
    compare_report_json(f, r);
}

typedef struct Fixture {
    RunSummary s[2];
    CompareColumn columns[2];
    const char *labels[2];
    const StrList *args[2];
    CompareReport report;
} Fixture;

static void fixture_build(Fixture *f)
{
    Err err = {0};
    char *a = report(2.0, 4 * GIB, true), *b = report(3.0, 2 * GIB, false);
    if (run_summary_read(&f->s[0], "column 1", a, strlen(a), &err) ||
        run_summary_read(&f->s[1], "column 2", b, strlen(b), &err))
        fail_msg("%s", err.msg);
    free(a);
    free(b);
    for (int c = 0; c < 2; c++) {
        snprintf(f->columns[c].label, sizeof f->columns[c].label, "%s", c ? "zero3" : "zero2");
        strlist_init(&f->columns[c].run_args);
        strlist_addf(&f->columns[c].run_args, "--config");
        strlist_addf(&f->columns[c].run_args, "%s", f->columns[c].label);
        f->labels[c] = f->columns[c].label;
        f->args[c] = &f->columns[c].run_args;
    }
    f->report = (CompareReport){2, f->labels, f->args, f->s};
}

static void fixture_fini(Fixture *f)
{
    for (int c = 0; c < 2; c++)
        strlist_fini(&f->columns[c].run_args);
}

static void assert_contains(const char *text, const char *part)
{
    if (strstr(text, part) == NULL)
        fail_msg("expected the output to contain \"%s\"; it is:\n%s", part, text);
}

static void test_run_summary_read_values(void **state)
{
    (void)state;
    Fixture f;
    fixture_build(&f);
    assert_true(f.s[0].fits);
    assert_false(f.s[1].fits);
    assert_string_equal(f.s[1].runs_out, "gpu");
    assert_true(f.s[1].short_bytes == GIB);
    assert_string_equal(f.s[1].hint, "--micro-batch 2 --grad-accum 4");
    assert_int_equal(f.s[0].micro_batch, 4);
    assert_int_equal(f.s[0].grad_accum, 2);
    assert_true(f.s[0].values[0] == 2.0); /* row 0 is time.step_s */
    assert_string_equal(run_summary_row(0)->path, "time.step_s");
    fixture_fini(&f);
}

static void test_run_summary_read_refuses_a_missing_number(void **state)
{
    (void)state;
    RunSummary s;
    Err err = {0};
    const char *text = "{\"command\": \"run\", \"time\": {}}";
    assert_int_equal(run_summary_read(&s, "column 1", text, strlen(text), &err), -1);
    assert_string_equal(err.msg, "column 1: time.step_s: expected a number, got none");
    Err err2 = {0};
    const char *estimate = "{\"command\": \"estimate\"}";
    assert_int_equal(run_summary_read(&s, "column 2", estimate, strlen(estimate), &err2), -1);
    assert_string_equal(err2.msg, "column 2: command: expected \"run\", got something else");
}

static void test_compare_report_text_side_by_side(void **state)
{
    (void)state;
    Fixture f;
    fixture_build(&f);
    char *text = capture(text_writer, &f.report);
    assert_contains(text, "zerosim compare: 2 configurations of tiny on p, 8 GPUs\n");
    /* columns as wide as the longest verdict, "gpu 1.00 GiB short" + 2 = 20 */
    assert_contains(text, "\nstage                              "
                          "              ZeRO-2               ZeRO-3\n");
    assert_contains(text, "\nmicro-batch x accumulation                        4 x 2"
                          "                4 x 2\n");
    assert_contains(text, "\nverdict                                            fits"
                          "   gpu 1.00 GiB short\n");
    /* (3 - 2) / 2 = +50%; (2 - 4) / 4 = -50% */
    assert_contains(text, "\n  step time (s)                                  2.0000"
                          "               3.0000               +50.0%\n");
    assert_contains(text, "\n  activations                                      4.00"
                          "                 2.00               -50.0%\n");
    assert_null(strstr(text, "exposed all-reduce")); /* zero in both columns */
    assert_null(strstr(text, "over nvlink"));
    assert_contains(text, "hint for zero3: change to --micro-batch 2 --grad-accum 4\n");
    free(text);
    fixture_fini(&f);
}

static void test_compare_report_json_columns(void **state)
{
    (void)state;
    Fixture f;
    fixture_build(&f);
    char *text = capture(json_writer, &f.report);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_string_equal(cJSON_GetObjectItem(root, "command")->valuestring, "compare");
    const cJSON *cols = cJSON_GetObjectItem(root, "columns");
    assert_int_equal(cJSON_GetArraySize(cols), 2);
    const cJSON *b = cJSON_GetArrayItem(cols, 1);
    assert_string_equal(cJSON_GetObjectItem(b, "label")->valuestring, "zero3");
    const cJSON *metrics = cJSON_GetObjectItem(b, "metrics");
    assert_true(cJSON_GetObjectItem(metrics, "time.step_s")->valuedouble == 3.0);
    assert_int_equal(cJSON_GetArraySize(metrics), RUN_SUMMARY_N_ROWS);
    const cJSON *v = cJSON_GetObjectItem(b, "verdict");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(v, "fits")));
    assert_string_equal(cJSON_GetObjectItem(v, "hint")->valuestring,
                        "--micro-batch 2 --grad-accum 4");
    const cJSON *args = cJSON_GetObjectItem(b, "run_args");
    assert_string_equal(cJSON_GetArrayItem(args, 1)->valuestring, "zero3");
    cJSON_Delete(root);
    free(text);
    fixture_fini(&f);
}

static void test_compare_csv_write_rows(void **state)
{
    (void)state;
    Fixture f;
    fixture_build(&f);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    compare_csv_write(out, f.columns, f.s, 2);
    fclose(out);
    assert_true(strncmp(buf, "label,model,config_file,platform,gpus,zero_stage,", 49) == 0);
    assert_contains(buf, ",hint,time.step_s,throughput.tokens_per_s,");
    /* a hint with spaces is one field; the row's step time follows it */
    assert_contains(buf, "\nzero3,tiny,,p,8,3,none,none,,4,2,0,0,none,false,gpu,1073741824,"
                         "--micro-batch 2 --grad-accum 4,3,");
    assert_contains(buf, "\nzero2,tiny,,p,8,2,none,none,,4,2,0,0,none,true,,0,,2,");
    int lines = 0;
    for (const char *p = buf; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 3);
    free(buf);
    fixture_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_summary_read_values),
        cmocka_unit_test(test_run_summary_read_refuses_a_missing_number),
        cmocka_unit_test(test_compare_report_text_side_by_side),
        cmocka_unit_test(test_compare_report_json_columns),
        cmocka_unit_test(test_compare_csv_write_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
