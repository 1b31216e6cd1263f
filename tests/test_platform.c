/*
 * test_platform.c - platform JSON -> Platform, validation and resizing (inputs/platform.c).
 *
 * Every shipped platform loads; the format is ours, so unknown keys, missing sections and
 * inconsistent PCIe/NIC layouts are errors with exact messages; --gpus/--nodes resize a
 * platform to whole nodes or one partial node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/platform.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A small valid platform, one section per piece so that a test can drop or alter one. */
#define P_HEAD "{\n  \"name\": \"toy\",\n  \"nodes\": 2,\n  \"gpus_per_node\": 8"
#define P_GPU                                                                                 \
    ",\n  \"gpu\": {\"model\": \"G\", \"fp32_flops_per_s\": 20e12, \"fp16_flops_per_s\": "   \
    "300e12, \"bf16_flops_per_s\": 300e12, \"gemm_efficiency\": 0.8, \"hbm_bytes\": "         \
    "85899345920, \"hbm_bw_bytes_per_s\": 2e12, \"matmul_flops_per_s\": 260e12, "          \
    "\"sm_count\": 108, "                                                                      \
    "\"gemm_fixed_s\": 0, \"gemm_wave_s\": 0, \"memory_bw_efficiency\": 0.87, "               \
    "\"kernel_launch_s\": 4e-6, "                                                             \
    "\"source\": \"datasheet\"}"
#define P_NVLINK                                                                              \
    ",\n  \"nvlink\": {\"bw_bytes_per_s\": 300e9, \"latency_s\": 1e-6, \"nvswitch\": true}"
#define P_PCIE                                                                                \
    ",\n  \"pcie\": {\"gpu_link\": {\"bw_bytes_per_s\": 24e9, \"latency_s\": 5e-7}, "         \
    "\"gpus_per_switch\": 2, \"nics_per_switch\": 2, \"switch_uplink\": {\"bw_bytes_per_s\": " \
    "24e9, \"latency_s\": 5e-7}}"
#define P_CPU                                                                                 \
    ",\n  \"cpu\": {\"model\": \"C\", \"cores\": 128, \"dram_bytes\": 2199023255552, "        \
    "\"dram_bw_bytes_per_s\": 400e9, \"adam_params_per_s_per_core\": 8e7, \"param_host_s\": 2e-5}"
#define P_NVME                                                                                \
    ",\n  \"nvme\": {\"drives\": 8, \"capacity_bytes_per_drive\": 3.84e12, "                  \
    "\"read_bw_bytes_per_s_per_drive\": 7e9, \"write_bw_bytes_per_s_per_drive\": 3.8e9}"
#define P_NIC ",\n  \"nic\": {\"per_node\": 8, \"bw_bytes_per_s\": 25e9, \"latency_s\": 6e-7}"
#define P_FABRIC                                                                              \
    ",\n  \"fabric\": {\"topology\": \"fat_tree\", \"oversubscription\": 1, \"latency_s\": "  \
    "4e-7}"
#define P_NCCL                                                                                \
    ",\n  \"nccl\": {\"arch\": \"ampere\", \"cpu_vendor\": \"amd\", \"channels\": 12}"
#define P_TAIL "\n}\n"

static const char toy[] = P_HEAD P_GPU P_NVLINK P_PCIE P_CPU P_NVME P_NIC P_FABRIC P_NCCL P_TAIL;

/* toy with the first occurrence of `from` replaced by `to`; caller frees. */
static char *edit(const char *from, const char *to)
{
    const char *at = strstr(toy, from);
    if (at == NULL)
        fail_msg("\"%s\" is not in the toy platform", from);
    size_t n = strlen(toy) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - toy), toy, to, at + strlen(from));
    return out;
}

static void parse_ok(const char *text, Platform *p)
{
    Err err = {0};
    if (platform_parse(p, "p.json", text, strlen(text), &err) != 0)
        fail_msg("unexpected error: %s", err.msg);
    assert_false(err.is_set);
}

static void assert_fails(const char *text, const char *expected)
{
    Platform p;
    Err err = {0};
    assert_int_equal(platform_parse(&p, "p.json", text, strlen(text), &err), -1);
    assert_true(err.is_set);
    assert_string_equal(err.msg, expected);
}

/* Edits toy, parses, checks the message. */
static void assert_edit_fails(const char *from, const char *to, const char *expected)
{
    char *text = edit(from, to);
    assert_fails(text, expected);
    free(text);
}

static void load(const char *name, Platform *p)
{
    Err err = {0};
    if (platform_load(p, name, ZEROSIM_SOURCE_DIR, &err) != 0)
        fail_msg("%s: %s", name, err.msg);
}

