/*
 * test_zero_schedule.c - simulated ZeRO steps against the paper's oracles.
 *
 * On idealised configurations (no activation memory, one unbounded gradient bucket, no
 * resident parameters, true reduce-scatters) the memory tracker must hold exactly the ZeRO
 * paper's model states per GPU (16 Psi, 4 Psi + 12 Psi/N, 2 Psi + 14 Psi/N, 16 Psi/N, up to
 * partition padding) and each rank must send 2 Psi (N-1)/N 16-bit elements per step under
 * DDP, ZeRO-1 and ZeRO-2 and 3 Psi (N-1)/N under ZeRO-3. Then DeepSpeed's own behaviour:
 * bucket all-reduces, per-micro-batch reduction in stage 2, overlap, activation peaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/params.h"
#include "model/zero3_walk.h"
#include "model/kernels.h"

#include "engine/engine.h"
#include "isolated.h"
#include "model/activations.h"
#include "model/params.h"
#include "model/zero_memory.h"
#include "schedule/zero_schedule.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A small untied GPT-style model (Llama family: no biases, so nothing is tiny but the norms). */
static const char *const model_text =
    "{\"model_type\": \"llama\", \"hidden_size\": 1024, \"num_hidden_layers\": 4,"
    " \"num_attention_heads\": 16, \"intermediate_size\": 4096, \"vocab_size\": 32000,"
    " \"max_position_embeddings\": 1024}";

static int setup_run(Probe *probe, const char *config_text, uint64_t gpus, ModelConfig *model,
                     TrainConfig *train, Platform *p, RunSetup *setup)
{
    Err err = {0};
    if (model_config_parse(model, "tiny.json", model_text, strlen(model_text), &err) ||
        ds_config_parse(train, "ds.json", config_text, strlen(config_text), &err) ||
        platform_load(p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err) ||
        platform_resize(p, gpus, 0, &err)) {
        probe_fail(probe, &err);
        return -1;
    }
    BatchPlan batch;
    if (ds_config_resolve_batch(train, gpus, &batch, &err)) {
        probe_fail(probe, &err);
        return -1;
    }
    *setup = (RunSetup){.seq_len = 512,
                        .micro_batch = batch.micro_batch,
                        .grad_accum = batch.grad_accum,
                        .global_batch = batch.global_batch,
                        .n_gpus = gpus,
                        .recompute = RECOMPUTE_NONE,
                        .is_flash_attention = true,
                        .act_bytes = 2};
    return 0;
}

/* Runs one step; records model-state bytes at rank 0's peak, its collective bytes by kind,
 * the step time and Psi. */
static void simulate(Probe *probe, const char *config_text, uint64_t gpus, bool activations,
                     ScheduleVariant variant, bool init)
{
    ModelConfig model;
    TrainConfig train;
    Platform p;
    RunSetup setup;
    Err err = {0};
    if (setup_run(probe, config_text, gpus, &model, &train, &p, &setup))
        return;
    if (init && engine_init(&p, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    ScheduleOptions opts = {.variant = variant, .n_steps = 1, .has_activations = activations};
    Graph *g = zero_schedule_build(&model, &train, &p, &setup, &opts, &err);
    EngineOptions eo = {.algo = COLL_ALGO_RING};
    EngineResult r;
    if (g == NULL || engine_run(g, &eo, &r, &err)) {
        graph_destroy(g);
        return probe_fail(probe, &err);
    }
    const MemAccount *a = memory_account(r.memory, 0, MEM_GPU);
    ModelParams params;
    params_count(&model, &params);
    probe_record(probe, a->at_peak[MEM_PARAMS] + a->at_peak[MEM_GRADS] + a->at_peak[MEM_OPTIMIZER]);
    for (int c = 0; c < COLL_N_KINDS; c++)
        probe_record(probe, r.coll_bytes[0][c]);
    probe_record(probe, r.makespan_s);
    probe_record(probe, (double)params.total);
    probe_record(probe, a->peak_bytes);
    probe_record(probe, a->at_peak[MEM_WORKSPACE]);
    engine_result_fini(&r);
    graph_destroy(g);
    model_config_fini(&model);
    ds_config_fini(&train);
}

#define PER_RUN (1 + COLL_N_KINDS + 4) /* values simulate() records */
enum { V_STATES, V_AR, V_AG, V_RS, V_BC, V_A2A, V_TIME, V_PSI, V_PEAK, V_WORKSPACE };

static const char *const idealised[] = {
    "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
    " \"zero_optimization\": {\"stage\": 0, \"reduce_bucket_size\": 1e15}}",
    "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
    " \"zero_optimization\": {\"stage\": 1, \"reduce_bucket_size\": 1e15,"
    " \"use_multi_rank_bucket_allreduce\": false}}",
    "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
    " \"zero_optimization\": {\"stage\": 2, \"reduce_bucket_size\": 1e15,"
    " \"use_multi_rank_bucket_allreduce\": false}}",
    "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
    " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 1e15,"
    " \"stage3_param_persistence_threshold\": 0}}",
};

static uint64_t scenario_gpus;

static void scenario_idealised(Probe *probe)
{
    for (int stage = 0; stage <= 3; stage++)
        simulate(probe, idealised[stage], scenario_gpus, false, SCHEDULE_DEEPSPEED, stage == 0);
}

static void check_oracles(uint64_t gpus)
{
    scenario_gpus = gpus;
    Probe pr = run_isolated(scenario_idealised);
    assert_int_equal(pr.n, 4 * PER_RUN);
    const double n = (double)gpus;
    for (int stage = 0; stage <= 3; stage++) {
        const double *v = &pr.v[stage * PER_RUN];
        const double psi = v[V_PSI];
        /* model states: the paper's formula, up to ceil(Psi/N) padding */
        double paper = zero_memory_paper_bytes(stage, psi, n);
        assert_true(fabs(v[V_STATES] - paper) < 16.0 * n);
        /* bytes each rank sends: 2 Psi or 3 Psi 16-bit elements x (N-1)/N */
        double sent = v[V_AR] + v[V_AG] + v[V_RS] + v[V_BC];
        double factor = stage == 3 ? 3.0 : 2.0;
        assert_close(sent, factor * 2.0 * psi * (n - 1) / n, 1e-9);
        if (stage == 0)
            assert_close(v[V_AR], sent, 1e-12);
        if (stage == 1 || stage == 2) {
            assert_close(v[V_RS], 2.0 * psi * (n - 1) / n, 1e-9);
            assert_close(v[V_AG], 2.0 * psi * (n - 1) / n, 1e-9);
        }
        if (stage == 3)
            assert_close(v[V_AG], 2.0 * v[V_RS], 1e-9);
        assert_true(v[V_TIME] > 0);
    }
}

static void test_zero_schedule_oracles_one_node(void **state)
{
    (void)state;
    check_oracles(8);
}

static void test_zero_schedule_oracles_two_nodes(void **state)
{
    (void)state;
    check_oracles(16);
}

/* ---- DeepSpeed's behaviour beyond the oracles ---- */

static void scenario_deepspeed(Probe *probe)
{
    /* 0: stage 1, DeepSpeed's default bucket all-reduce (2 Psi) + parameter all-gather */
    simulate(probe,
             "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
             " \"zero_optimization\": {\"stage\": 1}}",
             8, false, SCHEDULE_DEEPSPEED, true);
    /* 1: stage 2, 4 micro-batches: reduced in every micro-batch */
    simulate(probe,
             "{\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 4,"
             " \"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 2,"
             " \"use_multi_rank_bucket_allreduce\": false, \"overlap_comm\": true}}",
             8, false, SCHEDULE_DEEPSPEED, false);
    /* 2: stage 1, 4 micro-batches: reduced once, at the boundary */
    simulate(probe,
             "{\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 4,"
             " \"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 1,"
             " \"use_multi_rank_bucket_allreduce\": false}}",
             8, false, SCHEDULE_DEEPSPEED, false);
    /* 3, 4: stage 2 with and without overlap_comm, small buckets */
    simulate(probe,
             "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
             " \"zero_optimization\": {\"stage\": 2, \"overlap_comm\": true,"
             " \"reduce_bucket_size\": 2e7}}",
             8, false, SCHEDULE_DEEPSPEED, false);
    simulate(probe,
             "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
             " \"zero_optimization\": {\"stage\": 2, \"overlap_comm\": false,"
             " \"reduce_bucket_size\": 2e7}}",
             8, false, SCHEDULE_DEEPSPEED, false);
    /* 5: the chapter's ZeRO-1: all-reduce then all-gather (3 Psi) */
    simulate(probe,
             "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
             " \"zero_optimization\": {\"stage\": 1}}",
             8, false, SCHEDULE_TEXTBOOK, false);
}

static void test_zero_schedule_follows_deepspeed(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_deepspeed);
    assert_int_equal(pr.n, 6 * PER_RUN);
    const double psi = pr.v[V_PSI], share = 7.0 / 8.0, elem = 2.0;
    const double *stage1 = &pr.v[0], *acc2 = &pr.v[PER_RUN], *acc1 = &pr.v[2 * PER_RUN];
    const double *overlap = &pr.v[3 * PER_RUN], *blocking = &pr.v[4 * PER_RUN];
    const double *textbook = &pr.v[5 * PER_RUN];
    assert_close(stage1[V_AR], 2.0 * elem * psi * share, 1e-9);
    assert_close(stage1[V_AG], elem * psi * share, 1e-9);
    assert_close(acc2[V_RS], 4.0 * elem * psi * share, 1e-9);
    assert_close(acc1[V_RS], elem * psi * share, 1e-9);
    assert_true(overlap[V_TIME] < blocking[V_TIME]);
    assert_close(textbook[V_AR], 2.0 * elem * psi * share, 1e-9);
    assert_close(textbook[V_AG], elem * psi * share, 1e-9);
}

/* ---- activation memory: the simulated peak is the analytic one ---- */

static void scenario_activations(Probe *probe)
{
    simulate(probe,
             "{\"train_micro_batch_size_per_gpu\": 2, \"bf16\": {\"enabled\": true},"
             " \"zero_optimization\": {\"stage\": 0}}",
             1, true, SCHEDULE_DEEPSPEED, true);
}

static void test_zero_schedule_activation_peak_matches_model(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_activations);
    assert_int_equal(pr.n, PER_RUN);
    ModelConfig model;
    Err err = {0};
    assert_int_equal(model_config_parse(&model, "tiny.json", model_text, strlen(model_text), &err),
                     0);
    RunSetup setup = {.seq_len = 512,
                      .micro_batch = 2,
                      .grad_accum = 1,
                      .global_batch = 2,
                      .n_gpus = 1,
                      .recompute = RECOMPUTE_NONE,
                      .is_flash_attention = true,
                      .act_bytes = 2};
    ActivationBytes act;
    activations_bytes(&model, &setup, &act);
    /* one GPU, DDP: the peak is at the end of forward (model states + every layer's
     * activations) or at the optimizer step, where bf16 DDP's FP16_Optimizer holds 8 Psi of
     * fp32 gradient copies (zero_memory.h); the cuBLAS workspaces sit beside both */
    double working = fmax((double)act.peak, 8.0 * pr.v[V_PSI]);
    assert_close(pr.v[V_PEAK], pr.v[V_STATES] + working + pr.v[V_WORKSPACE], 1e-12);
    assert_close(pr.v[V_STATES], 16.0 * pr.v[V_PSI], 1e-12);
    model_config_fini(&model);
}

