/*
 * ds_config.c - DeepSpeed ds_config.json -> TrainConfig (see ds_config.h).
 *
 * Defaults are DeepSpeed's own (deepspeed/runtime/zero/config.py, offload_config.py,
 * runtime/config.py, 2025): reduce_bucket_size 5e8, allgather_bucket_size 5e8,
 * stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9,
 * stage3_max_reuse_distance 1e9, stage3_param_persistence_threshold 1e5, sub_group_size 1e9,
 * overlap_comm true for stage 3 and false otherwise, contiguous_gradients and reduce_scatter
 * true; offload_param buffer_count 5, buffer_size 1e8, max_in_cpu 1e9; offload_optimizer
 * buffer_count 4. Each default applied is recorded so the report can print it. Older
 * releases differ in four of the keys zerosim reads (ds_defaults, below; a named
 * --deepspeed-version selects its row and the report says whose default each is).
 *
 * "auto" (HF Trainer, accelerate): before anything is read, the batch keys, fp16/bf16.enabled
 * and the three hidden-size-based ZeRO keys that the HF integration fills are noted in
 * auto_keys and removed; any other "auto" inside the sections DeepSpeed validates with its
 * pydantic models is removed too, as DeepSpeedConfigModel.__init__ drops "auto" values
 * (deepspeed/runtime/config_utils.py), so DeepSpeed's default applies and is recorded.
 */
#include "ds_config.h"

#include "jsonfile.h"
#include "resolve.h"
#include "vocab.h"

#include "../common/suggest.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = {
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "fp16",
    "bf16",
    "bfloat16", /* DeepSpeed's older spelling of "bf16", read when "bf16" is absent */
    "optimizer",
    "zero_optimization",
    "activation_checkpointing",
    "communication_data_type",
    NULL,
};
static const char *const enabled_keys[] = {"enabled", NULL};
/* DeepSpeedBF16Config (runtime/precision_config.py): bf16_master_weights_and_grads keeps the
 * master weights (and gradients) in bf16, bf16_optimizer_states the Adam moments (DeepSpeed
 * PR 7700; DeepSpeedExamples training/bf16_master_weight/README.md, "Memory Breakdown"). */
static const char *const bf16_keys[] = {"enabled", "bf16_master_weights_and_grads",
                                        "bf16_optimizer_states", NULL};
static const char *const optimizer_keys[] = {"type", NULL};
static const char *const zero_keys[] = {
    "stage",
    "overlap_comm",
    "contiguous_gradients",
    "reduce_scatter",
    "reduce_bucket_size",
    "allgather_bucket_size",
    "stage3_prefetch_bucket_size",
    "stage3_max_live_parameters",
    "stage3_max_reuse_distance",
    "stage3_param_persistence_threshold",
    "sub_group_size",
    "offload_optimizer",
    "offload_param",
    "prefetch_bucket_size",
    "max_live_parameters",
    "max_reuse_distance",
    "param_persistence_threshold",
    "use_multi_rank_bucket_allreduce",
    "mics_shard_size",
    "cpu_offload",       /* deprecated: true means offload_optimizer {"device": "cpu"} */
    "cpu_offload_param", /* deprecated: true means offload_param {"device": "cpu"} */
    NULL,
};
static const char *const offload_optimizer_keys[] = {
    "device", "pin_memory", "buffer_count", "pipeline_read", "pipeline_write", "ratio", NULL,
};
static const char *const offload_param_keys[] = {
    "device", "pin_memory", "buffer_count", "buffer_size", "max_in_cpu", NULL,
};
static const char *const act_ckpt_keys[] = {"partition_activations", "cpu_checkpointing", NULL};
static const char *const offload_devices[] = {"none", "cpu", "nvme", NULL};

/* Optimizers DeepSpeed accepts by name, with their fp32 state tensors per parameter. */
static const struct {
    const char *name;
    int n_states;
} optimizers[] = {
    {"adam", 2},       {"adamw", 2},       {"fusedadam", 2},  {"cpuadam", 2}, {"lamb", 2},
    {"onebitadam", 2}, {"zerooneadam", 2}, {"onebitlamb", 2}, {"adagrad", 1}, {"lion", 1},
    {"sgd", 1},        {"muadam", 2},      {"muadamw", 2},    {"musgd", 1},
};

#define BIG (UINT64_MAX / 2)
#define BATCH_MAX (1ull << 31) /* per key and for the resolved global batch */

/* DeepSpeed's defaults of the zero_optimization keys zerosim reads that changed between
 * releases, read at each release tag from v0.3.13 (the first with ZeRO-3) to v0.19.5 in
 * deepspeed/runtime/zero/constants.py (ZERO_OPTIMIZATION_*_DEFAULT and ZERO3_* as config.py
 * picks them by stage) and, from v0.7.0, config.py's DeepSpeedZeroConfig fields; each row holds
 * from its release to the next row's. At every tag: overlap_comm true for stage 3 and false
 * otherwise (ZERO3_OPTIMIZATION_OVERLAP_COMM_DEFAULT; overlap_comm_valid), reduce_bucket_size
 * and allgather_bucket_size 5e8, stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters
 * and stage3_max_reuse_distance 1e9, stage3_param_persistence_threshold 1e5. */
typedef struct DsDefaults {
    unsigned since[3];         /* the first release of the row */
    bool contiguous_gradients; /* stages 1-3 alike */
    bool reduce_scatter;
    bool multi_rank_bucket_allreduce; /* the key did not exist before 0.12.4: each bucket's
                                         slices were reduced to their owners (dist.reduce),
                                         what false does today */
    uint64_t sub_group_size;
} DsDefaults;

static const DsDefaults ds_defaults[] = {
    {{0, 3, 13}, false, true, false, 1000000000000ull}, /* v0.3.13 constants.py */
    {{0, 3, 16}, false, false, false, 1000000000000ull}, /* REDUCE_SCATTER_DEFAULT = False */
    {{0, 4, 0}, false, true, false, 1000000000000ull},   /* restored by PR #1058 */
    {{0, 4, 1}, false, true, false, 1000000000ull},      /* SUB_GROUP_SIZE_DEFAULT = 1e9 */
    {{0, 4, 3}, true, true, false, 1000000000ull},       /* CONTIGUOUS_GRADIENTS true */
    {{0, 12, 4}, true, true, true, 1000000000ull}, /* use_multi_rank_bucket_allreduce, #4695 */
};
#define N_DS_DEFAULTS (sizeof ds_defaults / sizeof ds_defaults[0])

