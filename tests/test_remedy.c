/*
 * test_remedy.c - the fitting hint (model/remedy.c) and the configs it re-reads
 * (inputs/ds_config.c, ds_config_parse_shape).
 *
 * Llama-2-7B with ZeRO-2 on 8 A100-80GB at micro-batch 16 needs 162.5 GiB of activations
 * (Korthikanti et al.'s per-layer bytes scale with the micro-batch), so the hint is the
 * largest micro-batch whose activations fit beside 23.5 GiB of model states: 4 (40.6 GiB),
 * not 8 (81.3 GiB, over the 76 usable on its own), with accumulation 4 keeping the global
 * batch of 128. Llama-3-8B under DDP holds 16 Psi = 119.7 GiB of model states: no
 * micro-batch or recomputation alone fits; ZeRO-1 (4 Psi + 12 Psi / 8 = 41.1 GiB) keeps
 * DDP's speed tier and, with less recomputation or a smaller micro-batch, wins over ZeRO-3
 * although ZeRO-3 with the same change fits too. GPT-1T on one
 * 32 GB V100 fits nowhere. Each chosen variant is re-estimated here to check that it fits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/units.h"
#include "model/remedy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Case {
    ModelConfig model;
    TrainConfig train;
    Platform platform;
    EstimateOptions opts;
    Estimate est;
    TrainOverrides overrides;
} Case;

/* The test's RemedyConfigFn: the shipped config re-read in the variant's shape, with the
 * variant's batch split, as the CLI does. */
static int reload(void *ctx, const RemedyVariant *v, TrainConfig *out, Err *err)
{
    const Case *c = ctx;
    if (ds_config_load_shape(out, c->train.file, ZEROSIM_SOURCE_DIR, &v->shape, err))
        return -1;
    TrainOverrides o = c->overrides;
    o.micro_batch = v->micro_batch;
    o.grad_accum = v->grad_accum;
    o.global_batch = c->est.setup.global_batch;
    return ds_config_apply(out, c->model.hidden, &o, err);
}

static void case_build(Case *c, const char *model, const char *config, const char *platform,
                       uint64_t gpus, uint64_t micro_batch)
{
    memset(c, 0, sizeof *c);
    Err err = {0};
    c->overrides.micro_batch = micro_batch;
    c->opts = (EstimateOptions){.seq_len = 2048,
                                .recompute = RECOMPUTE_NONE,
                                .is_flash_attention = true,
                                .headroom_fraction = ESTIMATE_DEFAULT_HEADROOM_FRACTION};
    if (model_config_load(&c->model, model, ZEROSIM_SOURCE_DIR, &err) ||
        ds_config_load(&c->train, config, ZEROSIM_SOURCE_DIR, &err) ||
        ds_config_apply(&c->train, c->model.hidden, &c->overrides, &err) ||
        platform_load(&c->platform, platform, ZEROSIM_SOURCE_DIR, &err) ||
        platform_resize(&c->platform, gpus, 0, &err) ||
        estimate_build(&c->model, &c->train, &c->platform, &c->opts, &c->est, &err))
        fail_msg("%s", err.msg);
}

static void case_fini(Case *c)
{
    model_config_fini(&c->model);
    ds_config_fini(&c->train);
}

/* Re-estimates variant v of c; returns whether it fits. */
static bool variant_fits(Case *c, const RemedyVariant *v, Estimate *out)
{
    Err err = {0};
    TrainConfig t;
    if (reload(c, v, &t, &err))
        fail_msg("%s", err.msg);
    EstimateOptions o = c->opts;
    o.recompute = v->recompute;
    o.checkpoint_every = v->checkpoint_every;
    if (estimate_build(&c->model, &t, &c->platform, &o, out, &err))
        fail_msg("%s", err.msg);
    ds_config_fini(&t);
    return out->fits;
}

