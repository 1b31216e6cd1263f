/*
 * test_estimate_report.c - `zerosim estimate`'s text and JSON reports (report/estimate_report.c).
 *
 * Builds the estimate of GPT-3 175B from the shipped presets (ZeRO-3 on 1024 A100s, plain data
 * parallelism on 8, ZeRO-3 with CPU optimizer offload on 8), writes both reports into memory,
 * parses the JSON back with cJSON and checks keys and values against hand-computed ones:
 * Psi = 96 (12 h^2 + 13 h) + (50257 + 2048) h + 2 h with h = 12288, model states 16 Psi / N
 * under ZeRO-3 (2 + 2 + 12 bytes per parameter, ZeRO Table 1) and 16 Psi under DDP, ZeRO-3's
 * 3 Psi of 16-bit traffic (less the resident small parameters) with ring factor (N-1)/N (ZeRO
 * sec. 7), DDP's 2 Psi all-reduce, the host-memory breakdown
 * summing to its peak, and the DeepSpeed estimator present only for stages 1-3. The text
 * report is checked line by line for the same numbers as it rounds them.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/estimate_report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t H = 12288;
#define PSI (96 * (12 * H * H + 13 * H) + 50257 * H + 2048 * H + 2 * H)

typedef struct Case {
    ModelConfig model;
    TrainConfig train;
    Platform platform;
    Estimate est;
    StrList setup_defaults;
    EstimateReport report;
} Case;

static void case_build(Case *c, const char *config, uint64_t gpus)
{
    Err err = {0};
    int rc = model_config_load(&c->model, "gpt3-175b", ZEROSIM_SOURCE_DIR, &err) ||
             ds_config_load(&c->train, config, ZEROSIM_SOURCE_DIR, &err) ||
             platform_load(&c->platform, "dgx-a100-80g", ZEROSIM_SOURCE_DIR, &err) ||
             platform_resize(&c->platform, gpus, 0, &err);
    if (rc == 0) {
        EstimateOptions opts = {.seq_len = 0, .recompute = RECOMPUTE_NONE,
                                .is_flash_attention = true};
        rc = estimate_build(&c->model, &c->train, &c->platform, &opts, &c->est, &err);
    }
    if (rc != 0)
        fail_msg("%s", err.msg);
    strlist_init(&c->setup_defaults);
    strlist_addf(&c->setup_defaults, "--seq-len %d (test)", 2048);
    c->report = (EstimateReport){.model = &c->model, .train = &c->train,
                                 .platform = &c->platform, .estimate = &c->est,
                                 .setup_defaults = &c->setup_defaults};
}

static void case_fini(Case *c)
{
    strlist_fini(&c->setup_defaults);
    model_config_fini(&c->model);
    ds_config_fini(&c->train);
}

/* Runs writer into memory; returns the text (caller frees). */
static char *capture(void (*writer)(FILE *, const EstimateReport *), const EstimateReport *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    writer(f, r);
    assert_int_equal(fclose(f), 0);
    assert_true(len > 0);
    return buf;
}

static cJSON *capture_json(const EstimateReport *r)
{
    char *text = capture(estimate_report_json, r);
    cJSON *root = cJSON_Parse(text);
    if (root == NULL)
        fail_msg("invalid JSON near: %.40s", cJSON_GetErrorPtr());
    free(text);
    return root;
}

/* The member at a dotted path ("memory.gpu_breakdown_bytes.params"); fails when missing. */
static const cJSON *at(const cJSON *root, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *node = root;
    for (char *save = NULL, *key = strtok_r(buf, ".", &save); key != NULL;
         key = strtok_r(NULL, ".", &save)) {
        node = cJSON_GetObjectItemCaseSensitive(node, key);
        if (node == NULL)
            fail_msg("missing %s (at %s)", path, key);
    }
    return node;
}

static double num(const cJSON *root, const char *path)
{
    const cJSON *v = at(root, path);
    if (!cJSON_IsNumber(v))
        fail_msg("%s: expected a number", path);
    return v->valuedouble;
}

static const char *str(const cJSON *root, const char *path)
{
    const cJSON *v = at(root, path);
    if (!cJSON_IsString(v))
        fail_msg("%s: expected a string", path);
    return v->valuestring;
}

/* Integers above 2^53 lose precision as doubles; byte counts here stay below that except
 * where a tolerance of one part in 2^52 is applied. */
