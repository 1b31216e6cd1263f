/*
 * test_ds_config.c - DeepSpeed ds_config.json -> TrainConfig (inputs/ds_config.c).
 *
 * DeepSpeed's defaults are applied and recorded, its aliases accepted, its impossible
 * combinations rejected, the batch triple resolved by DeepSpeed's rule, and every shipped
 * config loads. Messages are checked exactly: they are the user contract.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inputs/ds_config.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static bool has_item(const StrList *list, const char *item)
{
    for (size_t i = 0; i < list->n_items; i++)
        if (strcmp(list->items[i], item) == 0)
            return true;
    return false;
}

static void assert_has(const StrList *list, const char *item)
{
    if (!has_item(list, item)) {
        fprintf(stderr, "missing \"%s\" in:\n", item);
        for (size_t i = 0; i < list->n_items; i++)
            fprintf(stderr, "  %s\n", list->items[i]);
    }
    assert_true(has_item(list, item));
}

static void parse_ok(const char *text, TrainConfig *cfg)
{
    Err err = {0};
    int rc = ds_config_parse(cfg, "ds.json", text, strlen(text), &err);
    if (rc != 0)
        fail_msg("unexpected error: %s", err.msg);
    assert_false(err.is_set);
}

static void assert_parse_fails(const char *text, const char *expected)
{
    TrainConfig cfg;
    Err err = {0};
    assert_int_equal(ds_config_parse(&cfg, "ds.json", text, strlen(text), &err), -1);
    assert_true(err.is_set);
    assert_string_equal(err.msg, expected);
    ds_config_fini(&cfg);
}

/* ----------------------------------------------------------------------------- defaults */

static void parse_release_ok(const char *text, const char *name, unsigned major, unsigned minor,
                             unsigned patch, TrainConfig *cfg)
{
    DsRelease rel = {major, minor, patch, true, ""};
    snprintf(rel.name, sizeof rel.name, "%s", name);
    Err err = {0};
    if (ds_config_parse_release(cfg, "ds.json", text, strlen(text), NULL, &rel, &err) != 0)
        fail_msg("unexpected error: %s", err.msg);
}

/* DeepSpeed's defaults by release (ds_config.c ds_defaults, read at the tags): v0.3.14's
 * constants.py has ZERO3_OPTIMIZATION_CONTIGUOUS_GRADIENTS_DEFAULT = False and
 * ZERO_OPTIMIZATION_SUB_GROUP_SIZE_DEFAULT = 1000000000000; v0.3.16's
 * ZERO_OPTIMIZATION_REDUCE_SCATTER_DEFAULT = False; use_multi_rank_bucket_allreduce is
 * absent before v0.12.4; the constant ones stay as today. */
static void test_release_defaults_by_tag(void **state)
{
    (void)state;
    const char *s3 = "{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3}}";
    TrainConfig c;
    parse_release_ok(s3, "0.3.14", 0, 3, 14, &c);
    assert_false(c.zero.contiguous_gradients);
    assert_true(c.zero.overlap_comm);
    assert_true(c.zero.reduce_scatter);
    assert_int_equal(c.zero.sub_group_size, 1000000000000ull);
    assert_int_equal(c.zero.reduce_bucket_size, 500000000);
    assert_int_equal(c.zero.prefetch_bucket_size, 50000000);
    assert_int_equal(c.zero.param_persistence_threshold, 100000);
    assert_has(&c.defaults_used,
               "zero_optimization.contiguous_gradients = false (DeepSpeed 0.3.14's default)");
    assert_has(&c.defaults_used,
               "zero_optimization.sub_group_size = 1000000000000 (DeepSpeed 0.3.14's default)");
    ds_config_fini(&c);
    parse_release_ok(s3, "0.4.3", 0, 4, 3, &c); /* CONTIGUOUS_GRADIENTS_DEFAULT = True */
    assert_true(c.zero.contiguous_gradients);
    assert_int_equal(c.zero.sub_group_size, 1000000000);
    ds_config_fini(&c);
    parse_release_ok(s3, "0.4.2", 0, 4, 2, &c);
    assert_false(c.zero.contiguous_gradients);
    assert_int_equal(c.zero.sub_group_size, 1000000000); /* 1e9 from v0.4.1 */
    ds_config_fini(&c);
    const char *s2 = "{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2}}";
    parse_release_ok(s2, "0.3.16", 0, 3, 16, &c);
    assert_false(c.zero.reduce_scatter);
    assert_false(c.zero.overlap_comm);
    assert_has(&c.defaults_used,
               "zero_optimization.reduce_scatter = false (DeepSpeed 0.3.16's default)");
    assert_has(&c.not_modelled, "zero_optimization.contiguous_gradients false at stage 2 (the "
                                "result assumes the contiguous gradient buffer of true)");
    ds_config_fini(&c);
    parse_release_ok(s3, "0.3.16", 0, 3, 16, &c);
    assert_has(&c.not_modelled, "zero_optimization.reduce_scatter false at stage 3 (the result "
                                "assumes the reduce-scatters of true)");
    ds_config_fini(&c);
    parse_release_ok(s2, "0.12.3", 0, 12, 3, &c);
    assert_false(c.zero.multi_rank_bucket_allreduce);
    ds_config_fini(&c);
    parse_release_ok(s2, "0.12.4", 0, 12, 4, &c);
    assert_true(c.zero.multi_rank_bucket_allreduce);
    ds_config_fini(&c);
    /* a key the config gives is its own whatever the release */
    parse_release_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
                     "\"contiguous_gradients\": true}}",
                     "0.3.14", 0, 3, 14, &c);
    assert_true(c.zero.contiguous_gradients);
    ds_config_fini(&c);
    /* the current release, unnamed: today's values, recorded without a release */
    parse_ok(s3, &c);
    assert_true(c.zero.contiguous_gradients);
    assert_has(&c.defaults_used, "zero_optimization.contiguous_gradients = true");
    ds_config_fini(&c);
}


/* engine.py _configure_zero_optimizer from v0.4.4 to v0.12.x: "Overlap and contiguous grads
 * are meaningless in stage 1 and are ignored" (overlap_comm = False, contiguous_gradients =
 * False), whatever the config says; v0.4.3 and v0.13.0 honour them. */
