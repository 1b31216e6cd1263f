/*
 * platform.c - platform JSON -> Platform, fully validated (see platform.h).
 *
 * Our own format, so every object is checked for unknown keys and every number for range;
 * the consistency rules (PCIe switches divide the node, NIC placement matches the NIC count)
 * are checked here so that the engine can build a SimGrid platform without surprises.
 */
#include "platform.h"

#include "../common/choices.h"
#include "jsonfile.h"
#include "resolve.h"

#include <ctype.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = {"name",   "description", "nodes", "gpus_per_node", "gpu",
                                       "nvlink", "pcie",        "cpu",   "nvme",          "nic",
                                       "fabric", "nccl",        "runtime", NULL};
static const char *const gpu_keys[] = {"model",
                                       "fp32_flops_per_s",
                                       "fp16_flops_per_s",
                                       "bf16_flops_per_s",
                                       "gemm_efficiency",
                                       "attention_efficiency",
                                       "flash_attention",
                                       "comm_sm_fraction",
                                       "matmul_flops_per_s",
                                       "sm_count",
                                       "gemm_fixed_s",
                                       "gemm_wave_s",
                                       "memory_bw_efficiency",
                                       "kernel_launch_s",
                                       "hbm_bytes",
                                       "hbm_bw_bytes_per_s",
                                       "source",
                                       NULL};
static const char *const nvlink_keys[] = {"bw_bytes_per_s", "latency_s", "nvswitch",
                                          "nvls",           "source",    NULL};
static const char *const pcie_keys[] = {"gpu_link",      "gpus_per_switch", "nics_per_switch",
                                        "switch_uplink", "source",          NULL};
static const char *const link_keys[] = {"bw_bytes_per_s", "latency_s", NULL};
static const char *const cpu_keys[] = {
    "model",        "cores", "dram_bytes", "dram_bw_bytes_per_s", "adam_params_per_s_per_core",
    "param_host_s", "source", NULL};
static const char *const nvme_keys[] = {"drives",
                                        "capacity_bytes_per_drive",
                                        "read_bw_bytes_per_s_per_drive",
                                        "write_bw_bytes_per_s_per_drive",
                                        "source",
                                        NULL};
static const char *const nic_keys[] = {"per_node", "bw_bytes_per_s", "latency_s", "source", NULL};
static const char *const fabric_keys[] = {"topology",       "oversubscription", "latency_s",
                                          "nodes_per_leaf", "spine",            "source",
                                          NULL};
static const char *const spine_keys[] = {"oversubscription", "nodes_per_pod",
                                         "core_oversubscription", NULL};
static const char *const runtime_keys[] = {"cuda_context_bytes", "cuda_context_eager_bytes",
                                           "cublas_workspace_bytes", "source", NULL};
static const char *const flash_keys[] = {"rows", "source", NULL};
static const char *const flash_row_keys[] = {"kernel",  "head_dim",    "causal", "pass",
                                             "seq_len", "flops_per_s", NULL};
static const char *const flash_kernels[] = {"v2", "v1", "v3", "triton", NULL}; /* PlatformFlashKernel order */
static const char *const flash_passes[] = {"fwd_bwd", "fwd", "bwd", NULL}; /* PlatformFlashPass */
static const char *const topologies[] = {"fat_tree", "rail_optimized", NULL};
static const char *const nccl_keys[] = {"arch",    "cpu_vendor", "channels",
                                        "version", "source",     NULL};
static const char *const archs[] = {"volta", "ampere", "hopper", "blackwell", NULL};
static const char *const cpu_vendors[] = {"intel", "amd", NULL};

#define MAX_COUNT (1u << 20)
#define MAX_RATE 1e18     /* bytes/s or FLOP/s: three orders above any machine */
#define MAX_LATENCY_S 1.0 /* a link slower than a second to first byte is a typo */

/* Finds a required section object. */
static const cJSON *section(const cJSON *root, const char *key, JsonAt at, bool required,
                            const char *const *keys, Err *err)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, key);
    JsonAt sub = {at.file, key};
    if (sec == NULL || cJSON_IsNull(sec)) {
        if (required) {
            err_set(err, "%s: %s: expected an object, got nothing (key missing)", at.file, key);
        }
        return NULL;
    }
    if (jsonfile_expect_object(sec, sub, err) ||
        jsonfile_check_keys(sec, sub, keys, NULL, NULL, err))
        return NULL;
    return sec;
}

static int need_double(const cJSON *obj, const char *key, JsonAt at, double min, double max,
                       double *out, Err *err)
{
    char expected[96];
    snprintf(expected, sizeof expected, "number in [%g, %g]", min, max);
    return jsonfile_require(jsonfile_get_double(obj, key, at, min, max, out, err), key, at,
                            expected, err);
}

