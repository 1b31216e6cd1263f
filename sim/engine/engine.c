/*
 * engine.c - one SimGrid actor per rank running an event loop over the rank's streams (see
 * engine.h).
 *
 * A rank's actor starts every op whose stream is free and whose dependencies are done: an
 * execution, a flow, an I/O or a collective member's flows, all asynchronous (activity.h), or
 * a wait of known length (NCCL's latency, an HBM copy) as a deadline of its own; it then waits
 * for whichever of them ends first, and goes on. Dependencies between streams of a rank are
 * counters in the loop; ranks meet only through their collectives' flows, which start when
 * sender and receiver have both posted them (mailboxes, one per (rank, stream kind, phase),
 * as in NCCL). All run state lives in one Run record, each rank's part touched only by its
 * own actor, except the memory tracker's node accounts; SimGrid runs actors one at a time, so
 * nothing needs locking.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, clock_gettime */

#include "engine.h"

#include "activity.h"
#include "capacity.h"

#include "platform_xml.h"

#include "../common/xalloc.h"

#include <simgrid/actor.h>
#include <simgrid/disk.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAILBOXES_PER_STREAM (COLLECTIVE_MAX_PHASES * COLLECTIVE_MAX_FLOWS)

typedef struct Run Run;

/* Where a stream is: the op in flight (at most one: a stream runs its ops in order), what
 * it waits for, and the collective's latency terms once its flows are posted. */
typedef struct StreamState {
    OpId op;            /* the op in flight, or GRAPH_NO_OP */
    uint32_t next;      /* the stream's next op: stream_ops[next] */
    uint32_t n_pending; /* the op's activities not finished */
    uint32_t step;      /* stepwise collectives: the step in flight */
    double deadline_s;  /* SimGrid clock at which the op's wait ends; < 0: none */
    double posted_s;    /* clock when a collective's flows were posted */
    double latency_s;   /* its fluid latency: steps x hop latency, over its phases */
    double paid_s;      /* the part its flows pay themselves (the slowest hop) */
} StreamState;

/* One rank's actor: its streams (rank_streams[stream_begin .. stream_end)) and the streams
 * whose dependency has just been met, in the order they were met (a ring of n_streams). */
typedef struct RankLoop {
    Run *run;
    uint32_t rank;
    uint32_t stream_begin, stream_end;
    uint32_t n_unfinished; /* streams with ops left */
    uint32_t *ready;       /* the ring, n_streams entries */
    uint32_t ready_head, n_ready;
    ActivitySet *set;
} RankLoop;

struct Run {
    const Graph *graph;
    const Op *ops;
    const Stream *streams;
    const OpId *stream_ops;
    const OpId *successors;
    const Collective *collectives;
    EngineOptions opts;
    uint32_t *remaining;    /* per op: unfinished cross-stream dependencies */
    OpId *waiting;          /* per stream: the op it is held on, or GRAPH_NO_OP */
    StreamState *state;     /* per stream */
    uint32_t *rank_streams; /* the streams of rank 0, then of rank 1, ... (stream order) */
    uint32_t *ready_ring;   /* RankLoop.ready's storage, one entry per stream */
    RankLoop *loops;        /* per rank */
    uint8_t *algo;          /* per collective: resolved CollAlgo (the flows' shape) */
    bool *is_aligned;       /* per collective: its group is whole nodes */
    double *min_bw_s;       /* per collective: the protocol's bound on the bandwidth part */
    uint8_t *n_kernels;     /* per rank: collectives running on its GPU (its pstate) */
    uint32_t n_finished;    /* streams */
    uint32_t n_done;        /* ops completed, for progress */
    double t0;
    double wall0; /* host clock at the start, for progress */
    bool is_progress_shown;
    EngineResult *out;
};

static struct {
    bool is_ready;
    Platform platform;
    sg_host_t *gpus;         /* per rank */
    sg_host_t *cpus;         /* per node */
    sg_disk_t *disks;        /* per node, NULL without NVMe */
    sg_mailbox_t *mailboxes; /* per (rank, stream kind, phase x flow), filled on first use */
    bool has_latencies;      /* route latencies looked up (only possible once running) */
    double intra_latency_s;  /* GPU to GPU route latency inside a node */
    double inter_latency_s;  /* ... and across nodes (the same for every pair by design) */
} engine;

