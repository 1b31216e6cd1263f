/*
 * engine.c - stream actors on SimGrid executing an event graph (see engine.h).
 *
 * SimGrid actors are C functions; each gets its StreamActor through the actor data. All run
 * state lives in one Run record: per-op remaining dependency counts, per-stream semaphores
 * and "waiting for" slots. Collective members meet through mailboxes, one per (rank, stream
 * kind, phase): a flow starts when the sender and its receiver have both arrived, as in NCCL.
 * SimGrid runs actors one at a time, so this state needs no locking.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, clock_gettime */

#include "engine.h"

#include "capacity.h"

#include "platform_xml.h"

#include "../common/xalloc.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/disk.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAILBOXES_PER_STREAM (COLLECTIVE_MAX_PHASES * COLLECTIVE_MAX_FLOWS)

typedef struct Run Run;

typedef struct StreamActor {
    Run *run;
    uint32_t stream;
} StreamActor;

struct Run {
    const Graph *graph;
    const Op *ops;
    const Stream *streams;
    const OpId *stream_ops;
    const OpId *successors;
    const Collective *collectives;
    EngineOptions opts;
    uint32_t *remaining; /* per op: unfinished cross-stream dependencies */
    OpId *waiting;       /* per stream: the op its actor is parked on, or GRAPH_NO_OP */
    sg_sem_t *sems;      /* per stream */
    uint8_t *algo;       /* per collective: resolved CollAlgo (the flows' shape) */
    bool *is_aligned;    /* per collective: its group is whole nodes */
    double *min_bw_s;    /* per collective: the protocol's bound on the bandwidth part */
    uint8_t *n_kernels;  /* per rank: collectives running on its GPU (its pstate) */
    StreamActor *actors;
    uint32_t n_finished;
    uint32_t n_done; /* ops completed, for progress */
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

/* Marks op done and wakes the actors of successors whose last dependency this was. */
static void complete(Run *run, OpId id)
{
    const Op *op = &run->ops[id];
    for (uint32_t k = op->succ_begin; k < op->succ_end; k++) {
        OpId s = run->successors[k];
        if (--run->remaining[s] == 0) {
            uint32_t stream = run->ops[s].stream;
            if (run->waiting[stream] == s) {
                run->waiting[stream] = GRAPH_NO_OP;
                sg_sem_release(run->sems[stream]);
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

/* Posts this member's part of one phase (or one step of it: `fraction` of each flow): for
 * each flow a send to its next member and a receive from its previous one, appended to
 * comms[]. Returns the new count. */
static size_t post_phase(Run *run, const Op *op, const CollPhase *ph, uint32_t phase,
                         double fraction, sg_comm_t *comms, size_t n_comms)
{
    /* Payloads carry no data, only a simulated size; receives land in one static sink
     * because SimGrid writes it when the comm completes, after this frame is gone. */
    static char token;
    static void *received;
    for (uint32_t f = 0; f < ph->n_flows; f++) {
        const CollFlow *flow = &ph->flow[f];
        double bytes = flow->bytes * fraction;
        uint32_t slot = phase * COLLECTIVE_MAX_FLOWS + f;
        if (bytes <= 0)
            continue;
        if (flow->send_to != COLLECTIVE_NO_PEER) {
            comms[n_comms++] = sg_mailbox_put_async(mailbox(flow->send_to, op->stream_kind, slot),
                                                    &token, (long)bytes);
            LinkClass cls = topology_gpu_pair_class(&engine.platform, op->rank, flow->send_to);
            run->out->link_bytes[op->rank][cls] += bytes;
            if (run->out->op_link_bytes != NULL)
                run->out->op_link_bytes[op - run->ops][cls] += bytes;
            run->out->coll_bytes[op->rank][op->sub] += bytes;
            run->out->n_activities++;
        }
        if (flow->recv_from != COLLECTIVE_NO_PEER)
            comms[n_comms++] =
                sg_mailbox_get_async(mailbox(op->rank, op->stream_kind, slot), &received);
    }
    return n_comms;
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
 * instructions (docs/PERFORMANCE.md); the step is the same to the microsecond. Elsewhere (a
 * collective on a CPU host's stream) the bounded execution itself; returned, for
 * kernels_end. */
static sg_host_t stream_host(const Stream *st);

static sg_exec_t kernels_begin(Run *run, const Op *op)
{
    const double share = engine.platform.gpu.comm_sm_fraction;
    if (share <= 0)
        return NULL;
    sg_host_t gpu = engine.gpus[op->rank];
    if (stream_host(&run->streams[op->stream]) != gpu) {
        sg_exec_t k = sg_actor_exec_init(1e300);
        sg_exec_set_bound(k, share * sg_host_get_pstate_speed(gpu, 0));
        sg_exec_start(k);
        return k;
    }
    uint8_t n = ++run->n_kernels[op->rank];
    assert(n < PLATFORM_XML_GPU_PSTATES);
    sg_host_set_pstate(gpu, n);
    return NULL;
}

static void kernels_end(Run *run, const Op *op, sg_exec_t exec)
{
    if (exec != NULL) {
        sg_exec_cancel(exec);
        return;
    }
    if (engine.platform.gpu.comm_sm_fraction <= 0)
        return;
    assert(run->n_kernels[op->rank] > 0);
    sg_host_set_pstate(engine.gpus[op->rank], --run->n_kernels[op->rank]);
}

static void run_collective(Run *run, OpId id)
{
    const Op *op = &run->ops[id];
    const Collective *c = &run->collectives[op->ref];
    uint32_t n;
    const uint32_t *members = graph_group(run->graph, c->group, &n);
    if (n < 2)
        return;
    uint32_t index = id - c->first_op, root_index = 0;
    if (c->kind == COLL_BROADCAST)
        for (uint32_t i = 0; i < n; i++)
            if (members[i] == c->root)
                root_index = i;
    CollPlan plan;
    collective_plan(&engine.platform, (CollectiveKind)c->kind, (CollAlgo)run->algo[op->ref],
                    run->is_aligned[op->ref], members, n, c->n_logical, index, c->bytes, root_index,
                    &plan);
    sg_comm_t comms[2 * COLLECTIVE_MAX_PHASES * COLLECTIVE_MAX_FLOWS];
    sg_exec_t kernels = kernels_begin(run, op);
    if (run->opts.is_stepwise) {
        /* Step s of every phase that has one, concurrently (the pipeline), then the next. */
        uint32_t max_steps = 0;
        for (uint32_t k = 0; k < plan.n_phases; k++)
            if (plan.phase[k].steps > max_steps)
                max_steps = plan.phase[k].steps;
        for (uint32_t s = 0; s < max_steps; s++) {
            size_t n_comms = 0;
            for (uint32_t k = 0; k < plan.n_phases; k++)
                if (s < plan.phase[k].steps)
                    n_comms = post_phase(run, op, &plan.phase[k], k, 1.0 / plan.phase[k].steps,
                                         comms, n_comms);
            sg_comm_wait_all(comms, n_comms);
        }
        kernels_end(run, op, kernels);
        return;
    }
    /* Fluid: every flow at once; each pays its route latency; the member then waits out the
     * rest of the latency term: the pipeline's step latencies (ideal model) or NCCL's latency
     * (nccl model), and, under NCCL, whatever the protocol's bandwidth bound adds to what the
     * flows took. */
    size_t n_comms = 0;
    double latency = 0.0, paid = 0.0;
    for (uint32_t k = 0; k < plan.n_phases; k++) {
        n_comms = post_phase(run, op, &plan.phase[k], k, 1.0, comms, n_comms);
        double hop = phase_hop_latency(op, &plan.phase[k]);
        latency += plan.phase[k].steps * hop;
        if (hop > paid)
            paid = hop;
    }
    double t0 = simgrid_get_clock();
    sg_comm_wait_all(comms, n_comms);
    kernels_end(run, op, kernels);
    double wait = latency - paid;
    if (run->opts.comm_model == COMM_MODEL_NCCL) {
        double flows_s = simgrid_get_clock() - t0 - paid, bound_s = run->min_bw_s[op->ref];
        wait = run->out->coll_info[op->ref].latency_s - paid +
               (bound_s > flows_s ? bound_s - flows_s : 0.0);
    }
    wait += c->overhead_s; /* the framework's work around the calls (graph.h) */
    if (wait > 0)
        sg_actor_sleep_for(wait);
}

/* A blocking flow between two hosts (copies between a GPU and its node's CPU). */
static void send_bytes(Run *run, OpId id, sg_host_t from, sg_host_t to, double bytes,
                       LinkClass cls)
{
    if (bytes <= 0)
        return;
    sg_host_sendto(from, to, bytes);
    run->out->link_bytes[run->ops[id].rank][cls] += bytes;
    if (run->out->op_link_bytes != NULL)
        run->out->op_link_bytes[id][cls] += bytes;
    run->out->n_activities++;
}

static void execute(Run *run, OpId id)
{
    const Op *op = &run->ops[id];
    const Platform *p = &engine.platform;
    uint32_t node = topology_node(p, op->rank);
    switch ((OpKind)op->kind) {
    case OP_COMPUTE:
        if (op->amount > 0) {
            sg_actor_execute(op->amount);
            run->out->n_activities++;
        }
        break;
    case OP_COPY:
        if (op->sub == COPY_H2D)
            send_bytes(run, id, engine.cpus[node], engine.gpus[op->rank], op->amount,
                       LINK_PCIE);
        else if (op->sub == COPY_D2H)
            send_bytes(run, id, engine.gpus[op->rank], engine.cpus[node], op->amount,
                       LINK_PCIE);
        else /* D2D: read and write through HBM */
            sg_actor_sleep_for(2.0 * op->amount / p->gpu.hbm_bw_bytes_per_s);
        break;
    case OP_DISK:
        if (engine.disks[node] != NULL && op->amount > 0) {
            if (op->sub == DISK_READ)
                sg_disk_read(engine.disks[node], (sg_size_t)op->amount);
            else
                sg_disk_write(engine.disks[node], (sg_size_t)op->amount);
            run->out->link_bytes[op->rank][LINK_NVME] += op->amount;
            if (run->out->op_link_bytes != NULL)
                run->out->op_link_bytes[id][LINK_NVME] += op->amount;
            run->out->n_activities++;
        }
        break;
    case OP_COLLECTIVE: run_collective(run, id); break;
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

static void stream_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    StreamActor *self = sg_actor_self_get_data();
    Run *run = self->run;
    const Stream *st = &run->streams[self->stream];
    for (uint32_t k = st->op_begin; k < st->op_end; k++) {
        OpId id = run->stream_ops[k];
        if (run->remaining[id] > 0) {
            run->waiting[self->stream] = id;
            sg_sem_acquire(run->sems[self->stream]);
        }
        run->out->op_start_s[id] = now(run);
        execute(run, id);
        run->out->op_end_s[id] = now(run);
        /* The frees that follow on this stream with nothing left to wait for are applied
         * before anyone learns that this op ended, so a buffer released at time t is free
         * for an allocation another stream makes at t: PyTorch releases a module's buffers
         * on the host (its post-hook) before the next fetch or bucket is issued. Without
         * this, SimGrid's order of the actors woken at t decides, and a peak may count both. */
        uint32_t last = k;
        while (last + 1 < st->op_end && run->ops[run->stream_ops[last + 1]].kind == OP_FREE &&
               run->remaining[run->stream_ops[last + 1]] == 0) {
            OpId f = run->stream_ops[++last];
            run->out->op_start_s[f] = run->out->op_end_s[f] = now(run);
            execute(run, f);
        }
        for (uint32_t j = k; j <= last; j++) {
            complete(run, run->stream_ops[j]);
            if (run->opts.show_progress && (++run->n_done & 4095) == 0)
                show_progress(run);
        }
        k = last;
    }
    run->n_finished++;
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
    memory_preload_gpu(out->memory, opts->gpu_load_bytes, opts->gpu_load_tensors);
}

/* The run's state: the graph's arrays, the dependency counters, and each collective's
 * algorithm and NCCL timing resolved once (node alignment and node count are O(group size),
 * so a group's are computed once for its consecutive collectives). */
static void run_init(Run *run, const Graph *g, const Platform *p, const EngineOptions *opts,
                     EngineResult *out)
{
    const uint32_t n_ops = graph_n_ops(g), n_streams = graph_n_streams(g);
    const uint32_t n_coll = graph_n_collectives(g);
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
    run->sems = xmalloc((n_streams ? n_streams : 1) * sizeof *run->sems);
    run->actors = xmalloc((n_streams ? n_streams : 1) * sizeof *run->actors);
    run->algo = xmalloc(n_coll ? n_coll : 1);
    run->is_aligned = xmalloc(n_coll ? n_coll : 1);
    run->min_bw_s = xcalloc(n_coll ? n_coll : 1, sizeof *run->min_bw_s);
    run->n_kernels = xcalloc(graph_n_ranks(g) ? graph_n_ranks(g) : 1, 1);
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

static void run_fini(Run *run, uint32_t n_streams)
{
    for (uint32_t s = 0; s < n_streams; s++)
        sg_sem_destroy(run->sems[s]);
    free(run->remaining);
    free(run->waiting);
    free(run->sems);
    free(run->actors);
    free(run->algo);
    free(run->is_aligned);
    free(run->min_bw_s);
    free(run->n_kernels);
}

/* One actor per stream, started on its host. */
static void start_actors(Run *run, uint32_t n_streams)
{
    char name[48];
    for (uint32_t s = 0; s < n_streams; s++) {
        run->waiting[s] = GRAPH_NO_OP;
        run->sems[s] = sg_sem_init(0);
        run->actors[s] = (StreamActor){run, s};
        snprintf(name, sizeof name, "r%u.%s", run->streams[s].rank,
                 graph_stream_name((StreamKind)run->streams[s].kind));
        sg_actor_t a = sg_actor_init(name, stream_host(&run->streams[s]));
        sg_actor_set_data(a, &run->actors[s]);
        sg_actor_start(a, stream_main, 0, NULL);
    }
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
    if (capacity_check_actors(n_streams, err))
        return -1;
    result_init(out, g, p, opts);
    Run run;
    run_init(&run, g, p, opts, out);

    run.wall0 = wall_clock();
    run.t0 = simgrid_get_clock();
    start_actors(&run, n_streams);
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
    run_fini(&run, n_streams);
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