bool ds_config_release_before(const DsRelease *r, unsigned major, unsigned minor, unsigned patch)
{
    if (r->major != major)
        return r->major < major;
    if (r->minor != minor)
        return r->minor < minor;
    return r->patch < patch;
}

/* The row of `release` (NULL: the current release, the last row). */
static const DsDefaults *defaults_of(const DsRelease *release)
{
    size_t i = N_DS_DEFAULTS - 1;
    if (release != NULL)
        while (i > 0 && ds_config_release_before(release, ds_defaults[i].since[0],
                                                 ds_defaults[i].since[1], ds_defaults[i].since[2]))
            i--;
    return &ds_defaults[i];
}

typedef struct Reader {
    TrainConfig *cfg;
    const char *file;
    Err *err;
    const DsDefaults *defaults;
    const DsRelease *release; /* NULL: the current release */
    char whose[48]; /* " (DeepSpeed V's default)", or "" for the current release unnamed */
} Reader;

static bool is_auto(const cJSON *v)
{
    return cJSON_IsString(v) && v->valuestring != NULL && strcmp(v->valuestring, "auto") == 0;
}

/* The "auto" values the HF integration fills, by section ("" is the top level). */
static const struct {
    const char *section;
    const char *key;
    unsigned bit;
} hf_filled[] = {
    {"", "train_micro_batch_size_per_gpu", DS_AUTO_MICRO_BATCH},
    {"", "gradient_accumulation_steps", DS_AUTO_GRAD_ACCUM},
    {"", "train_batch_size", DS_AUTO_GLOBAL_BATCH},
    {"fp16", "enabled", DS_AUTO_FP16},
    {"bf16", "enabled", DS_AUTO_BF16},
    {"bfloat16", "enabled", DS_AUTO_BF16},
    {"zero_optimization", "reduce_bucket_size", DS_AUTO_REDUCE_BUCKET},
    {"zero_optimization", "stage3_prefetch_bucket_size", DS_AUTO_PREFETCH},
    {"zero_optimization", "prefetch_bucket_size", DS_AUTO_PREFETCH},
    {"zero_optimization", "stage3_param_persistence_threshold", DS_AUTO_PERSISTENCE},
    {"zero_optimization", "param_persistence_threshold", DS_AUTO_PERSISTENCE},
};

static bool is_hf_auto(const Reader *r, const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof hf_filled / sizeof hf_filled[0]; i++)
        if (strcmp(section, hf_filled[i].section) == 0 && strcmp(key, hf_filled[i].key) == 0)
            return (r->cfg->auto_keys & hf_filled[i].bit) != 0;
    return false;
}

/* Removes the "auto" values of obj (at `path`): those HF fills are noted in auto_keys, the
 * others are dropped as DeepSpeed's config models drop them (recorded when `is_validated`). */
static void take_autos(Reader *r, cJSON *obj, const char *path, bool is_validated)
{
    if (!cJSON_IsObject(obj))
        return;
    cJSON *item = obj->child;
    while (item != NULL) {
        cJSON *next = item->next;
        if (is_auto(item) && item->string != NULL) {
            bool is_filled = false;
            for (size_t i = 0; i < sizeof hf_filled / sizeof hf_filled[0]; i++) {
                if (strcmp(path, hf_filled[i].section) == 0 &&
                    strcmp(item->string, hf_filled[i].key) == 0) {
                    r->cfg->auto_keys |= hf_filled[i].bit;
                    is_filled = true;
                }
            }
            if (is_filled || is_validated) {
                if (!is_filled)
                    strlist_addf(&r->cfg->defaults_used,
                                 "%s.%s: \"auto\" dropped, as DeepSpeed's config models drop "
                                 "it (HF does not fill this key)",
                                 path, item->string);
                cJSON_Delete(cJSON_DetachItemViaPointer(obj, item));
            }
        }
        item = next;
    }
}

static void take_all_autos(Reader *r, cJSON *root)
{
    take_autos(r, root, "", false);
    static const char *const validated[] = {"fp16", "bf16", "bfloat16", "zero_optimization"};
    for (size_t i = 0; i < sizeof validated / sizeof validated[0]; i++)
        take_autos(r, cJSON_GetObjectItemCaseSensitive(root, validated[i]), validated[i], true);
    cJSON *zero = cJSON_GetObjectItemCaseSensitive(root, "zero_optimization");
    if (cJSON_IsObject(zero)) {
        take_autos(r, cJSON_GetObjectItemCaseSensitive(zero, "offload_optimizer"),
                   "zero_optimization.offload_optimizer", true);
        take_autos(r, cJSON_GetObjectItemCaseSensitive(zero, "offload_param"),
                   "zero_optimization.offload_param", true);
    }
}

/* Keeps, of the keys DeepSpeed defines but zerosim does not read, those that would change
 * the result, each with what zerosim assumes instead; metadata is dropped. */
static void keep_assumptions(StrList *not_modelled)
{
    StrList kept;
    strlist_init(&kept);
    for (size_t i = 0; i < not_modelled->n_items; i++) {
        const char *assumed = vocab_ds_assumption(not_modelled->items[i]);
        if (assumed != NULL)
            strlist_addf(&kept, "%s (%s)", not_modelled->items[i], assumed);
        else if (strchr(not_modelled->items[i], '(') != NULL)
            strlist_addf(&kept, "%s", not_modelled->items[i]); /* already explained */
    }
    strlist_fini(not_modelled);
    *not_modelled = kept;
}

/* The top level: DeepSpeed reads what it knows and ignores the rest, so an unknown key is a
 * warning, unless it is a near miss of a key zerosim reads that the file lacks (a typo). */
static int check_top_keys(Reader *r, const cJSON *root)
{
    const char *absent[sizeof top_keys / sizeof top_keys[0]];
    size_t n_absent = 0;
    for (size_t i = 0; top_keys[i] != NULL; i++)
        if (cJSON_GetObjectItemCaseSensitive(root, top_keys[i]) == NULL &&
            strcmp(top_keys[i], "bfloat16") != 0)
            absent[n_absent++] = top_keys[i];
    absent[n_absent] = NULL;
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        const char *key = item->string ? item->string : "";
        bool is_known = false;
        for (size_t i = 0; top_keys[i] != NULL && !is_known; i++)
            is_known = strcmp(key, top_keys[i]) == 0;
        for (size_t i = 0; vocab_ds_top_not_modelled[i] != NULL && !is_known; i++)
            if (strcmp(key, vocab_ds_top_not_modelled[i]) == 0) {
                strlist_addf(&r->cfg->not_modelled, "%s", key);
                is_known = true;
            }
        if (is_known)
            continue;
        const char *best = suggest_closest(key, absent);
        if (best != NULL)
            return err_set(r->err,
                           "%s: %s: expected a known key, got unknown key \"%s\" (did you "
                           "mean \"%s\"?)",
                           r->file, key, key, best);
        strlist_addf(&r->cfg->unknown_keys, "%s", key);
    }
    return 0;
}