static void test_stage1_ignores_overlap_and_contiguous_0_4_4_to_0_12(void **state)
{
    (void)state;
    const char *s1 = "{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 1, "
                     "\"overlap_comm\": true, \"contiguous_gradients\": true}}";
    TrainConfig c;
    parse_release_ok(s1, "0.5.7", 0, 5, 7, &c);
    assert_false(c.zero.overlap_comm);
    assert_false(c.zero.contiguous_gradients);
    assert_has(&c.defaults_used, "zero_optimization.overlap_comm = false, contiguous_gradients "
                                 "= false (DeepSpeed 0.5.7 ignores both at stage 1: engine.py)");
    assert_int_equal(c.not_modelled.n_items, 0); /* the fallback is modelled (zero_schedule.c) */
    ds_config_fini(&c);
    parse_release_ok(s1, "0.12.6", 0, 12, 6, &c);
    assert_false(c.zero.contiguous_gradients);
    ds_config_fini(&c);
    parse_release_ok(s1, "0.4.3", 0, 4, 3, &c);
    assert_true(c.zero.overlap_comm && c.zero.contiguous_gradients);
    ds_config_fini(&c);
    parse_release_ok(s1, "0.13.0", 0, 13, 0, &c);
    assert_true(c.zero.overlap_comm && c.zero.contiguous_gradients);
    ds_config_fini(&c);
    /* stage 2 keeps its keys in those releases */
    parse_release_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
                     "\"overlap_comm\": true}}",
                     "0.5.7", 0, 5, 7, &c);
    assert_true(c.zero.overlap_comm && c.zero.contiguous_gradients);
    ds_config_fini(&c);
}

static void test_stage3_defaults_recorded(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 3}}", &c);
    assert_string_equal(c.file, "ds.json");
    assert_int_equal(c.zero.stage, 3);
    assert_true(c.zero.overlap_comm);
    assert_true(c.zero.contiguous_gradients);
    assert_true(c.zero.reduce_scatter);
    assert_int_equal(c.zero.reduce_bucket_size, 500000000);
    assert_int_equal(c.zero.allgather_bucket_size, 500000000);
    assert_int_equal(c.zero.sub_group_size, 1000000000);
    assert_int_equal(c.zero.prefetch_bucket_size, 50000000);
    assert_int_equal(c.zero.max_live_parameters, 1000000000);
    assert_int_equal(c.zero.max_reuse_distance, 1000000000);
    assert_int_equal(c.zero.param_persistence_threshold, 100000);
    assert_int_equal(c.zero.offload_optimizer.device, OFFLOAD_NONE);
    assert_int_equal(c.zero.offload_param.device, OFFLOAD_NONE);
    assert_int_equal(c.precision, PRECISION_FP32);
    assert_int_equal(ds_config_param_bytes(&c), 4);
    assert_string_equal(c.optimizer, "adam");
    assert_int_equal(c.optimizer_n_states, 2);
    static const char *const expected[] = {
        "optimizer.type = Adam (mixed-precision Adam, K = 12 in the ZeRO paper)",
        "zero_optimization.overlap_comm = true",
        "zero_optimization.contiguous_gradients = true",
        "zero_optimization.reduce_scatter = true",
        "zero_optimization.reduce_bucket_size = 500000000",
        "zero_optimization.allgather_bucket_size = 500000000",
        "zero_optimization.sub_group_size = 1000000000",
        "zero_optimization.stage3_prefetch_bucket_size = 50000000",
        "zero_optimization.stage3_max_live_parameters = 1000000000",
        "zero_optimization.stage3_max_reuse_distance = 1000000000",
        "zero_optimization.stage3_param_persistence_threshold = 100000",
        "precision = fp32 (neither fp16 nor bf16 enabled)",
    };
    size_t n = sizeof expected / sizeof expected[0];
    for (size_t i = 0; i < n; i++)
        assert_has(&c.defaults_used, expected[i]);
    assert_int_equal(c.defaults_used.n_items, n);
    assert_int_equal(c.not_modelled.n_items, 0);
    ds_config_fini(&c);
}

/* DeepSpeed: overlap_comm defaults to true for stage 3 only; stage3_* knobs are not read
 * below stage 3. */
static void test_stage2_defaults(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 2, "
             "\"stage3_prefetch_bucket_size\": 1000}}",
             &c);
    assert_int_equal(c.zero.stage, 2);
    assert_false(c.zero.overlap_comm);
    assert_has(&c.defaults_used, "zero_optimization.overlap_comm = false");
    assert_false(
        has_item(&c.defaults_used, "zero_optimization.stage3_prefetch_bucket_size = 50000000"));
    ds_config_fini(&c);
}

/* Stages 1-2: DeepSpeed's default use_multi_rank_bucket_allreduce (true) turns reduce_scatter
 * into bucket all-reduces; the key can turn it off. */
static void test_multi_rank_bucket_allreduce(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 1}}", &c);
    assert_true(c.zero.multi_rank_bucket_allreduce);
    assert_has(&c.defaults_used, "zero_optimization.use_multi_rank_bucket_allreduce = true");
    ds_config_fini(&c);
    parse_ok("{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 2, "
             "\"use_multi_rank_bucket_allreduce\": false}}",
             &c);
    assert_false(c.zero.multi_rank_bucket_allreduce);
    assert_int_equal(c.not_modelled.n_items, 0);
    ds_config_fini(&c);
}

/* communication_data_type as DeepSpeed's get_communication_data_type reads it: fp32, fp16 or
 * bf16 in any case, null as absent, anything else refused. */
static void test_communication_data_type(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"communication_data_type\": \"FP32\"}", &c);
    assert_int_equal(c.comm_grad_bytes, 4);
    ds_config_fini(&c);
    parse_ok("{\"train_batch_size\": 8, \"communication_data_type\": \"bf16\"}", &c);
    assert_int_equal(c.comm_grad_bytes, 2);
    ds_config_fini(&c);
    parse_ok("{\"train_batch_size\": 8, \"communication_data_type\": null}", &c);
    assert_int_equal(c.comm_grad_bytes, 0);
    ds_config_fini(&c);
    assert_parse_fails("{\"train_batch_size\": 8, \"communication_data_type\": \"fp8\"}",
                       "ds.json: communication_data_type: expected one of \"fp32\", \"fp16\", "
                       "\"bf16\", got \"fp8\"");
}

