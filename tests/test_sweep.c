/*
 * test_sweep.c - `zerosim sweep` end to end (cmd_sweep.c): the built zerosim is run on small
 * grids in a temporary directory, and its outputs compared.
 *
 * The acceptance of issue 7: results are identical with -j 1 and -j 2 (rows sorted, since
 * they are written as points finish), resumption keeps the finished rows without computing
 * them again (a marker put into a kept row survives; a torn last line is dropped and its
 * point rerun) and two shards together are the whole grid. The executable is found beside
 * this test's directory (build/tests/../zerosim). Grids use tiny runs (GPT-2 1.5B, 128
 * tokens, at most 2 GPUs) and estimates, so the whole file takes seconds.
 */
#define _DEFAULT_SOURCE /* mkdtemp, readlink */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char zerosim[PATH_MAX + 16];
static char dir[] = "/tmp/test_sweep.XXXXXX";

/* 3 GPU counts x 2 configs x 2 micro-batches: 12 points, among them out-of-memory runs (exit
 * 3) and failures (3 GPUs do not fit the 2-GPU workstation: exit 2). */
static const char run_grid[] =
    "{\"models\": [\"gpt2-1.5b\"], \"configs\": [\"zero2\", \"zero3\"],\n"
    " \"platforms\": [\"workstation-2x-titan-rtx\"], \"gpus\": [1, 2, 3],\n"
    " \"micro_batch\": [1, 2], \"seq_len\": 128,\n"
    " \"overrides\": {\"pcie.gpu_link.bw_bytes_per_s\": 6e9}}\n";

/* 16 estimates. */
static const char estimate_grid[] =
    "{\"command\": \"estimate\", \"models\": [\"gpt2-1.5b\", \"llama-2-7b\"],\n"
    " \"configs\": [\"zero1\", \"zero3\"], \"platforms\": \"dgx-a100-80g\", \"gpus\": [8, 16],\n"
    " \"overrides\": {\"nvlink.bw_bytes_per_s\": [100e9, 200e9]}}\n";

static void write_text(const char *name, const char *text, size_t n)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The file's text, malloc'd ("" when absent). */
static char *read_text(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 1);
    size_t n = 0;
    if (f == NULL)
        return text;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        text = realloc(text, n + got + 1);
        memcpy(text + n, chunk, got);
        n += got;
        text[n] = '\0';
    }
    fclose(f);
    return text;
}

/* Runs `zerosim sweep ARGS...` in dir; stdout to stdout.txt, stderr to stderr.txt. Returns
 * the exit code. */
static int sweep(const char *first, ...)
{
    const char *argv[32] = {"zerosim", "sweep", first};
    int n = 3;
    va_list ap;
    va_start(ap, first);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 31;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        int out = open("stdout.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open("stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0)
            _exit(126);
        dup2(out, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        execv(zerosim, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status))
        fail_msg("zerosim sweep died of signal %d", WTERMSIG(status));
    return WEXITSTATUS(status);
}

