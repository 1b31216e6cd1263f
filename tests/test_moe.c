/*
 * test_moe.c - expert-parallel placement and all-to-all volume (model/moe.c) and the model
 * states of zero_memory_ep, on a tiny Mixtral counted by hand.
 *
 * The model: hidden 64, 2 layers, 4 heads (4 KV), 8 experts of 128 (top 2), vocabulary 100,
 * untied. A layer holds attention 4 x 64^2 = 16,384, two RMSNorms 128, a router 8 x 64 = 512
 * and 8 experts of 3 x 64 x 128 = 24,576: 213,632; with the embedding and head 2 x 6,400 and
 * the final norm 64 the total is 440,128, of which the experts are 393,216 and the rest
 * 46,912; a token passes 2 of 8 experts: 145,216 active.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/comm_volume.h"
#include "model/flops.h"
#include "model/moe.h"
#include "model/zero_memory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const tiny_moe =
    "{\"model_type\": \"mixtral\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 4, \"intermediate_size\": 128, "
    "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 100, "
    "\"max_position_embeddings\": 64}";

static void load(ModelConfig *cfg, ModelParams *p)
{
    Err err = {0};
    int rc = model_config_parse(cfg, "tiny.json", tiny_moe, strlen(tiny_moe), &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    params_count(cfg, p);
}

static TrainConfig train(int stage)
{
    TrainConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.precision = PRECISION_BF16;
    strcpy(cfg.optimizer, "adam");
    cfg.optimizer_n_states = 2;
    cfg.zero.stage = stage;
    cfg.zero.reduce_bucket_size = 500000000;
    cfg.zero.prefetch_bucket_size = 50000000;
    cfg.zero.max_live_parameters = 1000000000;
    cfg.zero.sub_group_size = 1000000000;
    cfg.zero.offload_optimizer = (OffloadConfig){.device = OFFLOAD_NONE, .ratio = 1.0};
    cfg.zero.offload_param = (OffloadConfig){.device = OFFLOAD_NONE, .ratio = 1.0};
    return cfg;
}

static void test_moe_params_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load(&cfg, &p);
    assert_int_equal(p.total, 440128);
    assert_int_equal(p.experts_total, 393216);
    assert_int_equal(p.active, 145216);
    assert_int_equal(p.expert, 24576);
    assert_int_equal(p.moe_replicated, 512);
    assert_int_equal(p.n_moe_layers, 2);
    model_config_fini(&cfg);
}

/* DeepSpeed-MoE's grouping with N = 8, ep = 4: a rank holds the 46,912 non-expert parameters
 * and 393,216 / 4 = 98,304 of the experts (145,216); ZeRO partitions the first over 8 ranks
 * (ceil: 5,864) and its experts over their expert-data-parallel group of 2 (49,152). */
static void test_moe_zero_memory_ep_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load(&cfg, &p);
    ZeroMemory m;
    TrainConfig t0 = train(0), t1 = train(1), t2 = train(2), t3 = train(3);
    zero_memory_ep(&t0, &p, 2, 8, 4, &m);
    assert_int_equal(m.local_elems, 145216);
    assert_int_equal(m.gpu_model_states, 16 * 145216);
    zero_memory_ep(&t1, &p, 2, 8, 4, &m);
    assert_int_equal(m.partition_elems, 5864 + 49152);
    assert_int_equal(m.expert_partition_elems, 49152);
    assert_int_equal(m.gpu_model_states, 4 * 145216 + 12 * (5864 + 49152));
    zero_memory_ep(&t2, &p, 2, 8, 4, &m);
    assert_int_equal(m.gpu_model_states, 2 * 145216 + 14 * (5864 + 49152));
    zero_memory_ep(&t3, &p, 2, 8, 4, &m);
    assert_int_equal(m.gpu_model_states, 16 * (5864 + 49152));
    /* ZeRO-3's expert share is 16 x experts / N whatever ep is: 16 x 393,216 / 8 */
    assert_int_equal(16 * m.expert_partition_elems, 16 * 393216 / 8);
    /* ep 1 is plain ZeRO over all 8 ranks: ceil(440,128 / 8) = 55,016 */
    zero_memory_ep(&t3, &p, 2, 8, 1, &m);
    assert_int_equal(m.partition_elems, 55016);
    ZeroMemory plain;
    zero_memory(&t3, &p, 2, 8, &plain);
    assert_int_equal(plain.gpu_model_states, m.gpu_model_states);
    model_config_fini(&cfg);
}

