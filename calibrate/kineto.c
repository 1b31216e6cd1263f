/*
 * kineto.c - PyTorch profiler (Kineto) trace JSON -> KinetoTrace (see kineto.h).
 *
 * One pass over traceEvents collects the GPU activities, the host runtime events (by
 * correlation id), the GEMM cpu_ops with shapes and the ProfilerStep spans; then each GPU
 * activity finds its runtime event by a binary search on the correlation id, and a kernel
 * launch finds the GEMM op around it (same process and thread, launch start inside the op) by
 * a binary search on the op starts. The file is read whole (zlib's gzread, which reads plain
 * files as they are) and parsed with cJSON: a trace of a few steps is tens of MB.
 *
 * This is the one file outside sim/inputs/ that walks cJSON nodes (STYLE.md keeps them in
 * inputs/): a profiler trace is an input of zerosim-calibrate only, and no node leaves this
 * file. It would move to sim/inputs/ if the simulator itself ever read traces.
 */
#include "kineto.h"

#include "common/xalloc.h"
#include "inputs/jsonfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

const char *const kineto_class_names[] = {"gemm",   "attention", "elementwise", "nccl",
                                          "memcpy", "memset",    NULL};

#define KINETO_MAX_FILE_BYTES (4ull << 30) /* a trace beyond this is not "a few steps" */

typedef struct Runtime {
    int64_t correlation;
    double ts_us, dur_us;
    int64_t pid, tid;
    bool is_kernel_launch;
} Runtime;

typedef struct GemmOp {
    int64_t pid, tid;
    double ts_us, end_us;
    double flops;
    int precision;
    char shape[KINETO_SHAPE_MAX];
    bool is_used;
} GemmOp;

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay != '\0'; hay++) {
        size_t i = 0;
        while (i < n && hay[i] != '\0' &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return false;
}

KinetoClass kineto_classify_kernel(const char *name)
{
    static const char *const attention[] = {"flash", "fmha", "sdpa", "attention", NULL};
    static const char *const gemm[] = {"gemm", "gemv", "cutlass", "cublas", "xmma", "nvjet", NULL};
    if (contains_nocase(name, "nccl"))
        return KINETO_NCCL;
    for (int i = 0; attention[i] != NULL; i++)
        if (contains_nocase(name, attention[i]))
            return KINETO_ATTENTION;
    for (int i = 0; gemm[i] != NULL; i++)
        if (contains_nocase(name, gemm[i]))
            return KINETO_GEMM;
    return KINETO_ELEMENTWISE;
}

int kineto_copy_route(const char *name)
{
    /* CUPTI's memcpy kinds as Kineto names them (libkineto/src/output_json.cpp). */
    static const struct {
        const char *text;
        int route;
    } routes[] = {{"HtoD (Pinned", CALIB_H2D_PINNED},
                  {"DtoH (Device -> Pinned", CALIB_D2H_PINNED},
                  {"HtoD (Pageable", CALIB_H2D_PAGEABLE},
                  {"DtoH (Device -> Pageable", CALIB_D2H_PAGEABLE},
                  {"DtoD (Device -> Device", CALIB_D2D}};
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strstr(name, routes[i].text) != NULL)
            return routes[i].route;
    return -1;
}

int kineto_collective(const char *name)
{
    /* PyTorch's record_param_comms names (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp). */
    char flat[64];
    size_t k = 0;
    for (const char *p = name; *p != '\0' && k + 1 < sizeof flat; p++)
        if (*p != '_')
            flat[k++] = (char)tolower((unsigned char)*p);
    flat[k] = '\0';
    if (strcmp(flat, "allreduce") == 0 || strcmp(flat, "allreducecoalesced") == 0)
        return CALIB_ALL_REDUCE;
    if (strcmp(flat, "allgather") == 0 || strcmp(flat, "allgatherbase") == 0 ||
        strcmp(flat, "allgatherintotensorcoalesced") == 0)
        return CALIB_ALL_GATHER;
    if (strcmp(flat, "reducescatter") == 0 || strcmp(flat, "reducescatterbase") == 0 ||
        strcmp(flat, "reducescattertensorcoalesced") == 0)
        return CALIB_REDUCE_SCATTER;
    if (strcmp(flat, "broadcast") == 0)
        return CALIB_BROADCAST;
    return -1;
}

