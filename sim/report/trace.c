/*
 * trace.c - Chrome trace event output (see trace.h).
 *
 * Passes over the data, each streamed through the JSON writer: metadata (process and thread
 * names and sort order), one complete event per op that took time, stream by stream, the flows
 * from collectives to the compute they unblock, the step markers, the memory counters, then
 * the link counters (one sorted array of rate changes, allocated once per trace). Times are seconds in the engine and microseconds in the format
 * ("ts", "dur"); "displayTimeUnit" only changes how viewers label the axis. Format: "Trace
 * Event Format" (Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
 */
#include "trace.h"

#include "json_writer.h"

#include "../common/xalloc.h"
#include "../engine/topology.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_PID UINT32_MAX

/* Seconds to whole nanoseconds, the resolution Perfetto keeps; integer nanoseconds turned
 * into microseconds print short ("1.5", not "1.4999999999999998") and durations computed from
 * them carry no rounding noise. */
static int64_t to_ns(double time_s)
{
    return llround(time_s * 1e9);
}

static double ns_to_us(int64_t ns)
{
    return (double)ns / 1e3;
}

static bool is_traced(const bool *traced, uint32_t rank)
{
    return traced == NULL || traced[rank];
}

static const char *op_kind_name(OpKind kind)
{
    static const char *const names[] = {"compute", "collective", "copy", "disk", "alloc", "free"};
    return names[kind];
}

/* The event name of an op without a label: what it does, from its kind. */
static const char *op_default_name(const Op *op, char *buf, size_t size)
{
    static const char *const copy_names[] = {"copy h2d", "copy d2h", "copy d2d"};
    switch ((OpKind)op->kind) {
    case OP_COMPUTE: return op->sub == DEVICE_GPU ? "compute" : "cpu compute";
    case OP_COLLECTIVE: return graph_collective_name((CollectiveKind)op->sub);
    case OP_COPY: return copy_names[op->sub];
    case OP_DISK: return op->sub == DISK_READ ? "nvme read" : "nvme write";
    case OP_ALLOC:
    case OP_FREE:
        snprintf(buf, size, "%s %s %s", op->kind == OP_ALLOC ? "alloc" : "free",
                 graph_space_name((MemSpace)op->sub),
                 graph_category_name((MemCategory)op->category));
        return buf;
    }
    return "op";
}

static void begin_event(JsonWriter *w, const char *ph, const char *name, uint32_t rank)
{
    json_begin_object(w);
    json_kv_string(w, "name", name);
    json_kv_string(w, "ph", ph);
    json_kv_u64(w, "pid", TRACE_PID(rank));
}

/* A metadata event naming or ordering a process (stream_kind < 0) or one of its threads. */
static void write_meta(JsonWriter *w, const char *what, uint32_t rank, int stream_kind,
                       const char *name, uint64_t sort_index)
{
    begin_event(w, "M", what, rank);
    if (stream_kind >= 0)
        json_kv_u64(w, "tid", TRACE_TID(stream_kind));
    json_key(w, "args");
    json_begin_object(w);
    if (name != NULL)
        json_kv_string(w, "name", name);
    else
        json_kv_u64(w, "sort_index", sort_index);
    json_end_object(w);
    json_end_object(w);
}

static void write_metadata(JsonWriter *w, const Graph *g, const bool *traced)
{
    char name[32];
    for (uint32_t rank = 0; rank < graph_n_ranks(g); rank++) {
        if (!is_traced(traced, rank))
            continue;
        snprintf(name, sizeof name, "rank %u", rank);
        write_meta(w, "process_name", rank, -1, name, 0);
        write_meta(w, "process_sort_index", rank, -1, NULL, rank);
    }
    const Stream *streams = graph_streams(g);
    for (uint32_t s = 0; s < graph_n_streams(g); s++) {
        if (!is_traced(traced, streams[s].rank))
            continue;
        write_meta(w, "thread_name", streams[s].rank, streams[s].kind,
                   graph_stream_name((StreamKind)streams[s].kind), 0);
        write_meta(w, "thread_sort_index", streams[s].rank, streams[s].kind, NULL, streams[s].kind);
    }
}

