/*
 * test_graph.c - building, finalising and validating event graphs (schedule/graph.c).
 *
 * Graphs are built by hand, a few ops on two ranks, so every stream index, successor list and
 * error message can be written down in advance. No SimGrid: the graph is plain data until the
 * engine runs it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "schedule/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void finalize_ok(Graph *g)
{
    Err err = {0};
    int rc = graph_finalize(g, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

/* Finalises g, expecting failure with exactly `expected`. */
static void finalize_fails(Graph *g, const char *expected)
{
    Err err = {0};
    assert_int_equal(graph_finalize(g, &err), -1);
    assert_true(err.is_set);
    assert_string_equal(err.msg, expected);
}

static void test_graph_streams_created_per_rank_and_kind_in_insertion_order(void **state)
{
    (void)state;
    Graph *g = graph_create(2);
    OpId a = graph_compute(g, 1, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1e9, 0);
    OpId b = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 2e9, 0);
    OpId c = graph_copy(g, 0, STREAM_H2D, COPY_H2D, 64, 0);
    OpId d = graph_compute(g, 1, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 3e9, 0); /* existing stream */
    OpId e = graph_disk(g, 1, DISK_WRITE, 4096, 0);                   /* always on NVME */
    OpId f = graph_compute(g, 0, STREAM_CPU, DEVICE_CPU, PURPOSE_OPTIMIZER, 1000, 0);
    finalize_ok(g);

    assert_int_equal(graph_n_ranks(g), 2);
    assert_int_equal(graph_n_ops(g), 6);
    assert_int_equal(graph_n_streams(g), 5);
    const Stream *s = graph_streams(g);
    const struct {
        uint32_t rank;
        StreamKind kind;
    } expected[] = {
        {1, STREAM_COMPUTE}, {0, STREAM_COMPUTE}, {0, STREAM_H2D},
        {1, STREAM_NVME},    {0, STREAM_CPU},
    };
    for (uint32_t i = 0; i < 5; i++) {
        assert_int_equal(s[i].rank, expected[i].rank);
        assert_int_equal(s[i].kind, expected[i].kind);
    }

    const Op *ops = graph_ops(g);
    assert_int_equal(ops[a].stream, 0);
    assert_int_equal(ops[b].stream, 1);
    assert_int_equal(ops[c].stream, 2);
    assert_int_equal(ops[d].stream, 0);
    assert_int_equal(ops[e].stream, 3);
    assert_int_equal(ops[e].stream_kind, STREAM_NVME);
    assert_int_equal(ops[e].kind, OP_DISK);
    assert_int_equal(ops[e].sub, DISK_WRITE);
    assert_int_equal(ops[f].stream, 4);
    assert_int_equal(ops[f].sub, DEVICE_CPU);

    /* Ops grouped by stream, each stream in insertion order. */
    const OpId *so = graph_stream_ops(g);
    assert_int_equal(s[0].op_end - s[0].op_begin, 2);
    assert_int_equal(so[s[0].op_begin], a);
    assert_int_equal(so[s[0].op_begin + 1], d);
    assert_int_equal(s[1].op_end - s[1].op_begin, 1);
    assert_int_equal(so[s[1].op_begin], b);
    assert_int_equal(so[s[2].op_begin], c);
    assert_int_equal(so[s[3].op_begin], e);
    assert_int_equal(so[s[4].op_begin], f);
    for (uint32_t i = 0; i + 1 < 5; i++)
        assert_int_equal(s[i].op_end, s[i + 1].op_begin);
    graph_destroy(g);
}

