/*
 * test_trace.c - the Chrome trace writer (report/trace.c) on a hand-built run.
 *
 * A two-rank graph is built by hand and given made-up op times (op i starts at i ms; ops that
 * take time last 0.5 ms) and a memory tracker fed the graph's ALLOC/FREE ops at those times, so
 * no SimGrid is needed. The trace is written to a temporary file, parsed back with cJSON, and
 * checked event by event: metadata, complete events in microseconds, counters only for traced
 * ranks, and the two ways writing can fail.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/trace.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define START_S(id) ((id)*1e-3)
#define BUSY_S 0.5e-3

enum { N_OPS = 17 };

/* Ops, by id (see build_graph):
 *  0 alloc r0 gpu activations 100    (compute)    9 free  r0 nvme               (nvme)
 *  1 compute r0 1e9 "fwd L0"         (compute)   10 alloc r0 cpu optimizer 512  (cpu)
 *  2 all_gather r0 4096              (gather)    11 compute r0 cpu 1000 "adam"  (cpu)
 *  3 all_gather r1 4096              (gather)    12 free  r0 cpu                (cpu)
 *  4 compute r1 1e9 "fwd L0"         (compute)   13 alloc r1 gpu activations 200 (compute)
 *  5 free r0 gpu                     (compute)   14 free  r1 gpu                (compute)
 *  6 copy h2d r0 64                  (h2d)       15 alloc r1 cpu optimizer 300  (cpu)
 *  7 alloc r0 nvme optimizer 8192    (nvme)      16 free  r1 cpu                (cpu)
 *  8 disk read r0 4096               (nvme)
 */
static Graph *build_graph(void)
{
    Graph *g = graph_create(2);
    const uint32_t both[] = {0, 1};
    uint32_t group = graph_add_group(g, both, 2);
    uint32_t fwd = graph_label(g, "fwd L0");
    uint32_t b[5];
    graph_alloc(g, 0, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS, 100, &b[0]);
    graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1e9, fwd);
    OpId ag[2];
    graph_collective(g, COLL_ALL_GATHER, group, STREAM_GATHER, 4096, 0, 0, ag);
    graph_compute(g, 1, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1e9, fwd);
    graph_free(g, 0, STREAM_COMPUTE, b[0]);
    graph_copy(g, 0, STREAM_H2D, COPY_H2D, 64, 0);
    graph_alloc(g, 0, STREAM_NVME, MEM_NVME, MEM_OPTIMIZER, 8192, &b[1]);
    graph_disk(g, 0, DISK_READ, 4096, 0);
    graph_free(g, 0, STREAM_NVME, b[1]);
    graph_alloc(g, 0, STREAM_CPU, MEM_CPU, MEM_OPTIMIZER, 512, &b[2]);
    graph_compute(g, 0, STREAM_CPU, DEVICE_CPU, PURPOSE_OPTIMIZER, 1000, graph_label(g, "adam"));
    graph_free(g, 0, STREAM_CPU, b[2]);
    graph_alloc(g, 1, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS, 200, &b[3]);
    graph_free(g, 1, STREAM_COMPUTE, b[3]);
    graph_alloc(g, 1, STREAM_CPU, MEM_CPU, MEM_OPTIMIZER, 300, &b[4]);
    graph_free(g, 1, STREAM_CPU, b[4]);
    graph_depend(g, ag[0], 1);
    graph_depend(g, ag[1], 4);
    Err err = {0};
    assert_int_equal(graph_finalize(g, &err), 0);
    assert_int_equal(graph_n_ops(g), N_OPS);
    return g;
}

/* Times and memory as the engine would report them; mem_traced selects the tracker's
 * timelines (NULL = none recorded). */