int engine_init(const Platform *p, Precision precision, Err *err)
{
    if (engine.is_ready)
        return err_set(err, "engine: expected one platform per process, got a second "
                            "engine_init");
    char path[] = "/tmp/zerosim-platform-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return err_set(err, "engine: cannot create a temporary platform file in /tmp");
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        unlink(path);
        return err_set(err, "engine: cannot write the temporary platform file %s", path);
    }
    platform_xml_write(p, precision, f);
    if (fclose(f) != 0) {
        unlink(path);
        return err_set(err, "engine: cannot write the temporary platform file %s", path);
    }
    /* contexts/guard-size:0: actor stacks from malloc, without a guard page's mapping each,
     * so that 16,384 GPUs' actors fit under vm.max_map_count (capacity.h). Without the guard
     * an overflow would go unnoticed: the stacks stay at 64 KiB, four times the 16 KiB that
     * also ran the benchmarks (docs/PERFORMANCE.md). */
    char *argv[] = {"zerosim",
                    "--cfg=network/model:CM02",
                    "--cfg=network/crosstraffic:0",
                    "--cfg=contexts/stack-size:64",
                    "--cfg=contexts/guard-size:0",
                    "--log=root.thres:critical",
                    NULL};
    int argc = 6;
    simgrid_init(&argc, argv);
    simgrid_load_platform(path);
    unlink(path);

    engine.platform = *p;
    const uint32_t n_ranks = (uint32_t)platform_n_gpus(p), n_nodes = (uint32_t)p->n_nodes;
    engine.gpus = xmalloc(n_ranks * sizeof *engine.gpus);
    engine.cpus = xmalloc(n_nodes * sizeof *engine.cpus);
    engine.disks = xcalloc(n_nodes, sizeof *engine.disks);
    engine.mailboxes =
        xcalloc((size_t)n_ranks * STREAM_N_KINDS * MAILBOXES_PER_STREAM, sizeof *engine.mailboxes);
    /* Hosts by their generated names, from one list: SimGrid 3.32's sg_host_by_name searches
     * zone by zone (NetZoneImpl::get_host_by_name_or_null), quadratic over all hosts. */
    sg_host_t *hosts = sg_host_list();
    for (size_t i = 0, n = sg_host_count(); i < n; i++) {
        unsigned index;
        char kind[4], rest;
        if (sscanf(sg_host_get_name(hosts[i]), "%3[a-z]%u%c", kind, &index, &rest) != 2)
            continue;
        if (strcmp(kind, "gpu") == 0 && index < n_ranks)
            engine.gpus[index] = hosts[i];
        else if (strcmp(kind, "cpu") == 0 && index < n_nodes)
            engine.cpus[index] = hosts[i];
    }
    free(hosts);
    for (uint32_t k = 0; k < n_nodes; k++) {
        unsigned n_disks = 0;
        sg_disk_t *disks = NULL;
        sg_host_get_disks(engine.cpus[k], &n_disks, &disks);
        if (n_disks > 0)
            engine.disks[k] = disks[0];
        free(disks);
    }
    engine.is_ready = true;
    return 0;
}

static double now(const Run *run)
{
    return simgrid_get_clock() - run->t0;
}

static void queue(RankLoop *l, uint32_t s);

/* Marks op done; a stream held on a successor whose last dependency this was joins its
 * rank's ready ring (dependencies never cross ranks: run_check). */
static void complete(Run *run, OpId id)
{
    const Op *op = &run->ops[id];
    for (uint32_t k = op->succ_begin; k < op->succ_end; k++) {
        OpId s = run->successors[k];
        if (--run->remaining[s] == 0) {
            uint32_t stream = run->ops[s].stream;
            if (run->waiting[stream] == s) {
                run->waiting[stream] = GRAPH_NO_OP;
                queue(&run->loops[run->ops[s].rank], stream);
            }
        }
    }
}

/* The mailbox a rank receives on for (stream kind, phase, flow); looked up once, then
 * cached. */
static sg_mailbox_t mailbox(uint32_t rank, uint32_t stream_kind, uint32_t slot)
{
    size_t index = ((size_t)rank * STREAM_N_KINDS + stream_kind) * MAILBOXES_PER_STREAM + slot;
    if (engine.mailboxes[index] == NULL) {
        char name[48];
        snprintf(name, sizeof name, "m%u.%u.%u", rank, stream_kind, slot);
        engine.mailboxes[index] = sg_mailbox_by_name(name);
    }
    return engine.mailboxes[index];
}

/* Posts this member's part of one phase (or one step of it: `fraction` of each flow) for
 * stream s: for each flow a send to its next member and a receive from its previous one. */
static void post_phase(RankLoop *l, uint32_t s, const Op *op, const CollPhase *ph, uint32_t phase,
                       double fraction)
{
    Run *run = l->run;
    for (uint32_t f = 0; f < ph->n_flows; f++) {
        const CollFlow *flow = &ph->flow[f];
        double bytes = flow->bytes * fraction;
        uint32_t slot = phase * COLLECTIVE_MAX_FLOWS + f;
        if (bytes <= 0)
            continue;
        if (flow->send_to != COLLECTIVE_NO_PEER) {
            activity_put(l->set, mailbox(flow->send_to, op->stream_kind, slot), bytes, s);
            run->state[s].n_pending++;
            LinkClass cls = topology_gpu_pair_class(&engine.platform, op->rank, flow->send_to);
            run->out->link_bytes[op->rank][cls] += bytes;
            if (run->out->op_link_bytes != NULL)
                run->out->op_link_bytes[op - run->ops][cls] += bytes;
            run->out->coll_bytes[op->rank][op->sub] += bytes;
            run->out->n_activities++;
        }
        if (flow->recv_from != COLLECTIVE_NO_PEER) {
            activity_get(l->set, mailbox(op->rank, op->stream_kind, slot), s);
            run->state[s].n_pending++;
        }
    }
}

/* Every intra-node GPU pair has the same route latency, and every inter-node pair: look them
 * up once, from inside the simulation (routes exist only once the platform is sealed), since
 * a route query is costly on a large platform. */