/* ---- ZeRO-Offload and ZeRO-Infinity ---- */

/* Sums rank 0's ops of a kind whose label is `label` (NULL: any). */
static double sum_ops(const Graph *g, OpKind kind, int sub, const char *label)
{
    const Op *ops = graph_ops(g);
    uint32_t want = label ? graph_find_label(g, label) : UINT32_MAX;
    double total = 0;
    for (uint32_t i = 0; i < graph_n_ops(g); i++)
        if (ops[i].rank == 0 && ops[i].kind == kind && (sub < 0 || ops[i].sub == sub) &&
            (label == NULL || ops[i].label == want))
            total += ops[i].amount;
    return total;
}

static const char *const one_layer_text =
    "{\"model_type\": \"llama\", \"hidden_size\": 2048, \"num_hidden_layers\": 1,"
    " \"num_attention_heads\": 16, \"intermediate_size\": 8192, \"vocab_size\": 1000,"
    " \"max_position_embeddings\": 512}";

/* Runs `config_text` on `gpus` GPUs of `platform` with `model_text`; records Psi, rank 0's
 * PCIe bytes (engine), its D2H and H2D copy bytes (graph), NVMe bytes read and written by
 * label, the node's host-memory peak and whether the run ran out of memory. */
static void offload_run(Probe *probe, const char *platform, uint64_t gpus, const char *text,
                        const char *config_text, bool init)
{
    ModelConfig model;
    TrainConfig train;
    Platform p;
    Err err = {0};
    if (model_config_parse(&model, "m.json", text, strlen(text), &err) ||
        ds_config_parse(&train, "ds.json", config_text, strlen(config_text), &err) ||
        platform_load(&p, platform, ZEROSIM_SOURCE_DIR, &err) || platform_resize(&p, gpus, 0, &err))
        return probe_fail(probe, &err);
    BatchPlan batch;
    if (ds_config_resolve_batch(&train, gpus, &batch, &err))
        return probe_fail(probe, &err);
    RunSetup setup = {.seq_len = 512,
                      .micro_batch = batch.micro_batch,
                      .grad_accum = batch.grad_accum,
                      .global_batch = batch.global_batch,
                      .n_gpus = gpus,
                      .recompute = RECOMPUTE_FULL,
                      .checkpoint_every = 1,
                      .is_flash_attention = true,
                      .act_bytes = 2};
    if (init && engine_init(&p, train.precision, &err))
        return probe_fail(probe, &err);
    ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1, .has_activations = true};
    Graph *g = zero_schedule_build(&model, &train, &p, &setup, &opts, &err);
    EngineOptions eo = {.algo = COLL_ALGO_RING};
    EngineResult r;
    if (g == NULL || engine_run(g, &eo, &r, &err)) {
        graph_destroy(g);
        return probe_fail(probe, &err);
    }
    ModelParams params;
    params_count(&model, &params);
    uint32_t rank;
    MemSpace space;
    probe_record(probe, (double)params.total);
    probe_record(probe, r.link_bytes[0][LINK_PCIE]);
    probe_record(probe, sum_ops(g, OP_COPY, COPY_D2H, NULL));
    probe_record(probe, sum_ops(g, OP_COPY, COPY_H2D, NULL));
    probe_record(probe, sum_ops(g, OP_DISK, DISK_READ, "optimizer states from nvme"));
    probe_record(probe, sum_ops(g, OP_DISK, DISK_WRITE, "optimizer states to nvme"));
    probe_record(probe, memory_account(r.memory, 0, MEM_CPU)->peak_bytes);
    probe_record(probe, memory_first_oom(r.memory, &rank, &space) != NULL);
    engine_result_fini(&r);
    graph_destroy(g);
    model_config_fini(&model);
    ds_config_fini(&train);
}

enum { O_PSI, O_PCIE, O_D2H, O_H2D, O_NVME_READ, O_NVME_WRITE, O_CPU_PEAK, O_OOM, O_N };

static void scenario_offload_one_gpu(Probe *probe)
{
    offload_run(probe, "dgx-a100-80g", 1, one_layer_text,
                "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                " \"zero_optimization\": {\"stage\": 2, \"offload_optimizer\":"
                " {\"device\": \"cpu\"}}}",
                true);
}

/* ZeRO-Offload on one GPU: 2 Psi down as 16-bit gradients, 2 Psi up as 16-bit parameters;
 * the host holds the fp32 master, momentum and variance (12 Psi) and fp32 gradients (4 Psi). */
static void test_zero_schedule_offload_moves_2psi_each_way(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_offload_one_gpu);
    assert_int_equal(pr.n, O_N);
    const double psi = pr.v[O_PSI];
    assert_close(pr.v[O_D2H], 2.0 * psi, 1e-9);
    assert_close(pr.v[O_H2D], 2.0 * psi, 1e-9);
    assert_close(pr.v[O_PCIE], 4.0 * psi, 1e-9);
    assert_close(pr.v[O_CPU_PEAK], 16.0 * psi, 1e-9);
    assert_true(pr.v[O_OOM] == 0);
}

static void scenario_partial_offload(Probe *probe)
{
    offload_run(probe, "dgx-a100-80g", 1, one_layer_text,
                "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                " \"zero_optimization\": {\"stage\": 3, \"sub_group_size\": 2e7,"
                " \"offload_optimizer\": {\"device\": \"cpu\", \"ratio\": 0.25}}}",
                true);
}

/* ZeRO-3's partial offload (ratio 0.25 of 4 sub-groups of 2e7 elements; Psi is 71M): the
 * first int(0.75 x 4) = 3 sub-groups are stepped on the GPU, so only the rest crosses PCIe
 * (2 bytes down as gradients and 2 up as parameters per element) and lives on the host. */
static void test_zero_schedule_partial_offload_moves_only_the_offloaded_part(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_partial_offload);
    assert_int_equal(pr.n, O_N);
    const double psi = pr.v[O_PSI];
    assert_true(psi > 6e7 && psi <= 8e7);
    const double offloaded = psi - 3 * 2e7;
    assert_close(pr.v[O_D2H], 2.0 * offloaded, 1e-9);
    assert_close(pr.v[O_H2D], 2.0 * offloaded, 1e-9);
    assert_close(pr.v[O_PCIE], 4.0 * offloaded, 1e-9);
    assert_close(pr.v[O_CPU_PEAK], 16.0 * offloaded, 1e-9);
    assert_true(pr.v[O_OOM] == 0);
}

static void scenario_partial_offload_with_params(Probe *probe)
{
    offload_run(probe, "dgx-a100-80g", 1, one_layer_text,
                "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                " \"zero_optimization\": {\"stage\": 3, \"sub_group_size\": 2e7,"
                " \"offload_optimizer\": {\"device\": \"cpu\", \"ratio\": 0.25},"
                " \"offload_param\": {\"device\": \"cpu\"}}}",
                true);
}

/* The same with the parameters on the host: the GPU's updated sub-groups go back to the host
 * (2 bytes each), beside the offloaded part's gradients, so exactly 2 Psi goes down. */
static void test_zero_schedule_partial_offload_returns_gpu_updates_to_host(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_partial_offload_with_params);
    assert_int_equal(pr.n, O_N);
    const double psi = pr.v[O_PSI];
    assert_close(pr.v[O_D2H], 2.0 * psi, 1e-9);
    assert_true(pr.v[O_OOM] == 0);
}