static void assert_num(const cJSON *root, const char *path, double expected)
{
    double got = num(root, path);
    if (fabs(got - expected) > fabs(expected) * 0x1p-52)
        fail_msg("%s: expected %.17g, got %.17g", path, expected, got);
}

static void assert_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("expected the report to contain \"%s\"; it is:\n%s", needle, text);
}

static void test_estimate_report_json_zero3_1024_gpus(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "zero3", 1024);
    assert_int_equal(c.est.params.total, PSI);
    cJSON *root = capture_json(&c.report);

    assert_string_equal(str(root, "command"), "estimate");
    assert_true(str(root, "zerosim_version")[0] != '\0');
    /* the verdict: the device peak against all the GPU's memory (no headroom here) */
    assert_true(cJSON_IsFalse(at(root, "verdict.fits")));
    assert_string_equal(str(root, "verdict.runs_out"), "gpu");
    assert_true(cJSON_IsNull(at(root, "verdict.rank")));
    assert_num(root, "verdict.needed_bytes", (double)c.est.gpu_device_peak);
    assert_num(root, "verdict.usable_bytes", 85100068864.0);
    assert_num(root, "verdict.short_bytes",
               (double)c.est.gpu_device_peak - 85100068864.0);
    assert_true(cJSON_IsNull(at(root, "verdict.hint")));
    assert_string_equal(str(root, "model.name"), "gpt3-175b");
    assert_num(root, "model.params", (double)PSI);
    assert_num(root, "model.params_per_layer", (double)(12 * H * H + 13 * H));
    assert_num(root, "model.layers", 96);
    assert_num(root, "model.hidden", (double)H);
    assert_num(root, "model.heads", 96);
    assert_num(root, "model.kv_heads", 96);
    assert_num(root, "model.ffn_hidden", (double)(4 * H));
    assert_num(root, "model.vocab", 50257);

    assert_string_equal(str(root, "cluster.platform"), "dgx-a100-80g");
    assert_string_equal(str(root, "cluster.gpu"), "A100-SXM4-80GB");
    assert_num(root, "cluster.gpus", 1024);
    assert_num(root, "cluster.nodes", 128);
    assert_num(root, "cluster.gpus_per_node", 8);

    assert_num(root, "config.zero_stage", 3);
    assert_string_equal(str(root, "config.precision"), "bf16");
    assert_string_equal(str(root, "config.optimizer"), "adamw");
    assert_string_equal(str(root, "config.offload_optimizer"), "none");
    assert_string_equal(str(root, "config.offload_param"), "none");
    assert_num(root, "config.global_batch", 4 * 1024); /* micro 4 x accumulation 1 x 1024 */
    assert_num(root, "config.micro_batch", 4);
    assert_num(root, "config.grad_accum", 1);
    assert_num(root, "config.seq_len", 2048);
    assert_string_equal(str(root, "config.activation_checkpointing"), "none");
    assert_true(cJSON_IsTrue(at(root, "config.flash_attention")));
    /* the command line's defaults come first, then the model's, then the ds_config's */
    const cJSON *defaults = at(root, "config.defaults_applied");
    assert_true(cJSON_IsArray(defaults));
    assert_string_equal(cJSON_GetArrayItem(defaults, 0)->valuestring, "--seq-len 2048 (test)");
    assert_int_equal(cJSON_GetArraySize(defaults), 1 + (int)c.model.defaults_used.n_items +
                                                       (int)c.train.defaults_used.n_items);
    assert_string_equal(cJSON_GetArrayItem(defaults, cJSON_GetArraySize(defaults) - 1)
                            ->valuestring,
                        "train_batch_size = 4096 (derived)");
    assert_true(cJSON_IsArray(at(root, "config.keys_not_modelled")));

    /* ZeRO-3: 2 + 2 + 12 bytes per parameter, all partitioned over 1024 GPUs */
    assert_num(root, "memory.gpu_model_states_bytes", (double)(16 * PSI / 1024));
    assert_num(root, "memory.paper_model_states_bytes", (double)(16 * PSI / 1024));
    assert_num(root, "memory.gpu_breakdown_bytes.params", (double)(2 * PSI / 1024));
    assert_num(root, "memory.gpu_breakdown_bytes.grads", (double)(2 * PSI / 1024));
    assert_num(root, "memory.gpu_breakdown_bytes.optimizer", (double)(12 * PSI / 1024));
    assert_num(root, "memory.gpu_capacity_bytes", 85100068864.0);
    assert_num(root, "memory.gpu_peak_bytes",
               (double)(16 * PSI / 1024 + c.est.gpu_activations + c.est.mem.gpu_buffers));
    assert_true(cJSON_IsFalse(at(root, "memory.fits_gpu"))); /* 308 GiB of activations */
    assert_true(cJSON_IsFalse(at(root, "memory.fits")));
    assert_true(cJSON_IsObject(at(root, "memory.deepspeed_estimator")));
    assert_num(root, "memory.deepspeed_estimator.additional_buffer_factor", 1.5);
    assert_num(root, "memory.activations_bytes.peak", (double)c.est.act.peak);

    /* ZeRO-3 gathers the 16-bit parameters twice and reduce-scatters the gradients once; a
     * ring sends (N-1)/N of each (ZeRO sec. 7). Parameters under zero3.json's persistence
     * threshold (1e5 elements) stay resident and are not gathered: per layer the two layer
     * norms (4h), the QKV bias (3h), the fc1 bias (4h) and the two output biases (2h), plus the
     * final layer norm (2h): 96 x 13h + 2h = 1250h; DeepSpeed all-gathers those once after
     * the optimizer step (stage3.py _post_step). Integer rounding may differ by a byte. */
    const double ring = 1023.0 / 1024.0, psi_bytes = 2.0 * (double)PSI;
    const double gathered_bytes = 2.0 * (double)(PSI - 1250 * H);
    const double persistent_bytes = 2.0 * 1250.0 * (double)H;
    assert_true(fabs(num(root, "comm.bytes_per_rank.all_gather") -
                     (2 * gathered_bytes + persistent_bytes) * ring) <= 2);
    assert_true(fabs(num(root, "comm.bytes_per_rank.reduce_scatter") - psi_bytes * ring) <= 1);
    assert_num(root, "comm.bytes_per_rank.all_reduce", 0);
    assert_num(root, "comm.bytes_per_rank.total",
               num(root, "comm.bytes_per_rank.all_gather") +
                   num(root, "comm.bytes_per_rank.reduce_scatter"));
    assert_true(fabs(num(root, "comm.total_in_psi") -
                     (2 * gathered_bytes + persistent_bytes + psi_bytes) * ring / psi_bytes) <
                1e-9);

    assert_num(root, "flops.per_step", c.est.flops.hardware);
    assert_num(root, "flops.megatron_per_step", c.est.flops.megatron);
    /* the kernel model's step (model/kernels.c), which no GPU can beat at its dense bf16 peak:
     * more than the hardware FLOPs over 1024 GPUs at 312 TFLOP/s */
    assert_num(root, "time.compute_bound_step_s", c.est.compute_bound_step_s);
    assert_true(num(root, "time.compute_bound_step_s") > c.est.flops.hardware / (1024 * 312e12));
    cJSON_Delete(root);
    case_fini(&c);
}

