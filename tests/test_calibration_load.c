/*
 * test_calibration_load.c - calibration JSON -> Calibration, and its overlay on a platform
 * (inputs/calibration.c).
 *
 * The format is ours: unknown keys, wrong types, incomplete sections, a wrong format tag and a
 * missing file fail with exact one-line messages. calibration_apply changes exactly the
 * platform fields calibration.h documents, by the documented rules, and nothing else.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/calibration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "{\"format\": \"zerosim-calibration\", \"version\": 1"
#define SYSTEM                                                                                     \
    ", \"system\": {\"gpus\": [\"NVIDIA H100 80GB HBM3\", \"NVIDIA H100 80GB HBM3\"], "            \
    "\"driver_version\": \"550.54.15\", \"cuda_runtime_version\": \"12.4\", \"cpu_threads\": 64}"
#define GEMM                                                                                       \
    ", \"gemm\": {\"peak_source\": \"platform toy\", \"bf16\": {\"peak_flops_per_s\": 300e12, "    \
    "\"peak_efficiency\": 0.7, \"half_size_flops\": 2e10, \"r2\": 0.99, \"rms_rel_residual\": "    \
    "0.03, \"max_rel_residual\": 0.08, \"n_points\": 19}, \"fp32\": {\"peak_flops_per_s\": "       \
    "20e12, \"peak_efficiency\": 0.9, \"half_size_flops\": 1e9, \"r2\": 0.98, "                    \
    "\"rms_rel_residual\": 0.02, \"max_rel_residual\": 0.05, \"n_points\": 19}}"
#define FIT                                                                                        \
    "\"r2\": 0.999, \"rms_rel_residual\": 0.01, \"max_rel_residual\": 0.03, \"n_points\": 11"
#define COPIES                                                                                     \
    ", \"copies\": {\"h2d_pinned\": {\"latency_s\": 8e-6, \"bw_bytes_per_s\": 22e9, " FIT "}, "    \
    "\"d2h_pinned\": {\"latency_s\": 9e-6, \"bw_bytes_per_s\": 20e9, " FIT "}}"
#define COLLECTIVES                                                                                \
    ", \"collectives\": {\"all_reduce\": {\"n_gpus\": 8, \"latency_s\": 14e-6, \"alpha_s\": "      \
    "1e-6, \"algbw_bytes_per_s\": 130e9, \"busbw_bytes_per_s\": 227.5e9, " FIT "}}"
#define ADAM                                                                                       \
    ", \"cpu_adam\": {\"params_per_s_per_core\": 1e8, \"params_per_s\": 6.4e9, \"threads\": "      \
    "64, \"n_params\": 134217728}"
#define DISK                                                                                       \
    ", \"disk\": {\"read_bw_bytes_per_s\": 24e9, \"write_bw_bytes_per_s\": 16e9, "                 \
    "\"o_direct\": true, \"file_bytes\": 4294967296, \"block_bytes\": 16777216, \"dir\": "         \
    "\"/nvme\"}"
#define LAUNCH ", \"launch\": {\"launch_s\": 5e-6, \"n_kernels\": 10000}"
#define TAIL "}\n"

static const char full[] = HEAD SYSTEM GEMM COPIES COLLECTIVES ADAM LAUNCH DISK TAIL;

/* `full` with the first occurrence of `from` replaced by `to`; caller frees. */
static char *edit(const char *from, const char *to)
{
    const char *at = strstr(full, from);
    if (at == NULL)
        fail_msg("\"%s\" is not in the calibration", from);
    size_t n = strlen(full) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - full), full, to, at + strlen(from));
    return out;
}

static void expect_error(const char *text, const char *message)
{
    Calibration c;
    Err err = {0};
    int rc = calibration_parse(&c, "cal.json", text, strlen(text), &err);
    if (rc == 0 || strcmp(err.msg, message) != 0)
        fprintf(stderr, "got:      %s\nexpected: %s\n", err.msg, message);
    assert_int_equal(rc, -1);
    assert_string_equal(err.msg, message);
}

static void expect_edit_error(const char *from, const char *to, const char *message)
{
    char *text = edit(from, to);
    expect_error(text, message);
    free(text);
}