static bool is_hf_auto(const Reader *r, const char *section, const char *key);

static int u64_or(Reader *r, const cJSON *obj, JsonAt at, const char *key, uint64_t min,
                  uint64_t fallback, uint64_t *out)
{
    int rc = jsonfile_get_u64(obj, key, at, min, BIG, out, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0 && is_hf_auto(r, at.path, key)) {
        *out = fallback; /* until ds_config_apply fills it, which records the value */
        return 0;
    }
    if (rc == 0) {
        char path[128];
        *out = fallback;
        strlist_addf(&r->cfg->defaults_used, "%s = %llu%s",
                     jsonfile_key_path(at, key, path, sizeof path), (unsigned long long)fallback,
                     r->whose);
    }
    return 0;
}

static int bool_or(Reader *r, const cJSON *obj, JsonAt at, const char *key, bool fallback,
                   bool *out)
{
    int rc = jsonfile_get_bool(obj, key, at, out, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        char path[128];
        *out = fallback;
        strlist_addf(&r->cfg->defaults_used, "%s = %s%s",
                     jsonfile_key_path(at, key, path, sizeof path), fallback ? "true" : "false",
                     r->whose);
    }
    return 0;
}

/* DeepSpeed accepts both "stage3_x" and its alias "x"; giving both is ambiguous. */
static int aliased_u64(Reader *r, const cJSON *zero, JsonAt at, const char *key, const char *alias,
                       uint64_t fallback, uint64_t *out)
{
    int a = jsonfile_get_u64(zero, key, at, 0, BIG, out, r->err);
    if (a < 0)
        return -1;
    uint64_t v = 0;
    int b = jsonfile_get_u64(zero, alias, at, 0, BIG, &v, r->err);
    if (b < 0)
        return -1;
    if (a && b) {
        char path[128];
        return err_set(r->err,
                       "%s: %s: expected only one of \"%s\" and its alias \"%s\", got "
                       "both",
                       r->file, jsonfile_key_path(at, alias, path, sizeof path), key, alias);
    }
    if (b)
        *out = v;
    if (!a && !b)
        return u64_or(r, zero, at, key, 0, fallback, out);
    return 0;
}

/* fp16 / bf16 sections: only "enabled" is modelled. */
static int read_enabled(Reader *r, const cJSON *root, const char *key,
                        const char *const *not_modelled, bool *out)
{
    *out = false;
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, key);
    if (sec == NULL || cJSON_IsNull(sec))
        return 0;
    JsonAt at = {r->file, key};
    const bool is_bf16 = not_modelled == vocab_ds_bf16_not_modelled;
    if (jsonfile_expect_object(sec, at, r->err) ||
        jsonfile_check_keys(sec, at, is_bf16 ? bf16_keys : enabled_keys, not_modelled,
                            &r->cfg->not_modelled, r->err))
        return -1;
    if (is_bf16 &&
        (jsonfile_get_bool(sec, "bf16_master_weights_and_grads", at, &r->cfg->is_bf16_master,
                           r->err) < 0 ||
         jsonfile_get_bool(sec, "bf16_optimizer_states", at, &r->cfg->is_bf16_optimizer_states,
                           r->err) < 0))
        return -1;
    return jsonfile_get_bool(sec, "enabled", at, out, r->err) < 0 ? -1 : 0;
}

static int read_optimizer(Reader *r, const cJSON *root)
{
    TrainConfig *cfg = r->cfg;
    snprintf(cfg->optimizer, sizeof cfg->optimizer, "adam");
    cfg->optimizer_n_states = 2;
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, "optimizer");
    if (sec == NULL || cJSON_IsNull(sec)) {
        strlist_addf(&cfg->defaults_used, "optimizer.type = Adam (mixed-precision Adam, K = 12 "
                                          "in the ZeRO paper)");
        return 0;
    }
    JsonAt at = {r->file, "optimizer"};
    if (jsonfile_expect_object(sec, at, r->err) ||
        jsonfile_check_keys(sec, at, optimizer_keys, vocab_ds_optimizer_not_modelled,
                            &cfg->not_modelled, r->err))
        return -1;
    char type[32] = "";
    int rc = jsonfile_get_string(sec, "type", at, type, sizeof type, r->err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        strlist_addf(&cfg->defaults_used, "optimizer.type = Adam");
        return 0;
    }
    char lower[32];
    size_t n = 0;
    for (const char *p = type; *p && n + 1 < sizeof lower; p++)
        if (*p != '_')
            lower[n++] = (char)tolower((unsigned char)*p);
    lower[n] = '\0';
    for (size_t i = 0; i < sizeof optimizers / sizeof optimizers[0]; i++) {
        if (strcmp(lower, optimizers[i].name) == 0) {
            snprintf(cfg->optimizer, sizeof cfg->optimizer, "%s", optimizers[i].name);
            cfg->optimizer_n_states = optimizers[i].n_states;
            return 0;
        }
    }
    return err_set(r->err,
                   "%s: optimizer.type: expected a DeepSpeed optimizer (Adam, AdamW, "
                   "Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Adagrad, Lion, SGD), got \"%s\"",
                   r->file, type);
}

/* DeepSpeed's deprecated switch for an offload section ("cpu_offload" for
 * offload_optimizer, "cpu_offload_param" for offload_param): true stands for the section
 * {"device": "cpu"} with its defaults, false for no section; giving both the switch and the
 * section is an error, as in DeepSpeed. Sets *section to a new object (to free) or NULL. */
static int read_legacy_offload(Reader *r, const cJSON *zero, const char *key,
                               const char *legacy_key, cJSON **section)
{
    *section = NULL;
    JsonAt at = {r->file, "zero_optimization"};
    bool is_on = false;
    int rc = jsonfile_get_bool(zero, legacy_key, at, &is_on, r->err);
    if (rc <= 0)
        return rc;
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(zero, key);
    if (sec != NULL && !cJSON_IsNull(sec))
        return err_set(r->err,
                       "%s: zero_optimization.%s: expected either the deprecated \"%s\" or "
                       "\"%s\", got both",
                       r->file, legacy_key, legacy_key, key);
    if (!is_on)
        return 0;
    *section = cJSON_CreateObject();
    if (*section == NULL || cJSON_AddStringToObject(*section, "device", "cpu") == NULL) {
        cJSON_Delete(*section);
        *section = NULL;
        return err_set(r->err, "%s: out of memory", r->file);
    }
    strlist_addf(&r->cfg->defaults_used,
                 "zero_optimization.%s.device = cpu (from the deprecated %s = true)", key,
                 legacy_key);
    return 0;
}

