/*
 * test_grid.c - grid files of `zerosim sweep` (inputs/grid.c): expansion order and count,
 * canonical keys, derived configs and platforms, reports read back, and the exact message
 * of each bad grid.
 *
 * Grids refer to shipped models, configs and platforms of the source tree. Running points is
 * tests/test_sweep.c's part.
 */
#define _DEFAULT_SOURCE /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/ds_config.h"
#include "inputs/grid.h"
#include "inputs/grid_point.h"
#include "inputs/grid_report.h"
#include "inputs/platform.h"
#include "model/setup.h"
#include "schedule/fsdp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA ZEROSIM_SOURCE_DIR
#define TITAN DATA "/platforms/workstation-2x-titan-rtx.json"

/* The required lists, then `extra` (starting with a comma, or ""). */
#define GRID(extra)                                                                           \
    "{\"models\": [\"gpt2-1.5b\"], \"configs\": [\"zero2\"], "                               \
    "\"platforms\": [\"workstation-2x-titan-rtx\"]" extra "}"

static Grid *parse_ok(const char *text)
{
    Err err = {0};
    Grid *g = grid_parse("g.json", text, strlen(text), DATA, &err);
    if (g == NULL)
        fail_msg("grid rejected: %s", err.msg);
    return g;
}

static void assert_error(const char *text, const char *expected)
{
    Err err = {0};
    Grid *g = grid_parse("g.json", text, strlen(text), DATA, &err);
    if (g != NULL) {
        grid_destroy(g);
        fail_msg("grid accepted, expected: %s", expected);
    }
    assert_string_equal(err.msg, expected);
}

static void assert_key(const Grid *g, size_t id, const char *expected)
{
    char *key = grid_point_key(g, id);
    assert_string_equal(key, expected);
    free(key);
}

static void test_grid_parse_expands_last_dimension_fastest(void **state)
{
    (void)state;
    Grid *g = parse_ok("{\"models\": [\"gpt2-1.5b\", \"llama-2-7b\"], "
                       "\"configs\": [\"zero1\", \"zero3\"], "
                       "\"platforms\": \"workstation-2x-titan-rtx\", \"gpus\": [1, 2], "
                       "\"activation_checkpointing\": [\"none\", \"every:2\"]}");
    assert_int_equal(grid_command(g), GRID_COMMAND_RUN);
    assert_int_equal(grid_n_points(g), 2 * 2 * 1 * 2 * 2);
    assert_int_equal(grid_n_params(g), 5);
    const char *names[] = {"model", "config", "platform", "gpus", "activation_checkpointing"};
    for (size_t k = 0; k < 5; k++)
        assert_string_equal(grid_param_name(g, k), names[k]);
    assert_key(g, 0, "command=run;model=gpt2-1.5b;config=zero1;platform=workstation-2x-titan-rtx;"
                     "gpus=1;activation_checkpointing=none");
    assert_key(g, 1, "command=run;model=gpt2-1.5b;config=zero1;platform=workstation-2x-titan-rtx;"
                     "gpus=1;activation_checkpointing=every:2");
    assert_key(g, 2, "command=run;model=gpt2-1.5b;config=zero1;platform=workstation-2x-titan-rtx;"
                     "gpus=2;activation_checkpointing=none");
    assert_key(g, 4, "command=run;model=gpt2-1.5b;config=zero3;platform=workstation-2x-titan-rtx;"
                     "gpus=1;activation_checkpointing=none");
    assert_key(g, 15, "command=run;model=llama-2-7b;config=zero3;platform=workstation-2x-titan-"
                      "rtx;gpus=2;activation_checkpointing=every:2");
    assert_string_equal(grid_param_value(g, 13, 0), "llama-2-7b");
    assert_string_equal(grid_param_value(g, 13, 3), "1");
    /* Every key is different. */
    for (size_t a = 0; a < grid_n_points(g); a++)
        for (size_t b = a + 1; b < grid_n_points(g); b++) {
            char *ka = grid_point_key(g, a), *kb = grid_point_key(g, b);
            assert_string_not_equal(ka, kb);
            free(ka);
            free(kb);
        }
    grid_destroy(g);
}

