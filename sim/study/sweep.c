/*
 * sweep.c - the worker pool of `zerosim sweep` (see sweep.h): a poll() loop over the workers'
 * pipes, one row per finished point, a progress bar on a terminal.
 */
#define _DEFAULT_SOURCE /* strsignal, sigaction, with POSIX 2008 */

#include "sweep.h"

#include "child.h"

#include "../common/buf.h"
#include "../common/xalloc.h"
#include "../inputs/grid_point.h"
#include "../inputs/grid_report.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { STDERR_TAIL_BYTES = 32768 }; /* of a worker's stderr, only the last lines matter */

typedef struct Worker {
    Child child; /* pid 0: free */
    size_t id;
    Buf out, err;
    GridInvocation inv;
} Worker;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int worker_start(Worker *w, const Grid *g, size_t id, const char *exe, const char *tmp_dir,
                        Err *err)
{
    memset(w, 0, sizeof *w);
    w->child.fd_out = w->child.fd_err = -1;
    w->id = id;
    if (grid_invocation_init(&w->inv, g, id, tmp_dir, err))
        return -1;
    char **argv = xcalloc(w->inv.args.n_items + 2, sizeof *argv);
    argv[0] = "zerosim";
    for (size_t i = 0; i < w->inv.args.n_items; i++)
        argv[i + 1] = w->inv.args.items[i];
    int rc = child_spawn(&w->child, exe, argv, err);
    free(argv);
    return rc;
}

static void worker_release(Worker *w)
{
    child_close(&w->child);
    grid_invocation_fini(&w->inv);
    buf_free(&w->out);
    buf_free(&w->err);
    w->child.pid = 0;
}

/* The line that says why a child failed: its last "zerosim: " line that is not a warning,
 * else its last line; without the "zerosim: " prefix. */
