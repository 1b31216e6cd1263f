/*
 * test_zero_memory.c - model-state placement against the ZeRO paper and the offload rules.
 *
 * Oracles: ZeRO (Rajbhandari et al., SC20) Table 1 and section 5: mixed-precision Adam costs
 * 2 + 2 + K (K = 12) bytes a parameter, so a GPU holds 16 Psi (DDP), 4 Psi + 12 Psi/N (ZeRO-1),
 * 2 Psi + 14 Psi/N (ZeRO-2) and 16 Psi/N (ZeRO-3). zerosim pads partitions to ceil(Psi/N) as
 * DeepSpeed does, so it must equal the paper's real-valued formula up to that padding. The
 * Table 1 grid and its spot values come from tests/validation/cases.json ("zero-table1").
 * Offload placement follows zero_memory.h: the optimizer partition (K ceil(Psi/N)) and the fp32
 * gradient partition (4 ceil(Psi/N)) leave the GPU; ZeRO-3 parameter offload moves the 16-bit
 * partition (2 ceil(Psi/N)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/zero_memory.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CASES_JSON ZEROSIM_SOURCE_DIR "/tests/validation/cases.json"

/* A TrainConfig as DeepSpeed defaults it: bf16 mixed precision, Adam, no offload. */
static TrainConfig train(int stage, Precision precision)
{
    TrainConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.precision = precision;
    strcpy(cfg.optimizer, "adam");
    cfg.optimizer_n_states = 2;
    cfg.zero.stage = stage;
    cfg.zero.overlap_comm = true;
    cfg.zero.contiguous_gradients = true; /* DeepSpeed's default */
    cfg.zero.reduce_bucket_size = 500000000;
    cfg.zero.allgather_bucket_size = 500000000;
    cfg.zero.prefetch_bucket_size = 50000000;
    cfg.zero.max_live_parameters = 1000000000;
    cfg.zero.max_reuse_distance = 1000000000;
    cfg.zero.param_persistence_threshold = 0;
    cfg.zero.sub_group_size = 1000000000;
    cfg.zero.offload_optimizer =
        (OffloadConfig){.device = OFFLOAD_NONE, .buffer_count = 4, .ratio = 1.0};
    cfg.zero.offload_param = (OffloadConfig){.device = OFFLOAD_NONE,
                                             .buffer_count = 5,
                                             .buffer_size = 100000000,
                                             .max_in_cpu = 1000000000,
                                             .ratio = 1.0};
    return cfg;
}

