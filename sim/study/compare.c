/*
 * compare.c - columns run as child `zerosim run`s and written as CSV (see compare.h).
 */
#include "compare.h"

#include "child.h"
#include "csv.h"

#include "../common/xalloc.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The line that says why a child failed: its last "zerosim..." error line that is not a
 * warning, else its last line, into msg. */
static void failure_line(const char *err_text, int exit_code, char *msg, size_t msg_size)
{
    const char *best = NULL, *last = NULL;
    size_t best_n = 0, last_n = 0;
    for (const char *p = err_text; p && *p;) {
        size_t n = strcspn(p, "\n");
        if (n > 0) {
            last = p;
            last_n = n;
        }
        if (n > 0 && strncmp(p, "zerosim", 7) == 0 && strstr(p, "warning:") != p + 9)
            best = p, best_n = n;
        p += n + (p[n] == '\n');
    }
    if (best == NULL)
        best = last, best_n = last_n;
    if (best == NULL) {
        snprintf(msg, msg_size, "exited with code %d and no message", exit_code);
        return;
    }
    /* "zerosim run: ..." / "zerosim: ...": the column names the command already */
    const size_t prefix = strncmp(best, "zerosim: ", 9) == 0 ? 9
                          : strncmp(best, "zerosim ", 8) == 0 ? 8
                                                               : 0;
    best += prefix;
    best_n -= prefix;
    if (best_n >= msg_size)
        best_n = msg_size - 1;
    memcpy(msg, best, best_n);
    msg[best_n] = '\0';
}

/* Runs one child to its end: its stdout and stderr into out and err_text, its wait status
 * into *status. 0, or -1 with err set when it could not start. */
static int run_child(const char *exe, const CompareColumn *c, bool is_quiet, Buf *out,
                     Buf *err_text, int *status, Err *err)
{
    char **argv = xcalloc(c->run_args.n_items + 6, sizeof *argv);
    size_t n = 0;
    argv[n++] = "zerosim";
    argv[n++] = "run";
    for (size_t i = 0; i < c->run_args.n_items; i++)
        argv[n++] = c->run_args.items[i];
    argv[n++] = "--json";
    argv[n++] = "-";
    if (is_quiet)
        argv[n++] = "--quiet";
    argv[n] = NULL;
    Child child;
    int rc = child_spawn(&child, exe, argv, err);
    free(argv);
    if (rc)
        return -1;
    char *data[2] = {NULL, NULL};
    size_t n_bytes[2] = {0, 0}, cap[2] = {0, 0};
    while (child.fd_out >= 0 || child.fd_err >= 0) {
        struct pollfd fds[2] = {{child.fd_out, POLLIN, 0}, {child.fd_err, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            break;
        if (child.fd_out >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
            child_drain(&child.fd_out, &data[0], &n_bytes[0], &cap[0], 0);
        if (child.fd_err >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
            child_drain(&child.fd_err, &data[1], &n_bytes[1], &cap[1], 16384);
    }
    child_close(&child);
    *status = child_wait(&child);
    if (data[0])
        buf_add(out, data[0], n_bytes[0]);
    if (data[1])
        buf_add(err_text, data[1], n_bytes[1]);
    free(data[0]);
    free(data[1]);
    return 0;
}

int compare_run(const char *exe, const CompareColumn *columns, size_t n_columns,
                RunSummary *summaries, bool show_progress, bool is_quiet, Err *err)
{
    for (size_t k = 0; k < n_columns; k++) {
        const CompareColumn *c = &columns[k];
        if (show_progress)
            fprintf(stderr, "compare: simulating column %zu of %zu (%s)\n", k + 1, n_columns,
                    c->label);
        Buf out = {0}, err_text = {0};
        int status = 0, rc = 0;
        if (run_child(exe, c, is_quiet, &out, &err_text, &status, err)) {
            rc = EXIT_FAILURE;
        } else if (!WIFEXITED(status)) {
            rc = 1;
            err_set(err, "column %zu (%s): the simulation process was killed by signal %d",
                    k + 1, c->label, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        } else if (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3) {
            rc = WEXITSTATUS(status);
            char msg[ERR_MSG_MAX - 128];
            failure_line(err_text.data, rc, msg, sizeof msg);
            err_set(err, "column %zu (%s): %s", k + 1, c->label, msg);
        } else {
            /* the column's warnings (keys not modelled, ...) are the user's to see */
            if (err_text.data && err_text.n > 0)
                fprintf(stderr, "column %zu (%s): %s", k + 1, c->label, err_text.data);
            char what[128];
            snprintf(what, sizeof what, "column %zu (%s)", k + 1, c->label);
            if (run_summary_read(&summaries[k], what, out.data ? out.data : "", out.n, err))
                rc = 1;
        }
        buf_free(&out);
        buf_free(&err_text);
        if (rc)
            return rc;
    }
    return 0;
}

static void field_u64(Buf *b, uint64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    csv_field(b, text, false);
}

static void field_double(Buf *b, double v)
{
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    csv_field(b, text, false);
}

void compare_csv_write(FILE *out, const CompareColumn *columns, const RunSummary *summaries,
                       size_t n_columns)
{
    static const char *const head[] = {
        "label",       "model",      "config_file", "platform",    "gpus",
        "zero_stage",  "offload_optimizer", "offload_param", "precision", "micro_batch",
        "grad_accum",  "global_batch", "seq_len",   "activation_checkpointing", "fits",
        "runs_out",    "short_bytes", "hint"};
    Buf b = {0};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        csv_field(&b, head[i], i == 0);
    for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++)
        csv_field(&b, run_summary_row(k)->path, false);
    buf_puts(&b, "\n");
    for (size_t c = 0; c < n_columns; c++) {
        const RunSummary *s = &summaries[c];
        csv_field(&b, columns[c].label, true);
        csv_field(&b, s->model, false);
        csv_field(&b, s->config_file, false);
        csv_field(&b, s->platform, false);
        field_u64(&b, s->gpus);
        field_u64(&b, s->zero_stage);
        csv_field(&b, s->offload_optimizer, false);
        csv_field(&b, s->offload_param, false);
        csv_field(&b, s->precision, false);
        field_u64(&b, s->micro_batch);
        field_u64(&b, s->grad_accum);
        field_u64(&b, s->global_batch);
        field_u64(&b, s->seq_len);
        csv_field(&b, s->recompute, false);
        csv_field(&b, s->fits ? "true" : "false", false);
        csv_field(&b, s->runs_out, false);
        field_double(&b, s->short_bytes);
        csv_field(&b, s->hint, false);
        for (size_t k = 0; k < RUN_SUMMARY_N_ROWS; k++)
            field_double(&b, s->values[k]);
        buf_puts(&b, "\n");
    }
    if (b.data)
        fwrite(b.data, 1, b.n, out);
    buf_free(&b);
}
