/*
 * graph.c - event graph storage, finalisation and validation (see graph.h).
 *
 * While building, ops go into one growing array and dependency edges into another; streams
 * are created on first use per (rank, kind). graph_finalize() turns this into the flat form
 * the engine walks: ops grouped by stream in insertion order (a counting sort) and successors
 * in compressed rows, so releasing a dependency costs O(1) and running allocates nothing.
 */
#include "graph.h"

#include "../common/choices.h"
#include "../common/xalloc.h"

#include <assert.h>
#include <string.h>

typedef struct Edge {
    OpId before, after;
} Edge;

typedef struct Buffer {
    uint32_t rank;
    uint8_t space, category;
    uint32_t n_frees;
    double bytes;
} Buffer;

/* A growable array of fixed-size items; `items` is reallocated as it grows. */
#define VEC(T)                                                                                     \
    struct {                                                                                       \
        T *items;                                                                                  \
        uint32_t n, cap;                                                                           \
    }
#define VEC_PUSH(v, value)                                                                         \
    do {                                                                                           \
        if ((v).n == (v).cap) {                                                                    \
            (v).cap = (v).cap ? 2 * (v).cap : 64;                                                  \
            (v).items = xrealloc((v).items, (size_t)(v).cap * sizeof *(v).items);                  \
        }                                                                                          \
        (v).items[(v).n++] = (value);                                                              \
    } while (0)

struct Graph {
    uint32_t n_ranks;
    bool is_final;
    VEC(Op) ops;
    VEC(Edge) edges;
    VEC(Stream) streams;
    uint32_t *stream_of; /* [rank * STREAM_N_KINDS + kind] -> stream index or UINT32_MAX */
    VEC(Collective) collectives;
    VEC(uint32_t) group_members;
    VEC(uint32_t) group_begin; /* group i: members[group_begin[i] .. group_begin[i+1]) */
    VEC(Buffer) buffers;
    VEC(char *) labels;
    uint32_t *label_table; /* open addressing: label index + 1, 0 = empty */
    uint32_t label_table_size;
    OpId *stream_ops;
    OpId *successors;
};

Graph *graph_create(uint32_t n_ranks)
{
    Graph *g = xcalloc(1, sizeof *g);
    g->n_ranks = n_ranks;
    g->stream_of = xmalloc((size_t)n_ranks * STREAM_N_KINDS * sizeof *g->stream_of);
    memset(g->stream_of, 0xff, (size_t)n_ranks * STREAM_N_KINDS * sizeof *g->stream_of);
    VEC_PUSH(g->group_begin, 0u);
    graph_label(g, "");
    return g;
}

void graph_destroy(Graph *g)
{
    if (g == NULL)
        return;
    for (uint32_t i = 0; i < g->labels.n; i++)
        free(g->labels.items[i]);
    free(g->labels.items);
    free(g->label_table);
    free(g->ops.items);
    free(g->edges.items);
    free(g->streams.items);
    free(g->stream_of);
    free(g->collectives.items);
    free(g->group_members.items);
    free(g->group_begin.items);
    free(g->buffers.items);
    free(g->stream_ops);
    free(g->successors);
    free(g);
}

uint32_t graph_add_group(Graph *g, const uint32_t *ranks, uint32_t n_ranks)
{
    assert(!g->is_final && n_ranks > 0);
    for (uint32_t i = 0; i < n_ranks; i++) {
        assert(ranks[i] < g->n_ranks);
        VEC_PUSH(g->group_members, ranks[i]);
    }
    VEC_PUSH(g->group_begin, g->group_members.n);
    return g->group_begin.n - 2;
}