static void write_op(JsonWriter *w, const Graph *g, const EngineResult *r, OpId id)
{
    const Op *op = &graph_ops(g)[id];
    int64_t start_ns = to_ns(r->op_start_s[id]);
    int64_t dur_ns = to_ns(r->op_end_s[id]) - start_ns;
    if (dur_ns < 0)
        dur_ns = 0;
    if ((op->kind == OP_ALLOC || op->kind == OP_FREE) && dur_ns == 0)
        return;
    char buf[64];
    const char *label = graph_label_text(g, op->label);
    begin_event(w, "X", label[0] != '\0' ? label : op_default_name(op, buf, sizeof buf), op->rank);
    json_kv_u64(w, "tid", TRACE_TID(op->stream_kind));
    /* compute by purpose (recomputation apart from forward and backward), the rest by kind */
    json_kv_string(w, "cat", op->kind == OP_COMPUTE ? graph_purpose_name((OpPurpose)op->purpose)
                                                    : op_kind_name((OpKind)op->kind));
    json_kv_double(w, "ts", ns_to_us(start_ns));
    json_kv_double(w, "dur", ns_to_us(dur_ns));
    json_key(w, "args");
    json_begin_object(w);
    json_kv_u64(w, "op", id);
    switch ((OpKind)op->kind) {
    case OP_COMPUTE:
        /* amount is FLOPs on a GPU, parameters updated by the CPU optimizer (graph.h) */
        json_kv_double(w, op->sub == DEVICE_GPU ? "flops" : "params", op->amount);
        break;
    case OP_COLLECTIVE: {
        const Collective *c = &graph_collectives(g)[op->ref];
        uint32_t n_members;
        graph_group(g, c->group, &n_members);
        json_kv_u64(w, "bytes", (uint64_t)llround(op->amount)); /* whole bytes */
        json_kv_u64(w, "instance", op->ref);
        json_kv_u64(w, "group_size", n_members);
        if (c->kind == COLL_BROADCAST)
            json_kv_u64(w, "root", c->root);
        /* how it ran: NCCL's algorithm and protocol, and the communicator it was tuned for
         * (in symmetric mode the logical group, larger than the simulated members) */
        const EngineCollInfo *info = &r->coll_info[op->ref];
        json_kv_string(w, "algorithm", info->algo ? info->algo : "");
        json_kv_string(w, "protocol", info->proto ? info->proto : "");
        json_kv_u64(w, "ranks", info->n_ranks);
        json_kv_u64(w, "nodes", info->n_nodes);
        json_kv_u64(w, "calls", info->n_calls);
        json_kv_double(w, "latency_us", info->latency_s * 1e6);
        break;
    }
    case OP_COPY:
    case OP_DISK: json_kv_u64(w, "bytes", (uint64_t)llround(op->amount)); break;
    case OP_ALLOC:
    case OP_FREE:
        json_kv_u64(w, "bytes", (uint64_t)llround(op->amount));
        json_kv_u64(w, "buffer", op->ref);
        break;
    }
    json_end_object(w);
    json_end_object(w);
}

static void write_ops(JsonWriter *w, const Graph *g, const EngineResult *r, const bool *traced)
{
    const Stream *streams = graph_streams(g);
    const OpId *stream_ops = graph_stream_ops(g);
    for (uint32_t s = 0; s < graph_n_streams(g); s++) {
        if (!is_traced(traced, streams[s].rank))
            continue;
        for (uint32_t k = streams[s].op_begin; k < streams[s].op_end; k++)
            write_op(w, g, r, stream_ops[k]);
    }
}

/* Counter tracks. Accounts are GPU per rank, then CPU and NVMe per node (memory.h); each
 * traced account is mapped to the pid that shows it: the rank for a GPU, the lowest traced
 * rank on the node for its CPU and NVMe. */
