/*
 * test_advice.c - ranking and explaining candidates (report/advice.c) on hand-made cases.
 *
 * A configuration that fits always beats one that does not; among those that fit the
 * fastest wins; among those that do not, the closest to fitting comes first. The explanation
 * follows the selection guide: ZeRO-3 is justified by parameters that exceed a GPU.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/advice.h"
#include "study/advise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Platform platform_80g(void)
{
    Platform p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "test");
    p.n_nodes = 1;
    p.gpus_per_node = 8;
    p.gpu.hbm_bytes = 80ull << 30;
    return p;
}

static Candidate cand(int stage, bool fits, double tokens_per_s, double shortfall)
{
    Candidate c;
    memset(&c, 0, sizeof c);
    c.zero_stage = stage;
    c.micro_batch = 1;
    c.grad_accum = 1;
    c.fits = fits;
    c.is_simulated = fits;
    c.tokens_per_s = tokens_per_s;
    c.shortfall_bytes = shortfall;
    snprintf(c.runs_out, sizeof c.runs_out, "%s", fits ? "" : "gpu");
    snprintf(c.bottleneck, sizeof c.bottleneck, "compute");
    c.bottleneck_share = 0.9;
    return c;
}

static void test_advice_rank_fits_then_fastest_then_closest(void **state)
{
    (void)state;
    ModelConfig m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "hand-made");
    Platform p = platform_80g();
    Candidate c[5] = {cand(0, false, 0, 9e10), cand(1, true, 100, 0), cand(2, true, 300, 0),
                      cand(3, true, 200, 0), cand(0, false, 0, 1e9)};
    Advice a = {&m, &p, 1e9, 1024, 0, c, 5, 0};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    assert_int_equal(c[0].zero_stage, 2); /* fastest that fits */
    assert_int_equal(c[1].zero_stage, 3);
    assert_int_equal(c[2].zero_stage, 1);
    assert_false(c[3].fits);
    assert_true(c[3].shortfall_bytes < c[4].shortfall_bytes); /* closest to fitting first */
}

/* Room to spare: on 80 GiB GPUs, stage 2 at 1000 tokens/s leaves 2 GiB free (78 GiB device
 * peak, under 10% of 80), stage 3 at 990 (within 3%) leaves 30 GiB, stage 1 at 960 (4% slower)
 * leaves 60: stage 3 is recommended, for its room, and says how much it leaves. With 10 GiB
 * free the fastest stays first (stage 3 is not simpler than stage 2). */
static void test_advice_rank_prefers_room_among_near_equal(void **state)
{
    (void)state;
    ModelConfig m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "hand-made");
    Platform p = platform_80g();
    Candidate c[3] = {cand(2, true, 1000, 0), cand(3, true, 990, 0), cand(1, true, 960, 0)};
    c[0].sim_gpu_peak_bytes = 78.0 * (1ull << 30);
    c[1].sim_gpu_peak_bytes = 50.0 * (1ull << 30);
    c[2].sim_gpu_peak_bytes = 20.0 * (1ull << 30);
    Advice a = {&m, &p, 1e9, 1024, 0, c, 3, 0};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    assert_int_equal(c[0].zero_stage, 3);
    assert_int_equal(c[1].zero_stage, 2);
    assert_int_equal(c[2].zero_stage, 1);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    advice_text(out, &a);
    fclose(out);
    assert_non_null(strstr(buf, "It leaves 30.0 GiB of the GPU's 80.0 GiB free"));
    assert_int_equal(c[0].chosen_for, ADVICE_ROOM);
    /* 1000 / 990 - 1 = 1.0% faster, 2 GiB free */
    assert_non_null(strstr(buf, "The fastest, ZeRO-2, is only 1.0% faster and leaves 2.0 GiB free"));
    free(buf);

    Candidate d[2] = {cand(2, true, 1000, 0), cand(3, true, 990, 0)};
    d[0].sim_gpu_peak_bytes = 70.0 * (1ull << 30); /* 10 GiB = 12.5% free: room enough */
    d[1].sim_gpu_peak_bytes = 50.0 * (1ull << 30);
    Advice b = {&m, &p, 1e9, 1024, 0, d, 2, 0};
    advise_rank(b.candidates, b.n_candidates, (double)p.gpu.hbm_bytes);
    assert_int_equal(d[0].zero_stage, 2);
}