static void fake_result(const Graph *g, uint32_t gpus_per_node, const bool *mem_traced,
                        EngineResult *r)
{
    memset(r, 0, sizeof *r);
    const uint32_t n = graph_n_ops(g);
    r->n_ops = n;
    r->n_ranks = graph_n_ranks(g);
    r->op_start_s = calloc(n, sizeof *r->op_start_s);
    r->op_end_s = calloc(n, sizeof *r->op_end_s);
    assert_non_null(r->op_start_s);
    assert_non_null(r->op_end_s);
    r->memory = memory_create(r->n_ranks, gpus_per_node, 1e12, 1e12, 1e12, mem_traced);
    /* every collective ran NCCL's ring with LL over its 2 ranks on 2 nodes, 15 us latency */
    r->coll_info = calloc(graph_n_collectives(g) + 1, sizeof *r->coll_info);
    assert_non_null(r->coll_info);
    for (uint32_t c = 0; c < graph_n_collectives(g); c++)
        r->coll_info[c] = (EngineCollInfo){"ring", "LL", 2, 2, 1, 15e-6};
    const Op *ops = graph_ops(g);
    for (OpId id = 0; id < n; id++) {
        const Op *op = &ops[id];
        r->op_start_s[id] = START_S(id);
        bool is_mem = op->kind == OP_ALLOC || op->kind == OP_FREE;
        r->op_end_s[id] = START_S(id) + (is_mem ? 0 : BUSY_S);
        if (is_mem) {
            double bytes = op->kind == OP_ALLOC ? op->amount : -op->amount;
            memory_apply(r->memory, START_S(id), op->rank, (MemSpace)op->sub,
                         (MemCategory)op->category, op->ref, op->stream_kind, bytes);
        }
    }
    r->makespan_s = START_S(n);
}

static void fake_result_fini(EngineResult *r)
{
    free(r->op_start_s);
    free(r->op_end_s);
    free(r->coll_info);
    memory_destroy(r->memory);
}

/* Writes the trace to a fresh temporary file and parses it back (caller deletes). */
static cJSON *write_and_parse_with(const Graph *g, const EngineResult *r,
                                   const TraceOptions *opts)
{
    char path[] = "/tmp/zerosim_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    Err err = {0};
    int rc = trace_write(path, g, r, opts, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    remove(path);

    cJSON *root = cJSON_Parse(text);
    if (root == NULL)
        fprintf(stderr, "invalid JSON near: %.40s\n", cJSON_GetErrorPtr());
    free(text);
    assert_non_null(root);
    assert_true(cJSON_IsObject(root));
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(root, "displayTimeUnit");
    assert_true(cJSON_IsString(unit));
    assert_string_equal(unit->valuestring, "ms");
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "traceEvents")));
    return root;
}

static cJSON *write_and_parse(const Graph *g, const EngineResult *r, const bool *traced)
{
    const TraceOptions opts = {traced, 1, NULL};
    return write_and_parse_with(g, r, &opts);
}

static const cJSON *events_of(const cJSON *root)
{
    return cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
}

static const char *str_field(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static double num_field(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static bool has_field(const cJSON *e, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(e, key) != NULL;
}

/* Events of phase ph (and name, and pid, when given: NULL / 0 = any). */
static int count_events(const cJSON *root, const char *ph, const char *name, uint64_t pid)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events_of(root))
    {
        if (strcmp(str_field(e, "ph"), ph) != 0)
            continue;
        if (name != NULL && strcmp(str_field(e, "name"), name) != 0)
            continue;
        if (pid != 0 && (uint64_t)num_field(e, "pid") != pid)
            continue;
        n++;
    }
    return n;
}

/* The X event of op `id` (args.op), or NULL. */
static const cJSON *find_op(const cJSON *root, OpId id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events_of(root))
    {
        if (strcmp(str_field(e, "ph"), "X") != 0)
            continue;
        if ((OpId)num_field(cJSON_GetObjectItemCaseSensitive(e, "args"), "op") == id)
            return e;
    }
    return NULL;
}

/* The metadata event `what` for (pid, tid) (tid 0: a process event). */
static const cJSON *find_meta(const cJSON *root, const char *what, uint64_t pid, uint64_t tid)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events_of(root))
    {
        if (strcmp(str_field(e, "ph"), "M") != 0 || strcmp(str_field(e, "name"), what) != 0)
            continue;
        if ((uint64_t)num_field(e, "pid") != pid)
            continue;
        if (tid == 0 ? !has_field(e, "tid") : (uint64_t)num_field(e, "tid") == tid)
            return e;
    }
    return NULL;
}

