/*
 * cmd_estimate.c - `zerosim estimate`: the analytic model of one configuration.
 *
 * Loads the model, the DeepSpeed config and the platform, resizes the platform, builds the
 * estimate (model/estimate.h) and prints the table or the JSON report (report/).
 */
#include "cli.h"

#include "common/err.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/estimate.h"
#include "report/estimate_report.h"

#include <stdio.h>
#include <string.h>

static const char *const help =
    "usage: zerosim estimate --model M --config D --platform P [options]\n"
    "\n"
    "Analytic estimate of one training configuration: per-GPU memory (model states by\n"
    "ZeRO stage, activations, buffers) against HBM, host and NVMe needs per node,\n"
    "DeepSpeed's own estimator beside it, bytes each rank sends per step, FLOPs per step.\n"
    "It opens with the verdict: fits, or which memory runs out and by how much, and then\n"
    "the cheapest change that fits (a smaller micro-batch at the same global batch,\n"
    "activation checkpointing, a later ZeRO stage, offload), found by re-estimating them.\n"
    "\n"
    "required:\n" CLI_HELP_INPUTS "options:\n" CLI_HELP_SETUP CLI_HELP_MOE CLI_HELP_HEADROOM CLI_HELP_MODULE_LOADING CLI_HELP_ZERO_INIT
    "  --json FILE|-    also write the JSON report to FILE; '-' writes only JSON to stdout\n"
    "  -h, --help       this text\n"
    "\n"
    "The JSON schema is in docs/JSON-SCHEMA.md. Exit codes: 0 success (whether or not the\n"
    "configuration fits), 1 bad input file, 2 bad command line.\n";

enum {
    OPT_MODEL,
    OPT_CONFIG,
    OPT_PLATFORM,
    OPT_GPUS,
    OPT_NODES,
    OPT_SEQ_LEN,
    OPT_RECOMPUTE,
    OPT_FLASH,
    OPT_JSON,
    OPT_HEADROOM,
    OPT_MICRO_BATCH, /* CLI_TRAIN_OPTIONS, in their order */
    OPT_PRECISION = OPT_MICRO_BATCH + CLI_N_TRAIN_OPTIONS - 1,
    OPT_EP_SIZE,
    OPT_CAPACITY,
    OPT_IMBALANCE,
    OPT_MODULE_LOADING,
    OPT_ZERO_INIT,
    N_OPTS
};

static void write_text(FILE *out, const void *report)
{
    estimate_report_text(out, report);
}

static void write_json(FILE *out, const void *report)
{
    estimate_report_json(out, report);
}