static void scenario_infinity_nvme(Probe *probe)
{
    offload_run(probe, "dgx-a100-80g", 8, one_layer_text,
                "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                " \"zero_optimization\": {\"stage\": 3, \"sub_group_size\": 1e6,"
                " \"offload_optimizer\": {\"device\": \"nvme\", \"nvme_path\": \"/n\", \"pipeline_read\": true},"
                " \"offload_param\": {\"device\": \"nvme\", \"nvme_path\": \"/n\"}}}",
                true);
}

/* ZeRO-Infinity with the optimizer on NVMe: each step reads and writes the rank's optimizer
 * states once, 12 Psi/N bytes each way, sub-group by sub-group. */
static void test_zero_schedule_infinity_reads_and_writes_states_once(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_infinity_nvme);
    assert_int_equal(pr.n, O_N);
    const double psi = pr.v[O_PSI], part = ceil(psi / 8.0);
    assert_close(pr.v[O_NVME_READ], 12.0 * part, 1e-9);
    assert_close(pr.v[O_NVME_WRITE], 12.0 * part, 1e-9);
    assert_true(pr.v[O_OOM] == 0);
}

static const char *const gpt_1t_text =
    "{\"model_type\": \"gpt2\", \"n_embd\": 25600, \"n_layer\": 128, \"n_head\": 160,"
    " \"n_positions\": 2048, \"vocab_size\": 51200}";

static void scenario_1t_on_dgx2(Probe *probe)
{
    const char *infinity =
        "{\"train_micro_batch_size_per_gpu\": 1, \"fp16\": {\"enabled\": true},"
        " \"activation_checkpointing\": {\"cpu_checkpointing\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"stage3_max_live_parameters\": 1e9,"
        " \"offload_optimizer\": {\"device\": \"nvme\", \"nvme_path\": \"/n\", \"pipeline_read\": true,"
        " \"pipeline_write\": true}, \"offload_param\": {\"device\": \"nvme\", \"nvme_path\": \"/n\"}}}";
    const char *zero3 = "{\"train_micro_batch_size_per_gpu\": 1, \"fp16\": {\"enabled\": true},"
                        " \"activation_checkpointing\": {\"cpu_checkpointing\": true},"
                        " \"zero_optimization\": {\"stage\": 3}}";
    offload_run(probe, "dgx2-v100", 16, gpt_1t_text, infinity, true);
    offload_run(probe, "dgx2-v100", 16, gpt_1t_text, zero3, false);
}

/* A trillion parameters on one DGX-2: they fit with ZeRO-Infinity (parameters and optimizer
 * on NVMe), not with ZeRO-3 alone. */
static void test_zero_schedule_1t_fits_one_dgx2_only_with_infinity(void **state)
{
    (void)state;
    Probe pr = run_isolated(scenario_1t_on_dgx2);
    assert_int_equal(pr.n, 2 * O_N);
    assert_true(pr.v[O_PSI] > 1e12);
    assert_true(pr.v[O_OOM] == 0);
    assert_true(pr.v[O_N + O_OOM] == 1);
}

/* ---- symmetric mode: two nodes standing for all of them ---- */

static uint32_t symmetric_ranks;

/* ZeRO-3 of the small model on 6 nodes of dgx-a100-80g, fully or with 2 nodes simulated;
 * records the step time, rank 0's bytes sent and its GPU memory peak. */
static void scenario_symmetric(Probe *probe)
{
    ModelConfig model;
    TrainConfig train;
    Platform p;
    RunSetup setup;
    Err err = {0};
    const char *config = "{\"train_micro_batch_size_per_gpu\": 2, \"bf16\": {\"enabled\": true},"
                         " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 3e7}}";
    if (setup_run(probe, config, 48, &model, &train, &p, &setup))
        return;
    Platform simulated = p;
    if (symmetric_ranks)
        simulated.n_nodes = symmetric_ranks / simulated.gpus_per_node;
    if (engine_init(&simulated, PRECISION_BF16, &err))
        return probe_fail(probe, &err);
    ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED,
                            .n_steps = 2,
                            .has_activations = true,
                            .n_simulated_ranks = symmetric_ranks};
    Graph *g = zero_schedule_build(&model, &train, &p, &setup, &opts, &err);
    EngineOptions eo = {.algo = COLL_ALGO_RING};
    EngineResult r;
    if (g == NULL || engine_run(g, &eo, &r, &err)) {
        graph_destroy(g);
        return probe_fail(probe, &err);
    }
    double sent = 0;
    for (int c = 0; c < COLL_N_KINDS; c++)
        sent += r.coll_bytes[0][c];
    probe_record(probe, r.makespan_s);
    probe_record(probe, sent);
    probe_record(probe, memory_account(r.memory, 0, MEM_GPU)->peak_bytes);
    probe_record(probe, graph_n_ranks(g));
    engine_result_fini(&r);
    graph_destroy(g);
    model_config_fini(&model);
    ds_config_fini(&train);
}

static void test_zero_schedule_symmetric_mode_agrees_with_full(void **state)
{
    (void)state;
    symmetric_ranks = 0;
    Probe full = run_isolated(scenario_symmetric);
    symmetric_ranks = 16;
    Probe sym = run_isolated(scenario_symmetric);
    assert_int_equal(full.n, 4);
    assert_int_equal(sym.n, 4);
    assert_true(full.v[3] == 48 && sym.v[3] == 16);
    assert_close(sym.v[0], full.v[0], 1e-6);  /* step time */
    assert_close(sym.v[1], full.v[1], 1e-9);  /* bytes sent */
    assert_close(sym.v[2], full.v[2], 1e-12); /* memory peak */
}

/* ---- ZeRO-3's NCCL calls: per submodule, per parameter, the tracing step ---- */

/* Builds (no engine) the step graph of the tiny model on 8 GPUs with `config_text` and
 * activation checkpointing `recompute`. */
static Graph *build_with(const char *config_text, const ScheduleOptions *opts,
                         Recompute recompute);

static Graph *build_recompute(const char *config_text, uint32_t n_steps, Zero3Generation gen,
                              Recompute recompute)
{
    ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED,
                            .n_steps = n_steps,
                            .has_activations = true,
                            .zero3_generation = gen};
    return build_with(config_text, &opts, recompute);
}

static Graph *build_loss(const char *config_text, const ScheduleOptions *opts,
                         Recompute recompute, LossKernel loss);

/* The tiny model on 8 GPUs of dgx-a100-80g with these schedule options. */
static Graph *build_with(const char *config_text, const ScheduleOptions *opts, Recompute recompute)
{
    return build_loss(config_text, opts, recompute, LOSS_EAGER);
}