/* Checks the X event of op id: name, category, stream, time in µs, one numeric arg. */
static void check_op(const cJSON *root, OpId id, uint32_t rank, StreamKind stream, const char *name,
                     const char *cat, const char *arg, double arg_value)
{
    const cJSON *e = find_op(root, id);
    if (e == NULL)
        fprintf(stderr, "no X event for op %u\n", id);
    assert_non_null(e);
    assert_string_equal(str_field(e, "name"), name);
    assert_string_equal(str_field(e, "cat"), cat);
    assert_true(num_field(e, "pid") == (double)TRACE_PID(rank));
    assert_true(num_field(e, "tid") == (double)TRACE_TID(stream));
    /* exact: times are rounded to whole nanoseconds before conversion to µs */
    assert_true(num_field(e, "ts") == id * 1000.0);
    assert_true(num_field(e, "dur") == 500.0);
    assert_true(num_field(cJSON_GetObjectItemCaseSensitive(e, "args"), arg) == arg_value);
}

/* The C events named `name` under pid, in file order, must carry exactly these bytes at
 * these op times. */
static void check_counter(const cJSON *root, const char *name, uint64_t pid, const OpId *at,
                          const double *bytes, int n)
{
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events_of(root))
    {
        if (strcmp(str_field(e, "ph"), "C") != 0 || strcmp(str_field(e, "name"), name) != 0 ||
            (uint64_t)num_field(e, "pid") != pid)
            continue;
        assert_true(k < n);
        assert_true(num_field(e, "ts") == at[k] * 1000.0);
        assert_true(num_field(cJSON_GetObjectItemCaseSensitive(e, "args"), "bytes") == bytes[k]);
        k++;
    }
    assert_int_equal(k, n);
}

