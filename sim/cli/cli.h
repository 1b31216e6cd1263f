/*
 * cli.h - what every zerosim command shares on the command line.
 *
 * Options are declared in a table; cli_parse() fills in the text given for each (or marks a
 * flag as present), rejects unknown options with the closest known one, and leaves the
 * conversion of values to the command, with the converters below. Exit codes are the
 * README's: 0 success, 1 bad input file, 2 bad command line.
 */
#ifndef ZEROSIM_CLI_H
#define ZEROSIM_CLI_H

#include "common/choices.h"
#include "common/err.h"
#include "common/strlist.h"
#include "model/estimate.h"
#include "model/remedy.h"
#include "schedule/zero_schedule.h"

#include <stdio.h>

#include <stdbool.h>
#include <stdint.h>

/* Exit codes: 3 is a configuration that runs out of memory (run) or of which none fits
 * (advise --write-config). */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_BAD_USAGE = 2, EXIT_OUT_OF_MEMORY = 3 };

typedef struct CliOption {
    const char *name;  /* "--gpus" */
    bool takes_value;  /* false: a flag */
    const char *value; /* out: the text given, "" for a present flag, NULL when absent */
} CliOption;

/* Parses argv[first..argc) against options (n of them). Returns 0, 1 when --help/-h was
 * given (help printed to stdout), or EXIT_BAD_USAGE with a message on stderr. */
int cli_parse(const char *command, const char *help, int argc, char **argv, int first,
              CliOption *options, int n_options);

/* Help lines shared by the commands that take a model, a config and a platform. */
#define CLI_HELP_INPUTS                                                                            \
    "  --model M        HuggingFace config.json path or preset (e.g. llama-2-7b, gpt3-175b)\n"     \
    "  --config D       DeepSpeed ds_config.json path or shipped name (e.g. zero3)\n"              \
    "  --platform P     platform JSON path or shipped name (e.g. dgx-a100-80g)\n"
#define CLI_HELP_SETUP                                                                             \
    "  --gpus N         resize the platform to N GPUs (a divisor of a node, or whole nodes)\n"     \
    "  --nodes N        resize the platform to N nodes\n"                                          \
    "  --seq-len S      tokens per sequence (default: 2048, or the model's context when\n"        \
    "                   shorter: a training length, not the maximum context)\n"                  \
    "  --micro-batch K  sequences per GPU per forward/backward (train_micro_batch_size_per_gpu)\n" \
    "  --grad-accum K   micro-batches per optimizer step (gradient_accumulation_steps)\n"       \
    "  --global-batch B sequences per optimizer step over all GPUs (train_batch_size)\n"        \
    "                   These three replace the config's values and fill its \"auto\", as\n"    \
    "                   HF Trainer's arguments do (else HF's defaults: 8, 1, derived)\n"         \
    "  --precision bf16|fp16|fp32\n"                                                             \
    "                   training precision; replaces fp16/bf16.enabled and fills \"auto\"\n"     \
    "                   (default: the config's; \"auto\" without it is fp32, as in HF)\n"       \
    "  --quiet          no warnings on stderr (errors still print)\n"                            \
    "  --activation-checkpointing none|selective|full|every:N|selective-op\n"                      \
    "                   recomputation in the model code: selective drops the attention\n"          \
    "                   scores (Korthikanti et al.), full re-runs every layer, every:N\n"          \
    "                   every N-th layer, as FSDP codebases' per-layer checkpointing;\n"           \
    "                   selective-op keeps every other matmul's output and the flash\n"            \
    "                   kernel's, as torchtitan's selective_ac_option \"op\" (default: none)\n"  \
    "  --cross-entropy eager|fused|fused-linear|eager-16bit\n"                                     \
    "                   the loss: eager is PyTorch's on logits.float() (HF models,\n"             \
    "                   torchtitan), fused a kernel on the logits with the gradient in\n"          \
    "                   place (Megatron, llm-foundry), fused-linear Liger-Kernel's fused\n"       \
    "                   linear cross-entropy, which never holds the whole logits,\n"             \
    "                   eager-16bit PyTorch's on the 16-bit logits without .float() (HF GPT-2\n" \
    "                   and OPT before transformers 4.46); sets the loss's time and memory\n"    \
    "                   (default: eager)\n"                                                       \
    "  --elementwise fused|eager|liger\n"                                                          \
    "                   the layer's element-wise work: fused kernels (Megatron's scale-mask-\n"   \
    "                   softmax and bias-GeLU, F.gelu, F.silu), or eager, one kernel per\n"      \
    "                   PyTorch operation as HF transformers' modeling code runs it: the\n"     \
    "                   unfused attention's scale, masks and softmax apart (with\n"             \
    "                   --flash-attention off) and gelu_new as eight kernels, or liger,\n"     \
    "                   Liger-Kernel's RMSNorm, rotary and SwiGLU kernels (the families it\n"  \
    "                   patches)\n"                                                             \
    "                   (default: fused)\n"                                                       \
    "  --flash-attention on|v2|v1|v3|triton|off\n"                                                 \
    "                   attention without stored s x s scores, at the platform's published\n"    \
    "                   rates: on is FlashAttention-2 (v2), v1 the first FlashAttention, v3\n"   \
    "                   FlashAttention-3 (Hopper platforms with its rates), triton the first\n" \
    "                   FlashAttention's Triton port (platforms with its rates: A100), off\n"    \
    "                   the unfused softmax over scores in HBM (default: on)\n"