/* A 70B model on 80 GiB GPUs: only ZeRO-3 fits, and the advice says the parameters are why. */
static void test_advice_json_recommends_zero3_when_params_exceed_a_gpu(void **state)
{
    (void)state;
    ModelConfig m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "hand-made-70b");
    Platform p = platform_80g();
    Candidate c[3] = {cand(1, false, 0, 5e11), cand(2, false, 0, 1e11), cand(3, true, 50, 0)};
    Advice a = {&m, &p, 70e9, 4096, 0, c, 3, 0};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    advice_json(f, &a);
    fclose(f);
    assert_non_null(strstr(buf, "\"recommended\": {\n    \"zero_stage\": 3"));
    assert_non_null(strstr(buf, "exceed a GPU's 80.0 GiB, so only ZeRO-3 shards them"));
    free(buf);
}

/* Nothing fits: no recommendation, and the explanation says by how much the closest misses. */
static void test_advice_json_without_a_fit(void **state)
{
    (void)state;
    ModelConfig m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "too-big");
    Platform p = platform_80g();
    Candidate c[2] = {cand(3, false, 0, 2.0 * (1ull << 30)), cand(0, false, 0, 1e12)};
    Advice a = {&m, &p, 1e12, 2048, 0, c, 2, 0};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    advice_json(f, &a);
    fclose(f);
    assert_non_null(strstr(buf, "\"recommended\": null"));
    assert_non_null(strstr(buf, "runs out of gpu memory by 2.0 GiB"));
    free(buf);
}

/* Within 3% the simplest wins: ZeRO-3 at 1000 tokens/s, ZeRO-1 at 980 (2% slower), DDP at
 * 960 (4% slower, outside the band), all with room: ZeRO-1 is recommended for being simpler,
 * and the paragraph says the fastest is 1000/980 - 1 = 2.0% faster. An offload candidate
 * within the band loses to plain ZeRO-3, and full checkpointing to none. */
static void test_advice_rank_prefers_simpler_among_near_equal(void **state)
{
    (void)state;
    ModelConfig m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "hand-made");
    Platform p = platform_80g();
    Candidate c[3] = {cand(3, true, 1000, 0), cand(0, true, 960, 0), cand(1, true, 980, 0)};
    Advice a = {&m, &p, 1e9, 1024, 0, c, 3, 64};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    assert_int_equal(c[0].zero_stage, 1);
    assert_int_equal(c[0].chosen_for, ADVICE_SIMPLER);
    assert_int_equal(c[1].zero_stage, 3);
    assert_int_equal(c[2].zero_stage, 0);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    advice_text(out, &a);
    fclose(out);
    assert_non_null(strstr(buf, "The fastest, ZeRO-3 (no checkpointing), is only 2.0% faster"));
    assert_non_null(strstr(buf, "every candidate runs a global batch of 64 sequences"));
    free(buf);

    Candidate d[2] = {cand(3, true, 1000, 0), cand(3, true, 990, 0)};
    d[0].offload_optimizer = OFFLOAD_CPU;
    advise_rank(d, 2, (double)p.gpu.hbm_bytes);
    assert_int_equal(d[0].offload_optimizer, OFFLOAD_NONE);

    Candidate e[2] = {cand(2, true, 1000, 0), cand(2, true, 995, 0)};
    e[0].is_checkpointed = true;
    e[0].checkpoint_every = 4;
    advise_rank(e, 2, (double)p.gpu.hbm_bytes);
    assert_false(e[0].is_checkpointed);
}

/* The guide's order: DDP < ZeRO-1 < -2 < -3 < ZeRO-2 + CPU < ZeRO-3 + CPU < + params < NVMe;
 * within one, none < full < every:N, and the default prefetch window before a widened one. */