/* --------------------------------------------------------------------------------- parse */

static void test_toy_parses(void **state)
{
    (void)state;
    Platform p;
    parse_ok(toy, &p);
    assert_string_equal(p.name, "toy");
    assert_string_equal(p.description, "");
    assert_int_equal(p.n_nodes, 2);
    assert_int_equal(p.gpus_per_node, 8);
    assert_int_equal(platform_n_gpus(&p), 16);
    assert_string_equal(p.gpu.model, "G");
    assert_int_equal(p.gpu.hbm_bytes, 85899345920ull);
    assert_true(p.has_nvlink);
    assert_true(p.has_nvswitch);
    assert_int_equal(p.pcie.gpus_per_switch, 2);
    assert_int_equal(p.pcie.nics_per_switch, 2);
    assert_true(p.pcie.gpu_link.bw_bytes_per_s == 24e9);
    assert_int_equal(p.cpu.cores, 128);
    assert_int_equal(p.nvme.n_drives, 8);
    assert_int_equal(p.nvme.capacity_bytes_per_drive, 3840000000000ull);
    assert_int_equal(p.nic.per_node, 8);
    assert_int_equal(p.fabric.topology, FABRIC_FAT_TREE);
    assert_true(platform_peak_flops_per_s(&p, PRECISION_BF16) == 300e12);
    assert_true(platform_peak_flops_per_s(&p, PRECISION_FP32) == 20e12);
}

/* nvlink and nvme are optional; bf16 falls back to fp16 when absent (V100). */
static void test_optional_sections(void **state)
{
    (void)state;
    char *a = edit(P_NVLINK, "");
    char *b = edit(P_NVME, "");
    Platform p;
    parse_ok(a, &p);
    assert_false(p.has_nvlink);
    assert_false(p.has_nvswitch);
    parse_ok(b, &p);
    assert_int_equal(p.nvme.n_drives, 0);
    free(a);
    free(b);
    char *c = edit("\"bf16_flops_per_s\": 300e12, ", "");
    parse_ok(c, &p);
    assert_true(p.gpu.bf16_flops_per_s == 0);
    assert_true(platform_peak_flops_per_s(&p, PRECISION_BF16) == 300e12);
    free(c);
}

static void test_unknown_key_suggests(void **state)
{
    (void)state;
    assert_edit_fails("\"gpus_per_node\"", "\"gpus_per_nod\"",
                      "p.json: gpus_per_nod: expected a known key, got unknown key "
                      "\"gpus_per_nod\" (did you mean \"gpus_per_node\"?)");
    assert_edit_fails("\"hbm_bytes\"", "\"hbm_byte\"",
                      "p.json: gpu.hbm_byte: expected a known key, got unknown key "
                      "\"hbm_byte\" (did you mean \"hbm_bytes\"?)");
    assert_edit_fails("\"nvswitch\"", "\"nv_switch\"",
                      "p.json: nvlink.nv_switch: expected a known key, got unknown key "
                      "\"nv_switch\" (did you mean \"nvswitch\"?)");
    assert_edit_fails("\"gpu_link\": {\"bw_bytes_per_s\"", "\"gpu_link\": {\"bw_bytes_per_sec\"",
                      "p.json: pcie.gpu_link.bw_bytes_per_sec: expected a known key, got "
                      "unknown key \"bw_bytes_per_sec\" (did you mean \"bw_bytes_per_s\"?)");
    assert_edit_fails("\"drives\"", "\"n_drives\"",
                      "p.json: nvme.n_drives: expected a known key, got unknown key "
                      "\"n_drives\" (did you mean \"drives\"?)");
    /* Unit strings are not accepted: base units only. */
    assert_edit_fails("\"hbm_bytes\": 85899345920", "\"hbm_bytes\": \"80GB\"",
                      "p.json: gpu.hbm_bytes: expected integer >= 1048576, got \"80GB\"");
}

static void test_missing_section(void **state)
{
    (void)state;
    assert_edit_fails(P_CPU, "", "p.json: cpu: expected an object, got nothing (key missing)");
    assert_edit_fails(P_GPU, "", "p.json: gpu: expected an object, got nothing (key missing)");
    assert_edit_fails(P_FABRIC, "",
                      "p.json: fabric: expected an object, got nothing (key missing)");
    assert_edit_fails(", \"switch_uplink\": {\"bw_bytes_per_s\": 24e9, \"latency_s\": 5e-7}", "",
                      "p.json: pcie.switch_uplink: expected an object, got nothing (key "
                      "missing)");
    /* An unclosed '[' shows where the parser gave up: at the ':' after "pcie" (line 7). */
    assert_edit_fails("\"nvlink\": {", "\"nvlink\": [{",
                      "p.json:7:9: JSON syntax error: expected a valid JSON value, got ': "
                      "{\"gpu_link\": {'");
    assert_edit_fails(P_NVLINK, ",\n  \"nvlink\": 300e9",
                      "p.json: nvlink: expected an object, got 300000000000");
}