static int need_u64(const cJSON *obj, const char *key, JsonAt at, uint64_t min, uint64_t max,
                    uint64_t *out, Err *err)
{
    char expected[96];
    if (max < (1ull << 53))
        snprintf(expected, sizeof expected, "integer in [%llu, %llu]", (unsigned long long)min,
                 (unsigned long long)max);
    else /* as jsonfile_get_u64 words it: such a bound only guards against overflow */
        snprintf(expected, sizeof expected, "integer >= %llu", (unsigned long long)min);
    return jsonfile_require(jsonfile_get_u64(obj, key, at, min, max, out, err), key, at, expected,
                            err);
}

static int read_link(const cJSON *obj, const char *key, JsonAt at, LinkSpec *out, Err *err)
{
    char path[64];
    JsonAt sub = {at.file, jsonfile_key_path(at, key, path, sizeof path)};
    const cJSON *link = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (link == NULL)
        return err_set(err, "%s: %s: expected an object, got nothing (key missing)", at.file, path);
    if (jsonfile_expect_object(link, sub, err) ||
        jsonfile_check_keys(link, sub, link_keys, NULL, NULL, err))
        return -1;
    return need_double(link, "bw_bytes_per_s", sub, 1.0, MAX_RATE, &out->bw_bytes_per_s, err) ||
                   need_double(link, "latency_s", sub, 0.0, MAX_LATENCY_S, &out->latency_s, err)
               ? -1
               : 0;
}

static int read_source(const cJSON *sec, JsonAt at, Err *err)
{
    char source[4096];
    return jsonfile_get_string(sec, "source", at, source, sizeof source, err) < 0 ? -1 : 0;
}

/* Optional: without it attention runs at the GEMM efficiency (reports say so). */
static int read_attention_efficiency(const cJSON *g, JsonAt at, Platform *p, Err *err)
{
    int rc = jsonfile_get_double(g, "attention_efficiency", at, 0.01, 1.0,
                                 &p->gpu.attention_efficiency, err);
    if (rc < 0)
        return -1;
    p->gpu.has_attention_efficiency = rc == 1;
    if (rc == 0)
        p->gpu.attention_efficiency = p->gpu.gemm_efficiency;
    return 0;
}

/* One of a row's two lists: n numbers in [min, max], strictly increasing when is_increasing. */
static int read_flash_list(const cJSON *row, const char *key, JsonAt at, double min, double max,
                           bool is_increasing, double *out, size_t *out_n, Err *err)
{
    char path[160], found[64];
    jsonfile_key_path(at, key, path, sizeof path);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(row, key);
    if (list == NULL)
        return err_set(err, "%s: %s: expected a list of 1 to %d numbers, got nothing (key missing)",
                       at.file, path, PLATFORM_FLASH_MAX_POINTS);
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    if (n >= 0 && (n < 1 || n > PLATFORM_FLASH_MAX_POINTS))
        return err_set(err, "%s: %s: expected a list of 1 to %d numbers, got %d numbers",
                       at.file, path, PLATFORM_FLASH_MAX_POINTS, n);
    if (n < 0)
        return err_set(err, "%s: %s: expected a list of 1 to %d numbers, got %s", at.file, path,
                       PLATFORM_FLASH_MAX_POINTS, jsonfile_describe(list, found, sizeof found));
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(list, i);
        const double x = cJSON_IsNumber(v) ? v->valuedouble : -1.0;
        if (!cJSON_IsNumber(v) || !(x >= min && x <= max))
            return err_set(err, "%s: %s[%d]: expected a number in [%g, %g], got %s", at.file, path,
                           i, min, max, jsonfile_describe(v, found, sizeof found));
        if (is_increasing && i > 0 && !(x > out[i - 1]))
            return err_set(err, "%s: %s[%d]: expected a value above the previous one (%g), got %g",
                           at.file, path, i, out[i - 1], x);
        out[i] = x;
    }
    *out_n = (size_t)n;
    return 0;
}

static int read_flash_row(const cJSON *row, JsonAt at, double peak16, PlatformFlashRow *out,
                          Err *err)
{
    if (jsonfile_expect_object(row, at, err) ||
        jsonfile_check_keys(row, at, flash_row_keys, NULL, NULL, err))
        return -1;
    int kernel = 0, pass = 0;
    size_t n_rates = 0;
    char expected_kernel[64], expected_pass[64];
    snprintf(expected_kernel, sizeof expected_kernel, "one of \"v2\", \"v1\", \"v3\", \"triton\"");
    snprintf(expected_pass, sizeof expected_pass, "one of \"fwd_bwd\", \"fwd\", \"bwd\"");
    if (jsonfile_require(jsonfile_get_enum(row, "kernel", at, flash_kernels, &kernel, err),
                         "kernel", at, expected_kernel, err) ||
        jsonfile_require(jsonfile_get_enum(row, "pass", at, flash_passes, &pass, err), "pass", at,
                         expected_pass, err) ||
        need_u64(row, "head_dim", at, 1, 1024, &out->head_dim, err) ||
        jsonfile_require(jsonfile_get_bool(row, "causal", at, &out->is_causal, err), "causal", at,
                         "true or false", err) ||
        read_flash_list(row, "seq_len", at, 1.0, 16777216.0, true, out->seq_len, &out->n_points,
                        err) ||
        /* a published attention rate above the dense 16-bit peak is a typo */
        read_flash_list(row, "flops_per_s", at, 1e6, peak16, false, out->flops_per_s, &n_rates,
                        err))
        return -1;
    if (n_rates != out->n_points)
        return err_set(err, "%s: %s.flops_per_s: expected %zu rates (one per seq_len), got %zu",
                       at.file, at.path, out->n_points, n_rates);
    out->kernel = (PlatformFlashKernel)kernel;
    out->pass = (PlatformFlashPass)pass;
    return 0;
}

