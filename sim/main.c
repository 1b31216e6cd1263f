/*
 * main.c - the zerosim command line: arguments -> pipeline -> exit code.
 *
 * Each command parses its options into plain values, loads the inputs (inputs/), runs the
 * model or simulation and hands the result to report/. Exit codes: 0 success, 1 bad input
 * (a file's content), 2 bad command line. Messages go to stderr, one line each.
 */
#include "common/err.h"
#include "common/strlist.h"
#include "common/suggest.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/estimate.h"
#include "report/estimate_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_BAD_USAGE = 2 };

static const char *const main_help =
    "usage: zerosim <command> [options]\n"
    "\n"
    "A simulator of ZeRO training on GPU clusters: does a model fit with ZeRO-1/2/3,\n"
    "ZeRO-Offload or ZeRO-Infinity, and what does a step cost?\n"
    "\n"
    "commands:\n"
    "  estimate    analytic memory, communication and FLOPs of one configuration\n"
    "\n"
    "options:\n"
    "  -h, --help     this text; `zerosim <command> --help` describes a command\n"
    "  --version      print the version\n"
    "\n"
    "Models, configs and platforms are paths or shipped names (workloads/models,\n"
    "workloads/ds_configs, platforms); ZEROSIM_DATA_DIR overrides where names are found.\n"
    "exit codes: 0 success, 1 bad input file, 2 bad command line.\n";

static const char *const estimate_help =
    "usage: zerosim estimate --model M --config D --platform P [options]\n"
    "\n"
    "Analytic estimate of one training configuration: per-GPU memory (model states by\n"
    "ZeRO stage, activations, buffers) against HBM, host and NVMe needs per node,\n"
    "DeepSpeed's own estimator beside it, bytes each rank sends per step, FLOPs per step.\n"
    "\n"
    "required:\n"
    "  --model M        HuggingFace config.json path or preset (e.g. llama-2-7b, gpt3-175b)\n"
    "  --config D       DeepSpeed ds_config.json path or shipped name (e.g. zero3)\n"
    "  --platform P     platform JSON path or shipped name (e.g. dgx-a100-80g)\n"
    "options:\n"
    "  --gpus N         resize the platform to N GPUs (a divisor of a node, or whole nodes)\n"
    "  --nodes N        resize the platform to N nodes\n"
    "  --seq-len S      tokens per sequence (default: the model's context length)\n"
    "  --activation-checkpointing none|selective|full\n"
    "                   recomputation in the model code (default: none)\n"
    "  --flash-attention on|off\n"
    "                   attention without stored s x s scores (default: on)\n"
    "  --json FILE|-    also write the JSON report to FILE; '-' writes only JSON to stdout\n"
    "  -h, --help       this text\n"
    "\n"
    "The JSON schema is in docs/JSON-SCHEMA.md. Exit codes: 0 success (whether or not the\n"
    "configuration fits), 1 bad input file, 2 bad command line.\n";

static const char *data_dir(void)
{
    const char *env = getenv("ZEROSIM_DATA_DIR");
    return env && env[0] ? env : ZEROSIM_DATA_DIR;
}

static int usage_error(const char *command, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "zerosim %s: ", command);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (see zerosim %s --help)\n", command);
    return EXIT_BAD_USAGE;
}

static int parse_count(const char *command, const char *option, const char *text,
                       uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] == '-' || text[0] == '\0' || *end != '\0' || errno != 0 || v == 0)
        return usage_error(command, "%s: expected a positive integer, got \"%s\"", option,
                           text);
    *out = v;
    return 0;
}

typedef struct EstimateArgs {
    const char *model, *config, *platform, *json;
    uint64_t gpus, nodes, seq_len;
    Recompute recompute;
    bool is_flash_attention;
    bool has_recompute, has_flash;
} EstimateArgs;