/* One offload section, `sec` (absent or null: no offload). */
static int read_offload_section(Reader *r, const cJSON *sec, const char *key, bool is_param,
                                OffloadConfig *out)
{
    char path[64];
    snprintf(path, sizeof path, "zero_optimization.%s", key);
    JsonAt at = {r->file, path};
    if (sec == NULL || cJSON_IsNull(sec))
        return 0;
    if (jsonfile_expect_object(sec, at, r->err) ||
        jsonfile_check_keys(sec, at, is_param ? offload_param_keys : offload_optimizer_keys,
                            is_param ? vocab_ds_offload_param_not_modelled
                                     : vocab_ds_offload_optimizer_not_modelled,
                            &r->cfg->not_modelled, r->err))
        return -1;
    int device = OFFLOAD_NONE;
    if (jsonfile_get_enum(sec, "device", at, offload_devices, &device, r->err) < 0)
        return -1;
    out->device = (OffloadDevice)device;
    if (out->device == OFFLOAD_NONE)
        return 0;
    /* DeepSpeed swaps NVMe-offloaded tensors under nvme_path (partitioned_param_swapper.py,
     * AsyncPartitionedParameterSwapper; optimizer_utils.py for the optimizer states) and
     * fails at initialisation without one */
    const cJSON *nvme_path = cJSON_GetObjectItemCaseSensitive(sec, "nvme_path");
    if (out->device == OFFLOAD_NVME &&
        !(cJSON_IsString(nvme_path) && nvme_path->valuestring[0] != '\0')) {
        char found[64];
        return err_set(r->err,
                       "%s: %s.nvme_path: expected the directory on the NVMe drive that "
                       "DeepSpeed swaps to (device \"nvme\" needs one), got %s",
                       r->file, path, jsonfile_describe(nvme_path, found, sizeof found));
    }
    if (bool_or(r, sec, at, "pin_memory", false, &out->pin_memory) ||
        /* offload_config.py: buffer_count, buffer_size and max_in_cpu are Field(ge=0) */
        u64_or(r, sec, at, "buffer_count", 0, is_param ? 5 : 4, &out->buffer_count))
        return -1;
    if (is_param)
        return u64_or(r, sec, at, "buffer_size", 0, 100000000, &out->buffer_size) ||
                       u64_or(r, sec, at, "max_in_cpu", 0, 1000000000, &out->max_in_cpu)
                   ? -1
                   : 0;
    if (bool_or(r, sec, at, "pipeline_read", false, &out->pipeline_read) ||
        bool_or(r, sec, at, "pipeline_write", false, &out->pipeline_write))
        return -1;
    return jsonfile_get_double(sec, "ratio", at, 0.0, 1.0, &out->ratio, r->err) < 0 ? -1 : 0;
}

/* zero_optimization.<key>, or the section its deprecated switch stands for. */
static int read_offload(Reader *r, const cJSON *zero, const char *key, bool is_param,
                        OffloadConfig *out)
{
    out->device = OFFLOAD_NONE;
    out->ratio = 1.0;
    cJSON *legacy = NULL;
    if (read_legacy_offload(r, zero, key, is_param ? "cpu_offload_param" : "cpu_offload", &legacy))
        return -1;
    const cJSON *sec = legacy ? legacy : cJSON_GetObjectItemCaseSensitive(zero, key);
    int rc = read_offload_section(r, sec, key, is_param, out);
    cJSON_Delete(legacy);
    return rc;
}

/* MiCS (and FSDP's HYBRID_SHARD): shard inside groups of mics_shard_size GPUs, replicate
 * across them. DeepSpeed's default -1 means shard over every GPU (0 here). */
static int read_shard_size(Reader *r, const cJSON *zero, JsonAt at, uint64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(zero, "mics_shard_size");
    *out = 0;
    if (v == NULL || cJSON_IsNull(v) || (cJSON_IsNumber(v) && v->valuedouble == -1))
        return 0;
    return jsonfile_get_u64(zero, "mics_shard_size", at, 1, 1u << 20, out, r->err) < 0 ? -1 : 0;
}