static void write_counters(JsonWriter *w, const Graph *g, const MemTracker *t, const bool *traced)
{
    const uint32_t n_ranks = graph_n_ranks(g);
    uint32_t n_accounts = 0;
    for (uint32_t rank = 0; rank < n_ranks; rank++) {
        uint32_t last = memory_account_index(t, rank, MEM_NVME) + 1;
        n_accounts = last > n_accounts ? last : n_accounts;
    }
    uint32_t *pid_rank = xmalloc(((size_t)n_accounts + 1) * sizeof *pid_rank);
    uint8_t *space = xmalloc((size_t)n_accounts + 1);
    for (uint32_t a = 0; a < n_accounts; a++)
        pid_rank[a] = NO_PID;
    for (uint32_t rank = 0; rank < n_ranks; rank++) {
        if (!is_traced(traced, rank))
            continue;
        for (int s = 0; s < MEM_N_SPACES; s++) {
            uint32_t a = memory_account_index(t, rank, (MemSpace)s);
            if (pid_rank[a] == NO_PID) {
                pid_rank[a] = rank;
                space[a] = (uint8_t)s;
            }
        }
    }

    static const char *const names[MEM_N_SPACES] = {"gpu memory", "cpu memory", "nvme"};
    static const char *const short_names[MEM_N_SPACES] = {"gpu", "cpu", "nvme"};
    uint32_t n_samples;
    const MemSample *samples = memory_samples(t, &n_samples);
    for (uint32_t i = 0; i < n_samples; i++) {
        const MemSample *m = &samples[i];
        if (m->account >= n_accounts || pid_rank[m->account] == NO_PID)
            continue;
        begin_event(w, "C", names[space[m->account]], pid_rank[m->account]);
        json_kv_string(w, "cat", "memory");
        json_kv_double(w, "ts", ns_to_us(to_ns(m->time_s)));
        json_key(w, "args");
        json_begin_object(w);
        json_kv_double(w, "bytes", m->bytes);
        json_end_object(w);
        json_end_object(w);
        /* one track per category, each its own counter name, so that no viewer reads the
         * categories a sample leaves out as zero */
        char name[48];
        snprintf(name, sizeof name, "%s %s", short_names[space[m->account]],
                 graph_category_name((MemCategory)m->category));
        begin_event(w, "C", name, pid_rank[m->account]);
        json_kv_string(w, "cat", "memory");
        json_kv_double(w, "ts", ns_to_us(to_ns(m->time_s)));
        json_key(w, "args");
        json_begin_object(w);
        json_kv_double(w, "bytes", m->category_bytes);
        json_end_object(w);
        json_end_object(w);
        if (m->reserved_bytes > 0) { /* the caching allocator's reserve (GPU) */
            begin_event(w, "C", "gpu reserved", pid_rank[m->account]);
            json_kv_string(w, "cat", "memory");
            json_kv_double(w, "ts", ns_to_us(to_ns(m->time_s)));
            json_key(w, "args");
            json_begin_object(w);
            json_kv_double(w, "bytes", m->reserved_bytes);
            json_end_object(w);
            json_end_object(w);
        }
    }
    free(pid_rank);
    free(space);
}

/* Flows: from each traced collective that took time to every compute op with a duration it
 * is a dependency of (the compute it unblocks), bound to the end of the collective's slice and
 * the start of the compute's ("bp": "e": the enclosing slice). */
static void write_flows(JsonWriter *w, const Graph *g, const EngineResult *r, const bool *traced)
{
    const Op *ops = graph_ops(g);
    const OpId *succ = graph_successors(g);
    uint64_t flow_id = 0;
    for (OpId id = 0; id < graph_n_ops(g); id++) {
        const Op *op = &ops[id];
        if (op->kind != OP_COLLECTIVE || !is_traced(traced, op->rank))
            continue;
        const int64_t end_ns = to_ns(r->op_end_s[id]);
        if (end_ns <= to_ns(r->op_start_s[id]))
            continue;
        for (uint32_t k = op->succ_begin; k < op->succ_end; k++) {
            const OpId t = succ[k];
            const Op *to = &ops[t];
            const int64_t start_ns = to_ns(r->op_start_s[t]);
            if (to->kind != OP_COMPUTE || !is_traced(traced, to->rank) ||
                to_ns(r->op_end_s[t]) <= start_ns)
                continue;
            flow_id++;
            begin_event(w, "s", "unblocks", op->rank);
            json_kv_u64(w, "tid", TRACE_TID(op->stream_kind));
            json_kv_string(w, "cat", "dependency");
            json_kv_u64(w, "id", flow_id);
            json_kv_double(w, "ts", ns_to_us(end_ns - 1)); /* inside the collective's slice */
            json_end_object(w);
            begin_event(w, "f", "unblocks", to->rank);
            json_kv_u64(w, "tid", TRACE_TID(to->stream_kind));
            json_kv_string(w, "cat", "dependency");
            json_kv_u64(w, "id", flow_id);
            json_kv_string(w, "bp", "e");
            json_kv_double(w, "ts", ns_to_us(start_ns));
            json_end_object(w);
        }
    }
}