static ModelParams params_of(uint64_t psi)
{
    ModelParams p;
    memset(&p, 0, sizeof p);
    p.total = psi;
    return p;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static cJSON *load_case(cJSON **root, const char *id)
{
    FILE *f = fopen(CASES_JSON, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    *root = cJSON_Parse(text);
    free(text);
    assert_non_null(*root);
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(*root, "analytic"))
    {
        const cJSON *cid = cJSON_GetObjectItemCaseSensitive(item, "id");
        if (cJSON_IsString(cid) && strcmp(cid->valuestring, id) == 0)
            return (cJSON *)item;
    }
    fail_msg("case %s not in %s", id, CASES_JSON);
    return NULL;
}

/* Every (Psi, N, stage) of Table 1: within 0.5% of the paper and, exactly, the paper's formula
 * with Psi/N padded up (so never more than 16 bytes, and certainly fewer than 16 N, away). */
static void test_zero_memory_matches_table1_grid(void **state)
{
    (void)state;
    cJSON *root;
    const cJSON *c = load_case(&root, "zero-table1");
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(c, "params");
    const cJSON *dps = cJSON_GetObjectItemCaseSensitive(c, "dp");
    assert_int_equal(cJSON_GetArraySize(ps), 3);
    assert_int_equal(cJSON_GetArraySize(dps), 6);
    int checked = 0;
    const cJSON *pv, *nv;
    cJSON_ArrayForEach(pv, ps)
    {
        const uint64_t psi = (uint64_t)pv->valuedouble;
        cJSON_ArrayForEach(nv, dps)
        {
            const uint64_t n = (uint64_t)nv->valuedouble;
            const uint64_t part = ceil_div(psi, n);
            /* the paper's 16-byte split with the partition padded */
            const uint64_t padded[4] = {16 * psi, 4 * psi + 12 * part, 2 * psi + 14 * part,
                                        16 * part};
            for (int stage = 0; stage <= 3; stage++) {
                TrainConfig cfg = train(stage, PRECISION_BF16);
                ModelParams p = params_of(psi);
                ZeroMemory m;
                zero_memory(&cfg, &p, 1, n, &m);
                double paper = zero_memory_paper_bytes(stage, (double)psi, (double)n);
                double got = (double)m.gpu_model_states;
                double diff = fabs(got - paper);
                if (diff >= 16.0 * (double)n || diff / paper > 0.005)
                    fail_msg("P=%.3g N=%llu stage %d: %.0f vs paper %.0f", (double)psi,
                             (unsigned long long)n, stage, got, paper);
                assert_true(diff < 16.0);
                assert_int_equal(m.gpu_model_states, padded[stage]);
                assert_int_equal(m.partition_elems, part);
                assert_int_equal(m.gpu_model_states, m.gpu_params + m.gpu_grads + m.gpu_optimizer);
                assert_int_equal(m.cpu_optimizer + m.cpu_grads + m.cpu_params, 0);
                assert_int_equal(m.nvme_optimizer + m.nvme_params, 0);
                checked++;
            }
        }
    }
    assert_int_equal(checked, 3 * 6 * 4);
    cJSON_Delete(root);
}

/* The published spot values of Table 1 (GB = 1e9), rounded in the paper: within 0.5%. */
static void test_zero_memory_matches_table1_spot_values(void **state)
{
    (void)state;
    cJSON *root;
    const cJSON *c = load_case(&root, "zero-table1");
    const cJSON *spots = cJSON_GetObjectItemCaseSensitive(c, "spot_values_GB");
    static const char *const stages[] = {"ddp", "zero1", "zero2", "zero3"};
    int checked = 0;
    const cJSON *spot;
    cJSON_ArrayForEach(spot, spots)
    {
        double psi_d;
        unsigned long long n;
        assert_int_equal(sscanf(spot->string, "%lg@%llu", &psi_d, &n), 2);
        for (int stage = 0; stage <= 3; stage++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(spot, stages[stage]);
            if (!cJSON_IsNumber(v))
                continue;
            TrainConfig cfg = train(stage, PRECISION_FP16);
            ModelParams p = params_of((uint64_t)psi_d);
            ZeroMemory m;
            zero_memory(&cfg, &p, 1, n, &m);
            double got_gb = (double)m.gpu_model_states / 1e9;
            double rel = fabs(got_gb - v->valuedouble) / v->valuedouble;
            if (rel > 0.005)
                fail_msg("%s %s: %.4f GB vs published %.4g", spot->string, stages[stage], got_gb,
                         v->valuedouble);
            checked++;
        }
    }
    assert_int_equal(checked, 7);
    cJSON_Delete(root);
}

/* The closed forms themselves, by hand: 7.5e9 parameters on 64 GPUs. */
static void test_zero_memory_paper_bytes_by_hand(void **state)
{
    (void)state;
    assert_true(zero_memory_paper_bytes(0, 7.5e9, 64) == 120e9);
    assert_true(zero_memory_paper_bytes(1, 7.5e9, 64) == 31.40625e9);
    assert_true(zero_memory_paper_bytes(2, 7.5e9, 64) == 16.640625e9);
    assert_true(zero_memory_paper_bytes(3, 7.5e9, 64) == 1.875e9);
}

/* The per-stage split: which of params, grads, optimizer are partitioned. */
static void test_zero_memory_partitions_by_stage(void **state)
{
    (void)state;
    const uint64_t psi = 7500000001ull, n = 7, part = ceil_div(psi, n);
    const uint64_t want[4][3] = {
        {2 * psi, 2 * psi, 12 * psi},
        {2 * psi, 2 * psi, 12 * part},
        {2 * psi, 2 * part, 12 * part},
        {2 * part, 2 * part, 12 * part},
    };
    for (int stage = 0; stage <= 3; stage++) {
        TrainConfig cfg = train(stage, PRECISION_BF16);
        ModelParams p = params_of(psi);
        ZeroMemory m;
        zero_memory(&cfg, &p, 1, n, &m);
        assert_int_equal(m.param_bytes, 2);
        assert_int_equal(m.grad_bytes, 2);
        assert_int_equal(m.optimizer_bytes, 12);
        assert_int_equal(m.gpu_params, want[stage][0]);
        assert_int_equal(m.gpu_grads, want[stage][1]);
        assert_int_equal(m.gpu_optimizer, want[stage][2]);
    }
}

/* fp32 training: 4 (weights) + 4 (grads) + 8 (Adam's two states, no master copy) = 16 Psi. */
static void test_zero_memory_fp32_splits_4_4_8(void **state)
{
    (void)state;
    const uint64_t psi = 1000000007ull;
    TrainConfig cfg = train(0, PRECISION_FP32);
    ModelParams p = params_of(psi);
    ZeroMemory m;
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.param_bytes, 4);
    assert_int_equal(m.grad_bytes, 4);
    assert_int_equal(m.optimizer_bytes, 8);
    assert_int_equal(m.gpu_params, 4 * psi);
    assert_int_equal(m.gpu_grads, 4 * psi);
    assert_int_equal(m.gpu_optimizer, 8 * psi);
    assert_int_equal(m.gpu_model_states, 16 * psi);

    cfg = train(3, PRECISION_FP32);
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.gpu_model_states, 16 * ceil_div(psi, 8));
}

