/*
 * test_sweep_summary.c - the sweep's --summary table (study/sweep_summary.c) on a hand-written
 * CSV.
 *
 * Two run points of a grid over configs, written as sweep_output writes them (the sweep
 * header, the column header, rows out of id order, one failed, one out of memory): the table
 * must list them by id with the grid's dimension, the status, and each metric rounded by
 * hand: 0.4091 s -> "409.1 ms", 80090 tokens/s -> "80.1 k", 0.3302 -> "33.0%",
 * 14697022848 bytes -> "13.7 GiB", the exposed offload the sum of its four columns.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "study/sweep_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const csv =
    "# zerosim-sweep {\"format\":1}\n"
    "id,key,config,status,exit_code,time.step_s,throughput.tokens_per_s,"
    "throughput.tflops_per_gpu,throughput.mfu,memory.gpu_peak_bytes,memory.fits,"
    "time.exposed_comm_s,time.exposed_cpu_optimizer_s,time.exposed_h2d_s,time.exposed_d2h_s,"
    "time.exposed_nvme_read_s,time.exposed_nvme_write_s,message\n"
    "2,k2,zero3,error,1,,,,,,,,,,,,,\"bad, file\"\n"
    "1,k1,zero2-offload-cpu,ok,0,0.4091,80090,102.85,0.3302,14697022848,true,0.019,0.1502,"
    "0.03,0.0144,0,0,\n"
    "0,k0,zero2,ok,3,0.0002196,149244,191.7,0.615,91268055040,false,0.0207,0,0,0,0,0,\n";

static char *write_fixture(const char *text)
{
    static char path[] = "/tmp/zerosim_summary_XXXXXX";
    strcpy(path, "/tmp/zerosim_summary_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_sweep_summary_rounds_and_orders_rows(void **state)
{
    (void)state;
    char *path = write_fixture(csv);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    Err err = {0};
    assert_int_equal(sweep_summary_write(out, path, &err), 0);
    fclose(out);
    remove(path);
    const char *expected =
        "id  config             status      step  tokens/s  TFLOP/s    MFU  GPU peak  fits  "
        "exposed comm  exposed CPU opt  exposed offload\n"
        "0   zero2              no fit    220 us   149.2 k      192  61.5%  85.0 GiB    no  "
        "     20.7 ms                0                0\n"
        "1   zero2-offload-cpu  ok      409.1 ms    80.1 k      103  33.0%  13.7 GiB   yes  "
        "     19.0 ms         150.2 ms          44.4 ms\n"
        "2   zero3              error          -         -        -      -         -     -  "
        "           -                -                -\n";
    assert_string_equal(buf, expected);
    free(buf);
}

static void test_sweep_summary_units(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(sweep_summary_seconds(0.0, b, sizeof b), "0");
    assert_string_equal(sweep_summary_seconds(850e-6, b, sizeof b), "850 us");
    assert_string_equal(sweep_summary_seconds(0.01234, b, sizeof b), "12.3 ms");
    assert_string_equal(sweep_summary_seconds(4.561, b, sizeof b), "4.56 s");
    assert_string_equal(sweep_summary_seconds(123.4, b, sizeof b), "123 s");
    assert_string_equal(sweep_summary_bytes(512.0 * 1024 * 1024, b, sizeof b), "512 MiB");
    assert_string_equal(sweep_summary_bytes(61.8 * 1024 * 1024 * 1024, b, sizeof b), "61.8 GiB");
    assert_string_equal(sweep_summary_count(950, b, sizeof b), "950");
    assert_string_equal(sweep_summary_count(12345, b, sizeof b), "12.3 k");
    assert_string_equal(sweep_summary_count(4.561e6, b, sizeof b), "4.56 M");
}

/* Not a sweep CSV, a damaged row, a missing file: one line naming the file. */
static void test_sweep_summary_refuses_what_is_not_a_sweep(void **state)
{
    (void)state;
    char *path = write_fixture("a,b,c\n1,2,3\n");
    Err err = {0};
    assert_int_equal(sweep_summary_write(stdout, path, &err), -1);
    assert_non_null(strstr(err.msg, ": line 1: expected the column header of a sweep CSV"));
    remove(path);

    path = write_fixture("id,key,status\n0,k,\"ok\n");
    Err err2 = {0};
    assert_int_equal(sweep_summary_write(stdout, path, &err2), -1);
    assert_non_null(strstr(err2.msg, ": line 2: expected 3 CSV fields, got a damaged row"));
    remove(path);

    Err err3 = {0};
    assert_int_equal(sweep_summary_write(stdout, "/nonexistent-zerosim/s.csv", &err3), -1);
    assert_string_equal(err3.msg,
                        "/nonexistent-zerosim/s.csv: cannot read the sweep: No such file or "
                        "directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_summary_rounds_and_orders_rows),
        cmocka_unit_test(test_sweep_summary_units),
        cmocka_unit_test(test_sweep_summary_refuses_what_is_not_a_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