/* Keys do not depend on how numbers are written, on list order or on the order of overrides. */
static void test_grid_point_key_is_canonical(void **state)
{
    (void)state;
    Grid *a = parse_ok(GRID(", \"seq_len\": [128.0, 2048], \"overrides\": {"
                            "\"pcie.gpu_link.bw_bytes_per_s\": [12e9, 2.4e10], "
                            "\"cpu.dram_bw_bytes_per_s\": 1.5e11}"));
    Grid *b = parse_ok(GRID(", \"seq_len\": [2048, 128], \"overrides\": {"
                            "\"cpu.dram_bw_bytes_per_s\": [150000000000], "
                            "\"pcie.gpu_link.bw_bytes_per_s\": [24000000000, 12000000000]}"));
    assert_int_equal(grid_n_points(a), 4);
    assert_string_equal(grid_param_name(a, 4), "overrides.cpu.dram_bw_bytes_per_s");
    assert_string_equal(grid_param_name(a, 5), "overrides.pcie.gpu_link.bw_bytes_per_s");
    assert_key(a, 1, "command=run;model=gpt2-1.5b;config=zero2;platform=workstation-2x-titan-rtx;"
                     "seq_len=128;overrides.cpu.dram_bw_bytes_per_s=150000000000;"
                     "overrides.pcie.gpu_link.bw_bytes_per_s=24000000000");
    /* The same points in another order: each key, and its content id, is in both. */
    for (size_t i = 0; i < 4; i++) {
        char *ka = grid_point_key(a, i);
        bool found = false;
        for (size_t j = 0; j < 4; j++) {
            char *kb = grid_point_key(b, j);
            if (strcmp(ka, kb) == 0) {
                found = true;
                assert_true(grid_point_id(a, i) == grid_point_id(b, j));
            }
            free(kb);
        }
        if (!found)
            fail_msg("key %s of one grid is not in the other", ka);
        free(ka);
    }
    /* ids are FNV-1a-64 of the key, mixed by MurmurHash3 fmix64, to 53 bits, computed independently in Python (h =
     * 0xcbf29ce484222325; per byte h ^= b, h *= 0x100000001b3 mod 2^64; fmix64; & (2^53 - 1)) */
    assert_true(grid_point_id(a, 1) == UINT64_C(1247217963482493));
    /* the files point 1 reads: its model, config and platform, with their digests */
    const GridInput *inputs[GRID_MAX_POINT_INPUTS];
    assert_int_equal(grid_point_inputs(a, 1, inputs), 3);
    assert_non_null(strstr(inputs[0]->path, "/workloads/models/gpt2-1.5b.json"));
    assert_non_null(strstr(inputs[1]->path, "/workloads/ds_configs/zero2.json"));
    assert_non_null(strstr(inputs[2]->path, "/platforms/workstation-2x-titan-rtx.json"));
    grid_destroy(a);
    grid_destroy(b);
    Grid *e = parse_ok(GRID(", \"command\": \"estimate\", \"overrides\": {"
                            "\"gpu.gemm_efficiency\": 0.55}"));
    assert_key(e, 0, "command=estimate;model=gpt2-1.5b;config=zero2;"
                     "platform=workstation-2x-titan-rtx;overrides.gpu.gemm_efficiency=0.55");
    grid_destroy(e);
}