/* Optional "gpu.flash_attention": {"source", "rows": [...]}. Each kernel it lists must give
 * causal rates of the forward (the training kernels are causal): a fwd_bwd row or a fwd row;
 * and rates of the backward: causal (fwd_bwd or bwd), or, where its source publishes none,
 * bwd rows without the mask (FlashAttention-3's paper plots its backward only so). */
static int read_flash_attention(const cJSON *g, JsonAt at, double peak16, Platform *p, Err *err)
{
    PlatformFlashTable *t = &p->gpu.flash;
    t->n_rows = 0;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(g, "flash_attention");
    if (f == NULL || cJSON_IsNull(f))
        return 0;
    char path[96], found[64];
    JsonAt s = {at.file, jsonfile_key_path(at, "flash_attention", path, sizeof path)};
    if (jsonfile_expect_object(f, s, err) ||
        jsonfile_check_keys(f, s, flash_keys, NULL, NULL, err) || read_source(f, s, err))
        return -1;
    char rows_path[128];
    jsonfile_key_path(s, "rows", rows_path, sizeof rows_path);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(f, "rows");
    int n = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : -1;
    if (n >= 0 && (n < 1 || n > PLATFORM_FLASH_MAX_ROWS))
        return err_set(err, "%s: %s: expected a list of 1 to %d rows, got %d rows", at.file,
                       rows_path, PLATFORM_FLASH_MAX_ROWS, n);
    if (n < 0)
        return err_set(err, "%s: %s: expected a list of 1 to %d rows, got %s", at.file, rows_path,
                       PLATFORM_FLASH_MAX_ROWS,
                       rows == NULL ? "nothing (key missing)"
                                    : jsonfile_describe(rows, found, sizeof found));
    bool serves[PLATFORM_N_FLASH_KERNELS][PLATFORM_N_FLASH_PASSES] = {{false}};
    bool has_noncausal_bwd[PLATFORM_N_FLASH_KERNELS] = {false};
    bool is_listed[PLATFORM_N_FLASH_KERNELS] = {false};
    for (int i = 0; i < n; i++) {
        char row_path[160];
        snprintf(row_path, sizeof row_path, "%s[%d]", rows_path, i);
        JsonAt rs = {at.file, row_path};
        PlatformFlashRow *r = &t->rows[i];
        if (read_flash_row(cJSON_GetArrayItem(rows, i), rs, peak16, r, err))
            return -1;
        for (int j = 0; j < i; j++) {
            const PlatformFlashRow *o = &t->rows[j];
            if (o->kernel == r->kernel && o->pass == r->pass && o->head_dim == r->head_dim &&
                o->is_causal == r->is_causal)
                return err_set(err,
                               "%s: %s: expected one row per kernel, pass, head_dim and causal, "
                               "got a second one of rows[%d]",
                               at.file, row_path, j);
        }
        is_listed[r->kernel] = true;
        if (r->is_causal)
            serves[r->kernel][r->pass] = true;
        else if (r->pass == PLATFORM_FLASH_BWD)
            has_noncausal_bwd[r->kernel] = true;
        t->n_rows = (size_t)i + 1;
    }
    for (int k = 0; k < PLATFORM_N_FLASH_KERNELS; k++) {
        const bool has_fwd = serves[k][PLATFORM_FLASH_FWD_BWD] || serves[k][PLATFORM_FLASH_FWD];
        const bool has_bwd = serves[k][PLATFORM_FLASH_FWD_BWD] || serves[k][PLATFORM_FLASH_BWD] ||
                             has_noncausal_bwd[k];
        if (is_listed[k] && !(has_fwd && has_bwd))
            return err_set(err,
                           "%s: %s: expected causal rates of kernel \"%s\" for the forward and "
                           "the backward (a \"fwd_bwd\" row, or \"fwd\" and \"bwd\" rows), got "
                           "none for %s",
                           at.file, rows_path, flash_kernels[k],
                           has_fwd ? "the backward" : "the forward");
    }
    return 0;
}

