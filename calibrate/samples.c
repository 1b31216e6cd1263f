/*
 * samples.c - sample sets, their summaries and the raw-samples CSV (see samples.h).
 */
#include "samples.h"

#include "common/suggest.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAGIC "# zerosim-calibrate samples v1"
#define CSV_HEADER "kind,name,label,n,size,iters,reps,median_s,min_s,max_s,iqr_s,times_s"
#define CSV_N_COLUMNS 12
#define MAX_LINE_BYTES (1u << 20)

const char *const samples_kind_names[] = {"gemm", "copy",   "collective", "cpu_adam",
                                          "disk", "launch", NULL};
static const char *const adam_names[] = {"adam", NULL};
static const char *const disk_names[] = {"read", "write", NULL};
static const char *const launch_names[] = {"empty_kernel", NULL};

/* Metadata keys of the CSV; "gpu" repeats, once per GPU. */
static const char *const meta_keys[] = {"date",
                                        "host",
                                        "mode",
                                        "tool_version",
                                        "gpu",
                                        "driver_version",
                                        "cuda_driver_version",
                                        "cuda_runtime_version",
                                        "cublas_version",
                                        "nccl_version",
                                        "cpu_model",
                                        "cpu_threads",
                                        "peak_source",
                                        "peak_flops_per_s.bf16",
                                        "peak_flops_per_s.fp16",
                                        "peak_flops_per_s.fp32",
                                        "disk_dir",
                                        "disk_o_direct",
                                        "disk_note",
                                        NULL};

const char *const *samples_names(SampleKind kind)
{
    switch (kind) {
    case SAMPLE_GEMM: return calibration_precision_names;
    case SAMPLE_COPY: return calibration_copy_names;
    case SAMPLE_COLLECTIVE: return calibration_collective_names;
    case SAMPLE_CPU_ADAM: return adam_names;
    case SAMPLE_DISK: return disk_names;
    case SAMPLE_LAUNCH: return launch_names;
    default: return NULL;
    }
}

void samples_init(SampleSet *s)
{
    memset(s, 0, sizeof *s);
}

void samples_fini(SampleSet *s)
{
    for (size_t i = 0; i < s->n_items; i++)
        free(s->items[i].times_s);
    free(s->items);
    samples_init(s);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted[0..n), interpolating linearly between order statistics. */
static double quantile(const double *sorted, uint32_t n, double q)
{
    double pos = q * (double)(n - 1);
    uint32_t lo = (uint32_t)floor(pos);
    uint32_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

void samples_summarize(const double *times, uint32_t n, Sample *out)
{
    double *sorted = xmalloc(n * sizeof *sorted);
    memcpy(sorted, times, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_doubles);
    out->median_s = quantile(sorted, n, 0.5);
    out->min_s = sorted[0];
    out->max_s = sorted[n - 1];
    out->iqr_s = quantile(sorted, n, 0.75) - quantile(sorted, n, 0.25);
    free(sorted);
}

Sample *samples_add(SampleSet *s, SampleKind kind, int name, const char *label, uint64_t n,
                    double size, uint64_t iters, const double *times_s, uint32_t n_reps)
{
    if (s->n_items == s->capacity) {
        s->capacity = s->capacity ? 2 * s->capacity : 64;
        s->items = xrealloc(s->items, s->capacity * sizeof *s->items);
    }
    Sample *x = &s->items[s->n_items++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->name = name;
    snprintf(x->label, sizeof x->label, "%s", label ? label : "");
    for (char *c = x->label; *c; c++)
        if (*c == ',' || *c == '\n' || *c == '\r')
            *c = ';';
    x->n = n;
    x->size = size;
    x->iters = iters;
    x->reps = n_reps;
    x->times_s = xmalloc(n_reps * sizeof *x->times_s);
    memcpy(x->times_s, times_s, n_reps * sizeof *x->times_s);
    samples_summarize(times_s, n_reps, x);
    return x;
}

static void meta_line(FILE *out, const char *key, const char *value)
{
    if (value != NULL && value[0] != '\0')
        fprintf(out, "# %s: %s\n", key, value);
}

void samples_write_csv(const SampleSet *s, FILE *out)
{
    const Calibration *m = &s->meta;
    char buf[64];
    fprintf(out, "%s\n", CSV_MAGIC);
    meta_line(out, "date", m->date);
    meta_line(out, "host", m->host);
    meta_line(out, "mode", m->mode);
    meta_line(out, "tool_version", m->tool_version);
    for (uint64_t i = 0; i < m->system.n_gpus; i++)
        meta_line(out, "gpu", m->system.gpus[i]);
    meta_line(out, "driver_version", m->system.driver_version);
    meta_line(out, "cuda_driver_version", m->system.cuda_driver_version);
    meta_line(out, "cuda_runtime_version", m->system.cuda_runtime_version);
    meta_line(out, "cublas_version", m->system.cublas_version);
    meta_line(out, "nccl_version", m->system.nccl_version);
    meta_line(out, "cpu_model", m->system.cpu_model);
    if (m->system.cpu_threads > 0) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->system.cpu_threads);
        meta_line(out, "cpu_threads", buf);
    }
    meta_line(out, "peak_source", m->gemm_peak_source);
    for (int i = 0; i < CALIB_N_PRECISIONS; i++) {
        if (m->gemm[i].peak_flops_per_s > 0) {
            char key[48];
            snprintf(key, sizeof key, "peak_flops_per_s.%s", calibration_precision_names[i]);
            snprintf(buf, sizeof buf, "%.17g", m->gemm[i].peak_flops_per_s);
            meta_line(out, key, buf);
        }
    }
    meta_line(out, "disk_dir", m->disk.dir);
    if (m->disk.dir[0] != '\0')
        meta_line(out, "disk_o_direct", m->disk.is_direct ? "true" : "false");
    meta_line(out, "disk_note", m->disk.note);
    fprintf(out, "%s\n", CSV_HEADER);
    for (size_t i = 0; i < s->n_items; i++) {
        const Sample *x = &s->items[i];
        fprintf(out, "%s,%s,%s,%llu,%.17g,%llu,%u,%.9g,%.9g,%.9g,%.9g,",
                samples_kind_names[x->kind], samples_names(x->kind)[x->name], x->label,
                (unsigned long long)x->n, x->size, (unsigned long long)x->iters, x->reps,
                x->median_s, x->min_s, x->max_s, x->iqr_s);
        for (uint32_t r = 0; r < x->reps; r++)
            fprintf(out, "%s%.17g", r ? " " : "", x->times_s[r]);
        fputc('\n', out);
    }
}

int samples_save_csv(const SampleSet *s, const char *path, Err *err)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return err_set(err, "%s: cannot write samples file: %s", path, strerror(errno));
    samples_write_csv(s, f);
    if (fclose(f) != 0)
        return err_set(err, "%s: cannot write samples file: %s", path, strerror(errno));
    return 0;
}