/* Step markers: on each traced rank's compute stream a micro-batch starts at a forward op
 * that follows anything but a forward op (the schedule runs each micro-batch's forward, then
 * its backward, zero_schedule.c), and every micro_batches-th one starts a step. */
static void write_steps(JsonWriter *w, const Graph *g, const EngineResult *r, const bool *traced,
                        uint64_t micro_batches)
{
    const Stream *streams = graph_streams(g);
    const OpId *stream_ops = graph_stream_ops(g);
    const Op *ops = graph_ops(g);
    for (uint32_t s = 0; s < graph_n_streams(g); s++) {
        if (streams[s].kind != STREAM_COMPUTE || !is_traced(traced, streams[s].rank))
            continue;
        bool after_forward = false;
        uint64_t n_starts = 0;
        for (uint32_t k = streams[s].op_begin; k < streams[s].op_end; k++) {
            const Op *op = &ops[stream_ops[k]];
            if (op->kind != OP_COMPUTE || op->purpose == PURPOSE_SYNC)
                continue;
            const bool is_forward = op->purpose == PURPOSE_FORWARD;
            if (is_forward && !after_forward && n_starts++ % micro_batches == 0) {
                char name[32];
                const uint64_t step = (n_starts - 1) / micro_batches;
                snprintf(name, sizeof name, "step %llu", (unsigned long long)step);
                begin_event(w, "i", name, streams[s].rank);
                json_kv_u64(w, "tid", TRACE_TID(STREAM_COMPUTE));
                json_kv_string(w, "cat", "step");
                json_kv_string(w, "s", "p");
                json_kv_double(w, "ts", ns_to_us(to_ns(r->op_start_s[stream_ops[k]])));
                json_key(w, "args");
                json_begin_object(w);
                json_kv_u64(w, "step", step);
                json_end_object(w);
                json_end_object(w);
            }
            after_forward = is_forward;
        }
    }
}

/* A change of one rank's send rate on one link class at one time. */
typedef struct RateChange {
    int64_t time_ns;
    uint32_t rank;
    uint8_t link;
    double bytes_per_s; /* + at an op's start, - at its end */
} RateChange;

static int by_track_then_time(const void *pa, const void *pb)
{
    const RateChange *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->link != b->link)
        return a->link < b->link ? -1 : 1;
    return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

/* What one GPU can send on a link class, bytes/s; 0 when unknown (no platform, NVMe). */
static double link_capacity(const Platform *p, LinkClass c)
{
    if (p == NULL)
        return 0.0;
    switch (c) {
    case LINK_NVLINK: return p->has_nvlink ? p->nvlink.bw_bytes_per_s : 0.0;
    case LINK_PCIE: return p->pcie.gpu_link.bw_bytes_per_s;
    case LINK_NIC: /* the node's NICs shared by its GPUs */
        return p->gpus_per_node ? p->nic.link.bw_bytes_per_s * (double)p->nic.per_node /
                                      (double)p->gpus_per_node
                                : 0.0;
    case LINK_NVME:
    case LINK_N_CLASSES: break;
    }
    return 0.0;
}

/* Link counters: each op that sent bytes over a link class adds bytes / duration to that
 * class's rate for its duration (the average: the flow model's instantaneous rates are not
 * recorded), per traced rank; with a platform, the utilisation is that rate over what the GPU
 * can send on the class. */