static int read_gpu(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    const cJSON *g = section(root, "gpu", at, true, gpu_keys, err);
    JsonAt s = {at.file, "gpu"};
    if (g == NULL)
        return -1;
    if (jsonfile_require(jsonfile_get_string(g, "model", s, p->gpu.model, sizeof p->gpu.model, err),
                         "model", s, "a string", err) ||
        need_double(g, "fp32_flops_per_s", s, 1e6, MAX_RATE, &p->gpu.fp32_flops_per_s, err) ||
        need_double(g, "fp16_flops_per_s", s, 1e6, MAX_RATE, &p->gpu.fp16_flops_per_s, err) ||
        jsonfile_get_double(g, "bf16_flops_per_s", s, 0.0, MAX_RATE, &p->gpu.bf16_flops_per_s,
                            err) < 0 ||
        need_double(g, "gemm_efficiency", s, 0.01, 1.0, &p->gpu.gemm_efficiency, err) ||
        read_attention_efficiency(g, s, p, err) ||
        jsonfile_get_double(g, "comm_sm_fraction", s, 0.0, 0.9, &p->gpu.comm_sm_fraction, err) <
            0 ||
        need_u64(g, "hbm_bytes", s, 1u << 20, UINT64_MAX / 4, &p->gpu.hbm_bytes, err) ||
        need_double(g, "hbm_bw_bytes_per_s", s, 1e6, MAX_RATE, &p->gpu.hbm_bw_bytes_per_s, err) ||
        need_double(g, "matmul_flops_per_s", s, 1e6, MAX_RATE, &p->gpu.matmul_flops_per_s, err) ||
        need_u64(g, "sm_count", s, 1, 4096, &p->gpu.sm_count, err) ||
        need_double(g, "gemm_fixed_s", s, 0.0, 1e-3, &p->gpu.gemm_fixed_s, err) ||
        need_double(g, "gemm_wave_s", s, 0.0, 1e-4, &p->gpu.gemm_wave_s, err) ||
        need_double(g, "memory_bw_efficiency", s, 0.01, 1.0, &p->gpu.memory_bw_efficiency, err) ||
        need_double(g, "kernel_launch_s", s, 0.0, 1e-3, &p->gpu.kernel_launch_s, err) ||
        read_source(g, s, err))
        return -1;
    /* the achievable matmul rate is a measurement below the 16-bit tensor-core peak */
    const double peak16 =
        p->gpu.bf16_flops_per_s > 0 ? p->gpu.bf16_flops_per_s : p->gpu.fp16_flops_per_s;
    if (p->gpu.matmul_flops_per_s > peak16)
        return err_set(err,
                       "%s: gpu.matmul_flops_per_s: expected at most the 16-bit peak %g, got %g",
                       at.file, peak16, p->gpu.matmul_flops_per_s);
    return read_flash_attention(g, s, peak16, p, err);
}

static int read_nvlink(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    Err probe = {0};
    const cJSON *n = section(root, "nvlink", at, false, nvlink_keys, &probe);
    if (probe.is_set)
        return err_set(err, "%s", probe.msg);
    p->has_nvlink = n != NULL;
    if (n == NULL)
        return 0;
    JsonAt s = {at.file, "nvlink"};
    return need_double(n, "bw_bytes_per_s", s, 1.0, MAX_RATE, &p->nvlink.bw_bytes_per_s, err) ||
                   need_double(n, "latency_s", s, 0.0, MAX_LATENCY_S, &p->nvlink.latency_s, err) ||
                   jsonfile_require(jsonfile_get_bool(n, "nvswitch", s, &p->has_nvswitch, err),
                                    "nvswitch", s, "true or false", err) ||
                   jsonfile_get_bool(n, "nvls", s, &p->has_nvls, err) < 0 || /* absent: false */
                   read_source(n, s, err)
               ? -1
               : 0;
}

static int read_pcie(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    const cJSON *c = section(root, "pcie", at, true, pcie_keys, err);
    JsonAt s = {at.file, "pcie"};
    if (c == NULL)
        return -1;
    return read_link(c, "gpu_link", s, &p->pcie.gpu_link, err) ||
                   need_u64(c, "gpus_per_switch", s, 1, MAX_COUNT, &p->pcie.gpus_per_switch, err) ||
                   need_u64(c, "nics_per_switch", s, 0, MAX_COUNT, &p->pcie.nics_per_switch, err) ||
                   read_link(c, "switch_uplink", s, &p->pcie.switch_uplink, err) ||
                   read_source(c, s, err)
               ? -1
               : 0;
}