static void test_no_zero_section_is_stage0(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 32, \"bf16\": {\"enabled\": true}}", &c);
    assert_int_equal(c.zero.stage, 0);
    assert_false(c.zero.overlap_comm);
    assert_has(&c.defaults_used, "zero_optimization.stage = 0");
    assert_int_equal(c.precision, PRECISION_BF16);
    assert_int_equal(ds_config_param_bytes(&c), 2);
    assert_false(has_item(&c.defaults_used, "precision = fp32 (neither fp16 nor bf16 enabled)"));
    ds_config_fini(&c);
    /* An explicit null is the same as absent. */
    parse_ok("{\"train_batch_size\": 32, \"zero_optimization\": null}", &c);
    assert_int_equal(c.zero.stage, 0);
    ds_config_fini(&c);
}

static void test_explicit_values_win(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_micro_batch_size_per_gpu\": 2, \"fp16\": {\"enabled\": true, "
             "\"loss_scale\": 0}, \"optimizer\": {\"type\": \"SGD\"}, \"zero_optimization\": "
             "{\"stage\": 3, \"overlap_comm\": false, \"reduce_bucket_size\": 2e8, "
             "\"stage3_max_live_parameters\": 3e8}, \"activation_checkpointing\": "
             "{\"partition_activations\": true, \"cpu_checkpointing\": true}}",
             &c);
    assert_false(c.zero.overlap_comm);
    assert_int_equal(c.zero.reduce_bucket_size, 200000000);
    assert_int_equal(c.zero.max_live_parameters, 300000000);
    assert_int_equal(c.precision, PRECISION_FP16);
    assert_string_equal(precision_name(c.precision), "fp16");
    assert_string_equal(c.optimizer, "sgd");
    assert_int_equal(c.optimizer_n_states, 1);
    assert_true(c.partition_activations);
    assert_true(c.cpu_checkpointing);
    assert_false(has_item(&c.defaults_used, "zero_optimization.overlap_comm = true"));
    assert_int_equal(c.not_modelled.n_items, 0); /* fp16.loss_scale is metadata: silent */
    ds_config_fini(&c);
}

static void test_optimizer_names(void **state)
{
    (void)state;
    static const struct {
        const char *type, *name;
        int n_states;
    } cases[] = {
        {"Adam", "adam", 2}, {"AdamW", "adamw", 2},     {"OneBitAdam", "onebitadam", 2},
        {"Lion", "lion", 1}, {"Adagrad", "adagrad", 1}, {"Fused_Adam", "fusedadam", 2},
        {"LAMB", "lamb", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "{\"train_batch_size\": 8, \"optimizer\": {\"type\": "
                 "\"%s\", \"params\": {\"lr\": 1e-4}}}",
                 cases[i].type);
        TrainConfig c;
        parse_ok(text, &c);
        assert_string_equal(c.optimizer, cases[i].name);
        assert_int_equal(c.optimizer_n_states, cases[i].n_states);
        assert_int_equal(c.not_modelled.n_items, 0); /* optimizer.params: silent */
        ds_config_fini(&c);
    }
    assert_parse_fails("{\"train_batch_size\": 8, \"optimizer\": {\"type\": \"Adamax\"}}",
                       "ds.json: optimizer.type: expected a DeepSpeed optimizer (Adam, AdamW, "
                       "Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Adagrad, Lion, SGD), got "
                       "\"Adamax\"");
}

static void test_offload_defaults(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
             "\"offload_optimizer\": {\"device\": \"cpu\"}, \"offload_param\": {\"device\": "
             "\"nvme\", \"nvme_path\": \"/local_nvme\"}}}",
             &c);
    const OffloadConfig *o = &c.zero.offload_optimizer, *p = &c.zero.offload_param;
    assert_int_equal(o->device, OFFLOAD_CPU);
    assert_false(o->pin_memory);
    assert_int_equal(o->buffer_count, 4);
    assert_false(o->pipeline_read);
    assert_false(o->pipeline_write);
    assert_true(o->ratio == 1.0);
    assert_int_equal(p->device, OFFLOAD_NVME);
    assert_string_equal(ds_config_offload_name(p->device), "nvme");
    assert_int_equal(p->buffer_count, 5);
    assert_int_equal(p->buffer_size, 100000000);
    assert_int_equal(p->max_in_cpu, 1000000000);
    assert_has(&c.defaults_used, "zero_optimization.offload_optimizer.buffer_count = 4");
    assert_has(&c.defaults_used, "zero_optimization.offload_param.buffer_size = 100000000");
    assert_has(&c.defaults_used, "zero_optimization.offload_param.pin_memory = false");
    assert_int_equal(c.not_modelled.n_items, 0); /* nvme_path: silent */
    ds_config_fini(&c);
}

/* ------------------------------------------------------------------------------ aliases */

static void test_alias_accepted(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
             "\"prefetch_bucket_size\": 1000, \"max_live_parameters\": 2000, "
             "\"max_reuse_distance\": 3000, \"param_persistence_threshold\": 4000}}",
             &c);
    assert_int_equal(c.zero.prefetch_bucket_size, 1000);
    assert_int_equal(c.zero.max_live_parameters, 2000);
    assert_int_equal(c.zero.max_reuse_distance, 3000);
    assert_int_equal(c.zero.param_persistence_threshold, 4000);
    assert_false(
        has_item(&c.defaults_used, "zero_optimization.stage3_prefetch_bucket_size = 50000000"));
    ds_config_fini(&c);

    parse_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
             "\"stage3_prefetch_bucket_size\": 5e6}}",
             &c);
    assert_int_equal(c.zero.prefetch_bucket_size, 5000000);
    ds_config_fini(&c);
}

