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

#include "fixtures.h"

#include "schedule/fsdp.h"

#include <math.h>
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

/* MixedPrecision.param_dtype: the training's bf16 changes nothing but the recorded default;
 * fp32 gathers 4 bytes per parameter, and without communication_data_type reduces in fp32
 * (FlatParamHandle._init_param_reduce_dtypes: reduce_dtype falls back to the parameter's);
 * a config's communication_data_type is FSDP's reduce_dtype and stays. */
static void test_fsdp_apply_param_dtype(void **state)
{
    (void)state;
    TrainConfig train;
    load(&train, BASE_CONFIG);
    ScheduleOptions opts = {0};
    Err err = {0};
    assert_int_equal(fsdp_apply(FSDP_FULL_SHARD, true, 8, &train, &opts, &err), 0);
    assert_int_equal(fsdp_apply_param_dtype(PRECISION_BF16, &train, &opts, &err), 0);
    assert_int_equal(opts.fsdp_param_bytes, 2);
    assert_int_equal(train.comm_grad_bytes, 0);
    assert_false(fsdp_has_autocast_casts(&opts, &train));
    assert_string_equal(last_default(&train), "FSDP MixedPrecision param_dtype bf16: parameters "
                                              "gathered and used in the training precision");
    assert_int_equal(fsdp_apply_param_dtype(PRECISION_FP32, &train, &opts, &err), 0);
    assert_int_equal(opts.fsdp_param_bytes, 4);
    assert_int_equal(train.comm_grad_bytes, 4);
    assert_true(fsdp_has_autocast_casts(&opts, &train));
    assert_string_equal(last_default(&train),
                        "FSDP MixedPrecision param_dtype fp32: fp32 units gathered (4 bytes per "
                        "parameter), cast to bf16 by autocast at each use, reduce_dtype fp32 "
                        "(the parameter dtype)");
    ds_config_fini(&train);

    static const char REDUCE_BF16[] = "{\"train_micro_batch_size_per_gpu\": 2,"
                                      " \"bf16\": {\"enabled\": true},"
                                      " \"communication_data_type\": \"bf16\","
                                      " \"zero_optimization\": {\"stage\": 3}}";
    load(&train, REDUCE_BF16);
    opts = (ScheduleOptions){0};
    assert_int_equal(fsdp_apply(FSDP_FULL_SHARD, true, 8, &train, &opts, &err), 0);
    assert_int_equal(fsdp_apply_param_dtype(PRECISION_FP32, &train, &opts, &err), 0);
    assert_int_equal(train.comm_grad_bytes, 2);
    assert_string_equal(last_default(&train),
                        "FSDP MixedPrecision param_dtype fp32: fp32 units gathered (4 bytes per "
                        "parameter), cast to bf16 by autocast at each use, reduce_dtype 16-bit "
                        "(communication_data_type)");
    ds_config_fini(&train);
}

/* A 16-bit param_dtype other than the training precision is refused, naming both. */
static void test_fsdp_apply_param_dtype_refuses_other_half(void **state)
{
    (void)state;
    TrainConfig train;
    load(&train, BASE_CONFIG);
    ScheduleOptions opts = {0};
    Err err = {0};
    assert_int_equal(fsdp_apply(FSDP_FULL_SHARD, true, 8, &train, &opts, &err), 0);
    assert_int_equal(fsdp_apply_param_dtype(PRECISION_FP16, &train, &opts, &err), -1);
    assert_string_equal(err.msg, "base.json: bf16.enabled: expected --fsdp-param-dtype fp32 or "
                                 "the config's training precision (bf16), got fp16");
    assert_int_equal(opts.fsdp_param_bytes, 0);
    ds_config_fini(&train);
}

/* The casts join the layer's passes: on a GPU whose engine unit is one second (rate 1) and a
 * layer of no other kernels, the forward, the full recomputation and the backward each take
 * the toy MPT layer's four casts of 19,660,800 elements x 6 B at 1e12 B/s = 117.9648 us
 * (above 4 launches of 5 us), the head's 1,638,400 x 6 B = 9.8304 us; selective
 * recomputation (the attention core, no weights) keeps its time. */