static void test_missing_key(void **state)
{
    (void)state;
    assert_edit_fails("\"cores\": 128, ", "",
                      "p.json: cpu.cores: expected integer in [1, 1048576], got nothing (key "
                      "missing)");
    assert_edit_fails("\"dram_bytes\": 2199023255552, ", "",
                      "p.json: cpu.dram_bytes: expected integer >= 1048576, got nothing (key "
                      "missing)");
    assert_edit_fails("\"gemm_efficiency\": 0.8, ", "",
                      "p.json: gpu.gemm_efficiency: expected number in [0.01, 1], got nothing "
                      "(key missing)");
    assert_edit_fails("\"name\": \"toy\",", "",
                      "p.json: name: expected a string, got nothing (key missing)");
    assert_edit_fails("\"topology\": \"fat_tree\", ", "",
                      "p.json: fabric.topology: expected one of \"fat_tree\", "
                      "\"rail_optimized\", got nothing (key missing)");
}

/* cpu.param_host_s is optional: a platform file written before it parses, with the
 * framework's host work not counted. */
static void test_param_host_is_optional(void **state)
{
    (void)state;
    char *text = edit(", \"param_host_s\": 2e-5", "");
    Platform p;
    parse_ok(text, &p);
    free(text);
    assert_true(p.cpu.param_host_s == 0.0);
    parse_ok(toy, &p);
    assert_true(p.cpu.param_host_s == 2e-5);
}

static void test_bad_values(void **state)
{
    (void)state;
    assert_edit_fails("\"gpus_per_node\": 8", "\"gpus_per_node\": 0",
                      "p.json: gpus_per_node: expected integer in [1, 1024], got 0");
    assert_edit_fails("\"gpus_per_node\": 8", "\"gpus_per_node\": 7.5",
                      "p.json: gpus_per_node: expected integer in [1, 1024], got 7.5");
    assert_edit_fails("\"gemm_efficiency\": 0.8", "\"gemm_efficiency\": 80",
                      "p.json: gpu.gemm_efficiency: expected number in [0.01, 1], got 80");
    assert_edit_fails("\"topology\": \"fat_tree\"", "\"topology\": \"torus\"",
                      "p.json: fabric.topology: expected one of \"fat_tree\", "
                      "\"rail_optimized\", got \"torus\"");
    assert_edit_fails("\"oversubscription\": 1", "\"oversubscription\": 0.5",
                      "p.json: fabric.oversubscription: expected number in [1, 1024], got 0.5");
    assert_edit_fails("\"latency_s\": 6e-7", "\"latency_s\": 2",
                      "p.json: nic.latency_s: expected number in [0, 1], got 2");
    assert_edit_fails("\"param_host_s\": 2e-5", "\"param_host_s\": 0.5",
                      "p.json: cpu.param_host_s: expected number in [0, 0.01], got 0.5");
    assert_edit_fails("\"nvswitch\": true", "\"nvswitch\": \"yes\"",
                      "p.json: nvlink.nvswitch: expected true or false, got \"yes\"");
}

static void test_gpus_per_switch_must_divide_node(void **state)
{
    (void)state;
    assert_edit_fails("\"gpus_per_switch\": 2", "\"gpus_per_switch\": 3",
                      "p.json: pcie.gpus_per_switch: expected a divisor of gpus_per_node = 8, "
                      "got 3");
    assert_edit_fails("\"nics_per_switch\": 2", "\"nics_per_switch\": 1",
                      "p.json: pcie.nics_per_switch: expected nic.per_node / (gpus_per_node / "
                      "gpus_per_switch) = 8 / 4, got 1");
    /* nics_per_switch 0: NICs hang off the host, any count. */
    char *text = edit("\"nics_per_switch\": 2", "\"nics_per_switch\": 0");
    Platform p;
    parse_ok(text, &p);
    free(text);
}

/* ------------------------------------------------------------------------------- shipped */

/* ---------------------------------------------------------------------------- the fabric */