static void test_graph_collective_creates_one_op_per_member(void **state)
{
    (void)state;
    Graph *g = graph_create(3);
    OpId first = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, 0);
    const uint32_t members[] = {2, 0, 1}; /* ring order as given */
    uint32_t group = graph_add_group(g, members, 3);
    assert_int_equal(group, 0);
    uint32_t label = graph_label(g, "ag L0");
    OpId out[3];
    uint32_t inst = graph_collective(g, COLL_ALL_GATHER, group, STREAM_GATHER, 4096, 2, label, out);
    assert_int_equal(inst, 0);
    const uint32_t pair[] = {0, 1};
    uint32_t group2 = graph_add_group(g, pair, 2);
    assert_int_equal(group2, 1);
    uint32_t inst2 =
        graph_collective(g, COLL_REDUCE_SCATTER, group2, STREAM_REDUCE, 512, 0, 0, NULL);
    assert_int_equal(inst2, 1);
    finalize_ok(g);

    assert_int_equal(graph_n_ops(g), 1 + 3 + 2);
    assert_int_equal(graph_n_collectives(g), 2);
    const Collective *c = graph_collectives(g);
    assert_int_equal(c[0].kind, COLL_ALL_GATHER);
    assert_int_equal(c[0].group, group);
    assert_int_equal(c[0].root, 2);
    assert_true(c[0].bytes == 4096);
    assert_int_equal(c[0].first_op, first + 1);
    assert_int_equal(c[1].first_op, first + 4);

    const Op *ops = graph_ops(g);
    const Stream *s = graph_streams(g);
    for (uint32_t i = 0; i < 3; i++) {
        OpId id = c[0].first_op + i;
        assert_int_equal(out[i], id);
        assert_int_equal(ops[id].kind, OP_COLLECTIVE);
        assert_int_equal(ops[id].sub, COLL_ALL_GATHER);
        assert_int_equal(ops[id].rank, members[i]);
        assert_int_equal(ops[id].ref, 0);
        assert_int_equal(ops[id].label, label);
        assert_int_equal(ops[id].stream_kind, STREAM_GATHER);
        assert_int_equal(s[ops[id].stream].rank, members[i]);
        assert_int_equal(s[ops[id].stream].kind, STREAM_GATHER);
        assert_true(ops[id].amount == 4096);
    }
    for (uint32_t i = 0; i < 2; i++) {
        const Op *op = &ops[c[1].first_op + i];
        assert_int_equal(op->rank, pair[i]);
        assert_int_equal(op->ref, 1);
        assert_int_equal(op->stream_kind, STREAM_REDUCE);
    }

    uint32_t n;
    const uint32_t *m = graph_group(g, group, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(m, members, sizeof members);
    m = graph_group(g, group2, &n);
    assert_int_equal(n, 2);
    assert_memory_equal(m, pair, sizeof pair);
    graph_destroy(g);
}

static void test_graph_depend_builds_successors_and_n_deps(void **state)
{
    (void)state;
    Graph *g = graph_create(2);
    OpId a = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, 0);
    OpId b = graph_copy(g, 0, STREAM_H2D, COPY_H2D, 8, 0);
    OpId c = graph_compute(g, 1, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, 0);
    OpId d = graph_copy(g, 1, STREAM_D2H, COPY_D2H, 8, 0);
    graph_depend(g, a, d);
    graph_depend(g, b, d);
    graph_depend(g, a, c);
    finalize_ok(g);

    const Op *ops = graph_ops(g);
    const OpId *succ = graph_successors(g);
    assert_int_equal(ops[a].succ_end - ops[a].succ_begin, 2);
    assert_int_equal(succ[ops[a].succ_begin], d); /* in the order the edges were added */
    assert_int_equal(succ[ops[a].succ_begin + 1], c);
    assert_int_equal(ops[b].succ_end - ops[b].succ_begin, 1);
    assert_int_equal(succ[ops[b].succ_begin], d);
    assert_int_equal(ops[c].succ_end, ops[c].succ_begin);
    assert_int_equal(ops[d].succ_end, ops[d].succ_begin);
    /* Rows are contiguous, in op order. */
    assert_int_equal(ops[a].succ_begin, 0);
    assert_int_equal(ops[b].succ_begin, ops[a].succ_end);
    assert_int_equal(ops[c].succ_begin, ops[b].succ_end);

    assert_int_equal(ops[a].n_deps, 0);
    assert_int_equal(ops[b].n_deps, 0);
    assert_int_equal(ops[c].n_deps, 1);
    assert_int_equal(ops[d].n_deps, 2);
    graph_destroy(g);
}

