/*
 * breakdown.c - charging a rank's idle compute time along the critical path (see
 * breakdown.h).
 */
#include "breakdown.h"

#include "../common/xalloc.h"

#include <assert.h>

#include <string.h>

static const BreakdownCategoryInfo categories[BD_N] = {
    [BD_COMPUTE] = {"compute (forward, backward)", "compute", "compute_s", NULL},
    [BD_OPTIMIZER] = {"optimizer step", "GPU optimizer", "optimizer_s", NULL},
    [BD_ALL_REDUCE] = {"exposed all-reduce", "exposed all-reduce", "all_reduce", NULL},
    [BD_ALL_GATHER] = {"exposed all-gather", "exposed all-gather", "all_gather", NULL},
    [BD_REDUCE_SCATTER] = {"exposed reduce-scatter", "exposed reduce-scatter", "reduce_scatter",
                           NULL},
    [BD_BROADCAST] = {"exposed broadcast", "exposed broadcast", "broadcast", NULL},
    [BD_ALL_TO_ALL] = {"exposed all-to-all (MoE)", "exposed all-to-all", "all_to_all", NULL},
    [BD_H2D] = {"exposed PCIe host-to-GPU", "PCIe host-to-GPU", "exposed_h2d_s", "h2d"},
    [BD_D2H] = {"exposed PCIe GPU-to-host", "PCIe GPU-to-host", "exposed_d2h_s", "d2h"},
    [BD_NVME_READ] = {"exposed NVMe read", "NVMe read", "exposed_nvme_read_s", "nvme_read"},
    [BD_NVME_WRITE] = {"exposed NVMe write", "NVMe write", "exposed_nvme_write_s", "nvme_write"},
    [BD_CPU_OPTIMIZER] = {"exposed CPU optimizer", "CPU optimizer", "exposed_cpu_optimizer_s",
                          "cpu_optimizer"},
    [BD_IDLE] = {"idle", "idle", "idle_s", NULL},
};

_Static_assert(BD_BROADCAST - BD_ALL_REDUCE == COLL_BROADCAST - COLL_ALL_REDUCE &&
                   BD_ALL_GATHER - BD_ALL_REDUCE == COLL_ALL_GATHER - COLL_ALL_REDUCE &&
                   BD_REDUCE_SCATTER - BD_ALL_REDUCE == COLL_REDUCE_SCATTER - COLL_ALL_REDUCE &&
                   BD_ALL_TO_ALL - BD_ALL_REDUCE == COLL_ALL_TO_ALL - COLL_ALL_REDUCE,
               "the collective categories follow CollectiveKind");

const BreakdownCategoryInfo *breakdown_category(BreakdownCategory c)
{
    assert(c < BD_N);
    return &categories[c];
}

bool breakdown_is_collective(BreakdownCategory c)
{
    return c >= BD_ALL_REDUCE && c < BD_ALL_REDUCE + COLL_N_KINDS;
}

double breakdown_exposed_comm_s(const Breakdown *b)
{
    double s = 0.0;
    for (int c = 0; c < COLL_N_KINDS; c++)
        s += b->time_s[BD_ALL_REDUCE + c];
    return s;
}

BreakdownCategory breakdown_largest(const Breakdown *b)
{
    BreakdownCategory best = BD_COMPUTE;
    for (int c = 1; c < BD_N; c++)
        if (b->time_s[c] > b->time_s[best])
            best = (BreakdownCategory)c;
    return best;
}

/* The category an op's running time is charged to (and its own work counted in), or BD_N
 * for allocations, which take no time. A GPU kernel on another stream's path is not a wait
 * of the compute stream on anything modelled: idle. */
static BreakdownCategory category_of(const Op *op)
{
    switch ((OpKind)op->kind) {
    case OP_COLLECTIVE: return (BreakdownCategory)(BD_ALL_REDUCE + op->sub);
    case OP_COPY: return op->sub == COPY_H2D ? BD_H2D : BD_D2H;
    case OP_DISK: return op->sub == DISK_READ ? BD_NVME_READ : BD_NVME_WRITE;
    case OP_COMPUTE: return op->sub == DEVICE_CPU ? BD_CPU_OPTIMIZER : BD_IDLE;
    default: return BD_N;
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
        BreakdownCategory c = category_of(&ops[id]);
        if (c != BD_N && end > start) {
            out->time_s[c] += end - start;
            hi = start;
        } else if (end < hi) {
            out->time_s[BD_IDLE] += hi - end; /* nothing ran between this op's end and hi */
            hi = end;
        }
        id = pred[id];
    }
    if (hi > lo)
        out->time_s[BD_IDLE] += hi - lo;
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
        BreakdownCategory c = category_of(&ops[i]);
        if (c != BD_N && categories[c].busy_key != NULL)
            out->busy_s[c] += r->op_end_s[i] - r->op_start_s[i];
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
            out->time_s[op->purpose == PURPOSE_OPTIMIZER ? BD_OPTIMIZER : BD_COMPUTE] +=
                end - start;
            cursor = end;
        }
    }
    if (last_done != GRAPH_NO_OP && r->makespan_s > cursor)
        charge_chain(out, ops, r, pred, last_done, cursor, r->makespan_s);
    free(pred);
}