static void failure_message(Worker *w, int exit_code, Buf *msg)
{
    char with[1200];
    snprintf(with, sizeof with, "%s (with the grid's batch sizes)", w->inv.source_config);
    buf_replace_all(&w->err, w->inv.derived_config, with);
    snprintf(with, sizeof with, "%s (with the grid's overrides)", w->inv.source_platform);
    buf_replace_all(&w->err, w->inv.derived_platform, with);
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

static void progress_draw(const SweepTally *t, bool is_final)
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
static int worker_finish(Worker *w, int wait_status, const Grid *g, SweepOutput *o, SweepTally *t, Err *err)
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
    if (code == 0 || code == 3) { /* success, or a report that says out of memory */
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
    int rc = sweep_output_row(o, g, w->id, status, code, msg.data, has_report ? &report : NULL, err);
    grid_report_fini(&report);
    buf_free(&msg);
    return rc;
}

/* Reads what is ready on *fd into b. */
static void drain(int *fd, Buf *b, size_t keep_tail_bytes)
{
    child_drain(fd, &b->data, &b->n, &b->cap, keep_tail_bytes);
}

/* The pool: start workers while points remain, poll their pipes, record each finished one. */
static SweepStatus run_pool(const Grid *g, SweepOutput *o, const SweepOptions *opts, SweepTally *t,
                            Err *err)
{
    const size_t n_jobs = opts->n_jobs;
    const uint64_t n_shards = opts->n_shards;
    Worker *workers = xcalloc(n_jobs, sizeof *workers);
    struct pollfd *fds = xcalloc(2 * n_jobs, sizeof *fds);
    size_t next = 0;
    SweepStatus status = SWEEP_DONE;
    bool is_launching = true, is_discarding = false, has_killed = false;
    for (;;) {
        if ((interrupted || is_discarding) && !has_killed) {
            /* Stop everything; the points in flight leave no row and run again next time. */
            has_killed = true;
            is_launching = false;
            is_discarding = true;
            if (status == SWEEP_DONE)
                status = SWEEP_INTERRUPTED;
            for (size_t k = 0; k < n_jobs; k++)
                if (workers[k].child.pid > 0)
                    kill(workers[k].child.pid, SIGTERM);
        }
        for (size_t k = 0; k < n_jobs && is_launching; k++) {
            if (workers[k].child.pid > 0)
                continue;
            while (next < grid_n_points(g)) {
                if (grid_point_is_in_shard(g, next, opts->shard, n_shards)) {
                    char *key = grid_point_key(g, next);
                    bool is_done = sweep_output_has_key(o, key);
                    free(key);
                    if (!is_done)
                        break;
                }
                next++;
            }
            if (next >= grid_n_points(g))
                break;
            if (worker_start(&workers[k], g, next, opts->exe, opts->tmp_dir, err)) {
                worker_release(&workers[k]);
                is_launching = false; /* the points in flight still finish */
                status = SWEEP_FAILED;
                break;
            }
            next++;
            t->running++;
        }
        progress_draw(t, false);
        if (t->running == 0)
            break;
        size_t n_fds = 0;
        for (size_t k = 0; k < n_jobs; k++) {
            if (workers[k].child.fd_out >= 0)
                fds[n_fds++] = (struct pollfd){.fd = workers[k].child.fd_out, .events = POLLIN};
            if (workers[k].child.fd_err >= 0)
                fds[n_fds++] = (struct pollfd){.fd = workers[k].child.fd_err, .events = POLLIN};
        }
        if (n_fds > 0 && poll(fds, n_fds, 250) < 0 && errno != EINTR) {
            err_set(err, "cannot wait for the workers: poll: %s", strerror(errno));
            status = SWEEP_FAILED;
            is_discarding = true;
            continue;
        }
        for (size_t f = 0; f < n_fds; f++) {
            if (!(fds[f].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            for (size_t k = 0; k < n_jobs; k++) {
                if (workers[k].child.fd_out == fds[f].fd)
                    drain(&workers[k].child.fd_out, &workers[k].out, 0);
                else if (workers[k].child.fd_err == fds[f].fd)
                    drain(&workers[k].child.fd_err, &workers[k].err, STDERR_TAIL_BYTES);
            }
        }
        for (size_t k = 0; k < n_jobs; k++) {
            Worker *w = &workers[k];
            if (w->child.pid <= 0 || w->child.fd_out >= 0 || w->child.fd_err >= 0)
                continue;
            int wait_status = child_wait(&w->child);
            t->running--;
            int rc = is_discarding ? 1 : worker_finish(w, wait_status, g, o, t, err);
            t->finished += rc == 0;
            if (rc < 0) { /* the output cannot be written: nothing more can be kept */
                status = SWEEP_FAILED;
                is_discarding = true;
            }
            worker_release(w);
        }
    }
    progress_draw(t, true);
    free(fds);
    free(workers);
    return status;
}

int sweep_make_tmp_dir(const char *base, char *out, size_t out_size, Err *err)
{
    snprintf(out, out_size, "%s/zerosim-sweep-%ld.XXXXXX", base, (long)getpid());
    if (mkdtemp(out) == NULL) {
        err_set(err, "%s: cannot create a directory for derived inputs: %s", out, strerror(errno));
        out[0] = '\0';
        return -1;
    }
    return 0;
}

/* Removes dir and the plain files in it (derived inputs: no subdirectories). */
static bool remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char file[PATH_MAX + NAME_MAX + 2];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        unlink(file);
    }
    closedir(d);
    return rmdir(path) == 0;
}

/* True when process pid is gone: no such process, or a zombie nobody reaped yet. */
static bool is_gone(long pid)
{
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH; /* EPERM: alive, another user's */
    char path[64], state = '?';
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    /* "pid (comm) state ...": the state follows the last ')' */
    char line[512];
    if (fgets(line, sizeof line, f) != NULL) {
        char *close = strrchr(line, ')');
        if (close != NULL && close[1] == ' ')
            state = close[2];
    }
    fclose(f);
    return state == 'Z';
}

size_t sweep_remove_stale_tmp_dirs(const char *base)
{
    DIR *d = opendir(base);
    if (d == NULL)
        return 0;
    size_t n = 0;
    const char prefix[] = "zerosim-sweep-";
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, sizeof prefix - 1) != 0)
            continue;
        char *end = NULL;
        long pid = strtol(e->d_name + sizeof prefix - 1, &end, 10);
        if (end == e->d_name + sizeof prefix - 1 || *end != '.' || pid <= 0)
            continue;
        if (!is_gone(pid))
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", base, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
            continue;
        n += remove_dir(path);
    }
    closedir(d);
    return n;
}

void sweep_count(const Grid *g, const SweepOutput *o, uint64_t shard, uint64_t n_shards,
                 SweepTally *t)
{
    for (size_t id = 0; id < grid_n_points(g); id++) {
        if (!grid_point_is_in_shard(g, id, shard, n_shards))
            continue;
        char *key = grid_point_key(g, id);
        t->total++;
        t->skipped += sweep_output_has_key(o, key);
        free(key);
    }
}

SweepStatus sweep_run(const Grid *g, SweepOutput *o, const SweepOptions *opts, SweepTally *t,
                      Err *err)
{
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    SweepStatus status = run_pool(g, o, opts, t, err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return status;
}