static void test_alias_and_name_both_given(void **state)
{
    (void)state;
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
                       "\"stage3_prefetch_bucket_size\": 5e7, \"prefetch_bucket_size\": 5e7}}",
                       "ds.json: zero_optimization.prefetch_bucket_size: expected only one of "
                       "\"stage3_prefetch_bucket_size\" and its alias \"prefetch_bucket_size\", "
                       "got both");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
                       "\"max_reuse_distance\": 1, \"stage3_max_reuse_distance\": 2}}",
                       "ds.json: zero_optimization.max_reuse_distance: expected only one of "
                       "\"stage3_max_reuse_distance\" and its alias \"max_reuse_distance\", got "
                       "both");
}

/* ------------------------------------------------------------------------------- errors */

static void test_typo_in_zero_section(void **state)
{
    (void)state;
    assert_parse_fails("{\n  \"train_batch_size\": 8,\n  \"zero_optimization\": {\n"
                       "    \"stage\": 3,\n    \"stage3_prefetch_bucket_sise\": 5e7\n  }\n}\n",
                       "ds.json: zero_optimization.stage3_prefetch_bucket_sise: expected a "
                       "known key, got unknown key \"stage3_prefetch_bucket_sise\" (did you mean "
                       "\"stage3_prefetch_bucket_size\"?)");
    assert_parse_fails("{\"train_batch_sise\": 8}",
                       "ds.json: train_batch_sise: expected a known key, got unknown key "
                       "\"train_batch_sise\" (did you mean \"train_batch_size\"?)");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
                       "\"offload_param\": {\"device\": \"cpu\", \"pin_memmory\": true}}}",
                       "ds.json: zero_optimization.offload_param.pin_memmory: expected a known "
                       "key, got unknown key \"pin_memmory\" (did you mean \"pin_memory\"?)");
}

/* Keys DeepSpeed defines: metadata is silent; those that would change the result are listed
 * with what zerosim assumes instead. */
static void test_not_modelled_keys_are_warnings(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"steps_per_print\": 10, \"gradient_clipping\": 1.0, "
             "\"zero_optimization\": {\"stage\": 2, \"round_robin_gradients\": true}, "
             "\"bf16\": {\"enabled\": true, \"immediate_grad_update\": false}}",
             &c);
    assert_int_equal(c.not_modelled.n_items, 0);
    assert_int_equal(c.unknown_keys.n_items, 0);
    ds_config_fini(&c);
    parse_ok("{\"train_batch_size\": 8, \"tensor_parallel\": {\"autotp_size\": 2}, "
             "\"zero_optimization\": {\"stage\": 3, \"zero_quantized_weights\": true, "
             "\"zero_hpz_partition_size\": 8}, \"bf16\": {\"enabled\": true, "
             "\"bf16_master_weights_and_grads\": true}, \"data_types\": "
             "{\"grad_accum_dtype\": \"fp32\"}}",
             &c);
    assert_true(c.is_bf16_master); /* modelled: 2-byte master weights */
    assert_false(c.is_bf16_optimizer_states);
    assert_int_equal(c.not_modelled.n_items, 4);
    assert_string_equal(c.not_modelled.items[0],
                        "tensor_parallel (the result assumes no tensor parallelism: each GPU "
                        "holds whole layers)");
    assert_has(&c.not_modelled, "zero_optimization.zero_quantized_weights (ZeRO++ qwZ is not "
                                "modelled: the result assumes 16-bit parameter all-gathers)");
    assert_has(&c.not_modelled, "zero_optimization.zero_hpz_partition_size (ZeRO++ hpZ is not "
                                "modelled: the result assumes one parameter partition over all "
                                "GPUs)");
    assert_has(&c.not_modelled, "data_types (the result assumes gradients accumulate in the "
                                "training precision (data_types.grad_accum_dtype fp32 would add "
                                "4 bytes per parameter))");
    ds_config_fini(&c);
}

/* The top level is DeepSpeed's plain dict: an unknown key is listed and ignored, unless it is
 * a near miss of a key zerosim reads that the file lacks. */
static void test_unknown_top_level_keys_are_warnings(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_micro_batch_size_per_gpu\": 4, \"_comment\": \"x\", "
             "\"comms_config\": {\"verbose\": false}, \"bf16\": {\"enabled\": true}}",
             &c);
    assert_int_equal(c.unknown_keys.n_items, 2);
    assert_string_equal(c.unknown_keys.items[0], "_comment");
    assert_string_equal(c.unknown_keys.items[1], "comms_config");
    ds_config_fini(&c);
    /* a near miss of a key that is present is not a typo of it */
    parse_ok("{\"train_batch_size\": 8, \"train_batch_sizes\": 8}", &c);
    assert_int_equal(c.unknown_keys.n_items, 1);
    ds_config_fini(&c);
}

/* Bounds are DeepSpeed's config models': the bucket sizes, sub_group_size and the offload
 * buffer counts and sizes are Field(ge=0), so 0 is accepted (sub_group_size 0, one sub-group
 * per tensor, is sized from the model by ds_config_apply). */
static void test_zero_bounds_accept_zero(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
             "\"reduce_bucket_size\": 0, \"allgather_bucket_size\": 0, \"sub_group_size\": 0, "
             "\"offload_param\": {\"device\": \"nvme\", \"nvme_path\": \"/n\", \"buffer_count\": 0, "
             "\"buffer_size\": 0}}}",
             &c);
    assert_int_equal(c.zero.reduce_bucket_size, 0);
    assert_int_equal(c.zero.offload_param.buffer_count, 0);
    assert_true(c.auto_keys & DS_SUB_GROUP_PER_TENSOR);
    assert_int_equal(ds_config_apply(&c, 1024, NULL, NULL), 0);
    assert_int_equal(c.zero.sub_group_size, 1024 * 1024);
    ds_config_fini(&c);
}

/* "auto" as HF Trainer writes it: noted at parse, filled by ds_config_apply as the HF
 * integration fills it (transformers integrations/deepspeed.py). */