static void test_trace_write_traced_rank_only(void **state)
{
    (void)state;
    Graph *g = build_graph();
    EngineResult r;
    /* Two nodes of one GPU each; the engine recorded every rank, the trace shows rank 0. */
    const bool all[] = {true, true};
    fake_result(g, 1, all, &r);
    const bool traced[] = {true, false};
    cJSON *root = write_and_parse(g, &r, traced);
    const uint64_t p0 = TRACE_PID(0);

    /* Metadata: one process, its five streams. */
    assert_int_equal(count_events(root, "M", "process_name", 0), 1);
    const cJSON *pn = find_meta(root, "process_name", p0, 0);
    assert_non_null(pn);
    assert_string_equal(str_field(cJSON_GetObjectItemCaseSensitive(pn, "args"), "name"), "rank 0");
    assert_non_null(find_meta(root, "process_sort_index", p0, 0));
    assert_int_equal(count_events(root, "M", "thread_name", 0), 5);
    assert_int_equal(count_events(root, "M", "thread_sort_index", 0), 5);
    const StreamKind kinds[] = {STREAM_COMPUTE, STREAM_GATHER, STREAM_H2D, STREAM_NVME, STREAM_CPU};
    for (int i = 0; i < 5; i++) {
        const cJSON *tn = find_meta(root, "thread_name", p0, TRACE_TID(kinds[i]));
        assert_non_null(tn);
        assert_string_equal(str_field(cJSON_GetObjectItemCaseSensitive(tn, "args"), "name"),
                            graph_stream_name(kinds[i]));
        const cJSON *ts = find_meta(root, "thread_sort_index", p0, TRACE_TID(kinds[i]));
        assert_non_null(ts);
        assert_true(num_field(cJSON_GetObjectItemCaseSensitive(ts, "args"), "sort_index") ==
                    kinds[i]);
    }

    /* Complete events: rank 0's five timed ops; labels win over kind names. */
    assert_int_equal(count_events(root, "X", NULL, 0), 5);
    check_op(root, 1, 0, STREAM_COMPUTE, "fwd L0", "forward", "flops", 1e9);
    check_op(root, 2, 0, STREAM_GATHER, "all_gather", "collective", "bytes", 4096);
    check_op(root, 6, 0, STREAM_H2D, "copy h2d", "copy", "bytes", 64);
    check_op(root, 8, 0, STREAM_NVME, "nvme read", "disk", "bytes", 4096);
    check_op(root, 11, 0, STREAM_CPU, "adam", "optimizer", "params", 1000);
    const cJSON *ag = cJSON_GetObjectItemCaseSensitive(find_op(root, 2), "args");
    assert_true(num_field(ag, "group_size") == 2);
    assert_string_equal(str_field(ag, "algorithm"), "ring");
    assert_string_equal(str_field(ag, "protocol"), "LL");
    assert_true(num_field(ag, "ranks") == 2);
    assert_true(num_field(ag, "nodes") == 2);
    assert_true(num_field(ag, "calls") == 1);
    assert_true(num_field(ag, "latency_us") == 15.0);
    assert_true(num_field(ag, "instance") == 0);

    /* Counters: rank 0's GPU and its node's CPU and NVMe, nothing of rank 1 or node 1. */
    const OpId gpu_at[] = {0, 5}, nvme_at[] = {7, 9}, cpu_at[] = {10, 12};
    const double gpu_bytes[] = {100, 0}, nvme_bytes[] = {8192, 0}, cpu_bytes[] = {512, 0};
    check_counter(root, "gpu memory", p0, gpu_at, gpu_bytes, 2);
    check_counter(root, "nvme", p0, nvme_at, nvme_bytes, 2);
    check_counter(root, "cpu memory", p0, cpu_at, cpu_bytes, 2);
    /* and one track per category beside each: the GPU's activations 100 then 0 */
    check_counter(root, "gpu activations", p0, gpu_at, gpu_bytes, 2);
    check_counter(root, "nvme optimizer", p0, nvme_at, nvme_bytes, 2);
    check_counter(root, "cpu optimizer", p0, cpu_at, cpu_bytes, 2);
    assert_int_equal(count_events(root, "C", NULL, 0), 12);

    /* The all-gather (op 2) unblocks the forward (op 1): one flow, from the end of the
     * gather's slice to the start of the compute's. */
    assert_int_equal(count_events(root, "s", "unblocks", p0), 1);
    assert_int_equal(count_events(root, "f", "unblocks", p0), 1);
    const cJSON *fe;
    cJSON_ArrayForEach(fe, events_of(root))
    {
        const char *ph = str_field(fe, "ph");
        if (strcmp(ph, "s") == 0) {
            assert_true(num_field(fe, "tid") == (double)TRACE_TID(STREAM_GATHER));
            assert_true(num_field(fe, "ts") == 2499.999);
            assert_true(num_field(fe, "id") == 1);
        } else if (strcmp(ph, "f") == 0) {
            assert_true(num_field(fe, "tid") == (double)TRACE_TID(STREAM_COMPUTE));
            assert_true(num_field(fe, "ts") == 1000.0);
            assert_true(num_field(fe, "id") == 1);
            assert_string_equal(str_field(fe, "bp"), "e");
        }
    }
    /* One step, marked where its first forward starts. */
    assert_int_equal(count_events(root, "i", "step 0", p0), 1);

    /* Rank 1 (and its node) is absent altogether. */
    const cJSON *e;
    cJSON_ArrayForEach(e, events_of(root))
    {
        assert_true(num_field(e, "pid") == (double)p0);
    }
    assert_int_equal(cJSON_GetArraySize(events_of(root)), 2 + 10 + 5 + 2 + 1 + 12);

    cJSON_Delete(root);
    fake_result_fini(&r);
    graph_destroy(g);
}

/* Both ranks on one node, all traced: the node's CPU and NVMe counters appear once, under the
 * lowest rank. */