static int run_ok(int rc)
{
    if (rc != 0) {
        char *err = read_text("stderr.txt");
        fail_msg("zerosim sweep exited with %d: %s", rc, err);
    }
    return rc;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text from line `from` on, sorted and joined: rows in any order compare
 * equal. malloc'd. */
static char *sorted_rows(const char *text, size_t from)
{
    size_t n = count_lines(text), k = 0;
    char **lines = calloc(n + 1, sizeof *lines);
    char *copy = strdup(text);
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        lines[k++] = line;
    size_t skip = from < k ? from : k;
    qsort(lines + skip, k - skip, sizeof *lines, compare_strings);
    size_t size = strlen(text) + 2;
    char *out = calloc(1, size);
    for (size_t i = skip; i < k; i++) {
        strcat(out, lines[i]);
        strcat(out, "\n");
    }
    free(lines);
    free(copy);
    return out;
}

/* The first `n` lines of text and `torn` bytes of the next one. malloc'd. */
static char *head(const char *text, size_t n, size_t torn)
{
    const char *p = text;
    for (size_t i = 0; i < n && p; i++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    assert_non_null(p);
    size_t len = (size_t)(p - text) + torn;
    assert_true(len < strlen(text));
    return strndup(text, len);
}

static int group_setup(void **state)
{
    (void)state;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    *strrchr(self, '/') = '\0';
    snprintf(zerosim, sizeof zerosim, "%s/../zerosim", self);
    if (access(zerosim, X_OK) != 0) {
        fprintf(stderr, "test_sweep: %s: no zerosim executable there\n", zerosim);
        return -1;
    }
    setenv("ZEROSIM_DATA_DIR", ZEROSIM_SOURCE_DIR, 0);
    if (mkdtemp(dir) == NULL)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
    return 0;
}

static void test_sweep_jobs_do_not_change_results(void **state)
{
    (void)state;
    write_text("run.json", run_grid, sizeof run_grid - 1);
    run_ok(sweep("run.json", "-j", "1", "--out", "j1.csv", NULL));
    run_ok(sweep("run.json", "-j", "2", "--out", "j2.csv", NULL));
    char *j1 = read_text("j1.csv"), *j2 = read_text("j2.csv");
    assert_int_equal(count_lines(j1), 1 + 12);
    char *s1 = sorted_rows(j1, 1), *s2 = sorted_rows(j2, 1);
    assert_string_equal(s1, s2);
    assert_memory_equal(j1, j2, (size_t)(strchr(j1, '\n') - j1));
    /* Out of memory is a row like any other; a failed point is a row with its message. */
    assert_non_null(strstr(j1, ",ok,3,"));
    assert_non_null(strstr(j1, ",false,gpu,"));
    assert_non_null(strstr(j1, ",error,2,"));
    assert_non_null(strstr(j1, "--gpus 3: expected a multiple of 2 GPUs per node"));
    free(s1);
    free(s2);
    free(j1);
    free(j2);

    write_text("estimate.json", estimate_grid, sizeof estimate_grid - 1);
    run_ok(sweep("estimate.json", "--out", "e1.jsonl", NULL));
    run_ok(sweep("estimate.json", "-j", "3", "--out", "e3.jsonl", NULL));
    char *e1 = read_text("e1.jsonl"), *e3 = read_text("e3.jsonl");
    assert_int_equal(count_lines(e1), 16);
    s1 = sorted_rows(e1, 0);
    s2 = sorted_rows(e3, 0);
    assert_string_equal(s1, s2);
    assert_non_null(strstr(e1, "\"status\":\"ok\""));
    assert_null(strstr(e1, "\"status\":\"error\""));
    free(s1);
    free(s2);
    free(e1);
    free(e3);
}

static void test_sweep_resume_skips_finished_rows(void **state)
{
    (void)state;
    write_text("run.json", run_grid, sizeof run_grid - 1);
    run_ok(sweep("run.json", "--out", "full.csv", NULL));
    char *full = read_text("full.csv");

    /* Keep the header and three rows, mark the second kept row (its message column is last
     * and empty for an ok row), and tear the fourth row as an interruption would. */
    char *part = head(full, 4, 25);
    char *second = strchr(strchr(part, '\n') + 1, '\n') + 1;
    char *end = strchr(second, '\n');
    assert_memory_equal(end - 1, ",", 1);
    const char marker[] = "kept, not recomputed";
    size_t n = strlen(part) + sizeof marker + 4;
    char *marked = calloc(1, n);
    snprintf(marked, n, "%.*s\"%s\"%s", (int)(end - part), part, marker, end);
    write_text("part.csv", marked, strlen(marked));

    run_ok(sweep("run.json", "--out", "part.csv", "--dry-run", NULL));
    char *listing = read_text("stdout.txt");
    assert_int_equal(count_lines(listing), 12);
    char *err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim sweep: 12 points in the grid, 12 in this shard, 3 done\n");
    free(err);
    free(listing);

    run_ok(sweep("run.json", "-j", "2", "--out", "part.csv", NULL));
    err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim sweep: part.csv: dropped an incomplete last row (an "
                             "interrupted write); its point runs again\n"
                             "zerosim sweep: 12 of 12 points: 9 computed (4 errors, 2 do not "
                             "fit), 3 already in part.csv\n");
    free(err);
    char *resumed = read_text("part.csv");
    assert_int_equal(count_lines(resumed), 13);
    /* The marked row was kept as it was: not computed again. */
    char *at = strstr(resumed, marker);
    assert_non_null(at);
    assert_null(strstr(at + 1, marker));
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", marker);
    char *hit = strstr(resumed, quoted);
    memmove(hit, hit + strlen(quoted), strlen(hit + strlen(quoted)) + 1);
    char *s_full = sorted_rows(full, 0), *s_resumed = sorted_rows(resumed, 0);
    assert_string_equal(s_full, s_resumed);
    /* Nothing left to do. */
    run_ok(sweep("run.json", "--out", "part.csv", NULL));
    err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim sweep: 12 of 12 points: 0 computed (0 errors, 0 do not "
                             "fit), 12 already in part.csv\n");
    free(err);
    free(s_full);
    free(s_resumed);
    free(resumed);
    free(marked);
    free(part);

    /* JSONL resumes the same way. */
    write_text("estimate.json", estimate_grid, sizeof estimate_grid - 1);
    run_ok(sweep("estimate.json", "--out", "all.jsonl", NULL));
    char *all = read_text("all.jsonl");
    part = head(all, 5, 40);
    write_text("some.jsonl", part, strlen(part));
    run_ok(sweep("estimate.json", "-j", "2", "--out", "some.jsonl", NULL));
    char *some = read_text("some.jsonl");
    s_full = sorted_rows(all, 0);
    s_resumed = sorted_rows(some, 0);
    assert_string_equal(s_full, s_resumed);
    free(s_full);
    free(s_resumed);
    free(some);
    free(part);
    free(all);
    free(full);
}

static void test_sweep_shards_partition_the_grid(void **state)
{
    (void)state;
    write_text("run.json", run_grid, sizeof run_grid - 1);
    run_ok(sweep("run.json", "--out", "whole.csv", NULL));
    run_ok(sweep("run.json", "--shard", "0/2", "--out", "s0.csv", NULL));
    run_ok(sweep("run.json", "--shard", "1/2", "-j", "2", "--out", "s1.csv", NULL));
    char *whole = read_text("whole.csv"), *s0 = read_text("s0.csv"), *s1 = read_text("s1.csv");
    assert_int_equal(count_lines(s0), 1 + 6);
    assert_int_equal(count_lines(s1), 1 + 6);
    /* Shard I holds the ids congruent to I. */
    for (const char *p = strchr(s0, '\n') + 1; *p; p = strchr(p, '\n') + 1)
        assert_int_equal(atoi(p) % 2, 0);
    for (const char *p = strchr(s1, '\n') + 1; *p; p = strchr(p, '\n') + 1)
        assert_int_equal(atoi(p) % 2, 1);
    /* Header once, then both shards' rows: the whole grid. */
    size_t n = strlen(s0) + strlen(s1) + 1;
    char *both = calloc(1, n);
    strcat(both, s0);
    strcat(both, strchr(s1, '\n') + 1);
    char *a = sorted_rows(whole, 1), *b = sorted_rows(both, 1);
    assert_string_equal(a, b);
    assert_memory_equal(whole, s1, (size_t)(strchr(whole, '\n') - whole));
    free(a);
    free(b);
    free(both);
    free(whole);
    free(s0);
    free(s1);
}

static void test_sweep_command_line_and_input_errors(void **state)
{
    (void)state;
    write_text("run.json", run_grid, sizeof run_grid - 1);
    assert_int_equal(sweep("--out", "x.csv", NULL), 2);
    assert_int_equal(sweep("run.json", "--shard", "2/2", NULL), 2);
    assert_int_equal(sweep("run.json", "--shard", "1", NULL), 2);
    assert_int_equal(sweep("run.json", "-j", "0", NULL), 2);
    assert_int_equal(sweep("run.json", "--out", "x.txt", NULL), 2);
    assert_int_equal(sweep("run.json", "--out", "x.csv", "--format", "jsonl", NULL), 2);
    assert_int_equal(sweep("run.json", "run.json", NULL), 2);
    assert_int_equal(sweep("run.json", "--jobs", "2", NULL), 2);
    char *err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim sweep: unknown option \"--jobs\" (see zerosim sweep "
                             "--help)\n");
    free(err);
    write_text("bad.json", "{\"models\": []}", 14);
    assert_int_equal(sweep("bad.json", NULL), 1);
    assert_int_equal(sweep("missing.json", NULL), 1);
    /* An output written by another grid is not appended to. */
    write_text("estimate.json", estimate_grid, sizeof estimate_grid - 1);
    run_ok(sweep("estimate.json", "--out", "other.csv", NULL));
    assert_int_equal(sweep("run.json", "--out", "other.csv", NULL), 1);
    err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim: other.csv:1: expected the CSV header of this grid's "
                             "columns, got another one (a different grid or command wrote it: "
                             "use another --out)\n");
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_jobs_do_not_change_results),
        cmocka_unit_test(test_sweep_resume_skips_finished_rows),
        cmocka_unit_test(test_sweep_shards_partition_the_grid),
        cmocka_unit_test(test_sweep_command_line_and_input_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
