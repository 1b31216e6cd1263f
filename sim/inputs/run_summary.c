/*
 * run_summary.c - a run report read back (see run_summary.h).
 */
#include "run_summary.h"

#include "jsonfile.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <string.h>

static const SummaryRow rows[RUN_SUMMARY_N_ROWS] = {
    {"time.step_s", "step time", SUMMARY_SECONDS, SUMMARY_THROUGHPUT},
    {"throughput.tokens_per_s", "tokens/s", SUMMARY_RATE, SUMMARY_THROUGHPUT},
    {"throughput.tflops_per_gpu", "TFLOP/s per GPU", SUMMARY_RATE, SUMMARY_THROUGHPUT},
    {"throughput.mfu", "MFU", SUMMARY_FRACTION, SUMMARY_THROUGHPUT},

    {"time.compute_s", "compute (forward, backward)", SUMMARY_SECONDS, SUMMARY_BREAKDOWN},
    {"time.optimizer_s", "optimizer step", SUMMARY_SECONDS, SUMMARY_BREAKDOWN},
    {"time.exposed_comm_by_collective_s.all_reduce", "exposed all-reduce", SUMMARY_SECONDS,
     SUMMARY_BREAKDOWN},
    {"time.exposed_comm_by_collective_s.all_gather", "exposed all-gather", SUMMARY_SECONDS,
     SUMMARY_BREAKDOWN},
    {"time.exposed_comm_by_collective_s.reduce_scatter", "exposed reduce-scatter",
     SUMMARY_SECONDS, SUMMARY_BREAKDOWN},
    {"time.exposed_comm_by_collective_s.broadcast", "exposed broadcast", SUMMARY_SECONDS,
     SUMMARY_BREAKDOWN},
    {"time.exposed_h2d_s", "exposed PCIe H2D", SUMMARY_SECONDS, SUMMARY_BREAKDOWN},
    {"time.exposed_d2h_s", "exposed PCIe D2H", SUMMARY_SECONDS, SUMMARY_BREAKDOWN},
    {"time.exposed_nvme_read_s", "exposed NVMe read", SUMMARY_SECONDS, SUMMARY_BREAKDOWN},
    {"time.exposed_nvme_write_s", "exposed NVMe write", SUMMARY_SECONDS, SUMMARY_BREAKDOWN},
    {"time.exposed_cpu_optimizer_s", "exposed CPU optimizer", SUMMARY_SECONDS,
     SUMMARY_BREAKDOWN},
    {"time.idle_s", "idle", SUMMARY_SECONDS, SUMMARY_BREAKDOWN},

    {"memory.gpu_breakdown_bytes.params", "parameters", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_breakdown_bytes.grads", "gradients", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_breakdown_bytes.optimizer", "optimizer states", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_breakdown_bytes.activations", "activations", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_breakdown_bytes.buffers", "buffers", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_breakdown_bytes.step_copies", "optimizer step copies", SUMMARY_GIB,
     SUMMARY_MEMORY},
    {"memory.gpu_breakdown_bytes.workspace", "cuBLAS workspaces", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_peak_bytes", "= allocated peak", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_reserved_peak_bytes", "reserved peak", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_device_peak_bytes", "= device peak", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.gpu_capacity_bytes", "HBM", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.cpu_peak_bytes", "host memory per node", SUMMARY_GIB, SUMMARY_MEMORY},
    {"memory.nvme_peak_bytes", "NVMe per node", SUMMARY_GIB, SUMMARY_MEMORY},

    {"comm.bytes_per_rank.all_reduce", "all-reduce", SUMMARY_GB, SUMMARY_COLLECTIVE_BYTES},
    {"comm.bytes_per_rank.all_gather", "all-gather", SUMMARY_GB, SUMMARY_COLLECTIVE_BYTES},
    {"comm.bytes_per_rank.reduce_scatter", "reduce-scatter", SUMMARY_GB,
     SUMMARY_COLLECTIVE_BYTES},
    {"comm.bytes_per_rank.broadcast", "broadcast", SUMMARY_GB, SUMMARY_COLLECTIVE_BYTES},

    {"comm.bytes_per_link_class.nvlink", "over nvlink", SUMMARY_GB, SUMMARY_LINK_BYTES},
    {"comm.bytes_per_link_class.pcie", "over pcie", SUMMARY_GB, SUMMARY_LINK_BYTES},
    {"comm.bytes_per_link_class.nic", "over nic", SUMMARY_GB, SUMMARY_LINK_BYTES},
    {"comm.bytes_per_link_class.nvme", "over nvme", SUMMARY_GB, SUMMARY_LINK_BYTES},
};

static const char *const group_titles[SUMMARY_N_GROUPS] = {
    "throughput", "time per step, rank 0 (s)", "memory per GPU, simulated (GiB)",
    "bytes sent per rank per step (GB)", "bytes per rank per step by link class (GB)"};

const SummaryRow *run_summary_row(size_t k)
{
    return k < RUN_SUMMARY_N_ROWS ? &rows[k] : NULL;
}

const char *run_summary_group_title(SummaryGroup g)
{
    return group_titles[g];
}

/* The node at a dotted path, or NULL. */
static const cJSON *walk(const cJSON *node, const char *dotted)
{
    char key[96];
    while (node != NULL && *dotted) {
        size_t n = strcspn(dotted, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, dotted, n);
        key[n] = '\0';
        node = cJSON_GetObjectItemCaseSensitive(node, key);
        dotted += n + (dotted[n] == '.');
    }
    return node;
}

static void copy_string(const cJSON *root, const char *path, char *out, size_t out_size)
{
    const cJSON *v = walk(root, path);
    snprintf(out, out_size, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static uint64_t number(const cJSON *root, const char *path)
{
    const cJSON *v = walk(root, path);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (uint64_t)v->valuedouble : 0;
}

int run_summary_read(RunSummary *out, const char *what, const char *text, size_t n_bytes,
                     Err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = jsonfile_parse(what, text, n_bytes, err);
    if (root == NULL)
        return -1;
    const cJSON *command = walk(root, "command");
    int rc = 0;
    if (!cJSON_IsString(command) || strcmp(command->valuestring, "run") != 0) {
        rc = err_set(err, "%s: command: expected \"run\", got something else", what);
        goto done;
    }
    for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++) {
        const cJSON *v = walk(root, rows[k].path);
        if (!cJSON_IsNumber(v)) {
            rc = err_set(err, "%s: %s: expected a number, got none", what, rows[k].path);
            goto done;
        }
        out->values[k] = v->valuedouble;
    }
    copy_string(root, "model.name", out->model, sizeof out->model);
    copy_string(root, "config.file", out->config_file, sizeof out->config_file);
    copy_string(root, "cluster.platform", out->platform, sizeof out->platform);
    copy_string(root, "config.precision", out->precision, sizeof out->precision);
    copy_string(root, "config.offload_optimizer", out->offload_optimizer,
                sizeof out->offload_optimizer);
    copy_string(root, "config.offload_param", out->offload_param, sizeof out->offload_param);
    copy_string(root, "config.activation_checkpointing", out->recompute, sizeof out->recompute);
    copy_string(root, "verdict.runs_out", out->runs_out, sizeof out->runs_out);
    copy_string(root, "verdict.hint.change", out->hint, sizeof out->hint);
    out->gpus = number(root, "cluster.gpus");
    out->zero_stage = number(root, "config.zero_stage");
    out->micro_batch = number(root, "config.micro_batch");
    out->grad_accum = number(root, "config.grad_accum");
    out->global_batch = number(root, "config.global_batch");
    out->seq_len = number(root, "config.seq_len");
    out->fits = cJSON_IsTrue(walk(root, "verdict.fits"));
    const cJSON *s = walk(root, "verdict.short_bytes");
    out->short_bytes = cJSON_IsNumber(s) ? s->valuedouble : 0.0;
done:
    cJSON_Delete(root);
    return rc;
}