static void lookup_latencies(void)
{
    const Platform *p = &engine.platform;
    if (p->gpus_per_node > 1)
        engine.intra_latency_s = sg_host_get_route_latency(engine.gpus[0], engine.gpus[1]);
    if (p->n_nodes > 1)
        engine.inter_latency_s =
            sg_host_get_route_latency(engine.gpus[0], engine.gpus[p->gpus_per_node]);
    engine.has_latencies = true;
}

/* The slowest hop of a phase's flows: the latency each of its steps pays. */
static double phase_hop_latency(const Op *op, const CollPhase *ph)
{
    if (!engine.has_latencies)
        lookup_latencies();
    double worst = 0.0;
    for (uint32_t f = 0; f < ph->n_flows; f++) {
        uint32_t peer =
            ph->flow[f].send_to != COLLECTIVE_NO_PEER ? ph->flow[f].send_to : ph->flow[f].recv_from;
        if (peer == COLLECTIVE_NO_PEER)
            continue;
        bool same_node =
            topology_node(&engine.platform, op->rank) == topology_node(&engine.platform, peer);
        double lat = same_node ? engine.intra_latency_s : engine.inter_latency_s;
        if (lat > worst)
            worst = lat;
    }
    return worst;
}

/* Nodes a group spans: members are in rank order within each node's block. */
static uint32_t group_n_nodes(const Platform *p, const uint32_t *members, uint32_t n)
{
    uint32_t n_nodes = 0, last = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = topology_node(p, members[i]);
        if (node != last) {
            n_nodes++;
            last = node;
        }
    }
    return n_nodes ? n_nodes : 1;
}

/* Collective c's algorithm, protocol and latency over n simulated members on n_nodes nodes.
 * In symmetric mode the group stands for n_logical ranks on proportionally more nodes, and
 * NCCL tunes for those. */
static void resolve_collective(Run *run, uint32_t c, uint32_t n, uint32_t n_nodes)
{
    const Platform *p = &engine.platform;
    const Collective *coll = &run->collectives[c];
    const CollectiveKind kind = (CollectiveKind)coll->kind;
    const uint32_t n_ranks = coll->n_logical > n ? coll->n_logical : n;
    const uint32_t logical_nodes = n_nodes * (n_ranks / (n ? n : 1));
    EngineCollInfo *info = &run->out->coll_info[c];
    info->n_ranks = n_ranks;
    info->n_calls = coll->n_calls > 1 ? coll->n_calls : 1;
    info->n_nodes = logical_nodes;
    /* Stepwise mode checks the fluid flows step by step: it keeps the ideal latencies. */
    if (run->opts.comm_model == COMM_MODEL_IDEAL || run->opts.is_stepwise || n_ranks < 2) {
        CollAlgo a = collective_resolve(run->opts.algo, run->is_aligned[c], kind, coll->bytes);
        run->algo[c] = (uint8_t)a;
        info->algo = collective_algo_name(a);
        info->proto = run->opts.is_stepwise ? "steps" : "fluid";
        return;
    }
    NcclComm comm;
    nccl_model_comm(p, n_ranks, logical_nodes, &comm);
    if (kind == COLL_ALL_TO_ALL) { /* pairwise flows; NCCL's ring latency (all_to_all.h) */
        NcclChoice ring;
        nccl_model_time_s(&comm, NCCL_FUNC_ALL_GATHER, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE,
                          coll->bytes / info->n_calls, &ring);
        run->algo[c] = COLL_ALGO_RING;
        info->algo = "pairwise";
        info->proto = nccl_model_proto_name(NCCL_PROTO_SIMPLE);
        info->latency_s = info->n_calls * ring.latency_s;
        return;
    }
    /* CollectiveKind and NcclFunc list the same collectives in the same order. */
    const NcclFunc func = (NcclFunc)kind;
    bool force = run->opts.algo != COLL_ALGO_AUTO;
    NcclAlgo forced = run->opts.algo == COLL_ALGO_TREE        ? NCCL_ALGO_TREE
                      : run->opts.algo == COLL_ALGO_NVLS      ? NCCL_ALGO_NVLS
                      : run->opts.algo == COLL_ALGO_NVLS_TREE ? NCCL_ALGO_NVLS_TREE
                                                              : NCCL_ALGO_RING;
    /* A collective standing for several back-to-back calls (per-submodule fetches): NCCL
     * tunes each call of bytes / n_calls, and every call pays its latency. */
    const double n_calls = coll->n_calls > 1 ? (double)coll->n_calls : 1.0;
    NcclChoice ch = nccl_model_choose(&comm, func, coll->bytes / n_calls, force, forced);
    /* The flows' shape: NCCL's tree as collective.h's tree (whole nodes, all-reduce), its
     * rings and PAT as the (channelised) ring, NVLS and NVLSTree as collective.h's nvls (one
     * node, or whole nodes; else the ring's flows under NVLS's bound); hier is zerosim's own,
     * timed as NCCL's ring. */
    CollAlgo shape = run->opts.algo == COLL_ALGO_HIER ? COLL_ALGO_HIER
                     : ch.algo == NCCL_ALGO_TREE      ? COLL_ALGO_TREE
                                                      : COLL_ALGO_RING;
    run->algo[c] = (uint8_t)collective_resolve(shape, run->is_aligned[c], kind, coll->bytes);
    if (shape != COLL_ALGO_HIER && (ch.algo == NCCL_ALGO_NVLS || ch.algo == NCCL_ALGO_NVLS_TREE)) {
        uint32_t n_members;
        const uint32_t *members = graph_group(run->graph, coll->group, &n_members);
        if (collective_has_nvls_shape(p, members, n_members, run->is_aligned[c]))
            run->algo[c] =
                (uint8_t)(ch.algo == NCCL_ALGO_NVLS ? COLL_ALGO_NVLS : COLL_ALGO_NVLS_TREE);
    }
    info->algo = run->opts.algo == COLL_ALGO_HIER ? "hier" : nccl_model_algo_name(ch.algo);
    info->proto = nccl_model_proto_name(ch.proto);
    info->latency_s = n_calls * ch.latency_s;
    /* Ring/Simple moves at the links' rate: SimGrid's flows are its bandwidth. Other pairs run
     * below it (LL's flag words, LL128's, the tree's and PAT's limits): their bandwidth part
     * takes at least bytes / NCCL's bandwidth. */
    if (!(ch.algo == NCCL_ALGO_RING && ch.proto == NCCL_PROTO_SIMPLE))
        run->min_bw_s[c] = coll->bytes / ch.algbw_bytes_per_s;
}