static void write_links(JsonWriter *w, const Graph *g, const EngineResult *r, const bool *traced,
                        const Platform *platform)
{
    if (r->op_link_bytes == NULL)
        return;
    const Op *ops = graph_ops(g);
    size_t n = 0;
    for (OpId id = 0; id < graph_n_ops(g); id++)
        for (int c = 0; c < LINK_N_CLASSES; c++)
            n += is_traced(traced, ops[id].rank) && r->op_link_bytes[id][c] > 0 &&
                 to_ns(r->op_end_s[id]) > to_ns(r->op_start_s[id]);
    if (n == 0)
        return;
    RateChange *ch = xmalloc(2 * n * sizeof *ch);
    size_t k = 0;
    for (OpId id = 0; id < graph_n_ops(g); id++) {
        const int64_t t0 = to_ns(r->op_start_s[id]), t1 = to_ns(r->op_end_s[id]);
        if (!is_traced(traced, ops[id].rank) || t1 <= t0)
            continue;
        for (int c = 0; c < LINK_N_CLASSES; c++) {
            const double bytes = r->op_link_bytes[id][c];
            if (bytes <= 0)
                continue;
            const double rate = bytes / ((double)(t1 - t0) * 1e-9);
            ch[k++] = (RateChange){t0, ops[id].rank, (uint8_t)c, rate};
            ch[k++] = (RateChange){t1, ops[id].rank, (uint8_t)c, -rate};
        }
    }
    assert(k == 2 * n);
    qsort(ch, k, sizeof *ch, by_track_then_time);
    double rate = 0.0;
    for (size_t i = 0; i < k; i++) {
        if (i == 0 || ch[i].rank != ch[i - 1].rank || ch[i].link != ch[i - 1].link)
            rate = 0.0;
        rate += ch[i].bytes_per_s;
        if (i + 1 < k && ch[i + 1].rank == ch[i].rank && ch[i + 1].link == ch[i].link &&
            ch[i + 1].time_ns == ch[i].time_ns)
            continue; /* one sample per time */
        if (rate < 1.0)
            rate = 0.0; /* below a byte per second: the rounding left by adding and removing
                           the same rates */
        char name[32];
        snprintf(name, sizeof name, "link %s", topology_link_class_name((LinkClass)ch[i].link));
        begin_event(w, "C", name, ch[i].rank);
        json_kv_string(w, "cat", "link");
        json_kv_double(w, "ts", ns_to_us(ch[i].time_ns));
        json_key(w, "args");
        json_begin_object(w);
        json_kv_double(w, "send_bytes_per_s", rate);
        const double cap = link_capacity(platform, (LinkClass)ch[i].link);
        if (cap > 0)
            json_kv_double(w, "utilisation", rate / cap);
        json_end_object(w);
        json_end_object(w);
    }
    free(ch);
}

void trace_write_to(FILE *out, const Graph *g, const EngineResult *r, const TraceOptions *opts)
{
    const bool *traced = opts ? opts->traced : NULL;
    const uint64_t micro_batches =
        opts && opts->micro_batches_per_step ? opts->micro_batches_per_step : 1;
    assert(graph_stream_ops(g) != NULL); /* finalised */
    JsonWriter w;
    json_writer_init(&w, out, false);
    json_begin_object(&w);
    json_kv_string(&w, "displayTimeUnit", "ms");
    json_key(&w, "traceEvents");
    json_begin_array(&w);
    write_metadata(&w, g, traced);
    write_ops(&w, g, r, traced);
    write_flows(&w, g, r, traced);
    write_steps(&w, g, r, traced, micro_batches);
    if (r->memory != NULL)
        write_counters(&w, g, r->memory, traced);
    write_links(&w, g, r, traced, opts ? opts->platform : NULL);
    json_end_array(&w);
    json_end_object(&w);
    fputc('\n', out);
}

int trace_write(const char *path, const Graph *g, const EngineResult *r,
                const TraceOptions *opts, Err *err)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return err_set(err, "%s: cannot write trace: %s", path, strerror(errno));
    trace_write_to(out, g, r, opts);

    /* A full disk may show only when the buffered bytes are flushed or the file is closed. */
    int error = 0;
    if (fflush(out) != 0)
        error = errno;
    else if (ferror(out))
        error = EIO;
    if (fclose(out) != 0 && error == 0)
        error = errno;
    if (error != 0)
        return err_set(err, "%s: cannot write trace: %s", path, strerror(error));
    return 0;
}
