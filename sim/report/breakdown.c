/*
 * breakdown.c - charging a rank's idle compute time along the critical path (see
 * breakdown.h).
 */
#include "breakdown.h"

#include "../common/xalloc.h"

#include <string.h>

/* The account an op's running time is charged to; NULL for compute on the GPU itself. */
static double *account(Breakdown *out, const Op *op)
{
    switch ((OpKind)op->kind) {
    case OP_COLLECTIVE: return &out->exposed_coll_s[op->sub];
    case OP_COPY: return op->sub == COPY_H2D ? &out->exposed_h2d_s : &out->exposed_d2h_s;
    case OP_DISK:
        return op->sub == DISK_READ ? &out->exposed_nvme_read_s : &out->exposed_nvme_write_s;
    case OP_COMPUTE: return op->sub == DEVICE_CPU ? &out->exposed_cpu_s : &out->idle_s;
    default: return NULL; /* allocations take no time */
    }
}

/* Charges the window [lo, hi) that ends when op `id` finished: each op on the chain of
 * last-finishing dependencies takes the part of the window it was running. */
static void charge_chain(Breakdown *out, const Op *ops, const EngineResult *r, const OpId *pred,
                         OpId id, double lo, double hi)
{
    while (id != GRAPH_NO_OP && hi > lo) {
        double end = r->op_end_s[id] < hi ? r->op_end_s[id] : hi;
        double start = r->op_start_s[id] > lo ? r->op_start_s[id] : lo;
        double *acc = account(out, &ops[id]);
        if (acc != NULL && end > start) {
            *acc += end - start;
            hi = start;
        } else if (end < hi) {
            out->idle_s += hi - end; /* nothing ran between this op's end and hi */
            hi = end;
        }
        id = pred[id];
    }
    if (hi > lo)
        out->idle_s += hi - lo;
}

void breakdown_rank(const Graph *g, const EngineResult *r, uint32_t rank, Breakdown *out)
{
    memset(out, 0, sizeof *out);
    out->total_s = r->makespan_s;
    const Op *ops = graph_ops(g);
    const uint32_t n_ops = graph_n_ops(g);
    const OpId *succ = graph_successors(g);
    const Stream *streams = graph_streams(g);
    const OpId *stream_ops = graph_stream_ops(g);
    const uint32_t optimizer_label = graph_find_label(g, "optimizer step");

    /* For every op, the dependency (cross-stream or its stream predecessor) that finished
     * last: the one that decided when it could start. */
    OpId *pred = xmalloc((n_ops ? n_ops : 1) * sizeof *pred);
    for (uint32_t i = 0; i < n_ops; i++)
        pred[i] = GRAPH_NO_OP;
    for (uint32_t s = 0; s < graph_n_streams(g); s++)
        for (uint32_t k = streams[s].op_begin + 1; k < streams[s].op_end; k++)
            pred[stream_ops[k]] = stream_ops[k - 1];
    for (uint32_t i = 0; i < n_ops; i++) {
        for (uint32_t k = ops[i].succ_begin; k < ops[i].succ_end; k++) {
            OpId s = succ[k];
            if (pred[s] == GRAPH_NO_OP || r->op_end_s[i] > r->op_end_s[pred[s]])
                pred[s] = i;
        }
    }

    for (uint32_t i = 0; i < n_ops; i++) {
        if (ops[i].rank != rank)
            continue;
        double d = r->op_end_s[i] - r->op_start_s[i];
        if (ops[i].kind == OP_COPY && ops[i].sub == COPY_H2D)
            out->busy_h2d_s += d;
        else if (ops[i].kind == OP_COPY && ops[i].sub == COPY_D2H)
            out->busy_d2h_s += d;
        else if (ops[i].kind == OP_DISK && ops[i].sub == DISK_READ)
            out->busy_nvme_read_s += d;
        else if (ops[i].kind == OP_DISK)
            out->busy_nvme_write_s += d;
        else if (ops[i].kind == OP_COMPUTE && ops[i].sub == DEVICE_CPU)
            out->busy_cpu_s += d;
    }

    OpId last_done = GRAPH_NO_OP;
    for (uint32_t i = 0; i < n_ops; i++) {
        bool takes_time = ops[i].kind != OP_ALLOC && ops[i].kind != OP_FREE;
        if (ops[i].rank == rank && takes_time &&
            (last_done == GRAPH_NO_OP || r->op_end_s[i] > r->op_end_s[last_done]))
            last_done = i;
    }

    double cursor = 0.0;
    for (uint32_t s = 0; s < graph_n_streams(g); s++) {
        if (streams[s].rank != rank || streams[s].kind != STREAM_COMPUTE)
            continue;
        for (uint32_t k = streams[s].op_begin; k < streams[s].op_end; k++) {
            OpId id = stream_ops[k];
            const Op *op = &ops[id];
            if (op->kind != OP_COMPUTE)
                continue; /* allocations take no time; a gap before them is the next kernel's */
            double start = r->op_start_s[id], end = r->op_end_s[id];
            if (start > cursor)
                charge_chain(out, ops, r, pred, pred[id], cursor, start);
            if (op->label == optimizer_label)
                out->optimizer_s += end - start;
            else
                out->compute_s += end - start;
            cursor = end;
        }
    }
    if (last_done != GRAPH_NO_OP && r->makespan_s > cursor)
        charge_chain(out, ops, r, pred, last_done, cursor, r->makespan_s);
    for (int k = 0; k < COLL_N_KINDS; k++)
        out->exposed_comm_s += out->exposed_coll_s[k];
    free(pred);
}