double kineto_dtype_bytes(const char *dtype)
{
    static const struct {
        const char *name;
        double bytes;
    } table[] = {{"float", 4},         {"float32", 4},    {"half", 2},    {"float16", 2},
                 {"bfloat16", 2},      {"double", 8},     {"float64", 8}, {"int", 4},
                 {"int32", 4},         {"long", 8},       {"int64", 8},   {"byte", 1},
                 {"char", 1},          {"bool", 1},       {"uint8", 1},   {"int8", 1},
                 {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const char *a = dtype, *b = table[i].name;
        while (*a != '\0' && tolower((unsigned char)*a) == *b)
            a++, b++;
        if (*a == '\0' && *b == '\0')
            return table[i].bytes;
    }
    return 0;
}

/* An integer-valued field, or `fallback` when it does not fit (no undefined conversion). */
static int64_t to_i64(double v, int64_t fallback)
{
    return v >= -9.0e18 && v <= 9.0e18 ? (int64_t)v : fallback;
}

/* pid and tid are numbers in Kineto's output, but the format allows strings ("Spans"). */
static int64_t event_id(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return to_i64(v->valuedouble, 0);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = cJSON_IsString(v) && v->valuestring ? v->valuestring : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (int64_t)(h >> 1);
}

static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) && v->valuestring != NULL ? v->valuestring : NULL;
}

static bool num_of(const cJSON *obj, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return false;
    *out = v->valuedouble;
    return true;
}

static int need_num(const cJSON *ev, size_t index, const char *key, double min, const char *file,
                    double *out, Err *err)
{
    if (num_of(ev, key, out) && *out >= min)
        return 0;
    char found[64];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);
    return err_set(err, "%s: traceEvents[%zu].%s: expected a number >= %g, got %s", file, index,
                   key, min,
                   v ? jsonfile_describe(v, found, sizeof found) : "nothing (key missing)");
}

static int precision_of(const char *type)
{
    if (type == NULL)
        return -1;
    if (strcmp(type, "c10::BFloat16") == 0 || strcmp(type, "BFloat16") == 0)
        return CALIB_BF16;
    if (strcmp(type, "c10::Half") == 0 || strcmp(type, "Half") == 0)
        return CALIB_FP16;
    if (strcmp(type, "float") == 0 || strcmp(type, "Float") == 0)
        return CALIB_FP32;
    return -1;
}

/* dims[i] as up to 3 positive extents; returns the rank, 0 when not a matrix. */
static int extents(const cJSON *dims, int i, double e[3])
{
    const cJSON *d = cJSON_GetArrayItem(dims, i);
    int n = cJSON_IsArray(d) ? cJSON_GetArraySize(d) : 0;
    if (n < 2 || n > 3)
        return 0;
    for (int k = 0; k < n; k++) {
        const cJSON *x = cJSON_GetArrayItem(d, k);
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 1 && x->valuedouble <= 1e9))
            return 0; /* not a matrix a GPU holds: the op is counted without a shape */
        e[k] = x->valuedouble;
    }
    return n;
}

/* FLOPs, precision and shape of a GEMM cpu_op from its recorded shapes; false when the op is
 * not a GEMM or its shapes are missing or inconsistent. The operand positions are those of
 * the ATen signatures (aten/src/ATen/native/native_functions.yaml): mm(self, mat2),
 * addmm(self, mat1, mat2), bmm(self, mat2), baddbmm(self, batch1, batch2). */
static bool gemm_of(const char *name, const cJSON *args, GemmOp *g)
{
    static const struct {
        const char *name;
        int a, rank;
    } ops[] = {
        {"aten::mm", 0, 2}, {"aten::addmm", 1, 2}, {"aten::bmm", 0, 3}, {"aten::baddbmm", 1, 3}};
    int k = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(name, ops[i].name) == 0)
            k = i;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    if (k < 0 || !cJSON_IsArray(dims))
        return false;
    double a[3], b[3];
    int ra = extents(dims, ops[k].a, a), rb = extents(dims, ops[k].a + 1, b);
    if (ra != ops[k].rank || rb != ops[k].rank)
        return false;
    double batch = 1, m, kk, k2, n;
    if (ra == 3) {
        if (a[0] != b[0])
            return false;
        batch = a[0], m = a[1], kk = a[2], k2 = b[1], n = b[2];
    } else {
        m = a[0], kk = a[1], k2 = b[0], n = b[1];
    }
    if (kk != k2)
        return false;
    g->flops = 2.0 * batch * m * n * kk;
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *t = cJSON_IsArray(types) ? cJSON_GetArrayItem(types, ops[k].a) : NULL;
    g->precision = precision_of(cJSON_IsString(t) ? t->valuestring : NULL);
    if (ra == 3)
        snprintf(g->shape, sizeof g->shape, "%s %.0fx%.0fx%.0fx%.0f", name + 6, batch, m, n, kk);
    else
        snprintf(g->shape, sizeof g->shape, "%s %.0fx%.0fx%.0f", name + 6, m, n, kk);
    return true;
}

