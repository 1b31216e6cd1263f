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
    Advice a = {&m, &p, 1e9, 1024, 0, c, 5};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    assert_int_equal(c[0].zero_stage, 2); /* fastest that fits */
    assert_int_equal(c[1].zero_stage, 3);
    assert_int_equal(c[2].zero_stage, 1);
    assert_false(c[3].fits);
    assert_true(c[3].shortfall_bytes < c[4].shortfall_bytes); /* closest to fitting first */
}

/* Room to spare: on 80 GiB GPUs, stage 2 at 1000 tokens/s leaves 2 GiB free (78 GiB device
 * peak, under 10% of 80), stage 3 at 990 (within 2%) leaves 30 GiB, stage 1 at 970 (3% slower)
 * leaves 60: stage 3 is recommended and says how much it leaves. With 10 GiB free the fastest
 * stays first. */
static void test_advice_rank_prefers_room_among_near_equal(void **state)
{
    (void)state;
    ModelConfig m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "hand-made");
    Platform p = platform_80g();
    Candidate c[3] = {cand(2, true, 1000, 0), cand(3, true, 990, 0), cand(1, true, 970, 0)};
    c[0].sim_gpu_peak_bytes = 78.0 * (1ull << 30);
    c[1].sim_gpu_peak_bytes = 50.0 * (1ull << 30);
    c[2].sim_gpu_peak_bytes = 20.0 * (1ull << 30);
    Advice a = {&m, &p, 1e9, 1024, 0, c, 3};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    assert_int_equal(c[0].zero_stage, 3);
    assert_int_equal(c[1].zero_stage, 2);
    assert_int_equal(c[2].zero_stage, 1);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    advice_text(out, &a);
    fclose(out);
    assert_non_null(strstr(buf, "It leaves 30.0 GiB of the GPU's 80 GiB free"));
    free(buf);

    Candidate d[2] = {cand(2, true, 1000, 0), cand(3, true, 990, 0)};
    d[0].sim_gpu_peak_bytes = 70.0 * (1ull << 30); /* 10 GiB = 12.5% free: room enough */
    d[1].sim_gpu_peak_bytes = 50.0 * (1ull << 30);
    Advice b = {&m, &p, 1e9, 1024, 0, d, 2};
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
    Advice a = {&m, &p, 70e9, 4096, 0, c, 3};
    advise_rank(a.candidates, a.n_candidates, (double)p.gpu.hbm_bytes);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    advice_json(f, &a);
    fclose(f);
    assert_non_null(strstr(buf, "\"recommended\": {\n    \"zero_stage\": 3"));
    assert_non_null(strstr(buf, "exceed a GPU's 80 GiB, so only ZeRO-3 shards them"));
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
    Advice a = {&m, &p, 1e12, 2048, 0, c, 2};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_advice_rank_fits_then_fastest_then_closest),
        cmocka_unit_test(test_advice_rank_prefers_room_among_near_equal),
        cmocka_unit_test(test_advice_json_recommends_zero3_when_params_exceed_a_gpu),
        cmocka_unit_test(test_advice_json_without_a_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