/* NCCL's kernels occupy SMs while the collective runs: for as long as the flows last, compute
 * on the GPU gets what max-min sharing leaves it beside one execution bounded to
 * gpu.comm_sm_fraction per running collective. On a GPU host that is its pstate: pstate k
 * (platform_xml.h) is that speed with k collectives running, and switching it costs one
 * simcall, where an execution started and cancelled per member cost 14% of the simulation's
 * instructions (docs/PERFORMANCE.md); the step is the same to the microsecond. Collectives
 * run on GPU streams only (run_check). */
static void kernels_begin(Run *run, const Op *op)
{
    if (engine.platform.gpu.comm_sm_fraction <= 0)
        return;
    uint8_t n = ++run->n_kernels[op->rank];
    assert(n < PLATFORM_XML_GPU_PSTATES);
    sg_host_set_pstate(engine.gpus[op->rank], n);
}

static void kernels_end(Run *run, const Op *op)
{
    if (engine.platform.gpu.comm_sm_fraction <= 0)
        return;
    assert(run->n_kernels[op->rank] > 0);
    sg_host_set_pstate(engine.gpus[op->rank], --run->n_kernels[op->rank]);
}

/* Member `op`'s plan in its collective. */
static void member_plan(const Run *run, const Op *op, OpId id, CollPlan *plan)
{
    const Collective *c = &run->collectives[op->ref];
    uint32_t n;
    const uint32_t *members = graph_group(run->graph, c->group, &n);
    uint32_t index = id - c->first_op, root_index = 0;
    if (c->kind == COLL_BROADCAST)
        for (uint32_t i = 0; i < n; i++)
            if (members[i] == c->root)
                root_index = i;
    collective_plan(&engine.platform, (CollectiveKind)c->kind, (CollAlgo)run->algo[op->ref],
                    run->is_aligned[op->ref], members, n, c->n_logical, index, c->bytes, root_index,
                    plan);
}

/* Stepwise: posts the first step from ss->step on that has flows (step s of every phase that
 * has one, concurrently: the pipeline); the member moves on when all of them are done. */
static void post_step(RankLoop *l, uint32_t s, const Op *op)
{
    StreamState *ss = &l->run->state[s];
    CollPlan plan;
    member_plan(l->run, op, ss->op, &plan);
    uint32_t max_steps = 0;
    for (uint32_t k = 0; k < plan.n_phases; k++)
        if (plan.phase[k].steps > max_steps)
            max_steps = plan.phase[k].steps;
    for (; ss->step < max_steps && ss->n_pending == 0; ss->step++)
        for (uint32_t k = 0; k < plan.n_phases; k++)
            if (ss->step < plan.phase[k].steps)
                post_phase(l, s, op, &plan.phase[k], k, 1.0 / plan.phase[k].steps);
    /* ss->step is now the step after the one in flight */
}

static void flows_done(Run *run, uint32_t s);

/* Fluid: every flow at once; each pays its route latency; once they are done, the member
 * waits out the rest of the latency term (flows_done). */
static void start_collective(RankLoop *l, uint32_t s, OpId id)
{
    Run *run = l->run;
    const Op *op = &run->ops[id];
    const Collective *c = &run->collectives[op->ref];
    uint32_t n;
    graph_group(run->graph, c->group, &n);
    if (n < 2)
        return;
    StreamState *ss = &run->state[s];
    kernels_begin(run, op);
    if (run->opts.is_stepwise) {
        ss->step = 0;
        post_step(l, s, op);
        if (ss->n_pending == 0) /* no step with flows */
            flows_done(run, s);
        return;
    }
    CollPlan plan;
    member_plan(run, op, id, &plan);
    ss->latency_s = ss->paid_s = 0.0;
    for (uint32_t k = 0; k < plan.n_phases; k++) {
        post_phase(l, s, op, &plan.phase[k], k, 1.0);
        double hop = phase_hop_latency(op, &plan.phase[k]);
        ss->latency_s += plan.phase[k].steps * hop;
        if (hop > ss->paid_s)
            ss->paid_s = hop;
    }
    ss->posted_s = simgrid_get_clock();
    if (ss->n_pending == 0) /* nothing to send: the latency still applies */
        flows_done(run, s);
}

