/*
 * fuzz_cli.c - libFuzzer target for the command line: the option parser and every converter
 * of sizes, counts, rank lists, shards, checkpointing and headroom, and `zerosim estimate`
 * end to end on the arguments they accept.
 *
 * The input is one argument per line. Each line also goes through the converters directly
 * (cli_count, cli_bytes, cli_ranks over 64 ranks, cli_shard, cli_headroom, and
 * cli_setup_options as --seq-len and --activation-checkpointing), which must return 0 or
 * their error code, never crash, and keep their contracts: a rank list accepted sets only
 * ranks below 64, a shard accepted has I < N. Then the lines are the arguments of
 * `zerosim estimate` run in-process (stdout to /dev/null): whatever the parser accepts is
 * estimated or refused with an exit code, and nothing leaks. The harness keeps the run
 * inside the sandbox (limits of this harness, not of zerosim): arguments that name paths
 * (a '/') or write files (--json, --write-config, --trace, --out, --html) are skipped, so
 * only shipped model, config and platform names are read. Seeds: tests/fuzz/seeds/cli-*.txt;
 * dictionary: cli.dict.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "cli/cli.h"
#include "model/estimate.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 48

static bool is_safe(const char *arg)
{
    static const char *const writers[] = {"--json", "--write-config", "--trace", "--out",
                                          "--html"};
    if (strchr(arg, '/') != NULL)
        return false;
    for (size_t i = 0; i < sizeof writers / sizeof *writers; i++)
        if (strncmp(arg, writers[i], strlen(writers[i])) == 0)
            return false;
    return true;
}

static void converters(const char *arg)
{
    uint64_t value = 0, index = 0, count = 0;
    (void)cli_count("fuzz", "--count", arg, &value);
    (void)cli_bytes("fuzz", "--bytes", arg, &value);
    bool flags[64] = {0};
    if (cli_ranks(arg, 64, flags) != 0)
        memset(flags, 0, sizeof flags);
    if (cli_shard("fuzz", arg, &index, &count) == 0 && !(index < count))
        abort();
    double fraction = 0;
    StrList defaults;
    strlist_init(&defaults);
    (void)cli_headroom("fuzz", arg, &fraction, &defaults);
    strlist_fini(&defaults);
    EstimateOptions setup = {0};
    (void)cli_setup_options("fuzz", arg, arg, arg, &setup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool is_quiet_stdout;
    if (!is_quiet_stdout) {
        int null_fd = open("/dev/null", O_WRONLY);
        if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
            abort();
        close(null_fd);
        setenv("ZEROSIM_DATA_DIR", ZEROSIM_SOURCE_DIR, 1);
        is_quiet_stdout = true;
    }
    if (size > 4096 || memchr(data, '\0', size) != NULL)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 3] = {"zerosim", "estimate"};
    int argc = 2;
    bool is_runnable = true;
    for (char *line = text, *next; line != NULL; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        converters(line);
        if (argc == MAX_ARGS + 2 || !is_safe(line))
            is_runnable = false;
        else
            argv[argc++] = line;
    }
    argv[argc] = NULL;
    if (is_runnable) {
        (void)cmd_estimate(argc, argv);
        fflush(stdout);
    }
    free(text);
    return 0;
}