static void test_trace_write_all_ranks_one_node(void **state)
{
    (void)state;
    Graph *g = build_graph();
    EngineResult r;
    fake_result(g, 2, (const bool[]){true, true}, &r);
    cJSON *root = write_and_parse(g, &r, NULL);
    const uint64_t p0 = TRACE_PID(0), p1 = TRACE_PID(1);

    assert_int_equal(count_events(root, "M", "process_name", 0), 2);
    const cJSON *pn = find_meta(root, "process_name", p1, 0);
    assert_non_null(pn);
    assert_string_equal(str_field(cJSON_GetObjectItemCaseSensitive(pn, "args"), "name"), "rank 1");
    assert_int_equal(count_events(root, "M", "thread_name", p0), 5);
    assert_int_equal(count_events(root, "M", "thread_name", p1), 3); /* gather, compute, cpu */

    assert_int_equal(count_events(root, "X", NULL, 0), 7);
    assert_int_equal(count_events(root, "X", NULL, p1), 2);
    check_op(root, 3, 1, STREAM_GATHER, "all_gather", "collective", "bytes", 4096);
    check_op(root, 4, 1, STREAM_COMPUTE, "fwd L0", "forward", "flops", 1e9);

    const OpId gpu1_at[] = {13, 14}, cpu_at[] = {10, 12, 15, 16};
    const double gpu1_bytes[] = {200, 0}, cpu_bytes[] = {512, 0, 300, 0};
    check_counter(root, "gpu memory", p1, gpu1_at, gpu1_bytes, 2);
    check_counter(root, "cpu memory", p0, cpu_at, cpu_bytes, 4);
    assert_int_equal(count_events(root, "C", "gpu memory", p0), 2);
    assert_int_equal(count_events(root, "C", "nvme", p0), 2);
    assert_int_equal(count_events(root, "C", "cpu memory", p1), 0);
    assert_int_equal(count_events(root, "C", "nvme", p1), 0);
    assert_int_equal(count_events(root, "C", NULL, 0), 20); /* each with its category track */

    cJSON_Delete(root);
    fake_result_fini(&r);
    graph_destroy(g);
}

/* No memory timelines recorded (or no tracker): ops only. */
static void test_trace_write_without_memory_samples(void **state)
{
    (void)state;
    Graph *g = build_graph();
    EngineResult r;
    fake_result(g, 1, NULL, &r);
    const bool traced[] = {false, true};
    cJSON *root = write_and_parse(g, &r, traced);
    assert_int_equal(count_events(root, "X", NULL, 0), 2);
    assert_int_equal(count_events(root, "X", NULL, TRACE_PID(1)), 2);
    assert_int_equal(count_events(root, "C", NULL, 0), 0);
    assert_null(find_meta(root, "process_name", TRACE_PID(0), 0));
    cJSON_Delete(root);

    memory_destroy(r.memory);
    r.memory = NULL;
    root = write_and_parse(g, &r, NULL);
    assert_int_equal(count_events(root, "X", NULL, 0), 7);
    assert_int_equal(count_events(root, "C", NULL, 0), 0);
    cJSON_Delete(root);
    fake_result_fini(&r);
    graph_destroy(g);
}

/* An ALLOC that took time (it waited for memory, say) is shown; zero-length ones are not. */
static void test_trace_write_alloc_with_duration(void **state)
{
    (void)state;
    Graph *g = build_graph();
    EngineResult r;
    fake_result(g, 1, NULL, &r);
    r.op_end_s[0] = r.op_start_s[0] + BUSY_S;
    cJSON *root = write_and_parse(g, &r, (const bool[]){true, false});
    assert_int_equal(count_events(root, "X", NULL, 0), 6);
    check_op(root, 0, 0, STREAM_COMPUTE, "alloc gpu activations", "alloc", "bytes", 100);
    cJSON_Delete(root);
    fake_result_fini(&r);
    graph_destroy(g);
}