static void test_fabric_without_structure_is_the_per_node_model(void **state)
{
    (void)state;
    Platform p;
    parse_ok(toy, &p);
    assert_int_equal(p.fabric.nodes_per_leaf, 0);
    assert_int_equal(p.fabric.nodes_per_pod, 0);
    assert_true(p.fabric.spine_oversubscription == 1.0);
    assert_true(p.fabric.core_oversubscription == 1.0);
    assert_int_equal(platform_n_leaf_groups(&p), 0);
    assert_false(platform_fabric_is_shared(&p));
}

static const char two_tier[] = "\"latency_s\": 4e-7, \"nodes_per_leaf\": 4, \"spine\": "
                               "{\"oversubscription\": 2, \"nodes_per_pod\": 8, "
                               "\"core_oversubscription\": 4}";

static void test_fabric_two_tiers_parse(void **state)
{
    (void)state;
    char *text = edit("\"latency_s\": 4e-7", two_tier);
    Platform p;
    parse_ok(text, &p);
    free(text);
    assert_int_equal(p.fabric.nodes_per_leaf, 4);
    assert_int_equal(p.fabric.nodes_per_pod, 8);
    assert_true(p.fabric.spine_oversubscription == 2.0);
    assert_true(p.fabric.core_oversubscription == 4.0);
    Err err = {0};
    assert_int_equal(platform_resize(&p, 0, 10, &err), 0);
    /* 10 nodes in leaves of 4: the last leaf group is partly empty */
    assert_int_equal(platform_n_leaf_groups(&p), 3);
    assert_true(platform_fabric_is_shared(&p));
    /* one leaf group only, and rail-aligned hops: nothing leaves the leaf */
    assert_int_equal(platform_resize(&p, 0, 4, &err), 0);
    assert_false(platform_fabric_is_shared(&p));
}

static void test_fabric_non_blocking_is_not_shared(void **state)
{
    (void)state;
    char *text = edit("\"latency_s\": 4e-7", "\"latency_s\": 4e-7, \"nodes_per_leaf\": 2");
    Platform p;
    parse_ok(text, &p);
    free(text);
    Err err = {0};
    assert_int_equal(platform_resize(&p, 0, 16, &err), 0);
    assert_int_equal(platform_n_leaf_groups(&p), 8);
    assert_false(platform_fabric_is_shared(&p)); /* 1:1 everywhere */
}

static void test_fabric_leaves_of_one_node_are_the_per_node_model(void **state)
{
    (void)state;
    char *text = edit("\"oversubscription\": 1, \"latency_s\": 4e-7",
                      "\"oversubscription\": 4, \"latency_s\": 4e-7, \"nodes_per_leaf\": 1");
    Platform p;
    parse_ok(text, &p);
    free(text);
    Err err = {0};
    assert_int_equal(platform_resize(&p, 0, 16, &err), 0);
    /* every hop leaves its one-node leaf through a 4:1 uplink, as symmetric mode assumes */
    assert_false(platform_fabric_is_shared(&p));
}

static void test_fabric_cross_nic_rails_leave_the_leaf(void **state)
{
    (void)state;
    char *text = edit("\"fabric\": {\"topology\": \"fat_tree\", \"oversubscription\": 1",
                      "\"fabric\": {\"topology\": \"rail_optimized\", \"oversubscription\": 2, "
                      "\"nodes_per_leaf\": 8");
    Platform p;
    parse_ok(text, &p);
    free(text);
    assert_false(platform_fabric_is_shared(&p)); /* two nodes under the same rail leaves */
    platform_set_ring_order(&p, PLATFORM_RING_CROSS_NIC);
    assert_true(platform_fabric_is_shared(&p)); /* each hop changes rail: up to the spine */
}

static void test_fabric_structure_errors(void **state)
{
    (void)state;
    assert_edit_fails("\"latency_s\": 4e-7", "\"latency_s\": 4e-7, \"spine\": "
                                             "{\"oversubscription\": 2}",
                      "p.json: fabric.spine: expected fabric.nodes_per_leaf beside it (a spine "
                      "tier joins leaf switches), got no nodes_per_leaf");
    assert_edit_fails("\"latency_s\": 4e-7", "\"latency_s\": 4e-7, \"nodes_per_leaf\": 0",
                      "p.json: fabric.nodes_per_leaf: expected integer in [1, 1048576], got 0");
    assert_edit_fails("\"latency_s\": 4e-7",
                      "\"latency_s\": 4e-7, \"nodes_per_leaf\": 4, \"spine\": "
                      "{\"oversubscription\": 2, \"nodes_per_pod\": 8}",
                      "p.json: fabric.spine.core_oversubscription: expected nodes_per_pod and "
                      "core_oversubscription together (a second tier has both), got only "
                      "nodes_per_pod");
    assert_edit_fails("\"latency_s\": 4e-7",
                      "\"latency_s\": 4e-7, \"nodes_per_leaf\": 4, \"spine\": "
                      "{\"oversubscription\": 2, \"nodes_per_pod\": 6, "
                      "\"core_oversubscription\": 1}",
                      "p.json: fabric.spine.nodes_per_pod: expected a multiple of "
                      "fabric.nodes_per_leaf = 4 (a pod holds whole leaves), got 6");
    assert_edit_fails("\"latency_s\": 4e-7",
                      "\"latency_s\": 4e-7, \"nodes_per_leaf\": 4, \"spine\": "
                      "{\"oversubscription\": 0.5}",
                      "p.json: fabric.spine.oversubscription: expected number in [1, 1024], "
                      "got 0.5");
}