static void test_graph_finalize_accepts_empty_graph(void **state)
{
    (void)state;
    Graph *g = graph_create(1);
    finalize_ok(g);
    assert_int_equal(graph_n_ops(g), 0);
    assert_int_equal(graph_n_streams(g), 0);
    graph_destroy(g);
    graph_destroy(NULL);
}

static void test_graph_finalize_rejects_cycle_across_streams(void **state)
{
    (void)state;
    Graph *g = graph_create(2);
    OpId a = graph_compute(g, 1, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, graph_label(g, "fwd L0"));
    OpId b = graph_copy(g, 1, STREAM_H2D, COPY_H2D, 8, graph_label(g, "prefetch L1"));
    graph_depend(g, a, b);
    graph_depend(g, b, a);
    finalize_fails(g, "event graph: expected no dependency cycle, got one through op 0 "
                      "(rank 1, stream compute, \"fwd L0\")");
    graph_destroy(g);
}

/* A before B on one stream, and B's successor is A: a cycle with a single explicit edge. */
static void test_graph_finalize_rejects_cycle_through_stream_order(void **state)
{
    (void)state;
    Graph *g = graph_create(1);
    OpId a = graph_compute(g, 0, STREAM_GATHER, DEVICE_GPU, PURPOSE_FORWARD, 1, graph_label(g, "A"));
    OpId b = graph_compute(g, 0, STREAM_GATHER, DEVICE_GPU, PURPOSE_FORWARD, 1, graph_label(g, "B"));
    graph_depend(g, b, a);
    finalize_fails(g, "event graph: expected no dependency cycle, got one through op 0 "
                      "(rank 0, stream gather, \"A\")");
    graph_destroy(g);
}

/* An op downstream of a cycle is stuck too, but the message names an op on the cycle. */
static void test_graph_cycle_message_names_an_op_on_the_cycle(void **state)
{
    (void)state;
    Graph *g = graph_create(1);
    OpId d = graph_compute(g, 0, STREAM_REDUCE, DEVICE_GPU, PURPOSE_FORWARD, 1, graph_label(g, "downstream"));
    OpId a = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, graph_label(g, "A"));
    OpId b = graph_copy(g, 0, STREAM_H2D, COPY_H2D, 8, graph_label(g, "B"));
    graph_depend(g, a, b);
    graph_depend(g, b, a);
    graph_depend(g, a, d);
    finalize_fails(g, "event graph: expected no dependency cycle, got one through op 1 "
                      "(rank 0, stream compute, \"A\")");
    graph_destroy(g);
}

/* The same two-op pattern across streams and ranks, but acyclic, is accepted. */
static void test_graph_finalize_accepts_cross_rank_chain(void **state)
{
    (void)state;
    Graph *g = graph_create(2);
    OpId a = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, 0);
    OpId b = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, 0);
    OpId c = graph_compute(g, 1, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 1, 0);
    graph_depend(g, a, c);
    graph_depend(g, c, b);
    finalize_ok(g);
    graph_destroy(g);
}

static void test_graph_finalize_rejects_buffer_never_freed(void **state)
{
    (void)state;
    Graph *g = graph_create(2);
    uint32_t kept, lost;
    graph_alloc(g, 0, STREAM_COMPUTE, MEM_GPU, MEM_PARAMS, 1024, &kept);
    graph_alloc(g, 1, STREAM_CPU, MEM_CPU, MEM_OPTIMIZER, 3e9, &lost);
    assert_int_equal(kept, 0);
    assert_int_equal(lost, 1);
    graph_free(g, 0, STREAM_COMPUTE, kept);
    finalize_fails(g, "event graph: expected buffer 1 (rank 1, cpu optimizer, 3000000000 bytes) "
                      "to be freed once, got 0 frees");
    graph_destroy(g);
}

static void test_graph_finalize_rejects_buffer_freed_twice(void **state)
{
    (void)state;
    Graph *g = graph_create(1);
    uint32_t buf;
    graph_alloc(g, 0, STREAM_COMPUTE, MEM_GPU, MEM_ACTIVATIONS, 2048, &buf);
    graph_free(g, 0, STREAM_COMPUTE, buf);
    graph_free(g, 0, STREAM_COMPUTE, buf);
    finalize_fails(g, "event graph: expected buffer 0 (rank 0, gpu activations, 2048 bytes) "
                      "to be freed once, got 2 frees");
    graph_destroy(g);
}