static int read_cpu(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    const cJSON *c = section(root, "cpu", at, true, cpu_keys, err);
    JsonAt s = {at.file, "cpu"};
    if (c == NULL)
        return -1;
    return jsonfile_require(
               jsonfile_get_string(c, "model", s, p->cpu.model, sizeof p->cpu.model, err), "model",
               s, "a string", err) ||
                   need_u64(c, "cores", s, 1, MAX_COUNT, &p->cpu.cores, err) ||
                   need_u64(c, "dram_bytes", s, 1u << 20, UINT64_MAX / 4, &p->cpu.dram_bytes,
                            err) ||
                   need_double(c, "dram_bw_bytes_per_s", s, 1e6, MAX_RATE,
                               &p->cpu.dram_bw_bytes_per_s, err) ||
                   need_double(c, "adam_params_per_s_per_core", s, 1.0, MAX_RATE,
                               &p->cpu.adam_params_per_s_per_core, err) ||
                   jsonfile_get_double(c, "param_host_s", s, 0.0, 1e-2, &p->cpu.param_host_s,
                                       err) < 0 || /* optional: 0, not counted, without it */
                   read_source(c, s, err)
               ? -1
               : 0;
}

static int read_nvme(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    Err probe = {0};
    const cJSON *n = section(root, "nvme", at, false, nvme_keys, &probe);
    if (probe.is_set)
        return err_set(err, "%s", probe.msg);
    if (n == NULL)
        return 0;
    JsonAt s = {at.file, "nvme"};
    return need_u64(n, "drives", s, 0, MAX_COUNT, &p->nvme.n_drives, err) ||
                   need_u64(n, "capacity_bytes_per_drive", s, 1u << 20, UINT64_MAX / 4096,
                            &p->nvme.capacity_bytes_per_drive, err) ||
                   need_double(n, "read_bw_bytes_per_s_per_drive", s, 1.0, MAX_RATE,
                               &p->nvme.read_bw_bytes_per_s_per_drive, err) ||
                   need_double(n, "write_bw_bytes_per_s_per_drive", s, 1.0, MAX_RATE,
                               &p->nvme.write_bw_bytes_per_s_per_drive, err) ||
                   read_source(n, s, err)
               ? -1
               : 0;
}

/* The fabric as built (optional keys): leaves of nodes_per_leaf nodes and the spine tier(s)
 * above them. Without them, the per-node model: every node its own leaf, an unlimited spine. */
static int read_structure(const cJSON *f, JsonAt fs, Platform *p, Err *err)
{
    p->fabric.spine_oversubscription = 1.0;
    p->fabric.core_oversubscription = 1.0;
    int rc = jsonfile_get_u64(f, "nodes_per_leaf", fs, 1, MAX_COUNT, &p->fabric.nodes_per_leaf, err);
    if (rc < 0)
        return -1;
    const cJSON *spine = cJSON_GetObjectItemCaseSensitive(f, "spine");
    if (spine == NULL)
        return 0;
    JsonAt ss = {fs.file, "fabric.spine"};
    if (rc == 0)
        return err_set(err,
                       "%s: fabric.spine: expected fabric.nodes_per_leaf beside it (a spine "
                       "tier joins leaf switches), got no nodes_per_leaf",
                       fs.file);
    if (jsonfile_expect_object(spine, ss, err) ||
        jsonfile_check_keys(spine, ss, spine_keys, NULL, NULL, err) ||
        need_double(spine, "oversubscription", ss, 1.0, 1024.0,
                    &p->fabric.spine_oversubscription, err))
        return -1;
    int has_pods =
        jsonfile_get_u64(spine, "nodes_per_pod", ss, 1, MAX_COUNT, &p->fabric.nodes_per_pod, err);
    if (has_pods < 0)
        return -1;
    int has_core = jsonfile_get_double(spine, "core_oversubscription", ss, 1.0, 1024.0,
                                       &p->fabric.core_oversubscription, err);
    if (has_core < 0)
        return -1;
    if (has_pods != has_core)
        return err_set(err,
                       "%s: fabric.spine.%s: expected nodes_per_pod and core_oversubscription "
                       "together (a second tier has both), got only %s",
                       fs.file, has_pods ? "core_oversubscription" : "nodes_per_pod",
                       has_pods ? "nodes_per_pod" : "core_oversubscription");
    if (has_pods && p->fabric.nodes_per_pod % p->fabric.nodes_per_leaf != 0)
        return err_set(err,
                       "%s: fabric.spine.nodes_per_pod: expected a multiple of "
                       "fabric.nodes_per_leaf = %llu (a pod holds whole leaves), got %llu",
                       fs.file, (unsigned long long)p->fabric.nodes_per_leaf,
                       (unsigned long long)p->fabric.nodes_per_pod);
    return 0;
}