static int read_zero(Reader *r, const cJSON *root)
{
    ZeroConfig *z = &r->cfg->zero;
    const cJSON *zero = cJSON_GetObjectItemCaseSensitive(root, "zero_optimization");
    JsonAt at = {r->file, "zero_optimization"};
    if (zero != NULL && !cJSON_IsNull(zero)) {
        if (jsonfile_expect_object(zero, at, r->err) ||
            jsonfile_check_keys(zero, at, zero_keys, vocab_ds_zero_not_modelled,
                                &r->cfg->not_modelled, r->err))
            return -1;
    } else {
        zero = NULL;
    }
    cJSON *empty = NULL;
    if (zero == NULL)
        zero = empty = cJSON_CreateObject();
    uint64_t stage = 0;
    int rc = jsonfile_get_u64(zero, "stage", at, 0, 3, &stage, r->err);
    if (rc == 0)
        strlist_addf(&r->cfg->defaults_used, "zero_optimization.stage = 0");
    rc = rc < 0 ? -1 : 0;
    z->stage = (int)stage;
    if (rc == 0)
        rc =
            bool_or(r, zero, at, "overlap_comm", z->stage == 3, &z->overlap_comm) ||
            bool_or(r, zero, at, "contiguous_gradients", r->defaults->contiguous_gradients,
                    &z->contiguous_gradients) ||
            bool_or(r, zero, at, "reduce_scatter", r->defaults->reduce_scatter,
                    &z->reduce_scatter) ||

            /* DeepSpeedZeroConfig: reduce_bucket_size and allgather_bucket_size ge=0 (0: every
             * gradient is its own bucket) */
            u64_or(r, zero, at, "reduce_bucket_size", 0, 500000000, &z->reduce_bucket_size) ||
            u64_or(r, zero, at, "allgather_bucket_size", 0, 500000000, &z->allgather_bucket_size) ||
            u64_or(r, zero, at, "sub_group_size", 0, r->defaults->sub_group_size,
                   &z->sub_group_size);
    /* 0 is valid (DeepSpeedZeroConfig ge=0): stage 3 then makes every parameter tensor its
     * own sub-group (stage3.py _create_fp16_sub_groups); ds_config_apply sizes it. */
    if (rc == 0 && z->sub_group_size == 0) {
        r->cfg->auto_keys |= DS_SUB_GROUP_PER_TENSOR;
        z->sub_group_size = 1000000000;
    }
    /* Stages 1-2 run reduce_scatter as bucket all-reduces unless this is off (DeepSpeed's
     * average_tensor -> allreduce_and_scatter). */
    z->multi_rank_bucket_allreduce = true;
    if (rc == 0 && (z->stage == 1 || z->stage == 2))
        rc = bool_or(r, zero, at, "use_multi_rank_bucket_allreduce",
                     r->defaults->multi_rank_bucket_allreduce, &z->multi_rank_bucket_allreduce);
    /* stage 3 without reduce_scatter all-reduces each gradient (stage3.py average_tensor ->
     * gradient_reduction_w_predivide, v0.3.14); zerosim's stage 3 reduce-scatters */
    if (rc == 0 && z->stage == 3 && !z->reduce_scatter)
        strlist_addf(&r->cfg->not_modelled,
                     "zero_optimization.reduce_scatter false at stage 3 (the result assumes "
                     "the reduce-scatters of true)");
    /* From 0.4.4 to 0.12.x the engine ignores both keys at stage 1 ("Overlap and contiguous
     * grads are meaningless in stage 1 and are ignored": engine.py _configure_zero_optimizer,
     * overlap_comm = False, contiguous_gradients = False; PR #4887 let 0.13.0 honour them), so
     * every bucket goes through buffered_reduce_fallback, one all-reduce of the flattened
     * bucket (zero_schedule.c) */
    if (rc == 0 && z->stage == 1 && r->release != NULL &&
        !ds_config_release_before(r->release, 0, 4, 4) &&
        ds_config_release_before(r->release, 0, 13, 0) &&
        (z->overlap_comm || z->contiguous_gradients)) {
        z->overlap_comm = false;
        z->contiguous_gradients = false;
        strlist_addf(&r->cfg->defaults_used,
                     "zero_optimization.overlap_comm = false, contiguous_gradients = false "
                     "(DeepSpeed %s ignores both at stage 1: engine.py)",
                     r->release->name);
    }
    /* stage 1 without contiguous_gradients is the all-reduce fallback (zero_schedule.c);
     * stage 2 is modelled with the contiguous gradient buffer (stage_1_and_2.py ipg) */
    if (rc == 0 && z->stage == 2 && !z->contiguous_gradients)
        strlist_addf(&r->cfg->not_modelled,
                     "zero_optimization.contiguous_gradients false at stage %d (the result "
                     "assumes the contiguous gradient buffer of true)",
                     z->stage);
    if (rc == 0 && z->stage == 3)
        rc = aliased_u64(r, zero, at, "stage3_prefetch_bucket_size", "prefetch_bucket_size",
                         50000000, &z->prefetch_bucket_size) ||
             aliased_u64(r, zero, at, "stage3_max_live_parameters", "max_live_parameters",
                         1000000000, &z->max_live_parameters) ||
             aliased_u64(r, zero, at, "stage3_max_reuse_distance", "max_reuse_distance", 1000000000,
                         &z->max_reuse_distance) ||
             aliased_u64(r, zero, at, "stage3_param_persistence_threshold",
                         "param_persistence_threshold", 100000, &z->param_persistence_threshold) ||
             read_shard_size(r, zero, at, &z->shard_size);
    if (rc == 0)
        rc = read_offload(r, zero, "offload_optimizer", false, &z->offload_optimizer) ||
             read_offload(r, zero, "offload_param", true, &z->offload_param);
    /* errors about an offload name the key the user wrote, deprecated or not */
    const bool legacy_optimizer =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(zero, "cpu_offload"));
    const bool legacy_param =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(zero, "cpu_offload_param"));
    cJSON_Delete(empty);
    if (rc)
        return -1;
    if (z->offload_param.device != OFFLOAD_NONE && z->stage != 3)
        return legacy_param
                   ? err_set(r->err,
                             "%s: zero_optimization.cpu_offload_param: expected false unless "
                             "zero_optimization.stage is 3 (parameter offload needs ZeRO-3), "
                             "got true with stage %d",
                             r->file, z->stage)
                   : err_set(r->err,
                             "%s: zero_optimization.offload_param.device: expected \"none\" "
                             "unless zero_optimization.stage is 3 (parameter offload needs "
                             "ZeRO-3), got \"%s\" with stage %d",
                             r->file, ds_config_offload_name(z->offload_param.device), z->stage);
    if (z->offload_optimizer.device != OFFLOAD_NONE && z->stage == 0)
        return legacy_optimizer
                   ? err_set(r->err,
                             "%s: zero_optimization.cpu_offload: expected false with stage 0 "
                             "(optimizer offload needs ZeRO stage 1, 2 or 3), got true",
                             r->file)
                   : err_set(r->err,
                             "%s: zero_optimization.offload_optimizer.device: expected "
                             "\"none\" with stage 0 (optimizer offload needs ZeRO stage 1, 2 "
                             "or 3), got \"%s\"",
                             r->file, ds_config_offload_name(z->offload_optimizer.device));
    if (z->offload_optimizer.device != OFFLOAD_NONE && z->offload_optimizer.ratio < 1.0 &&
        z->stage != 3)
        strlist_addf(&r->cfg->not_modelled,
                     "zero_optimization.offload_optimizer.ratio (partial offload is ZeRO-3 "
                     "only; DeepSpeed ignores it at stage %d)",
                     z->stage);
    else if (z->offload_optimizer.device == OFFLOAD_NVME && z->offload_optimizer.ratio < 1.0)
        strlist_addf(&r->cfg->not_modelled,
                     "zero_optimization.offload_optimizer.ratio (the share stepped by the CPU "
                     "optimizer; DeepSpeed swaps every sub-group to NVMe regardless)");
    if (z->offload_optimizer.device == OFFLOAD_NVME && z->stage != 3)
        return err_set(r->err,
                       "%s: zero_optimization.offload_optimizer.device: expected "
                       "\"cpu\" or \"none\" with stage %d (NVMe offload is ZeRO-Infinity, "
                       "stage 3), got \"nvme\"",
                       r->file, z->stage);
    return 0;
}