static void test_grid_parse_errors(void **state)
{
    (void)state;
    assert_error(GRID(", \"model\": [\"gpt2-1.5b\"]"),
                 "g.json: model: expected a known key, got unknown key \"model\" (did you mean "
                 "\"models\"?)");
    assert_error("{\"configs\": [\"zero2\"], \"platforms\": [\"workstation-2x-titan-rtx\"]}",
                 "g.json: models: expected a list of strings (or one): a shipped model name "
                 "or a .json path, got nothing (the key is required)");
    assert_error(GRID(", \"gpus\": []"),
                 "g.json: gpus: expected a list of integers in [1, 1073741824] (or one), got an "
                 "empty list");
    assert_error(GRID(", \"gpus\": [2, \"8\"]"),
                 "g.json: gpus[1]: expected integer in [1, 1073741824], got \"8\"");
    assert_error(GRID(", \"gpus\": 1.5"),
                 "g.json: gpus: expected integer in [1, 1073741824], got 1.5");
    assert_error(GRID(", \"seq_len\": [128, 256, 128]"),
                 "g.json: seq_len[2]: expected a value not listed before, got 128 again (it is "
                 "seq_len[0])");
    assert_error(GRID(", \"fsdp\": [\"FULL\"]"),
                 "g.json: fsdp[0]: expected none, FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or "
                 "HYBRID_SHARD, got \"FULL\"");
    assert_error(GRID(", \"activation_checkpointing\": [\"every:0\"]"),
                 "g.json: activation_checkpointing[0]: expected none, selective, full, "
                 "selective-op or every:N, got \"every:0\"");
    assert_error(GRID(", \"command\": \"estimate\", \"fsdp\": [\"FULL_SHARD\"]"),
                 "g.json: fsdp: expected no fsdp with \"command\": \"estimate\" (only zerosim "
                 "run takes --fsdp), got a value");
    assert_error(GRID(", \"algo\": [\"ring\", \"butterfly\"]"),
                 "g.json: algo[1]: expected auto, ring, hier, tree, nvls or nvls_tree, got "
                 "\"butterfly\"");
    assert_error(GRID(", \"command\": \"estimate\", \"mode\": \"full\""),
                 "g.json: mode: expected no mode with \"command\": \"estimate\" (only zerosim "
                 "run takes --mode), got a value");
    assert_error(GRID(", \"command\": \"simulate\""),
                 "g.json: command: expected one of \"run\", \"estimate\", got \"simulate\"");
    assert_error("{\"models\": [\"gpt2\"], \"configs\": [\"zero2\"], "
                 "\"platforms\": [\"workstation-2x-titan-rtx\"]}",
                 "g.json: models[0]: model \"gpt2\": expected a .json path or a shipped name "
                 "(dbrx, deepseek-v3, glm-4.5-air, gpt-10t, gpt-1t, gpt-neox-20b, gpt-oss-120b, "
                 "gpt-oss-20b, gpt2-1.5b, gpt3-175b, kimi-k2, "
                 "llama-2-13b, llama-2-70b, llama-2-7b, llama-3-405b, llama-3-70b, llama-3-8b, "
                 "megatron-8.3b, mistral-7b, mixtral-8x7b, mpt-70b, mpt-7b, mt-nlg-530b, "
                 "qwen3-30b-a3b, turing-nlg-17b), "
                 "got neither");
    assert_error(GRID(", \"overrides\": {\"pcie.gpu_link.bw_byte_per_s\": [1e9]}"),
                 "g.json: overrides.pcie.gpu_link.bw_byte_per_s: expected the dotted path of a "
                 "number in platform " TITAN " (e.g. nic.bw_bytes_per_s), got a path it does "
                 "not have (did you mean \"pcie.gpu_link.bw_bytes_per_s\"?)");
    assert_error(GRID(", \"overrides\": {\"pcie.gpu_link\": [1e9]}"),
                 "g.json: overrides.pcie.gpu_link: expected the dotted path of a number in "
                 "platform " TITAN " (e.g. nic.bw_bytes_per_s), got an object");
    assert_error(GRID(", \"overrides\": {\"nic.bw_bytes_per_s\": [1e9, -1]}"),
                 "g.json: overrides.nic.bw_bytes_per_s[1] applied to " TITAN
                 ": nic.bw_bytes_per_s: expected number in [1, 1e+18], got -1");
    assert_error(GRID(", \"overrides\": [\"nic.bw_bytes_per_s\"]"),
                 "g.json: overrides: expected an object, got an array");
    assert_error(GRID(", \"overrides\": {\"nic.bw_bytes_per_s\": []}"),
                 "g.json: overrides.nic.bw_bytes_per_s: expected a list of numbers (or one), "
                 "got an empty list");
    assert_error(GRID(", \"description\": 3"),
                 "g.json: description: expected a string, got 3");
    assert_error("{\"models\": [\"a;b.json\"]}",
                 "g.json: models[0]: expected a name or path without ';' or control "
                 "characters, got \"a;b.json\"");
    assert_error(GRID(",}"), "g.json:1:91: JSON syntax error: expected a valid JSON value, got "
                             "'}}'");
}