/* A collective member's flows are done: its kernels leave the GPU, and it waits out the
 * pipeline's step latencies (ideal model) or NCCL's latency (nccl model), and, under NCCL,
 * whatever the protocol's bandwidth bound adds to what the flows took, and the framework's
 * work around the calls (graph.h). */
static void flows_done(Run *run, uint32_t s)
{
    StreamState *ss = &run->state[s];
    const Op *op = &run->ops[ss->op];
    kernels_end(run, op);
    if (run->opts.is_stepwise)
        return;
    double wait = ss->latency_s - ss->paid_s;
    if (run->opts.comm_model == COMM_MODEL_NCCL) {
        double flows_s = simgrid_get_clock() - ss->posted_s - ss->paid_s;
        double bound_s = run->min_bw_s[op->ref];
        wait = run->out->coll_info[op->ref].latency_s - ss->paid_s +
               (bound_s > flows_s ? bound_s - flows_s : 0.0);
    }
    wait += run->collectives[op->ref].overhead_s;
    if (wait > 0)
        ss->deadline_s = simgrid_get_clock() + wait;
}

/* A flow between two hosts (copies between a GPU and its node's CPU). */
static void send_bytes(RankLoop *l, uint32_t s, OpId id, sg_host_t from, sg_host_t to, double bytes,
                       LinkClass cls)
{
    Run *run = l->run;
    if (bytes <= 0)
        return;
    activity_sendto(l->set, from, to, bytes, s);
    run->state[s].n_pending++;
    run->out->link_bytes[run->ops[id].rank][cls] += bytes;
    if (run->out->op_link_bytes != NULL)
        run->out->op_link_bytes[id][cls] += bytes;
    run->out->n_activities++;
}

static sg_host_t stream_host(const Stream *st);

/* Starts op `id` on stream s: its activities, or its wait; an op with neither is done at
 * once (the caller sees state[s] with nothing pending and no deadline). */
static void start(RankLoop *l, uint32_t s, OpId id)
{
    Run *run = l->run;
    const Op *op = &run->ops[id];
    const Platform *p = &engine.platform;
    uint32_t node = topology_node(p, op->rank);
    switch ((OpKind)op->kind) {
    case OP_COMPUTE:
        if (op->amount > 0) {
            activity_exec(l->set, stream_host(&run->streams[s]), op->amount, s);
            run->state[s].n_pending++;
            run->out->n_activities++;
        }
        break;
    case OP_COPY:
        if (op->sub == COPY_H2D)
            send_bytes(l, s, id, engine.cpus[node], engine.gpus[op->rank], op->amount, LINK_PCIE);
        else if (op->sub == COPY_D2H)
            send_bytes(l, s, id, engine.gpus[op->rank], engine.cpus[node], op->amount, LINK_PCIE);
        else /* D2D: read and write through HBM */
            run->state[s].deadline_s =
                simgrid_get_clock() + 2.0 * op->amount / p->gpu.hbm_bw_bytes_per_s;
        break;
    case OP_DISK:
        if (engine.disks[node] != NULL && op->amount > 0) {
            activity_disk(l->set, engine.disks[node], op->sub == DISK_READ, op->amount, s);
            run->state[s].n_pending++;
            run->out->link_bytes[op->rank][LINK_NVME] += op->amount;
            if (run->out->op_link_bytes != NULL)
                run->out->op_link_bytes[id][LINK_NVME] += op->amount;
            run->out->n_activities++;
        }
        break;
    case OP_COLLECTIVE: start_collective(l, s, id); break;
    case OP_ALLOC:
    case OP_FREE:
        memory_apply(run->out->memory, now(run), op->rank, (MemSpace)op->sub,
                     (MemCategory)op->category, op->ref, op->stream_kind,
                     op->kind == OP_ALLOC ? op->amount : -op->amount);
        break;
    }
}

static double wall_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One status line on stderr, rewritten in place, once a run takes over a second. */
static void show_progress(Run *run)
{
    double elapsed = wall_clock() - run->wall0;
    if (elapsed < 1.0)
        return;
    uint32_t n_ops = graph_n_ops(run->graph);
    fprintf(stderr, "\rzerosim: simulating: %5.1f%% of %u ops, %.3f s simulated, %.1f s wall",
            100.0 * run->n_done / (n_ops ? n_ops : 1), n_ops, now(run), elapsed);
    run->is_progress_shown = true;
}

/* Queues stream s to go on once the ops ending now have ended (s is neither in flight nor
 * held, so it is in the ring at most once). */
static void queue(RankLoop *l, uint32_t s)
{
    const uint32_t n = l->stream_end - l->stream_begin;
    assert(l->n_ready < n);
    l->ready[(l->ready_head + l->n_ready++) % n] = s;
}

/* Stream s's op in flight is over (its activities done, its wait passed): it ends now. The
 * frees that follow on this stream with nothing left to wait for are applied before anyone
 * learns that this op ended, so a buffer released at time t is free for an allocation
 * another stream makes at t: PyTorch releases a module's buffers on the host (its post-hook)
 * before the next fetch or bucket is issued. Returns whether the op met the last dependency
 * of an op another stream is held on (that stream is queued). */