/* A one-state optimizer (SGD with momentum, Lion) in mixed precision: K = 4 + 4 = 8. */
static void test_zero_memory_one_state_optimizer_has_k8(void **state)
{
    (void)state;
    const uint64_t psi = 1000000000ull;
    TrainConfig cfg = train(0, PRECISION_BF16);
    cfg.optimizer_n_states = 1;
    ModelParams p = params_of(psi);
    ZeroMemory m;
    zero_memory(&cfg, &p, 1, 4, &m);
    assert_int_equal(m.optimizer_bytes, 8);
    assert_int_equal(m.gpu_model_states, 12 * psi);
}

/* Optimizer offload to CPU: K ceil(Psi/N) and the 4-byte gradient partition go to the host;
 * the GPU keeps no optimizer state and, in stage 2 and 3, no gradient partition. */
static void test_zero_memory_offload_optimizer_cpu(void **state)
{
    (void)state;
    const uint64_t psi = 7500000001ull, n = 7, part = ceil_div(psi, n);
    for (int stage = 1; stage <= 3; stage++) {
        TrainConfig cfg = train(stage, PRECISION_BF16);
        cfg.zero.offload_optimizer.device = OFFLOAD_CPU;
        ModelParams p = params_of(psi);
        ZeroMemory m;
        zero_memory(&cfg, &p, 1, n, &m);
        assert_int_equal(m.cpu_optimizer, 12 * part);
        assert_int_equal(m.cpu_grads, 4 * part);
        assert_int_equal(m.gpu_optimizer, 0);
        assert_int_equal(m.nvme_optimizer, 0);
        assert_int_equal(m.gpu_grads, stage == 1 ? 2 * psi : 0);
        assert_int_equal(m.gpu_params, stage == 3 ? 2 * part : 2 * psi);
        assert_int_equal(m.cpu_params, 0);
        assert_int_equal(m.gpu_model_states, m.gpu_params + m.gpu_grads);
    }
}

/* Optimizer offload to NVMe (ZeRO-Infinity): the optimizer partition lands on NVMe, the fp32
 * gradients stay on the host, and buffer_count pinned sub-groups stage the swaps. */
static void test_zero_memory_offload_optimizer_nvme(void **state)
{
    (void)state;
    const uint64_t psi = 7500000001ull, n = 7, part = ceil_div(psi, n);
    TrainConfig cfg = train(3, PRECISION_BF16);
    cfg.zero.offload_optimizer.device = OFFLOAD_NVME;
    ModelParams p = params_of(psi);
    ZeroMemory m;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.nvme_optimizer, 12 * part);
    assert_int_equal(m.cpu_optimizer, 0);
    assert_int_equal(m.gpu_optimizer, 0);
    /* the fp32 gradients are swapped out to NVMe with the states (swap_out_gradients) */
    assert_int_equal(m.cpu_grads, 0);
    assert_int_equal(m.nvme_grads, 4 * part);
    assert_int_equal(m.gpu_grads, 0);
    /* sub_group_size 1e9 < part (~1.07e9): DeepSpeed's OptimizerSwapper pins buffer_count (4)
     * fp32 buffers of the largest sub-group, one tensor each */
    assert_int_equal(m.cpu_buffers, 4ull * 1000000000ull * 4);
}

