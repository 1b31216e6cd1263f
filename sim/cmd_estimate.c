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

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const help =
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
    "  --activation-checkpointing none|selective|full|every:N\n"
    "                   recomputation in the model code: selective drops the attention\n"
    "                   scores (Korthikanti et al.), full re-runs every layer, every:N\n"
    "                   every N-th layer, as FSDP codebases' per-layer checkpointing\n"
    "                   (default: none)\n"
    "  --flash-attention on|off\n"
    "                   attention without stored s x s scores (default: on)\n"
    "  --json FILE|-    also write the JSON report to FILE; '-' writes only JSON to stdout\n"
    "  -h, --help       this text\n"
    "\n"
    "The JSON schema is in docs/JSON-SCHEMA.md. Exit codes: 0 success (whether or not the\n"
    "configuration fits), 1 bad input file, 2 bad command line.\n";

enum { OPT_MODEL, OPT_CONFIG, OPT_PLATFORM, OPT_GPUS, OPT_NODES, OPT_SEQ_LEN, OPT_RECOMPUTE,
       OPT_FLASH, OPT_JSON, N_OPTS };

/* Writes the JSON report to `path`; 0 or EXIT_BAD_INPUT with err set. */
static int write_json_file(const char *path, const EstimateReport *report, Err *err)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        err_set(err, "%s: cannot write JSON report: %s", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    estimate_report_json(f, report);
    if (fclose(f) != 0) {
        err_set(err, "%s: cannot write JSON report: %s", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
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
    };
    const char *cmd = "estimate";
    int rc = cli_parse(cmd, help, argc, argv, 2, o, N_OPTS);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    for (int k = OPT_MODEL; k <= OPT_PLATFORM; k++)
        if (o[k].value == NULL)
            return cli_usage_error(cmd, "%s: expected a value for this required option, got "
                                   "nothing", o[k].name);
    uint64_t gpus = 0, nodes = 0, seq_len = 0;
    EstimateOptions opts = {.recompute = RECOMPUTE_NONE, .is_flash_attention = true};
    if (cli_count(cmd, "--gpus", o[OPT_GPUS].value, &gpus) ||
        cli_count(cmd, "--nodes", o[OPT_NODES].value, &nodes) ||
        cli_count(cmd, "--seq-len", o[OPT_SEQ_LEN].value, &seq_len))
        return EXIT_BAD_USAGE;
    const char *recompute = o[OPT_RECOMPUTE].value, *flash = o[OPT_FLASH].value;
    if (recompute && setup_recompute_parse(recompute, &opts.recompute, &opts.checkpoint_every))
        return cli_usage_error(cmd, "--activation-checkpointing: expected none, selective, full "
                               "or every:N, got \"%s\"", recompute);
    if (flash && strcmp(flash, "on") != 0 && strcmp(flash, "off") != 0)
        return cli_usage_error(cmd, "--flash-attention: expected on or off, got \"%s\"", flash);
    opts.is_flash_attention = flash == NULL || strcmp(flash, "on") == 0;
    opts.seq_len = seq_len;

    Err err = {0};
    ModelConfig model = {0};
    TrainConfig train = {0};
    Platform platform;
    StrList setup_defaults;
    strlist_init(&setup_defaults);
    int exit_code = EXIT_BAD_INPUT;
    const char *json = o[OPT_JSON].value;
    if (model_config_load(&model, o[OPT_MODEL].value, cli_data_dir(), &err) ||
        ds_config_load(&train, o[OPT_CONFIG].value, cli_data_dir(), &err) ||
        platform_load(&platform, o[OPT_PLATFORM].value, cli_data_dir(), &err))
        goto done;
    if (platform_resize(&platform, gpus, nodes, &err)) {
        exit_code = EXIT_BAD_USAGE; /* the sizes asked for do not fit the platform */
        goto done;
    }
    cli_warn_not_modelled(o[OPT_MODEL].value, &model.not_modelled);
    cli_warn_not_modelled(o[OPT_CONFIG].value, &train.not_modelled);
    cli_warn_precision(platform.name, platform.gpu.bf16_flops_per_s,
                       train.precision == PRECISION_BF16);
    if (seq_len == 0)
        strlist_addf(&setup_defaults, "--seq-len %llu (the model's context length)",
                     (unsigned long long)model.max_seq);
    if (recompute == NULL)
        strlist_addf(&setup_defaults, "--activation-checkpointing none");
    if (flash == NULL)
        strlist_addf(&setup_defaults, "--flash-attention on");

    Estimate est;
    if (estimate_build(&model, &train, &platform, &opts, &est, &err))
        goto done;
    EstimateReport report = {&model, &train, &platform, &est, &setup_defaults};
    exit_code = EXIT_OK;
    if (json && strcmp(json, "-") == 0) {
        estimate_report_json(stdout, &report);
    } else {
        estimate_report_text(stdout, &report);
        if (json)
            exit_code = write_json_file(json, &report, &err);
    }
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    strlist_fini(&setup_defaults);
    model_config_fini(&model);
    ds_config_fini(&train);
    return exit_code;
}