static void test_graph_finalize_rejects_buffer_freed_on_another_rank(void **state)
{
    (void)state;
    Graph *g = graph_create(2);
    uint32_t buf;
    graph_alloc(g, 0, STREAM_COMPUTE, MEM_GPU, MEM_GRADS, 512, &buf);
    graph_free(g, 1, STREAM_COMPUTE, buf);
    finalize_fails(g, "event graph: expected buffer 0 to be freed on rank 0, got a free on rank 1");
    graph_destroy(g);
}

static void test_graph_alloc_and_free_record_the_buffer(void **state)
{
    (void)state;
    Graph *g = graph_create(1);
    uint32_t buf;
    OpId a = graph_alloc(g, 0, STREAM_NVME, MEM_NVME, MEM_OPTIMIZER, 1e6, &buf);
    OpId f = graph_free(g, 0, STREAM_NVME, buf);
    finalize_ok(g);
    const Op *ops = graph_ops(g);
    assert_int_equal(ops[a].kind, OP_ALLOC);
    assert_int_equal(ops[f].kind, OP_FREE);
    for (OpId id = a; id <= f; id++) {
        assert_int_equal(ops[id].sub, MEM_NVME);
        assert_int_equal(ops[id].category, MEM_OPTIMIZER);
        assert_int_equal(ops[id].ref, buf);
        assert_true(ops[id].amount == 1e6);
    }
    MemSpace space;
    MemCategory category;
    assert_true(graph_buffer_bytes(g, buf, &space, &category) == 1e6);
    assert_int_equal(space, MEM_NVME);
    assert_int_equal(category, MEM_OPTIMIZER);
    graph_destroy(g);
}

static void test_graph_label_interns_strings(void **state)
{
    (void)state;
    Graph *g = graph_create(1);
    assert_int_equal(graph_label(g, ""), 0); /* the empty label is index 0 */
    uint32_t fwd = graph_label(g, "fwd L3");
    uint32_t ag = graph_label(g, "ag L3");
    assert_int_not_equal(fwd, ag);
    assert_int_equal(graph_label(g, "fwd L3"), fwd);
    assert_int_equal(graph_label(g, "ag L3"), ag);
    assert_string_equal(graph_label_text(g, fwd), "fwd L3");

    /* Far past the first table size (256 slots, grown at half full): every label keeps its
     * index and text across the rehashes. */
    enum { N = 5000 };
    uint32_t *ids = malloc(N * sizeof *ids);
    assert_non_null(ids);
    char text[32];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(text, sizeof text, "layer %u", i);
        ids[i] = graph_label(g, text);
        assert_int_equal(ids[i], 3 + i); /* "", "fwd L3", "ag L3", then these */
    }
    for (uint32_t i = 0; i < N; i++) {
        snprintf(text, sizeof text, "layer %u", i);
        assert_int_equal(graph_label(g, text), ids[i]);
        assert_string_equal(graph_label_text(g, ids[i]), text);
    }
    assert_int_equal(graph_label(g, "fwd L3"), fwd);
    assert_int_equal(graph_label(g, ""), 0);
    free(ids);
    graph_destroy(g);
}

/* Reads a whole stream into a NUL-terminated string (caller frees). */
static char *slurp(FILE *f)
{
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    return s;
}