/* Engine times are arbitrary doubles; the trace keeps whole nanoseconds. */
static void test_trace_write_rounds_to_nanoseconds(void **state)
{
    (void)state;
    Graph *g = build_graph();
    EngineResult r;
    fake_result(g, 1, NULL, &r);
    r.op_start_s[1] = 0.1 + 0.2;              /* 0.30000000000000004 */
    r.op_end_s[1] = r.op_start_s[1] + 1.4e-9; /* 1.4 ns: rounds to 1 ns */
    r.op_start_s[2] = 1.0 / 3.0;              /* 333333333.33 ns */
    r.op_end_s[2] = 2.0 / 3.0;                /* 666666666.67 ns */
    cJSON *root = write_and_parse(g, &r, (const bool[]){true, false});
    const cJSON *e = find_op(root, 1);
    assert_non_null(e);
    assert_true(num_field(e, "ts") == 300000.0);
    assert_true(num_field(e, "dur") == 0.001);
    e = find_op(root, 2);
    assert_non_null(e);
    assert_true(num_field(e, "ts") == 333333.333);
    assert_true(num_field(e, "dur") == 333333.334);
    cJSON_Delete(root);
    fake_result_fini(&r);
    graph_destroy(g);
}

static void test_trace_write_cannot_open(void **state)
{
    (void)state;
    Graph *g = build_graph();
    EngineResult r;
    fake_result(g, 1, NULL, &r);
    Err err = {0};
    assert_int_equal(trace_write("/nonexistent-zerosim-dir/t.json", g, &r, NULL, &err), -1);
    assert_string_equal(err.msg, "/nonexistent-zerosim-dir/t.json: cannot write trace: "
                                 "No such file or directory");
    fake_result_fini(&r);
    graph_destroy(g);
}

/* A full device fails when the buffered events are flushed, not silently. */
static void test_trace_write_full_device(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    Graph *g = build_graph();
    EngineResult r;
    fake_result(g, 1, NULL, &r);
    Err err = {0};
    assert_int_equal(trace_write("/dev/full", g, &r, NULL, &err), -1);
    assert_string_equal(err.msg, "/dev/full: cannot write trace: No space left on device");
    fake_result_fini(&r);
    graph_destroy(g);
}

/* Link tracks: the all-gather of rank 0 (op 2) sent 4096 bytes over the NIC in its 0.5 ms, the
 * H2D copy (op 6) 64 bytes over PCIe: rates 8.192e6 and 1.28e5 bytes/s while they ran, 0 after;
 * on a GPU whose NIC share sends 1.6384e7 bytes/s and whose PCIe lanes 2.56e5, both are half
 * used. Without a platform only the rates appear. */
static void test_trace_write_link_tracks(void **state)
{
    (void)state;
    Graph *g = build_graph();
    EngineResult r;
    fake_result(g, 1, NULL, &r);
    r.op_link_bytes = calloc(graph_n_ops(g), sizeof *r.op_link_bytes);
    assert_non_null(r.op_link_bytes);
    r.op_link_bytes[2][LINK_NIC] = 4096;
    r.op_link_bytes[6][LINK_PCIE] = 64;
    r.op_link_bytes[3][LINK_NIC] = 4096; /* rank 1: not traced */
    Platform p;
    memset(&p, 0, sizeof p);
    p.gpus_per_node = 2;
    p.nic.per_node = 1;
    p.nic.link.bw_bytes_per_s = 2 * 1.6384e7; /* one NIC for two GPUs */
    p.pcie.gpu_link.bw_bytes_per_s = 2.56e5;
    const TraceOptions opts = {(const bool[]){true, false}, 1, &p};
    cJSON *root = write_and_parse_with(g, &r, &opts);
    assert_int_equal(count_events(root, "C", "link nic", TRACE_PID(0)), 2);
    assert_int_equal(count_events(root, "C", "link pcie", TRACE_PID(0)), 2);
    assert_int_equal(count_events(root, "C", "link nic", TRACE_PID(1)), 0);
    const double nic_ts[] = {2000, 2500}, nic_rate[] = {8.192e6, 0};
    const double pcie_ts[] = {6000, 6500}, pcie_rate[] = {1.28e5, 0};
    int k_nic = 0, k_pcie = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events_of(root))
    {
        if (strcmp(str_field(e, "ph"), "C") != 0)
            continue;
        const char *name = str_field(e, "name");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        if (strcmp(name, "link nic") == 0) {
            assert_true(num_field(e, "ts") == nic_ts[k_nic]);
            assert_true(fabs(num_field(args, "send_bytes_per_s") - nic_rate[k_nic]) < 1e-6);
            assert_true(fabs(num_field(args, "utilisation") - (k_nic ? 0.0 : 0.5)) < 1e-12);
            k_nic++;
        } else if (strcmp(name, "link pcie") == 0) {
            assert_true(num_field(e, "ts") == pcie_ts[k_pcie]);
            assert_true(fabs(num_field(args, "send_bytes_per_s") - pcie_rate[k_pcie]) < 1e-6);
            assert_true(fabs(num_field(args, "utilisation") - (k_pcie ? 0.0 : 0.5)) < 1e-12);
            k_pcie++;
        }
    }
    assert_int_equal(k_nic, 2);
    assert_int_equal(k_pcie, 2);
    cJSON_Delete(root);

    const TraceOptions bare = {(const bool[]){true, false}, 1, NULL};
    root = write_and_parse_with(g, &r, &bare);
    cJSON_ArrayForEach(e, events_of(root))
    {
        if (strcmp(str_field(e, "ph"), "C") == 0 && strcmp(str_field(e, "name"), "link nic") == 0)
            assert_false(has_field(cJSON_GetObjectItemCaseSensitive(e, "args"), "utilisation"));
    }
    cJSON_Delete(root);
    free(r.op_link_bytes);
    r.op_link_bytes = NULL;
    fake_result_fini(&r);
    graph_destroy(g);
}