static int cmp_runtime(const void *a, const void *b)
{
    int64_t x = ((const Runtime *)a)->correlation, y = ((const Runtime *)b)->correlation;
    return (x > y) - (x < y);
}

static int cmp_gemm(const void *a, const void *b)
{
    const GemmOp *x = a, *y = b;
    if (x->pid != y->pid)
        return (x->pid > y->pid) - (x->pid < y->pid);
    if (x->tid != y->tid)
        return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->ts_us > y->ts_us) - (x->ts_us < y->ts_us);
}

static int cmp_step(const void *a, const void *b)
{
    double x = ((const KinetoStep *)a)->ts_s, y = ((const KinetoStep *)b)->ts_s;
    return (x > y) - (x < y);
}

static const Runtime *find_runtime(const Runtime *rt, size_t n, int64_t correlation)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rt[mid].correlation < correlation)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && rt[lo].correlation == correlation ? &rt[lo] : NULL;
}

/* The innermost GEMM op on (pid, tid) whose span holds ts_us, or -1. */
static int64_t find_gemm(const GemmOp *g, size_t n, int64_t pid, int64_t tid, double ts_us)
{
    GemmOp key = {.pid = pid, .tid = tid, .ts_us = ts_us};
    size_t lo = 0, hi = n; /* first op after key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_gemm(&g[mid], &key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && lo - i <= 8;) { /* nested ops: a few back at most */
        if (g[i].pid != pid || g[i].tid != tid)
            break;
        if (g[i].ts_us <= ts_us && ts_us <= g[i].end_us)
            return (int64_t)i;
    }
    return -1;
}

typedef struct Collected {
    Runtime *rt;
    size_t n_rt, cap_rt;
    GemmOp *gemm;
    size_t n_gemm, cap_gemm;
    double *op_ts_us; /* raw GPU starts, kept in us until t0 is known */
    size_t cap_ops;
} Collected;

static void collected_fini(Collected *c)
{
    free(c->rt);
    free(c->gemm);
    free(c->op_ts_us);
}

static int read_gpu_event(KinetoTrace *t, Collected *c, const cJSON *ev, size_t index,
                          const char *cat, const char *name, const char *file, Err *err)
{
    double ts, dur, corr = -1;
    if (need_num(ev, index, "ts", 0, file, &ts, err) ||
        need_num(ev, index, "dur", 0, file, &dur, err))
        return -1;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    if (t->n_ops == c->cap_ops) {
        c->cap_ops = c->cap_ops ? 2 * c->cap_ops : 1024;
        t->ops = xrealloc(t->ops, c->cap_ops * sizeof *t->ops);
        c->op_ts_us = xrealloc(c->op_ts_us, c->cap_ops * sizeof *c->op_ts_us);
    }
    KinetoOp *op = &t->ops[t->n_ops];
    memset(op, 0, sizeof *op);
    c->op_ts_us[t->n_ops] = ts;
    t->n_ops++;
    op->dur_s = dur * 1e-6;
    op->gemm_op = -1;
    op->precision = -1;
    op->copy_route = -1;
    op->collective = -1;
    op->correlation = num_of(args, "correlation", &corr) ? to_i64(corr, -1) : -1;
    double v;
    op->device = num_of(args, "device", &v) && v >= 0 && v < 1e6 ? (int)v : 0;
    op->stream =
        num_of(args, "stream", &v) ? to_i64(v, 0) : event_id(cJSON_GetObjectItem(ev, "tid"));
    if (strcmp(cat, "gpu_memcpy") == 0) {
        op->cls = KINETO_MEMCPY;
        op->copy_route = kineto_copy_route(name);
        op->bytes = num_of(args, "bytes", &v) && v > 0 && v <= 1e15 ? v : 0;
    } else if (strcmp(cat, "gpu_memset") == 0) {
        op->cls = KINETO_MEMSET;
        op->bytes = num_of(args, "bytes", &v) && v > 0 && v <= 1e15 ? v : 0;
    } else {
        op->cls = kineto_classify_kernel(name);
    }
    if (op->cls == KINETO_NCCL) {
        const char *coll = str_of(args, "Collective name");
        const char *dtype = str_of(args, "dtype");
        double in = 0, out = 0, group = 0;
        op->collective = coll ? kineto_collective(coll) : -1;
        if (coll && dtype && num_of(args, "In msg nelems", &in) &&
            num_of(args, "Out msg nelems", &out) && num_of(args, "Group size", &group) &&
            group >= 1 && group <= 1e6 && in >= 0 && out >= 0 && in <= 1e15 && out <= 1e15) {
            /* nccl-tests' sizes (doc/PERFORMANCE.md): all-reduce and broadcast count the
             * buffer, all-gather the gathered output, reduce-scatter the scattered input. */
            double elems = op->collective == CALIB_ALL_GATHER ? out : in;
            op->bytes = elems * kineto_dtype_bytes(dtype);
            op->n_gpus = (uint64_t)group;
        }
    }
    return 0;
}

