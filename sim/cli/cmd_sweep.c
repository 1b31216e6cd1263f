/*
 * cmd_sweep.c - `zerosim sweep`: a grid of runs or estimates in parallel worker processes,
 * streamed to CSV or JSONL, resumable, shardable.
 *
 * The grid (inputs/grid.h) expands to points; each point is this same executable run as
 * `zerosim run|estimate ... --json -` in a child process, at most -j at a time, its report
 * read from a pipe. A row is appended and flushed when its point finishes, so after an
 * interruption the output holds only complete rows (a torn last line is dropped on restart)
 * and a rerun skips the keys already there. `--shard I/N` keeps the points whose id % N == I,
 * so a job array or GNU parallel spreads one grid over machines, one output per shard.
 * A process per point keeps SimGrid's global state apart and turns a crash into a row.
 */
#define _DEFAULT_SOURCE /* flock, mkdtemp, strsignal, with POSIX 2008 */

#include "cli.h"

#include "common/err.h"
#include "common/strlist.h"
#include "common/xalloc.h"
#include "inputs/grid.h"
#include "inputs/grid_point.h"
#include "inputs/grid_report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const help =
    "usage: zerosim sweep GRID [options]\n"
    "\n"
    "Runs every point of a grid file: the cartesian product of its lists of models,\n"
    "configs, platforms, GPU and node counts, batch sizes, sequence lengths, activation\n"
    "checkpointing, FlashAttention, FSDP strategies, schedules, collective algorithms,\n"
    "simulation modes, steps, calibration files and platform overrides\n"
    "(\"overrides\": {\"nic.bw_bytes_per_s\": [12.5e9, 25e9]}).\n"
    "Each point is `zerosim run` (or `estimate`, with \"command\": \"estimate\") in its own\n"
    "worker process; rows are written as points finish. Format: docs/SWEEP.md.\n"
    "\n"
    "options:\n"
    "  -j N             worker processes (default 1)\n"
    "  --out FILE       write rows to FILE.csv or FILE.jsonl (default: CSV on stdout).\n"
    "                   If FILE exists its rows are kept and their points skipped, so\n"
    "                   the same command resumes an interrupted sweep\n"
    "  --format csv|jsonl\n"
    "                   the format when --out is absent or has another extension\n"
    "  --shard I/N      only the points whose id % N == I (0 <= I < N): N shards with one\n"
    "                   --out each cover the grid once (SLURM job arrays, GNU parallel)\n"
    "  --dry-run        list the points (id, todo or done, key) without running them\n"
    "  -h, --help       this text\n"
    "\n"
    "CSV columns: id, key (the point's canonical parameters, used for resumption), the\n"
    "grid's parameters, status (ok or error), exit_code (3: out of memory, still a row\n"
    "with memory.fits false), the main metrics named by their report JSON path\n"
    "(time.step_s, throughput.tokens_per_s, memory.gpu_peak_bytes, memory.fits, ...) and\n"
    "message (why a point failed). JSONL rows hold the point and the full report.\n"
    "A progress bar is drawn on stderr when it is a terminal; a summary line ends the run.\n"
    "\n"
    "Exit codes: 0 the sweep finished (failed points are rows with status error),\n"
    "1 bad grid file or unusable output file, 2 bad command line, 130 interrupted (the\n"
    "rows written are complete: run the same command again to resume).\n";

enum { OPT_JOBS, OPT_OUT, OPT_FORMAT, OPT_SHARD, OPT_DRY_RUN, N_OPTS };
enum { MAX_JOBS = 256, EXIT_INTERRUPTED = 130 };

typedef enum Format { FORMAT_CSV, FORMAT_JSONL } Format;

static const char *const cmd = "sweep";

/* ---- bytes ---- */

typedef struct Buf {
    char *data;
    size_t n, cap;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->data = xrealloc(b->data, b->cap);
    }
    memcpy(b->data + b->n, s, n);
    b->n += n;
    b->data[b->n] = '\0';
}