/* ------------------------------------------------------------------- flash_attention table */

/* The toy GPU with a flash_attention table of `rows` inserted before its source. */
static char *with_flash(const char *rows)
{
    char to[2048];
    snprintf(to, sizeof to,
             "\"flash_attention\": {\"source\": \"paper\", \"rows\": [%s]}, \"source\": "
             "\"datasheet\"}",
             rows);
    return edit("\"source\": \"datasheet\"}", to);
}

#define FA_ROW(kernel, pass, d, causal, seqs, rates)                                          \
    "{\"kernel\": \"" kernel "\", \"pass\": \"" pass "\", \"head_dim\": " #d                \
    ", \"causal\": " causal ", \"seq_len\": " seqs ", \"flops_per_s\": " rates "}"

static void assert_flash_fails(const char *rows, const char *expected)
{
    char *text = with_flash(rows);
    assert_fails(text, expected);
    free(text);
}

static void test_flash_table_parses(void **state)
{
    (void)state;
    Platform p;
    parse_ok(toy, &p);
    assert_true(p.gpu.flash.n_rows == 0); /* optional */
    char *text = with_flash(
        FA_ROW("v2", "fwd_bwd", 128, "true", "[512, 2048]", "[99e12, 155e12]") ", " FA_ROW(
            "v1", "fwd", 64, "true", "[1024]", "[70e12]") ", " FA_ROW("v1", "bwd", 64, "true",
                                                                     "[1024]", "[60e12]"));
    parse_ok(text, &p);
    free(text);
    assert_int_equal(p.gpu.flash.n_rows, 3);
    const PlatformFlashRow *r = &p.gpu.flash.rows[0];
    assert_true(r->kernel == PLATFORM_FLASH_V2 && r->pass == PLATFORM_FLASH_FWD_BWD);
    assert_true(r->head_dim == 128 && r->is_causal && r->n_points == 2);
    assert_true(r->seq_len[1] == 2048 && r->flops_per_s[1] == 155e12);
    r = &p.gpu.flash.rows[1];
    assert_true(r->kernel == PLATFORM_FLASH_V1 && r->pass == PLATFORM_FLASH_FWD);
    assert_true(r->head_dim == 64 && r->is_causal && r->n_points == 1);
    assert_true(r->flops_per_s[0] == 70e12);
    assert_true(p.gpu.flash.rows[2].pass == PLATFORM_FLASH_BWD);
}

