/*
 * test_fsdp.c - FSDP strategies as ZeRO configurations (schedule/fsdp.c).
 *
 * Starts from ds_configs whose ZeRO keys all differ from what FSDP sets (stage 1 or 3, no
 * overlap, no reduce-scatter, small buckets, a persistence threshold, a shard size), applies each
 * strategy and checks every field fsdp_apply rewrites, the schedule options it sets, the
 * default it records for the report header, and that it refuses offload without touching the
 * config. Also the name table round trip and the refusal of "none" and unknown names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "schedule/fsdp.h"

#include <string.h>

/* Stage 1 without overlap or reduce-scatter (FULL_SHARD and SHARD_GRAD_OP change the stage). */
static const char STAGE1_CONFIG[] = "{\"train_micro_batch_size_per_gpu\": 2,"
                                    " \"zero_optimization\": {\"stage\": 1,"
                                    "  \"overlap_comm\": false, \"reduce_scatter\": false,"
                                    "  \"reduce_bucket_size\": 1000}}";

/* Stage 3 with everything FSDP overrides set to something else (the stage-3 keys are only read
 * at stage 3). */
static const char BASE_CONFIG[] = "{\"train_micro_batch_size_per_gpu\": 2,"
                                  " \"bf16\": {\"enabled\": true},"
                                  " \"zero_optimization\": {\"stage\": 3,"
                                  "  \"overlap_comm\": false, \"reduce_scatter\": false,"
                                  "  \"reduce_bucket_size\": 1000,"
                                  "  \"stage3_prefetch_bucket_size\": 2000,"
                                  "  \"stage3_max_live_parameters\": 3000,"
                                  "  \"stage3_param_persistence_threshold\": 4000,"
                                  "  \"mics_shard_size\": 2}}";

static void load(TrainConfig *train, const char *text)
{
    Err err = {0};
    int rc = ds_config_parse(train, "base.json", text, strlen(text), &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
}

/* What every strategy sets the same way. */
static void assert_common_fsdp_zero(const ZeroConfig *z)
{
    assert_true(z->overlap_comm);
    assert_true(z->reduce_scatter);
    assert_false(z->multi_rank_bucket_allreduce);
    assert_int_equal(z->reduce_bucket_size, 1);
    assert_int_equal(z->prefetch_bucket_size, UINT64_MAX / 4);
    assert_int_equal(z->max_live_parameters, UINT64_MAX / 4);
    assert_int_equal(z->param_persistence_threshold, 0);
}

/* The last default recorded, the one fsdp_apply adds. */
static const char *last_default(const TrainConfig *train)
{
    assert_true(train->defaults_used.n_items > 0);
    return train->defaults_used.items[train->defaults_used.n_items - 1];
}

static void test_fsdp_apply_full_shard_is_zero3(void **state)
{
    (void)state;
    TrainConfig train;
    load(&train, STAGE1_CONFIG);
    assert_int_equal(train.zero.stage, 1); /* the base really differs */
    assert_false(train.zero.overlap_comm);
    assert_true(train.zero.multi_rank_bucket_allreduce);
    ScheduleOptions opts = {0};
    Err err = {0};
    assert_int_equal(fsdp_apply(FSDP_FULL_SHARD, true, 8, &train, &opts, &err), 0);
    assert_int_equal(train.zero.stage, 3);
    assert_common_fsdp_zero(&train.zero);
    assert_int_equal(train.zero.shard_size, 0); /* all GPUs */
    assert_int_equal(opts.fsdp, FSDP_FULL_SHARD);
    assert_true(opts.fsdp_backward_prefetch);
    assert_string_equal(last_default(&train),
                        "--fsdp FULL_SHARD: ZeRO-3 schedule, one unit per layer, gradients "
                        "reduced per unit in every micro-batch, backward prefetch on");
    ds_config_fini(&train);
}

static void test_fsdp_apply_shard_grad_op_runs_stage3_schedule(void **state)
{
    (void)state;
    TrainConfig train;
    load(&train, STAGE1_CONFIG);
    ScheduleOptions opts = {0};
    Err err = {0};
    assert_int_equal(fsdp_apply(FSDP_SHARD_GRAD_OP, false, 8, &train, &opts, &err), 0);
    assert_int_equal(train.zero.stage, 3); /* the schedule keeps units gathered (opts.fsdp) */
    assert_common_fsdp_zero(&train.zero);
    assert_int_equal(train.zero.shard_size, 0);
    assert_int_equal(opts.fsdp, FSDP_SHARD_GRAD_OP);
    assert_false(opts.fsdp_backward_prefetch);
    assert_string_equal(last_default(&train),
                        "--fsdp SHARD_GRAD_OP: ZeRO-3 schedule, one unit per layer, gradients "
                        "reduced per unit in every micro-batch, backward prefetch off");
    ds_config_fini(&train);
}

static void test_fsdp_apply_no_shard_is_stage0(void **state)
{
    (void)state;
    TrainConfig train;
    load(&train, BASE_CONFIG);
    assert_int_equal(train.zero.stage, 3);
    assert_int_equal(train.zero.param_persistence_threshold, 4000);
    assert_int_equal(train.zero.prefetch_bucket_size, 2000);
    ScheduleOptions opts = {0};
    Err err = {0};
    assert_int_equal(fsdp_apply(FSDP_NO_SHARD, false, 4, &train, &opts, &err), 0);
    assert_int_equal(train.zero.stage, 0);
    assert_common_fsdp_zero(&train.zero);
    assert_int_equal(train.zero.shard_size, 0);
    assert_int_equal(opts.fsdp, FSDP_NO_SHARD);
    assert_string_equal(last_default(&train),
                        "--fsdp NO_SHARD: all-reduce (DDP), one unit per layer, gradients "
                        "reduced per unit in every micro-batch, backward prefetch off");
    ds_config_fini(&train);
}

/* HYBRID_SHARD shards over one node: the shard group is gpus_per_node, whatever it is. */
static void test_fsdp_apply_hybrid_shard_group_is_node(void **state)
{
    (void)state;
    static const uint64_t per_node[] = {1, 4, 8, 16};
    for (size_t i = 0; i < sizeof per_node / sizeof per_node[0]; i++) {
        TrainConfig train;
        load(&train, BASE_CONFIG);
        assert_int_equal(train.zero.shard_size, 2); /* from mics_shard_size */
        ScheduleOptions opts = {0};
        Err err = {0};
        assert_int_equal(fsdp_apply(FSDP_HYBRID_SHARD, true, per_node[i], &train, &opts, &err),
                         0);
        assert_int_equal(train.zero.stage, 3);
        assert_common_fsdp_zero(&train.zero);
        assert_int_equal(train.zero.shard_size, per_node[i]);
        assert_int_equal(opts.fsdp, FSDP_HYBRID_SHARD);
        assert_true(opts.fsdp_backward_prefetch);
        assert_string_equal(last_default(&train),
                            "--fsdp HYBRID_SHARD: ZeRO-3 schedule, one unit per layer, gradients "
                            "reduced per unit in every micro-batch, backward prefetch on, "
                            "sharded inside each node");
        ds_config_fini(&train);
    }
}

/* Offload (optimizer or parameters) is refused, naming both devices, and nothing changes. */
static void test_fsdp_apply_refuses_offload(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 2,"
         " \"offload_optimizer\": {\"device\": \"cpu\"}}}",
         "base.json: zero_optimization.offload_*: expected no offload with --fsdp (FSDP's "
         "CPUOffload is not modelled), got optimizer \"cpu\", params \"none\""},
        {"{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 3,"
         " \"offload_optimizer\": {\"device\": \"nvme\", \"nvme_path\": \"/x\"},"
         " \"offload_param\": {\"device\": \"nvme\", \"nvme_path\": \"/x\"}}}",
         "base.json: zero_optimization.offload_*: expected no offload with --fsdp (FSDP's "
         "CPUOffload is not modelled), got optimizer \"nvme\", params \"nvme\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TrainConfig train;
        load(&train, cases[i].text);
        const ZeroConfig before = train.zero;
        const size_t n_defaults = train.defaults_used.n_items;
        ScheduleOptions opts = {0};
        Err err = {0};
        assert_int_equal(fsdp_apply(FSDP_FULL_SHARD, true, 8, &train, &opts, &err), -1);
        assert_string_equal(err.msg, cases[i].msg);
        assert_memory_equal(&train.zero, &before, sizeof before);
        assert_int_equal(train.defaults_used.n_items, n_defaults);
        assert_int_equal(opts.fsdp, FSDP_NONE);
        ds_config_fini(&train);
    }
}