/* ... and this loss kernel. */
static Graph *build_loss(const char *config_text, const ScheduleOptions *opts,
                         Recompute recompute, LossKernel loss)
{
    Err err = {0};
    ModelConfig model;
    TrainConfig train;
    Platform p;
    assert_int_equal(model_config_parse(&model, "tiny.json", model_text, strlen(model_text), &err),
                     0);
    assert_int_equal(ds_config_parse(&train, "ds.json", config_text, strlen(config_text), &err), 0);
    assert_int_equal(platform_load(&p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    BatchPlan batch;
    assert_int_equal(ds_config_resolve_batch(&train, 8, &batch, &err), 0);
    RunSetup setup = {.seq_len = 512,
                      .micro_batch = batch.micro_batch,
                      .grad_accum = batch.grad_accum,
                      .global_batch = batch.global_batch,
                      .n_gpus = 8,
                      .recompute = recompute,
                      .is_flash_attention = true,
                      .act_bytes = 2,
                      .loss = loss};
    Graph *g = zero_schedule_build(&model, &train, &p, &setup, opts, &err);
    if (g == NULL)
        fail_msg("%s", err.msg);
    model_config_fini(&model);
    ds_config_fini(&train);
    return g;
}

/* ... without checkpointing. */
static Graph *build_only(const char *config_text, uint32_t n_steps, Zero3Generation gen)
{
    return build_recompute(config_text, n_steps, gen, RECOMPUTE_NONE);
}

/* Rank 0's collectives labelled `label`, in order: their calls in calls[] (at most 4). */
static int calls_of(const Graph *g, const char *label, uint32_t *calls)
{
    const Op *ops = graph_ops(g);
    const Collective *colls = graph_collectives(g);
    uint32_t want = graph_find_label(g, label);
    int n = 0;
    for (uint32_t i = 0; i < graph_n_ops(g) && n < 4; i++)
        if (ops[i].rank == 0 && ops[i].kind == OP_COLLECTIVE && ops[i].label == want)
            calls[n++] = colls[ops[i].ref].n_calls > 1 ? colls[ops[i].ref].n_calls : 1;
    return n;
}

/* Rank 0's first collective labelled `label`. */
static const Collective *collective_of(const Graph *g, const char *label)
{
    const Op *ops = graph_ops(g);
    uint32_t want = graph_find_label(g, label);
    for (uint32_t i = 0; i < graph_n_ops(g); i++)
        if (ops[i].rank == 0 && ops[i].kind == OP_COLLECTIVE && ops[i].label == want)
            return &graph_collectives(g)[ops[i].ref];
    fail_msg("no collective labelled %s", label);
    return NULL;
}

static const char *const z3_text =
    "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
    " \"zero_optimization\": {\"stage\": 3}}";

/* The tiny Llama's parameter counts, and its layer count in *out_layers (may be NULL). */
static ModelParams tiny_params(uint64_t *out_layers)
{
    Err err = {0};
    ModelConfig model;
    assert_int_equal(model_config_parse(&model, "tiny.json", model_text, strlen(model_text), &err),
                     0);
    ModelParams p;
    params_count(&model, &p);
    if (out_layers)
        *out_layers = model.n_layers;
    model_config_fini(&model);
    return p;
}

/* The prefetch all-gathers of one steady-state layer of the tiny Llama, as DeepSpeed's
 * coordinator walks it (model/zero3_walk.h, tested on hand traces in test_zero3_walk.c). */
static uint32_t tiny_layer_prefetch_calls(bool is_backward)
{
    ModelParams p = tiny_params(NULL);
    Zero3Walk w;
    zero3_walk(p.layer, p.n_layer_modules, 100000, 50000000, 1000000000, is_backward, 2, 2, &w);
    /* every module arrives by prefetch: none is fetched on demand */
    assert_true(w.early_elems == w.gathered_elems);
    assert_int_equal(w.calls_late, 0);
    return w.calls_early;
}

/* Llama layers have 7 gathered submodules (q, k, v, o, gate, up, down; the norms are under
 * the persistence threshold). Current DeepSpeed brings them all by prefetch once the trace is
 * recorded: each fetch_sub_module prefetches while fewer than stage3_max_live_parameters are
 * available, so a model this small is gathered a window of 1e9 elements ahead and only the
 * fetches that find room launch an all-gather; the first layer adds the embedding and the
 * last the output projection, each its own call. The persistent norms are gathered once
 * after the step. */
static void test_zero_schedule_zero3_gathers_per_submodule(void **state)
{
    (void)state;
    Graph *g = build_only(z3_text, 1, ZERO3_GEN_PER_SUBMODULE);
    uint32_t calls[4];
    const uint32_t fwd = tiny_layer_prefetch_calls(false), bwd = tiny_layer_prefetch_calls(true);
    assert_true(fwd >= 1 && fwd <= 7 && bwd >= 1 && bwd <= 7);
    assert_int_equal(calls_of(g, "gather fwd L1", calls), 1);
    assert_int_equal(calls[0], fwd);
    assert_int_equal(calls_of(g, "gather fwd L0", calls), 1);
    assert_int_equal(calls[0], fwd + 1);
    assert_int_equal(calls_of(g, "gather bwd L3", calls), 1);
    assert_int_equal(calls[0], bwd + 1);
    /* 4 layers x 2 norms of 1024 + the final norm, 2 bytes each */
    assert_true(sum_ops(g, OP_COLLECTIVE, COLL_ALL_GATHER, "gather persistent") ==
                (4.0 * 2 + 1) * 1024 * 2);
    graph_destroy(g);
}

static int allocs_of(const Graph *g, StreamKind stream, double bytes);

/* Liger's fused linear cross-entropy reads lm_head.weight itself, so under current DeepSpeed
 * the tiny Llama's untied head (32000 x 1024 bf16 = 65,536,000 bytes) stays gathered from the
 * forward's last layer to the step (zero_schedule.c head_bytes): one compute-stream buffer of
 * that size, and the backward's gather of the last layer leaves the head out, one call and
 * its bytes fewer. The forward gathers it as before. */
static void test_zero_schedule_fused_linear_loss_holds_the_head(void **state)
{
    (void)state;
    const ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED,
                                  .n_steps = 1,
                                  .has_activations = true,
                                  .zero3_generation = ZERO3_GEN_PER_SUBMODULE};
    Graph *eager = build_loss(z3_text, &opts, RECOMPUTE_NONE, LOSS_EAGER);
    Graph *liger = build_loss(z3_text, &opts, RECOMPUTE_NONE, LOSS_FUSED_LINEAR);
    const double head = 32000.0 * 1024 * 2;
    assert_int_equal(allocs_of(eager, STREAM_COMPUTE, head), 0);
    assert_int_equal(allocs_of(liger, STREAM_COMPUTE, head), 1);
    assert_true(sum_ops(eager, OP_COLLECTIVE, COLL_ALL_GATHER, "gather fwd L3") ==
                sum_ops(liger, OP_COLLECTIVE, COLL_ALL_GATHER, "gather fwd L3"));
    assert_true(sum_ops(eager, OP_COLLECTIVE, COLL_ALL_GATHER, "gather bwd L3") -
                    sum_ops(liger, OP_COLLECTIVE, COLL_ALL_GATHER, "gather bwd L3") ==
                head);
    uint32_t calls_eager[4], calls_liger[4];
    assert_int_equal(calls_of(eager, "gather bwd L3", calls_eager), 1);
    assert_int_equal(calls_of(liger, "gather bwd L3", calls_liger), 1);
    assert_int_equal(calls_eager[0] - calls_liger[0], 1);
    graph_destroy(eager);
    graph_destroy(liger);
}

/* With two steps the first records the trace: its gathers are all on demand (one part); the
 * second prefetches. Before DeepSpeed 0.6 every parameter was its own all-gather. */
static void test_zero_schedule_zero3_first_step_and_old_releases(void **state)
{
    (void)state;
    Graph *g = build_only(z3_text, 2, ZERO3_GEN_PER_SUBMODULE);
    uint32_t calls[4];
    assert_int_equal(calls_of(g, "gather fwd L1", calls), 2); /* one per step */
    assert_int_equal(calls[0], 7);                           /* the traced step: on demand */
    assert_int_equal(calls[1], tiny_layer_prefetch_calls(false));
    graph_destroy(g);
    const char *no_persistence =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"stage3_param_persistence_threshold\": 0}}";
    g = build_only(no_persistence, 1, ZERO3_GEN_PER_PARAMETER);
    assert_int_equal(calls_of(g, "gather fwd L1", calls), 1);
    assert_int_equal(calls[0], 9); /* 7 weights and the 2 norms, no biases in Llama */
    /* each of those calls copies c10d's per-rank list (kernels_c10d_list_copies_s) */
    const Collective *c = collective_of(g, "gather fwd L1");
    Platform p;
    Err err = {0};
    assert_int_equal(platform_load(&p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    KernelGpu gpu;
    kernels_gpu(&p, PRECISION_BF16, &gpu);
    assert_true(c->overhead_s > 0);
    assert_true(fabs(c->overhead_s - 9 * kernels_c10d_list_copies_s(&gpu, true, c->bytes / 9, 8)) <
                1e-15);
    graph_destroy(g);
    /* current DeepSpeed's coalesced all-gathers take a flat buffer: no copies */
    g = build_only(z3_text, 1, ZERO3_GEN_PER_SUBMODULE);
    assert_true(collective_of(g, "gather fwd L1")->overhead_s == 0.0);
    graph_destroy(g);
}

/* The flat tensor c10d's list API allocates around the first collective labelled `label` on
 * rank 0: the bytes of the ALLOC on its stream just before it when the next op of that stream
 * frees that buffer; 0 when there is none. */
static double flat_buffer_around(const Graph *g, const char *label, StreamKind stream)
{
    const Op *ops = graph_ops(g);
    const uint32_t want = graph_find_label(g, label), n = graph_n_ops(g);
    uint32_t at = n;
    for (uint32_t i = 0; i < n && at == n; i++)
        if (ops[i].rank == 0 && ops[i].kind == OP_COLLECTIVE && ops[i].label == want)
            at = i;
    assert_true(at < n);
    const Op *before = NULL, *after = NULL; /* rank 0's neighbours on that stream */
    for (uint32_t i = at; i-- > 0 && before == NULL;)
        if (ops[i].rank == 0 && ops[i].stream_kind == stream)
            before = &ops[i];
    for (uint32_t i = at + 1; i < n && after == NULL; i++)
        if (ops[i].rank == 0 && ops[i].stream_kind == stream)
            after = &ops[i];
    if (before == NULL || after == NULL || before->kind != OP_ALLOC || after->kind != OP_FREE ||
        after->ref != before->ref)
        return 0.0;
    return before->amount;
}

/* DeepSpeed before 0.6 gathered each parameter through c10d's list API, whose
 * ProcessGroupNCCL::allgather runs NCCL on a flat tensor of the whole parameter it allocates
 * (flatten_for_scatter_gather): beside the gathered buffer, the largest parameter's bytes for
 * the duration of the call. The tiny Llama's largest layer tensor is an MLP weight, 1024 x
 * 4096 = 4,194,304 elements, 8,388,608 bytes in bf16. Current DeepSpeed gathers into its own
 * flat buffer: no such allocation. */
static void test_zero_schedule_list_api_holds_a_flat_tensor(void **state)
{
    (void)state;
    Graph *g = build_only(z3_text, 1, ZERO3_GEN_PER_PARAMETER);
    assert_true(flat_buffer_around(g, "gather fwd L1", STREAM_GATHER) == 1024.0 * 4096 * 2);
    assert_true(flat_buffer_around(g, "gather bwd L2", STREAM_GATHER) == 1024.0 * 4096 * 2);
    /* the first layer's unit holds the token embedding, 32000 x 1024 */
    assert_true(flat_buffer_around(g, "gather fwd L0", STREAM_GATHER) == 32000.0 * 1024 * 2);
    /* reduce_scatter flattens its input list the same way; a bucket may hold any parameter,
     * so it is the model's largest (the untied output projection, 32000 x 1024 as well); the
     * first bucket (the last layer and the head) is larger than that */
    assert_true(flat_buffer_around(g, "grad bucket", STREAM_REDUCE) == 32000.0 * 1024 * 2);
    graph_destroy(g);
    g = build_only(z3_text, 1, ZERO3_GEN_PER_SUBMODULE);
    assert_true(flat_buffer_around(g, "gather fwd L1", STREAM_GATHER) == 0.0);
    graph_destroy(g);
}

/* A reduce_bucket_size of 0 (valid: DeepSpeedZeroConfig ge=0) or 1 still reduces each
 * parameter in a bucket of its own: stage 0's buckets after backward are at least the
 * largest module, so the step has ceil(Psi / largest) of them (it looped forever on 0, and
 * made Psi one-element buckets on 1: fuzz_pipeline's timeout, tests/fuzz/regressions). */
static void test_zero_schedule_tiny_reduce_bucket_is_one_parameter(void **state)
{
    (void)state;
    const char *texts[2] = {
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 0, \"reduce_bucket_size\": 0}}",
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 0, \"reduce_bucket_size\": 1}}"};
    for (int k = 0; k < 2; k++) {
        Graph *g = build_only(texts[k], 1, ZERO3_GEN_PER_SUBMODULE);
        uint32_t n = 0, want = graph_find_label(g, "grad bucket");
        const Op *ops = graph_ops(g);
        for (uint32_t i = 0; i < graph_n_ops(g); i++)
            n += ops[i].rank == 0 && ops[i].kind == OP_COLLECTIVE && ops[i].label == want;
        /* the tiny Llama's parameters, in buckets of its largest module */
        ModelParams p = tiny_params(NULL);
        assert_int_equal(n, (uint32_t)ceil((double)p.total / (double)p.largest_module));
        graph_destroy(g);
    }
}

/* ZeRO-Infinity's optimizer steps sub-group by sub-group, and DeepSpeed's sub-groups hold
 * whole parameter partitions: a sub_group_size of 1 makes one sub-group per parameter tensor
 * (at most params_n_tensors), not one per element. */
static void test_zero_schedule_nvme_sub_groups_are_whole_tensors(void **state)
{
    (void)state;
    Graph *g = build_only(
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"sub_group_size\": 1,"
        " \"offload_optimizer\": {\"device\": \"nvme\", \"nvme_path\": \"/x\"}}}",
        1, ZERO3_GEN_PER_SUBMODULE);
    uint32_t n = 0, want = graph_find_label(g, "optimizer states from nvme");
    const Op *ops = graph_ops(g);
    for (uint32_t i = 0; i < graph_n_ops(g); i++)
        n += ops[i].rank == 0 && ops[i].label == want;
    uint64_t n_layers;
    ModelParams p = tiny_params(&n_layers);
    assert_true(n >= 2 && n <= params_n_tensors(&p, n_layers));
    graph_destroy(g);
}

/* DeepSpeed reduces a bucket as soon as the next parameter's gradient would overflow it, so
 * with reduce_bucket_size 1.5e6 each 1M and 4M weight of the tiny Llama ends a bucket: the
 * middle layers' op stands for 7 calls (up, gate, post-norm, v, k, q end one each, the rest
 * one more), the last layer's 9 (the 32.8M output projection and the final norm first), the
 * first layer's 8 (its embedding after q). */
static void test_zero_schedule_grad_buckets_count_deepspeed_calls(void **state)
{
    (void)state;
    const char *small_buckets =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 1500000}}";
    Graph *g = build_only(small_buckets, 1, ZERO3_GEN_PER_SUBMODULE);
    uint32_t calls[4];
    assert_int_equal(calls_of(g, "grad bucket", calls), 4);
    assert_int_equal(calls[0], 9);
    assert_int_equal(calls[1], 7);
    assert_int_equal(calls[2], 7);
    assert_int_equal(calls[3], 8);
    graph_destroy(g);
}

/* A mixture of experts with expert parallelism, as a graph (no SimGrid): the tiny Mixtral of
 * test_moe.c (2 MoE layers, 8 experts, 440,128 parameters of which 393,216 experts) on 8
 * GPUs with ep 4, ZeRO-2, one bucket. Per MoE layer every rank joins a dispatch and a combine
 * all-to-all in forward and both again in backward (8 in all), each over its expert-parallel
 * group of 4; the expert gradients (its 2 layers x 2 local experts x 24,576, bf16) are
 * reduced only over the expert-data-parallel group of 8 / 4 = 2, the other 46,912 parameters'
 * gradients over all 8. */
static void test_zero_schedule_moe_graph(void **state)
{
    (void)state;
    static const char *const moe_text =
        "{\"model_type\": \"mixtral\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
        "\"num_attention_heads\": 4, \"num_key_value_heads\": 4, \"intermediate_size\": 128, "
        "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 100, "
        "\"max_position_embeddings\": 64}";
    static const char *const ds =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 2, \"reduce_bucket_size\": 1e15,"
        " \"use_multi_rank_bucket_allreduce\": false}}";
    ModelConfig model;
    TrainConfig train;
    Platform p;
    Err err = {0};
    assert_int_equal(model_config_parse(&model, "tiny.json", moe_text, strlen(moe_text), &err), 0);
    assert_int_equal(ds_config_parse(&train, "ds.json", ds, strlen(ds), &err), 0);
    assert_int_equal(platform_load(&p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    assert_int_equal(platform_resize(&p, 8, 0, &err), 0);
    RunSetup setup = {.seq_len = 16, .micro_batch = 1, .grad_accum = 1, .global_batch = 8,
                      .n_gpus = 8, .recompute = RECOMPUTE_NONE, .is_flash_attention = true,
                      .act_bytes = 2, .ep_size = 4, .capacity_factor = 1.0};
    ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1};
    Graph *g = zero_schedule_build(&model, &train, &p, &setup, &opts, &err);
    if (g == NULL)
        fprintf(stderr, "%s\n", err.msg);
    assert_non_null(g);
    const Collective *c = graph_collectives(g);
    uint32_t n_a2a = 0;
    double expert_grads = 0.0, other_grads = 0.0;
    for (uint32_t i = 0; i < graph_n_collectives(g); i++) {
        uint32_t n;
        const uint32_t *members = graph_group(g, c[i].group, &n);
        if (c[i].kind == COLL_ALL_TO_ALL) {
            assert_int_equal(n, 4);
            assert_int_equal(members[1] - members[0], 1); /* consecutive ranks */
            assert_true(fabs(c[i].bytes - 16.0 * 2 * 64 * 2) < 1e-9); /* routed copies x h */
            n_a2a += members[0] == 0;
        } else if (c[i].kind == COLL_REDUCE_SCATTER && n == 2) {
            assert_int_equal(members[1] - members[0], 4); /* the same experts, stride ep */
            expert_grads += members[0] == 0 ? c[i].bytes : 0.0;
        } else if (c[i].kind == COLL_REDUCE_SCATTER) {
            assert_int_equal(n, 8);
            other_grads += c[i].bytes;
        }
    }
    assert_int_equal(n_a2a, 8);
    assert_true(fabs(expert_grads - 2.0 * 2 * 24576 * 2) < 1e-9);
    assert_true(fabs(other_grads - 46912.0 * 2) < 1e-9);
    graph_destroy(g);
    ds_config_fini(&train);

    /* ZeRO-3: each MoE layer's 2 local experts (98,304 bf16 bytes) are gathered inside the
     * expert-data-parallel group, one fetch per expert projection (2 x 3 NCCL calls), before
     * the layer's forward and again before its backward */
    static const char *const ds3 =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"stage3_param_persistence_threshold\": 0}}";
    assert_int_equal(ds_config_parse(&train, "ds.json", ds3, strlen(ds3), &err), 0);
    g = zero_schedule_build(&model, &train, &p, &setup, &opts, &err);
    assert_non_null(g);
    c = graph_collectives(g);
    uint32_t n_expert_gathers = 0;
    for (uint32_t i = 0; i < graph_n_collectives(g); i++) {
        uint32_t n;
        const uint32_t *members = graph_group(g, c[i].group, &n);
        if (c[i].kind != COLL_ALL_GATHER || n != 2 || members[0] != 0)
            continue;
        assert_int_equal(c[i].n_calls, 6);
        assert_true(fabs(c[i].bytes - 2.0 * 24576 * 2) < 1e-9);
        n_expert_gathers++;
    }
    assert_int_equal(n_expert_gathers, 4); /* 2 layers x (forward, backward) */
    graph_destroy(g);
    model_config_fini(&model);
    ds_config_fini(&train);
}

/* ---- DeepSpeed before 0.6 (v0.3.14), what its synchronisations and loops add ---- */

/* Rank 0's first op labelled `label` of kind `kind`; n_ops when there is none. */
static uint32_t op_of(const Graph *g, const char *label, OpKind kind)
{
    const Op *ops = graph_ops(g);
    const uint32_t want = graph_find_label(g, label), n = graph_n_ops(g);
    for (uint32_t i = 0; i < n; i++)
        if (ops[i].rank == 0 && ops[i].kind == kind && ops[i].label == want)
            return i;
    return n;
}

/* True when op `after` waits for op `before` (a cross-stream dependency). */
static bool waits_for(const Graph *g, uint32_t before, uint32_t after)
{
    const Op *ops = graph_ops(g);
    const OpId *succ = graph_successors(g);
    for (uint32_t k = ops[before].succ_begin; k < ops[before].succ_end; k++)
        if (succ[k] == after)
            return true;
    return false;
}

/* Rank 0's op just before op `at` on the same stream. */
static uint32_t stream_prev(const Graph *g, uint32_t at)
{
    const Op *ops = graph_ops(g);
    for (uint32_t i = at; i-- > 0;)
        if (ops[i].rank == 0 && ops[i].stream == ops[at].stream)
            return i;
    fail_msg("op %u is first on its stream", at);
    return at;
}

/* _allgather_param (partition_parameters.py, v0.3.14) calls torch.cuda.synchronize() before
 * each all_gather, which waits for every stream, the reduce stream included: a gradient
 * bucket flushed during backward must finish before the next layer's gather starts. With
 * reduce_bucket_size 1e7 the tiny Llama (16,777,216 parameters per layer) flushes the last
 * layer's bucket when layer 2's gradients arrive, so layer 1's backward gather (its first op
 * on the gather stream: the parameter buffer) waits for that bucket. Current DeepSpeed's
 * gathers wait on their own events only: no gather waits for a bucket. */
static void test_zero_schedule_list_api_gathers_drain_the_reduce_stream(void **state)
{
    (void)state;
    const char *small_buckets =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 10000000}}";
    for (int gen = 0; gen < 2; gen++) {
        Graph *g = build_only(small_buckets, 1, gen ? ZERO3_GEN_PER_PARAMETER
                                                    : ZERO3_GEN_PER_SUBMODULE);
        const Op *ops = graph_ops(g);
        const uint32_t n = graph_n_ops(g), gather = op_of(g, "gather bwd L1", OP_COLLECTIVE);
        const uint32_t bucket_label = graph_find_label(g, "grad bucket");
        assert_true(gather < n);
        uint32_t bucket = n; /* the last bucket issued before that gather */
        for (uint32_t i = 0; i < gather; i++)
            if (ops[i].rank == 0 && ops[i].kind == OP_COLLECTIVE && ops[i].label == bucket_label)
                bucket = i;
        assert_true(bucket < n);
        /* the gather's buffer, then c10d's flat tensor (before 0.6), then the call */
        uint32_t first = stream_prev(g, gather);
        if (gen)
            first = stream_prev(g, first);
        assert_int_equal(ops[first].kind, OP_ALLOC);
        assert_int_equal(waits_for(g, bucket, first), gen == 1);
        /* nothing on the gather stream waits for any bucket in the current generation */
        for (uint32_t i = 0; i < n && !gen; i++) {
            if (ops[i].kind != OP_COLLECTIVE || ops[i].label != bucket_label)
                continue;
            const OpId *succ = graph_successors(g);
            for (uint32_t k = ops[i].succ_begin; k < ops[i].succ_end; k++)
                assert_true(ops[succ[k]].stream_kind != STREAM_GATHER);
        }
        graph_destroy(g);
    }
}