/* Partial optimizer offload (DeepSpeed's stage3.py): whole sub-groups stay on the GPU, the
 * first int((1 - ratio) x n_sub) of them; stages 1-2 ignore the ratio. */
static void test_zero_memory_offload_optimizer_ratio_splits_partition(void **state)
{
    (void)state;
    const uint64_t psi = 4000000000ull, n = 4, part = psi / n, sub = part / 4;
    ModelParams p = params_of(psi);
    ZeroMemory m;
    /* 4 sub-groups, ratio 0.25: int(0.75 x 4) = 3 stay, a quarter of the partition leaves */
    TrainConfig cfg = train(3, PRECISION_BF16);
    cfg.zero.sub_group_size = sub;
    cfg.zero.offload_optimizer.device = OFFLOAD_CPU;
    cfg.zero.offload_optimizer.ratio = 0.25;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.offloaded_elems, part / 4);
    assert_int_equal(m.cpu_optimizer, 12 * (part / 4));
    assert_int_equal(m.gpu_optimizer, 12 * (part - part / 4));
    assert_int_equal(m.cpu_grads, 4 * (part / 4));
    assert_int_equal(m.gpu_grads, 4 * (part - part / 4)); /* fp32, beside the kept states */
    /* ratio 0.3: int(0.7 x 4) = 2 stay, half leaves */
    cfg.zero.offload_optimizer.ratio = 0.3;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.offloaded_elems, part / 2);
    /* ratio 0: every sub-group stays on the GPU */
    cfg.zero.offload_optimizer.ratio = 0.0;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.offloaded_elems, 0);
    assert_int_equal(m.cpu_optimizer, 0);
    assert_int_equal(m.gpu_optimizer, 12 * part);
    /* one sub-group (sub_group_size >= partition): int(0.5 x 1) = 0 stay, all of it leaves */
    cfg.zero.sub_group_size = 1000000000ull;
    cfg.zero.offload_optimizer.ratio = 0.5;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.offloaded_elems, part);
    /* NVMe: DeepSpeed swaps every sub-group, so the ratio does not apply */
    cfg.zero.sub_group_size = sub;
    cfg.zero.offload_optimizer.device = OFFLOAD_NVME;
    cfg.zero.offload_optimizer.ratio = 0.25;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.offloaded_elems, part);
    assert_int_equal(m.nvme_optimizer, 12 * part);
    /* stage 2: the ratio does not apply */
    cfg = train(2, PRECISION_BF16);
    cfg.zero.sub_group_size = sub;
    cfg.zero.offload_optimizer.device = OFFLOAD_CPU;
    cfg.zero.offload_optimizer.ratio = 0.25;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.offloaded_elems, part);
    assert_int_equal(m.cpu_optimizer, 12 * part);
    assert_int_equal(m.gpu_optimizer, 0);
}

/* ZeRO-3 parameter offload: the 2 ceil(Psi/N) parameter partition leaves the GPU, to host
 * memory or to NVMe (then with buffer_count x buffer_size 16-bit pinned staging). */
static void test_zero_memory_offload_param_cpu_and_nvme(void **state)
{
    (void)state;
    const uint64_t psi = 7500000001ull, n = 7, part = ceil_div(psi, n);
    for (int dev = OFFLOAD_CPU; dev <= OFFLOAD_NVME; dev++) {
        TrainConfig cfg = train(3, PRECISION_BF16);
        cfg.zero.offload_optimizer.device = (OffloadDevice)dev;
        cfg.zero.offload_param.device = (OffloadDevice)dev;
        ModelParams p = params_of(psi);
        ZeroMemory m;
        zero_memory(&cfg, &p, 1, n, &m);
        assert_int_equal(m.gpu_params, 0);
        assert_int_equal(m.gpu_model_states, 0);
        if (dev == OFFLOAD_CPU) {
            assert_int_equal(m.cpu_params, 2 * part);
            assert_int_equal(m.nvme_params, 0);
            assert_int_equal(m.cpu_buffers, 0);
        } else {
            assert_int_equal(m.nvme_params, 2 * part);
            assert_int_equal(m.cpu_params, 0);
            assert_int_equal(m.cpu_buffers, 4ull * 1000000000ull * 4 + 5ull * 100000000ull * 2);
        }
    }
}