static int read_network(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    const cJSON *n = section(root, "nic", at, true, nic_keys, err);
    JsonAt s = {at.file, "nic"};
    if (n == NULL || need_u64(n, "per_node", s, 1, MAX_COUNT, &p->nic.per_node, err) ||
        need_double(n, "bw_bytes_per_s", s, 1.0, MAX_RATE, &p->nic.link.bw_bytes_per_s, err) ||
        need_double(n, "latency_s", s, 0.0, MAX_LATENCY_S, &p->nic.link.latency_s, err) ||
        read_source(n, s, err))
        return -1;
    const cJSON *f = section(root, "fabric", at, true, fabric_keys, err);
    JsonAt fs = {at.file, "fabric"};
    int topology = 0;
    if (f == NULL ||
        jsonfile_require(jsonfile_get_enum(f, "topology", fs, topologies, &topology, err),
                         "topology", fs, "one of \"fat_tree\", \"rail_optimized\"", err) ||
        need_double(f, "oversubscription", fs, 1.0, 1024.0, &p->fabric.oversubscription, err) ||
        need_double(f, "latency_s", fs, 0.0, MAX_LATENCY_S, &p->fabric.latency_s, err) ||
        read_source(f, fs, err) || read_structure(f, fs, p, err))
        return -1;
    p->fabric.topology = (FabricTopology)topology;
    return 0;
}

/* Optional: the memory the CUDA runtime, cuBLAS and NCCL hold per GPU (docs/MODEL.md,
 * "Memory as the GPU sees it"). Every key is required once the section is given. */
static int read_runtime(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    Err probe = {0};
    const cJSON *r = section(root, "runtime", at, false, runtime_keys, &probe);
    if (probe.is_set)
        return err_set(err, "%s", probe.msg);
    p->has_runtime = r != NULL;
    if (r == NULL)
        return 0;
    JsonAt s = {at.file, "runtime"};
    /* optional: the context with eager module loading (--cuda-module-loading eager) */
    if (jsonfile_get_u64(r, "cuda_context_eager_bytes", s, 1, 1ull << 40,
                         &p->runtime.cuda_context_eager_bytes, err) < 0)
        return -1;
    if (need_u64(r, "cuda_context_bytes", s, 0, 1ull << 40, &p->runtime.cuda_context_bytes,
                 err) ||
        need_u64(r, "cublas_workspace_bytes", s, 0, 1ull << 40,
                 &p->runtime.cublas_workspace_bytes, err) ||
        read_source(r, s, err))
        return -1;
    /* loading every kernel at start holds at least what loading them lazily does */
    const uint64_t eager = p->runtime.cuda_context_eager_bytes;
    if (eager != 0 && eager < p->runtime.cuda_context_bytes)
        return err_set(err,
                       "%s: runtime.cuda_context_eager_bytes: expected at least "
                       "runtime.cuda_context_bytes (%llu, the lazy context), got %llu",
                       at.file, (unsigned long long)p->runtime.cuda_context_bytes,
                       (unsigned long long)eager);
    return 0;
}

/* nccl.version: a release "2.M" or "2.M.P" (the patch kept apart: NCCL's tuner constants
 * changed between patch releases), absent: PLATFORM_NCCL_VERSION. */
static int read_nccl_version(const cJSON *n, JsonAt s, uint32_t *out, uint32_t *out_patch,
                             Err *err)
{
    char text[32] = "";
    int rc = jsonfile_get_string(n, "version", s, text, sizeof text, err);
    if (rc < 0)
        return -1;
    *out = PLATFORM_NCCL_VERSION;
    *out_patch = 0;
    if (rc == 0)
        return 0;
    unsigned major = 0, minor = 0, patch = 0;
    int used = -1, more = -1;
    int got = sscanf(text, "%u.%u%n.%u%n", &major, &minor, &used, &patch, &more);
    int end = got == 3 ? more : got == 2 ? used : -1;
    if (end < 0 || text[end] != '\0' || !isdigit((unsigned char)text[0]) || major != 2 ||
        minor > 99 || patch > 99)
        return err_set(err,
                       "%s: nccl.version: expected a release like \"2.21\" or \"2.21.5\", "
                       "got \"%s\"",
                       s.file, text);
    *out = major * 100 + minor;
    *out_patch = patch;
    return 0;
}

/* What NCCL's tuner needs of the machine (engine's collectives, model/nccl_model.c). */
static int read_nccl(const cJSON *root, JsonAt at, Platform *p, Err *err)
{
    const cJSON *n = section(root, "nccl", at, true, nccl_keys, err);
    JsonAt s = {at.file, "nccl"};
    int arch = 0, vendor = 0;
    if (n == NULL ||
        jsonfile_require(jsonfile_get_enum(n, "arch", s, archs, &arch, err), "arch", s,
                         "one of \"volta\", \"ampere\", \"hopper\", \"blackwell\"", err) ||
        jsonfile_require(jsonfile_get_enum(n, "cpu_vendor", s, cpu_vendors, &vendor, err),
                         "cpu_vendor", s, "one of \"intel\", \"amd\"", err) ||
        need_u64(n, "channels", s, 1, 64, &p->nccl.channels, err) || read_source(n, s, err))
        return -1;
    p->nccl.arch = (PlatformArch)arch;
    p->nccl.cpu_vendor = (PlatformCpuVendor)vendor;
    return read_nccl_version(n, s, &p->nccl.version, &p->nccl.version_patch, err);
}

