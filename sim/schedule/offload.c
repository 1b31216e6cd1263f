/*
 * offload.c - what ZeRO-Offload and ZeRO-Infinity add to a step (see builder.h).
 *
 * ZeRO-Offload (Ren et al. 2021): as backward reduces each gradient bucket, every rank copies
 * its share of the 16-bit gradients to the host (D2H, where they accumulate in fp32); at the
 * boundary the host's CPU Adam steps the rank's partition and the updated 16-bit parameters
 * go back over PCIe (H2D) before the next forward. With a one-step delayed parameter update
 * the next step runs on the parameters of the step before, so the CPU step overlaps it.
 * ZeRO-Infinity (Rajbhandari et al. 2021): optimizer states on NVMe are read, updated and
 * written back sub-group by sub-group (sub_group_size elements), the next read issued before
 * the last write when pipeline_read is on and the next update not waiting for a write when
 * pipeline_write is on; parameters on NVMe or host are fetched (NVMe read, then H2D) for each
 * unit before it is gathered, with the same prefetch as the gather, and updated parameters
 * are written back to NVMe. The node's CPU and NVMe are shared by its GPUs: contention comes
 * from the engine.
 */
#include "builder.h"

#include "../common/xalloc.h"

bool offload_has_optimizer(const Builder *b)
{
    return b->z->offload_optimizer.device != OFFLOAD_NONE;
}

void offload_gradients(Builder *b, double bucket_elems, const OpId *after)
{
    /* A rank owns partition/Psi of every bucket on average (its slice of each reduce); the
     * offloaded part of that slice goes to the host. */
    const double share = bucket_elems * (double)b->mem.offloaded_elems / (double)b->params.total;
    const double bytes = share * b->mem.grad_bytes;
    const uint32_t label = graph_label(b->g, "gradients to host");
    const bool to_nvme = b->z->offload_optimizer.device == OFFLOAD_NVME;
    const uint32_t swap_label = graph_label(b->g, "gradients to nvme");
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId id = graph_copy(b->g, r, STREAM_D2H, COPY_D2H, bytes, label);
        builder_depend(b, after[r], id);
        if (to_nvme) { /* accumulated in fp32 and swapped out with the optimizer states */
            OpId swap = graph_disk(b->g, r, DISK_WRITE, share * 4.0, swap_label);
            builder_depend(b, id, swap);
            id = swap;
        }
        b->last_d2h[r] = id;
    }
}

void offload_fetch_shard(Builder *b, double shard_bytes, const OpId *before, OpId *ready)
{
    const bool from_nvme = b->z->offload_param.device == OFFLOAD_NVME;
    const uint32_t read_label = graph_label(b->g, "params from nvme");
    const uint32_t copy_label = graph_label(b->g, "params to gpu");
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId read = GRAPH_NO_OP;
        if (from_nvme) {
            read = graph_disk(b->g, r, DISK_READ, shard_bytes, read_label);
            builder_depend(b, before ? before[r] : GRAPH_NO_OP, read);
        }
        OpId copy = graph_copy(b->g, r, STREAM_H2D, COPY_H2D, shard_bytes, copy_label);
        builder_depend(b, read != GRAPH_NO_OP ? read : (before ? before[r] : GRAPH_NO_OP), copy);
        ready[r] = copy;
    }
}

/* Elements of sub-group j of n: all full but the last. */
static double sub_group_elems(uint32_t j, uint32_t n, double sub, double part)
{
    return j + 1 < n ? sub : part - sub * (n - 1);
}

