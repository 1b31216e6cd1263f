/*
 * cli.c - option tables, value converters and shared messages (see cli.h).
 */
#define _POSIX_C_SOURCE 200809L /* access, stat */

#include "cli.h"

#include "common/suggest.h"
#include "engine/collective.h"
#include "inputs/ds_config.h"
#include "inputs/model_config.h"
#include "inputs/platform.h"
#include "model/setup.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        for (int k = 0; k < n_options; k++) /* "--gpus --seq-len 1024": --gpus has no value */
            if (strcmp(argv[i + 1], options[k].name) == 0)
                return cli_usage_error(command, "%s: expected a value, got the option %s", arg,
                                       argv[i + 1]);
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

int cli_choice(const char *command, const char *option, const Choices *choices, bool skip_first,
               const char *text, int *out)
{
    if (text == NULL)
        return 0;
    int v = choices_parse(choices, text);
    if (v < 0 || (skip_first && v == 0)) {
        char expected[256];
        return cli_usage_error(command, "%s: expected %s, got \"%s\"", option,
                               choices_expected(choices, skip_first, expected, sizeof expected),
                               text);
    }
    *out = v;
    return 0;
}

int cli_zero_init(const char *command, const char *text, EstimateOptions *out)
{
    int off = 0;
    if (cli_choice(command, "--zero-init", &choices_zero_init, false, text, &off))
        return EXIT_BAD_USAGE;
    out->is_loaded_whole = off == 1;
    return 0;
}

int cli_module_loading(const char *command, const char *text, Platform *p, StrList *defaults,
                       Err *err)
{
    int eager = 0;
    if (cli_choice(command, "--cuda-module-loading", &choices_module_loading, false, text, &eager))
        return EXIT_BAD_USAGE;
    if (text == NULL && defaults != NULL && p->has_runtime)
        strlist_addf(defaults, "--cuda-module-loading lazy (CUDA_MODULE_LOADING=LAZY, PyTorch's "
                               "default since 1.13)");
    return platform_set_module_loading(p, eager == 1, err) ? EXIT_BAD_INPUT : 0;
}

int cli_job_options(const char *command, const char *ring_order, const char *straggler,
                    CliJob *out)
{
    memset(out, 0, sizeof *out);
    if (cli_choice(command, "--ring-order", &choices_ring_order, false, ring_order,
                   &out->ring_order))
        return EXIT_BAD_USAGE;
    if (straggler == NULL)
        return 0;
    char kind[8] = "";
    unsigned long long index = 0;
    double slowdown = 0;
    int n_used = 0;
    if (sscanf(straggler, "%7[a-z]:%llu:%lf%n", kind, &index, &slowdown, &n_used) != 3 ||
        straggler[n_used] != '\0' || (strcmp(kind, "node") != 0 && strcmp(kind, "gpu") != 0) ||
        !(slowdown > 1.0) || slowdown > 1e6)
        return cli_usage_error(command,
                               "--straggler: expected node:K:F or gpu:R:F with a slowdown F in "
                               "(1, 1e6] (node:3:1.5: node 3 computes 1.5x slower), got \"%s\"",
                               straggler);
    out->has_straggler = true;
    out->is_straggler_node = strcmp(kind, "node") == 0;
    out->straggler_index = index;
    out->straggler_slowdown = slowdown;
    return 0;
}

