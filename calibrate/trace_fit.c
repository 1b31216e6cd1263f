/*
 * trace_fit.c - profiler trace -> samples, per-group fits, launch and step summary (see
 * trace_fit.h).
 *
 * Every fittable occurrence becomes a Point (kind, name, n, size, label, time); the points are
 * sorted so that equal operations are adjacent, and each run of equal ones becomes one Sample
 * whose repetitions are the occurrences. The fits are derive.c's, run once per group.
 */
#include "trace_fit.h"

#include "common/xalloc.h"
#include "derive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Point {
    SampleKind kind;
    int name;
    uint64_t n;
    double size;
    char label[KINETO_SHAPE_MAX];
    double time_s;
} Point;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double trace_fit_quantile(double *x, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort(x, n, sizeof *x, cmp_double);
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n)
        return x[n - 1];
    return x[lo] + (pos - (double)lo) * (x[lo + 1] - x[lo]);
}

static int cmp_point(const void *a, const void *b)
{
    const Point *x = a, *y = b;
    if (x->kind != y->kind)
        return (x->kind > y->kind) - (x->kind < y->kind);
    if (x->name != y->name)
        return (x->name > y->name) - (x->name < y->name);
    if (x->n != y->n)
        return (x->n > y->n) - (x->n < y->n);
    if (x->size != y->size)
        return (x->size > y->size) - (x->size < y->size);
    return strcmp(x->label, y->label);
}

static bool same_op(const Point *x, const Point *y)
{
    return x->kind == y->kind && x->name == y->name && x->n == y->n && x->size == y->size &&
           strcmp(x->label, y->label) == 0;
}

/* GEMM occurrences: the kernels of one op instance summed. */
static size_t gemm_points(const KinetoTrace *t, Point *pts, size_t k, TraceSummary *sum)
{
    int64_t n_inst = -1;
    for (size_t i = 0; i < t->n_ops; i++)
        if (t->ops[i].gemm_op > n_inst)
            n_inst = t->ops[i].gemm_op;
    n_inst++;
    if (n_inst == 0)
        return k;
    int64_t *slot = xmalloc((size_t)n_inst * sizeof *slot);
    for (int64_t g = 0; g < n_inst; g++)
        slot[g] = -1;
    for (size_t i = 0; i < t->n_ops; i++) {
        const KinetoOp *op = &t->ops[i];
        if (op->gemm_op < 0 || op->precision < 0)
            continue;
        sum->n_gemm_shaped++;
        if (slot[op->gemm_op] < 0) {
            slot[op->gemm_op] = (int64_t)k;
            Point *p = &pts[k++];
            memset(p, 0, sizeof *p);
            p->kind = SAMPLE_GEMM;
            p->name = op->precision;
            p->size = op->flops;
            memcpy(p->label, op->shape, sizeof p->label);
        }
        pts[slot[op->gemm_op]].time_s += op->dur_s;
    }
    free(slot);
    return k;
}

static size_t other_points(const KinetoTrace *t, Point *pts, size_t k, TraceSummary *sum)
{
    for (size_t i = 0; i < t->n_ops; i++) {
        const KinetoOp *op = &t->ops[i];
        Point p = {0};
        p.time_s = op->dur_s;
        p.size = op->bytes;
        if (op->cls == KINETO_MEMCPY && op->copy_route >= 0 && op->bytes > 0 && op->dur_s > 0) {
            p.kind = SAMPLE_COPY;
            p.name = op->copy_route;
            snprintf(p.label, sizeof p.label, "trace %s", calibration_copy_names[op->copy_route]);
        } else if (op->cls == KINETO_NCCL && op->collective >= 0 && op->bytes > 0 &&
                   op->n_gpus >= 1 && op->dur_s > 0) {
            sum->n_nccl_sized++;
            if (op->n_gpus > CALIBRATION_MAX_GPUS) {
                sum->n_nccl_too_big++;
                continue;
            }
            p.kind = SAMPLE_COLLECTIVE;
            p.name = op->collective;
            p.n = op->n_gpus;
            snprintf(p.label, sizeof p.label, "trace %s",
                     calibration_collective_names[op->collective]);
        } else {
            continue;
        }
        pts[k++] = p;
    }
    return k;
}