static void test_remedy_shape_tier_follows_the_guide(void **state)
{
    (void)state;
    /* stage 0 > 1 > 2 > 2 + offload > 3 > 3 + offloads; 1 and 2 at DDP's speed */
    const DsShape s0 = {0, OFFLOAD_NONE, OFFLOAD_NONE}, s2 = {2, OFFLOAD_NONE, OFFLOAD_NONE},
                  s2o = {2, OFFLOAD_CPU, OFFLOAD_NONE}, s3 = {3, OFFLOAD_NONE, OFFLOAD_NONE},
                  s3o = {3, OFFLOAD_CPU, OFFLOAD_NONE}, s3oo = {3, OFFLOAD_CPU, OFFLOAD_CPU},
                  s3n = {3, OFFLOAD_NVME, OFFLOAD_NVME};
    assert_int_equal(remedy_shape_tier(&s0), 0);
    assert_int_equal(remedy_shape_tier(&s2), 0);
    assert_int_equal(remedy_shape_tier(&s2o), 1);
    assert_int_equal(remedy_shape_tier(&s3), 2);
    assert_int_equal(remedy_shape_tier(&s3o), 3);
    assert_int_equal(remedy_shape_tier(&s3oo), 4);
    assert_int_equal(remedy_shape_tier(&s3n), 5);
}

static void test_remedy_find_smaller_micro_batch(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "llama-2-7b", "zero2", "dgx-a100-80g", 8, 16);
    assert_false(c.est.fits_gpu);
    Remedy r;
    Err err = {0};
    assert_int_equal(remedy_find(&c.model, &c.train, &c.platform, &c.opts, &c.est, 0, reload,
                                 &c, &r, &err),
                     0);
    assert_true(r.is_found);
    assert_true(r.changes_batch);
    assert_false(r.changes_shape);
    assert_false(r.changes_recompute);
    assert_int_equal(r.variant.micro_batch, 4);
    assert_int_equal(r.variant.grad_accum, 4); /* 4 x 4 x 8 = the global batch of 128 */
    Estimate e4, e8;
    assert_true(variant_fits(&c, &r.variant, &e4));
    RemedyVariant v8 = r.variant;
    v8.micro_batch = 8;
    v8.grad_accum = 2;
    assert_false(variant_fits(&c, &v8, &e8));
    /* activations scale with the micro-batch: 16 = 4 x 4 */
    assert_int_equal(c.est.gpu_activations, 4 * e4.gpu_activations);
    assert_int_equal(r.gpu_free_bytes, e4.gpu_capacity - e4.gpu_headroom - e4.gpu_device_peak);
    assert_true(r.n_estimated > 1);
    char buf[128];
    assert_string_equal(remedy_describe(&r, buf, sizeof buf), "--micro-batch 4 --grad-accum 4");
    case_fini(&c);
}

static void test_remedy_find_prefers_stage_1_over_stage_3(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "llama-3-8b", "zero0", "dgx-a100-80g", 8, 8);
    assert_false(c.est.fits_gpu);
    Remedy r;
    Err err = {0};
    assert_int_equal(remedy_find(&c.model, &c.train, &c.platform, &c.opts, &c.est, 0, reload,
                                 &c, &r, &err),
                     0);
    assert_true(r.is_found);
    assert_int_equal(r.variant.shape.stage, 1);
    assert_int_equal(r.variant.shape.optimizer, OFFLOAD_NONE);
    Estimate e;
    assert_true(variant_fits(&c, &r.variant, &e));
    /* 4 Psi + 12 Psi / 8 bytes of model states (ZeRO Table 1): 41.1 GiB */
    const double psi = (double)c.est.params.total;
    assert_true(fabs((double)e.mem.gpu_model_states - (4 * psi + 12 * psi / 8)) < 16.0);
    /* ZeRO-1 alone does not fit: the hint adds the least recomputation or batch change */
    RemedyVariant only_stage = {.shape = r.variant.shape, .micro_batch = 8, .grad_accum = 1};
    Estimate e2;
    assert_false(variant_fits(&c, &only_stage, &e2));
    assert_true(r.changes_recompute || r.changes_batch);
    /* ZeRO-3 with the same batch and recomputation fits too (it saves more), but ranks
     * after ZeRO-1 in the guide's speed order */
    RemedyVariant stage3 = r.variant;
    stage3.shape.stage = 3;
    Estimate e3;
    assert_true(variant_fits(&c, &stage3, &e3));
    case_fini(&c);
}