#define CLI_HELP_MOE                                                                               \
    "  --ep-size E      expert parallelism for a mixture of experts (DeepSpeed-MoE's ep_size):\n"  \
    "                   groups of E consecutive GPUs split each MoE layer's experts, tokens\n"    \
    "                   travel by all-to-all within them, expert gradients and ZeRO shards\n"     \
    "                   stay in the N/E GPUs holding the same experts (default 1)\n"              \
    "  --moe-capacity-factor F\n"                                                               \
    "                   expert buffers hold F x the balanced share of routed tokens, in\n"       \
    "                   [1, 16] (DeepSpeed-MoE's capacity_factor; default 1.0)\n"         \
    "  --moe-imbalance F\n"                                                                     \
    "                   dropless routing whose busiest expert gets F x its balanced share of\n" \
    "                   tokens, in [1, 64]; every GPU waits for it at each all-to-all (default\n" \
    "                   1: balanced, the case the load-balancing loss aims at)\n"

#define CLI_HELP_HEADROOM                                                                          \
    "  --headroom F     share of GPU memory the fits/out-of-memory verdict keeps free, in\n"     \
    "                   [0, 0.5] (default 0.05)\n"

#define CLI_HELP_MODULE_LOADING                                                                    \
    "  --cuda-module-loading lazy|eager\n"                                                       \
    "                   CUDA_MODULE_LOADING of the run: lazy loads each kernel at its first\n" \
    "                   use (PyTorch >= 1.13, CUDA >= 11.7); eager loads them all at start,\n" \
    "                   a larger CUDA context (runtime.cuda_context_eager_bytes), as every\n"   \
    "                   run before 2022 did (default lazy)\n"

#define CLI_HELP_ZERO_INIT                                                                         \
    "  --zero-init on|off\n"                                                                      \
    "                   ZeRO-3 only: on, the model is built under deepspeed.zero.Init (HF\n"      \
    "                   from_pretrained with a ZeRO-3 config, Accelerate, Megatron-DeepSpeed);\n"  \
    "                   off, it is built whole and moved to every GPU before\n"                 \
    "                   deepspeed.initialize partitions it, so each GPU first holds the whole\n" \
    "                   16-bit model (the verdict and the reserved peak count it) (default on)\n"

/* What "defaults applied" says of an absent --zero-init under ZeRO-3. */
#define CLI_ZERO_INIT_DEFAULT                                                                      \
    "--zero-init on (the model built under deepspeed.zero.Init, as HF from_pretrained does "     \
    "with a ZeRO-3 config)"