static int collect(KinetoTrace *t, Collected *c, const cJSON *events, const char *file, Err *err)
{
    size_t index = 0;
    size_t cap_steps = 0;
    double t0 = INFINITY;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        size_t i = index++;
        if (!cJSON_IsObject(ev))
            continue;
        const char *ph = str_of(ev, "ph"), *cat = str_of(ev, "cat"), *name = str_of(ev, "name");
        double ts;
        if (ph == NULL || strcmp(ph, "X") != 0 || cat == NULL || name == NULL)
            continue;
        if (num_of(ev, "ts", &ts) && ts < t0) /* metadata events may carry ts 0 */
            t0 = ts;
        if (strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 ||
            strcmp(cat, "gpu_memset") == 0) {
            if (read_gpu_event(t, c, ev, i, cat, name, file, err))
                return -1;
            continue;
        }
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
        if (strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "cuda_driver") == 0) {
            double corr, dur;
            if (!num_of(args, "correlation", &corr))
                continue;
            if (need_num(ev, i, "ts", 0, file, &ts, err) ||
                need_num(ev, i, "dur", 0, file, &dur, err))
                return -1;
            if (c->n_rt == c->cap_rt) {
                c->cap_rt = c->cap_rt ? 2 * c->cap_rt : 1024;
                c->rt = xrealloc(c->rt, c->cap_rt * sizeof *c->rt);
            }
            Runtime *r = &c->rt[c->n_rt++];
            r->correlation = to_i64(corr, -1);
            r->ts_us = ts;
            r->dur_us = dur;
            r->pid = event_id(cJSON_GetObjectItem(ev, "pid"));
            r->tid = event_id(cJSON_GetObjectItem(ev, "tid"));
            /* cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel(Ex), cudaLaunchCooperative...
             */
            r->is_kernel_launch = strstr(name, "LaunchKernel") != NULL ||
                                  strstr(name, "LaunchCooperativeKernel") != NULL;
            t->n_kernel_launches += r->is_kernel_launch;
            continue;
        }
        if (strcmp(cat, "cpu_op") == 0) {
            GemmOp g = {0};
            double dur;
            if (!gemm_of(name, args, &g))
                continue;
            if (need_num(ev, i, "ts", 0, file, &ts, err) ||
                need_num(ev, i, "dur", 0, file, &dur, err))
                return -1;
            if (c->n_gemm == c->cap_gemm) {
                c->cap_gemm = c->cap_gemm ? 2 * c->cap_gemm : 256;
                c->gemm = xrealloc(c->gemm, c->cap_gemm * sizeof *c->gemm);
            }
            g.pid = event_id(cJSON_GetObjectItem(ev, "pid"));
            g.tid = event_id(cJSON_GetObjectItem(ev, "tid"));
            g.ts_us = ts;
            g.end_us = ts + dur;
            c->gemm[c->n_gemm++] = g;
            continue;
        }
        if (strncmp(name, "ProfilerStep#", 13) == 0 && strcmp(cat, "user_annotation") == 0) {
            double dur;
            if (need_num(ev, i, "ts", 0, file, &ts, err) ||
                need_num(ev, i, "dur", 0, file, &dur, err))
                return -1;
            if (t->n_steps == cap_steps) {
                cap_steps = cap_steps ? 2 * cap_steps : 16;
                t->steps = xrealloc(t->steps, cap_steps * sizeof *t->steps);
            }
            KinetoStep *s = &t->steps[t->n_steps++];
            snprintf(s->name, sizeof s->name, "%.31s", name);
            s->ts_s = ts; /* us until t0 is known */
            s->dur_s = dur * 1e-6;
        }
    }
    t->t0_us = isfinite(t0) ? t0 : 0;
    return 0;
}