static uint32_t hash_string(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void label_table_insert(Graph *g, uint32_t index)
{
    uint32_t mask = g->label_table_size - 1;
    for (uint32_t i = hash_string(g->labels.items[index]) & mask;; i = (i + 1) & mask) {
        if (g->label_table[i] == 0) {
            g->label_table[i] = index + 1;
            return;
        }
    }
}

uint32_t graph_find_label(const Graph *g, const char *label)
{
    if (g->label_table_size > 0) {
        uint32_t mask = g->label_table_size - 1;
        for (uint32_t i = hash_string(label) & mask; g->label_table[i] != 0; i = (i + 1) & mask)
            if (strcmp(g->labels.items[g->label_table[i] - 1], label) == 0)
                return g->label_table[i] - 1;
    }
    return UINT32_MAX;
}

uint32_t graph_label(Graph *g, const char *label)
{
    uint32_t found = graph_find_label(g, label);
    if (found != UINT32_MAX)
        return found;
    VEC_PUSH(g->labels, xstrdup(label));
    if (2 * g->labels.n > g->label_table_size) {
        free(g->label_table);
        g->label_table_size = g->label_table_size ? 2 * g->label_table_size : 256;
        g->label_table = xcalloc(g->label_table_size, sizeof *g->label_table);
        for (uint32_t i = 0; i < g->labels.n; i++)
            label_table_insert(g, i);
    } else {
        label_table_insert(g, g->labels.n - 1);
    }
    return g->labels.n - 1;
}

static uint32_t stream_for(Graph *g, uint32_t rank, StreamKind kind)
{
    assert(rank < g->n_ranks && kind < STREAM_N_KINDS);
    uint32_t *slot = &g->stream_of[(size_t)rank * STREAM_N_KINDS + kind];
    if (*slot == UINT32_MAX) {
        Stream s = {.rank = rank, .kind = (uint8_t)kind};
        VEC_PUSH(g->streams, s);
        *slot = g->streams.n - 1;
    }
    return *slot;
}

static OpId add_op(Graph *g, uint32_t rank, StreamKind stream, OpKind kind, uint8_t sub,
                   double amount, uint32_t label)
{
    assert(!g->is_final);
    Op op = {0};
    op.kind = (uint8_t)kind;
    op.sub = sub;
    op.stream_kind = (uint8_t)stream;
    op.rank = rank;
    op.stream = stream_for(g, rank, stream);
    op.label = label;
    op.amount = amount;
    VEC_PUSH(g->ops, op);
    return g->ops.n - 1;
}

OpId graph_compute(Graph *g, uint32_t rank, StreamKind stream, Device device, OpPurpose purpose,
                   double amount, uint32_t label)
{
    assert(purpose < PURPOSE_N);
    OpId id = add_op(g, rank, stream, OP_COMPUTE, (uint8_t)device, amount, label);
    g->ops.items[id].purpose = (uint8_t)purpose;
    return id;
}

OpId graph_copy(Graph *g, uint32_t rank, StreamKind stream, CopyKind kind, double bytes,
                uint32_t label)
{
    return add_op(g, rank, stream, OP_COPY, (uint8_t)kind, bytes, label);
}

OpId graph_disk(Graph *g, uint32_t rank, DiskKind kind, double bytes, uint32_t label)
{
    return add_op(g, rank, STREAM_NVME, OP_DISK, (uint8_t)kind, bytes, label);
}

uint32_t graph_collective(Graph *g, CollectiveKind kind, uint32_t group, StreamKind stream,
                          double bytes, uint32_t root, uint32_t label, OpId *out_ops)
{
    assert(group + 1 < g->group_begin.n);
    Collective c = {
        .kind = (uint8_t)kind, .group = group, .bytes = bytes, .root = root, .first_op = g->ops.n};
    VEC_PUSH(g->collectives, c);
    uint32_t instance = g->collectives.n - 1;
    uint32_t begin = g->group_begin.items[group], end = g->group_begin.items[group + 1];
    for (uint32_t i = begin; i < end; i++) {
        OpId id = add_op(g, g->group_members.items[i], stream, OP_COLLECTIVE, (uint8_t)kind, bytes,
                         label);
        g->ops.items[id].ref = instance;
        if (out_ops)
            out_ops[i - begin] = id;
    }
    return instance;
}

void graph_collective_set_logical(Graph *g, uint32_t instance, uint32_t n_logical)
{
    assert(!g->is_final && instance < g->collectives.n);
    g->collectives.items[instance].n_logical = n_logical;
}

void graph_collective_set_calls(Graph *g, uint32_t instance, uint32_t n_calls)
{
    assert(!g->is_final && instance < g->collectives.n);
    g->collectives.items[instance].n_calls = n_calls;
}

void graph_collective_set_overhead(Graph *g, uint32_t instance, double seconds)
{
    assert(!g->is_final && instance < g->collectives.n && seconds >= 0);
    g->collectives.items[instance].overhead_s = seconds;
}

OpId graph_alloc(Graph *g, uint32_t rank, StreamKind stream, MemSpace space, MemCategory category,
                 double bytes, uint32_t *out_buffer)
{
    Buffer b = {
        .rank = rank, .space = (uint8_t)space, .category = (uint8_t)category, .bytes = bytes};
    VEC_PUSH(g->buffers, b);
    OpId id = add_op(g, rank, stream, OP_ALLOC, (uint8_t)space, bytes, 0);
    g->ops.items[id].category = (uint8_t)category;
    g->ops.items[id].ref = g->buffers.n - 1;
    *out_buffer = g->buffers.n - 1;
    return id;
}

OpId graph_free(Graph *g, uint32_t rank, StreamKind stream, uint32_t buffer)
{
    assert(buffer < g->buffers.n);
    Buffer *b = &g->buffers.items[buffer];
    b->n_frees++;
    OpId id = add_op(g, rank, stream, OP_FREE, b->space, b->bytes, 0);
    g->ops.items[id].category = b->category;
    g->ops.items[id].ref = buffer;
    return id;
}

void graph_depend(Graph *g, OpId before, OpId after)
{
    assert(!g->is_final && before < g->ops.n && after < g->ops.n && before != after);
    Edge e = {before, after};
    VEC_PUSH(g->edges, e);
}

/* Successor k of op `id`: its explicit successors, then the next op of its stream;
 * GRAPH_NO_OP past the last. `pos` is each op's index in stream_ops. */
static OpId nth_successor(const Graph *g, const uint32_t *pos, OpId id, uint32_t k)
{
    const Op *op = &g->ops.items[id];
    uint32_t n_explicit = op->succ_end - op->succ_begin;
    if (k < n_explicit)
        return g->successors[op->succ_begin + k];
    uint32_t next = pos[id] + 1;
    if (k == n_explicit && next < g->streams.items[op->stream].op_end)
        return g->stream_ops[next];
    return GRAPH_NO_OP;
}

/* An op on a cycle among the ops Kahn's algorithm left (indegree > 0), found by depth-first
 * search: the first successor met that is still on the search path. Ops downstream of a
 * cycle are also left, so any left op will not do for the message. */
static OpId op_on_cycle(const Graph *g, const uint32_t *pos, const uint32_t *indegree)
{
    const uint32_t n = g->ops.n;
    enum { UNSEEN, ON_PATH, DONE };
    uint8_t *state = xcalloc(n, sizeof *state);
    OpId *path = xmalloc((size_t)n * sizeof *path);
    uint32_t *next_k = xmalloc((size_t)n * sizeof *next_k);
    OpId found = GRAPH_NO_OP;
    for (OpId root = 0; root < n && found == GRAPH_NO_OP; root++) {
        if (indegree[root] == 0 || state[root] != UNSEEN)
            continue;
        uint32_t depth = 0;
        path[depth] = root;
        next_k[depth++] = 0;
        state[root] = ON_PATH;
        while (depth > 0 && found == GRAPH_NO_OP) {
            OpId id = path[depth - 1];
            OpId succ = nth_successor(g, pos, id, next_k[depth - 1]++);
            if (succ == GRAPH_NO_OP) {
                state[id] = DONE;
                depth--;
            } else if (indegree[succ] > 0 && state[succ] == ON_PATH) {
                found = succ;
            } else if (indegree[succ] > 0 && state[succ] == UNSEEN) {
                state[succ] = ON_PATH;
                path[depth] = succ;
                next_k[depth++] = 0;
            }
        }
    }
    free(state);
    free(path);
    free(next_k);
    return found;
}

/* Kahn's algorithm over explicit edges plus stream order. */
static int check_acyclic(const Graph *g, Err *err)
{
    const uint32_t n = g->ops.n;
    uint32_t *indegree = xmalloc((size_t)n * sizeof *indegree);
    OpId *queue = xmalloc((size_t)n * sizeof *queue);
    for (uint32_t i = 0; i < n; i++)
        indegree[i] = g->ops.items[i].n_deps;
    uint32_t head = 0, tail = 0;
    for (uint32_t s = 0; s < g->streams.n; s++) {
        const Stream *st = &g->streams.items[s];
        for (uint32_t k = st->op_begin + 1; k < st->op_end; k++)
            indegree[g->stream_ops[k]]++;
        if (st->op_begin < st->op_end && indegree[g->stream_ops[st->op_begin]] == 0)
            queue[tail++] = g->stream_ops[st->op_begin];
    }
    /* position of each op within its stream, to find its stream successor */
    uint32_t *pos = xmalloc((size_t)n * sizeof *pos);
    for (uint32_t k = 0; k < n; k++)
        pos[g->stream_ops[k]] = k;
    while (head < tail) {
        OpId id = queue[head++], succ;
        for (uint32_t k = 0; (succ = nth_successor(g, pos, id, k)) != GRAPH_NO_OP; k++)
            if (--indegree[succ] == 0)
                queue[tail++] = succ;
    }
    int rc = 0;
    if (tail != n) {
        OpId i = op_on_cycle(g, pos, indegree);
        assert(i != GRAPH_NO_OP); /* Kahn left ops, so some of them form a cycle */
        const Op *op = &g->ops.items[i];
        rc = err_set(err,
                     "event graph: expected no dependency cycle, got one through op "
                     "%u (rank %u, stream %s, \"%s\")",
                     i, op->rank, graph_stream_name((StreamKind)op->stream_kind),
                     g->labels.items[op->label]);
    }
    free(indegree);
    free(queue);
    free(pos);
    return rc;
}

/* A group lists each rank once (two ops of one collective on one stream would wait for each
 * other forever); a broadcast's root is a member. */
static int check_groups(const Graph *g, Err *err)
{
    uint32_t *seen = xmalloc(((size_t)g->n_ranks + 1) * sizeof *seen);
    memset(seen, 0xff, ((size_t)g->n_ranks + 1) * sizeof *seen);
    int rc = 0;
    for (uint32_t grp = 0; grp + 1 < g->group_begin.n && rc == 0; grp++) {
        for (uint32_t i = g->group_begin.items[grp]; i < g->group_begin.items[grp + 1]; i++) {
            uint32_t r = g->group_members.items[i];
            if (seen[r] == grp) {
                rc = err_set(err,
                             "event graph: expected group %u to list each rank once, got "
                             "rank %u twice",
                             grp, r);
                break;
            }
            seen[r] = grp;
        }
    }
    for (uint32_t c = 0; c < g->collectives.n && rc == 0; c++) {
        const Collective *col = &g->collectives.items[c];
        if (col->kind != COLL_BROADCAST)
            continue;
        uint32_t n;
        const uint32_t *members = graph_group(g, col->group, &n);
        bool found = false;
        for (uint32_t i = 0; i < n; i++)
            found |= members[i] == col->root;
        if (!found)
            rc = err_set(err,
                         "event graph: expected broadcast %u's root rank %u in its group, "
                         "got a group without it",
                         c, col->root);
    }
    free(seen);
    return rc;
}

int graph_finalize(Graph *g, Err *err)
{
    assert(!g->is_final);
    g->is_final = true;
    const uint32_t n = g->ops.n;

    /* Ops grouped by stream, in insertion order (counting sort). */
    for (uint32_t i = 0; i < n; i++)
        g->streams.items[g->ops.items[i].stream].op_end++;
    uint32_t offset = 0;
    for (uint32_t s = 0; s < g->streams.n; s++) {
        uint32_t count = g->streams.items[s].op_end;
        g->streams.items[s].op_begin = g->streams.items[s].op_end = offset;
        offset += count;
    }
    g->stream_ops = xmalloc(((size_t)n + 1) * sizeof *g->stream_ops);
    for (uint32_t i = 0; i < n; i++)
        g->stream_ops[g->streams.items[g->ops.items[i].stream].op_end++] = i;

    /* Successors in compressed rows. */
    for (uint32_t e = 0; e < g->edges.n; e++) {
        g->ops.items[g->edges.items[e].before].succ_end++;
        g->ops.items[g->edges.items[e].after].n_deps++;
    }
    offset = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t count = g->ops.items[i].succ_end;
        g->ops.items[i].succ_begin = g->ops.items[i].succ_end = offset;
        offset += count;
    }
    g->successors = xmalloc(((size_t)g->edges.n + 1) * sizeof *g->successors);
    for (uint32_t e = 0; e < g->edges.n; e++)
        g->successors[g->ops.items[g->edges.items[e].before].succ_end++] = g->edges.items[e].after;
    free(g->edges.items);
    g->edges.items = NULL;

    for (uint32_t b = 0; b < g->buffers.n; b++) {
        const Buffer *buf = &g->buffers.items[b];
        if (buf->n_frees != 1)
            return err_set(err,
                           "event graph: expected buffer %u (rank %u, %s %s, %.0f bytes) "
                           "to be freed once, got %u frees",
                           b, buf->rank, graph_space_name((MemSpace)buf->space),
                           graph_category_name((MemCategory)buf->category), buf->bytes,
                           buf->n_frees);
    }
    if (check_groups(g, err))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const Op *op = &g->ops.items[i];
        if (op->kind == OP_FREE && g->buffers.items[op->ref].rank != op->rank)
            return err_set(err,
                           "event graph: expected buffer %u to be freed on rank %u, got a "
                           "free on rank %u",
                           op->ref, g->buffers.items[op->ref].rank, op->rank);
    }
    return check_acyclic(g, err);
}

