/*
 * breakdown.c - charging a rank's idle compute time to what it waited for (see breakdown.h).
 */
#include "breakdown.h"

#include "../common/xalloc.h"

#include <string.h>

/* Adds `gap` seconds to the bucket of the op that held the compute stream up. */
static void charge(Breakdown *out, const Op *blocker, double gap)
{
    if (gap <= 0)
        return;
    if (blocker == NULL) {
        out->idle_s += gap;
        return;
    }
    switch ((OpKind)blocker->kind) {
    case OP_COLLECTIVE: out->exposed_coll_s[blocker->sub] += gap; break;
    case OP_COPY: out->exposed_copy_s += gap; break;
    case OP_DISK: out->exposed_nvme_s += gap; break;
    default: out->idle_s += gap; break;
    }
}

void breakdown_rank(const Graph *g, const EngineResult *r, uint32_t rank, Breakdown *out)
{
    memset(out, 0, sizeof *out);
    out->total_s = r->makespan_s;
    const Op *ops = graph_ops(g);
    const uint32_t n_ops = graph_n_ops(g);
    const OpId *succ = graph_successors(g);
    const uint32_t optimizer_label = graph_find_label(g, "optimizer step");

    /* For each compute op of the rank, the dependency that finished last. */
    OpId *blocker = xmalloc((n_ops ? n_ops : 1) * sizeof *blocker);
    for (uint32_t i = 0; i < n_ops; i++)
        blocker[i] = GRAPH_NO_OP;
    OpId last_done = GRAPH_NO_OP;
    for (uint32_t i = 0; i < n_ops; i++) {
        bool takes_time = ops[i].kind != OP_ALLOC && ops[i].kind != OP_FREE;
        if (ops[i].rank == rank && takes_time &&
            (last_done == GRAPH_NO_OP || r->op_end_s[i] > r->op_end_s[last_done]))
            last_done = i;
        for (uint32_t k = ops[i].succ_begin; k < ops[i].succ_end; k++) {
            OpId s = succ[k];
            if (ops[s].rank != rank || ops[s].stream_kind != STREAM_COMPUTE)
                continue;
            if (blocker[s] == GRAPH_NO_OP || r->op_end_s[i] > r->op_end_s[blocker[s]])
                blocker[s] = i;
        }
    }

    const Stream *streams = graph_streams(g);
    const OpId *stream_ops = graph_stream_ops(g);
    double cursor = 0.0;
    for (uint32_t s = 0; s < graph_n_streams(g); s++) {
        if (streams[s].rank != rank || streams[s].kind != STREAM_COMPUTE)
            continue;
        for (uint32_t k = streams[s].op_begin; k < streams[s].op_end; k++) {
            OpId id = stream_ops[k];
            const Op *op = &ops[id];
            double start = r->op_start_s[id], end = r->op_end_s[id];
            if (op->kind == OP_ALLOC || op->kind == OP_FREE)
                continue; /* take no time; a gap before them belongs to the next kernel */
            if (op->kind == OP_COMPUTE) {
                const Op *b = blocker[id] != GRAPH_NO_OP ? &ops[blocker[id]] : NULL;
                /* a gap is charged to the blocker only if it ended inside the gap */
                if (b && r->op_end_s[blocker[id]] <= cursor)
                    b = NULL;
                charge(out, b, start - cursor);
                if (op->label == optimizer_label)
                    out->optimizer_s += end - start;
                else
                    out->compute_s += end - start;
            } else {
                charge(out, NULL, start - cursor); /* allocations take no time */
            }
            cursor = end;
        }
    }
    if (last_done != GRAPH_NO_OP)
        charge(out, &ops[last_done], r->makespan_s - cursor);
    for (int k = 0; k < COLL_N_KINDS; k++)
        out->exposed_comm_s += out->exposed_coll_s[k];
    free(blocker);
}
