/*
 * cmd_advise.c - `zerosim advise`: which ZeRO stage, offload, micro-batch and checkpointing
 * to use for a model on a cluster, and why.
 *
 * The command line and the outputs: the candidates, their search and their ranking are
 * study/advise.h's, the table and the explanation report/advice.h's, the recommended
 * config's text study/advise_config.h's.
 */
#define _POSIX_C_SOURCE 200809L /* fileno, isatty */

#include "cli.h"

#include "common/err.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/params.h"
#include "report/advice.h"
#include "report/advice_html.h"
#include "study/advise.h"
#include "study/advise_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const help =
    "usage: zerosim advise --model M --platform P [options]\n"
    "\n"
    "Ranks the ways to train a model on a cluster: DDP, ZeRO-1, -2, -3, ZeRO-2 and ZeRO-3\n"
    "with the optimizer offloaded to the CPU, ZeRO-3 with optimizer and parameters on the\n"
    "CPU, and ZeRO-3 with both on NVMe (ZeRO-Infinity), each without activation\n"
    "checkpointing, with full checkpointing and with every:N (the largest N that fits), at\n"
    "the largest micro-batch that fits; ZeRO-3 whose compute waits on all-gathers is also\n"
    "tried with a prefetch window of one layer (\"+ prefetch\"); for a mixture of experts\n"
    "each also without expert parallelism, with a node's GPUs splitting the experts (the\n"
    "all-to-all on NVLink) and with the widest split (fewest experts per GPU, the\n"
    "all-to-all over the NICs). Every candidate runs the same global batch (--global-batch,\n"
    "else the GPUs times the largest micro-batch any fits), with gradient accumulation\n"
    "making up the rest, so step times compare. Those that fit are simulated; the table\n"
    "gives fits or not (what runs out, by how much, and whether model states or\n"
    "activations), step time, tokens/s, TFLOP/s per GPU, memory per GPU, bytes each rank\n"
    "sends and the bottleneck, and a paragraph explains the recommendation in the terms of\n"
    "the ZeRO selection guide: within 3% of the fastest, the simplest configuration (DDP,\n"
    "ZeRO-1, -2, -3, then offload) and one with 10% of the GPU free is preferred, and says\n"
    "so. On a terminal, progress goes to stderr.\n"
    "\n"
    "required:\n"
    "  --model M          HuggingFace config.json path or preset (e.g. llama-2-13b)\n"
    "  --platform P       platform JSON path or shipped name (e.g. dgx-a100-80g)\n"
    "options:\n"
    "  --gpus N           resize the platform to N GPUs\n"
    "  --nodes N          resize the platform to N nodes\n"
    "  --global-batch B   sequences per step (micro-batch x accumulation x GPUs); default:\n"
    "                     the largest micro-batch that fits, no accumulation\n"
    "  --seq-len S        tokens per sequence (default: 2048, or the model's context if shorter)\n"
    "  --precision bf16|fp16  (default: bf16 where the GPU has it, else fp16)\n"
    "  --max-micro-batch K    largest micro-batch tried (default 64)\n"
    "  --json FILE|-      also write the table as JSON (with a \"recommended\" object); '-'\n"
    "                     writes only JSON to stdout\n"
    "  --write-config FILE  write the recommended configuration as a ds_config.json,\n"
    "                     ready for `zerosim run --config FILE` and for DeepSpeed\n"
    "  --html FILE        also write the table and charts of step time, tokens/s and GPU\n"
    "                     memory per candidate as one self-contained HTML page\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit codes: 0 success (even when nothing fits: the report says so), 1 bad input file\n"
    "or an output that cannot be written, 2 bad command line, 3 --write-config asked for\n"
    "and nothing fits.\n";

enum {
    OPT_MODEL,
    OPT_PLATFORM,
    OPT_GPUS,
    OPT_NODES,
    OPT_BATCH,
    OPT_SEQ,
    OPT_PRECISION,
    OPT_MAX_MICRO,
    OPT_JSON,
    OPT_WRITE_CONFIG,
    OPT_HTML,
    N_OPTS
};

static void write_html(FILE *out, const void *advice)
{
    advice_html_write(out, advice);
}

static void write_text(FILE *out, const void *text)
{
    fputs(text, out);
}

/* Writes the recommended candidate's ds_config.json to `path` and says so on `note`. */
static int write_config(const char *path, const Candidate *best, const char *precision, FILE *note,
                        Err *err)
{
    char text[1024];
    advise_config_text(best, precision, text, sizeof text);
    if (cli_write_file(path, "the recommended config", write_text, text, err))
        return -1;
    fprintf(note, "\nwrote %s: the recommended DeepSpeed config", path);
    if (best->offload_optimizer == OFFLOAD_NVME || best->offload_param == OFFLOAD_NVME)
        fprintf(note, "; set nvme_path (" ADVISE_NVME_PATH_PLACEHOLDER
                      ") to the nodes' NVMe mount");
    char ck[24];
    if (best->is_checkpointed)
        fprintf(note,
                "; also enable %s activation checkpointing in the model "
                "(--activation-checkpointing %s), which ds_config does not express",
                best->checkpoint_every > 1 ? "every-N-th-layer" : "full",
                advice_checkpointing(best, ck, sizeof ck));
    if (best->ep_size > 1)
        fprintf(note, "; and give the MoE layers ep_size %llu (DeepSpeed-MoE's "
                      "deepspeed.moe.layer.MoE(ep_size=...), --ep-size %llu here), which "
                      "ds_config does not express",
                (unsigned long long)best->ep_size, (unsigned long long)best->ep_size);
    fputc('\n', note);
    return 0;
}