static void test_fsdp_cost_autocast_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg = fixture_mpt_layer();
    cfg.is_tied = true;
    ModelParams p;
    params_count(&cfg, &p);
    StepCost cost = {.gpu_flops_per_s = 1.0,
                     .gpu = fixture_toy_gpu(),
                     .layer_recompute = 7.0};
    RunSetup s = {.seq_len = 1280, .micro_batch = 1, .act_bytes = 2,
                  .recompute = RECOMPUTE_SELECTIVE};
    fsdp_cost_autocast(&p, &s, &cost);
    assert_true(fabs(cost.layer_fwd - 117.9648e-6) < 1e-15);
    assert_true(fabs(cost.layer_bwd - 117.9648e-6) < 1e-15);
    assert_true(fabs(cost.head_fwd - 9.8304e-6) < 1e-15);
    assert_true(fabs(cost.head_bwd - 9.8304e-6) < 1e-15);
    assert_true(cost.layer_recompute == 7.0);
    s.recompute = RECOMPUTE_FULL;
    fsdp_cost_autocast(&p, &s, &cost);
    assert_true(fabs(cost.layer_recompute - 117.9648e-6) < 1e-15);
}

/* The schedule of a 2-layer GPT-2 (h 64, 4 heads, f 256, V 100, 32 positions, tied) under
 * FULL_SHARD on 8 GPUs, bf16 against fp32 parameters: every all-gather moves twice the bytes,
 * the reduce-scatters too (reduce_dtype follows the fp32 parameters), and the activations
 * each layer keeps grow by its saved 16-bit weight casts: c_attn 64 x 192 + 192, c_proj
 * 64 x 64 + 64, c_fc 64 x 256 + 256, mlp c_proj 256 x 64 + 64 = 49,728 elements x 2 B per
 * layer, and the tied 100 x 64 logits weight's 6,400 x 2 B with the last layer:
 * 2 x 99,456 + 12,800 = 211,712 B more on each of the 8 ranks. */