/* --zero-init on|off (NULL: on) into out->is_loaded_whole. 0, or EXIT_BAD_USAGE with the
 * message printed. */
int cli_zero_init(const char *command, const char *text, EstimateOptions *out);

/* --cuda-module-loading (NULL when absent: lazy, recorded in `defaults` when not NULL and the
 * platform counts the CUDA context) applied to platform p. 0, EXIT_BAD_USAGE (message
 * printed) for an unknown value, or EXIT_BAD_INPUT with err set when the platform has no
 * eager context size. */
int cli_module_loading(const char *command, const char *text, Platform *p, StrList *defaults,
                       Err *err);

/* --ep-size, --moe-capacity-factor and --moe-imbalance (each NULL when absent) into out. 0, or EXIT_BAD_USAGE
 * with the message printed. */
int cli_moe_options(const char *command, const char *ep_size, const char *capacity_factor,
                    const char *imbalance, EstimateOptions *out);

/* --headroom (NULL when absent: the default, recorded in `defaults` when not NULL) into
 * *out_fraction. 0, or EXIT_BAD_USAGE with the message printed. */
int cli_headroom(const char *command, const char *text, double *out_fraction, StrList *defaults);

/* The value of an enumerated option (text NULL: *out unchanged, 0). 0, or EXIT_BAD_USAGE with
 * "OPTION: expected a, b or c, got \"TEXT\"" printed; skip_first leaves the table's first
 * value (a "none" expressed by leaving the option out) out of what is accepted. */
int cli_choice(const char *command, const char *option, const Choices *choices, bool skip_first,
               const char *text, int *out);

/* The run options that choose which implementation of the frameworks is simulated. */
#define CLI_DEEPSPEED_DEFAULT_VERSION "0.19"
#define CLI_HELP_RUN_OPTIONS                                                                       \
    "  --deepspeed-version V\n"                                                                    \
    "                   the DeepSpeed release to simulate (default "                               \
    CLI_DEEPSPEED_DEFAULT_VERSION ", 0.3.13 or later):\n"                                          \
    "                   its defaults apply to the config's absent keys (before 0.4.3\n"            \
    "                   contiguous_gradients is false) and its ZeRO-3 runs: 0.6 and later\n"       \
    "                   fetch each submodule's parameters in one all-gather, prefetched in\n"      \
    "                   the order the first step recorded; earlier releases gathered one\n"        \
    "                   parameter at a time and synchronised the GPU before each module\n"         \
    "                   (docs/SCHEDULES.md)\n"

/* --deepspeed-version V ("MAJOR.MINOR" or "MAJOR.MINOR.PATCH", 0.3.13 or later; NULL: the
 * default release) into its ZeRO-3 generation *out and *out_release, the release whose
 * defaults the config's absent keys get (is_named false when NULL). 0, or EXIT_BAD_USAGE with
 * the message printed. */
int cli_deepspeed_version(const char *command, const char *text, Zero3Generation *out,
                          DsRelease *out_release);

/* --algo against --comm-model: NVLS and NVLSTree are NCCL's algorithms, timed by its cost
 * model only, so the ideal model (and --stepwise, which checks it) refuses them rather than
 * simulating something else under their name. 0, or EXIT_BAD_USAGE with the message printed. */
int cli_check_algo(const char *command, int algo, int comm_model, bool is_stepwise);

/* Fails with a usage error naming the first of options[first..last] that was not given. */
int cli_require(const char *command, const CliOption *options, int first, int last);

/* --seq-len, --activation-checkpointing and --flash-attention (each NULL when absent) into
 * out. 0, or EXIT_BAD_USAGE with the message printed. */
int cli_setup_options(const char *command, const char *seq_len, const char *recompute,
                      const char *flash, EstimateOptions *out);

/* Option table entries for the batch and precision options (append them to a command's table
 * and read them with cli_train_overrides). */