/* ---- reading ---- */

typedef struct Reader {
    FILE *f;
    const char *path;
    size_t line_no;
    char *line;
    size_t cap;
} Reader;

/* Reads the next line without its newline; returns 0 at end of file, -1 on a line too long. */
static int next_line(Reader *r, Err *err)
{
    size_t n = 0;
    int c;
    while ((c = fgetc(r->f)) != EOF && c != '\n') {
        if (n + 1 >= r->cap) {
            if (r->cap >= MAX_LINE_BYTES)
                return err_set(err, "%s:%zu: expected a line under %u bytes, got a longer one",
                               r->path, r->line_no + 1, MAX_LINE_BYTES);
            r->cap = r->cap ? 2 * r->cap : 4096;
            r->line = xrealloc(r->line, r->cap);
        }
        r->line[n++] = (char)c;
    }
    if (c == EOF && n == 0)
        return 0;
    if (r->line == NULL) {
        r->cap = 16;
        r->line = xmalloc(r->cap);
    }
    if (n > 0 && r->line[n - 1] == '\r')
        n--;
    r->line[n] = '\0';
    r->line_no++;
    return 1;
}

/* "\"text\"" for a message, shortened. */
static const char *quoted(const char *s, char *buf, size_t size)
{
    if (strlen(s) + 3 > size && size > 8)
        snprintf(buf, size, "\"%.*s...\"", (int)(size - 7), s);
    else
        snprintf(buf, size, "\"%s\"", s);
    return buf;
}

static int bad_field(const Reader *r, const char *column, const char *expected, const char *found,
                     Err *err)
{
    char q[96];
    return err_set(err, "%s:%zu: %s: expected %s, got %s", r->path, r->line_no, column, expected,
                   quoted(found, q, sizeof q));
}

static int parse_double(const Reader *r, const char *column, const char *text, double min,
                        double *out, Err *err)
{
    char *end = NULL;
    char expected[64];
    snprintf(expected, sizeof expected, "a number >= %g", min);
    errno = 0;
    double d = strtod(text, &end);
    if (text[0] == '\0' || end == NULL || *end != '\0' || errno == ERANGE || !isfinite(d) ||
        d < min)
        return bad_field(r, column, expected, text, err);
    *out = d;
    return 0;
}

static int parse_u64(const Reader *r, const char *column, const char *text, uint64_t min,
                     uint64_t max, uint64_t *out, Err *err)
{
    char *end = NULL;
    char expected[96];
    snprintf(expected, sizeof expected, "an integer in [%llu, %llu]", (unsigned long long)min,
             (unsigned long long)max);
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || end == NULL || *end != '\0' || errno == ERANGE ||
        v < min || v > max)
        return bad_field(r, column, expected, text, err);
    *out = v;
    return 0;
}