static void test_fsdp_param_dtype_schedule_bytes(void **state)
{
    (void)state;
    static const char MODEL[] = "{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_layer\": 2, "
                                "\"n_head\": 4, \"vocab_size\": 100, \"n_positions\": 32}";
    static const char DS[] = "{\"train_micro_batch_size_per_gpu\": 1,"
                             " \"bf16\": {\"enabled\": true},"
                             " \"zero_optimization\": {\"stage\": 3}}";
    double gather[2] = {0}, reduce[2] = {0}, acts[2] = {0};
    for (int k = 0; k < 2; k++) {
        ModelConfig model;
        TrainConfig train;
        Platform p;
        Err err = {0};
        assert_int_equal(model_config_parse(&model, "tiny.json", MODEL, strlen(MODEL), &err), 0);
        load(&train, DS);
        assert_int_equal(platform_load(&p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
        assert_int_equal(platform_resize(&p, 8, 0, &err), 0);
        ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1,
                                .has_activations = true};
        assert_int_equal(fsdp_apply(FSDP_FULL_SHARD, true, 8, &train, &opts, &err), 0);
        assert_int_equal(
            fsdp_apply_param_dtype(k ? PRECISION_FP32 : PRECISION_BF16, &train, &opts, &err), 0);
        RunSetup setup = {.seq_len = 32, .micro_batch = 1, .grad_accum = 1, .global_batch = 8,
                          .n_gpus = 8, .recompute = RECOMPUTE_NONE, .is_flash_attention = true,
                          .act_bytes = 2};
        Graph *g = zero_schedule_build(&model, &train, &p, &setup, &opts, &err);
        if (g == NULL)
            fail_msg("%s", err.msg);
        const Collective *c = graph_collectives(g);
        for (uint32_t i = 0; i < graph_n_collectives(g); i++) {
            gather[k] += c[i].kind == COLL_ALL_GATHER ? c[i].bytes : 0.0;
            reduce[k] += c[i].kind == COLL_REDUCE_SCATTER ? c[i].bytes : 0.0;
        }
        for (uint32_t i = 0; i < graph_n_buffers(g); i++) {
            MemSpace space;
            MemCategory category;
            double bytes = graph_buffer_bytes(g, i, &space, &category);
            acts[k] += space == MEM_GPU && category == MEM_ACTIVATIONS ? bytes : 0.0;
        }
        graph_destroy(g);
        ds_config_fini(&train);
        model_config_fini(&model);
    }
    assert_true(gather[0] > 0 && reduce[0] > 0);
    assert_true(fabs(gather[1] - 2 * gather[0]) < 1e-6);
    assert_true(fabs(reduce[1] - 2 * reduce[0]) < 1e-6);
    assert_true(fabs(acts[1] - acts[0] - 8 * 211712.0) < 1e-6);
}

/* FSDP2's copies on the toy GPU (1e12 B/s, 5 us a launch), the one-layer MPT: a layer of
 * 3 h^2 + h^2 + 2 h f = 19,660,800 bf16 elements is read and written once by the copy-out,
 * 2 x 19,660,800 x 2 B / 1e12 = 78.6432 us, added to forward and (FULL_SHARD regathers) to
 * backward, none to a recomputation; the tied head's 1280 x 1280 embedding plus the final
 * norm's 2 x 1280 the same way. FSDP2's input of a reduce-scatter of 1e9 B in fp32 reads
 * 2.5e8 bf16 gradients and writes them in fp32: 1.5e9 B / 1e12 = 1.5 ms, above its launch. */
static void test_fsdp2_copies_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg = fixture_mpt_layer();
    cfg.is_tied = true;
    ModelParams p;
    params_count(&cfg, &p);
    assert_int_equal(p.per_layer, 19660800);
    StepCost cost = {.gpu_flops_per_s = 1.0, .gpu = fixture_toy_gpu(), .layer_recompute = 7.0};
    fsdp2_cost_copy_out(&p, 2, true, &cost);
    assert_true(fabs(cost.layer_fwd - 78.6432e-6) < 1e-12);
    assert_true(fabs(cost.layer_bwd - 78.6432e-6) < 1e-12);
    const double head = 2.0 * (1280.0 * 1280 + (double)p.final_norm) * 2 / 1e12;
    assert_true(fabs(cost.head_fwd - head) < 1e-15 && fabs(cost.head_bwd - head) < 1e-15);
    assert_true(cost.layer_recompute == 7.0);
    StepCost sgo = {.gpu_flops_per_s = 1.0, .gpu = fixture_toy_gpu()};
    fsdp2_cost_copy_out(&p, 2, false, &sgo); /* SHARD_GRAD_OP keeps the unit for backward */
    assert_true(sgo.layer_bwd == 0.0 && sgo.head_bwd == 0.0);
    KernelGpu g = fixture_toy_gpu();
    assert_true(fabs(fsdp_reduce_prep_s(&g, true, 1e9, 2, 4) - 1.5e-3) < 1e-15);
    assert_true(fsdp_reduce_prep_s(&g, true, 0, 2, 4) == 0.0);
    /* FSDP1: the cast (1.5e9 B) and the in-place predivide, 2.5e8 x 2 x 4 = 2e9 B: 3.5 ms;
     * reducing in the gradients' own bf16, the predivide alone, 1e9 B of 5e8 elements x 2 x 2
     * = 2e9 B: 2 ms */
    assert_true(fabs(fsdp_reduce_prep_s(&g, false, 1e9, 2, 4) - 3.5e-3) < 1e-15);
    assert_true(fabs(fsdp_reduce_prep_s(&g, false, 1e9, 2, 2) - 2e-3) < 1e-15);
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
        cmocka_unit_test(test_fsdp_apply_param_dtype),
        cmocka_unit_test(test_fsdp_apply_param_dtype_refuses_other_half),
        cmocka_unit_test(test_fsdp_cost_autocast_by_hand),
        cmocka_unit_test(test_fsdp_param_dtype_schedule_bytes),
        cmocka_unit_test(test_fsdp2_copies_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
