/*
 * main.c - the zerosim command line: arguments -> pipeline -> exit code.
 *
 * Each command parses its options into plain values, loads the inputs (inputs/), runs the
 * model or simulation and hands the result to report/. Exit codes: 0 success, 1 bad input
 * (a file's content, or an output that cannot be written: stdout is checked before exit),
 * 2 bad command line. Messages go to stderr, one line each.
 */
#include "cli.h"

#include "common/suggest.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const main_help =
    "usage: zerosim <command> [options]\n"
    "\n"
    "A simulator of ZeRO training on GPU clusters: does a model fit with ZeRO-1/2/3,\n"
    "ZeRO-Offload or ZeRO-Infinity, and what does a step cost?\n"
    "\n"
    "commands:\n"
    "  estimate    analytic memory, communication and FLOPs of one configuration\n"
    "  run         simulate training steps on a SimGrid model of the cluster\n"
    "  compare     simulate two or more configurations and set them side by side\n"
    "  advise      rank ZeRO stages, offload and micro-batches for a model and cluster\n"
    "  collective  simulate one collective over a range of sizes, like nccl-tests\n"
    "  sweep       run a grid of configurations in parallel workers, to CSV or JSONL\n"
    "\n"
    "options:\n"
    "  -h, --help     this text; `zerosim <command> --help` describes a command\n"
    "  --version      print the version\n"
    "  --quiet        (after the command) no warnings on stderr; errors still print\n"
    "\n"
    "Models, configs and platforms are paths or shipped names (workloads/models,\n"
    "workloads/ds_configs, platforms); ZEROSIM_DATA_DIR overrides where names are found.\n"
    "exit codes: 0 success, 1 bad input file, 2 bad command line, 3 a simulated run\n"
    "out of memory.\n";

/* The command's exit code, or EXIT_BAD_INPUT when what it wrote to stdout did not all reach
 * it (a full disk, a closed pipe): a report that is lost is not a success. */
static int finish(int exit_code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "zerosim: the standard output: cannot write the report: %s\n",
                strerror(errno ? errno : EIO));
        return EXIT_BAD_INPUT;
    }
    return exit_code;
}

static int dispatch(int argc, char **argv)
{
    /* --quiet silences warnings for every command, wherever it stands after the command. */
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--quiet") == 0) {
            cli_is_quiet = true;
            for (int k = i; k + 1 < argc; k++)
                argv[k] = argv[k + 1];
            argc--;
            i--;
        }
    }
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(main_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_BAD_USAGE : EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("zerosim %s\n", ZEROSIM_VERSION_STRING);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "estimate") == 0)
        return cmd_estimate(argc, argv);
    if (strcmp(argv[1], "collective") == 0)
        return cmd_collective(argc, argv);
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc, argv);
    if (strcmp(argv[1], "advise") == 0)
        return cmd_advise(argc, argv);
    if (strcmp(argv[1], "sweep") == 0)
        return cmd_sweep(argc, argv);
    if (strcmp(argv[1], "compare") == 0)
        return cmd_compare(argc, argv);
    static const char *const commands[] = {"estimate", "run",   "advise", "collective",
                                           "sweep",    "compare", NULL};
    const char *best = suggest_closest(argv[1], commands);
    fprintf(stderr, "zerosim: unknown command \"%s\"%s%s%s (see zerosim --help)\n", argv[1],
            best ? " (did you mean \"" : "", best ? best : "", best ? "\"?)" : "");
    return EXIT_BAD_USAGE;
}

int main(int argc, char **argv)
{
    return finish(dispatch(argc, argv));
}