static int parse_estimate(int argc, char **argv, EstimateArgs *a)
{
    static const char *const options[] = {
        "--model", "--config", "--platform", "--gpus", "--nodes", "--seq-len",
        "--activation-checkpointing", "--flash-attention", "--json", "--help", NULL,
    };
    *a = (EstimateArgs){.is_flash_attention = true};
    for (int i = 2; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            fputs(estimate_help, stdout);
            return -1;
        }
        bool known = false;
        for (size_t k = 0; options[k]; k++)
            known |= strcmp(opt, options[k]) == 0;
        if (!known) {
            const char *best = suggest_closest(opt, options);
            if (best)
                return usage_error("estimate", "unknown option %s (did you mean %s?)", opt, best);
            return usage_error("estimate", "unknown option %s%s", opt, "");
        }
        if (i + 1 >= argc)
            return usage_error("estimate", "%s: expected a value, got nothing%s", opt, "");
        const char *val = argv[++i];
        int rc = 0;
        if (strcmp(opt, "--model") == 0) {
            a->model = val;
        } else if (strcmp(opt, "--config") == 0) {
            a->config = val;
        } else if (strcmp(opt, "--platform") == 0) {
            a->platform = val;
        } else if (strcmp(opt, "--json") == 0) {
            a->json = val;
        } else if (strcmp(opt, "--gpus") == 0) {
            rc = parse_count("estimate", opt, val, &a->gpus);
        } else if (strcmp(opt, "--nodes") == 0) {
            rc = parse_count("estimate", opt, val, &a->nodes);
        } else if (strcmp(opt, "--seq-len") == 0) {
            rc = parse_count("estimate", opt, val, &a->seq_len);
        } else if (strcmp(opt, "--activation-checkpointing") == 0) {
            a->has_recompute = true;
            if (setup_recompute_parse(val, &a->recompute))
                rc = usage_error("estimate", "%s: expected none, selective or full, got \"%s\"",
                                 opt, val);
        } else {
            a->has_flash = true;
            if (strcmp(val, "on") == 0 || strcmp(val, "off") == 0)
                a->is_flash_attention = strcmp(val, "on") == 0;
            else
                rc = usage_error("estimate", "%s: expected on or off, got \"%s\"", opt, val);
        }
        if (rc)
            return rc;
    }
    const char *missing = !a->model ? "--model" : !a->config ? "--config"
                                                : !a->platform ? "--platform" : NULL;
    if (missing)
        return usage_error("estimate", "%s: expected a value for this required option, got "
                           "nothing%s", missing, "");
    return 0;
}

static void warn_not_modelled(const char *file, const StrList *keys)
{
    if (keys->n_items == 0)
        return;
    fprintf(stderr, "zerosim: warning: %s: keys read but not modelled (they do not change the "
            "result): ", file);
    for (size_t i = 0; i < keys->n_items; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", keys->items[i]);
    fputc('\n', stderr);
}

static int run_estimate(int argc, char **argv)
{
    EstimateArgs args;
    int rc = parse_estimate(argc, argv, &args);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;

    Err err = {0};
    ModelConfig model = {0};
    TrainConfig train = {0};
    Platform platform;
    StrList setup_defaults;
    strlist_init(&setup_defaults);
    int exit_code = EXIT_BAD_INPUT;
    if (model_config_load(&model, args.model, data_dir(), &err) ||
        ds_config_load(&train, args.config, data_dir(), &err) ||
        platform_load(&platform, args.platform, data_dir(), &err))
        goto done;
    if (platform_resize(&platform, args.gpus, args.nodes, &err)) {
        exit_code = EXIT_BAD_USAGE; /* the sizes asked for do not fit the platform */
        goto done;
    }
    warn_not_modelled(args.model, &model.not_modelled);
    warn_not_modelled(args.config, &train.not_modelled);

    EstimateOptions opts = {args.seq_len, args.recompute, args.is_flash_attention};
    if (args.seq_len == 0)
        strlist_addf(&setup_defaults, "--seq-len %llu (the model's context length)",
                     (unsigned long long)model.max_seq);
    if (!args.has_recompute)
        strlist_addf(&setup_defaults, "--activation-checkpointing none");
    if (!args.has_flash)
        strlist_addf(&setup_defaults, "--flash-attention on");

    Estimate est;
    if (estimate_build(&model, &train, &platform, &opts, &est, &err))
        goto done;
    EstimateReport report = {&model, &train, &platform, &est, &setup_defaults};
    exit_code = EXIT_OK;
    if (args.json && strcmp(args.json, "-") == 0) {
        estimate_report_json(stdout, &report);
    } else {
        estimate_report_text(stdout, &report);
        if (args.json) {
            FILE *f = fopen(args.json, "w");
            if (f == NULL) {
                err_set(&err, "%s: cannot write JSON report: %s", args.json, strerror(errno));
                exit_code = EXIT_BAD_INPUT;
                goto done;
            }
            estimate_report_json(f, &report);
            if (fclose(f) != 0) {
                err_set(&err, "%s: cannot write JSON report: %s", args.json, strerror(errno));
                exit_code = EXIT_BAD_INPUT;
            }
        }
    }
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    strlist_fini(&setup_defaults);
    model_config_fini(&model);
    ds_config_fini(&train);
    return exit_code;
}

int main(int argc, char **argv)
{
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
        return run_estimate(argc, argv);
    static const char *const commands[] = {"estimate", NULL};
    const char *best = suggest_closest(argv[1], commands);
    fprintf(stderr, "zerosim: unknown command \"%s\"%s%s%s (see zerosim --help)\n", argv[1],
            best ? " (did you mean " : "", best ? best : "", best ? "?)" : "");
    return EXIT_BAD_USAGE;
}