#define CLI_TRAIN_OPTIONS                                                                          \
    {"--micro-batch", true, NULL}, {"--grad-accum", true, NULL}, {"--global-batch", true, NULL},   \
        {"--cross-entropy", true, NULL}, {"--elementwise", true, NULL},                            \
        {"--precision", true, NULL}
#define CLI_N_TRAIN_OPTIONS 6

/* --cross-entropy eager|fused|fused-linear|eager-16bit (NULL: eager) into out->loss. 0, or EXIT_BAD_USAGE
 * with the message printed. */
int cli_cross_entropy(const char *command, const char *text, EstimateOptions *out);

/* --elementwise fused|eager|liger (NULL: fused) into out->elementwise. 0, or
 * EXIT_BAD_USAGE with the message printed. */
int cli_elementwise(const char *command, const char *text, EstimateOptions *out);

/* --micro-batch, --grad-accum, --global-batch and --precision from options into out (zero
 * when absent). 0, or EXIT_BAD_USAGE with the message printed. */
int cli_train_overrides(const char *command, const CliOption *options, int n_options,
                        TrainOverrides *out);

/* Help lines for the job-placement options. */
#define CLI_HELP_JOB                                                                               \
    "  --ring-order packed|spread|cross_nic\n"                                                     \
    "                   the order of nodes along NCCL's rings on a fabric with leaf groups\n"    \
    "                   (docs/PLATFORM-FORMAT.md): packed fills each leaf (default),\n"           \
    "                   spread puts node i on leaf i mod leaves, cross_nic changes rail at\n"    \
    "                   every hop (NCCL_CROSS_NIC=1)\n"                                            \
    "  --straggler node:K:F|gpu:R:F\n"                                                             \
    "                   node K's GPUs (or GPU rank R) compute F > 1 times slower\n"

/* How the job sits on the fabric: --ring-order and --straggler (docs/PLATFORM-FORMAT.md, "The
 * job on the fabric"), parsed before any file is read and applied to the resized platform. */
typedef struct CliJob {
    int ring_order; /* PlatformRingOrder */
    bool has_straggler;
    bool is_straggler_node;
    uint64_t straggler_index;
    double straggler_slowdown;
} CliJob;

/* Option table entries for them (read with cli_job_options). */
#define CLI_JOB_OPTIONS {"--ring-order", true, NULL}, {"--straggler", true, NULL}

/* Parses --ring-order (packed, spread, cross_nic) and --straggler (node:K:F or gpu:R:F, F > 1);
 * NULL text means absent. 0, or EXIT_BAD_USAGE with the message printed. */
int cli_job_options(const char *command, const char *ring_order, const char *straggler,
                    CliJob *out);

/* Applies them to platform p (resized): 0, or EXIT_BAD_USAGE with the message printed when
 * the straggler is not in the platform. */
int cli_job_apply(const char *command, const CliJob *job, Platform *p);

/* Set by main() when --quiet is given anywhere on the command line: warnings are not printed. */
extern bool cli_is_quiet;

/* Loads the model, the DeepSpeed config and the platform named on the command line, fills the
 * config's "auto" values and applies the command line's batch and precision (overrides may be
 * NULL; release NULL: the current DeepSpeed's defaults for absent keys), resizes the platform
 * and prints the warnings about them (keys not modelled, unknown
 * keys, bf16 without bf16). Returns 0, EXIT_BAD_INPUT (a file) or EXIT_BAD_USAGE (sizes that do
 * not fit the platform), with err set. The caller finalises model and train in every case. */
int cli_load_inputs(const char *model_arg, const char *config_arg, const char *platform_arg,
                    uint64_t gpus, uint64_t nodes, const TrainOverrides *overrides,
                    const DsRelease *release, ModelConfig *model, TrainConfig *train,
                    Platform *platform, Err *err);

/* What cli_remedy_config needs to rebuild the user's config in another shape. */
typedef struct CliRemedyContext {
    const char *config_path;  /* the ds_config as loaded (TrainConfig.file) */
    uint64_t hidden;          /* the model's, for HF's "auto" fills */
    TrainOverrides overrides; /* the command line's */
    uint64_t global_batch;    /* kept by every variant */
    const DsRelease *release; /* whose defaults absent keys get (NULL: the current release) */
} CliRemedyContext;