static int parse_enum(const Reader *r, const char *column, const char *text,
                      const char *const *names, int *out, Err *err)
{
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    char expected[256];
    size_t used = (size_t)snprintf(expected, sizeof expected, "one of");
    for (int i = 0; names[i] != NULL && used < sizeof expected; i++)
        used += (size_t)snprintf(expected + used, sizeof expected - used, "%s \"%s\"", i ? "," : "",
                                 names[i]);
    return bad_field(r, column, expected, text, err);
}

static int parse_meta(const Reader *r, SampleSet *s, Err *err)
{
    Calibration *m = &s->meta;
    const char *body = r->line + 1;
    while (*body == ' ')
        body++;
    const char *colon = strchr(body, ':');
    if (colon == NULL)
        return err_set(err, "%s:%zu: expected a metadata line \"# key: value\", got \"%s\"",
                       r->path, r->line_no, r->line);
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)(colon - body), body);
    const char *value = colon[1] == ' ' ? colon + 2 : colon + 1;
#define SET_STRING(field) snprintf(field, sizeof field, "%s", value)
    if (strcmp(key, "date") == 0)
        SET_STRING(m->date);
    else if (strcmp(key, "host") == 0)
        SET_STRING(m->host);
    else if (strcmp(key, "mode") == 0)
        SET_STRING(m->mode);
    else if (strcmp(key, "tool_version") == 0)
        SET_STRING(m->tool_version);
    else if (strcmp(key, "gpu") == 0) {
        if (m->system.n_gpus >= CALIBRATION_MAX_GPUS)
            return err_set(err, "%s:%zu: gpu: expected at most %d GPUs (one node), got more",
                           r->path, r->line_no, CALIBRATION_MAX_GPUS);
        SET_STRING(m->system.gpus[m->system.n_gpus]);
        m->system.n_gpus++;
    } else if (strcmp(key, "driver_version") == 0)
        SET_STRING(m->system.driver_version);
    else if (strcmp(key, "cuda_driver_version") == 0)
        SET_STRING(m->system.cuda_driver_version);
    else if (strcmp(key, "cuda_runtime_version") == 0)
        SET_STRING(m->system.cuda_runtime_version);
    else if (strcmp(key, "cublas_version") == 0)
        SET_STRING(m->system.cublas_version);
    else if (strcmp(key, "nccl_version") == 0)
        SET_STRING(m->system.nccl_version);
    else if (strcmp(key, "cpu_model") == 0)
        SET_STRING(m->system.cpu_model);
    else if (strcmp(key, "cpu_threads") == 0)
        return parse_u64(r, key, value, 1, 1u << 20, &m->system.cpu_threads, err);
    else if (strcmp(key, "peak_source") == 0)
        SET_STRING(m->gemm_peak_source);
    else if (strncmp(key, "peak_flops_per_s.", 17) == 0) {
        int prec = 0;
        if (parse_enum(r, "peak_flops_per_s precision", key + 17, calibration_precision_names,
                       &prec, err))
            return -1;
        return parse_double(r, key, value, 1e6, &m->gemm[prec].peak_flops_per_s, err);
    } else if (strcmp(key, "disk_dir") == 0)
        SET_STRING(m->disk.dir);
    else if (strcmp(key, "disk_o_direct") == 0) {
        static const char *const bools[] = {"false", "true", NULL};
        int b = 0;
        if (parse_enum(r, key, value, bools, &b, err))
            return -1;
        m->disk.is_direct = b == 1;
    } else if (strcmp(key, "disk_note") == 0)
        SET_STRING(m->disk.note);
    else {
        const char *best = suggest_closest(key, meta_keys);
        return err_set(err, "%s:%zu: expected a known metadata key, got \"%s\"%s%s%s", r->path,
                       r->line_no, key, best ? " (did you mean \"" : "", best ? best : "",
                       best ? "\"?)" : "");
    }
#undef SET_STRING
    return 0;
}

/* Splits line in place at commas into at most max fields; returns the count. */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return max + 1;
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (comma == NULL)
            return n;
        *comma = '\0';
        p = comma + 1;
    }
}