static int read_batch(Reader *r, const cJSON *root)
{
    TrainConfig *cfg = r->cfg;
    JsonAt at = {r->file, ""};
    if (jsonfile_get_u64(root, "train_batch_size", at, 1, BATCH_MAX, &cfg->train_batch_size,
                         r->err) < 0 ||
        jsonfile_get_u64(root, "train_micro_batch_size_per_gpu", at, 1, BATCH_MAX,
                         &cfg->micro_batch_per_gpu, r->err) < 0 ||
        jsonfile_get_u64(root, "gradient_accumulation_steps", at, 1, BATCH_MAX,
                         &cfg->grad_accum_steps, r->err) < 0)
        return -1;
    if (cfg->train_batch_size == 0 && cfg->micro_batch_per_gpu == 0 &&
        !(cfg->auto_keys & (DS_AUTO_MICRO_BATCH | DS_AUTO_GLOBAL_BATCH)))
        return err_set(r->err,
                       "%s: train_micro_batch_size_per_gpu: expected it or "
                       "train_batch_size (DeepSpeed needs one of them), got neither",
                       r->file);
    return 0;
}

static int read_act_ckpt(Reader *r, const cJSON *root)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, "activation_checkpointing");
    if (sec == NULL || cJSON_IsNull(sec))
        return 0;
    JsonAt at = {r->file, "activation_checkpointing"};
    return jsonfile_expect_object(sec, at, r->err) ||
                   jsonfile_check_keys(sec, at, act_ckpt_keys, vocab_ds_act_ckpt_not_modelled,
                                       &r->cfg->not_modelled, r->err) ||
                   jsonfile_get_bool(sec, "partition_activations", at,
                                     &r->cfg->partition_activations, r->err) < 0 ||
                   jsonfile_get_bool(sec, "cpu_checkpointing", at, &r->cfg->cpu_checkpointing,
                                     r->err) < 0
               ? -1
               : 0;
}

/* communication_data_type: DeepSpeed's get_communication_data_type (runtime/config.py) takes
 * "fp32", "fp16" or "bf16" in any case, and null or absent as the training precision; the
 * ZeRO optimizers cast each gradient bucket to it before reducing it (runtime/zero/
 * stage_1_and_2.py and stage3.py, communication_data_type). */
static int read_comm_type(Reader *r, const cJSON *root)
{
    static const char *const names[] = {"fp32", "fp16", "bf16", NULL};
    static const unsigned bytes[] = {4, 2, 2};
    int which = -1;
    JsonAt at = {r->file, ""};
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "communication_data_type");
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    if (jsonfile_get_enum(root, "communication_data_type", at, names, &which, r->err) < 0)
        return -1;
    r->cfg->comm_grad_bytes = which >= 0 ? bytes[which] : 0;
    return 0;
}

/* Sets obj[key] to item (replacing what is there); false when out of memory. */
static bool set_item(cJSON *obj, const char *key, cJSON *item)
{
    if (item == NULL)
        return false;
    if (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL)
        return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item) != 0;
    return cJSON_AddItemToObject(obj, key, item) != 0;
}

/* The offload section `key` of zero made to say `device`, the deprecated switch dropped (the
 * section stands for it). */
static bool reshape_offload(cJSON *zero, const char *key, const char *legacy_key,
                            OffloadDevice device)
{
    const bool was_legacy_on =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(zero, legacy_key));
    cJSON_DeleteItemFromObjectCaseSensitive(zero, legacy_key);
    cJSON *sec = cJSON_GetObjectItemCaseSensitive(zero, key);
    if (!cJSON_IsObject(sec)) {
        if (device == OFFLOAD_NONE && !was_legacy_on)
            return true;
        if (!set_item(zero, key, cJSON_CreateObject()))
            return false;
        sec = cJSON_GetObjectItemCaseSensitive(zero, key);
    }
    if (!set_item(sec, "device", cJSON_CreateString(ds_config_offload_name(device))))
        return false;
    /* DeepSpeed needs a swap directory for NVMe; its tutorial's example path */
    if (device == OFFLOAD_NVME && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(sec, "nvme_path")))
        return set_item(sec, "nvme_path", cJSON_CreateString("/local_nvme"));
    return true;
}

/* The file's tree edited to say `shape`'s stage and offload devices; false when out of
 * memory. A zero_optimization that is not an object is replaced (the parse then reads the
 * edited tree, so DeepSpeed's defaults for the new stage apply to every absent key). */
static bool reshape(cJSON *root, const DsShape *shape)
{
    if (!cJSON_IsObject(root))
        return true; /* the parse reports it */
    cJSON *zero = cJSON_GetObjectItemCaseSensitive(root, "zero_optimization");
    if (!cJSON_IsObject(zero)) {
        if (!set_item(root, "zero_optimization", cJSON_CreateObject()))
            return false;
        zero = cJSON_GetObjectItemCaseSensitive(root, "zero_optimization");
    }
    return set_item(zero, "stage", cJSON_CreateNumber(shape->stage)) &&
           reshape_offload(zero, "offload_optimizer", "cpu_offload", shape->optimizer) &&
           reshape_offload(zero, "offload_param", "cpu_offload_param", shape->param);
}

int ds_config_parse(TrainConfig *out, const char *file, const char *text, size_t n_bytes, Err *err)
{
    return ds_config_parse_shape(out, file, text, n_bytes, NULL, err);
}

int ds_config_parse_shape(TrainConfig *out, const char *file, const char *text, size_t n_bytes,
                          const DsShape *shape, Err *err)
{
    return ds_config_parse_release(out, file, text, n_bytes, shape, NULL, err);
}