int cmd_estimate(int argc, char **argv)
{
    CliOption o[N_OPTS] = {
        [OPT_MODEL] = {"--model", true, NULL},
        [OPT_CONFIG] = {"--config", true, NULL},
        [OPT_PLATFORM] = {"--platform", true, NULL},
        [OPT_GPUS] = {"--gpus", true, NULL},
        [OPT_NODES] = {"--nodes", true, NULL},
        [OPT_SEQ_LEN] = {"--seq-len", true, NULL},
        [OPT_RECOMPUTE] = {"--activation-checkpointing", true, NULL},
        [OPT_FLASH] = {"--flash-attention", true, NULL},
        [OPT_JSON] = {"--json", true, NULL},
        [OPT_HEADROOM] = {"--headroom", true, NULL},
        [OPT_MICRO_BATCH] = CLI_TRAIN_OPTIONS,
        [OPT_EP_SIZE] = {"--ep-size", true, NULL},
        [OPT_CAPACITY] = {"--moe-capacity-factor", true, NULL},
        [OPT_IMBALANCE] = {"--moe-imbalance", true, NULL},
        [OPT_MODULE_LOADING] = {"--cuda-module-loading", true, NULL},
        [OPT_ZERO_INIT] = {"--zero-init", true, NULL},
    };
    const char *cmd = "estimate";
    int rc = cli_parse(cmd, help, argc, argv, 2, o, N_OPTS);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    if (cli_require(cmd, o, OPT_MODEL, OPT_PLATFORM))
        return EXIT_BAD_USAGE;
    uint64_t gpus = 0, nodes = 0;
    EstimateOptions opts;
    const char *seq = o[OPT_SEQ_LEN].value, *recompute = o[OPT_RECOMPUTE].value,
               *flash = o[OPT_FLASH].value;
    if (cli_count(cmd, "--gpus", o[OPT_GPUS].value, &gpus) ||
        cli_count(cmd, "--nodes", o[OPT_NODES].value, &nodes) ||
        cli_setup_options(cmd, seq, recompute, flash, &opts) ||
        cli_cross_entropy(cmd, cli_value(o, N_OPTS, "--cross-entropy"), &opts) ||
        cli_elementwise(cmd, cli_value(o, N_OPTS, "--elementwise"), &opts) ||
        cli_zero_init(cmd, o[OPT_ZERO_INIT].value, &opts) ||
        cli_headroom(cmd, o[OPT_HEADROOM].value, &opts.headroom_fraction, NULL) ||
        cli_moe_options(cmd, o[OPT_EP_SIZE].value, o[OPT_CAPACITY].value,
                        o[OPT_IMBALANCE].value, &opts))
        return EXIT_BAD_USAGE;
    TrainOverrides overrides;
    if (cli_train_overrides(cmd, o, N_OPTS, &overrides))
        return EXIT_BAD_USAGE;

    Err err = {0};
    ModelConfig model = {0};
    TrainConfig train = {0};
    Platform platform;
    StrList setup_defaults;
    strlist_init(&setup_defaults);
    int exit_code = EXIT_BAD_INPUT;
    const char *json = o[OPT_JSON].value;
    if ((exit_code = cli_check_output(json, "the JSON report", &err)) != 0)
        goto done;
    exit_code = cli_load_inputs(o[OPT_MODEL].value, o[OPT_CONFIG].value, o[OPT_PLATFORM].value,
                                gpus, nodes, &overrides, NULL, &model, &train, &platform, &err);
    if (exit_code)
        goto done;
    exit_code = cli_module_loading(cmd, o[OPT_MODULE_LOADING].value, &platform, &setup_defaults,
                                   &err);
    if (exit_code)
        goto done;
    exit_code = EXIT_BAD_INPUT;
    cli_setup_defaults(seq, recompute, flash, &model, &setup_defaults);
    if (cli_value(o, N_OPTS, "--cross-entropy") == NULL)
        strlist_addf(&setup_defaults, "--cross-entropy eager");
    if (cli_value(o, N_OPTS, "--elementwise") == NULL)
        strlist_addf(&setup_defaults, "--elementwise fused");
    if (o[OPT_ZERO_INIT].value == NULL && train.zero.stage == 3 && !opts.is_fsdp)
        strlist_addf(&setup_defaults, "%s", CLI_ZERO_INIT_DEFAULT);
    if (o[OPT_HEADROOM].value == NULL)
        strlist_addf(&setup_defaults, "--headroom %.2f (of GPU memory kept free)",
                     ESTIMATE_DEFAULT_HEADROOM_FRACTION);

    Estimate est;
    if (estimate_build(&model, &train, &platform, &opts, &est, &err))
        goto done;
    Remedy remedy;
    CliRemedyContext ctx = {train.file, model.hidden, overrides, est.setup.global_batch, NULL};
    if (!est.fits && remedy_find(&model, &train, &platform, &opts, &est, 0, cli_remedy_config,
                                 &ctx, &remedy, &err))
        goto done;
    EstimateReport report = {&model, &train, &platform, &est, &setup_defaults,
                             est.fits ? NULL : &remedy};
    exit_code = cli_emit_report(json, write_text, write_json, &report, &err);
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    strlist_fini(&setup_defaults);
    model_config_fini(&model);
    ds_config_fini(&train);
    return exit_code;
}