static void buf_puts(Buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_free(Buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* A CSV field, quoted when it holds a separator, a quote or surrounding spaces (RFC 4180). */
static void csv_field(Buf *b, const char *s, bool is_first)
{
    if (!is_first)
        buf_add(b, ",", 1);
    size_t n = strlen(s);
    if (strpbrk(s, ",\"\r\n") == NULL && (n == 0 || (s[0] != ' ' && s[n - 1] != ' '))) {
        buf_add(b, s, n);
        return;
    }
    buf_add(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        buf_add(b, p, 1);
        if (*p == '"')
            buf_add(b, "\"", 1); /* a quote inside is doubled */
    }
    buf_add(b, "\"", 1);
}

/* Field `index` of one CSV line (no newline) into a malloc'd string, or NULL. */
static char *csv_read_field(const char *line, size_t n, size_t index)
{
    size_t field = 0, i = 0;
    Buf out = {0};
    while (i <= n) {
        bool quoted = i < n && line[i] == '"';
        out.n = 0;
        buf_add(&out, "", 0);
        if (quoted) {
            for (i++; i < n; i++) {
                if (line[i] == '"' && i + 1 < n && line[i + 1] == '"')
                    buf_add(&out, line + i++, 1);
                else if (line[i] == '"')
                    break;
                else
                    buf_add(&out, line + i, 1);
            }
            i++; /* the closing quote */
        } else {
            size_t start = i;
            while (i < n && line[i] != ',')
                i++;
            buf_add(&out, line + start, i - start);
        }
        if (field == index)
            return out.data;
        if (i >= n || line[i] != ',')
            break;
        i++;
        field++;
    }
    buf_free(&out);
    return NULL;
}

/* ---- the output file ---- */

typedef struct Output {
    FILE *f;          /* stdout or the file */
    const char *path; /* NULL: stdout */
    Format format;
    char **done_keys; /* sorted keys of the rows already there */
    size_t n_done;
} Output;

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool output_has_key(const Output *o, const char *key)
{
    return o->n_done &&
           bsearch(&key, o->done_keys, o->n_done, sizeof *o->done_keys, compare_keys) != NULL;
}

static void csv_header(const Grid *g, Buf *b)
{
    csv_field(b, "id", true);
    csv_field(b, "key", false);
    for (size_t k = 0; k < grid_n_params(g); k++)
        csv_field(b, grid_param_name(g, k), false);
    csv_field(b, "status", false);
    csv_field(b, "exit_code", false);
    for (size_t k = 0; k < grid_n_metrics(g); k++)
        csv_field(b, grid_metric_name(g, k), false);
    csv_field(b, "message", false);
}

static int read_all(int fd, Buf *b)
{
    char chunk[65536];
    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            return 0;
        buf_add(b, chunk, (size_t)got);
    }
}

/* Reads the keys of the complete rows of `text` (n_bytes, ending after a newline). */
static int read_keys(Output *o, const Grid *g, const char *text, size_t n_bytes, Err *err)
{
    Buf header = {0};
    csv_header(g, &header);
    size_t line_no = 0, cap = 0;
    int rc = 0;
    for (size_t at = 0; at < n_bytes && rc == 0; line_no++) {
        const char *line = text + at;
        size_t len = (size_t)((const char *)memchr(line, '\n', n_bytes - at) - line);
        at += len + 1;
        char *key = NULL;
        if (o->format == FORMAT_CSV && line_no == 0) {
            if (len != header.n || memcmp(line, header.data, len) != 0)
                rc = err_set(err,
                             "%s:1: expected the CSV header of this grid's columns, got "
                             "another one (a different grid or command wrote it: use another "
                             "--out)",
                             o->path);
            continue;
        }
        if (o->format == FORMAT_CSV)
            key = csv_read_field(line, len, 1);
        else if (grid_jsonl_key(line, len, &key))
            key = NULL;
        if (key == NULL || key[0] == '\0') {
            free(key);
            rc = err_set(err,
                         "%s:%zu: expected a row written by zerosim sweep (with its key), "
                         "got a line without one",
                         o->path, line_no + 1);
            break;
        }
        if (o->n_done == cap)
            o->done_keys = xrealloc(o->done_keys, (cap = cap ? 2 * cap : 256) * sizeof(char *));
        o->done_keys[o->n_done++] = key;
    }
    buf_free(&header);
    if (o->n_done > 0)
        qsort(o->done_keys, o->n_done, sizeof *o->done_keys, compare_keys);
    return rc;
}

/* Opens the output: stdout, or the file, whose complete rows are kept (a torn last line from
 * an interruption is cut off) and whose keys are read. With is_read_only (a dry run) the
 * file is only read. Writes the CSV header when the file is new. */
static int output_open(Output *o, const Grid *g, bool is_read_only, Err *err)
{
    if (o->path == NULL) {
        o->f = is_read_only ? NULL : stdout;
    } else {
        int fd = is_read_only ? open(o->path, O_RDONLY | O_CLOEXEC)
                              : open(o->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
        if (fd < 0 && is_read_only && errno == ENOENT)
            return 0;
        if (fd < 0)
            return err_set(err, "%s: cannot open the output: %s", o->path, strerror(errno));
        if (!is_read_only && flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return err_set(err,
                           "%s: expected an output no other zerosim sweep is writing, got "
                           "one that is locked (give each shard its own --out)",
                           o->path);
        }
        Buf text = {0};
        int rc = read_all(fd, &text);
        size_t keep = text.n;
        while (keep > 0 && text.data[keep - 1] != '\n')
            keep--;
        if (rc == 0 && keep < text.n && !is_read_only) {
            fprintf(stderr,
                    "zerosim sweep: %s: dropped an incomplete last row (an interrupted "
                    "write); its point runs again\n",
                    o->path);
            rc = ftruncate(fd, (off_t)keep);
        }
        if (rc != 0) {
            buf_free(&text);
            close(fd);
            return err_set(err, "%s: cannot read the output: %s", o->path, strerror(errno));
        }
        rc = read_keys(o, g, text.data, keep, err);
        buf_free(&text);
        if (rc || is_read_only) {
            close(fd);
            return rc;
        }
        o->f = fdopen(fd, "a");
        if (o->f == NULL) {
            close(fd);
            return err_set(err, "%s: cannot open the output: %s", o->path, strerror(errno));
        }
        if (keep > 0)
            return 0;
    }
    if (o->f != NULL && o->format == FORMAT_CSV) {
        Buf header = {0};
        csv_header(g, &header);
        buf_add(&header, "\n", 1);
        fwrite(header.data, 1, header.n, o->f);
        buf_free(&header);
        if (fflush(o->f) != 0)
            return err_set(err, "%s: cannot write the output: %s", o->path ? o->path : "stdout",
                           strerror(errno));
    }
    return 0;
}

static void output_close(Output *o)
{
    if (o->f != NULL && o->f != stdout)
        fclose(o->f);
    for (size_t i = 0; i < o->n_done; i++)
        free(o->done_keys[i]);
    free(o->done_keys);
}

/* Appends one complete row and flushes it. */
static int output_row(Output *o, const Grid *g, size_t id, const char *status, int exit_code,
                      const char *message, const GridReport *report, Err *err)
{
    Buf row = {0};
    if (o->format == FORMAT_JSONL) {
        char *line = grid_jsonl_row(g, id, status, exit_code, message, report);
        buf_puts(&row, line);
        free(line);
    } else {
        char text[32];
        snprintf(text, sizeof text, "%zu", id);
        csv_field(&row, text, true);
        char *key = grid_point_key(g, id);
        csv_field(&row, key, false);
        free(key);
        for (size_t k = 0; k < grid_n_params(g); k++)
            csv_field(&row, grid_param_value(g, id, k), false);
        csv_field(&row, status, false);
        snprintf(text, sizeof text, "%d", exit_code);
        csv_field(&row, text, false);
        for (size_t k = 0; k < grid_n_metrics(g); k++)
            csv_field(&row, report ? report->metrics.items[k] : "", false);
        csv_field(&row, message ? message : "", false);
    }
    buf_add(&row, "\n", 1);
    bool is_written = fwrite(row.data, 1, row.n, o->f) == row.n;
    buf_free(&row);
    if (!is_written || fflush(o->f) != 0)
        return err_set(err, "%s: cannot write the output: %s", o->path ? o->path : "stdout",
                       strerror(errno));
    return 0;
}

/* ---- workers ---- */

typedef struct Worker {
    pid_t pid; /* 0: free */
    size_t id;
    int fd_out, fd_err; /* -1 once at end of file */
    Buf out, err;
    GridInvocation inv;
} Worker;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* This executable, to run the points with. */
static void self_path(const char *argv0, char *out, size_t out_size)
{
    ssize_t n = readlink("/proc/self/exe", out, out_size - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    snprintf(out, out_size, "%s", argv0);
}

static int worker_start(Worker *w, const Grid *g, size_t id, const char *exe, const char *tmp_dir,
                        Err *err)
{
    memset(w, 0, sizeof *w);
    w->fd_out = w->fd_err = -1;
    w->id = id;
    if (grid_invocation_init(&w->inv, g, id, tmp_dir, err))
        return -1;
    int out[2], errp[2];
    if (pipe(out) != 0)
        return err_set(err, "cannot start a worker: pipe: %s", strerror(errno));
    if (pipe(errp) != 0) {
        close(out[0]);
        close(out[1]);
        return err_set(err, "cannot start a worker: pipe: %s", strerror(errno));
    }
    char **argv = xcalloc(w->inv.args.n_items + 2, sizeof *argv);
    argv[0] = "zerosim";
    for (size_t i = 0; i < w->inv.args.n_items; i++)
        argv[i + 1] = w->inv.args.items[i];
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(errp[1], STDERR_FILENO);
        close(out[0]);
        close(out[1]);
        close(errp[0]);
        close(errp[1]);
        if (strchr(exe, '/') != NULL)
            execv(exe, argv);
        else
            execvp(exe, argv);
        dprintf(STDERR_FILENO, "zerosim: cannot execute %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    free(argv);
    close(out[1]);
    close(errp[1]);
    if (pid < 0) {
        close(out[0]);
        close(errp[0]);
        return err_set(err, "cannot start a worker: fork: %s", strerror(errno));
    }
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    fcntl(errp[0], F_SETFD, FD_CLOEXEC);
    w->pid = pid;
    w->fd_out = out[0];
    w->fd_err = errp[0];
    return 0;
}

/* Reads what is ready on fd into b; closes fd at end of file. Keeps the tail of stderr. */
static void worker_drain(int *fd, Buf *b, bool is_stderr)
{
    char chunk[65536];
    ssize_t got = read(*fd, chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (got <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    buf_add(b, chunk, (size_t)got);
    if (is_stderr && b->n > 65536) { /* only the last lines matter */
        memmove(b->data, b->data + b->n - 32768, 32768);
        b->n = 32768;
        b->data[b->n] = '\0';
    }
}

static void worker_release(Worker *w)
{
    if (w->fd_out >= 0)
        close(w->fd_out);
    if (w->fd_err >= 0)
        close(w->fd_err);
    grid_invocation_fini(&w->inv);
    buf_free(&w->out);
    buf_free(&w->err);
    w->pid = 0;
}

/* Replaces every occurrence of `what` in b with `with`. */
static void replace_all(Buf *b, const char *what, const char *with)
{
    if (what[0] == '\0' || b->data == NULL)
        return;
    Buf out = {0};
    size_t n = strlen(what);
    for (const char *p = b->data, *hit; (hit = strstr(p, what)) != NULL || *p; p = hit + n) {
        if (hit == NULL) {
            buf_puts(&out, p);
            break;
        }
        buf_add(&out, p, (size_t)(hit - p));
        buf_puts(&out, with);
    }
    buf_add(&out, "", 0);
    buf_free(b);
    *b = out;
}

/* The line that says why a child failed: its last "zerosim: " line that is not a warning,
 * else its last line; without the "zerosim: " prefix. */
static void failure_message(Worker *w, int exit_code, Buf *msg)
{
    char with[1200];
    snprintf(with, sizeof with, "%s (with the grid's batch sizes)", w->inv.source_config);
    replace_all(&w->err, w->inv.derived_config, with);
    snprintf(with, sizeof with, "%s (with the grid's overrides)", w->inv.source_platform);
    replace_all(&w->err, w->inv.derived_platform, with);
    const char *best = NULL, *last = NULL;
    size_t best_n = 0, last_n = 0;
    for (const char *p = w->err.data; p && *p;) {
        size_t n = strcspn(p, "\n");
        if (n > 0) {
            last = p;
            last_n = n;
        }
        if (n > 0 && strncmp(p, "zerosim: ", 9) == 0 && strncmp(p, "zerosim: warning:", 17) != 0) {
            best = p;
            best_n = n;
        }
        p += n + (p[n] == '\n');
    }
    if (best == NULL) {
        best = last;
        best_n = last_n;
    }
    if (best != NULL && strncmp(best, "zerosim: ", 9) == 0) {
        best += 9;
        best_n -= 9;
    }
    if (best != NULL) {
        buf_add(msg, best, best_n);
    } else {
        char text[64];
        snprintf(text, sizeof text, "exited with code %d and no message", exit_code);
        buf_puts(msg, text);
    }
    for (size_t i = 0; i < msg->n; i++)
        if ((unsigned char)msg->data[i] < 32)
            msg->data[i] = ' ';
}

typedef struct Tally {
    size_t total;    /* points in this shard */
    size_t skipped;  /* already in the output */
    size_t finished; /* computed by this run */
    size_t errors;
    size_t not_fitting; /* memory.fits false: out of memory in a run */
    size_t running;
    bool has_bar;
} Tally;

static void progress_draw(const Tally *t, bool is_final)
{
    if (!t->has_bar)
        return;
    size_t done = t->skipped + t->finished, width = 30;
    size_t fill = t->total ? done * width / t->total : width;
    char bar[64];
    for (size_t i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %zu/%zu  %zu running, %zu errors   ", bar, done, t->total, t->running,
            t->errors);
    if (is_final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* Records a finished child's row. Returns 0, 1 when the child was interrupted (no row), or
 * -1 with err set when the row cannot be written. */
static int worker_finish(Worker *w, int wait_status, const Grid *g, Output *o, Tally *t, Err *err)
{
    int code;
    Buf msg = {0};
    if (WIFSIGNALED(wait_status)) {
        int sig = WTERMSIG(wait_status);
        if (sig == SIGINT || sig == SIGTERM || interrupted)
            return 1;
        code = 128 + sig;
        char text[128];
        snprintf(text, sizeof text, "killed by signal %d (%s)", sig, strsignal(sig));
        buf_puts(&msg, text);
    } else {
        code = WEXITSTATUS(wait_status);
    }
    GridReport report = {0};
    bool has_report = false;
    if (code == EXIT_OK || code == 3) {
        Err rerr = {0};
        has_report = grid_report_read(&report, g, &w->inv, w->out.data ? w->out.data : "", w->out.n,
                                      &rerr) == 0;
        if (!has_report)
            buf_puts(&msg, rerr.msg);
    } else if (msg.n == 0) {
        failure_message(w, code, &msg);
    }
    const char *status = has_report ? "ok" : "error";
    t->errors += !has_report;
    for (size_t k = 0; has_report && k < grid_n_metrics(g); k++)
        if (strcmp(grid_metric_name(g, k), "memory.fits") == 0)
            t->not_fitting += strcmp(report.metrics.items[k], "false") == 0;
    int rc = output_row(o, g, w->id, status, code, msg.data, has_report ? &report : NULL, err);
    grid_report_fini(&report);
    buf_free(&msg);
    return rc;
}

/* ---- the command ---- */

/* Moves the arguments that are not options (the grid file) from argv to grids, the others
 * to rest. */
static void split_arguments(int argc, char **argv, const CliOption *o, char **rest, int *n_rest,
                            const char **grids, int *n_grids)
{
    *n_rest = *n_grids = 0;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        bool takes_value = false;
        for (int k = 0; k < N_OPTS; k++)
            if (strcmp(arg, o[k].name) == 0)
                takes_value = o[k].takes_value;
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            grids[(*n_grids)++] = arg;
            continue;
        }
        rest[(*n_rest)++] = argv[i];
        if (takes_value && i + 1 < argc)
            rest[(*n_rest)++] = argv[++i];
    }
}

static int parse_shard(const char *text, uint64_t *index, uint64_t *count)
{
    if (text == NULL)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long i = strtoull(text, &end, 10), n = 0;
    bool ok = end != text && text[0] != '-' && *end == '/' && errno == 0;
    if (ok) {
        const char *p = end + 1;
        n = strtoull(p, &end, 10);
        ok = end != p && *p != '-' && *end == '\0' && errno == 0 && n >= 1 && i < n &&
             n <= (1ull << 32);
    }
    if (!ok)
        return cli_usage_error(cmd,
                               "--shard: expected I/N with 0 <= I < N (e.g. 0/4), got "
                               "\"%s\"",
                               text);
    *index = i;
    *count = n;
    return 0;
}

static int parse_format(const char *out, const char *format, Format *result)
{
    const char *dot = out ? strrchr(out, '.') : NULL;
    int by_name = -1, by_option = -1;
    if (dot && strcmp(dot, ".csv") == 0)
        by_name = FORMAT_CSV;
    else if (dot && strcmp(dot, ".jsonl") == 0)
        by_name = FORMAT_JSONL;
    if (format && strcmp(format, "csv") == 0)
        by_option = FORMAT_CSV;
    else if (format && strcmp(format, "jsonl") == 0)
        by_option = FORMAT_JSONL;
    else if (format)
        return cli_usage_error(cmd, "--format: expected csv or jsonl, got \"%s\"", format);
    if (by_name >= 0 && by_option >= 0 && by_name != by_option)
        return cli_usage_error(cmd,
                               "--format: expected the format of --out \"%s\", got "
                               "\"%s\"",
                               out, format);
    if (out && strcmp(out, "-") != 0 && by_name < 0 && by_option < 0)
        return cli_usage_error(cmd,
                               "--out: expected a file ending in .csv or .jsonl (or "
                               "--format), got \"%s\"",
                               out);
    *result = (Format)(by_option >= 0 ? by_option : by_name >= 0 ? by_name : FORMAT_CSV);
    return 0;
}

static void dry_run(const Grid *g, const Output *o, uint64_t shard, uint64_t n_shards)
{
    size_t listed = 0, done = 0;
    for (size_t id = 0; id < grid_n_points(g); id++) {
        if (id % n_shards != shard)
            continue;
        char *key = grid_point_key(g, id);
        bool is_done = output_has_key(o, key);
        printf("%zu\t%s\t%s\n", id, is_done ? "done" : "todo", key);
        free(key);
        listed++;
        done += is_done;
    }
    fprintf(stderr, "zerosim sweep: %zu points in the grid, %zu in this shard, %zu done\n",
            grid_n_points(g), listed, done);
}

/* Runs the shard's remaining points, at most n_jobs at a time. Returns an exit code. */
static int sweep(const Grid *g, Output *o, const char *exe, const char *tmp_dir, size_t n_jobs,
                 uint64_t shard, uint64_t n_shards, Tally *t, Err *err)
{
    Worker *workers = xcalloc(n_jobs, sizeof *workers);
    struct pollfd *fds = xcalloc(2 * n_jobs, sizeof *fds);
    size_t next = shard;
    int exit_code = EXIT_OK;
    bool is_launching = true, is_discarding = false, has_killed = false;
    for (;;) {
        if ((interrupted || is_discarding) && !has_killed) {
            /* Stop everything; the points in flight leave no row and run again next time. */
            has_killed = true;
            is_launching = false;
            is_discarding = true;
            if (exit_code == EXIT_OK)
                exit_code = EXIT_INTERRUPTED;
            for (size_t k = 0; k < n_jobs; k++)
                if (workers[k].pid > 0)
                    kill(workers[k].pid, SIGTERM);
        }
        for (size_t k = 0; k < n_jobs && is_launching; k++) {
            if (workers[k].pid > 0)
                continue;
            while (next < grid_n_points(g)) {
                char *key = grid_point_key(g, next);
                bool is_done = output_has_key(o, key);
                free(key);
                if (!is_done)
                    break;
                next += n_shards;
            }
            if (next >= grid_n_points(g))
                break;
            if (worker_start(&workers[k], g, next, exe, tmp_dir, err)) {
                worker_release(&workers[k]);
                is_launching = false; /* the points in flight still finish */
                exit_code = EXIT_BAD_INPUT;
                break;
            }
            next += n_shards;
            t->running++;
        }
        progress_draw(t, false);
        if (t->running == 0)
            break;
        size_t n_fds = 0;
        for (size_t k = 0; k < n_jobs; k++) {
            if (workers[k].fd_out >= 0)
                fds[n_fds++] = (struct pollfd){.fd = workers[k].fd_out, .events = POLLIN};
            if (workers[k].fd_err >= 0)
                fds[n_fds++] = (struct pollfd){.fd = workers[k].fd_err, .events = POLLIN};
        }
        if (n_fds > 0 && poll(fds, n_fds, 250) < 0 && errno != EINTR) {
            err_set(err, "cannot wait for the workers: poll: %s", strerror(errno));
            exit_code = EXIT_BAD_INPUT;
            is_discarding = true;
            continue;
        }
        for (size_t f = 0; f < n_fds; f++) {
            if (!(fds[f].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            for (size_t k = 0; k < n_jobs; k++) {
                if (workers[k].fd_out == fds[f].fd)
                    worker_drain(&workers[k].fd_out, &workers[k].out, false);
                else if (workers[k].fd_err == fds[f].fd)
                    worker_drain(&workers[k].fd_err, &workers[k].err, true);
            }
        }
        for (size_t k = 0; k < n_jobs; k++) {
            Worker *w = &workers[k];
            if (w->pid <= 0 || w->fd_out >= 0 || w->fd_err >= 0)
                continue;
            int status = 0;
            while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
                ;
            t->running--;
            int rc = is_discarding ? 1 : worker_finish(w, status, g, o, t, err);
            t->finished += rc == 0;
            if (rc < 0) { /* the output cannot be written: nothing more can be kept */
                exit_code = EXIT_BAD_INPUT;
                is_discarding = true;
            }
            worker_release(w);
        }
    }
    progress_draw(t, true);
    free(fds);
    free(workers);
    return exit_code;
}

int cmd_sweep(int argc, char **argv)
{
    CliOption o[N_OPTS] = {
        [OPT_JOBS] = {"-j", true, NULL},
        [OPT_OUT] = {"--out", true, NULL},
        [OPT_FORMAT] = {"--format", true, NULL},
        [OPT_SHARD] = {"--shard", true, NULL},
        [OPT_DRY_RUN] = {"--dry-run", false, NULL},
    };
    char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
    const char **grids = xcalloc((size_t)argc + 1, sizeof *grids);
    int n_rest = 0, n_grids = 0;
    split_arguments(argc, argv, o, rest, &n_rest, grids, &n_grids);
    int rc = cli_parse(cmd, help, n_rest, rest, 0, o, N_OPTS);
    const char *grid_path = grids[0];
    if (rc == 0 && n_grids == 0)
        rc = cli_usage_error(cmd, "expected a grid file, got nothing");
    else if (rc == 0 && n_grids > 1)
        rc = cli_usage_error(cmd, "expected one grid file, got \"%s\" and \"%s\"", grids[0],
                             grids[1]);
    free(rest);
    free(grids);
    if (rc)
        return rc == 1 ? EXIT_OK : rc;
    uint64_t n_jobs = 1, shard = 0, n_shards = 1;
    Format format = FORMAT_CSV;
    const char *out_path = o[OPT_OUT].value;
    if (cli_count(cmd, "-j", o[OPT_JOBS].value, &n_jobs) ||
        parse_shard(o[OPT_SHARD].value, &shard, &n_shards) ||
        parse_format(out_path, o[OPT_FORMAT].value, &format))
        return EXIT_BAD_USAGE;
    if (n_jobs > MAX_JOBS)
        return cli_usage_error(cmd, "-j: expected at most %d, got %llu", MAX_JOBS,
                               (unsigned long long)n_jobs);
    bool is_dry_run = o[OPT_DRY_RUN].value != NULL;
    if (out_path && strcmp(out_path, "-") == 0)
        out_path = NULL;

    Err err = {0};
    Output out = {.path = out_path, .format = format};
    char tmp_dir[PATH_MAX] = "";
    int exit_code = EXIT_BAD_INPUT;
    Tally t = {0};
    Grid *g = grid_load(grid_path, cli_data_dir(), &err);
    if (g == NULL || output_open(&out, g, is_dry_run, &err))
        goto done;
    if (is_dry_run) {
        dry_run(g, &out, shard, n_shards);
        exit_code = EXIT_OK;
        goto done;
    }
    if (grid_has_derived_files(g)) {
        const char *base = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof tmp_dir, "%s/zerosim-sweep.XXXXXX",
                 base && base[0] ? base : "/tmp");
        if (mkdtemp(tmp_dir) == NULL) {
            err_set(&err, "%s: cannot create a directory for derived inputs: %s", tmp_dir,
                    strerror(errno));
            tmp_dir[0] = '\0';
            goto done;
        }
    }
    for (size_t id = shard; id < grid_n_points(g); id += n_shards) {
        char *key = grid_point_key(g, id);
        t.total++;
        t.skipped += output_has_key(&out, key);
        free(key);
    }
    if (out.n_done > t.skipped) /* rows of another grid or shard count: merging repeats them */
        fprintf(stderr,
                "zerosim: warning: %s: %zu rows are not points of %sthis grid (written "
                "by another grid or shard count; a merge of the shards may repeat them)\n",
                out.path, out.n_done - t.skipped, n_shards > 1 ? "this shard of " : "");
    t.has_bar = isatty(STDERR_FILENO) && !(out.f == stdout && isatty(STDOUT_FILENO));
    char exe[PATH_MAX];
    self_path(argv[0], exe, sizeof exe);
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    exit_code = sweep(g, &out, exe, tmp_dir, (size_t)n_jobs, shard, n_shards, &t, &err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    const char *where = out.path ? out.path : "the output";
    char scope[96] = "";
    if (n_shards > 1)
        snprintf(scope, sizeof scope, "shard %llu/%llu: ", (unsigned long long)shard,
                 (unsigned long long)n_shards);
    if (exit_code == EXIT_INTERRUPTED)
        fprintf(stderr,
                "zerosim sweep: interrupted: %s%zu of %zu points in %s; run the same "
                "command again to resume\n",
                scope, t.skipped + t.finished, t.total, where);
    else if (exit_code == EXIT_OK)
        fprintf(stderr,
                "zerosim sweep: %s%zu of %zu points: %zu computed (%zu errors, %zu do "
                "not fit), %zu already in %s\n",
                scope, t.total, grid_n_points(g), t.finished, t.errors, t.not_fitting, t.skipped,
                where);
done:
    if (err.is_set)
        fprintf(stderr, "zerosim: %s\n", err.msg);
    if (tmp_dir[0])
        rmdir(tmp_dir);
    output_close(&out);
    grid_destroy(g);
    return exit_code;
}