static bool finish(RankLoop *l, uint32_t s)
{
    Run *run = l->run;
    StreamState *ss = &run->state[s];
    const Stream *st = &run->streams[s];
    const uint32_t first = ss->next - 1, n_ready = l->n_ready;
    assert(run->stream_ops[first] == ss->op);
    run->out->op_end_s[ss->op] = now(run);
    while (ss->next < st->op_end && run->ops[run->stream_ops[ss->next]].kind == OP_FREE &&
           run->remaining[run->stream_ops[ss->next]] == 0) {
        OpId f = run->stream_ops[ss->next++];
        run->out->op_start_s[f] = run->out->op_end_s[f] = now(run);
        start(l, s, f);
    }
    ss->op = GRAPH_NO_OP;
    for (uint32_t j = first; j < ss->next; j++) {
        complete(run, run->stream_ops[j]);
        if (run->opts.show_progress && (++run->n_done & 4095) == 0)
            show_progress(run);
    }
    if (ss->next == st->op_end) {
        run->n_finished++;
        l->n_unfinished--;
    }
    return l->n_ready != n_ready;
}

/* Runs stream s as far as it goes now: starts its next ops while the stream is free and
 * their dependencies are done, finishing those that take no time. One that lets another
 * stream go on lets it go first: s queues behind it, as it did when every stream was its own
 * actor (the release was a SimGrid call, after which SimGrid ran the released actor first). */
static void advance(RankLoop *l, uint32_t s)
{
    Run *run = l->run;
    StreamState *ss = &run->state[s];
    const Stream *st = &run->streams[s];
    while (ss->op == GRAPH_NO_OP && ss->next < st->op_end) {
        OpId id = run->stream_ops[ss->next];
        if (run->remaining[id] > 0) {
            run->waiting[s] = id;
            return;
        }
        ss->next++;
        ss->op = id;
        run->out->op_start_s[id] = now(run);
        start(l, s, id);
        if (ss->n_pending == 0 && ss->deadline_s < 0 && finish(l, s)) {
            queue(l, s);
            return;
        }
    }
}

/* The queued streams go on, in the order they were queued. */
static void advance_ready(RankLoop *l)
{
    const uint32_t n = l->stream_end - l->stream_begin;
    while (l->n_ready > 0) {
        uint32_t s = l->ready[l->ready_head];
        l->ready_head = (l->ready_head + 1) % n;
        l->n_ready--;
        advance(l, s);
    }
}

/* The earliest deadline of the rank's streams and its stream, or -1. */
static double next_deadline(const RankLoop *l, uint32_t *out_stream)
{
    const Run *run = l->run;
    double first = -1.0;
    for (uint32_t k = l->stream_begin; k < l->stream_end; k++) {
        uint32_t s = run->rank_streams[k];
        double d = run->state[s].deadline_s;
        if (d >= 0 && (first < 0 || d < first)) {
            first = d;
            *out_stream = s;
        }
    }
    return first;
}

/* Stream s's activity ended: when it was the op's last, the op goes on (a collective to its
 * latency, or the next stepwise step) or ends, and s is queued. */
static void activity_done(RankLoop *l, uint32_t s)
{
    Run *run = l->run;
    StreamState *ss = &run->state[s];
    assert(ss->n_pending > 0);
    if (--ss->n_pending > 0)
        return;
    const Op *op = &run->ops[ss->op];
    if (op->kind == OP_COLLECTIVE) {
        if (run->opts.is_stepwise) {
            post_step(l, s, op);
            if (ss->n_pending > 0)
                return;
        }
        flows_done(run, s);
        if (ss->deadline_s >= 0)
            return;
    }
    finish(l, s);
    queue(l, s);
}

/* Stream s's wait has passed: its op ends, and s is queued. */
static void deadline_done(RankLoop *l, uint32_t s)
{
    l->run->state[s].deadline_s = -1.0;
    finish(l, s);
    queue(l, s);
}

/* A rank's actor: runs its streams until all are done or nothing is left to wait for (a
 * deadlock, which engine_run reports). Each time it wakes, the op whose activity or wait
 * ended ends (and the frees after it are applied, and its deadline-reached peers end), then
 * the streams it released go on, then its own. */
static void rank_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    RankLoop *l = sg_actor_self_get_data();
    Run *run = l->run;
    for (uint32_t k = l->stream_begin; k < l->stream_end; k++)
        advance(l, run->rank_streams[k]);
    advance_ready(l);
    while (l->n_unfinished > 0) {
        uint32_t timed = UINT32_MAX;
        double deadline = next_deadline(l, &timed);
        if (deadline < 0 && activity_set_count(l->set) == 0)
            return;
        uint32_t s = activity_wait_any(l->set, deadline);
        if (s == ACTIVITY_NONE) /* the earliest deadline has come, even should the clock's
                                   rounding leave it a hair ahead */
            deadline_done(l, timed);
        else
            activity_done(l, s);
        const double t = simgrid_get_clock();
        for (uint32_t k = l->stream_begin; k < l->stream_end; k++) {
            uint32_t r = run->rank_streams[k];
            if (run->state[r].deadline_s >= 0 && run->state[r].deadline_s <= t)
                deadline_done(l, r);
        }
        advance_ready(l);
    }
}

static sg_host_t stream_host(const Stream *st)
{
    uint32_t node = topology_node(&engine.platform, st->rank);
    if (st->kind == STREAM_NVME || st->kind == STREAM_CPU)
        return engine.cpus[node];
    return engine.gpus[st->rank];
}

