/*
 * cli.c - option tables, value converters and shared messages (see cli.h).
 */
#include "cli.h"

#include "common/suggest.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/setup.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "zerosim %s: ", command);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see zerosim %s --help)\n", command);
    va_end(ap);
    return EXIT_BAD_USAGE;
}

int cli_parse(const char *command, const char *help, int argc, char **argv, int first,
              CliOption *options, int n_options)
{
    const char *names[64];
    int n_names = 0;
    for (int k = 0; k < n_options && n_names < 63; k++)
        names[n_names++] = options[k].name;
    names[n_names] = NULL;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(help, stdout);
            return 1;
        }
        CliOption *opt = NULL;
        for (int k = 0; k < n_options; k++)
            if (strcmp(arg, options[k].name) == 0)
                opt = &options[k];
        if (opt == NULL) {
            const char *best = suggest_closest(arg, names);
            if (best != NULL)
                return cli_usage_error(command, "unknown option \"%s\" (did you mean \"%s\"?)", arg,
                                       best);
            return cli_usage_error(command, "unknown option \"%s\"", arg);
        }
        if (!opt->takes_value) {
            opt->value = "";
            continue;
        }
        if (i + 1 >= argc)
            return cli_usage_error(command, "%s: expected a value, got nothing", arg);
        opt->value = argv[++i];
    }
    return 0;
}

const char *cli_value(const CliOption *options, int n_options, const char *name)
{
    for (int k = 0; k < n_options; k++)
        if (strcmp(options[k].name, name) == 0)
            return options[k].value;
    return NULL;
}

static int parse_scaled(const char *command, const char *option, const char *text,
                        bool allow_suffix, uint64_t *out)
{
    if (text == NULL)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    uint64_t scale = 1;
    if (allow_suffix && end != NULL && end != text && end[0] != '\0' && end[1] == '\0') {
        switch (end[0]) {
        case 'K':
        case 'k':
            scale = 1ull << 10;
            end++;
            break;
        case 'M':
        case 'm':
            scale = 1ull << 20;
            end++;
            break;
        case 'G':
        case 'g':
            scale = 1ull << 30;
            end++;
            break;
        default: break;
        }
    }
    if (text[0] == '-' || text[0] == '\0' || end == text || *end != '\0' || errno != 0 || v == 0 ||
        v > (1ull << 50) / scale)
        return cli_usage_error(command, "%s: expected %s, got \"%s\"", option,
                               allow_suffix ? "a positive size in bytes (e.g. 8, 64K, 1M, 8G)"
                                            : "a positive integer",
                               text);
    *out = v * scale;
    return 0;
}

int cli_count(const char *command, const char *option, const char *text, uint64_t *out)
{
    return parse_scaled(command, option, text, false, out);
}

int cli_bytes(const char *command, const char *option, const char *text, uint64_t *out)
{
    return parse_scaled(command, option, text, true, out);
}

const char *cli_data_dir(void)
{
    const char *env = getenv("ZEROSIM_DATA_DIR");
    return env && env[0] ? env : ZEROSIM_DATA_DIR;
}

void cli_warn_precision(const char *platform_name, double bf16_flops_per_s, int is_bf16)
{
    if (is_bf16 && bf16_flops_per_s <= 0)
        fprintf(stderr,
                "zerosim: warning: %s: the GPU has no bf16 tensor cores; the config's "
                "bf16 runs at its fp16 peak here (real hardware would refuse or emulate it)\n",
                platform_name);
}