static void test_advice_complexity_follows_the_guide(void **state)
{
    (void)state;
    Candidate c[8];
    for (int i = 0; i < 8; i++)
        c[i] = cand(i < 4 ? i : i == 4 ? 2 : 3, true, 1, 0);
    c[4].offload_optimizer = OFFLOAD_CPU;
    c[5].offload_optimizer = OFFLOAD_CPU;
    c[6].offload_optimizer = OFFLOAD_CPU;
    c[6].offload_param = OFFLOAD_CPU;
    c[7].offload_optimizer = OFFLOAD_NVME;
    c[7].offload_param = OFFLOAD_NVME;
    for (int i = 1; i < 8; i++)
        assert_true(advice_complexity(&c[i - 1]) < advice_complexity(&c[i]));
    Candidate none = cand(3, true, 1, 0), full = none, every = none, wide = none;
    full.is_checkpointed = true;
    full.checkpoint_every = 1;
    every.is_checkpointed = true;
    every.checkpoint_every = 4;
    wide.max_live_parameters = 2000000;
    wide.prefetch_bucket_size = 1000000;
    assert_true(advice_complexity(&none) < advice_complexity(&wide));
    assert_true(advice_complexity(&wide) < advice_complexity(&full));
    assert_true(advice_complexity(&full) < advice_complexity(&every));
    assert_true(advice_complexity(&every) < advice_complexity(&c[4]));
    char buf[64];
    assert_string_equal(advice_checkpointing(&every, buf, sizeof buf), "every:4");
    assert_string_equal(advice_name(&wide, buf, sizeof buf), "ZeRO-3 + prefetch");
}

/* Why the simpler stages do not fit: DDP's model states alone pass the GPU, ZeRO-2's states
 * fit but not its activations; the table says which, and the paragraph says it in words. */
static void test_advice_names_the_reason_a_stage_does_not_fit(void **state)
{
    (void)state;
    ModelConfig m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "hand-made");
    Platform p = platform_80g();
    const double gb = (double)(1ull << 30);
    Candidate c[3] = {cand(0, false, 0, 100 * gb), cand(2, false, 0, 6 * gb),
                      cand(3, true, 500, 0)};
    snprintf(c[0].limit, sizeof c[0].limit, "states");
    c[0].gpu_states_bytes = 180 * gb;
    snprintf(c[1].limit, sizeof c[1].limit, "activations");
    c[1].gpu_states_bytes = 40 * gb;
    Advice a = {&m, &p, 10e9, 2048, 0, c, 3, 8};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    advice_text(out, &a);
    fclose(out);
    assert_non_null(strstr(buf, "no: gpu +100.0 GiB (states)"));
    assert_non_null(strstr(buf, "no: gpu +6.0 GiB (activations)"));
    assert_non_null(strstr(buf, "Simpler configurations do not fit: DDP: its model states "
                                "alone need 180.0 GiB of a GPU's 80.0 GiB; ZeRO-2: its model "
                                "states fit (40.0 GiB of 80.0 GiB) but not the activations of "
                                "micro-batch 1 with no checkpointing (6.0 GiB short)."));
    free(buf);
}

/* The search on GPT-2 1.5B on 2 A100s, sequence 1024: every candidate runs the same global
 * batch (2 GPUs x the largest micro-batch any fits, 64 with full checkpointing = 128
 * sequences), every:N candidates exist and sit above their no-checkpointing sibling's
 * micro-batch with N >= 2, each
 * simulated candidate ran no faster than its compute-bound step, and the first is within 3%
 * of the fastest. */