/* Rules that tie sections together; messages name the key that breaks them. */
static int check_consistency(const Platform *p, const char *file, Err *err)
{
    if (p->gpus_per_node % p->pcie.gpus_per_switch != 0)
        return err_set(err,
                       "%s: pcie.gpus_per_switch: expected a divisor of gpus_per_node = "
                       "%llu, got %llu",
                       file, (unsigned long long)p->gpus_per_node,
                       (unsigned long long)p->pcie.gpus_per_switch);
    uint64_t n_switches = p->gpus_per_node / p->pcie.gpus_per_switch;
    if (p->pcie.nics_per_switch > 0 && p->pcie.nics_per_switch * n_switches != p->nic.per_node)
        return err_set(err,
                       "%s: pcie.nics_per_switch: expected nic.per_node / (gpus_per_node / "
                       "gpus_per_switch) = %llu / %llu, got %llu",
                       file, (unsigned long long)p->nic.per_node, (unsigned long long)n_switches,
                       (unsigned long long)p->pcie.nics_per_switch);
    if (p->gpu.bf16_flops_per_s > 0 && p->gpu.fp16_flops_per_s <= 0)
        return err_set(err, "%s: gpu.fp16_flops_per_s: expected > 0, got 0", file);
    /* NVLink SHARP is a third-generation NVSwitch's (Hopper and later): NCCL searches no NVLS
     * graph without an NVSwitch or below compute capability 9.0 (src/graph/search.cc,
     * ncclTopoCompute). */
    if (p->has_nvls && (!p->has_nvswitch || p->nccl.arch < PLATFORM_ARCH_HOPPER))
        return err_set(err,
                       "%s: nvlink.nvls: expected false unless nvlink.nvswitch is true and "
                       "nccl.arch is \"hopper\" or \"blackwell\" (NVLink SHARP), got true",
                       file);
    return 0;
}

int platform_parse(Platform *out, const char *file, const char *text, size_t n_bytes, Err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = jsonfile_parse(file, text, n_bytes, err);
    if (root == NULL)
        return -1;
    JsonAt at = {file, ""};
    int rc =
        jsonfile_expect_object(root, at, err) ||
        jsonfile_check_keys(root, at, top_keys, NULL, NULL, err) ||
        jsonfile_require(jsonfile_get_string(root, "name", at, out->name, sizeof out->name, err),
                         "name", at, "a string", err) ||
        jsonfile_get_string(root, "description", at, out->description, sizeof out->description,
                            err) < 0 ||
        need_u64(root, "nodes", at, 1, MAX_COUNT, &out->n_nodes, err) ||
        need_u64(root, "gpus_per_node", at, 1, 1024, &out->gpus_per_node, err) ||
        read_gpu(root, at, out, err) || read_nvlink(root, at, out, err) ||
        read_pcie(root, at, out, err) || read_cpu(root, at, out, err) ||
        read_nvme(root, at, out, err) || read_network(root, at, out, err) ||
        read_runtime(root, at, out, err) || read_nccl(root, at, out, err) ||
        check_consistency(out, file, err);
    cJSON_Delete(root);
    return rc ? -1 : 0;
}

int platform_load(Platform *out, const char *name_or_path, const char *data_dir, Err *err)
{
    char path[1024];
    size_t n = 0;
    memset(out, 0, sizeof *out);
    char *text =
        resolve_read(name_or_path, data_dir, "platforms", "platform", path, sizeof path, &n, err);
    if (text == NULL)
        return -1;
    int rc = platform_parse(out, path, text, n, err);
    free(text);
    return rc;
}