uint32_t graph_n_ranks(const Graph *g)
{
    return g->n_ranks;
}
uint32_t graph_n_ops(const Graph *g)
{
    return g->ops.n;
}
uint32_t graph_n_streams(const Graph *g)
{
    return g->streams.n;
}
const Op *graph_ops(const Graph *g)
{
    return g->ops.items;
}
const Stream *graph_streams(const Graph *g)
{
    return g->streams.items;
}
const OpId *graph_stream_ops(const Graph *g)
{
    return g->stream_ops;
}
const OpId *graph_successors(const Graph *g)
{
    return g->successors;
}
const Collective *graph_collectives(const Graph *g)
{
    return g->collectives.items;
}
uint32_t graph_n_collectives(const Graph *g)
{
    return g->collectives.n;
}
const char *graph_label_text(const Graph *g, uint32_t label)
{
    return g->labels.items[label];
}

const uint32_t *graph_group(const Graph *g, uint32_t group, uint32_t *out_n_ranks)
{
    uint32_t begin = g->group_begin.items[group], end = g->group_begin.items[group + 1];
    *out_n_ranks = end - begin;
    return g->group_members.items + begin;
}

uint32_t graph_n_buffers(const Graph *g)
{
    return g->buffers.n;
}

double graph_buffer_bytes(const Graph *g, uint32_t buffer, MemSpace *out_space,
                          MemCategory *out_category)
{
    const Buffer *b = &g->buffers.items[buffer];
    if (out_space)
        *out_space = (MemSpace)b->space;
    if (out_category)
        *out_category = (MemCategory)b->category;
    return b->bytes;
}