/* Buffers, bf16, Psi = 7.5e9, reduce_bucket_size 5e8 (no modules, so no module gradient):
 * - ZeRO-2, 8 GPUs, overlap_comm: two ipg buffers 2 x 5e8 x 2 = 2e9 (stage_1_and_2.py
 *   setup_buckets) + the bucket being reduced 5e8 x 2 = 1e9: 3e9 bytes;
 * - without overlap_comm one ipg buffer: 1e9 + 1e9 = 2e9; on one GPU the ipg buffer alone
 *   (DeepSpeed allocates it whatever the world size, nothing is reduced): 1e9;
 * - stage 0 (engine.py's allreduce, no ipg buffer): one flattened bucket, 1e9, with
 *   overlap_comm too;
 * - ZeRO-3, 1 GPU, no modules to gather: the run-long ipg buffer in the communication dtype
 *   5e8 x 2 = 1e9 (stage3.py __init__ "# IPG"), 5e8 x 4 = 2e9 with communication_data_type
 *   fp32, 0 without contiguous_gradients. */
static void test_zero_memory_buffers_are_reduce_buckets(void **state)
{
    (void)state;
    const uint64_t psi = 7500000000ull;
    TrainConfig cfg = train(2, PRECISION_BF16);
    ModelParams p = params_of(psi);
    ZeroMemory m;
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.gpu_buffers, 2ull * 500000000ull * 2 + 500000000ull * 2);
    cfg.zero.overlap_comm = false;
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.gpu_buffers, 2000000000ull);
    zero_memory(&cfg, &p, 1, 1, &m);
    assert_int_equal(m.gpu_buffers, 1000000000ull);
    cfg.zero.stage = 0;
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.gpu_buffers, 1000000000ull);
    cfg.zero.overlap_comm = true;
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.gpu_buffers, 1000000000ull);
    cfg = train(3, PRECISION_BF16);
    zero_memory(&cfg, &p, 0, 1, &m);
    assert_int_equal(m.gpu_buffers, 1000000000ull);
    cfg.comm_grad_bytes = 4;
    zero_memory(&cfg, &p, 0, 1, &m);
    assert_int_equal(m.gpu_buffers, 2000000000ull);
    cfg.zero.contiguous_gradients = false;
    zero_memory(&cfg, &p, 0, 1, &m);
    assert_int_equal(m.gpu_buffers, 0);
}

/* Buffers with a layer of modules A = 6e8, B = 2e8, C = 5e8 elements and a 3e8 embedding,
 * bf16, 8 GPUs (the walk's hand trace of test_zero3_walk.c, scaled by 1e8):
 * - ZeRO-2: two 5e8-element ipg buffers (2 x 5e8 x 2 bytes), the bucket being reduced
 *   (5e8 x 2) and the largest module's full gradient before its hook, 6e8 x 2: 4.2e9 bytes;
 * - ZeRO-3 with stage3_max_live_parameters 8e8 and a 3e8 prefetch bucket: the backward peak
 *   of the walk, 36 bytes x 1e8 (13e8 gathered + C's 5e8 gradient, 2 bytes each), above the
 *   forward's 22e8 and the embedding alone (3e8 x 4), plus one bucket 5e8 x 2 and the
 *   run-long ipg buffer 5e8 x 2: 5.6e9. */
static void test_zero_memory_buffers_hold_module_gradients_and_gathers(void **state)
{
    (void)state;
    ModelParams p = params_of(8000000000ull);
    p.layer[0] = (ParamModule){.name = "A", .weight = 600000000};
    p.layer[1] = (ParamModule){.name = "B", .weight = 200000000};
    p.layer[2] = (ParamModule){.name = "C", .weight = 500000000};
    p.n_layer_modules = 3;
    p.largest_layer_module = 600000000; /* as params_count() would set it */
    p.embedding = 300000000;
    TrainConfig cfg = train(2, PRECISION_BF16);
    ZeroMemory m;
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.gpu_buffers, 4200000000ull);
    cfg = train(3, PRECISION_BF16);
    cfg.zero.max_live_parameters = 800000000;
    cfg.zero.prefetch_bucket_size = 300000000;
    zero_memory(&cfg, &p, 1, 8, &m);
    assert_int_equal(m.gpu_buffers, 5600000000ull);
}