static int parse_row(const Reader *r, SampleSet *s, Err *err)
{
    char *f[CSV_N_COLUMNS + 1];
    int n_fields = split(r->line, f, CSV_N_COLUMNS);
    if (n_fields != CSV_N_COLUMNS)
        return err_set(err, "%s:%zu: expected %d comma-separated columns (%s), got %s%d", r->path,
                       r->line_no, CSV_N_COLUMNS, CSV_HEADER,
                       n_fields > CSV_N_COLUMNS ? "more than " : "",
                       n_fields > CSV_N_COLUMNS ? CSV_N_COLUMNS : n_fields);
    int kind = 0, name = 0;
    uint64_t n = 0, iters = 0, reps = 0;
    double size = 0, summary = 0;
    if (parse_enum(r, "kind", f[0], samples_kind_names, &kind, err) ||
        parse_enum(r, "name", f[1], samples_names((SampleKind)kind), &name, err))
        return -1;
    if (strlen(f[2]) >= SAMPLE_LABEL_MAX)
        return bad_field(r, "label", "at most 63 characters", f[2], err);
    uint64_t n_min = kind == SAMPLE_GEMM || kind == SAMPLE_COPY ? 0 : 1;
    if (parse_u64(r, "n", f[3], n_min,
                  kind == SAMPLE_COLLECTIVE ? CALIBRATION_MAX_GPUS : UINT64_MAX / 2, &n, err) ||
        parse_double(r, "size", f[4], 0.0, &size, err) ||
        parse_u64(r, "iters", f[5], 1, UINT64_MAX / 2, &iters, err) ||
        parse_u64(r, "reps", f[6], 1, SAMPLE_MAX_REPS, &reps, err) ||
        parse_double(r, "median_s", f[7], 0.0, &summary, err) ||
        parse_double(r, "min_s", f[8], 0.0, &summary, err) ||
        parse_double(r, "max_s", f[9], 0.0, &summary, err) ||
        parse_double(r, "iqr_s", f[10], 0.0, &summary, err))
        return -1;
    if (size <= 0)
        return bad_field(r, "size", "a number > 0", f[4], err);
    double times[SAMPLE_MAX_REPS];
    uint32_t n_times = 0;
    char *save = f[11];
    while (*save != '\0') {
        while (*save == ' ')
            save++;
        if (*save == '\0')
            break;
        char *end = save;
        while (*end != '\0' && *end != ' ')
            end++;
        char c = *end;
        *end = '\0';
        if (n_times == reps)
            return err_set(err, "%s:%zu: times_s: expected %llu times (reps), got more", r->path,
                           r->line_no, (unsigned long long)reps);
        if (parse_double(r, "times_s", save, 0.0, &times[n_times], err))
            return -1;
        if (times[n_times] <= 0)
            return bad_field(r, "times_s", "times > 0", save, err);
        n_times++;
        *end = c;
        save = end;
    }
    if (n_times != reps)
        return err_set(err, "%s:%zu: times_s: expected %llu times (reps), got %u", r->path,
                       r->line_no, (unsigned long long)reps, n_times);
    samples_add(s, (SampleKind)kind, name, f[2], n, size, iters, times, (uint32_t)reps);
    return 0;
}

int samples_load_csv(SampleSet *s, const char *path, Err *err)
{
    samples_init(s);
    Reader r = {fopen(path, "r"), path, 0, NULL, 0};
    if (r.f == NULL)
        return err_set(err, "%s: cannot open samples file: %s", path, strerror(errno));
    int rc = next_line(&r, err);
    bool has_header = false;
    if (rc == 0)
        rc = err_set(err, "%s: expected \"%s\" on the first line, got an empty file", path,
                     CSV_MAGIC);
    else if (rc > 0 && strcmp(r.line, CSV_MAGIC) != 0) {
        char q[96];
        rc = err_set(err, "%s:1: expected \"%s\", got %s (not a zerosim-calibrate samples file)",
                     path, CSV_MAGIC, quoted(r.line, q, sizeof q));
    }
    while (rc > 0 && (rc = next_line(&r, err)) > 0) {
        if (r.line[0] == '\0')
            continue;
        if (!has_header && r.line[0] == '#') {
            if (parse_meta(&r, s, err))
                rc = -1;
        } else if (!has_header) {
            if (strcmp(r.line, CSV_HEADER) != 0) {
                char q[96];
                rc = err_set(err, "%s:%zu: expected the header \"%s\", got %s", path, r.line_no,
                             CSV_HEADER, quoted(r.line, q, sizeof q));
            }
            has_header = true;
        } else if (parse_row(&r, s, err)) {
            rc = -1;
        }
    }
    if (rc == 0 && ferror(r.f))
        rc = err_set(err, "%s: cannot read samples file: I/O error (is it a directory?)", path);
    else if (rc == 0 && !has_header)
        rc = err_set(err, "%s: expected the header \"%s\", got end of file", path, CSV_HEADER);
    else if (rc == 0 && s->n_items == 0)
        rc = err_set(err, "%s: expected at least one sample row, got none", path);
    free(r.line);
    fclose(r.f);
    return rc < 0 ? -1 : 0;
}