/* Four micro-batches of forward, forward, recompute, backward on one rank, two per step: the
 * markers "step 0" and "step 1" sit at the first forward of micro-batches 0 and 2 (ops 0 and
 * 8), and the recomputation is its own slice with category "recompute". */
static void test_trace_write_steps_and_recompute(void **state)
{
    (void)state;
    Graph *g = graph_create(1);
    uint32_t fwd = graph_label(g, "fwd"), rec = graph_label(g, "recompute"),
             bwd = graph_label(g, "bwd");
    for (int mb = 0; mb < 4; mb++) {
        graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1e9, fwd);
        graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1e9, fwd);
        graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_RECOMPUTE, 1e9, rec);
        graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_BACKWARD, 2e9, bwd);
    }
    Err err = {0};
    assert_int_equal(graph_finalize(g, &err), 0);
    EngineResult r;
    fake_result(g, 1, NULL, &r);
    const TraceOptions opts = {NULL, 2, NULL};
    cJSON *root = write_and_parse_with(g, &r, &opts);
    assert_int_equal(count_events(root, "i", NULL, 0), 2);
    const cJSON *e;
    cJSON_ArrayForEach(e, events_of(root))
    {
        if (strcmp(str_field(e, "ph"), "i") != 0)
            continue;
        const double step = num_field(cJSON_GetObjectItemCaseSensitive(e, "args"), "step");
        assert_string_equal(str_field(e, "name"), step == 0 ? "step 0" : "step 1");
        assert_true(num_field(e, "ts") == (step == 0 ? 0.0 : 8000.0));
        assert_string_equal(str_field(e, "s"), "p");
    }
    check_op(root, 2, 0, STREAM_COMPUTE, "recompute", "recompute", "flops", 1e9);
    check_op(root, 3, 0, STREAM_COMPUTE, "bwd", "backward", "flops", 2e9);
    cJSON_Delete(root);
    fake_result_fini(&r);
    graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_write_traced_rank_only),
        cmocka_unit_test(test_trace_write_link_tracks),
        cmocka_unit_test(test_trace_write_steps_and_recompute),
        cmocka_unit_test(test_trace_write_all_ranks_one_node),
        cmocka_unit_test(test_trace_write_without_memory_samples),
        cmocka_unit_test(test_trace_write_alloc_with_duration),
        cmocka_unit_test(test_trace_write_rounds_to_nanoseconds),
        cmocka_unit_test(test_trace_write_cannot_open),
        cmocka_unit_test(test_trace_write_full_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