static void test_flash_table_errors(void **state)
{
    (void)state;
    const char *ok = FA_ROW("v2", "fwd_bwd", 128, "true", "[512, 2048]", "[99e12, 155e12]");
    assert_flash_fails(FA_ROW("v4", "fwd_bwd", 128, "true", "[512]", "[99e12]"),
                       "p.json: gpu.flash_attention.rows[0].kernel: expected one of \"v2\", "
                       "\"v1\", \"v3\", \"triton\", got \"v4\"");
    assert_flash_fails(FA_ROW("v2", "both", 128, "true", "[512]", "[99e12]"),
                       "p.json: gpu.flash_attention.rows[0].pass: expected one of "
                       "\"fwd_bwd\", \"fwd\", \"bwd\", got \"both\"");
    assert_flash_fails(FA_ROW("v2", "fwd_bwd", 128, "true", "[2048, 512]", "[99e12, 155e12]"),
                       "p.json: gpu.flash_attention.rows[0].seq_len[1]: expected a value above "
                       "the previous one (2048), got 512");
    assert_flash_fails(FA_ROW("v2", "fwd_bwd", 128, "true", "[512, 2048]", "[99e12]"),
                       "p.json: gpu.flash_attention.rows[0].flops_per_s: expected 2 rates (one "
                       "per seq_len), got 1");
    /* the toy's 16-bit peak is 300 TFLOP/s */
    assert_flash_fails(FA_ROW("v2", "fwd_bwd", 128, "true", "[512]", "[400e12]"),
                       "p.json: gpu.flash_attention.rows[0].flops_per_s[0]: expected a number "
                       "in [1e+06, 3e+14], got 400000000000000");
    assert_flash_fails(FA_ROW("v2", "fwd_bwd", 128, "true", "512", "[99e12]"),
                       "p.json: gpu.flash_attention.rows[0].seq_len: expected a list of 1 to 12 "
                       "numbers, got 512");
    char dup[512];
    snprintf(dup, sizeof dup, "%s, %s", ok, ok);
    assert_flash_fails(dup, "p.json: gpu.flash_attention.rows[1]: expected one row per kernel, "
                            "pass, head_dim and causal, got a second one of rows[0]");
    assert_flash_fails(FA_ROW("v2", "fwd", 128, "true", "[512]", "[99e12]"),
                       "p.json: gpu.flash_attention.rows: expected causal rates of kernel "
                       "\"v2\" for the forward and the backward (a \"fwd_bwd\" row, or \"fwd\" "
                       "and \"bwd\" rows), got none for the backward");
    assert_flash_fails(FA_ROW("v1", "fwd_bwd", 64, "false", "[512]", "[99e12]"),
                       "p.json: gpu.flash_attention.rows: expected causal rates of kernel "
                       "\"v1\" for the forward and the backward (a \"fwd_bwd\" row, or \"fwd\" "
                       "and \"bwd\" rows), got none for the forward");
    assert_flash_fails("", "p.json: gpu.flash_attention.rows: expected a list of 1 to 24 rows, "
                           "got 0 rows");
    assert_flash_fails(FA_ROW("v2", "fwd_bwd", 128, "true", "[512]", "[99e12]") ", 3",
                       "p.json: gpu.flash_attention.rows[1]: expected an object, got 3");
}

/* FlashAttention-3's paper plots its backward without the causal mask only: a kernel's
 * backward may be non-causal rows, its forward may not. */
static void test_flash_table_backward_without_mask(void **state)
{
    (void)state;
    Platform p;
    char *text =
        with_flash(FA_ROW("v3", "fwd", 128, "true", "[512, 1024]", "[292e12, 2e14]") ", " FA_ROW(
            "v3", "bwd", 128, "false", "[512, 1024]", "[2e14, 2.5e14]"));
    parse_ok(text, &p);
    free(text);
    assert_true(platform_has_flash_kernel(&p, PLATFORM_FLASH_V3));
    assert_false(platform_has_flash_kernel(&p, PLATFORM_FLASH_V1));
    assert_flash_fails(FA_ROW("v3", "fwd", 128, "false", "[512]", "[2e14]") ", " FA_ROW(
                           "v3", "bwd", 128, "false", "[512]", "[2e14]"),
                       "p.json: gpu.flash_attention.rows: expected causal rates of kernel "
                       "\"v3\" for the forward and the backward (a \"fwd_bwd\" row, or \"fwd\" "
                       "and \"bwd\" rows), got none for the forward");
}

static void test_straggler_must_be_in_the_platform(void **state)
{
    (void)state;
    Platform p;
    parse_ok(toy, &p);
    Err err = {0};
    assert_int_equal(platform_set_straggler(&p, true, 2, 1.5, "--straggler", &err), -1);
    assert_string_equal(err.msg, "--straggler: expected a node below 2 (platform toy), got 2");
    Err err2 = {0};
    assert_int_equal(platform_set_straggler(&p, false, 15, 1.0, "--straggler", &err2), -1);
    assert_string_equal(err2.msg, "--straggler: expected a slowdown in (1, 1e6], got 1");
    Err err3 = {0};
    assert_int_equal(platform_set_straggler(&p, false, 15, 2.0, "--straggler", &err3), 0);
    assert_true(p.job.has_straggler && !p.job.is_straggler_node);
    assert_int_equal(p.job.straggler_index, 15);
}

/* The CUDA context by module loading: lazy is runtime.cuda_context_bytes; eager takes
 * cuda_context_eager_bytes, and is refused, naming the key, where the platform has none. */