static void test_remedy_find_nothing_fits(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "gpt-1t", "zero0", "h200-single", 1, 1);
    Remedy r;
    Err err = {0};
    assert_int_equal(remedy_find(&c.model, &c.train, &c.platform, &c.opts, &c.est, 0, reload,
                                 &c, &r, &err),
                     0);
    assert_false(r.is_found);
    assert_true(r.n_estimated > 0);
    case_fini(&c);
}

static void test_remedy_find_without_configs_varies_batch_and_recompute(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "llama-3-8b", "zero0", "dgx-a100-80g", 8, 8);
    Remedy r;
    Err err = {0};
    /* DDP's 16 Psi alone overflows: without other configs nothing fits */
    assert_int_equal(remedy_find(&c.model, &c.train, &c.platform, &c.opts, &c.est, 0, NULL, &c,
                                 &r, &err),
                     0);
    assert_false(r.is_found);
    /* 8 micro-batches (8, 4, 2, 1) x (none, selective, every:32 ... every:1) */
    assert_int_equal(r.n_estimated, 4 * (2 + 32));
    case_fini(&c);
}

static void test_remedy_find_extra_bytes_make_it_stricter(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "llama-2-7b", "zero2", "dgx-a100-80g", 8, 16);
    Remedy r;
    Err err = {0};
    /* 20 GiB more to leave free: micro-batch 4 (9.5 GiB spare) no longer fits */
    assert_int_equal(remedy_find(&c.model, &c.train, &c.platform, &c.opts, &c.est,
                                 20 * (uint64_t)UNITS_GIB, reload, &c, &r, &err),
                     0);
    assert_true(r.is_found);
    assert_true(r.variant.micro_batch < 4 || r.changes_recompute || r.changes_shape);
    case_fini(&c);
}

static void test_ds_config_parse_shape_applies_the_new_stage_defaults(void **state)
{
    (void)state;
    const char *text = "{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": "
                       "{\"stage\": 2, \"cpu_offload\": true}}";
    TrainConfig t;
    Err err = {0};
    const DsShape s3 = {3, OFFLOAD_NONE, OFFLOAD_NONE};
    assert_int_equal(ds_config_parse_shape(&t, "x.json", text, strlen(text), &s3, &err), 0);
    assert_int_equal(t.zero.stage, 3);
    assert_true(t.zero.overlap_comm); /* DeepSpeed's stage-3 default */
    assert_int_equal(t.zero.prefetch_bucket_size, 50000000);
    assert_int_equal(t.zero.param_persistence_threshold, 100000);
    assert_int_equal(t.zero.offload_optimizer.device, OFFLOAD_NONE); /* the switch dropped */
    ds_config_fini(&t);

    const DsShape nvme = {3, OFFLOAD_NVME, OFFLOAD_NVME};
    assert_int_equal(ds_config_parse_shape(&t, "x.json", text, strlen(text), &nvme, &err), 0);
    assert_int_equal(t.zero.offload_optimizer.device, OFFLOAD_NVME);
    assert_int_equal(t.zero.offload_optimizer.buffer_count, 4); /* DeepSpeed's default */
    assert_int_equal(t.zero.offload_param.device, OFFLOAD_NVME);
    assert_int_equal(t.zero.offload_param.buffer_count, 5);
    ds_config_fini(&t);

    /* NULL: as written */
    assert_int_equal(ds_config_parse_shape(&t, "x.json", text, strlen(text), NULL, &err), 0);
    assert_int_equal(t.zero.stage, 2);
    assert_false(t.zero.overlap_comm);
    assert_int_equal(t.zero.offload_optimizer.device, OFFLOAD_CPU);
    ds_config_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remedy_shape_tier_follows_the_guide),
        cmocka_unit_test(test_remedy_find_smaller_micro_batch),
        cmocka_unit_test(test_remedy_find_prefers_stage_1_over_stage_3),
        cmocka_unit_test(test_remedy_find_nothing_fits),
        cmocka_unit_test(test_remedy_find_without_configs_varies_batch_and_recompute),
        cmocka_unit_test(test_remedy_find_extra_bytes_make_it_stricter),
        cmocka_unit_test(test_ds_config_parse_shape_applies_the_new_stage_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