/* Host launch cost, and launch latency onto an idle GPU. */
static void launch_stats(const KinetoTrace *t, TraceSummary *sum)
{
    size_t n = t->n_ops;
    double *api = xmalloc((n ? n : 1) * sizeof *api);
    double *lat = xmalloc((n ? n : 1) * sizeof *lat);
    size_t *order = xmalloc((n ? n : 1) * sizeof *order);
    size_t n_api = 0, n_lat = 0;
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
        if (t->ops[i].has_launch && t->ops[i].is_kernel_launch)
            api[n_api++] = t->ops[i].launch_dur_s;
    }
    /* By device, then GPU start: the GPU was idle at a launch when everything that started
     * before the kernel on its device had ended by the launch call's start. */
    for (size_t i = 1; i < n; i++) { /* insertion sort on an almost sorted trace */
        size_t x = order[i], j = i;
        const KinetoOp *a = &t->ops[x];
        while (j > 0) {
            const KinetoOp *b = &t->ops[order[j - 1]];
            if (b->device < a->device || (b->device == a->device && b->ts_s <= a->ts_s))
                break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    double busy_until = -INFINITY;
    int device = -1;
    for (size_t i = 0; i < n; i++) {
        const KinetoOp *op = &t->ops[order[i]];
        if (op->device != device)
            device = op->device, busy_until = -INFINITY;
        /* NCCL kernels are left out: they start when the peers are ready, not when launched. */
        if (op->has_launch && op->is_kernel_launch && op->cls != KINETO_NCCL &&
            busy_until <= op->launch_ts_s && op->ts_s >= op->launch_ts_s)
            lat[n_lat++] = op->ts_s - op->launch_ts_s;
        if (op->ts_s + op->dur_s > busy_until)
            busy_until = op->ts_s + op->dur_s;
    }
    sum->n_launches = n_api;
    sum->launch_p10_s = trace_fit_quantile(api, n_api, 0.1);
    sum->launch_median_s = trace_fit_quantile(api, n_api, 0.5);
    sum->launch_p90_s = trace_fit_quantile(api, n_api, 0.9);
    sum->n_idle_launches = n_lat;
    sum->latency_p10_s = trace_fit_quantile(lat, n_lat, 0.1);
    sum->latency_median_s = trace_fit_quantile(lat, n_lat, 0.5);
    sum->latency_p90_s = trace_fit_quantile(lat, n_lat, 0.9);
    free(api);
    free(lat);
    free(order);
}

typedef struct Interval {
    double start_s, end_s;
} Interval;

static int cmp_interval(const void *a, const void *b)
{
    double x = ((const Interval *)a)->start_s, y = ((const Interval *)b)->start_s;
    return (x > y) - (x < y);
}

/* Each step's GPU busy time: the union of all GPU activity, clipped to the step. */
static void step_stats(const KinetoTrace *t, TraceSummary *sum)
{
    size_t n = t->n_ops;
    Interval *iv = xmalloc((n ? n : 1) * sizeof *iv);
    for (size_t i = 0; i < n; i++)
        iv[i] = (Interval){t->ops[i].ts_s, t->ops[i].ts_s + t->ops[i].dur_s};
    qsort(iv, n, sizeof *iv, cmp_interval);
    size_t n_steps = t->n_steps;
    double *dur = xmalloc((n_steps ? n_steps : 1) * sizeof *dur);
    double *busy = xmalloc((n_steps ? n_steps : 1) * sizeof *busy);
    double *idle = xmalloc((n_steps ? n_steps : 1) * sizeof *idle);
    for (size_t s = 0; s < n_steps; s++) {
        const KinetoStep *st = &t->steps[s];
        double lo = st->ts_s, hi = st->ts_s + st->dur_s, covered = 0, cur_lo = 0, cur_hi = -1;
        uint64_t n_kernels = 0;
        for (size_t i = 0; i < n && iv[i].start_s < hi; i++) {
            double a = iv[i].start_s > lo ? iv[i].start_s : lo;
            double b = iv[i].end_s < hi ? iv[i].end_s : hi;
            if (b <= a)
                continue;
            if (iv[i].start_s >= lo)
                n_kernels++;
            if (a > cur_hi) {
                if (cur_hi > cur_lo)
                    covered += cur_hi - cur_lo;
                cur_lo = a, cur_hi = b;
            } else if (b > cur_hi) {
                cur_hi = b;
            }
        }
        if (cur_hi > cur_lo)
            covered += cur_hi - cur_lo;
        dur[s] = st->dur_s;
        busy[s] = covered;
        idle[s] = st->dur_s - covered;
        if (s < TRACE_FIT_MAX_STEPS) {
            TraceStepStats *o = &sum->steps[s];
            memcpy(o->name, st->name, sizeof o->name);
            o->dur_s = dur[s];
            o->busy_s = busy[s];
            o->idle_s = idle[s];
            o->n_kernels = n_kernels;
        }
    }
    sum->n_steps = n_steps;
    sum->step_median_s = trace_fit_quantile(dur, n_steps, 0.5);
    sum->step_busy_median_s = trace_fit_quantile(busy, n_steps, 0.5);
    sum->step_idle_median_s = trace_fit_quantile(idle, n_steps, 0.5);
    free(iv);
    free(dur);
    free(busy);
    free(idle);
}

int trace_fit_samples(const KinetoTrace *t, SampleSet *s, TraceSummary *sum, Err *err)
{
    Calibration meta = s->meta;
    samples_init(s);
    s->meta = meta;
    snprintf(s->meta.mode, sizeof s->meta.mode, "trace");
    if (t->device_name[0] != '\0' && s->meta.system.n_gpus == 0) {
        snprintf(s->meta.system.gpus[0], sizeof s->meta.system.gpus[0], "%s", t->device_name);
        s->meta.system.n_gpus = 1;
    }
    memset(sum, 0, sizeof *sum);
    for (size_t i = 0; i < t->n_ops; i++) {
        sum->n_by_class[t->ops[i].cls]++;
        sum->s_by_class[t->ops[i].cls] += t->ops[i].dur_s;
    }
    launch_stats(t, sum);
    step_stats(t, sum);

    Point *pts = xmalloc((t->n_ops ? t->n_ops : 1) * sizeof *pts);
    size_t n = gemm_points(t, pts, 0, sum);
    n = other_points(t, pts, n, sum);
    qsort(pts, n, sizeof *pts, cmp_point);
    double *times = xmalloc(SAMPLE_MAX_REPS * sizeof *times);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        uint32_t reps = 0;
        while (j < n && same_op(&pts[i], &pts[j])) {
            /* Past SAMPLE_MAX_REPS occurrences the rest are dropped: a thousand already pin
             * the median down (which ones are kept is arbitrary: qsort is not stable). */
            if (reps < SAMPLE_MAX_REPS)
                times[reps++] = pts[j].time_s;
            j++;
        }
        samples_add(s, pts[i].kind, pts[i].name, pts[i].label, pts[i].n, pts[i].size, 1, times,
                    reps);
        i = j;
    }
    free(times);
    free(pts);
    if (s->n_items == 0)
        return err_set(err, "trace: expected GEMMs with shapes (profile with record_shapes=True), "
                            "sized copies or sized NCCL collectives, got none to fit");
    return 0;
}