static void test_module_loading_swaps_the_context(void **state)
{
    (void)state;
    const char *runtime = ",\n  \"runtime\": {\"cuda_context_bytes\": 266076160, "
                          "\"cuda_context_eager_bytes\": 645660672, "
                          "\"cublas_workspace_bytes\": 8519680}\n}\n";
    char *text = edit(P_TAIL, runtime);
    Platform p;
    parse_ok(text, &p);
    free(text);
    Err err = {0};
    assert_int_equal(platform_set_module_loading(&p, false, &err), 0);
    assert_int_equal(p.runtime.cuda_context_bytes, 266076160);
    assert_int_equal(platform_set_module_loading(&p, true, &err), 0);
    assert_int_equal(p.runtime.cuda_context_bytes, 645660672);
    assert_true(p.runtime.is_eager_loading);
    assert_int_equal(platform_set_module_loading(&p, true, &err), 0); /* idempotent */
    assert_int_equal(p.runtime.cuda_context_bytes, 645660672);
    /* without the eager size (optional: older platform files stay valid) */
    text = edit(P_TAIL, ",\n  \"runtime\": {\"cuda_context_bytes\": 266076160, "
                        "\"cublas_workspace_bytes\": 8519680}\n}\n");
    parse_ok(text, &p);
    free(text);
    assert_int_equal(platform_set_module_loading(&p, true, &err), -1);
    assert_string_equal(err.msg, "--cuda-module-loading eager: expected "
                                 "runtime.cuda_context_eager_bytes in platform toy (the CUDA "
                                 "context with every kernel loaded), got no such key");
    Err err2 = {0};
    parse_ok(toy, &p); /* no runtime section at all */
    assert_int_equal(platform_set_module_loading(&p, true, &err2), -1);
    assert_non_null(strstr(err2.msg, "got no runtime section"));
    assert_edit_fails(P_TAIL,
                      ",\n  \"runtime\": {\"cuda_context_bytes\": 1, \"cuda_context_eager_bytes\": "
                      "0, \"cublas_workspace_bytes\": 1}\n}\n",
                      "p.json: runtime.cuda_context_eager_bytes: expected integer in [1, "
                      "1099511627776], got 0");
    assert_edit_fails(P_TAIL,
                      ",\n  \"runtime\": {\"cuda_context_bytes\": 266076160, "
                      "\"cuda_context_eager_bytes\": 5, \"cublas_workspace_bytes\": 1}\n}\n",
                      "p.json: runtime.cuda_context_eager_bytes: expected at least "
                      "runtime.cuda_context_bytes (266076160, the lazy context), got 5");
}

static void test_every_shipped_platform_loads(void **state)
{
    (void)state;
    DIR *dir = opendir(ZEROSIM_SOURCE_DIR "/platforms");
    assert_non_null(dir);
    int n_loaded = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
        Platform p;
        load(name, &p);
        assert_string_equal(p.name, name); /* the file names itself */
        assert_true(platform_n_gpus(&p) >= 1);
        assert_int_equal(p.gpus_per_node % p.pcie.gpus_per_switch, 0);
        assert_true(p.gpu.hbm_bytes > 0 && p.cpu.dram_bytes > 0);
        /* each says how big its CUDA context is under both module loadings */
        assert_true(p.has_runtime &&
                    p.runtime.cuda_context_eager_bytes > p.runtime.cuda_context_bytes);
        n_loaded++;
    }
    closedir(dir);
    assert_true(n_loaded >= 5);
}

static void test_load_unknown_name(void **state)
{
    (void)state;
    Platform p;
    Err err = {0};
    assert_int_equal(platform_load(&p, "dgx-a100", ZEROSIM_SOURCE_DIR, &err), -1);
    assert_string_equal(err.msg, "platform \"dgx-a100\": expected a .json path or a shipped name "
                                 "(dgx-a100-80g, dgx-h100, dgx2-v100, h200-single, "
                                 "workstation-2x-titan-rtx), got neither");
    err_clear(&err);
    assert_int_equal(platform_load(&p, "missing.json", ZEROSIM_SOURCE_DIR, &err), -1);
    assert_string_equal(err.msg,
                        "missing.json: cannot open platform file: no such file or unreadable");
}

/* -------------------------------------------------------------------------------- resize */

static void test_resize_whole_nodes(void **state)
{
    (void)state;
    Platform p;
    Err err = {0};
    load("dgx-a100-80g", &p);
    assert_int_equal(platform_resize(&p, 1024, 0, &err), 0);
    assert_int_equal(p.n_nodes, 128);
    assert_int_equal(p.gpus_per_node, 8);
    assert_int_equal(platform_n_gpus(&p), 1024);
    assert_int_equal(p.nic.per_node, 8);

    load("dgx-a100-80g", &p);
    assert_int_equal(platform_resize(&p, 0, 4, &err), 0);
    assert_int_equal(p.n_nodes, 4);
    assert_int_equal(platform_n_gpus(&p), 32);

    load("dgx-a100-80g", &p);
    assert_int_equal(platform_resize(&p, 16, 2, &err), 0);
    assert_int_equal(p.n_nodes, 2);
    assert_int_equal(p.gpus_per_node, 8);

    load("dgx-a100-80g", &p); /* 0, 0 keeps the file's size */
    assert_int_equal(platform_resize(&p, 0, 0, &err), 0);
    assert_int_equal(platform_n_gpus(&p), 8);
    assert_false(err.is_set);
}