/* DDP: 16 Psi on every GPU, no DeepSpeed estimator (it covers stages 1-3), host empty. */
static void test_estimate_report_json_ddp_has_null_estimator(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "zero0", 8);
    cJSON *root = capture_json(&c.report);
    assert_num(root, "config.zero_stage", 0);
    assert_num(root, "memory.gpu_model_states_bytes", (double)(16 * PSI));
    assert_num(root, "memory.gpu_breakdown_bytes.optimizer", (double)(12 * PSI));
    assert_true(cJSON_IsNull(at(root, "memory.deepspeed_estimator")));
    assert_num(root, "memory.cpu_peak_bytes", 0);
    assert_num(root, "memory.cpu_breakdown_bytes.activations", 0);
    /* DDP all-reduces the 16-bit gradients: 2 (N-1)/N x 2 Psi bytes, nothing else */
    assert_true(fabs(num(root, "comm.bytes_per_rank.all_reduce") -
                     2.0 * 7.0 / 8.0 * 2.0 * (double)PSI) <= 2);
    assert_num(root, "comm.bytes_per_rank.all_gather", 0);
    assert_num(root, "comm.bytes_per_rank.reduce_scatter", 0);
    cJSON_Delete(root);
    case_fini(&c);
}

/* CPU optimizer offload: the host breakdown is per node (x 8 GPUs) and sums to the peak. */
static void test_estimate_report_json_offload_host_breakdown(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "zero3-offload-cpu", 8);
    cJSON *root = capture_json(&c.report);
    assert_string_equal(str(root, "config.offload_optimizer"), "cpu");
    const ZeroMemory *m = &c.est.mem;
    assert_true(m->cpu_optimizer > 0);
    assert_num(root, "memory.cpu_breakdown_bytes.optimizer", 8.0 * (double)m->cpu_optimizer);
    assert_num(root, "memory.cpu_breakdown_bytes.params", 8.0 * (double)m->cpu_params);
    const double sum = num(root, "memory.cpu_breakdown_bytes.params") +
                       num(root, "memory.cpu_breakdown_bytes.grads") +
                       num(root, "memory.cpu_breakdown_bytes.optimizer") +
                       num(root, "memory.cpu_breakdown_bytes.buffers") +
                       num(root, "memory.cpu_breakdown_bytes.activations");
    assert_num(root, "memory.cpu_peak_bytes", sum);
    assert_num(root, "memory.cpu_peak_bytes", (double)c.est.cpu_peak);
    cJSON_Delete(root);
    case_fini(&c);
}