int platform_resize(Platform *p, uint64_t gpus, uint64_t nodes, Err *err)
{
    if (nodes > MAX_COUNT || gpus > MAX_COUNT)
        return err_set(err, "--gpus/--nodes: expected at most %u, got %llu", MAX_COUNT,
                       (unsigned long long)(gpus > nodes ? gpus : nodes));
    if (gpus > 0 && nodes > 0) {
        if (gpus % nodes != 0 || gpus / nodes > p->gpus_per_node)
            return err_set(err,
                           "--gpus %llu --nodes %llu: expected GPUs per node to be a whole "
                           "number of at most %llu (platform %s), got %g",
                           (unsigned long long)gpus, (unsigned long long)nodes,
                           (unsigned long long)p->gpus_per_node, p->name,
                           (double)gpus / (double)nodes);
        if (gpus / nodes < p->gpus_per_node && nodes > 1)
            return err_set(err,
                           "--gpus %llu --nodes %llu: expected full nodes of %llu GPUs "
                           "when using several nodes, got %llu per node",
                           (unsigned long long)gpus, (unsigned long long)nodes,
                           (unsigned long long)p->gpus_per_node,
                           (unsigned long long)(gpus / nodes));
    }
    if (gpus > 0) {
        if (gpus < p->gpus_per_node) {
            if (p->gpus_per_node % gpus != 0)
                return err_set(err,
                               "--gpus %llu: expected a divisor of %llu GPUs per node "
                               "(platform %s) for a partial node, got %llu",
                               (unsigned long long)gpus, (unsigned long long)p->gpus_per_node,
                               p->name, (unsigned long long)gpus);
            /* A partial node keeps the first GPUs, their PCIe switches and those NICs. */
            if (gpus < p->pcie.gpus_per_switch)
                p->pcie.gpus_per_switch = gpus;
            if (p->pcie.nics_per_switch > 0)
                p->nic.per_node = p->pcie.nics_per_switch * (gpus / p->pcie.gpus_per_switch);
            p->gpus_per_node = gpus;
            p->n_nodes = 1;
        } else {
            if (gpus % p->gpus_per_node != 0)
                return err_set(err,
                               "--gpus %llu: expected a multiple of %llu GPUs per node "
                               "(platform %s) or fewer than one node, got %llu",
                               (unsigned long long)gpus, (unsigned long long)p->gpus_per_node,
                               p->name, (unsigned long long)gpus);
            p->n_nodes = gpus / p->gpus_per_node;
        }
    } else if (nodes > 0) {
        p->n_nodes = nodes;
    }
    return 0;
}

double platform_peak_flops_per_s(const Platform *p, Precision precision)
{
    if (precision == PRECISION_FP32)
        return p->gpu.fp32_flops_per_s;
    if (precision == PRECISION_BF16 && p->gpu.bf16_flops_per_s > 0)
        return p->gpu.bf16_flops_per_s;
    return p->gpu.fp16_flops_per_s;
}

_Static_assert(PLATFORM_RING_PACKED == 0 && PLATFORM_RING_SPREAD == 1 &&
                   PLATFORM_RING_CROSS_NIC == 2,
               "choices_ring_order lists the orders in PlatformRingOrder order");

void platform_set_ring_order(Platform *p, PlatformRingOrder order)
{
    p->job.ring_order = order;
}

int platform_set_module_loading(Platform *p, bool is_eager, Err *err)
{
    if (!is_eager || p->runtime.is_eager_loading)
        return 0;
    if (!p->has_runtime || p->runtime.cuda_context_eager_bytes == 0)
        return err_set(err,
                       "--cuda-module-loading eager: expected runtime.cuda_context_eager_bytes "
                       "in platform %s (the CUDA context with every kernel loaded), got %s",
                       p->name, p->has_runtime ? "no such key" : "no runtime section");
    p->runtime.cuda_context_bytes = p->runtime.cuda_context_eager_bytes;
    p->runtime.is_eager_loading = true;
    return 0;
}

int platform_set_straggler(Platform *p, bool is_node, uint64_t index, double slowdown,
                           const char *what, Err *err)
{
    const uint64_t n = is_node ? p->n_nodes : platform_n_gpus(p);
    if (index >= n)
        return err_set(err, "%s: expected a %s below %llu (platform %s), got %llu", what,
                       is_node ? "node" : "GPU rank", (unsigned long long)n, p->name,
                       (unsigned long long)index);
    if (!(slowdown > 1.0) || slowdown > 1e6)
        return err_set(err, "%s: expected a slowdown in (1, 1e6], got %g", what, slowdown);
    p->job.has_straggler = true;
    p->job.is_straggler_node = is_node;
    p->job.straggler_index = index;
    p->job.straggler_slowdown = slowdown;
    return 0;
}

uint64_t platform_n_leaf_groups(const Platform *p)
{
    const uint64_t npl = p->fabric.nodes_per_leaf;
    return npl == 0 ? 0 : (p->n_nodes + npl - 1) / npl;
}

const char *platform_flash_kernel_name(PlatformFlashKernel kernel)
{
    return flash_kernels[kernel];
}

bool platform_fabric_is_shared(const Platform *p)
{
    if (p->fabric.nodes_per_leaf == 0 || p->n_nodes < 2)
        return false;
    const bool is_above_leaf_limited =
        p->fabric.spine_oversubscription > 1.0 || p->fabric.core_oversubscription > 1.0;
    /* leaves of one node under an unlimited spine: the per-node model itself */
    if (p->fabric.nodes_per_leaf == 1 && !is_above_leaf_limited)
        return false;
    const bool is_oversubscribed = p->fabric.oversubscription > 1.0 || is_above_leaf_limited;
    const bool leaves_leaf = platform_n_leaf_groups(p) > 1 ||
                             (p->fabric.topology == FABRIC_RAIL_OPTIMIZED &&
                              p->job.ring_order == PLATFORM_RING_CROSS_NIC);
    return is_oversubscribed && leaves_leaf;
}