/* The result's arrays and the memory tracker, before anything runs. */
static void result_init(EngineResult *out, const Graph *g, const Platform *p,
                        const EngineOptions *opts)
{
    const uint32_t n_ranks = graph_n_ranks(g), n_ops = graph_n_ops(g);
    const uint32_t n_coll = graph_n_collectives(g);
    memset(out, 0, sizeof *out);
    out->n_ops = n_ops;
    out->n_ranks = n_ranks;
    out->op_start_s = xcalloc(n_ops ? n_ops : 1, sizeof *out->op_start_s);
    out->op_end_s = xcalloc(n_ops ? n_ops : 1, sizeof *out->op_end_s);
    out->link_bytes = xcalloc(n_ranks, sizeof *out->link_bytes);
    out->coll_bytes = xcalloc(n_ranks, sizeof *out->coll_bytes);
    out->coll_info = xcalloc(n_coll ? n_coll : 1, sizeof *out->coll_info);
    if (opts->traced != NULL)
        out->op_link_bytes = xcalloc(n_ops ? n_ops : 1, sizeof *out->op_link_bytes);
    double nvme = (double)p->nvme.n_drives * (double)p->nvme.capacity_bytes_per_drive;
    out->memory = memory_create(n_ranks, (uint32_t)p->gpus_per_node, (double)p->gpu.hbm_bytes,
                                (double)p->cpu.dram_bytes, nvme, opts->traced);
    memory_set_gpu_runtime(out->memory, graph_n_buffers(g), opts->gpu_outside_bytes,
                           opts->gpu_headroom_bytes, opts->is_expandable_segments);
}

/* The run's state: the graph's arrays, the dependency counters, and each collective's
 * algorithm and NCCL timing resolved once (node alignment and node count are O(group size),
 * so a group's are computed once for its consecutive collectives). */
static void run_init(Run *run, const Graph *g, const Platform *p, const EngineOptions *opts,
                     EngineResult *out)
{
    const uint32_t n_ops = graph_n_ops(g), n_streams = graph_n_streams(g);
    const uint32_t n_coll = graph_n_collectives(g), n_ranks = graph_n_ranks(g);
    *run = (Run){0};
    run->graph = g;
    run->ops = graph_ops(g);
    run->streams = graph_streams(g);
    run->stream_ops = graph_stream_ops(g);
    run->successors = graph_successors(g);
    run->collectives = graph_collectives(g);
    run->opts = *opts;
    run->out = out;
    run->remaining = xmalloc((n_ops ? n_ops : 1) * sizeof *run->remaining);
    for (uint32_t i = 0; i < n_ops; i++)
        run->remaining[i] = run->ops[i].n_deps;
    run->waiting = xmalloc((n_streams ? n_streams : 1) * sizeof *run->waiting);
    run->state = xmalloc((n_streams ? n_streams : 1) * sizeof *run->state);
    run->rank_streams = xmalloc((n_streams ? n_streams : 1) * sizeof *run->rank_streams);
    run->ready_ring = xmalloc((n_streams ? n_streams : 1) * sizeof *run->ready_ring);
    run->loops = xcalloc(n_ranks ? n_ranks : 1, sizeof *run->loops);
    for (uint32_t s = 0; s < n_streams; s++) {
        run->waiting[s] = GRAPH_NO_OP;
        run->state[s] =
            (StreamState){.op = GRAPH_NO_OP, .next = run->streams[s].op_begin, .deadline_s = -1.0};
        run->loops[run->streams[s].rank].stream_end++; /* a count, for now */
    }
    /* each rank's streams, in stream order: a counting sort */
    uint32_t begin = 0;
    for (uint32_t r = 0; r < n_ranks; r++) {
        RankLoop *l = &run->loops[r];
        uint32_t n = l->stream_end;
        *l = (RankLoop){.run = run,
                        .rank = r,
                        .stream_begin = begin,
                        .stream_end = begin,
                        .ready = run->ready_ring + begin};
        begin += n;
    }
    for (uint32_t s = 0; s < n_streams; s++) {
        RankLoop *l = &run->loops[run->streams[s].rank];
        run->rank_streams[l->stream_end++] = s;
        if (run->streams[s].op_begin < run->streams[s].op_end)
            l->n_unfinished++;
        else
            run->n_finished++;
    }
    run->algo = xmalloc(n_coll ? n_coll : 1);
    run->is_aligned = xmalloc(n_coll ? n_coll : 1);
    run->min_bw_s = xcalloc(n_coll ? n_coll : 1, sizeof *run->min_bw_s);
    run->n_kernels = xcalloc(n_ranks ? n_ranks : 1, 1);
    uint32_t cached_group = UINT32_MAX, cached_nodes = 1;
    bool cached_aligned = false;
    for (uint32_t c = 0; c < n_coll; c++) {
        const Collective *coll = &run->collectives[c];
        uint32_t n = 0;
        const uint32_t *members = graph_group(g, coll->group, &n);
        if (coll->group != cached_group) {
            cached_group = coll->group;
            cached_aligned = collective_is_node_aligned(p, members, n);
            cached_nodes = group_n_nodes(p, members, n);
        }
        run->is_aligned[c] = cached_aligned;
        resolve_collective(run, c, n, cached_nodes);
    }
}