static void test_estimate_report_text_zero3_1024_gpus(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "zero3", 1024);
    char *text = capture(estimate_report_text, &c.report);
    assert_true(strncmp(text, "zerosim estimate: gpt3-175b with ZeRO-3 on dgx-a100-80g\n\n",
                        57) == 0);
    /* Psi = 174,604,259,328: 174.604 B */
    assert_contains(text, "model        174.604 B parameters: 96 layers, hidden 12288, 96 heads "
                          "(96 kv), ffn 49152, vocab 50257\n");
    assert_contains(text, "cluster      1024 x A100-SXM4-80GB (128 nodes x 8), 79.26 GiB HBM each\n");
    assert_contains(text, "training     ZeRO-3, bf16, optimizer adamw; batch 4096 = micro 4 x "
                          "accumulation 1 x 1024 GPUs; sequence 2048; recompute none; flash "
                          "attention on\n");
    /* 2 Psi / 1024 = 341,023,944 B = 0.32 GiB; 12 Psi / 1024 = 1.91 GiB; 16 Psi / 1024 =
     * 2.54 GiB, the same by the paper's formula */
    assert_contains(text, "  parameters (2 B/elem)                         0.32\n");
    assert_contains(text, "  optimizer states (12 B/elem)                  1.91\n");
    assert_contains(text, "  = model states                                2.54   (paper "
                          "formula: 2.54)\n");
    assert_contains(text, "of 79.26, 0.00 kept free: DOES NOT FIT\n"); /* no --headroom here */
    assert_contains(text, "DeepSpeed's estimator (model states only, host x1.5)");
    /* 3 Psi x 2 B x 1023/1024 = 1046.54 GB, and the persistent parameters gathered after the
     * step: 1250h x 2 B = 0.03 GB */
    assert_contains(text, "  = total                                    1046.57   (3.00 x Psi x "
                          "2 B)\n");
    /* the verdict opens the report: activations of 4 x 2048 tokens on 96 layers outgrow 80
     * GiB; no hint without a search */
    assert_contains(text, "dgx-a100-80g\n\nverdict      DOES NOT FIT: GPU memory runs out on "
                          "every GPU: ");
    assert_contains(text, " 79.26 usable, "); /* no headroom: no "kept free" */
    assert_null(strstr(text, "hint "));
    assert_contains(text, "\ndefaults applied:    --seq-len 2048 (test)\n");
    assert_null(strstr(text, "offload      "));
    free(text);
    case_fini(&c);
}

static void test_estimate_report_text_offload_and_ddp(void **state)
{
    (void)state;
    Case c;
    case_build(&c, "zero3-offload-cpu", 8);
    char *text = capture(estimate_report_text, &c.report);
    assert_contains(text, "offload      optimizer -> cpu, parameters -> ");
    free(text);
    case_fini(&c);

    case_build(&c, "zero0", 8);
    text = capture(estimate_report_text, &c.report);
    assert_contains(text, "with DDP (ZeRO-0) on dgx-a100-80g\n");
    assert_null(strstr(text, "DeepSpeed's estimator"));
    /* all-reduce 2 x 7/8 x 2 Psi = 611.11 GB, reported as 2 x Psi x 2 B in total */
    assert_contains(text, "(1.75 x Psi x 2 B)\n");
    free(text);
    case_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_report_json_zero3_1024_gpus),
        cmocka_unit_test(test_estimate_report_json_ddp_has_null_estimator),
        cmocka_unit_test(test_estimate_report_json_offload_host_breakdown),
        cmocka_unit_test(test_estimate_report_text_zero3_1024_gpus),
        cmocka_unit_test(test_estimate_report_text_offload_and_ddp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