static void test_resize_partial_node(void **state)
{
    (void)state;
    Platform p;
    Err err = {0};
    load("dgx-a100-80g", &p); /* 4 PCIe switches of 2 GPUs + 2 NICs */
    assert_int_equal(platform_resize(&p, 4, 0, &err), 0);
    assert_int_equal(p.n_nodes, 1);
    assert_int_equal(p.gpus_per_node, 4);
    assert_int_equal(p.pcie.gpus_per_switch, 2);
    assert_int_equal(p.nic.per_node, 4); /* the NICs of the two switches kept */

    load("dgx-a100-80g", &p);
    assert_int_equal(platform_resize(&p, 1, 0, &err), 0);
    assert_int_equal(platform_n_gpus(&p), 1);
    assert_int_equal(p.pcie.gpus_per_switch, 1);
    assert_int_equal(p.nic.per_node, 2);

    load("dgx-a100-80g", &p);
    assert_int_equal(platform_resize(&p, 4, 1, &err), 0);
    assert_int_equal(platform_n_gpus(&p), 4);
    assert_false(err.is_set);

    load("dgx2-v100", &p); /* 16 GPUs, 4 per switch, 2 NICs per switch */
    assert_int_equal(platform_resize(&p, 8, 0, &err), 0);
    assert_int_equal(p.gpus_per_node, 8);
    assert_int_equal(p.pcie.gpus_per_switch, 4);
    assert_int_equal(p.nic.per_node, 4);
}

static void assert_resize_fails(uint64_t gpus, uint64_t nodes, const char *expected)
{
    Platform p;
    Err err = {0};
    load("dgx-a100-80g", &p);
    assert_int_equal(platform_resize(&p, gpus, nodes, &err), -1);
    assert_string_equal(err.msg, expected);
}

static void test_resize_errors(void **state)
{
    (void)state;
    assert_resize_fails(12, 0, "--gpus 12: expected a multiple of 8 GPUs per node (platform "
                               "dgx-a100-80g) or fewer than one node, got 12");
    assert_resize_fails(3, 0, "--gpus 3: expected a divisor of 8 GPUs per node (platform "
                              "dgx-a100-80g) for a partial node, got 3");
    assert_resize_fails(16, 1, "--gpus 16 --nodes 1: expected GPUs per node to be a whole "
                               "number of at most 8 (platform dgx-a100-80g), got 16");
    assert_resize_fails(12, 5, "--gpus 12 --nodes 5: expected GPUs per node to be a whole "
                               "number of at most 8 (platform dgx-a100-80g), got 2.4");
    assert_resize_fails(8, 2, "--gpus 8 --nodes 2: expected full nodes of 8 GPUs when using "
                              "several nodes, got 4 per node");
    assert_resize_fails(0, 2000000, "--gpus/--nodes: expected at most 1048576, got 2000000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toy_parses),
        cmocka_unit_test(test_optional_sections),
        cmocka_unit_test(test_unknown_key_suggests),
        cmocka_unit_test(test_missing_section),
        cmocka_unit_test(test_missing_key),
        cmocka_unit_test(test_param_host_is_optional),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_gpus_per_switch_must_divide_node),
        cmocka_unit_test(test_fabric_without_structure_is_the_per_node_model),
        cmocka_unit_test(test_fabric_two_tiers_parse),
        cmocka_unit_test(test_fabric_non_blocking_is_not_shared),
        cmocka_unit_test(test_fabric_leaves_of_one_node_are_the_per_node_model),
        cmocka_unit_test(test_fabric_cross_nic_rails_leave_the_leaf),
        cmocka_unit_test(test_fabric_structure_errors),
        cmocka_unit_test(test_straggler_must_be_in_the_platform),
        cmocka_unit_test(test_module_loading_swaps_the_context),
        cmocka_unit_test(test_every_shipped_platform_loads),
        cmocka_unit_test(test_load_unknown_name),
        cmocka_unit_test(test_resize_whole_nodes),
        cmocka_unit_test(test_resize_partial_node),
        cmocka_unit_test(test_resize_errors),
        cmocka_unit_test(test_flash_table_parses),
        cmocka_unit_test(test_flash_table_errors),
        cmocka_unit_test(test_flash_table_backward_without_mask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