/* Copies section `kind`/`name` of `part` into `out`; true when it was present. */
static bool take_section(const Calibration *part, SampleKind kind, int name, Calibration *out)
{
    switch (kind) {
    case SAMPLE_GEMM:
        if (!part->gemm[name].is_present)
            return false;
        out->gemm[name] = part->gemm[name];
        return true;
    case SAMPLE_COPY:
        if (!part->copy[name].is_present)
            return false;
        out->copy[name] = part->copy[name];
        return true;
    case SAMPLE_COLLECTIVE:
        if (!part->collective[name].is_present)
            return false;
        /* Several group sizes of one collective: keep the fit over the most sizes. */
        if (out->collective[name].is_present &&
            out->collective[name].fit.n_points >= part->collective[name].fit.n_points)
            return true;
        out->collective[name] = part->collective[name];
        return true;
    default: return false;
    }
}

static bool same_group(const Sample *a, const Sample *b)
{
    return a->kind == b->kind && a->name == b->name &&
           (a->kind != SAMPLE_COLLECTIVE || a->n == b->n);
}

int trace_fit_derive(const SampleSet *s, Calibration *out, StrList *notes, Err *err)
{
    SampleSet none = {.meta = s->meta};
    StrList unused;
    strlist_init(&unused);
    derive_calibration(&none, out, &unused, err); /* header and system only: cannot fail */
    strlist_fini(&unused);
    size_t n_fitted = 0;
    Sample *group = xmalloc((s->n_items ? s->n_items : 1) * sizeof *group);
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *a = &s->items[i];
        bool is_first = a->kind != SAMPLE_CPU_ADAM && a->kind != SAMPLE_DISK;
        for (size_t m = 0; m < i && is_first; m++)
            is_first = !same_group(&s->items[m], a); /* each group once, at its first sample */
        if (!is_first)
            continue;
        size_t k = 0;
        for (size_t m = i; m < s->n_items; m++)
            if (same_group(&s->items[m], a))
                group[k++] = s->items[m]; /* a view: the times stay s's */
        SampleSet view = {.items = group, .n_items = k, .capacity = k, .meta = s->meta};
        Calibration part;
        Err gerr = {0};
        if (derive_calibration(&view, &part, notes, &gerr) != 0) {
            strlist_addf(notes, "%s %s: not fitted: %s", samples_kind_names[a->kind],
                         samples_names(a->kind)[a->name], gerr.msg);
            continue;
        }
        n_fitted += take_section(&part, a->kind, a->name, out);
    }
    free(group);
    if (n_fitted == 0)
        return err_set(err, "trace: expected at least one group of samples that can be fitted, "
                            "got none (see the notes above)");
    return 0;
}