/* Every strategy's name parses back to it, in any case. */
static void test_fsdp_parse_name_round_trip(void **state)
{
    (void)state;
    static const FsdpStrategy all[] = {FSDP_FULL_SHARD, FSDP_SHARD_GRAD_OP, FSDP_NO_SHARD,
                                       FSDP_HYBRID_SHARD};
    static const char *const names[] = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD",
                                        "HYBRID_SHARD"};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(fsdp_name(all[i]), names[i]);
        FsdpStrategy s = FSDP_NONE;
        assert_int_equal(fsdp_parse(fsdp_name(all[i]), &s), 0);
        assert_int_equal(s, all[i]);
    }
    FsdpStrategy s = FSDP_NONE;
    assert_int_equal(fsdp_parse("hybrid_shard", &s), 0);
    assert_int_equal(s, FSDP_HYBRID_SHARD);
    assert_int_equal(fsdp_parse("Shard_Grad_Op", &s), 0);
    assert_int_equal(s, FSDP_SHARD_GRAD_OP);
    assert_string_equal(fsdp_name(FSDP_NONE), "none");
}

/* "none" is expressed by leaving --fsdp out; unknown and near names fail and leave out alone. */
static void test_fsdp_parse_refuses_none_and_unknown(void **state)
{
    (void)state;
    static const char *const bad[] = {"none", "NONE", "", "FULL", "FULL_SHARD ", "ZERO3", NULL};
    for (size_t i = 0; bad[i] != NULL; i++) {
        FsdpStrategy s = FSDP_NO_SHARD;
        assert_int_equal(fsdp_parse(bad[i], &s), -1);
        assert_int_equal(s, FSDP_NO_SHARD);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fsdp_apply_full_shard_is_zero3),
        cmocka_unit_test(test_fsdp_apply_shard_grad_op_runs_stage3_schedule),
        cmocka_unit_test(test_fsdp_apply_no_shard_is_stage0),
        cmocka_unit_test(test_fsdp_apply_hybrid_shard_group_is_node),
        cmocka_unit_test(test_fsdp_apply_refuses_offload),
        cmocka_unit_test(test_fsdp_parse_name_round_trip),
        cmocka_unit_test(test_fsdp_parse_refuses_none_and_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