/* A RemedyConfigFn (model/remedy.h): re-reads the user's ds_config with the variant's stage
 * and offload (ds_config_load_shape) and applies the command line with the variant's batch
 * split, as cli_load_inputs does for the user's own. */
int cli_remedy_config(void *ctx, const RemedyVariant *v, TrainConfig *out, Err *err);

/* Writes `path` with write(out, data); 0, or EXIT_BAD_INPUT with err set ("PATH: cannot write
 * WHAT: reason") when the file cannot be written. */
int cli_write_file(const char *path, const char *what, void (*write)(FILE *out, const void *data),
                   const void *data, Err *err);

/* A report's two writers: the human text and the JSON (docs/JSON-SCHEMA.md). */
typedef void (*CliWriter)(FILE *out, const void *data);

/* Emits a report as --json asks: json_path NULL, the text on stdout; "-", only the JSON on
 * stdout; a path, the text on stdout and the JSON in the file. 0, or EXIT_BAD_INPUT with err
 * set when the file cannot be written (stdout is checked by main before it exits). */
int cli_emit_report(const char *json_path, CliWriter text, CliWriter json, const void *data,
                    Err *err);

/* Checks, before any work, that `path` (an output file option's value; NULL and "-" are
 * fine) can be written: an existing writable file, or a new name in a writable directory.
 * Nothing is created. 0, or EXIT_BAD_INPUT with err set ("PATH: cannot write WHAT: reason"). */
int cli_check_output(const char *path, const char *what, Err *err);

/* Records in `defaults` the run choices the command line left to zerosim. */
void cli_setup_defaults(const char *seq_len, const char *recompute, const char *flash,
                        const ModelConfig *model, StrList *defaults);

/* The value of option `name` (NULL when absent). */
const char *cli_value(const CliOption *options, int n_options, const char *name);

/* Prints "zerosim COMMAND: MESSAGE (see zerosim COMMAND --help)" and returns
 * EXIT_BAD_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A positive integer ("64"). 0 on success; else prints the error and returns
 * EXIT_BAD_USAGE. A NULL text leaves *out unchanged. */
int cli_count(const char *command, const char *option, const char *text, uint64_t *out);

/* A byte size with an optional binary suffix, as nccl-tests takes them: "8", "64K", "1M",
 * "8G". Same contract as cli_count. */
int cli_bytes(const char *command, const char *option, const char *text, uint64_t *out);

/* A rank list "0,1,8-15" (decimal ranks and ascending ranges, comma-separated) into flags
 * over n ranks. 0, or -1 for anything else (a rank >= n, a sign, a blank, an empty item). */
int cli_ranks(const char *text, uint32_t n, bool *flags);

/* --shard I/N (NULL: nothing set): decimal 0 <= I < N <= 2^32. 0, or EXIT_BAD_USAGE after a
 * usage error naming the text. */
int cli_shard(const char *command, const char *text, uint64_t *index, uint64_t *count);

/* This executable's path (/proc/self/exe, else argv0), for commands that run zerosim in
 * child processes. */
void cli_self_exe(const char *argv0, char *out, size_t out_size);

/* Where shipped models, configs and platforms live: $ZEROSIM_DATA_DIR or the source tree. */
const char *cli_data_dir(void);

/* "zerosim: warning: FILE: not modelled, the result assumes otherwise: a (...), b (...)" and
 * "zerosim: warning: FILE: unknown keys, ignored: x, y" on stderr, if any (not with --quiet). */
void cli_warn_not_modelled(const char *file, const StrList *keys, const StrList *unknown);

/* Warns when the config asks for bf16 on a GPU without it (its fp16 peak is used). */
void cli_warn_precision(const char *platform_name, double bf16_flops_per_s, int is_bf16);

/* The commands. Each returns an exit code. */
int cmd_estimate(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_compare(int argc, char **argv);

#endif