const char *graph_collective_name(CollectiveKind kind)
{
    assert(choices_count(&choices_collective) == COLL_N_KINDS);
    return choices_name(&choices_collective, (int)kind);
}

const char *graph_purpose_name(OpPurpose purpose)
{
    static const char *const names[] = {"none",      "forward",   "backward",
                                        "recompute", "optimizer", "sync"};
    _Static_assert(sizeof names / sizeof names[0] == PURPOSE_N, "one name per purpose");
    return names[purpose];
}

const char *graph_stream_name(StreamKind kind)
{
    static const char *const names[] = {"compute", "gather", "reduce", "h2d", "d2h", "nvme", "cpu"};
    return names[kind];
}

const char *graph_category_name(MemCategory category)
{
    static const char *const names[] = {"params",  "grads",      "optimizer", "activations",
                                        "buffers", "step_copies", "workspace"};
    return names[category];
}

const char *graph_space_name(MemSpace space)
{
    static const char *const names[] = {"gpu", "cpu", "nvme"};
    return names[space];
}

static void dump_op(const Graph *g, OpId id, FILE *out)
{
    static const char *const copy_names[] = {"h2d", "d2h", "d2d"};
    const Op *op = &g->ops.items[id];
    fprintf(out, "  %u ", id);
    switch ((OpKind)op->kind) {
    case OP_COMPUTE:
        fprintf(out, "compute %s %.6g", op->sub == DEVICE_GPU ? "gpu" : "cpu", op->amount);
        break;
    case OP_COLLECTIVE: {
        uint32_t n_members;
        graph_group(g, g->collectives.items[op->ref].group, &n_members);
        fprintf(out, "%s #%u over %u ranks %.6g B", graph_collective_name((CollectiveKind)op->sub),
                op->ref, n_members, op->amount);
        break;
    }
    case OP_COPY: fprintf(out, "copy %s %.6g B", copy_names[op->sub], op->amount); break;
    case OP_DISK:
        fprintf(out, "disk %s %.6g B", op->sub == DISK_READ ? "read" : "write", op->amount);
        break;
    case OP_ALLOC:
    case OP_FREE:
        fprintf(out, "%s %s %s #%u %.6g B", op->kind == OP_ALLOC ? "alloc" : "free",
                graph_space_name((MemSpace)op->sub), graph_category_name((MemCategory)op->category),
                op->ref, op->amount);
        break;
    }
    if (op->label)
        fprintf(out, " \"%s\"", g->labels.items[op->label]);
    if (op->succ_end > op->succ_begin) {
        fprintf(out, " ->");
        for (uint32_t k = op->succ_begin; k < op->succ_end; k++)
            fprintf(out, " %u", g->successors[k]);
    }
    fputc('\n', out);
}

void graph_dump(const Graph *g, FILE *out)
{
    assert(g->is_final);
    fprintf(out, "graph: %u ranks, %u streams, %u ops, %u collectives\n", g->n_ranks, g->streams.n,
            g->ops.n, g->collectives.n);
    for (uint32_t s = 0; s < g->streams.n; s++) {
        const Stream *st = &g->streams.items[s];
        fprintf(out, "rank %u %s:\n", st->rank, graph_stream_name((StreamKind)st->kind));
        for (uint32_t k = st->op_begin; k < st->op_end; k++)
            dump_op(g, g->stream_ops[k], out);
    }
}