static void test_calibration_parse_full(void **state)
{
    (void)state;
    Calibration c;
    Err err = {0};
    int rc = calibration_parse(&c, "cal.json", full, strlen(full), &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(c.system.n_gpus, 2);
    assert_string_equal(c.system.gpus[1], "NVIDIA H100 80GB HBM3");
    assert_string_equal(c.system.driver_version, "550.54.15");
    assert_int_equal(c.system.cpu_threads, 64);
    assert_true(c.gemm[CALIB_BF16].is_present);
    assert_false(c.gemm[CALIB_FP16].is_present);
    assert_true(c.gemm[CALIB_FP32].is_present);
    assert_true(c.gemm[CALIB_BF16].peak_efficiency == 0.7);
    assert_int_equal(c.gemm[CALIB_BF16].fit.n_points, 19);
    assert_string_equal(c.gemm_peak_source, "platform toy");
    assert_true(c.copy[CALIB_H2D_PINNED].is_present && c.copy[CALIB_D2H_PINNED].is_present);
    assert_false(c.copy[CALIB_D2D].is_present);
    assert_true(c.copy[CALIB_D2H_PINNED].latency_s == 9e-6);
    assert_true(c.collective[CALIB_ALL_REDUCE].is_present);
    assert_int_equal(c.collective[CALIB_ALL_REDUCE].n_gpus, 8);
    assert_false(c.collective[CALIB_BROADCAST].is_present);
    assert_true(c.cpu_adam.is_present && c.cpu_adam.threads == 64);
    assert_true(c.launch.is_present && c.launch.launch_s == 5e-6);
    assert_int_equal(c.launch.n_kernels, 10000);
    assert_true(c.disk.is_present && c.disk.is_direct);
    assert_string_equal(c.disk.dir, "/nvme");
}

/* --cpu-only writes only cpu_adam and disk; a file with nothing fitted is valid too. */
static void test_calibration_parse_sections_optional(void **state)
{
    (void)state;
    static const char cpu_only[] = HEAD ADAM DISK TAIL;
    static const char empty[] = HEAD TAIL;
    Calibration c;
    Err err = {0};
    assert_int_equal(calibration_parse(&c, "cal.json", cpu_only, strlen(cpu_only), &err), 0);
    assert_true(c.cpu_adam.is_present && c.disk.is_present);
    assert_false(c.gemm[CALIB_BF16].is_present || c.copy[CALIB_H2D_PINNED].is_present ||
                 c.collective[CALIB_ALL_REDUCE].is_present);
    assert_int_equal(calibration_parse(&c, "cal.json", empty, strlen(empty), &err), 0);
    assert_false(c.cpu_adam.is_present || c.disk.is_present);
}

static void test_calibration_parse_unknown_keys(void **state)
{
    (void)state;
    expect_edit_error("\"cpu_adam\"", "\"cpu_adamm\"",
                      "cal.json: cpu_adamm: expected a known key, got unknown key \"cpu_adamm\" "
                      "(did you mean \"cpu_adam\"?)");
    expect_edit_error("\"bw_bytes_per_s\": 22e9", "\"bw_bytes_per_sec\": 22e9",
                      "cal.json: copies.h2d_pinned.bw_bytes_per_sec: expected a known key, got "
                      "unknown key \"bw_bytes_per_sec\" (did you mean \"bw_bytes_per_s\"?)");
    expect_edit_error("\"h2d_pinned\"", "\"h2d_pined\"",
                      "cal.json: copies.h2d_pined: expected a known key, got unknown key "
                      "\"h2d_pined\" (did you mean \"h2d_pinned\"?)");
    expect_edit_error("\"bf16\": {", "\"tf32\": {",
                      "cal.json: gemm.tf32: expected a known key, got unknown key \"tf32\" (did "
                      "you mean \"fp32\"?)");
    expect_edit_error("\"driver_version\"", "\"gpu_driver\"",
                      "cal.json: system.gpu_driver: expected a known key, got unknown key "
                      "\"gpu_driver\"");
}

static void test_calibration_parse_wrong_types(void **state)
{
    (void)state;
    expect_edit_error("\"threads\": 64", "\"threads\": \"64\"",
                      "cal.json: cpu_adam.threads: expected integer in [1, 1048576], got \"64\"");
    expect_edit_error("\"o_direct\": true", "\"o_direct\": 1",
                      "cal.json: disk.o_direct: expected true or false, got 1");
    expect_edit_error("[\"NVIDIA H100 80GB HBM3\", \"NVIDIA H100 80GB HBM3\"]", "\"H100\"",
                      "cal.json: system.gpus: expected an array of GPU names, got \"H100\"");
    expect_edit_error("\"NVIDIA H100 80GB HBM3\"]", "8]",
                      "cal.json: system.gpus[1]: expected a GPU name of at most 95 characters, "
                      "got 8");
    expect_error(HEAD ", \"disk\": [1]" TAIL, "cal.json: disk: expected an object, got an array");
    expect_edit_error("\"peak_efficiency\": 0.7", "\"peak_efficiency\": 7",
                      "cal.json: gemm.bf16.peak_efficiency: expected number in [0.0001, 2], got 7");
    expect_edit_error("\"latency_s\": 8e-6", "\"latency_s\": -8e-6",
                      "cal.json: copies.h2d_pinned.latency_s: expected number in [0, 10], got "
                      "-8e-06");
    expect_edit_error("\"n_gpus\": 8", "\"n_gpus\": 17",
                      "cal.json: collectives.all_reduce.n_gpus: expected integer in [1, 16], got "
                      "17");
    expect_edit_error("\"launch_s\": 5e-6", "\"launch_s\": 0.5",
                      "cal.json: launch.launch_s: expected number in [0, 0.001], got 0.5");
}

static void test_calibration_parse_incomplete_sections(void **state)
{
    (void)state;
    expect_edit_error(", \"write_bw_bytes_per_s\": 16e9", "",
                      "cal.json: disk.write_bw_bytes_per_s: expected number in [1, 1e+18], got "
                      "nothing (key missing)");
    expect_edit_error("\"alpha_s\": 1e-6, ", "",
                      "cal.json: collectives.all_reduce.alpha_s: expected number in [0, 10], got "
                      "nothing (key missing)");
    expect_edit_error("\"r2\": 0.99, ", "",
                      "cal.json: gemm.bf16.r2: expected number in [-1e+06, 1], got nothing (key "
                      "missing)");
}

static void test_calibration_parse_header(void **state)
{
    (void)state;
    expect_edit_error("\"zerosim-calibration\"", "\"zerosim-platform\"",
                      "cal.json: format: expected \"zerosim-calibration\", got "
                      "\"zerosim-platform\"");
    expect_edit_error("\"version\": 1", "\"version\": 2",
                      "cal.json: version: expected integer in [1, 1], got 2");
    expect_edit_error("\"format\": \"zerosim-calibration\", ", "",
                      "cal.json: format: expected \"zerosim-calibration\", got nothing (key "
                      "missing)");
    expect_error("{\"format\": \"zerosim-calibration\",\n \"version\": 1,}\n",
                 "cal.json:2:15: JSON syntax error: expected a valid JSON value, got '}'");
    expect_error("[1, 2]", "cal.json: (top level): expected an object, got an array");
}

static void test_calibration_load_missing_file(void **state)
{
    (void)state;
    Calibration c;
    Err err = {0};
    assert_int_equal(calibration_load(&c, "/nonexistent/calibration.json", &err), -1);
    assert_string_equal(err.msg, "/nonexistent/calibration.json: cannot open calibration file: "
                                 "no such file or unreadable");
}

static void test_calibration_load_file(void **state)
{
    (void)state;
    char path[] = "/tmp/zerosim-test-calXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(full, f);
    fclose(f);
    Calibration c;
    Err err = {0};
    int rc = calibration_load(&c, path, &err);
    remove(path);
    assert_int_equal(rc, 0);
    assert_true(c.disk.read_bw_bytes_per_s == 24e9);
}

/* ---- calibration_apply ---- */

/* A platform like tests/test_platform.c's toy: 8 GPUs on NVSwitch, two GPUs and two NICs per
 * PCIe switch, 128 cores, 8 NVMe drives; `nvlink`, `pcie` and `nvme` replace those sections. */
static void toy_platform(Platform *p, const char *nvlink, const char *pcie, const char *nvme)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"name\": \"toy\", \"nodes\": 2, \"gpus_per_node\": 8, \"gpu\": {\"model\": "
             "\"G\", \"fp32_flops_per_s\": 20e12, \"fp16_flops_per_s\": 300e12, "
             "\"bf16_flops_per_s\": 300e12, \"gemm_efficiency\": 0.8, \"hbm_bytes\": "
             "85899345920, \"hbm_bw_bytes_per_s\": 2e12, \"matmul_flops_per_s\": 260e12, "
             "\"sm_count\": 108, "
             "\"gemm_fixed_s\": 0, \"gemm_wave_s\": 0, \"memory_bw_efficiency\": 0.87, "
             "\"kernel_launch_s\": 4e-6}%s, "
             "\"pcie\": %s, \"cpu\": {\"model\": "
             "\"C\", \"cores\": 128, \"dram_bytes\": 2199023255552, \"dram_bw_bytes_per_s\": "
             "400e9, \"adam_params_per_s_per_core\": 8e7, \"param_host_s\": 2e-5}, \"nvme\": %s, \"nic\": "
             "{\"per_node\": 8, \"bw_bytes_per_s\": 25e9, \"latency_s\": 6e-7}, \"fabric\": "
             "{\"topology\": \"fat_tree\", \"oversubscription\": 1, \"latency_s\": 4e-7}, "
             "\"nccl\": {\"arch\": \"ampere\", \"cpu_vendor\": \"amd\", \"channels\": 12}}",
             nvlink, pcie, nvme);
    Err err = {0};
    int rc = platform_parse(p, "toy.json", text, strlen(text), &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

#define NVSWITCH                                                                                   \
    ", \"nvlink\": {\"bw_bytes_per_s\": 300e9, \"latency_s\": 1e-6, \"nvswitch\": true}"
#define DIRECT ", \"nvlink\": {\"bw_bytes_per_s\": 300e9, \"latency_s\": 1e-6, \"nvswitch\": false}"
#define SHARED_PCIE                                                                                \
    "{\"gpu_link\": {\"bw_bytes_per_s\": 24e9, \"latency_s\": 5e-7}, \"gpus_per_switch\": 2, "     \
    "\"nics_per_switch\": 2, \"switch_uplink\": {\"bw_bytes_per_s\": 24e9, \"latency_s\": "        \
    "5e-7}}"
#define OWN_PCIE                                                                                   \
    "{\"gpu_link\": {\"bw_bytes_per_s\": 24e9, \"latency_s\": 5e-7}, \"gpus_per_switch\": 1, "     \
    "\"nics_per_switch\": 0, \"switch_uplink\": {\"bw_bytes_per_s\": 24e9, \"latency_s\": "        \
    "5e-7}}"
#define NVME8                                                                                      \
    "{\"drives\": 8, \"capacity_bytes_per_drive\": 3.84e12, "                                      \
    "\"read_bw_bytes_per_s_per_drive\": 7e9, \"write_bw_bytes_per_s_per_drive\": 3.8e9}"
#define NVME0                                                                                      \
    "{\"drives\": 0, \"capacity_bytes_per_drive\": 3.84e12, "                                      \
    "\"read_bw_bytes_per_s_per_drive\": 7e9, \"write_bw_bytes_per_s_per_drive\": 3.8e9}"

static void load_full(Calibration *c)
{
    Err err = {0};
    assert_int_equal(calibration_parse(c, "cal.json", full, strlen(full), &err), 0);
}

static void assert_same_platform(const Platform *a, const Platform *b)
{
    assert_memory_equal(a, b, sizeof *a);
}

static void assert_close(double got, double want)
{
    if (fabs(got - want) > 1e-12 * fabs(want))
        fprintf(stderr, "got %.17g, want %.17g\n", got, want);
    assert_true(fabs(got - want) <= 1e-12 * fabs(want));
}

/* Shared PCIe switch and NVSwitch: every documented rule, each field checked, the rest equal. */
static void test_calibration_apply_changes_documented_fields(void **state)
{
    (void)state;
    Platform before, after;
    Calibration c;
    toy_platform(&before, NVSWITCH, SHARED_PCIE, NVME8);
    load_full(&c);
    after = before;
    int n = calibration_apply(&c, &after);

    Platform expected = before;
    /* bf16 present: 0.7 of 300e12 against the platform's 300e12. */
    expected.gpu.gemm_efficiency = 0.7;
    expected.gpu.matmul_flops_per_s = 0.7 * 300e12; /* the kernel model's ceiling */
    /* the fit's t0: half-size 2e10 FLOPs over the 0.7 x 300e12 asymptote */
    expected.gpu.gemm_fixed_s = 2e10 / (0.7 * 300e12);
    /* min(22e9, 20e9); max(8e-6, 9e-6) minus the uplink's 5e-7. */
    expected.pcie.gpu_link.bw_bytes_per_s = 20e9;
    expected.pcie.gpu_link.latency_s = 9e-6 - 5e-7;
    /* 8-GPU all-reduce on NVSwitch: busbw and alpha as they are. */
    expected.nvlink.bw_bytes_per_s = 227.5e9;
    expected.nvlink.latency_s = 1e-6;
    /* 6.4e9 params/s at 64 threads on 128 cores: 6.4e9 / 128 per core. */
    expected.cpu.adam_params_per_s_per_core = 6.4e9 / 128;
    expected.nvme.read_bw_bytes_per_s_per_drive = 24e9 / 8;
    expected.nvme.write_bw_bytes_per_s_per_drive = 16e9 / 8;
    expected.gpu.kernel_launch_s = 5e-6; /* the measured launch floor */
    assert_close(after.pcie.gpu_link.latency_s, expected.pcie.gpu_link.latency_s);
    assert_close(after.gpu.gemm_efficiency, expected.gpu.gemm_efficiency);
    assert_close(after.gpu.matmul_flops_per_s, expected.gpu.matmul_flops_per_s);
    after.pcie.gpu_link.latency_s = expected.pcie.gpu_link.latency_s;
    assert_close(after.gpu.gemm_fixed_s, expected.gpu.gemm_fixed_s);
    after.gpu.gemm_efficiency = expected.gpu.gemm_efficiency;
    after.gpu.matmul_flops_per_s = expected.gpu.matmul_flops_per_s;
    after.gpu.gemm_fixed_s = expected.gpu.gemm_fixed_s;
    assert_same_platform(&after, &expected);
    assert_int_equal(n, 3 + 2 + 2 + 1 + 2 + 1);
}

/* A root port of its own (gpus_per_switch 1, no NIC): the uplink takes the bandwidth and half
 * the latency; direct NVLink multiplies busbw by gpus_per_node - 1. */
static void test_calibration_apply_own_root_port_and_direct_links(void **state)
{
    (void)state;
    Platform before, after;
    Calibration c;
    toy_platform(&before, DIRECT, OWN_PCIE, NVME8);
    load_full(&c);
    after = before;
    calibration_apply(&c, &after);
    Platform expected = before;
    expected.gpu.gemm_efficiency = 0.7;
    expected.gpu.matmul_flops_per_s = 0.7 * 300e12;
    expected.gpu.gemm_fixed_s = 2e10 / (0.7 * 300e12);
    expected.pcie.gpu_link.bw_bytes_per_s = 20e9;
    expected.pcie.switch_uplink.bw_bytes_per_s = 20e9;
    expected.pcie.gpu_link.latency_s = 4.5e-6;
    expected.pcie.switch_uplink.latency_s = 4.5e-6;
    expected.nvlink.bw_bytes_per_s = 227.5e9 * 7;
    expected.nvlink.latency_s = 1e-6;
    expected.cpu.adam_params_per_s_per_core = 6.4e9 / 128;
    expected.nvme.read_bw_bytes_per_s_per_drive = 3e9;
    expected.nvme.write_bw_bytes_per_s_per_drive = 2e9;
    expected.gpu.kernel_launch_s = 5e-6;
    assert_close(after.gpu.gemm_efficiency, expected.gpu.gemm_efficiency);
    assert_close(after.gpu.matmul_flops_per_s, expected.gpu.matmul_flops_per_s);
    assert_close(after.gpu.gemm_fixed_s, expected.gpu.gemm_fixed_s);
    after.gpu.gemm_efficiency = expected.gpu.gemm_efficiency;
    after.gpu.matmul_flops_per_s = expected.gpu.matmul_flops_per_s;
    after.gpu.gemm_fixed_s = expected.gpu.gemm_fixed_s;
    assert_same_platform(&after, &expected);
}

/* No NVLink, no drives, a single-GPU collective: those fields stay. */
static void test_calibration_apply_conditions(void **state)
{
    (void)state;
    Platform before, after;
    Calibration c;
    toy_platform(&before, "", SHARED_PCIE, NVME0);
    load_full(&c);
    after = before;
    calibration_apply(&c, &after);
    assert_true(after.nvlink.bw_bytes_per_s == before.nvlink.bw_bytes_per_s);
    assert_true(after.nvme.read_bw_bytes_per_s_per_drive == 7e9);

    toy_platform(&before, NVSWITCH, SHARED_PCIE, NVME8);
    c.collective[CALIB_ALL_REDUCE].n_gpus = 1;
    after = before;
    calibration_apply(&c, &after);
    assert_true(after.nvlink.bw_bytes_per_s == 300e9 && after.nvlink.latency_s == 1e-6);
    c.collective[CALIB_ALL_REDUCE].n_gpus = 16; /* more GPUs than the platform's node */
    after = before;
    calibration_apply(&c, &after);
    assert_true(after.nvlink.bw_bytes_per_s == 300e9);
}

/* The efficiency is the calibrated asymptote over the platform's peak, clamped to [0.01, 1];
 * bf16 wins over fp32; fp32 alone is used when it is all there is. */
static void test_calibration_apply_gemm_efficiency(void **state)
{
    (void)state;
    Platform before, after;
    Calibration c;
    toy_platform(&before, NVSWITCH, SHARED_PCIE, NVME8);
    load_full(&c);
    c.gemm[CALIB_BF16].peak_flops_per_s = 250e12; /* measured against a lower peak */
    after = before;
    calibration_apply(&c, &after);
    assert_close(after.gpu.gemm_efficiency, 0.7 * 250.0 / 300.0);
    assert_close(after.gpu.matmul_flops_per_s, 0.7 * 250e12); /* the measured asymptote */
    c.gemm[CALIB_BF16].peak_efficiency = 1.9;                 /* a peak far too low */
    c.gemm[CALIB_BF16].peak_flops_per_s = 300e12;
    after = before;
    calibration_apply(&c, &after);
    assert_true(after.gpu.gemm_efficiency == 1.0);
    c.gemm[CALIB_BF16].is_present = false;
    after = before;
    calibration_apply(&c, &after);
    assert_close(after.gpu.gemm_efficiency, 0.9);
    assert_close(after.gpu.matmul_flops_per_s, 0.9 * 300e12); /* fp32's share of the 16-bit peak */
}

/* A D2D copy moves each byte twice: 0.8 TB/s of copy on 2 TB/s HBM is 0.8 of the bandwidth
 * for streaming kernels; a copy faster than half the datasheet clamps to 1. */
static void test_calibration_apply_memory_bandwidth(void **state)
{
    (void)state;
    Platform before, after;
    Calibration c;
    toy_platform(&before, NVSWITCH, SHARED_PCIE, NVME8);
    load_full(&c);
    c.copy[CALIB_D2D].is_present = true;
    c.copy[CALIB_D2D].bw_bytes_per_s = 0.8e12;
    after = before;
    int with = calibration_apply(&c, &after);
    assert_close(after.gpu.memory_bw_efficiency, 2 * 0.8e12 / 2e12);
    c.copy[CALIB_D2D].bw_bytes_per_s = 1.5e12;
    after = before;
    calibration_apply(&c, &after);
    assert_true(after.gpu.memory_bw_efficiency == 1.0);
    c.copy[CALIB_D2D].is_present = false;
    after = before;
    int without = calibration_apply(&c, &after);
    assert_true(after.gpu.memory_bw_efficiency == before.gpu.memory_bw_efficiency);
    assert_int_equal(with, without + 1);
}

/* CPU Adam: the engine's node rate (cores x per core) never exceeds the measured best. */
static void test_calibration_apply_cpu_adam(void **state)
{
    (void)state;
    Platform p;
    Calibration c;
    toy_platform(&p, NVSWITCH, SHARED_PCIE, NVME8);
    load_full(&c);
    c.cpu_adam.threads = 256; /* more threads than the platform's 128 cores */
    calibration_apply(&c, &p);
    assert_close(p.cpu.adam_params_per_s_per_core, 6.4e9 / 256);
}

static void test_calibration_apply_nothing(void **state)
{
    (void)state;
    Platform before, after;
    Calibration c;
    static const char empty[] = HEAD TAIL;
    Err err = {0};
    assert_int_equal(calibration_parse(&c, "cal.json", empty, strlen(empty), &err), 0);
    toy_platform(&before, NVSWITCH, SHARED_PCIE, NVME8);
    after = before;
    assert_int_equal(calibration_apply(&c, &after), 0);
    assert_same_platform(&after, &before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calibration_parse_full),
        cmocka_unit_test(test_calibration_parse_sections_optional),
        cmocka_unit_test(test_calibration_parse_unknown_keys),
        cmocka_unit_test(test_calibration_parse_wrong_types),
        cmocka_unit_test(test_calibration_parse_incomplete_sections),
        cmocka_unit_test(test_calibration_parse_header),
        cmocka_unit_test(test_calibration_load_missing_file),
        cmocka_unit_test(test_calibration_load_file),
        cmocka_unit_test(test_calibration_apply_changes_documented_fields),
        cmocka_unit_test(test_calibration_apply_own_root_port_and_direct_links),
        cmocka_unit_test(test_calibration_apply_conditions),
        cmocka_unit_test(test_calibration_apply_gemm_efficiency),
        cmocka_unit_test(test_calibration_apply_memory_bandwidth),
        cmocka_unit_test(test_calibration_apply_cpu_adam),
        cmocka_unit_test(test_calibration_apply_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