/* Progress on a terminal: one line on stderr, rewritten in place, erased at the end. */
static void progress(void *ctx, size_t done, size_t total, const Candidate *next)
{
    (void)ctx;
    char nm[64], ck[24];
    if (next == NULL) {
        fputs("\r\033[K", stderr);
        return;
    }
    fprintf(stderr,
            "\r\033[Kadvise: candidate %zu of %zu that fit: %s, micro-batch %llu, "
            "checkpointing %s",
            done + 1, total, advice_name(next, nm, sizeof nm),
            (unsigned long long)next->micro_batch, advice_checkpointing(next, ck, sizeof ck));
    fflush(stderr);
}

static void write_text_report(FILE *out, const void *advice)
{
    advice_text(out, advice);
}

static void write_json(FILE *out, const void *advice)
{
    advice_json(out, advice);
}

int cmd_advise(int argc, char **argv)
{
    CliOption o[N_OPTS] = {
        [OPT_MODEL] = {"--model", true, NULL},
        [OPT_PLATFORM] = {"--platform", true, NULL},
        [OPT_GPUS] = {"--gpus", true, NULL},
        [OPT_NODES] = {"--nodes", true, NULL},
        [OPT_BATCH] = {"--global-batch", true, NULL},
        [OPT_SEQ] = {"--seq-len", true, NULL},
        [OPT_PRECISION] = {"--precision", true, NULL},
        [OPT_MAX_MICRO] = {"--max-micro-batch", true, NULL},
        [OPT_JSON] = {"--json", true, NULL},
        [OPT_WRITE_CONFIG] = {"--write-config", true, NULL},
        [OPT_HTML] = {"--html", true, NULL},
    };
    const char *cmd = "advise";
    int rc = cli_parse(cmd, help, argc, argv, 2, o, N_OPTS);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    if (cli_require(cmd, o, OPT_MODEL, OPT_PLATFORM))
        return EXIT_BAD_USAGE;
    uint64_t gpus = 0, nodes = 0, batch = 0, seq = 0, max_micro = 64;
    if (cli_count(cmd, "--gpus", o[OPT_GPUS].value, &gpus) ||
        cli_count(cmd, "--nodes", o[OPT_NODES].value, &nodes) ||
        cli_count(cmd, "--global-batch", o[OPT_BATCH].value, &batch) ||
        cli_count(cmd, "--seq-len", o[OPT_SEQ].value, &seq) ||
        cli_count(cmd, "--max-micro-batch", o[OPT_MAX_MICRO].value, &max_micro))
        return EXIT_BAD_USAGE;
    const char *precision = o[OPT_PRECISION].value;
    if (precision && strcmp(precision, "bf16") != 0 && strcmp(precision, "fp16") != 0)
        return cli_usage_error(cmd, "--precision: expected bf16 or fp16, got \"%s\"", precision);

    Err err = {0};
    ModelConfig model = {0};
    Platform p;
    if (cli_check_output(o[OPT_JSON].value, "the JSON report", &err) ||
        cli_check_output(o[OPT_WRITE_CONFIG].value, "the recommended config", &err) ||
        cli_check_output(o[OPT_HTML].value, "the HTML report", &err) ||
        model_config_load(&model, o[OPT_MODEL].value, cli_data_dir(), &err) ||
        platform_load(&p, o[OPT_PLATFORM].value, cli_data_dir(), &err)) {
        fprintf(stderr, "zerosim: %s\n", err.msg);
        model_config_fini(&model);
        return EXIT_BAD_INPUT;
    }
    int exit_code = EXIT_BAD_USAGE;
    Candidate *cands = NULL;
    if (platform_resize(&p, gpus, nodes, &err))
        goto done;
    const uint64_t n = platform_n_gpus(&p);
    if (batch && batch % n != 0) {
        err_set(&err, "--global-batch %llu: expected a multiple of the %llu GPUs, got %llu",
                (unsigned long long)batch, (unsigned long long)n, (unsigned long long)batch);
        goto done;
    }
    if (precision == NULL)
        precision = p.gpu.bf16_flops_per_s > 0 ? "bf16" : "fp16";
    if (seq == 0)
        seq = model_config_default_seq_len(&model);
    exit_code = EXIT_BAD_INPUT;

    size_t n_cands = 0;
    uint64_t common = 0;
    AdviseRequest req = {&model, &p, seq, batch, max_micro, precision, NULL, NULL};
    if (isatty(fileno(stderr)))
        req.progress = progress;
    if (advise_search(&req, &cands, &n_cands, &common, &err))
        goto done;

    ModelParams params;
    params_count(&model, &params);
    Advice advice = {&model, &p, (double)params.total, seq, batch, cands, n_cands, common};
    const char *json = o[OPT_JSON].value;
    exit_code = cli_emit_report(json, write_text_report, write_json, &advice, &err);
    if (exit_code == EXIT_OK && o[OPT_HTML].value)
        exit_code = cli_write_file(o[OPT_HTML].value, "the HTML report", write_html, &advice, &err);
    const char *config_path = o[OPT_WRITE_CONFIG].value;
    if (exit_code == EXIT_OK && config_path) {
        if (n_cands == 0 || !cands[0].fits) {
            fprintf(stderr,
                    "zerosim advise: --write-config: nothing fits, so no config was written\n");
            exit_code = EXIT_OUT_OF_MEMORY;
        } else if (write_config(config_path, &cands[0], precision,
                                /* stdout holds only JSON with --json - */
                                json && strcmp(json, "-") == 0 ? stderr : stdout, &err)) {
            exit_code = EXIT_BAD_INPUT;
        }
    }
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    free(cands);
    model_config_fini(&model);
    return exit_code;
}