int cli_job_apply(const char *command, const CliJob *job, Platform *p)
{
    platform_set_ring_order(p, (PlatformRingOrder)job->ring_order);
    Err err = {0};
    if (job->has_straggler &&
        platform_set_straggler(p, job->is_straggler_node, job->straggler_index,
                               job->straggler_slowdown, "--straggler", &err))
        return cli_usage_error(command, "%s", err.msg);
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

/* Digits only: strtoull alone would take leading blanks, a sign and wrap "-1" around. */
static bool read_decimal(const char *p, const char **end, unsigned long long *out)
{
    if (*p < '0' || *p > '9')
        return false;
    char *stop = NULL;
    errno = 0;
    *out = strtoull(p, &stop, 10);
    *end = stop;
    return errno == 0;
}

int cli_ranks(const char *text, uint32_t n, bool *flags)
{
    const char *p = text;
    do {
        unsigned long long a, b;
        if (!read_decimal(p, &p, &a))
            return -1;
        b = a;
        if (*p == '-' && (!read_decimal(p + 1, &p, &b) || b < a))
            return -1;
        if (b >= n)
            return -1;
        for (unsigned long long r = a; r <= b; r++)
            flags[r] = true;
    } while (*p == ',' && *++p != '\0');
    return *p == '\0' && p[-1] != ',' ? 0 : -1;
}

int cli_shard(const char *command, const char *text, uint64_t *index, uint64_t *count)
{
    if (text == NULL)
        return 0;
    const char *p = text;
    unsigned long long i = 0, n = 0;
    bool ok = read_decimal(p, &p, &i) && *p == '/' && read_decimal(p + 1, &p, &n) &&
              *p == '\0' && n >= 1 && i < n && n <= (1ull << 32);
    if (!ok)
        return cli_usage_error(command,
                               "--shard: expected I/N with 0 <= I < N (e.g. 0/4), got "
                               "\"%s\"",
                               text);
    *index = i;
    *count = n;
    return 0;
}

const char *cli_data_dir(void)
{
    const char *env = getenv("ZEROSIM_DATA_DIR");
    return env && env[0] ? env : ZEROSIM_DATA_DIR;
}

bool cli_is_quiet = false;

int cli_train_overrides(const char *command, const CliOption *options, int n_options,
                        TrainOverrides *out)
{
    *out = (TrainOverrides){0};
    if (cli_count(command, "--micro-batch", cli_value(options, n_options, "--micro-batch"),
                  &out->micro_batch) ||
        cli_count(command, "--grad-accum", cli_value(options, n_options, "--grad-accum"),
                  &out->grad_accum) ||
        cli_count(command, "--global-batch", cli_value(options, n_options, "--global-batch"),
                  &out->global_batch))
        return EXIT_BAD_USAGE;
    /* DeepSpeed's batch keys are read up to 2^31 (ds_config.c); so are these. */
    static const char *const names_batch[] = {"--micro-batch", "--grad-accum", "--global-batch"};
    const uint64_t given[] = {out->micro_batch, out->grad_accum, out->global_batch};
    for (int i = 0; i < 3; i++)
        if (given[i] > (1ull << 31))
            return cli_usage_error(command, "%s: expected a positive integer at most 2147483648, "
                                            "got %llu",
                                   names_batch[i], (unsigned long long)given[i]);
    const char *precision = cli_value(options, n_options, "--precision");
    if (precision == NULL)
        return 0;
    static const Precision values[] = {PRECISION_BF16, PRECISION_FP16, PRECISION_FP32};
    static const char *const names[] = {"bf16", "fp16", "fp32"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(precision, names[i]) == 0) {
            out->has_precision = true;
            out->precision = values[i];
            return 0;
        }
    }
    return cli_usage_error(command, "--precision: expected bf16, fp16 or fp32, got \"%s\"",
                           precision);
}

void cli_warn_precision(const char *platform_name, double bf16_flops_per_s, int is_bf16)
{
    if (is_bf16 && bf16_flops_per_s <= 0 && !cli_is_quiet)
        fprintf(stderr,
                "zerosim: warning: %s: the GPU has no bf16 tensor cores; the config's "
                "bf16 runs at its fp16 peak here (real hardware would refuse or emulate it)\n",
                platform_name);
}