int ds_config_parse_release(TrainConfig *out, const char *file, const char *text, size_t n_bytes,
                            const DsShape *shape, const DsRelease *release, Err *err)
{
    memset(out, 0, sizeof *out);
    strlist_init(&out->not_modelled);
    strlist_init(&out->unknown_keys);
    strlist_init(&out->defaults_used);
    snprintf(out->file, sizeof out->file, "%s", file);
    cJSON *root = jsonfile_parse(file, text, n_bytes, err);
    if (root == NULL)
        return -1;
    if (shape != NULL && !reshape(root, shape)) {
        cJSON_Delete(root);
        return err_set(err, "%s: out of memory", file);
    }
    Reader r = {out, file, err, defaults_of(release), release, ""};
    if (release != NULL && release->is_named)
        snprintf(r.whose, sizeof r.whose, " (DeepSpeed %s's default)", release->name);
    JsonAt at = {file, ""};
    take_all_autos(&r, root);
    bool fp16 = false, bf16 = false;
    /* DeepSpeed reads "bfloat16" only when "bf16" is absent (or null). */
    const cJSON *bf16_item = cJSON_GetObjectItemCaseSensitive(root, "bf16");
    const bool has_bf16 = bf16_item != NULL && !cJSON_IsNull(bf16_item);
    const char *bf16_key = has_bf16 ? "bf16" : "bfloat16";
    int rc = jsonfile_expect_object(root, at, err) || check_top_keys(&r, root) ||
             read_batch(&r, root) ||
             read_enabled(&r, root, "fp16", vocab_ds_fp16_not_modelled, &fp16) ||
             read_enabled(&r, root, bf16_key, vocab_ds_bf16_not_modelled, &bf16) ||
             read_optimizer(&r, root) || read_zero(&r, root) || read_act_ckpt(&r, root) ||
             read_comm_type(&r, root);
    if (rc == 0 && has_bf16 && cJSON_GetObjectItemCaseSensitive(root, "bfloat16"))
        strlist_addf(&out->not_modelled, "bfloat16 (\"bf16\" is given and wins)");
    cJSON_Delete(root);
    keep_assumptions(&out->not_modelled);
    if (rc)
        return -1;
    if (fp16 && bf16)
        return err_set(err,
                       "%s: %s.enabled: expected at most one of fp16.enabled and "
                       "%s.enabled to be true, got both",
                       file, bf16_key, bf16_key);
    out->precision = fp16 ? PRECISION_FP16 : bf16 ? PRECISION_BF16 : PRECISION_FP32;
    if (out->is_bf16_master && out->zero.offload_optimizer.device != OFFLOAD_NONE)
        strlist_addf(&out->not_modelled,
                     "%s.bf16_master_weights_and_grads with offload_optimizer (the result "
                     "assumes fp32 gradient partitions beside the offloaded optimizer)",
                     bf16_key);
    if (!fp16 && !bf16 && !(out->auto_keys & (DS_AUTO_FP16 | DS_AUTO_BF16)))
        strlist_addf(&out->defaults_used, "precision = fp32 (neither fp16 nor bf16 enabled)");
    return 0;
}

int ds_config_load(TrainConfig *out, const char *name_or_path, const char *data_dir, Err *err)
{
    return ds_config_load_shape(out, name_or_path, data_dir, NULL, err);
}

int ds_config_load_shape(TrainConfig *out, const char *name_or_path, const char *data_dir,
                         const DsShape *shape, Err *err)
{
    return ds_config_load_release(out, name_or_path, data_dir, shape, NULL, err);
}

int ds_config_load_release(TrainConfig *out, const char *name_or_path, const char *data_dir,
                           const DsShape *shape, const DsRelease *release, Err *err)
{
    char path[1024];
    size_t n = 0;
    memset(out, 0, sizeof *out);
    char *text = resolve_read(name_or_path, data_dir, "workloads/ds_configs", "config", path,
                              sizeof path, &n, err);
    if (text == NULL)
        return -1;
    int rc = ds_config_parse_release(out, path, text, n, shape, release, err);
    free(text);
    return rc;
}

/* One batch key: the override when given, else HF's fill of an "auto", else the file's. */
static void apply_batch_key(TrainConfig *cfg, const char *key, unsigned bit, uint64_t given,
                            const char *option, uint64_t hf_default, const char *hf_name,
                            uint64_t *value)
{
    if (given) {
        if (*value && *value != given)
            strlist_addf(&cfg->defaults_used, "%s = %llu (%s; the config says %llu)", key,
                         (unsigned long long)given, option, (unsigned long long)*value);
        else
            strlist_addf(&cfg->defaults_used, "%s = %llu (%s%s)", key,
                         (unsigned long long)given, option,
                         (cfg->auto_keys & bit) ? ", filling \"auto\"" : "");
        *value = given;
    } else if ((cfg->auto_keys & bit) && hf_default) {
        *value = hf_default;
        strlist_addf(&cfg->defaults_used,
                     "%s = %llu (\"auto\": HF TrainingArguments %s default; %s sets it)", key,
                     (unsigned long long)hf_default, hf_name, option);
    }
    cfg->auto_keys &= ~bit;
}

int ds_config_apply(TrainConfig *cfg, uint64_t hidden, const TrainOverrides *o, Err *err)
{
    (void)err;
    const TrainOverrides none = {0};
    if (o == NULL)
        o = &none;
    /* train_batch_size is the product HF derives; a given factor replaces the file's. */
    if ((o->micro_batch || o->grad_accum) && !o->global_batch && cfg->train_batch_size) {
        strlist_addf(&cfg->defaults_used,
                     "train_batch_size %llu from the config set aside (--micro-batch or "
                     "--grad-accum given; derived instead)",
                     (unsigned long long)cfg->train_batch_size);
        cfg->train_batch_size = 0;
    }
    if (o->global_batch && !o->grad_accum && cfg->grad_accum_steps &&
        !(cfg->auto_keys & DS_AUTO_GRAD_ACCUM) && (cfg->micro_batch_per_gpu || o->micro_batch)) {
        strlist_addf(&cfg->defaults_used,
                     "gradient_accumulation_steps %llu from the config set aside (--global-batch "
                     "given; derived instead)",
                     (unsigned long long)cfg->grad_accum_steps);
        cfg->grad_accum_steps = 0;
    }
    const bool fills_micro = !(o->global_batch && o->grad_accum);
    apply_batch_key(cfg, "train_micro_batch_size_per_gpu", DS_AUTO_MICRO_BATCH, o->micro_batch,
                    "--micro-batch", fills_micro ? 8 : 0, "per_device_train_batch_size",
                    &cfg->micro_batch_per_gpu);
    apply_batch_key(cfg, "gradient_accumulation_steps", DS_AUTO_GRAD_ACCUM, o->grad_accum,
                    "--grad-accum", o->global_batch ? 0 : 1, "gradient_accumulation_steps",
                    &cfg->grad_accum_steps);
    /* An "auto" train_batch_size is derived (world size x micro-batch x accumulation). */
    apply_batch_key(cfg, "train_batch_size", DS_AUTO_GLOBAL_BATCH, o->global_batch,
                    "--global-batch", 0, "", &cfg->train_batch_size);

    if (o->has_precision) {
        if (o->precision != cfg->precision && !(cfg->auto_keys & (DS_AUTO_FP16 | DS_AUTO_BF16)))
            strlist_addf(&cfg->defaults_used, "precision = %s (--precision; the config says %s)",
                         precision_name(o->precision), precision_name(cfg->precision));
        else
            strlist_addf(&cfg->defaults_used, "precision = %s (--precision%s)",
                         precision_name(o->precision),
                         (cfg->auto_keys & (DS_AUTO_FP16 | DS_AUTO_BF16))
                             ? ", filling fp16/bf16.enabled \"auto\""
                             : "");
        cfg->precision = o->precision;
    } else {
        if (cfg->auto_keys & DS_AUTO_FP16)
            strlist_addf(&cfg->defaults_used, "fp16.enabled = false (\"auto\": HF "
                                              "TrainingArguments fp16 default; --precision "
                                              "sets it)");
        if (cfg->auto_keys & DS_AUTO_BF16)
            strlist_addf(&cfg->defaults_used, "bf16.enabled = false (\"auto\": HF "
                                              "TrainingArguments bf16 default; --precision "
                                              "sets it)");
    }
    cfg->auto_keys &= ~(unsigned)(DS_AUTO_FP16 | DS_AUTO_BF16);

    /* trainer_config_finalize: the hidden-size-based ZeRO keys. */
    ZeroConfig *z = &cfg->zero;
    if (cfg->auto_keys & DS_AUTO_REDUCE_BUCKET) {
        z->reduce_bucket_size = hidden * hidden;
        strlist_addf(&cfg->defaults_used,
                     "zero_optimization.reduce_bucket_size = %llu (\"auto\": hidden_size^2, "
                     "HF Trainer)",
                     (unsigned long long)z->reduce_bucket_size);
    }
    if ((cfg->auto_keys & DS_AUTO_PREFETCH) && z->stage == 3) {
        z->prefetch_bucket_size = (uint64_t)(0.9 * (double)hidden * (double)hidden);
        strlist_addf(&cfg->defaults_used,
                     "zero_optimization.stage3_prefetch_bucket_size = %llu (\"auto\": "
                     "int(0.9 x hidden_size^2), HF Trainer)",
                     (unsigned long long)z->prefetch_bucket_size);
    }
    if ((cfg->auto_keys & DS_AUTO_PERSISTENCE) && z->stage == 3) {
        z->param_persistence_threshold = 10 * hidden;
        strlist_addf(&cfg->defaults_used,
                     "zero_optimization.stage3_param_persistence_threshold = %llu (\"auto\": "
                     "10 x hidden_size, HF Trainer)",
                     (unsigned long long)z->param_persistence_threshold);
    }
    if (cfg->auto_keys & DS_SUB_GROUP_PER_TENSOR) {
        z->sub_group_size = hidden * hidden;
        strlist_addf(&cfg->defaults_used,
                     "zero_optimization.sub_group_size 0 modelled as %llu (DeepSpeed makes each "
                     "parameter tensor a sub-group; taken as one hidden_size^2 matrix)",
                     (unsigned long long)z->sub_group_size);
    }
    cfg->auto_keys = 0;
    return 0;
}