/* ZeRO-3 from 0.6 with the optimizer on the CPU copies each reduced gradient partition to the
 * host with a blocking copy_ in backward's hook (stage3.py __partition_grads): the backward
 * kernels after a bucket wait for its copy to the host. Before 0.6 the copy was non-blocking:
 * no compute op waits for one. */
static void test_zero_schedule_offload_blocks_backward_on_the_host_copy(void **state)
{
    (void)state;
    const char *offload =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 10000000,"
        " \"offload_optimizer\": {\"device\": \"cpu\"}}}";
    for (int gen = 0; gen < 2; gen++) {
        Graph *g = build_only(offload, 1, gen ? ZERO3_GEN_PER_PARAMETER : ZERO3_GEN_PER_SUBMODULE);
        const Op *ops = graph_ops(g);
        const OpId *succ = graph_successors(g);
        const uint32_t n = graph_n_ops(g), copy_label = graph_find_label(g, "gradients to host");
        uint32_t copies = 0, waited = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (ops[i].rank != 0 || ops[i].label != copy_label)
                continue;
            copies++;
            bool has_compute = false;
            for (uint32_t k = ops[i].succ_begin; k < ops[i].succ_end; k++)
                has_compute |= ops[succ[k]].stream_kind == STREAM_COMPUTE &&
                               ops[succ[k]].kind == OP_COMPUTE;
            waited += has_compute;
        }
        assert_true(copies >= 2);
        if (gen)
            assert_int_equal(waited, 0);
        else
            assert_int_equal(waited, 2); /* the buckets flushed before layers 1 and 0's
                                            backward; the last ones precede no backward kernel */
        graph_destroy(g);
    }
}