static void test_advise_search_compares_at_one_global_batch(void **state)
{
    (void)state;
    Err err = {0};
    ModelConfig m = {0};
    Platform p;
    assert_int_equal(model_config_load(&m, "gpt2-1.5b", ZEROSIM_SOURCE_DIR, &err), 0);
    assert_int_equal(platform_load(&p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    assert_int_equal(platform_resize(&p, 2, 0, &err), 0);
    AdviseRequest req = {&m, &p, 1024, 0, 64, "bf16", NULL, NULL};
    Candidate *c = NULL;
    size_t n = 0;
    uint64_t batch = 0;
    assert_int_equal(advise_search(&req, &c, &n, &batch, &err), 0);
    assert_int_equal(batch, 128);
    double fastest = 0.0;
    size_t n_every = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(c[i].micro_batch * c[i].grad_accum * 2, batch);
        if (c[i].is_checkpointed && c[i].checkpoint_every > 1) {
            assert_true(c[i].fits);
            n_every++;
            for (size_t j = 0; j < n; j++)
                if (c[j].zero_stage == c[i].zero_stage && !c[j].is_checkpointed &&
                    c[j].offload_optimizer == c[i].offload_optimizer &&
                    c[j].offload_param == c[i].offload_param && c[j].fits)
                    assert_true(c[j].micro_batch < c[i].micro_batch);
        }
        if (c[i].is_simulated) {
            assert_true(c[i].step_s >= c[i].bound_step_s);
            if (c[i].tokens_per_s > fastest)
                fastest = c[i].tokens_per_s;
        }
    }
    assert_true(n_every > 0);
    assert_true(c[0].is_simulated);
    assert_true(c[0].tokens_per_s >= fastest * (1.0 - ADVICE_NEAR_EQUAL_FRACTION));
    free(c);
    model_config_fini(&m);
}

/* Six micro-batches from one and two: the second added 0.5 s, 1e9 bytes and 0.4 s of
 * compute, so six take 1.5 + 4 x 0.5 = 3.5 s, 3e9 + 4e9 = 7e9 bytes, 1.2 + 1.6 = 2.8 s of
 * compute; tokens/s: 3 times the work of two (200 tokens/s at 1.5 s) in 3.5 s = 257.14; the
 * peak is the larger. Measured against direct simulation in docs/MODEL.md (equal to 1e-6). */
static void test_advise_extrapolate_adds_the_middle_micro_batches(void **state)
{
    (void)state;
    AdviseSample one = {.step_s = 1.0, .tokens_per_s = 150, .tflops_per_gpu = 100,
                        .gpu_peak = 7e10, .bytes = 2e9};
    AdviseSample two = {.step_s = 1.5, .tokens_per_s = 200, .tflops_per_gpu = 120,
                        .gpu_peak = 7.1e10, .bytes = 3e9};
    one.time_s[BD_COMPUTE] = 0.8;
    two.time_s[BD_COMPUTE] = 1.2;
    one.time_s[BD_OPTIMIZER] = 0.2;
    two.time_s[BD_OPTIMIZER] = 0.2;
    AdviseSample six;
    advise_extrapolate(&one, &two, 6, &six);
    assert_float_equal(six.step_s, 3.5, 1e-12);
    assert_float_equal(six.bytes, 7e9, 1e-3);
    assert_float_equal(six.time_s[BD_COMPUTE], 2.8, 1e-12);
    assert_float_equal(six.time_s[BD_OPTIMIZER], 0.2, 1e-12); /* once per step */
    assert_float_equal(six.tokens_per_s, 200.0 * 3.0 * 1.5 / 3.5, 1e-9);
    assert_float_equal(six.tflops_per_gpu, 120.0 * 3.0 * 1.5 / 3.5, 1e-9);
    assert_float_equal(six.gpu_peak, 7.1e10, 1e-3);
    advise_extrapolate(&one, &two, 6, &two); /* in place */
    assert_float_equal(two.step_s, 3.5, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_advice_rank_fits_then_fastest_then_closest),
        cmocka_unit_test(test_advice_rank_prefers_room_among_near_equal),
        cmocka_unit_test(test_advice_json_recommends_zero3_when_params_exceed_a_gpu),
        cmocka_unit_test(test_advice_json_without_a_fit),
        cmocka_unit_test(test_advice_rank_prefers_simpler_among_near_equal),
        cmocka_unit_test(test_advice_complexity_follows_the_guide),
        cmocka_unit_test(test_advice_names_the_reason_a_stage_does_not_fit),
        cmocka_unit_test(test_advise_search_compares_at_one_global_batch),
        cmocka_unit_test(test_advise_extrapolate_adds_the_middle_micro_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