/* A calibration file is checked at load; the message after the file is calibration.c's. */
static void test_grid_parse_checks_calibration_files(void **state)
{
    (void)state;
    const char text[] = GRID(", \"calibration\": [\"/nonexistent/calib.json\"]");
    Err err = {0};
    assert_null(grid_parse("g.json", text, strlen(text), DATA, &err));
    const char prefix[] = "g.json: calibration[0]: /nonexistent/calib.json: ";
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
        fail_msg("unexpected message: %s", err.msg);
}

/* The grid's enumerations repeat the commands' parsers; they must accept the same words. */
static void test_grid_enumerations_match_the_commands(void **state)
{
    (void)state;
    const char *ckpt[] = {"none", "selective", "full", "every:1", "every:12", "every:1000000",
                          "every:0", "every:01", "every:", "every:1000001", "every:2x",
                          "Full", "", NULL};
    for (size_t i = 0; ckpt[i]; i++) {
        char text[256];
        snprintf(text, sizeof text, GRID(", \"activation_checkpointing\": \"%s\""), ckpt[i]);
        Err err = {0};
        Grid *g = grid_parse("g.json", text, strlen(text), DATA, &err);
        Recompute r;
        uint32_t every;
        bool is_valid = setup_recompute_parse(ckpt[i], &r, &every) == 0;
        if ((g != NULL) != is_valid)
            fail_msg("activation_checkpointing \"%s\": grid %s, command %s", ckpt[i],
                     g ? "accepts" : "rejects", is_valid ? "accepts" : "rejects");
        grid_destroy(g);
    }
    const char *fsdp[] = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                          "full_shard", NULL};
    for (size_t i = 0; fsdp[i]; i++) {
        FsdpStrategy s;
        assert_int_equal(fsdp_parse(fsdp[i], &s), 0);
        char text[256];
        snprintf(text, sizeof text, GRID(", \"fsdp\": [\"none\", \"%s\"]"), fsdp[i]);
        Grid *g = parse_ok(text);
        assert_int_equal(fsdp_parse(grid_param_value(g, 1, 3), &s), 0);
        grid_destroy(g);
    }
}

static bool has_args(const StrList *args, const char *a, const char *b)
{
    for (size_t i = 0; i + 1 < args->n_items; i++)
        if (strcmp(args->items[i], a) == 0 && (b == NULL || strcmp(args->items[i + 1], b) == 0))
            return true;
    return false;
}

static void test_grid_invocation_arguments(void **state)
{
    (void)state;
    Grid *g = parse_ok(GRID(", \"gpus\": 2, \"seq_len\": 128, \"flash_attention\": \"off\", "
                            "\"fsdp\": [\"none\", \"FULL_SHARD\"], \"algo\": \"hier\", "
                            "\"schedule\": \"textbook\", \"steps\": 3"));
    assert_false(grid_has_derived_files(g));
    GridInvocation inv;
    Err err = {0};
    assert_int_equal(grid_invocation_init(&inv, g, 0, "/nonexistent", &err), 0);
    const char *want[] = {"run", "--model", "gpt2-1.5b", "--config", "zero2", "--platform",
                          "workstation-2x-titan-rtx", "--gpus", "2", "--seq-len", "128",
                          "--flash-attention", "off", "--schedule", "textbook", "--algo",
                          "hier", "--steps", "3", "--json", "-", NULL};
    for (size_t i = 0; want[i]; i++) {
        assert_true(i < inv.args.n_items);
        assert_string_equal(inv.args.items[i], want[i]);
    }
    assert_int_equal(inv.args.n_items, 21);
    assert_string_equal(inv.derived_config, "");
    grid_invocation_fini(&inv);
    assert_int_equal(grid_invocation_init(&inv, g, 1, "/nonexistent", &err), 0);
    assert_true(has_args(&inv.args, "--fsdp", "FULL_SHARD"));
    grid_invocation_fini(&inv);
    grid_destroy(g);
}