/* One micro-batch of 16 tokens, top 2, capacity factor 1.25: 40 routed copies of 64 bf16
 * values = 5,120 bytes per all-to-all buffer; a step sends 4 all-to-alls x 2 MoE layers x 3/4
 * of it (ep 4) = 30,720 bytes; full recomputation adds 2 per layer: 46,080. */
static void test_moe_all_to_all_volume_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load(&cfg, &p);
    RunSetup s = {.seq_len = 16, .micro_batch = 1, .grad_accum = 1, .n_gpus = 8,
                  .act_bytes = 2, .ep_size = 4, .capacity_factor = 1.25,
                  .checkpoint_every = 1};
    assert_int_equal(moe_ep_size(&p, &s), 4);
    assert_true(fabs(moe_routed_tokens(&p, &s) - 40.0) < 1e-12);
    assert_true(fabs(moe_all_to_all_buffer_bytes(&cfg, &p, &s) - 5120.0) < 1e-9);
    assert_true(fabs(moe_all_to_all_step_bytes(&cfg, &p, &s) - 30720.0) < 1e-9);
    s.recompute = RECOMPUTE_FULL;
    assert_true(fabs(moe_all_to_all_step_bytes(&cfg, &p, &s) - 46080.0) < 1e-9);
    /* a dropless router whose busiest expert gets twice its share: the busiest rank receives
     * 2 x 16 x 2 copies (8,192 bytes) and every rank waits for it; an imbalance below the
     * capacity factor changes nothing (the padded buffers are larger) */
    s.recompute = RECOMPUTE_NONE;
    s.moe_imbalance = 2.0;
    assert_true(fabs(moe_load_factor(&s) - 2.0) < 1e-12);
    assert_true(fabs(moe_all_to_all_buffer_bytes(&cfg, &p, &s) - 8192.0) < 1e-9);
    s.moe_imbalance = 1.1;
    assert_true(fabs(moe_load_factor(&s) - 1.25) < 1e-12);
    s.moe_imbalance = 0.0;
    /* without expert parallelism nothing is exchanged */
    s.ep_size = 1;
    assert_true(moe_all_to_all_step_bytes(&cfg, &p, &s) == 0.0);
    assert_int_equal(moe_local_expert_params(&p, 4), 98304);
    model_config_fini(&cfg);
}

/* FLOPs follow the active parameters: the model count is 6 x active per token. */
static void test_moe_model_flops_use_active_params(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load(&cfg, &p);
    RunSetup s = {.seq_len = 16, .micro_batch = 1, .grad_accum = 1, .global_batch = 1,
                  .n_gpus = 1, .act_bytes = 2, .checkpoint_every = 1};
    StepFlops f;
    flops_step(&cfg, &p, &s, &f);
    /* 16 tokens x (6 x 145,216 + 12 x 2 layers x 64 (4 heads of 16) x 16) */
    assert_true(fabs(f.model - 16.0 * (6.0 * 145216.0 + 12.0 * 2.0 * 64.0 * 16.0)) < 1e-3);
    /* hardware forward per layer: 2 x (attention 16,384 + router 512 + 2 experts x 24,576)
     * + the attention core 4 x 16 keys x 64 */
    assert_true(fabs(f.layer_fwd_per_token -
                     (2.0 * (16384.0 + 512.0 + 2.0 * 24576.0) + 4.0 * 16.0 * 64.0)) < 1e-6);
    model_config_fini(&cfg);
}

/* ZeRO-2 bytes with experts over their expert-data-parallel group (N = 8, ep = 4): the
 * 46,912 other parameters' bf16 gradients reduce-scattered over 8 ranks (7/8 of 93,824 =
 * 82,096) and their weights all-gathered alike; the rank's 98,304 expert parameters over 2
 * ranks (1/2 of 196,608 = 98,304 each way). */
static void test_moe_comm_volume_by_hand(void **state)
{
    (void)state;
    ModelConfig cfg;
    ModelParams p;
    load(&cfg, &p);
    TrainConfig t2 = train(2);
    ZeroMemory m;
    zero_memory_ep(&t2, &p, 2, 8, 4, &m);
    CommVolume c;
    comm_volume(&t2, &p, &m, 8, 1, &c);
    assert_int_equal(c.reduce_scatter, 82096 + 98304);
    assert_int_equal(c.all_gather, 82096 + 98304);
    assert_int_equal(c.all_reduce, 0);
    model_config_fini(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moe_params_by_hand),
        cmocka_unit_test(test_moe_zero_memory_ep_by_hand),
        cmocka_unit_test(test_moe_all_to_all_volume_by_hand),
        cmocka_unit_test(test_moe_model_flops_use_active_params),
        cmocka_unit_test(test_moe_comm_volume_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