static void test_auto_resolved_as_hf(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": \"auto\", \"train_micro_batch_size_per_gpu\": \"auto\", "
             "\"gradient_accumulation_steps\": \"auto\", \"gradient_clipping\": \"auto\", "
             "\"fp16\": {\"enabled\": \"auto\", \"loss_scale\": 0}, "
             "\"bf16\": {\"enabled\": \"auto\"}, "
             "\"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": \"auto\"}}, "
             "\"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": \"auto\", "
             "\"stage3_prefetch_bucket_size\": \"auto\", "
             "\"stage3_param_persistence_threshold\": \"auto\", "
             "\"stage3_gather_16bit_weights_on_model_save\": \"auto\", "
             "\"overlap_comm\": \"auto\"}}",
             &c);
    assert_int_equal(c.auto_keys, DS_AUTO_MICRO_BATCH | DS_AUTO_GRAD_ACCUM | DS_AUTO_GLOBAL_BATCH |
                                      DS_AUTO_FP16 | DS_AUTO_BF16 | DS_AUTO_REDUCE_BUCKET |
                                      DS_AUTO_PREFETCH | DS_AUTO_PERSISTENCE);
    /* An "auto" HF does not fill is dropped, as DeepSpeedConfigModel drops it: the default. */
    assert_true(c.zero.overlap_comm);
    assert_has(&c.defaults_used, "zero_optimization.overlap_comm: \"auto\" dropped, as "
                                 "DeepSpeed's config models drop it (HF does not fill this key)");
    TrainOverrides o = {.has_precision = true, .precision = PRECISION_BF16};
    assert_int_equal(ds_config_apply(&c, 4096, &o, NULL), 0);
    assert_int_equal(c.precision, PRECISION_BF16);
    assert_int_equal(c.micro_batch_per_gpu, 8); /* TrainingArguments default */
    assert_int_equal(c.grad_accum_steps, 1);
    assert_int_equal(c.train_batch_size, 0); /* derived against the GPU count */
    assert_int_equal(c.zero.reduce_bucket_size, 4096ull * 4096);
    assert_int_equal(c.zero.prefetch_bucket_size, 15099494); /* int(0.9 x 4096^2) */
    assert_int_equal(c.zero.param_persistence_threshold, 40960);
    assert_int_equal(c.auto_keys, 0);
    assert_has(&c.defaults_used, "zero_optimization.reduce_bucket_size = 16777216 (\"auto\": "
                                 "hidden_size^2, HF Trainer)");
    assert_has(&c.defaults_used, "train_micro_batch_size_per_gpu = 8 (\"auto\": HF "
                                 "TrainingArguments per_device_train_batch_size default; "
                                 "--micro-batch sets it)");
    assert_has(&c.defaults_used, "precision = bf16 (--precision, filling fp16/bf16.enabled "
                                 "\"auto\")");
    BatchPlan plan;
    Err err = {0};
    assert_int_equal(ds_config_resolve_batch(&c, 16, &plan, &err), 0);
    assert_int_equal(plan.global_batch, 128);
    ds_config_fini(&c);

    /* Without --precision, "auto" is HF's default: neither fp16 nor bf16, fp32. Under ZeRO-2
     * only reduce_bucket_size is filled (the stage-3 keys are trainer_config_finalize's
     * is_zero3() branch). */
    parse_ok("{\"train_micro_batch_size_per_gpu\": \"auto\", \"bf16\": {\"enabled\": \"auto\"}, "
             "\"zero_optimization\": {\"stage\": 2, \"reduce_bucket_size\": \"auto\"}}",
             &c);
    assert_int_equal(ds_config_apply(&c, 1024, NULL, NULL), 0);
    assert_int_equal(c.precision, PRECISION_FP32);
    assert_int_equal(c.zero.reduce_bucket_size, 1048576);
    assert_has(&c.defaults_used, "bf16.enabled = false (\"auto\": HF TrainingArguments bf16 "
                                 "default; --precision sets it)");
    ds_config_fini(&c);
}

/* The command line replaces the config's batch keys: a factor sets aside the file's
 * train_batch_size, --global-batch its gradient_accumulation_steps. */
static void test_overrides_replace_config(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 4, "
             "\"gradient_accumulation_steps\": 2, \"fp16\": {\"enabled\": true}}",
             &c);
    TrainOverrides o = {.micro_batch = 2};
    assert_int_equal(ds_config_apply(&c, 512, &o, NULL), 0);
    assert_int_equal(c.micro_batch_per_gpu, 2);
    assert_int_equal(c.grad_accum_steps, 2);
    assert_int_equal(c.train_batch_size, 0);
    assert_has(&c.defaults_used, "train_micro_batch_size_per_gpu = 2 (--micro-batch; the config "
                                 "says 4)");
    BatchPlan plan;
    Err err = {0};
    assert_int_equal(ds_config_resolve_batch(&c, 8, &plan, &err), 0);
    assert_int_equal(plan.global_batch, 32);
    ds_config_fini(&c);

    parse_ok("{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 2, "
             "\"fp16\": {\"enabled\": true}}",
             &c);
    o = (TrainOverrides){.global_batch = 256, .has_precision = true, .precision = PRECISION_BF16};
    assert_int_equal(ds_config_apply(&c, 512, &o, NULL), 0);
    assert_int_equal(c.precision, PRECISION_BF16);
    assert_has(&c.defaults_used, "precision = bf16 (--precision; the config says fp16)");
    assert_int_equal(ds_config_resolve_batch(&c, 8, &plan, &err), 0);
    assert_int_equal(plan.micro_batch, 4);
    assert_int_equal(plan.grad_accum, 8);
    ds_config_fini(&c);
}

static void test_offload_param_needs_stage3(void **state)
{
    (void)state;
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
                       "\"offload_param\": {\"device\": \"cpu\"}}}",
                       "ds.json: zero_optimization.offload_param.device: expected \"none\" "
                       "unless zero_optimization.stage is 3 (parameter offload needs ZeRO-3), "
                       "got \"cpu\" with stage 2");
    /* device "none" is fine at any stage. */
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
             "\"offload_param\": {\"device\": \"none\"}}}",
             &c);
    assert_int_equal(c.zero.offload_param.device, OFFLOAD_NONE);
    ds_config_fini(&c);
}