static void link_ops(KinetoTrace *t, Collected *c)
{
    if (c->n_rt > 0) /* qsort's array must not be NULL, even when empty */
        qsort(c->rt, c->n_rt, sizeof *c->rt, cmp_runtime);
    if (c->n_gemm > 0)
        qsort(c->gemm, c->n_gemm, sizeof *c->gemm, cmp_gemm);
    for (size_t i = 0; i < t->n_ops; i++) {
        KinetoOp *op = &t->ops[i];
        op->ts_s = (c->op_ts_us[i] - t->t0_us) * 1e-6;
        const Runtime *r =
            op->correlation >= 0 ? find_runtime(c->rt, c->n_rt, op->correlation) : NULL;
        if (r == NULL)
            continue;
        op->has_launch = true;
        op->is_kernel_launch = r->is_kernel_launch;
        op->launch_ts_s = (r->ts_us - t->t0_us) * 1e-6;
        op->launch_dur_s = r->dur_us * 1e-6;
        if (!r->is_kernel_launch || op->cls == KINETO_NCCL || op->cls == KINETO_ATTENTION)
            continue;
        int64_t g = find_gemm(c->gemm, c->n_gemm, r->pid, r->tid, r->ts_us);
        if (g < 0)
            continue;
        /* Every kernel an mm launches (split-K reductions, epilogues) is that GEMM's work. */
        GemmOp *gop = &c->gemm[g];
        op->cls = KINETO_GEMM;
        op->gemm_op = g;
        op->flops = gop->flops;
        op->precision = gop->precision;
        memcpy(op->shape, gop->shape, sizeof op->shape);
        t->n_gemm_ops += !gop->is_used;
        gop->is_used = true;
    }
    for (size_t i = 0; i < t->n_steps; i++)
        t->steps[i].ts_s = (t->steps[i].ts_s - t->t0_us) * 1e-6;
    if (t->n_steps > 0)
        qsort(t->steps, t->n_steps, sizeof *t->steps, cmp_step);
}

int kineto_parse(KinetoTrace *t, const char *file, const char *text, size_t n_bytes, Err *err)
{
    memset(t, 0, sizeof *t);
    cJSON *root = jsonfile_parse(file, text, n_bytes, err);
    if (root == NULL)
        return -1;
    const cJSON *events =
        cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    if (!cJSON_IsArray(events)) {
        char found[64];
        err_set(err,
                "%s: traceEvents: expected an array of trace events (a PyTorch profiler "
                "trace), got %s",
                file,
                events ? jsonfile_describe(events, found, sizeof found) : "nothing (key missing)");
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(root, "deviceProperties");
    const char *dev = cJSON_IsArray(props) ? str_of(cJSON_GetArrayItem(props, 0), "name") : NULL;
    if (dev != NULL)
        snprintf(t->device_name, sizeof t->device_name, "%.95s", dev);
    Collected c = {0};
    int rc = collect(t, &c, events, file, err);
    if (rc == 0 && t->n_ops == 0)
        rc = err_set(err,
                     "%s: traceEvents: expected GPU activity (\"cat\": \"kernel\", "
                     "\"gpu_memcpy\" or \"gpu_memset\"), got none: was the profiler run "
                     "with ProfilerActivity.CUDA?",
                     file);
    if (rc == 0)
        link_ops(t, &c);
    collected_fini(&c);
    cJSON_Delete(root);
    return rc;
}

int kineto_load(KinetoTrace *t, const char *path, Err *err)
{
    memset(t, 0, sizeof *t);
    gzFile f = gzopen(path, "rb");
    if (f == NULL)
        return err_set(err, "%s: cannot open: %s", path, strerror(errno ? errno : ENOMEM));
    size_t cap = 1 << 20, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n + (1 << 20) > cap) {
            if (cap >= KINETO_MAX_FILE_BYTES) {
                gzclose(f);
                free(buf);
                return err_set(err,
                               "%s: expected a trace of at most %llu bytes (a few steps), "
                               "got more",
                               path, (unsigned long long)KINETO_MAX_FILE_BYTES);
            }
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        int got = gzread(f, buf + n, 1u << 20);
        if (got < 0) {
            int code = 0;
            const char *why = gzerror(f, &code);
            if (code == Z_BUF_ERROR)
                err_set(err, "%s: expected a complete gzip file, got a truncated one", path);
            else
                err_set(err, "%s: cannot read: %s", path, code == Z_ERRNO ? strerror(errno) : why);
            gzclose(f);
            free(buf);
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (gzclose(f) == Z_BUF_ERROR) { /* the gzip stream stopped short */
        free(buf);
        return err_set(err, "%s: expected a complete gzip file, got a truncated one", path);
    }
    int rc = kineto_parse(t, path, buf, n, err);
    free(buf);
    return rc;
}

void kineto_fini(KinetoTrace *t)
{
    free(t->ops);
    free(t->steps);
    memset(t, 0, sizeof *t);
}