/* a x b x c, or UINT64_MAX when it exceeds BATCH_MAX: each batch key may be 2^31 and a
 * platform may have 2^30 GPUs, so the plain product can wrap around. */
static uint64_t batch_product(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t ab = 0, abc = 0;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc) || abc > BATCH_MAX)
        return UINT64_MAX;
    return abc;
}

int ds_config_resolve_batch(TrainConfig *cfg, uint64_t dp_size, BatchPlan *out, Err *err)
{
    assert(dp_size > 0);
    uint64_t tb = cfg->train_batch_size, mb = cfg->micro_batch_per_gpu, ga = cfg->grad_accum_steps;
    if (tb && mb && ga) {
        if (tb != batch_product(mb, ga, dp_size))
            return err_set(err,
                           "%s: train_batch_size: expected train_micro_batch_size_per_gpu "
                           "x gradient_accumulation_steps x GPUs = %llu x %llu x %llu = %.0f, "
                           "got %llu",
                           cfg->file, (unsigned long long)mb, (unsigned long long)ga,
                           (unsigned long long)dp_size, (double)mb * (double)ga * (double)dp_size,
                           (unsigned long long)tb);
    } else if (tb && mb) {
        if (tb % (mb * dp_size) != 0)
            return err_set(err,
                           "%s: train_batch_size: expected a multiple of "
                           "train_micro_batch_size_per_gpu x GPUs = %llu, got %llu",
                           cfg->file, (unsigned long long)(mb * dp_size), (unsigned long long)tb);
        ga = tb / (mb * dp_size);
        strlist_addf(&cfg->defaults_used, "gradient_accumulation_steps = %llu (derived)",
                     (unsigned long long)ga);
    } else if (tb && ga) {
        if (tb % (ga * dp_size) != 0)
            return err_set(err,
                           "%s: train_batch_size: expected a multiple of "
                           "gradient_accumulation_steps x GPUs = %llu, got %llu",
                           cfg->file, (unsigned long long)(ga * dp_size), (unsigned long long)tb);
        mb = tb / (ga * dp_size);
        strlist_addf(&cfg->defaults_used, "train_micro_batch_size_per_gpu = %llu (derived)",
                     (unsigned long long)mb);
    } else if (mb) {
        if (batch_product(mb, ga ? ga : 1, dp_size) == UINT64_MAX)
            return err_set(err,
                           "%s: train_micro_batch_size_per_gpu: expected it x "
                           "gradient_accumulation_steps x GPUs = %llu x %llu x %llu at most "
                           "%llu, got %.0f",
                           cfg->file, (unsigned long long)mb, (unsigned long long)(ga ? ga : 1),
                           (unsigned long long)dp_size, (unsigned long long)BATCH_MAX,
                           (double)mb * (double)(ga ? ga : 1) * (double)dp_size);
        if (ga == 0) {
            ga = 1;
            strlist_addf(&cfg->defaults_used, "gradient_accumulation_steps = 1");
        }
        strlist_addf(&cfg->defaults_used, "train_batch_size = %llu (derived)",
                     (unsigned long long)(mb * ga * dp_size));
    } else {
        ga = 1;
        if (tb % dp_size != 0)
            return err_set(err,
                           "%s: train_batch_size: expected a multiple of the GPU count "
                           "%llu, got %llu",
                           cfg->file, (unsigned long long)dp_size, (unsigned long long)tb);
        mb = tb / dp_size;
        strlist_addf(&cfg->defaults_used, "gradient_accumulation_steps = 1");
        strlist_addf(&cfg->defaults_used, "train_micro_batch_size_per_gpu = %llu (derived)",
                     (unsigned long long)mb);
    }
    out->micro_batch = mb;
    out->grad_accum = ga;
    out->global_batch = mb * ga * dp_size;
    return 0;
}

unsigned ds_config_param_bytes(const TrainConfig *cfg)
{
    return cfg->precision == PRECISION_FP32 ? 4u : 2u;
}

const char *ds_config_offload_name(OffloadDevice d)
{
    return d == OFFLOAD_CPU ? "cpu" : d == OFFLOAD_NVME ? "nvme" : "none";
}

void ds_config_fini(TrainConfig *cfg)
{
    strlist_fini(&cfg->not_modelled);
    strlist_fini(&cfg->unknown_keys);
    strlist_fini(&cfg->defaults_used);
}