/* What the rank loops rely on: an op's dependencies are ops of its own rank (ranks meet only
 * through collectives' flows), and collectives run on GPU streams (their flows leave from the
 * rank's GPU, where its actor runs). Fails (err set) otherwise. */
static int run_check(const Graph *g, Err *err)
{
    const Op *ops = graph_ops(g);
    const OpId *succ = graph_successors(g);
    const Stream *streams = graph_streams(g);
    for (OpId i = 0, n = graph_n_ops(g); i < n; i++) {
        const Op *op = &ops[i];
        for (uint32_t k = op->succ_begin; k < op->succ_end; k++)
            if (ops[succ[k]].rank != op->rank)
                return err_set(err,
                               "engine: op %u \"%s\" of rank %u: expected successors on its "
                               "own rank, got op %u of rank %u",
                               i, graph_label_text(g, op->label), op->rank, succ[k],
                               ops[succ[k]].rank);
        if (op->kind == OP_COLLECTIVE && stream_host(&streams[op->stream]) != engine.gpus[op->rank])
            return err_set(err,
                           "engine: collective op %u \"%s\": expected a GPU stream, got stream "
                           "%s",
                           i, graph_label_text(g, op->label),
                           graph_stream_name((StreamKind)op->stream_kind));
    }
    return 0;
}

static void run_fini(Run *run)
{
    for (uint32_t r = 0; r < graph_n_ranks(run->graph); r++)
        activity_set_destroy(run->loops[r].set);
    free(run->remaining);
    free(run->waiting);
    free(run->state);
    free(run->rank_streams);
    free(run->ready_ring);
    free(run->loops);
    free(run->algo);
    free(run->is_aligned);
    free(run->min_bw_s);
    free(run->n_kernels);
}

/* One actor per rank with streams, started on the rank's GPU. Returns how many. */
static uint32_t start_actors(Run *run)
{
    char name[24];
    uint32_t n_actors = 0;
    for (uint32_t r = 0; r < graph_n_ranks(run->graph); r++) {
        RankLoop *l = &run->loops[r];
        if (l->stream_begin == l->stream_end)
            continue;
        l->set = activity_set_create();
        snprintf(name, sizeof name, "r%u", r);
        sg_actor_t a = sg_actor_init(name, engine.gpus[r]);
        sg_actor_set_data(a, l);
        sg_actor_start(a, rank_main, 0, NULL);
        n_actors++;
    }
    return n_actors;
}

/* A run that ended with streams unfinished: the op one of them waits on, or the collective
 * whose members wait on each other. Always -1. */
static int deadlock(const Run *run, uint32_t n_streams, Err *err)
{
    for (uint32_t s = 0; s < n_streams; s++) {
        if (run->waiting[s] == GRAPH_NO_OP)
            continue;
        const Op *op = &run->ops[run->waiting[s]];
        return err_set(err,
                       "engine: deadlock: %u of %u streams never finished; rank %u stream %s "
                       "waits on op %u \"%s\"",
                       n_streams - run->n_finished, n_streams, op->rank,
                       graph_stream_name((StreamKind)op->stream_kind), run->waiting[s],
                       graph_label_text(run->graph, op->label));
    }
    return err_set(err,
                   "engine: deadlock: %u of %u streams never finished (a collective whose "
                   "members wait on each other)",
                   n_streams - run->n_finished, n_streams);
}

int engine_run(const Graph *g, const EngineOptions *opts, EngineResult *out, Err *err)
{
    if (!engine.is_ready)
        return err_set(err, "engine: engine_init must come before engine_run");
    const Platform *p = &engine.platform;
    const uint32_t n_ranks = graph_n_ranks(g), n_ops = graph_n_ops(g);
    const uint32_t n_streams = graph_n_streams(g);
    if (n_ranks > platform_n_gpus(p))
        return err_set(err, "engine: expected at most %llu ranks (the platform's GPUs), got %u",
                       (unsigned long long)platform_n_gpus(p), n_ranks);
    if (capacity_check_actors(n_ranks, err) || run_check(g, err))
        return -1;
    result_init(out, g, p, opts);
    Run run;
    run_init(&run, g, p, opts, out);

    run.wall0 = wall_clock();
    run.t0 = simgrid_get_clock();
    start_actors(&run);
    out->n_memory_maps = capacity_count_maps();
    simgrid_run();
    out->wall_s = wall_clock() - run.wall0;
    if (run.is_progress_shown)
        fprintf(stderr, "\rzerosim: simulated %u ops in %.1f s%40s\n", n_ops, out->wall_s, "");
    out->makespan_s = simgrid_get_clock() - run.t0;

    int rc = 0;
    if (run.n_finished != n_streams) {
        rc = deadlock(&run, n_streams, err);
        sg_actor_kill_all();
        for (uint32_t r = 0; r < n_ranks; r++) /* the killed members' kernels */
            sg_host_set_pstate(engine.gpus[r], 0);
    }
    run_fini(&run);
    return rc;
}

void engine_result_fini(EngineResult *r)
{
    free(r->op_start_s);
    free(r->op_end_s);
    free(r->link_bytes);
    free(r->coll_bytes);
    free(r->coll_info);
    free(r->op_link_bytes);
    memory_destroy(r->memory);
    memset(r, 0, sizeof *r);
}