static void warn_list(const char *file, const char *what, const StrList *keys)
{
    if (keys->n_items == 0 || cli_is_quiet)
        return;
    fprintf(stderr, "zerosim: warning: %s: %s: ", file, what);
    for (size_t i = 0; i < keys->n_items; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", keys->items[i]);
    fputc('\n', stderr);
}

void cli_warn_not_modelled(const char *file, const StrList *keys, const StrList *unknown)
{
    warn_list(file, "not modelled, the result assumes otherwise", keys);
    warn_list(file, "unknown keys, ignored", unknown);
}

static int parse_factor(const char *command, const char *option, const char *text, double max,
                        double *out)
{
    char *end = NULL;
    double f = strtod(text, &end);
    if (end == text || *end != '\0' || !(f >= 1.0 && f <= max))
        return cli_usage_error(command, "%s: expected a number in [1, %g], got \"%s\"", option,
                               max, text);
    *out = f;
    return 0;
}

int cli_moe_options(const char *command, const char *ep_size, const char *capacity_factor,
                    const char *imbalance, EstimateOptions *out)
{
    if (imbalance != NULL &&
        parse_factor(command, "--moe-imbalance", imbalance, 64.0, &out->moe_imbalance))
        return EXIT_BAD_USAGE;
    if (cli_count(command, "--ep-size", ep_size, &out->ep_size))
        return EXIT_BAD_USAGE;
    if (ep_size != NULL && (out->ep_size < 1 || out->ep_size > (1u << 16)))
        return cli_usage_error(command, "--ep-size: expected an integer in [1, 65536], got \"%s\"",
                               ep_size);
    if (capacity_factor != NULL &&
        parse_factor(command, "--moe-capacity-factor", capacity_factor, 16.0,
                     &out->capacity_factor))
        return EXIT_BAD_USAGE;
    return 0;
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

enum { CLI_MAX_SEQ_LEN = 1 << 24 };

int cli_setup_options(const char *command, const char *seq_len, const char *recompute,
                      const char *flash, EstimateOptions *out)
{
    *out = (EstimateOptions){
        .recompute = RECOMPUTE_NONE, .checkpoint_every = 1, .is_flash_attention = true};
    if (cli_count(command, "--seq-len", seq_len, &out->seq_len))
        return EXIT_BAD_USAGE;
    /* 2^24 tokens: past the longest context any released model trains at (10M), and where
     * the score matrix of one head alone would be 2^49 elements */
    if (out->seq_len > CLI_MAX_SEQ_LEN)
        return cli_usage_error(command, "--seq-len: expected at most %llu tokens, got %llu",
                               (unsigned long long)CLI_MAX_SEQ_LEN,
                               (unsigned long long)out->seq_len);
    if (recompute && setup_recompute_parse(recompute, &out->recompute, &out->checkpoint_every))
        return cli_usage_error(command,
                               "--activation-checkpointing: expected none, selective, "
                               "full, selective-op or every:N, got \"%s\"",
                               recompute);
    int flash_mode = 0;
    if (cli_choice(command, "--flash-attention", &choices_flash, false, flash, &flash_mode))
        return EXIT_BAD_USAGE;
    out->is_flash_attention = flash == NULL || strcmp(flash, "off") != 0;
    out->flash_kernel = flash != NULL && strcmp(flash, "v1") == 0   ? PLATFORM_FLASH_V1
                        : flash != NULL && strcmp(flash, "v3") == 0 ? PLATFORM_FLASH_V3
                        : flash != NULL && strcmp(flash, "triton") == 0 ? PLATFORM_FLASH_TRITON
                                                                    : PLATFORM_FLASH_V2;
    return 0;
}

int cli_headroom(const char *command, const char *text, double *out_fraction, StrList *defaults)
{
    *out_fraction = ESTIMATE_DEFAULT_HEADROOM_FRACTION;
    if (text == NULL) {
        if (defaults != NULL)
            strlist_addf(defaults, "--headroom %.2f (of GPU memory kept free)",
                         ESTIMATE_DEFAULT_HEADROOM_FRACTION);
        return 0;
    }
    char *end = NULL;
    double f = strtod(text, &end);
    if (end == text || *end != '\0' || !(f >= 0.0 && f <= 0.5))
        return cli_usage_error(command, "--headroom: expected a number in [0, 0.5], got \"%s\"",
                               text);
    *out_fraction = f;
    return 0;
}

int cli_check_algo(const char *command, int algo, int comm_model, bool is_stepwise)
{
    if (algo != COLL_ALGO_NVLS && algo != COLL_ALGO_NVLS_TREE)
        return 0;
    if (comm_model != COMM_MODEL_IDEAL && !is_stepwise)
        return 0;
    return cli_usage_error(command,
                           "--algo %s: expected --comm-model nccl with it (NVLS is NCCL's "
                           "algorithm, timed by its cost model), got %s",
                           algo == COLL_ALGO_NVLS ? "nvls" : "nvls_tree",
                           is_stepwise ? "--stepwise" : "--comm-model ideal");
}

int cli_deepspeed_version(const char *command, const char *text, Zero3Generation *out,
                          DsRelease *out_release)
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
    const DsRelease release = {major, minor, patch, text != NULL, ""};
    /* the table of defaults (inputs/ds_config.c) starts with ZeRO-3's first release */
    if (ds_config_release_before(&release, 0, 3, 13))
        return cli_usage_error(command,
                               "--deepspeed-version: expected 0.3.13 or later (the first "
                               "release with ZeRO-3), got \"%s\"",
                               v);
    /* ZeRO-3's PartitionedParameterCoordinator with coalesced per-submodule all-gathers and
     * event-based waits replaced per-parameter gathers and torch.cuda.synchronize() in 0.6.0 */
    *out = ds_config_release_before(&release, 0, 6, 0) ? ZERO3_GEN_PER_PARAMETER
                                                        : ZERO3_GEN_PER_SUBMODULE;
    *out_release = release;
    snprintf(out_release->name, sizeof out_release->name, "%s", v);
    return 0;
}

int cli_cross_entropy(const char *command, const char *text, EstimateOptions *out)
{
    int mode = 0; /* choices_cross_entropy's order is LossKernel's */
    if (cli_choice(command, "--cross-entropy", &choices_cross_entropy, false, text, &mode))
        return EXIT_BAD_USAGE;
    out->loss = (LossKernel)mode;
    return 0;
}

int cli_elementwise(const char *command, const char *text, EstimateOptions *out)
{
    int mode = 0; /* choices_elementwise's order is ElementwiseKernels' */
    if (cli_choice(command, "--elementwise", &choices_elementwise, false, text, &mode))
        return EXIT_BAD_USAGE;
    out->elementwise = (ElementwiseKernels)mode;
    return 0;
}

void cli_setup_defaults(const char *seq_len, const char *recompute, const char *flash,
                        const ModelConfig *model, StrList *defaults)
{
    if (seq_len == NULL)
        strlist_addf(defaults,
                     "--seq-len %llu (training default: %u tokens, or the model's context when "
                     "shorter; the model's context is %llu)",
                     (unsigned long long)model_config_default_seq_len(model),
                     MODEL_CONFIG_TRAIN_SEQ_LEN, (unsigned long long)model->max_seq);
    if (recompute == NULL)
        strlist_addf(defaults, "--activation-checkpointing none");
    if (flash == NULL)
        strlist_addf(defaults, "--flash-attention on");
}

int cli_load_inputs(const char *model_arg, const char *config_arg, const char *platform_arg,
                    uint64_t gpus, uint64_t nodes, const TrainOverrides *overrides,
                    const DsRelease *release, ModelConfig *model, TrainConfig *train,
                    Platform *platform, Err *err)
{
    if (model_config_load(model, model_arg, cli_data_dir(), err) ||
        ds_config_load_release(train, config_arg, cli_data_dir(), NULL, release, err) ||
        ds_config_apply(train, model->hidden, overrides, err) ||
        platform_load(platform, platform_arg, cli_data_dir(), err))
        return EXIT_BAD_INPUT;
    if (platform_resize(platform, gpus, nodes, err))
        return EXIT_BAD_USAGE; /* the sizes asked for do not fit the platform */
    cli_warn_not_modelled(model_arg, &model->not_modelled, &model->unknown_keys);
    cli_warn_not_modelled(config_arg, &train->not_modelled, &train->unknown_keys);
    cli_warn_precision(platform->name, platform->gpu.bf16_flops_per_s,
                       train->precision == PRECISION_BF16);
    return 0;
}

void cli_self_exe(const char *argv0, char *out, size_t out_size)
{
    ssize_t n = readlink("/proc/self/exe", out, out_size - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    snprintf(out, out_size, "%s", argv0);
}

int cli_remedy_config(void *ctx, const RemedyVariant *v, TrainConfig *out, Err *err)
{
    const CliRemedyContext *c = ctx;
    if (ds_config_load_release(out, c->config_path, cli_data_dir(), &v->shape, c->release, err))
        return -1;
    TrainOverrides o = c->overrides;
    o.micro_batch = v->micro_batch;
    o.grad_accum = v->grad_accum;
    o.global_batch = c->global_batch;
    return ds_config_apply(out, c->hidden, &o, err);
}

int cli_emit_report(const char *json_path, CliWriter text, CliWriter json, const void *data,
                    Err *err)
{
    if (json_path != NULL && strcmp(json_path, "-") == 0) {
        json(stdout, data);
        return EXIT_OK;
    }
    text(stdout, data);
    return json_path ? cli_write_file(json_path, "the JSON report", json, data, err) : EXIT_OK;
}

int cli_check_output(const char *path, const char *what, Err *err)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return 0;
    struct stat st;
    const char *reason = NULL;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            reason = "it is a directory";
        else if (access(path, W_OK) != 0)
            reason = strerror(errno);
    } else if (errno != ENOENT) {
        reason = strerror(errno);
    } else {
        char dir[4096];
        const char *slash = strrchr(path, '/');
        size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
        if (n >= sizeof dir)
            n = sizeof dir - 1;
        memcpy(dir, slash ? path : ".", slash ? n : 1);
        dir[slash ? n : 1] = '\0';
        if (access(dir, W_OK | X_OK) != 0)
            reason = strerror(errno);
    }
    if (reason == NULL)
        return 0;
    err_set(err, "%s: cannot write %s: %s", path, what, reason);
    return EXIT_BAD_INPUT;
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