/* Batch sizes and overrides reach the child through derived files, removed afterwards. */
static void test_grid_invocation_writes_derived_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_grid.XXXXXX";
    assert_non_null(mkdtemp(dir));
    Grid *g = parse_ok(GRID(", \"micro_batch\": [1, 2], \"global_batch\": [16, 32], "
                            "\"overrides\": {\"nic.bw_bytes_per_s\": 1e9, "
                            "\"pcie.gpu_link.bw_bytes_per_s\": [6e9, 12e9]}"));
    assert_true(grid_has_derived_files(g));
    GridInvocation inv;
    Err err = {0};
    size_t id = 1 * 4 + 1 * 2 + 0; /* micro 2, global 32, pcie 6e9 */
    assert_int_equal(grid_invocation_init(&inv, g, id, dir, &err), 0);
    char want[256];
    snprintf(want, sizeof want, "%s/p%zu-config.json", dir, id);
    assert_string_equal(inv.derived_config, want);
    assert_true(has_args(&inv.args, "--config", want));
    assert_string_equal(inv.source_config, DATA "/workloads/ds_configs/zero2.json");
    assert_string_equal(inv.source_platform, TITAN);
    TrainConfig t;
    assert_int_equal(ds_config_load(&t, inv.derived_config, NULL, &err), 0);
    assert_int_equal(t.micro_batch_per_gpu, 2);
    assert_int_equal(t.train_batch_size, 32);
    assert_int_equal(t.grad_accum_steps, 0); /* derived from the other two */
    assert_int_equal(t.zero.stage, 2);
    ds_config_fini(&t);
    Platform p;
    assert_int_equal(platform_load(&p, inv.derived_platform, NULL, &err), 0);
    assert_true(p.pcie.gpu_link.bw_bytes_per_s == 6e9);
    assert_true(p.nic.link.bw_bytes_per_s == 1e9);
    assert_true(p.pcie.switch_uplink.bw_bytes_per_s == 12e9); /* untouched */
    char config_path[1024];
    snprintf(config_path, sizeof config_path, "%s", inv.derived_config);
    grid_invocation_fini(&inv);
    assert_int_not_equal(access(config_path, F_OK), 0);
    grid_destroy(g);

    /* A micro batch alone drops train_batch_size, keeping the accumulation steps. */
    g = parse_ok(GRID(", \"micro_batch\": 3"));
    assert_int_equal(grid_invocation_init(&inv, g, 0, dir, &err), 0);
    assert_string_equal(inv.derived_platform, "");
    assert_int_equal(ds_config_load(&t, inv.derived_config, NULL, &err), 0);
    assert_int_equal(t.micro_batch_per_gpu, 3);
    assert_int_equal(t.train_batch_size, 0);
    assert_int_equal(t.grad_accum_steps, 1);
    ds_config_fini(&t);
    grid_invocation_fini(&inv);
    grid_destroy(g);
    assert_int_equal(rmdir(dir), 0); /* empty again */
}