/* Under full recomputation the recomputed forward runs the module hooks again: each module is
 * fetched, recomputed, and released by its post-forward hook unless the parameters traced
 * before its next use (its backward) stay under stage3_max_reuse_distance (stage3.py v0.3.14,
 * release_sub_module -> _keep_for_later). Between module j's recomputation and its backward
 * come the recomputation and backward of the modules after it. The tiny Llama's layer lists
 * q, k, v, o (1,048,576 each), gate, up, down (4,194,304 each) after its two resident norms:
 * distances down 0, up 2 x 4,194,304 = 8,388,608, gate 2 x 8,388,608 = 16,777,216, o
 * 25,165,824, v 27,262,976, k 29,360,128, q 31,457,280. With a reuse distance of 1e7 down
 * and up are kept, gate, o, v, k, q released and gathered again before the backward
 * kernels: 4,194,304 + 4 x 1,048,576 = 8,388,608 elements, 16,777,216 bytes in bf16, 5 calls,
 * after the recomputation and before the backward. With DeepSpeed's default of 1e9 every
 * module of so small a layer is kept: no second gather; nor in the current generation. */
static void test_zero_schedule_list_api_regathers_after_recompute(void **state)
{
    (void)state;
    const char *short_reuse =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"stage3_max_reuse_distance\": 10000000}}";
    Graph *g = build_recompute(short_reuse, 1, ZERO3_GEN_PER_PARAMETER, RECOMPUTE_FULL);
    uint32_t calls[4];
    assert_int_equal(calls_of(g, "regather bwd L1", calls), 1);
    assert_int_equal(calls[0], 5);
    const Collective *c = collective_of(g, "regather bwd L1");
    assert_true(c->bytes == 8388608.0 * 2);
    const uint32_t regather = op_of(g, "regather bwd L1", OP_COLLECTIVE);
    const uint32_t recompute = op_of(g, "recompute L1", OP_COMPUTE);
    const uint32_t backward = op_of(g, "bwd L1", OP_COMPUTE);
    assert_true(recompute < regather && regather < backward);
    /* c10d's flat tensor, of the largest re-gathered tensor (the 1024 x 4096 gate
     * projection, 8,388,608 bytes: one call at a time), is allocated once the recomputation
     * is done; the backward waits */
    const uint32_t flat = stream_prev(g, regather);
    assert_int_equal(graph_ops(g)[flat].kind, OP_ALLOC);
    assert_true(graph_ops(g)[flat].amount == 1024.0 * 4096 * 2);
    assert_true(waits_for(g, recompute, flat));
    assert_true(waits_for(g, regather, backward));
    graph_destroy(g);
    g = build_recompute(z3_text, 1, ZERO3_GEN_PER_PARAMETER, RECOMPUTE_FULL);
    assert_true(op_of(g, "regather bwd L1", OP_COLLECTIVE) == graph_n_ops(g));
    graph_destroy(g);
    g = build_recompute(short_reuse, 1, ZERO3_GEN_PER_SUBMODULE, RECOMPUTE_FULL);
    assert_true(op_of(g, "regather bwd L1", OP_COLLECTIVE) == graph_n_ops(g));
    graph_destroy(g);
}

/* After the step DeepSpeed 0.3.14 all-gathers the persistent parameters in one list call
 * (stage3.py _post_step -> partition_parameters.py _allgather_params) and copies each rank's
 * partition of each into place from Python, one copy_ per rank whose partition starts inside
 * the parameter. The tiny Llama keeps 9 norms of 1,024 resident (2 per layer, the final
 * one); on 8 GPUs each partition is ceil(1024 / 8) = 128 elements, 1024 / 128 = 8 copies per
 * norm, 72 kernels, each at the platform's launch floor (their 36,864 bytes read and written
 * take nanoseconds): 72 x kernel_launch_s on the compute stream, after the gather, in the
 * optimizer step. The current generation gathers them into their own buffers: no copies. */