static void test_nvme_optimizer_needs_stage3(void **state)
{
    (void)state;
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
                       "\"offload_optimizer\": {\"device\": \"nvme\", \"nvme_path\": \"/n\"}}}",
                       "ds.json: zero_optimization.offload_optimizer.device: expected \"cpu\" "
                       "or \"none\" with stage 2 (NVMe offload is ZeRO-Infinity, stage 3), got "
                       "\"nvme\"");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 0, "
                       "\"offload_optimizer\": {\"device\": \"cpu\"}}}",
                       "ds.json: zero_optimization.offload_optimizer.device: expected \"none\" "
                       "with stage 0 (optimizer offload needs ZeRO stage 1, 2 or 3), got \"cpu\"");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
                       "\"offload_optimizer\": {\"device\": \"gpu\"}}}",
                       "ds.json: zero_optimization.offload_optimizer.device: expected one of "
                       "\"none\", \"cpu\", \"nvme\", got \"gpu\"");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
                       "\"offload_optimizer\": {\"device\": \"cpu\", \"ratio\": 1.5}}}",
                       "ds.json: zero_optimization.offload_optimizer.ratio: expected number in "
                       "[0, 1], got 1.5");
}

static void test_fp16_and_bf16(void **state)
{
    (void)state;
    assert_parse_fails("{\"train_batch_size\": 8, \"fp16\": {\"enabled\": true}, \"bf16\": "
                       "{\"enabled\": true}}",
                       "ds.json: bf16.enabled: expected at most one of fp16.enabled and "
                       "bf16.enabled to be true, got both");
    assert_parse_fails("{\"train_batch_size\": 8, \"bf16\": true}",
                       "ds.json: bf16: expected an object, got true");
    /* Both present but only one enabled is fine. */
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"fp16\": {\"enabled\": false}, \"bf16\": "
             "{\"enabled\": true}}",
             &c);
    assert_int_equal(c.precision, PRECISION_BF16);
    ds_config_fini(&c);
}

/* DeepSpeed's deprecated spellings are read as DeepSpeed reads them, not ignored. */
static void test_deprecated_spellings(void **state)
{
    (void)state;
    TrainConfig c;
    parse_ok("{\"train_batch_size\": 8, \"bfloat16\": {\"enabled\": true}, "
             "\"zero_optimization\": {\"stage\": 2, \"cpu_offload\": true}}",
             &c);
    assert_int_equal(c.precision, PRECISION_BF16);
    assert_int_equal(c.zero.offload_optimizer.device, OFFLOAD_CPU);
    assert_int_equal(c.zero.offload_optimizer.buffer_count, 4);
    assert_int_equal(c.zero.offload_param.device, OFFLOAD_NONE);
    assert_has(&c.defaults_used, "zero_optimization.offload_optimizer.device = cpu (from the "
                                 "deprecated cpu_offload = true)");
    assert_int_equal(c.not_modelled.n_items, 0);
    ds_config_fini(&c);

    parse_ok("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
             "\"cpu_offload_param\": true, \"cpu_offload\": false}}",
             &c);
    assert_int_equal(c.zero.offload_param.device, OFFLOAD_CPU);
    assert_int_equal(c.zero.offload_param.buffer_count, 5);
    assert_int_equal(c.zero.offload_optimizer.device, OFFLOAD_NONE);
    ds_config_fini(&c);

    /* "bf16" wins over "bfloat16", and the loser is named in a warning. */
    parse_ok("{\"train_batch_size\": 8, \"bf16\": {\"enabled\": false}, "
             "\"bfloat16\": {\"enabled\": true}}",
             &c);
    assert_int_equal(c.precision, PRECISION_FP32);
    assert_has(&c.not_modelled, "bfloat16 (\"bf16\" is given and wins)");
    ds_config_fini(&c);

    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 3, "
                       "\"cpu_offload\": true, \"offload_optimizer\": {\"device\": \"cpu\"}}}",
                       "ds.json: zero_optimization.cpu_offload: expected either the deprecated "
                       "\"cpu_offload\" or \"offload_optimizer\", got both");
    /* errors name the deprecated key the user wrote */
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
                       "\"cpu_offload_param\": true}}",
                       "ds.json: zero_optimization.cpu_offload_param: expected false unless "
                       "zero_optimization.stage is 3 (parameter offload needs ZeRO-3), got true "
                       "with stage 2");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"cpu_offload\": true}}",
                       "ds.json: zero_optimization.cpu_offload: expected false with stage 0 "
                       "(optimizer offload needs ZeRO stage 1, 2 or 3), got true");
    assert_parse_fails("{\"train_batch_size\": 8, \"fp16\": {\"enabled\": true}, "
                       "\"bfloat16\": {\"enabled\": true}}",
                       "ds.json: bfloat16.enabled: expected at most one of fp16.enabled and "
                       "bfloat16.enabled to be true, got both");
    /* a null "bf16" is absent to DeepSpeed: "bfloat16" is read */
    parse_ok("{\"train_batch_size\": 8, \"bf16\": null, \"bfloat16\": {\"enabled\": true}}", &c);
    assert_int_equal(c.precision, PRECISION_BF16);
    assert_int_equal(c.not_modelled.n_items, 0);
    ds_config_fini(&c);
    assert_parse_fails("{\"train_batch_size\": 8, \"bfloat16\": {\"enabled\": 1}}",
                       "ds.json: bfloat16.enabled: expected true or false, got 1");
}

static void test_stage_out_of_range(void **state)
{
    (void)state;
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 4}}",
                       "ds.json: zero_optimization.stage: expected integer in [0, 3], got 4");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": -1}}",
                       "ds.json: zero_optimization.stage: expected integer in [0, 3], got -1");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": \"3\"}}",
                       "ds.json: zero_optimization.stage: expected integer in [0, 3], got "
                       "\"3\"");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2.5}}",
                       "ds.json: zero_optimization.stage: expected integer in [0, 3], got 2.5");
}

static void test_wrong_types(void **state)
{
    (void)state;
    assert_parse_fails("{\"train_batch_size\": \"8\"}",
                       "ds.json: train_batch_size: expected integer in [1, 2147483648], got "
                       "\"8\"");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
                       "\"reduce_bucket_size\": \"5e8\"}}",
                       "ds.json: zero_optimization.reduce_bucket_size: expected integer >= 0, "
                       "got \"5e8\"");
    /* "auto" in a key HF does not fill and DeepSpeed reads outside its config models */
    assert_parse_fails("{\"train_batch_size\": 8, \"activation_checkpointing\": "
                       "{\"partition_activations\": \"auto\"}}",
                       "ds.json: activation_checkpointing.partition_activations: expected true "
                       "or false, got \"auto\"");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
                       "\"overlap_comm\": 1}}",
                       "ds.json: zero_optimization.overlap_comm: expected true or false, got 1");
    assert_parse_fails("{\"train_batch_size\": 8, \"zero_optimization\": 2}",
                       "ds.json: zero_optimization: expected an object, got 2");
    assert_parse_fails("[]", "ds.json: (top level): expected an object, got an array");
}