static void test_graph_dump_two_ranks(void **state)
{
    (void)state;
    Graph *g = graph_create(2);
    const uint32_t both[] = {0, 1};
    uint32_t group = graph_add_group(g, both, 2);
    uint32_t fwd = graph_label(g, "fwd L0");
    uint32_t buf;
    graph_alloc(g, 0, STREAM_COMPUTE, MEM_GPU, MEM_PARAMS, 1024, &buf);  /* 0 */
    OpId c0 = graph_compute(g, 0, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 2e9, fwd); /* 1 */
    OpId ag[2];
    graph_collective(g, COLL_ALL_GATHER, group, STREAM_GATHER, 4096, 0, graph_label(g, "ag L0"),
                     ag);                                                /* 2, 3 */
    OpId c1 = graph_compute(g, 1, STREAM_COMPUTE, DEVICE_GPU, PURPOSE_FORWARD, 2e9, fwd); /* 4 */
    graph_free(g, 0, STREAM_COMPUTE, buf);                               /* 5 */
    OpId d2h = graph_copy(g, 0, STREAM_D2H, COPY_D2H, 512, 0);           /* 6 */
    graph_disk(g, 1, DISK_WRITE, 8192, graph_label(g, "swap"));          /* 7 */
    OpId adam = graph_compute(g, 0, STREAM_CPU, DEVICE_CPU, PURPOSE_OPTIMIZER, 1000, graph_label(g, "adam")); /* 8 */
    graph_depend(g, ag[0], c0);
    graph_depend(g, ag[1], c1);
    graph_depend(g, c0, d2h);
    graph_depend(g, d2h, adam);
    finalize_ok(g);

    FILE *f = tmpfile();
    assert_non_null(f);
    graph_dump(g, f);
    char *text = slurp(f);
    fclose(f);
    assert_string_equal(text, "graph: 2 ranks, 7 streams, 9 ops, 1 collectives\n"
                              "rank 0 compute:\n"
                              "  0 alloc gpu params #0 1024 B\n"
                              "  1 compute gpu 2e+09 \"fwd L0\" -> 6\n"
                              "  5 free gpu params #0 1024 B\n"
                              "rank 0 gather:\n"
                              "  2 all_gather #0 over 2 ranks 4096 B \"ag L0\" -> 1\n"
                              "rank 1 gather:\n"
                              "  3 all_gather #0 over 2 ranks 4096 B \"ag L0\" -> 4\n"
                              "rank 1 compute:\n"
                              "  4 compute gpu 2e+09 \"fwd L0\"\n"
                              "rank 0 d2h:\n"
                              "  6 copy d2h 512 B -> 8\n"
                              "rank 1 nvme:\n"
                              "  7 disk write 8192 B \"swap\"\n"
                              "rank 0 cpu:\n"
                              "  8 compute cpu 1000 \"adam\"\n");
    free(text);
    graph_destroy(g);
}

static void test_graph_names(void **state)
{
    (void)state;
    assert_string_equal(graph_collective_name(COLL_ALL_REDUCE), "all_reduce");
    assert_string_equal(graph_collective_name(COLL_REDUCE_SCATTER), "reduce_scatter");
    assert_string_equal(graph_collective_name(COLL_BROADCAST), "broadcast");
    assert_string_equal(graph_stream_name(STREAM_COMPUTE), "compute");
    assert_string_equal(graph_stream_name(STREAM_CPU), "cpu");
    assert_string_equal(graph_category_name(MEM_BUFFERS), "buffers");
    assert_string_equal(graph_space_name(MEM_NVME), "nvme");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_streams_created_per_rank_and_kind_in_insertion_order),
        cmocka_unit_test(test_graph_collective_creates_one_op_per_member),
        cmocka_unit_test(test_graph_depend_builds_successors_and_n_deps),
        cmocka_unit_test(test_graph_finalize_accepts_empty_graph),
        cmocka_unit_test(test_graph_finalize_rejects_cycle_across_streams),
        cmocka_unit_test(test_graph_finalize_rejects_cycle_through_stream_order),
        cmocka_unit_test(test_graph_cycle_message_names_an_op_on_the_cycle),
        cmocka_unit_test(test_graph_finalize_accepts_cross_rank_chain),
        cmocka_unit_test(test_graph_finalize_rejects_buffer_never_freed),
        cmocka_unit_test(test_graph_finalize_rejects_buffer_freed_twice),
        cmocka_unit_test(test_graph_finalize_rejects_buffer_freed_on_another_rank),
        cmocka_unit_test(test_graph_alloc_and_free_record_the_buffer),
        cmocka_unit_test(test_graph_label_interns_strings),
        cmocka_unit_test(test_graph_dump_two_ranks),
        cmocka_unit_test(test_graph_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