static void test_grid_report_read_metrics_and_rows(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_grid.XXXXXX";
    assert_non_null(mkdtemp(dir));
    Grid *g = parse_ok(GRID(", \"micro_batch\": [1, 2], \"overrides\": "
                            "{\"nic.bw_bytes_per_s\": 12.5e9}"));
    GridInvocation inv;
    Err err = {0};
    assert_int_equal(grid_invocation_init(&inv, g, 1, dir, &err), 0);
    const char report[] = "{\"command\": \"run\", \"config\": {\"file\": \"/tmp/x.json\", "
                          "\"zero_stage\": 2}, \"time\": {\"step_s\": 0.25}, \"memory\": "
                          "{\"fits\": false, \"oom\": {\"space\": \"gpu\"}, \"gpu_peak_bytes\": "
                          "123456789012}}";
    GridReport r;
    assert_int_equal(grid_report_read(&r, g, &inv, report, strlen(report), &err), 0);
    assert_int_equal(r.metrics.n_items, grid_n_metrics(g));
    for (size_t k = 0; k < grid_n_metrics(g); k++) {
        const char *name = grid_metric_name(g, k), *v = r.metrics.items[k];
        if (strcmp(name, "time.step_s") == 0)
            assert_string_equal(v, "0.25");
        else if (strcmp(name, "memory.fits") == 0)
            assert_string_equal(v, "false");
        else if (strcmp(name, "memory.oom.space") == 0)
            assert_string_equal(v, "gpu");
        else if (strcmp(name, "memory.gpu_peak_bytes") == 0)
            assert_string_equal(v, "123456789012");
        else if (strcmp(name, "config.zero_stage") == 0)
            assert_string_equal(v, "2");
        else
            assert_string_equal(v, "");
    }
    /* The derived config was a temporary file: the report names its source. */
    assert_non_null(strstr(r.json, "\"file\":\"" DATA "/workloads/ds_configs/zero2.json\""));
    char *row = grid_jsonl_row(g, 1, "ok", 3, NULL, &r);
    assert_string_equal(
        row, "{\"id\":320025929994195,\"key\":\"command=run;model=gpt2-1.5b;config=zero2;"
             "platform=workstation-2x-titan-rtx;micro_batch=2;"
             "overrides.nic.bw_bytes_per_s=12500000000\",\"point\":{\"command\":\"run\","
             "\"model\":\"gpt2-1.5b\",\"config\":\"zero2\",\"platform\":"
             "\"workstation-2x-titan-rtx\",\"micro_batch\":2,\"overrides\":{"
             "\"nic.bw_bytes_per_s\":12500000000}},\"status\":\"ok\",\"exit_code\":3,"
             "\"message\":null,\"report\":{\"command\":\"run\",\"config\":{\"file\":\"" DATA
             "/workloads/ds_configs/zero2.json\",\"zero_stage\":2},\"time\":{\"step_s\":0.25},"
             "\"memory\":{\"fits\":false,\"oom\":{\"space\":\"gpu\"},\"gpu_peak_bytes\":"
             "123456789012}}}");
    char *key = NULL;
    assert_int_equal(grid_jsonl_key(row, strlen(row), &key), 0);
    char *want = grid_point_key(g, 1);
    assert_string_equal(key, want);
    free(want);
    free(key);
    assert_int_equal(grid_jsonl_key(row, strlen(row) - 5, &key), -1); /* torn */
    assert_int_equal(grid_jsonl_key("[1]", 3, &key), -1);
    free(row);
    grid_report_fini(&r);

    row = grid_jsonl_row(g, 0, "error", 1, "x.json: y: expected 1, got 2", NULL);
    assert_non_null(strstr(row, "\"status\":\"error\",\"exit_code\":1,\"message\":"
                                "\"x.json: y: expected 1, got 2\",\"report\":null}"));
    free(row);
    const char wrong[] = "{\"command\": \"estimate\"}";
    assert_int_equal(grid_report_read(&r, g, &inv, wrong, strlen(wrong), &err), -1);
    assert_string_equal(err.msg, "the report: command: expected \"run\", got something else");
    grid_report_fini(&r);
    grid_invocation_fini(&inv);
    grid_destroy(g);
    assert_int_equal(rmdir(dir), 0);
}

static void test_grid_load_missing_file(void **state)
{
    (void)state;
    Err err = {0};
    assert_null(grid_load("/nonexistent/grid.json", DATA, &err));
    assert_string_equal(err.msg, "/nonexistent/grid.json: cannot open grid file: No such file or "
                                 "directory");
    err_clear(&err);
    Grid *g = grid_load(DATA "/workloads/grids/example.json", DATA, &err);
    if (g == NULL)
        fail_msg("the example grid does not load: %s", err.msg);
    assert_true(grid_n_points(g) > 1);
    grid_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_parse_expands_last_dimension_fastest),
        cmocka_unit_test(test_grid_point_key_is_canonical),
        cmocka_unit_test(test_grid_parse_errors),
        cmocka_unit_test(test_grid_parse_checks_calibration_files),
        cmocka_unit_test(test_grid_enumerations_match_the_commands),
        cmocka_unit_test(test_grid_invocation_arguments),
        cmocka_unit_test(test_grid_invocation_writes_derived_files),
        cmocka_unit_test(test_grid_report_read_metrics_and_rows),
        cmocka_unit_test(test_grid_load_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