static void test_batch_missing(void **state)
{
    (void)state;
    assert_parse_fails("{\"gradient_accumulation_steps\": 4}",
                       "ds.json: train_micro_batch_size_per_gpu: expected it or "
                       "train_batch_size (DeepSpeed needs one of them), got neither");
    assert_parse_fails("{\"train_micro_batch_size_per_gpu\": 0}",
                       "ds.json: train_micro_batch_size_per_gpu: expected integer in [1, "
                       "2147483648], got 0");
}

/* -------------------------------------------------------------------- batch resolution */

typedef struct BatchCase {
    const char *text;
    uint64_t dp;
    uint64_t global, micro, accum;
    const char *recorded; /* one default expected in defaults_used, or NULL */
} BatchCase;

static void test_batch_resolution(void **state)
{
    (void)state;
    static const BatchCase cases[] = {
        /* all three, consistent */
        {"{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 4, "
         "\"gradient_accumulation_steps\": 2}",
         8, 64, 4, 2, NULL},
        /* batch and micro: accumulation derived */
        {"{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 4}", 8, 64, 4, 2,
         "gradient_accumulation_steps = 2 (derived)"},
        /* batch and accumulation: micro derived */
        {"{\"train_batch_size\": 64, \"gradient_accumulation_steps\": 2}", 8, 64, 4, 2,
         "train_micro_batch_size_per_gpu = 4 (derived)"},
        /* micro and accumulation: batch derived */
        {"{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 3}", 8, 96, 4, 3,
         "train_batch_size = 96 (derived)"},
        /* micro alone: accumulation 1 */
        {"{\"train_micro_batch_size_per_gpu\": 4}", 8, 32, 4, 1, "gradient_accumulation_steps = 1"},
        /* batch alone: accumulation 1, micro derived */
        {"{\"train_batch_size\": 64}", 8, 64, 8, 1, "train_micro_batch_size_per_gpu = 8 (derived)"},
        /* one GPU */
        {"{\"train_batch_size\": 6}", 1, 6, 6, 1, "gradient_accumulation_steps = 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TrainConfig c;
        parse_ok(cases[i].text, &c);
        BatchPlan plan;
        Err err = {0};
        int rc = ds_config_resolve_batch(&c, cases[i].dp, &plan, &err);
        if (rc != 0)
            fail_msg("case %zu: %s", i, err.msg);
        assert_int_equal(plan.global_batch, cases[i].global);
        assert_int_equal(plan.micro_batch, cases[i].micro);
        assert_int_equal(plan.grad_accum, cases[i].accum);
        assert_int_equal(plan.global_batch, plan.micro_batch * plan.grad_accum * cases[i].dp);
        if (cases[i].recorded)
            assert_has(&c.defaults_used, cases[i].recorded);
        ds_config_fini(&c);
    }
}

static void assert_batch_fails(const char *text, uint64_t dp, const char *expected)
{
    TrainConfig c;
    parse_ok(text, &c);
    BatchPlan plan;
    Err err = {0};
    assert_int_equal(ds_config_resolve_batch(&c, dp, &plan, &err), -1);
    assert_string_equal(err.msg, expected);
    ds_config_fini(&c);
}

static void test_batch_errors(void **state)
{
    (void)state;
    assert_batch_fails("{\"train_batch_size\": 100, \"train_micro_batch_size_per_gpu\": 4, "
                       "\"gradient_accumulation_steps\": 2}",
                       8,
                       "ds.json: train_batch_size: expected train_micro_batch_size_per_gpu x "
                       "gradient_accumulation_steps x GPUs = 4 x 2 x 8 = 64, got 100");
    assert_batch_fails("{\"train_batch_size\": 60, \"train_micro_batch_size_per_gpu\": 4}", 8,
                       "ds.json: train_batch_size: expected a multiple of "
                       "train_micro_batch_size_per_gpu x GPUs = 32, got 60");
    /* Smaller than one micro-batch per GPU is not a multiple either. */
    assert_batch_fails("{\"train_batch_size\": 16, \"train_micro_batch_size_per_gpu\": 4}", 8,
                       "ds.json: train_batch_size: expected a multiple of "
                       "train_micro_batch_size_per_gpu x GPUs = 32, got 16");
    assert_batch_fails("{\"train_batch_size\": 60, \"gradient_accumulation_steps\": 2}", 8,
                       "ds.json: train_batch_size: expected a multiple of "
                       "gradient_accumulation_steps x GPUs = 16, got 60");
    assert_batch_fails("{\"train_batch_size\": 60}", 8,
                       "ds.json: train_batch_size: expected a multiple of the GPU count 8, got "
                       "60");
    assert_batch_fails("{\"train_batch_size\": 4}", 8,
                       "ds.json: train_batch_size: expected a multiple of the GPU count 8, got "
                       "4");
}

/* ----------------------------------------------------------------------------- shipped */

static void test_every_shipped_config_loads(void **state)
{
    (void)state;
    DIR *dir = opendir(ZEROSIM_SOURCE_DIR "/workloads/ds_configs");
    assert_non_null(dir);
    int n_loaded = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
        TrainConfig c;
        Err err = {0};
        int rc = ds_config_load(&c, name, ZEROSIM_SOURCE_DIR, &err);
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", name, err.msg);
        assert_int_equal(rc, 0);
        BatchPlan plan;
        rc = ds_config_resolve_batch(&c, 64, &plan, &err);
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", name, err.msg);
        assert_int_equal(rc, 0);
        ds_config_fini(&c);
        n_loaded++;
    }
    closedir(dir);
    assert_true(n_loaded >= 7);
}