static void test_zero_schedule_list_api_copies_persistent_parameters(void **state)
{
    (void)state;
    Graph *g = build_only(z3_text, 1, ZERO3_GEN_PER_PARAMETER);
    const uint32_t copies = op_of(g, "persistent copies", OP_COMPUTE);
    const uint32_t gather = op_of(g, "gather persistent", OP_COLLECTIVE);
    assert_true(copies < graph_n_ops(g));
    const Op *op = &graph_ops(g)[copies];
    assert_int_equal(op->purpose, PURPOSE_OPTIMIZER);
    assert_int_equal(op->stream_kind, STREAM_COMPUTE);
    assert_true(waits_for(g, gather, copies));
    Platform p;
    Err err = {0};
    assert_int_equal(platform_load(&p, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    /* the engine's GPU speed (cost.h): seconds x peak x gemm_efficiency */
    const double rate = platform_peak_flops_per_s(&p, PRECISION_BF16) * p.gpu.gemm_efficiency;
    assert_close(op->amount / rate, 72.0 * p.gpu.kernel_launch_s, 1e-9);
    graph_destroy(g);
    g = build_only(z3_text, 1, ZERO3_GEN_PER_SUBMODULE);
    assert_true(op_of(g, "persistent copies", OP_COMPUTE) == graph_n_ops(g));
    graph_destroy(g);
}

/* DeepSpeed before 0.6 with contiguous_gradients off (stage3.py v0.3.14 reduce_ipg_grads ->
 * buffered_reduce_fallback -> allreduce_bucket): the buckets fill as with it (flushed when
 * the next gradient would overflow reduce_bucket_size), but each is flattened and all-reduced
 * whole, one call per bucket, instead of one reduce-scatter per parameter. With buckets of
 * 1.5e6 the tiny Llama's calls are those of the current generation (9, 7, 7, 8: see
 * test_zero_schedule_grad_buckets_count_deepspeed_calls); every gradient is all-reduced once,
 * Psi x 2 bytes in all. Each call flattens and divides the bucket and copies each tensor back:
 * 6 x its bytes through HBM and 2 x calls + tensors kernels. The first bucket holds the
 * untied head (32,768,000), the final norm, layer 3's 9 tensors: 11 tensors. */
static void test_zero_schedule_list_api_fallback_all_reduces_buckets(void **state)
{
    (void)state;
    const char *fallback =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 1500000,"
        " \"contiguous_gradients\": false}}";
    Graph *g = build_only(fallback, 1, ZERO3_GEN_PER_PARAMETER);
    uint32_t calls[4];
    assert_int_equal(calls_of(g, "grad bucket", calls), 4);
    assert_int_equal(calls[0], 9);
    assert_int_equal(calls[1], 7);
    assert_int_equal(calls[2], 7);
    assert_int_equal(calls[3], 8);
    const Collective *c = collective_of(g, "grad bucket");
    assert_int_equal(c->kind, COLL_ALL_REDUCE);
    const ModelParams p = tiny_params(NULL);
    assert_true(sum_ops(g, OP_COLLECTIVE, COLL_ALL_REDUCE, "grad bucket") ==
                2.0 * (double)p.total);
    assert_true(sum_ops(g, OP_COLLECTIVE, COLL_REDUCE_SCATTER, "grad bucket") == 0.0);
    Platform pf;
    Err err = {0};
    assert_int_equal(platform_load(&pf, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    KernelGpu gpu;
    kernels_gpu(&pf, PRECISION_BF16, &gpu);
    KernelPass pass = {.memory_s = kernels_memory_s(&gpu, 6.0 * c->bytes),
                       .n_kernels = 2.0 * 9 + 11};
    assert_close(c->overhead_s, kernels_pass_s(&gpu, &pass), 1e-12);
    graph_destroy(g);
    /* with contiguous_gradients (the default) the same buckets are per-parameter
     * reduce-scatters */
    g = build_only(z3_text, 1, ZERO3_GEN_PER_PARAMETER);
    assert_int_equal(collective_of(g, "grad bucket")->kind, COLL_REDUCE_SCATTER);
    graph_destroy(g);
}

/* ZeRO-1 without contiguous_gradients (what every release from 0.4.4 to 0.12.x runs at stage
 * 1, ds_config.c; stage2.py reduce_ipg_grads -> buffered_reduce_fallback -> allreduce_bucket):
 * each bucket is flattened, divided and all-reduced whole, then copied back tensor by tensor,
 * 6 x its bytes through HBM beside the NCCL call; the gradients reduced add up to Psi x 2
 * bytes. With the contiguous buffer the same buckets run no such pass. */
static void test_zero_schedule_stage1_fallback_all_reduces_buckets(void **state)
{
    (void)state;
    const char *z1 = "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                     " \"zero_optimization\": {\"stage\": 1, \"contiguous_gradients\": false}}";
    Graph *g = build_only(z1, 1, ZERO3_GEN_PER_SUBMODULE);
    const Collective *c = collective_of(g, "grad bucket");
    assert_int_equal(c->kind, COLL_ALL_REDUCE);
    const ModelParams p = tiny_params(NULL);
    assert_true(sum_ops(g, OP_COLLECTIVE, COLL_ALL_REDUCE, "grad bucket") ==
                2.0 * (double)p.total);
    Platform pf;
    Err err = {0};
    assert_int_equal(platform_load(&pf, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    KernelGpu gpu;
    kernels_gpu(&pf, PRECISION_BF16, &gpu);
    assert_true(c->overhead_s >= kernels_memory_s(&gpu, 6.0 * c->bytes));
    graph_destroy(g);
    g = build_only("{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                   " \"zero_optimization\": {\"stage\": 1}}",
                   1, ZERO3_GEN_PER_SUBMODULE);
    assert_true(collective_of(g, "grad bucket")->overhead_s == 0.0);
    graph_destroy(g);
}

/* Stages 1-2 before DeepSpeed 0.13 all-gather the stepped parameters on c10d's list API
 * (runtime/utils.py all_gather_dp_groups): each call copies its output out of NCCL's flat
 * buffer into the 8 ranks' partitions, 2 x its bytes through HBM in 8 kernels. */
static void test_zero_schedule_stage12_list_param_gather_copies(void **state)
{
    (void)state;
    const char *z1 = "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                     " \"zero_optimization\": {\"stage\": 1}}";
    ScheduleOptions opts = {.variant = SCHEDULE_DEEPSPEED, .n_steps = 1, .has_activations = true,
                            .is_list_param_gather = true};
    Graph *g = build_with(z1, &opts, RECOMPUTE_NONE);
    const Collective *c = collective_of(g, "gather params");
    assert_int_equal(c->kind, COLL_ALL_GATHER);
    Platform pf;
    Err err = {0};
    assert_int_equal(platform_load(&pf, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err), 0);
    KernelGpu gpu;
    kernels_gpu(&pf, PRECISION_BF16, &gpu);
    const double calls = c->n_calls > 1 ? (double)c->n_calls : 1.0;
    KernelPass pass = {.memory_s = kernels_memory_s(&gpu, 2.0 * c->bytes / calls),
                       .n_kernels = 8};
    assert_close(c->overhead_s, calls * kernels_pass_s(&gpu, &pass), 1e-12);
    graph_destroy(g);
    opts.is_list_param_gather = false; /* 0.13 and later: all_gather_into_tensor */
    g = build_with(z1, &opts, RECOMPUTE_NONE);
    assert_true(collective_of(g, "gather params")->overhead_s == 0.0);
    graph_destroy(g);
}

/* Rank 0's held-gradient allocation before each "grad bucket" collective, in order: the
 * ALLOC on the reduce stream two ops before it (c10d's flat tensor is the one just before);
 * 0 where there is none. At most 8. */
static int held_before_buckets(const Graph *g, double *held)
{
    const Op *ops = graph_ops(g);
    const uint32_t want = graph_find_label(g, "grad bucket"), n = graph_n_ops(g);
    int k = 0;
    for (uint32_t at = 0; at < n && k < 8; at++) {
        if (ops[at].rank != 0 || ops[at].kind != OP_COLLECTIVE || ops[at].label != want)
            continue;
        const Op *prev[2] = {NULL, NULL};
        for (uint32_t i = at; i-- > 0 && prev[1] == NULL;)
            if (ops[i].rank == 0 && ops[i].stream_kind == STREAM_REDUCE)
                prev[prev[0] == NULL ? 0 : 1] = &ops[i];
        held[k++] = prev[0] && prev[1] && prev[0]->kind == OP_ALLOC && prev[1]->kind == OP_ALLOC
                        ? prev[1]->amount
                        : 0.0;
    }
    return k;
}

/* Rank 0's allocations of `bytes` on `stream` (category buffers). */
static int allocs_of(const Graph *g, StreamKind stream, double bytes)
{
    const Op *ops = graph_ops(g);
    int k = 0;
    for (uint32_t i = 0; i < graph_n_ops(g); i++)
        k += ops[i].rank == 0 && ops[i].kind == OP_ALLOC && ops[i].stream_kind == stream &&
             ops[i].category == MEM_BUFFERS && ops[i].amount == bytes;
    return k;
}

/* DeepSpeed 0.3.14's stage3.py holds (zero_schedule.c grad_holds_begin): with
 * contiguous_gradients, backward() allocates two ipg buffers of reduce_bucket_size fp16
 * elements (overlap_comm, stage 3's default): 2 x 1,500,000 x 2 = 3,000,000 bytes each, for
 * the whole backward; a parameter above reduce_bucket_size is reduced from its own full
 * gradient, which previous_reduced_grads keeps until the next bucket. With reduce_bucket_size
 * 1.5e6 the tiny Llama's tensors above it are its MLP weights (1024 x 4096 = 4,194,304) and
 * the embedding and untied head (32000 x 1024 = 32,768,000); bf16 gradients, 2 bytes. The
 * flushes are the head with layer 3, then layers 2, 1 and 0 (with the embedding): held
 * 65,536,000, then 8,388,608 twice, then 65,536,000 bytes. Without contiguous_gradients there
 * is no ipg buffer, and the last bucket's full gradients are held: max(1.5e6, largest tensor)
 * elements, the same figures here. The current generation holds no gradients past their
 * reduction. */
static void test_zero_schedule_list_api_holds_gradients(void **state)
{
    (void)state;
    const char *contiguous =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 1500000}}";
    const double expected[4] = {32768000.0 * 2, 4194304.0 * 2, 4194304.0 * 2, 32768000.0 * 2};
    double held[8];
    Graph *g = build_only(contiguous, 1, ZERO3_GEN_PER_PARAMETER);
    assert_int_equal(allocs_of(g, STREAM_COMPUTE, 1500000.0 * 2), 2);
    assert_int_equal(held_before_buckets(g, held), 4);
    for (int i = 0; i < 4; i++)
        assert_true(held[i] == expected[i]);
    graph_destroy(g);
    const char *one_buffer =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 1500000,"
        " \"overlap_comm\": false}}";
    g = build_only(one_buffer, 1, ZERO3_GEN_PER_PARAMETER);
    assert_int_equal(allocs_of(g, STREAM_COMPUTE, 1500000.0 * 2), 1);
    graph_destroy(g);
    const char *fallback =
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 1500000,"
        " \"contiguous_gradients\": false}}";
    g = build_only(fallback, 1, ZERO3_GEN_PER_PARAMETER);
    assert_int_equal(allocs_of(g, STREAM_COMPUTE, 1500000.0 * 2), 0);
    assert_int_equal(held_before_buckets(g, held), 4);
    for (int i = 0; i < 4; i++)
        assert_true(held[i] == expected[i]);
    graph_destroy(g);
    g = build_only(contiguous, 1, ZERO3_GEN_PER_SUBMODULE);
    /* the current generation's one run-long ipg buffer (test_zero_schedule_ipg_buffers) */
    assert_int_equal(allocs_of(g, STREAM_COMPUTE, 1500000.0 * 2), 1);
    assert_int_equal(held_before_buckets(g, held), 4);
    for (int i = 0; i < 4; i++)
        assert_true(held[i] == 0.0);
    graph_destroy(g);
}

/* Rank 0's ipg buffers: the compute-stream MEM_BUFFERS allocations of `bytes`, each with the
 * number of backward kernels between its allocation and its free (spanned[], at most 4) and
 * whether any compute op comes before it (late[]). Returns how many. */
static int ipg_spans(const Graph *g, double bytes, int *spanned, bool *late)
{
    const Op *ops = graph_ops(g);
    const uint32_t n = graph_n_ops(g);
    int k = 0;
    for (uint32_t i = 0; i < n && k < 4; i++) {
        if (ops[i].rank != 0 || ops[i].kind != OP_ALLOC || ops[i].stream_kind != STREAM_COMPUTE ||
            ops[i].category != MEM_BUFFERS || ops[i].amount != bytes)
            continue;
        late[k] = false;
        for (uint32_t j = 0; j < i; j++)
            late[k] = late[k] || (ops[j].rank == 0 && ops[j].kind == OP_COMPUTE);
        spanned[k] = 0;
        uint32_t j = i + 1;
        for (; j < n && !(ops[j].kind == OP_FREE && ops[j].ref == ops[i].ref); j++)
            spanned[k] += ops[j].rank == 0 && ops[j].kind == OP_COMPUTE &&
                          ops[j].purpose == PURPOSE_BACKWARD;
        if (j == n)
            fail_msg("ipg buffer %u never freed", ops[i].ref);
        k++;
    }
    return k;
}

/* The ipg buffers of the current DeepSpeed (v0.19.5), on the tiny Llama (L layers, one
 * backward kernel op each) over 8 GPUs, bf16, reduce_bucket_size 1.5e6:
 * - ZeRO-3 (stage3.py __init__ "# IPG"): one buffer of 1.5e6 x 2 (bf16 communication) =
 *   3,000,000 bytes before any kernel, freed after the run's last (every backward kernel
 *   inside: L per micro-batch, 2 micro-batches = 2L), overlap_comm or not; 1.5e6 x 4 =
 *   6,000,000 with communication_data_type fp32; none without contiguous_gradients;
 * - ZeRO-2 (stage_1_and_2.py setup_buckets ... _release_ipg_buffers): per micro-batch's
 *   backward two buffers of 1.5e6 x 2 = 3,000,000 bytes with overlap_comm (one without),
 *   each spanning that backward's L kernels: 2 micro-batches -> 4 buffers;
 * - ZeRO-1 (no epilogue between boundaries): one buffer (overlap_comm false), set up in the
 *   first micro-batch's backward and freed after the boundary's: spanning 2L kernels. */
static void test_zero_schedule_ipg_buffers(void **state)
{
    (void)state;
    uint64_t L = 0;
    (void)tiny_params(&L);
    int spanned[4];
    bool late[4];
    const char *head = "{\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 2,"
                       " \"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"reduce_bucket_size\":"
                       " 1500000, ";
    char text[512];
    const char *z3[3] = {"\"stage\": 3}}", "\"stage\": 3, \"overlap_comm\": false}}",
                         "\"stage\": 3}, \"communication_data_type\": \"fp32\"}"};
    const double z3_bytes[3] = {1500000.0 * 2, 1500000.0 * 2, 1500000.0 * 4};
    for (int c = 0; c < 3; c++) {
        snprintf(text, sizeof text, "%s%s", head, z3[c]);
        Graph *g = build_only(text, 1, ZERO3_GEN_PER_SUBMODULE);
        assert_int_equal(ipg_spans(g, z3_bytes[c], spanned, late), 1);
        assert_false(late[0]);
        assert_int_equal(spanned[0], (int)(2 * L));
        graph_destroy(g);
    }
    snprintf(text, sizeof text, "%s%s", head, "\"stage\": 3, \"contiguous_gradients\": false}}");
    Graph *g = build_only(text, 1, ZERO3_GEN_PER_SUBMODULE);
    assert_int_equal(ipg_spans(g, 1500000.0 * 2, spanned, late), 0);
    graph_destroy(g);

    snprintf(text, sizeof text, "%s%s", head, "\"stage\": 2, \"overlap_comm\": true}}");
    g = build_only(text, 1, ZERO3_GEN_PER_SUBMODULE);
    assert_int_equal(ipg_spans(g, 1500000.0 * 2, spanned, late), 4);
    for (int k = 0; k < 4; k++) {
        assert_true(late[k]); /* after the forward */
        assert_int_equal(spanned[k], (int)L);
    }
    graph_destroy(g);
    snprintf(text, sizeof text, "%s%s", head, "\"stage\": 2}}");
    g = build_only(text, 1, ZERO3_GEN_PER_SUBMODULE);
    assert_int_equal(ipg_spans(g, 1500000.0 * 2, spanned, late), 2);
    graph_destroy(g);

    snprintf(text, sizeof text, "%s%s", head, "\"stage\": 1}}");
    g = build_only(text, 1, ZERO3_GEN_PER_SUBMODULE);
    assert_int_equal(ipg_spans(g, 1500000.0 * 2, spanned, late), 1);
    assert_true(late[0]);
    assert_int_equal(spanned[0], (int)(2 * L));
    graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_schedule_oracles_one_node),
        cmocka_unit_test(test_zero_schedule_oracles_two_nodes),
        cmocka_unit_test(test_zero_schedule_follows_deepspeed),
        cmocka_unit_test(test_zero_schedule_activation_peak_matches_model),
        cmocka_unit_test(test_zero_schedule_offload_moves_2psi_each_way),
        cmocka_unit_test(test_zero_schedule_partial_offload_moves_only_the_offloaded_part),
        cmocka_unit_test(test_zero_schedule_partial_offload_returns_gpu_updates_to_host),
        cmocka_unit_test(test_zero_schedule_infinity_reads_and_writes_states_once),
        cmocka_unit_test(test_zero_schedule_1t_fits_one_dgx2_only_with_infinity),
        cmocka_unit_test(test_zero_schedule_symmetric_mode_agrees_with_full),
        cmocka_unit_test(test_zero_schedule_zero3_gathers_per_submodule),
        cmocka_unit_test(test_zero_schedule_fused_linear_loss_holds_the_head),
        cmocka_unit_test(test_zero_schedule_zero3_first_step_and_old_releases),
        cmocka_unit_test(test_zero_schedule_grad_buckets_count_deepspeed_calls),
        cmocka_unit_test(test_zero_schedule_list_api_holds_a_flat_tensor),
        cmocka_unit_test(test_zero_schedule_tiny_reduce_bucket_is_one_parameter),
        cmocka_unit_test(test_zero_schedule_nvme_sub_groups_are_whole_tensors),
        cmocka_unit_test(test_zero_schedule_moe_graph),
        cmocka_unit_test(test_zero_schedule_list_api_gathers_drain_the_reduce_stream),
        cmocka_unit_test(test_zero_schedule_offload_blocks_backward_on_the_host_copy),
        cmocka_unit_test(test_zero_schedule_list_api_regathers_after_recompute),
        cmocka_unit_test(test_zero_schedule_list_api_copies_persistent_parameters),
        cmocka_unit_test(test_zero_schedule_list_api_holds_gradients),
        cmocka_unit_test(test_zero_schedule_ipg_buffers),
        cmocka_unit_test(test_zero_schedule_list_api_fallback_all_reduces_buckets),
        cmocka_unit_test(test_zero_schedule_stage1_fallback_all_reduces_buckets),
        cmocka_unit_test(test_zero_schedule_stage12_list_param_gather_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