void trace_fit_print(const TraceSummary *sum, FILE *out)
{
    double total = 0;
    for (int c = 0; c < KINETO_N_CLASSES; c++)
        total += sum->s_by_class[c];
    fprintf(out, "GPU activity by class:\n");
    for (int c = 0; c < KINETO_N_CLASSES; c++)
        if (sum->n_by_class[c] > 0)
            fprintf(out, "  %-12s %8llu  %12.1f us  %5.1f%%\n", kineto_class_names[c],
                    (unsigned long long)sum->n_by_class[c], 1e6 * sum->s_by_class[c],
                    total > 0 ? 100 * sum->s_by_class[c] / total : 0.0);
    fprintf(out, "  GEMM kernels with shapes: %llu; NCCL kernels with sizes: %llu",
            (unsigned long long)sum->n_gemm_shaped, (unsigned long long)sum->n_nccl_sized);
    if (sum->n_nccl_too_big > 0)
        fprintf(out, " (%llu over more than %d GPUs, not fitted)",
                (unsigned long long)sum->n_nccl_too_big, CALIBRATION_MAX_GPUS);
    fprintf(out, "\n");
    fprintf(out, "kernel launches: %llu host calls, median %.2f us (p10 %.2f, p90 %.2f)\n",
            (unsigned long long)sum->n_launches, 1e6 * sum->launch_median_s,
            1e6 * sum->launch_p10_s, 1e6 * sum->launch_p90_s);
    fprintf(out,
            "launch latency onto an idle GPU: %llu kernels, median %.2f us (p10 %.2f, p90 "
            "%.2f)\n",
            (unsigned long long)sum->n_idle_launches, 1e6 * sum->latency_median_s,
            1e6 * sum->latency_p10_s, 1e6 * sum->latency_p90_s);
    if (sum->n_steps == 0) {
        fprintf(out, "steps: no ProfilerStep# spans in the trace\n");
        return;
    }
    fprintf(out,
            "steps: %zu, median %.3f ms, GPU busy %.3f ms, GPU idle (fixed work not "
            "hidden) %.3f ms\n",
            sum->n_steps, 1e3 * sum->step_median_s, 1e3 * sum->step_busy_median_s,
            1e3 * sum->step_idle_median_s);
    for (size_t i = 0; i < sum->n_steps && i < TRACE_FIT_MAX_STEPS; i++)
        fprintf(out, "  %-20s %10.3f ms  busy %10.3f ms  idle %10.3f ms  %llu GPU ops\n",
                sum->steps[i].name, 1e3 * sum->steps[i].dur_s, 1e3 * sum->steps[i].busy_s,
                1e3 * sum->steps[i].idle_s, (unsigned long long)sum->steps[i].n_kernels);
}