void cli_warn_not_modelled(const char *file, const StrList *keys)
{
    if (keys->n_items == 0)
        return;
    fprintf(stderr,
            "zerosim: warning: %s: keys read but not modelled (they do not change the "
            "result): ",
            file);
    for (size_t i = 0; i < keys->n_items; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", keys->items[i]);
    fputc('\n', stderr);
}

int cli_require(const char *command, const CliOption *options, int first, int last)
{
    for (int k = first; k <= last; k++)
        if (options[k].value == NULL)
            return cli_usage_error(command,
                                   "%s: expected a value for this required option, got "
                                   "nothing",
                                   options[k].name);
    return 0;
}

int cli_setup_options(const char *command, const char *seq_len, const char *recompute,
                      const char *flash, EstimateOptions *out)
{
    *out = (EstimateOptions){
        .recompute = RECOMPUTE_NONE, .checkpoint_every = 1, .is_flash_attention = true};
    if (cli_count(command, "--seq-len", seq_len, &out->seq_len))
        return EXIT_BAD_USAGE;
    if (recompute && setup_recompute_parse(recompute, &out->recompute, &out->checkpoint_every))
        return cli_usage_error(command,
                               "--activation-checkpointing: expected none, selective, "
                               "full or every:N, got \"%s\"",
                               recompute);
    if (flash && strcmp(flash, "on") != 0 && strcmp(flash, "off") != 0)
        return cli_usage_error(command, "--flash-attention: expected on or off, got \"%s\"", flash);
    out->is_flash_attention = flash == NULL || strcmp(flash, "on") == 0;
    return 0;
}

int cli_deepspeed_version(const char *command, const char *text, Zero3Generation *out)
{
    const char *v = text ? text : CLI_DEEPSPEED_DEFAULT_VERSION;
    unsigned major = 0, minor = 0, patch = 0;
    int used = 0;
    int n = sscanf(v, "%u.%u%n", &major, &minor, &used);
    if (n == 2 && v[used] == '.') {
        int more = 0;
        if (sscanf(v + used, ".%u%n", &patch, &more) == 1)
            used += more;
        else
            used = -1;
    }
    if (n != 2 || used < 0 || v[used] != '\0')
        return cli_usage_error(command,
                               "--deepspeed-version: expected a release like 0.19 or 0.5.10, "
                               "got \"%s\"",
                               v);
    /* ZeRO-3's PartitionedParameterCoordinator with coalesced per-submodule all-gathers and
     * event-based waits replaced per-parameter gathers and torch.cuda.synchronize() in 0.6.0 */
    *out = major > 0 || minor >= 6 ? ZERO3_GEN_PER_SUBMODULE : ZERO3_GEN_PER_PARAMETER;
    (void)patch;
    return 0;
}

void cli_setup_defaults(const char *seq_len, const char *recompute, const char *flash,
                        uint64_t model_max_seq, StrList *defaults)
{
    if (seq_len == NULL)
        strlist_addf(defaults, "--seq-len %llu (the model's context length)",
                     (unsigned long long)model_max_seq);
    if (recompute == NULL)
        strlist_addf(defaults, "--activation-checkpointing none");
    if (flash == NULL)
        strlist_addf(defaults, "--flash-attention on");
}

int cli_load_inputs(const char *model_arg, const char *config_arg, const char *platform_arg,
                    uint64_t gpus, uint64_t nodes, ModelConfig *model, TrainConfig *train,
                    Platform *platform, Err *err)
{
    if (model_config_load(model, model_arg, cli_data_dir(), err) ||
        ds_config_load(train, config_arg, cli_data_dir(), err) ||
        platform_load(platform, platform_arg, cli_data_dir(), err))
        return EXIT_BAD_INPUT;
    if (platform_resize(platform, gpus, nodes, err))
        return EXIT_BAD_USAGE; /* the sizes asked for do not fit the platform */
    cli_warn_not_modelled(model_arg, &model->not_modelled);
    cli_warn_not_modelled(config_arg, &train->not_modelled);
    cli_warn_precision(platform->name, platform->gpu.bf16_flops_per_s,
                       train->precision == PRECISION_BF16);
    return 0;
}

int cli_write_file(const char *path, const char *what, void (*write)(FILE *out, const void *data),
                   const void *data, Err *err)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        err_set(err, "%s: cannot write %s: %s", path, what, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    write(f, data);
    bool is_ok = !ferror(f);
    if (fclose(f) != 0 || !is_ok) {
        err_set(err, "%s: cannot write %s: %s", path, what, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return 0;
}