/* Optimizer-step working copies, by hand: Psi = 1000, N = 4 -> part = 250.
 * stage 0 bf16: fp32 casts 4 x 1000 + their flat copy 4 x 1000 = 8000; fp32 training: none.
 * stage 1/2 bf16: flatten 2 x 250 + fp32 cast 4 x 250 = 1500; fp32: the flatten, 4 x 250 = 1000.
 * stage 3 bf16 with sub_group_size 100: one sub-group, (2 + 4) x 100 = 600; with the default
 * 1e9 the whole partition, 6 x 250 = 1500. Optimizer offload: 0 on the GPU. */
static void test_zero_memory_step_copies_by_stage(void **state)
{
    (void)state;
    TrainConfig c0 = train(0, PRECISION_BF16), c0f = train(0, PRECISION_FP32);
    assert_int_equal(zero_step_copies_bytes(&c0, 1000, 1000), 8000);
    assert_int_equal(zero_step_copies_bytes(&c0f, 1000, 1000), 0);
    for (int stage = 1; stage <= 2; stage++) {
        TrainConfig c = train(stage, PRECISION_BF16), cf = train(stage, PRECISION_FP32);
        assert_int_equal(zero_step_copies_bytes(&c, 1000, 250), 1500);
        assert_int_equal(zero_step_copies_bytes(&cf, 1000, 250), 1000);
    }
    TrainConfig c3 = train(3, PRECISION_BF16);
    assert_int_equal(zero_step_copies_bytes(&c3, 1000, 250), 1500);
    c3.zero.sub_group_size = 100;
    assert_int_equal(zero_step_copies_bytes(&c3, 1000, 250), 600);
    TrainConfig off = train(2, PRECISION_BF16);
    off.zero.offload_optimizer.device = OFFLOAD_CPU;
    assert_int_equal(zero_step_copies_bytes(&off, 1000, 250), 0);
    /* and zero_memory() records it for the partition it computes: ceil(1000 / 3) = 334 */
    ModelParams p = params_of(1000);
    ZeroMemory m;
    TrainConfig c2 = train(2, PRECISION_BF16);
    zero_memory(&c2, &p, 1, 3, &m);
    assert_int_equal(m.gpu_step_copies, 6 * 334);
}

/* DeepSpeed's bf16 low-precision options: bf16_master_weights_and_grads keeps a 2-byte
 * master copy, bf16_optimizer_states 2-byte Adam moments, so K goes 12 -> 10 -> 6 (the
 * DeepSpeedExamples bf16_master_weight README's breakdown without its master gradients);
 * under fp16 the bf16 section's options do not apply. */
static void test_zero_memory_bf16_master_and_states(void **state)
{
    (void)state;
    const uint64_t psi = 1000000000ull, n = 4;
    ModelParams p = params_of(psi);
    ZeroMemory m;
    TrainConfig cfg = train(3, PRECISION_BF16);
    cfg.is_bf16_master = true;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.optimizer_bytes, 2 + 4 * 2);
    cfg.is_bf16_optimizer_states = true;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.optimizer_bytes, 2 + 2 * 2);
    assert_int_equal(m.gpu_model_states, (2 + 2 + 6) * (psi / n));
    cfg.precision = PRECISION_FP16;
    zero_memory(&cfg, &p, 1, n, &m);
    assert_int_equal(m.optimizer_bytes, 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_memory_matches_table1_grid),
        cmocka_unit_test(test_zero_memory_bf16_master_and_states),
        cmocka_unit_test(test_zero_memory_matches_table1_spot_values),
        cmocka_unit_test(test_zero_memory_paper_bytes_by_hand),
        cmocka_unit_test(test_zero_memory_partitions_by_stage),
        cmocka_unit_test(test_zero_memory_fp32_splits_4_4_8),
        cmocka_unit_test(test_zero_memory_one_state_optimizer_has_k8),
        cmocka_unit_test(test_zero_memory_offload_optimizer_cpu),
        cmocka_unit_test(test_zero_memory_offload_optimizer_nvme),
        cmocka_unit_test(test_zero_memory_offload_optimizer_ratio_splits_partition),
        cmocka_unit_test(test_zero_memory_offload_param_cpu_and_nvme),
        cmocka_unit_test(test_zero_memory_buffers_are_reduce_buckets),
        cmocka_unit_test(test_zero_memory_buffers_hold_module_gradients_and_gathers),
        cmocka_unit_test(test_zero_memory_step_copies_by_stage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