/* The host optimizer over the offloaded part of one rank's partition; returns its last op. */
static OpId host_step(Builder *b, uint32_t r, uint32_t adam_label)
{
    const OffloadConfig *oo = &b->z->offload_optimizer;
    const double part = (double)b->mem.offloaded_elems;
    if (oo->device == OFFLOAD_CPU || part <= 0) { /* (nothing offloaded: an empty step) */
        OpId step = graph_compute(b->g, r, STREAM_CPU, DEVICE_CPU, PURPOSE_OPTIMIZER, part, adam_label);
        builder_depend(b, b->last_d2h[r], step);
        return step;
    }
    /* NVMe: read each sub-group's fp32 states and gradients, update, write the states back. */
    /* DeepSpeed's sub-groups hold whole parameter partitions (stage3.py
     * _create_fp16_sub_groups), so a sub_group_size below one tensor still makes at most one
     * sub-group per parameter tensor */
    double sub = (double)b->z->sub_group_size < part ? (double)b->z->sub_group_size : part;
    const double most = (double)params_n_tensors(&b->params, b->model->n_layers);
    if ((part + sub - 1) / sub > most)
        sub = part / most;
    const uint32_t n_sub = (uint32_t)((part + sub - 1) / sub);
    const double state_bytes = b->mem.optimizer_bytes;
    const uint32_t read_label = graph_label(b->g, "optimizer states from nvme");
    const uint32_t write_label = graph_label(b->g, "optimizer states to nvme");
    const uint32_t grads_label = graph_label(b->g, "gradients from nvme");
    OpId grads = graph_disk(b->g, r, DISK_READ, part * 4.0, grads_label);
    builder_depend(b, b->last_d2h[r], grads);
    OpId next_read = graph_disk(b->g, r, DISK_READ,
                                sub_group_elems(0, n_sub, sub, part) * state_bytes, read_label);
    OpId last_write = GRAPH_NO_OP, step = GRAPH_NO_OP;
    for (uint32_t j = 0; j < n_sub; j++) {
        double elems = sub_group_elems(j, n_sub, sub, part);
        OpId read = next_read;
        next_read = GRAPH_NO_OP;
        if (oo->pipeline_read && j + 1 < n_sub) /* the next read before this write */
            next_read =
                graph_disk(b->g, r, DISK_READ,
                           sub_group_elems(j + 1, n_sub, sub, part) * state_bytes, read_label);
        step = graph_compute(b->g, r, STREAM_CPU, DEVICE_CPU, PURPOSE_OPTIMIZER, elems, adam_label);
        builder_depend(b, read, step);
        if (!oo->pipeline_write)
            builder_depend(b, last_write, step);
        last_write = graph_disk(b->g, r, DISK_WRITE, elems * state_bytes, write_label);
        builder_depend(b, step, last_write);
        if (!oo->pipeline_read && j + 1 < n_sub)
            next_read =
                graph_disk(b->g, r, DISK_READ,
                           sub_group_elems(j + 1, n_sub, sub, part) * state_bytes, read_label);
    }
    return oo->pipeline_write ? step : last_write;
}

void offload_optimizer_step(Builder *b)
{
    const uint32_t adam_label = graph_label(b->g, "cpu optimizer step");
    const uint32_t h2d_label = graph_label(b->g, "params to gpu");
    const uint32_t write_label = graph_label(b->g, "params to nvme");
    const double param_bytes = (double)b->mem.offloaded_elems * b->mem.param_bytes;
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId done = host_step(b, r, adam_label);
        switch (b->z->offload_param.device) {
        case OFFLOAD_NONE: { /* the GPU holds the parameters: send the update back */
            OpId copy = graph_copy(b->g, r, STREAM_H2D, COPY_H2D, param_bytes, h2d_label);
            builder_depend(b, done, copy);
            done = copy;
            break;
        }
        case OFFLOAD_NVME: {
            OpId write = graph_disk(b->g, r, DISK_WRITE, param_bytes, write_label);
            builder_depend(b, done, write);
            done = write;
            break;
        }
        default: break; /* updated in place in host memory */
        }
        b->older_update[r] = b->pending_update[r];
        b->pending_update[r] = done;
    }
}

void offload_updated_params(Builder *b, double elems)
{
    const double bytes = elems * b->mem.param_bytes;
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        OpId copy =
            graph_copy(b->g, r, STREAM_D2H, COPY_D2H, bytes, graph_label(b->g, "params to host"));
        builder_depend(b, b->last_compute[r], copy);
        if (offload_has_optimizer(b)) /* joins the host's part of the update */
            builder_depend(b, b->pending_update[r], copy);
        OpId done = copy;
        if (b->z->offload_param.device == OFFLOAD_NVME) {
            done = graph_disk(b->g, r, DISK_WRITE, bytes, graph_label(b->g, "params to nvme"));
            builder_depend(b, copy, done);
        }
        b->pending_update[r] = done;
    }
}

void offload_model_states(Builder *b, uint32_t *buffers, bool is_alloc)
{
    const ZeroMemory *m = &b->mem;
    const struct {
        double bytes;
        MemSpace space;
        MemCategory category;
    } states[] = {
        {(double)m->cpu_params, MEM_CPU, MEM_PARAMS},
        {(double)m->cpu_grads, MEM_CPU, MEM_GRADS},
        {(double)m->cpu_optimizer, MEM_CPU, MEM_OPTIMIZER},
        {(double)m->cpu_buffers, MEM_CPU, MEM_BUFFERS},
        {(double)m->nvme_params, MEM_NVME, MEM_PARAMS},
        {(double)m->nvme_grads, MEM_NVME, MEM_GRADS},
        {(double)m->nvme_optimizer, MEM_NVME, MEM_OPTIMIZER},
    };
    enum { N_STATES = sizeof states / sizeof states[0] };
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        for (int k = 0; k < N_STATES; k++) {
            if (states[k].bytes <= 0)
                continue;
            uint32_t *buf = &buffers[(size_t)r * N_STATES + k];
            if (is_alloc) {
                graph_alloc(b->g, r, STREAM_CPU, states[k].space, states[k].category,
                            states[k].bytes, buf);
            } else {
                OpId f = graph_free(b->g, r, STREAM_CPU, *buf);
                builder_depend(b, b->pending_update[r], f);
                builder_depend(b, b->last_compute[r], f);
            }
        }
    }
}