static void test_shipped_configs_as_documented(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int stage;
        OffloadDevice optimizer, param;
        Precision precision;
    } cases[] = {
        {"zero0", 0, OFFLOAD_NONE, OFFLOAD_NONE, PRECISION_BF16},
        {"zero1", 1, OFFLOAD_NONE, OFFLOAD_NONE, PRECISION_BF16},
        {"zero2", 2, OFFLOAD_NONE, OFFLOAD_NONE, PRECISION_BF16},
        {"zero3", 3, OFFLOAD_NONE, OFFLOAD_NONE, PRECISION_BF16},
        {"zero2-offload-cpu", 2, OFFLOAD_CPU, OFFLOAD_NONE, PRECISION_FP16},
        {"zero3-offload-cpu", 3, OFFLOAD_CPU, OFFLOAD_CPU, PRECISION_BF16},
        {"zero3-infinity-nvme", 3, OFFLOAD_NVME, OFFLOAD_NVME, PRECISION_BF16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TrainConfig c;
        Err err = {0};
        assert_int_equal(ds_config_load(&c, cases[i].name, ZEROSIM_SOURCE_DIR, &err), 0);
        assert_int_equal(c.zero.stage, cases[i].stage);
        assert_int_equal(c.zero.offload_optimizer.device, cases[i].optimizer);
        assert_int_equal(c.zero.offload_param.device, cases[i].param);
        assert_int_equal(c.precision, cases[i].precision);
        assert_int_equal(c.micro_batch_per_gpu, 4);
        assert_int_equal(c.grad_accum_steps, 1);
        assert_int_equal(c.not_modelled.n_items, 0);
        ds_config_fini(&c);
    }
    TrainConfig c;
    Err err = {0};
    assert_int_equal(ds_config_load(&c, "zero3-infinity-nvme", ZEROSIM_SOURCE_DIR, &err), 0);
    assert_int_equal(c.not_modelled.n_items, 0); /* aio, nvme_path: metadata */
    assert_int_equal(c.zero.prefetch_bucket_size, 10000000);
    ds_config_fini(&c);
}

static void test_load_unknown_name(void **state)
{
    (void)state;
    TrainConfig c;
    Err err = {0};
    assert_int_equal(ds_config_load(&c, "zero4", ZEROSIM_SOURCE_DIR, &err), -1);
    assert_string_equal(err.msg, "config \"zero4\": expected a .json path or a shipped name "
                                 "(hf-zero2, hf-zero3, zero0, zero1, zero2, zero2-offload-cpu, zero3, "
                                 "zero3-infinity-nvme, zero3-offload-cpu), got neither");
    ds_config_fini(&c);
}

/* tests/inputs/real/ds_config/: configs from HF accelerate and transformers' templates and
 * tests, axolotl, LLaMA-Factory, FastChat, LLaVA, Stanford Alpaca and DeepSpeedExamples,
 * copied verbatim (tests/inputs/real/SOURCES.md). Every one is read, its "auto" values filled
 * as HF Trainer fills them (hidden 4096, --precision bf16) and its batch resolved on 8 GPUs. */
static void test_every_real_config_accepted(void **state)
{
    (void)state;
    char dir_path[512];
    snprintf(dir_path, sizeof dir_path, "%s/tests/inputs/real/ds_config", ZEROSIM_SOURCE_DIR);
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    size_t n_files = 0, n_auto = 0, n_bad = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".json") == NULL)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        TrainConfig c;
        Err err = {0};
        BatchPlan plan;
        const TrainOverrides o = {.has_precision = true, .precision = PRECISION_BF16};
        int rc = ds_config_load(&c, path, ZEROSIM_SOURCE_DIR, &err);
        n_auto += rc == 0 && c.auto_keys != 0;
        if (rc == 0)
            rc = ds_config_apply(&c, 4096, &o, &err);
        if (rc == 0)
            rc = ds_config_resolve_batch(&c, 8, &plan, &err);
        if (rc != 0) {
            fprintf(stderr, "%s\n", err.msg);
            n_bad++;
        } else {
            assert_int_equal(c.auto_keys, 0);
            assert_int_equal(c.precision, PRECISION_BF16);
            assert_true(plan.global_batch == plan.micro_batch * plan.grad_accum * 8);
        }
        ds_config_fini(&c);
        n_files++;
    }
    closedir(dir);
    assert_int_equal(n_bad, 0);
    assert_true(n_files >= 30);
    assert_true(n_auto >= 30); /* most real files are HF Trainer's, with "auto" */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage3_defaults_recorded),
        cmocka_unit_test(test_stage2_defaults),
        cmocka_unit_test(test_multi_rank_bucket_allreduce),
        cmocka_unit_test(test_no_zero_section_is_stage0),
        cmocka_unit_test(test_communication_data_type),
        cmocka_unit_test(test_explicit_values_win),
        cmocka_unit_test(test_optimizer_names),
        cmocka_unit_test(test_offload_defaults),
        cmocka_unit_test(test_alias_accepted),
        cmocka_unit_test(test_alias_and_name_both_given),
        cmocka_unit_test(test_typo_in_zero_section),
        cmocka_unit_test(test_not_modelled_keys_are_warnings),
        cmocka_unit_test(test_unknown_top_level_keys_are_warnings),
        cmocka_unit_test(test_zero_bounds_accept_zero),
        cmocka_unit_test(test_auto_resolved_as_hf),
        cmocka_unit_test(test_overrides_replace_config),
        cmocka_unit_test(test_offload_param_needs_stage3),
        cmocka_unit_test(test_nvme_optimizer_needs_stage3),
        cmocka_unit_test(test_fp16_and_bf16),
        cmocka_unit_test(test_deprecated_spellings),
        cmocka_unit_test(test_stage_out_of_range),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_batch_missing),
        cmocka_unit_test(test_batch_resolution),
        cmocka_unit_test(test_batch_errors),
        cmocka_unit_test(test_every_shipped_config_loads),
        cmocka_unit_test(test_shipped_configs_as_documented),
        cmocka_unit_test(test_load_unknown_name),
        cmocka_unit_test(test_every_real_config_accepted),
        cmocka_unit_test(test_release_defaults_by_tag),
        cmocka_unit_test(test_stage1_ignores_overlap_and_contiguous_0_4_4_to_0_12),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
