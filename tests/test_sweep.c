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
#include <signal.h>
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

/* Starts `zerosim sweep` with argv (from argv[2] on) in dir, TMPDIR=dir; stdout to
 * stdout.txt, stderr to stderr.txt. Returns the pid. */
static pid_t start_sweep(const char **argv)
{
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
        setenv("TMPDIR", dir, 1);
        execv(zerosim, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Runs `zerosim sweep ARGS...` (NULL-terminated) as start_sweep does. Returns the exit code. */
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
    pid_t pid = start_sweep(argv);
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
    assert_int_equal(count_lines(j1), 2 + 12); /* the sweep header, the columns, the rows */
    assert_memory_equal(j1, "# zerosim-sweep {\"format\":2,", 28);
    char *s1 = sorted_rows(j1, 2), *s2 = sorted_rows(j2, 2);
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
    assert_int_equal(count_lines(e1), 1 + 16);
    assert_memory_equal(e1, "{\"zerosim_sweep\":{", 17);
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

    /* Keep the headers and three rows, mark the second kept row (its message column is last
     * and empty for an ok row), and tear the fourth row as an interruption would. */
    char *part = head(full, 5, 25);
    char *second = strchr(strchr(strchr(part, '\n') + 1, '\n') + 1, '\n') + 1;
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
    assert_int_equal(count_lines(resumed), 14);
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
    /* ids are digests of the keys, so the shards split 12 points unevenly but wholly */
    assert_int_equal(count_lines(s0) - 2 + count_lines(s1) - 2, 12);
    assert_true(count_lines(s0) > 2 && count_lines(s1) > 2);
    assert_non_null(strstr(s1, "\"shard\":\"1/2\""));
    /* Shard I holds the ids congruent to I. */
    const char *rows0 = strchr(strchr(s0, '\n') + 1, '\n') + 1;
    const char *rows1 = strchr(strchr(s1, '\n') + 1, '\n') + 1;
    for (const char *p = rows0; *p; p = strchr(p, '\n') + 1)
        assert_int_equal(strtoull(p, NULL, 10) % 2, 0);
    for (const char *p = rows1; *p; p = strchr(p, '\n') + 1)
        assert_int_equal(strtoull(p, NULL, 10) % 2, 1);
    /* Both shards' rows: the whole grid, under the same columns. */
    size_t n = strlen(s0) + strlen(s1) + 1;
    char *both = calloc(1, n);
    strcat(both, rows0);
    strcat(both, rows1);
    char *a = sorted_rows(whole, 2), *b = sorted_rows(both, 0);
    assert_string_equal(a, b);
    const char *columns = strchr(whole, '\n') + 1;
    assert_memory_equal(columns, strchr(s1, '\n') + 1, (size_t)(strchr(columns, '\n') - columns));
    free(a);
    free(b);
    free(both);
    free(whole);
    free(s0);
    free(s1);
}

/* Copies a shipped file into dir under another name. */
static void copy_in(const char *from, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", ZEROSIM_SOURCE_DIR, from);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[65536];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    write_text(name, text, n);
}

/* Counts the entries of dir whose name starts with prefix. */
static size_t count_entries(const char *prefix)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* Issue 15: a resumed sweep keeps only rows it would write now. A row damaged in the middle
 * and a row twice are refused, saying what and where; after the grid is edited or an input
 * changed behind the same name, the rows still valid are kept and the rest computed, to what
 * an uninterrupted sweep writes; a sweep killed with SIGKILL resumes to the uninterrupted result and its derived
 * inputs' directory is cleaned up by the next run. */
static void test_sweep_resume_keeps_only_what_it_would_write(void **state)
{
    (void)state;
    static const char grid[] =
        "{\"models\": [\"m.json\"], \"configs\": [\"c.json\", \"zero3\"],\n"
        " \"platforms\": [\"workstation-2x-titan-rtx\"], \"gpus\": [1, 2],\n"
        " \"micro_batch\": [1, 2, 4], \"seq_len\": 128}\n";
    copy_in("workloads/models/gpt2-1.5b.json", "m.json");
    copy_in("workloads/ds_configs/zero2.json", "c.json");
    write_text("g.json", grid, sizeof grid - 1);
    run_ok(sweep("g.json", "--out", "ref.csv", NULL));
    char *ref = read_text("ref.csv");
    assert_int_equal(count_lines(ref), 2 + 12);

    /* a row damaged in the middle (its status) */
    char *damaged = strdup(ref);
    char *row4 = damaged;
    for (int i = 0; i < 3; i++)
        row4 = strchr(row4, '\n') + 1;
    char *ok = strstr(row4, ",ok,");
    assert_non_null(ok);
    ok[1] = 'O';
    write_text("damaged.csv", damaged, strlen(damaged));
    assert_int_equal(sweep("g.json", "--out", "damaged.csv", NULL), 1);
    char *err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim: damaged.csv:4: expected a complete row of this sweep, "
                             "got one that is not (its status is neither ok nor error): remove "
                             "that line to compute its point again\n");
    free(err);
    free(damaged);

    /* the same row twice */
    size_t n_ref = strlen(ref);
    char *twice = calloc(1, 2 * n_ref);
    memcpy(twice, ref, n_ref);
    const char *last = ref + n_ref - 1;
    while (last > ref && last[-1] != '\n')
        last--;
    strcat(twice, last);
    write_text("twice.csv", twice, strlen(twice));
    assert_int_equal(sweep("g.json", "--out", "twice.csv", NULL), 1);
    err = read_text("stderr.txt");
    assert_non_null(strstr(err, "twice.csv: expected one row per point, got two for"));
    free(err);
    free(twice);

    /* the grid edited (a value removed, one added, the list reordered): the rows of points
     * still in it are kept (ids are digests of the keys), the others dropped, the new points
     * computed; the file is then what an uninterrupted sweep of the edited grid writes */
    static const char edited[] =
        "{\"models\": [\"m.json\"], \"configs\": [\"c.json\", \"zero3\"],\n"
        " \"platforms\": [\"workstation-2x-titan-rtx\"], \"gpus\": [1, 2],\n"
        " \"micro_batch\": [4, 3, 1], \"seq_len\": 128}\n";
    write_text("g2.json", edited, sizeof edited - 1);
    run_ok(sweep("g2.json", "--out", "ref2.csv", NULL));
    char *ref2 = read_text("ref2.csv");
    write_text("edited.csv", ref, n_ref);
    run_ok(sweep("g2.json", "--out", "edited.csv", NULL));
    err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim sweep: edited.csv: the grid changed: 4 rows of points no "
                             "longer in it dropped, 8 kept\n"
                             "zerosim sweep: 12 of 12 points: 4 computed (0 errors, 2 do not "
                             "fit), 8 already in edited.csv\n");
    free(err);
    char *got = read_text("edited.csv");
    char *a = sorted_rows(ref2, 2), *b = sorted_rows(got, 2);
    assert_string_equal(a, b);
    assert_memory_equal(ref2, got, (size_t)(strchr(strchr(ref2, '\n') + 1, '\n') - ref2));
    free(a);
    free(b);
    free(got);
    free(ref2);

    /* an input changed behind the same name (bytes only: the same numbers): the rows of the
     * points that read it are computed again, the others kept. A marker in one row of each
     * config shows which. */
    char *marked = strdup(ref);
    char *zero2_row = strstr(marked, ",c.json,"), *zero3_row = strstr(marked, ",zero3,");
    assert_non_null(zero2_row);
    assert_non_null(zero3_row);
    char *ends[2] = {strchr(zero2_row, '\n'), strchr(zero3_row, '\n')};
    assert_true(ends[0][-1] == ',' && ends[1][-1] == ','); /* empty messages of ok rows */
    size_t n_marked = strlen(marked) + 64;
    char *with = calloc(1, n_marked);
    const char *from = marked;
    for (int i = ends[0] < ends[1] ? 0 : 1, k = 0; k < 2; k++, i = 1 - i) {
        strncat(with, from, (size_t)(ends[i] - from));
        strcat(with, i == 0 ? "mark-c" : "mark-zero3");
        from = ends[i];
    }
    strcat(with, from);
    write_text("changed.csv", with, strlen(with));
    char *config = read_text("c.json");
    size_t n_config = strlen(config);
    config = realloc(config, n_config + 2);
    strcpy(config + n_config, "\n");
    write_text("c.json", config, n_config + 1);
    run_ok(sweep("g.json", "--out", "ref3.csv", NULL));
    run_ok(sweep("g.json", "-j", "2", "--out", "changed.csv", NULL));
    err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim sweep: changed.csv: 6 rows were computed from inputs "
                             "that changed since (c.json): their points run again\n"
                             "zerosim sweep: 12 of 12 points: 6 computed (0 errors, 3 do not "
                             "fit), 6 already in changed.csv\n");
    free(err);
    got = read_text("changed.csv");
    assert_null(strstr(got, "mark-c"));
    assert_non_null(strstr(got, "mark-zero3"));
    char *ref3 = read_text("ref3.csv");
    assert_memory_equal(ref3, got, (size_t)(strchr(strchr(ref3, '\n') + 1, '\n') - ref3));
    char *mark = strstr(got, "mark-zero3");
    memmove(mark, mark + strlen("mark-zero3"), strlen(mark + strlen("mark-zero3")) + 1);
    a = sorted_rows(ref3, 2);
    b = sorted_rows(got, 2);
    assert_string_equal(a, b);
    free(a);
    free(b);
    free(ref3);
    free(got);
    free(config);
    free(with);
    free(marked);
    copy_in("workloads/ds_configs/zero2.json", "c.json");

    /* killed with SIGKILL, then resumed: the uninterrupted result; the derived inputs of the
     * killed run (batch sizes) are removed by the next one */
    const char *argv[] = {"zerosim", "sweep", "g.json", "-j", "2", "--out", "killed.csv", NULL};
    pid_t pid = start_sweep(argv);
    usleep(400 * 1000);
    kill(pid, SIGKILL);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    usleep(300 * 1000); /* its orphaned workers finish (their rows are lost) */
    run_ok(sweep("g.json", "-j", "2", "--out", "killed.csv", NULL));
    char *resumed = read_text("killed.csv");
    a = sorted_rows(ref, 2);
    b = sorted_rows(resumed, 2);
    assert_string_equal(a, b);
    assert_memory_equal(ref, resumed, (size_t)(strchr(ref, '\n') - ref));
    assert_int_equal(count_entries("zerosim-sweep-"), 0);
    free(a);
    free(b);
    free(resumed);
    free(ref);
}

/* Runs `zerosim sweep --merge ...` (NULL-terminated) and returns its exit code. */
#define merge(...) sweep("--merge", __VA_ARGS__)

/* Issue 20: --merge makes the shards of one sweep the file a whole sweep writes, and refuses a
 * missing shard, a point twice, and the shard of another grid. */
static void test_sweep_merge_checks_and_joins_shards(void **state)
{
    (void)state;
    write_text("run.json", run_grid, sizeof run_grid - 1);
    run_ok(sweep("run.json", "--out", "w.csv", NULL));
    run_ok(sweep("run.json", "--shard", "0/3", "--out", "m0.csv", NULL));
    run_ok(sweep("run.json", "--shard", "1/3", "--out", "m1.csv", NULL));
    run_ok(sweep("run.json", "--shard", "2/3", "-j", "2", "--out", "m2.csv", NULL));
    run_ok(merge("merged.csv", "m0.csv", "m1.csv", "m2.csv", NULL));
    char *whole = read_text("w.csv"), *merged = read_text("merged.csv");
    /* the same headers (shard 0/1) and rows, in id order */
    const char *rows = strchr(strchr(merged, '\n') + 1, '\n') + 1;
    unsigned long long previous = 0;
    for (; *rows; rows = strchr(rows, '\n') + 1) {
        unsigned long long id = strtoull(rows, NULL, 10);
        assert_true(id > previous);
        previous = id;
    }
    assert_memory_equal(whole, merged, (size_t)(strchr(strchr(whole, '\n') + 1, '\n') - whole));
    char *a = sorted_rows(whole, 2), *b = sorted_rows(merged, 2);
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* the merged file resumes as the whole sweep: nothing left to do */
    run_ok(sweep("run.json", "--out", "merged.csv", NULL));
    char *err = read_text("stderr.txt");
    assert_non_null(strstr(err, "0 computed (0 errors, 0 do not fit), 12 already in merged.csv"));
    free(err);

    assert_int_equal(merge("x.csv", "m0.csv", "m2.csv", NULL), 1);
    err = read_text("stderr.txt");
    assert_string_equal(err, "zerosim: m0.csv: expected the 3 shards of its sweep, got 2 files: "
                             "give every shard once\n");
    free(err);

    /* a point twice: a row of shard 1 repeated in its file */
    char *m1 = read_text("m1.csv");
    const char *last = m1 + strlen(m1) - 1;
    while (last > m1 && last[-1] != '\n')
        last--;
    size_t n = strlen(m1) + strlen(last) + 1;
    char *doubled = calloc(1, n);
    strcat(doubled, m1);
    strcat(doubled, last);
    write_text("d1.csv", doubled, strlen(doubled));
    assert_int_equal(merge("x.csv", "m0.csv", "d1.csv", "m2.csv", NULL), 1);
    err = read_text("stderr.txt");
    assert_non_null(strstr(err, "d1.csv and d1.csv: expected each point once, got point"));
    free(err);
    free(doubled);
    free(m1);

    /* a shard short of a row */
    m1 = read_text("m1.csv");
    char *cut = m1 + strlen(m1) - 1;
    while (cut > m1 && cut[-1] != '\n')
        cut--;
    *cut = '\0';
    write_text("short1.csv", m1, strlen(m1));
    assert_int_equal(merge("x.csv", "m0.csv", "short1.csv", "m2.csv", NULL), 1);
    err = read_text("stderr.txt");
    assert_non_null(strstr(err, "short1.csv: expected the "));
    assert_non_null(strstr(err, " points of shard 1/3, got "));
    assert_non_null(strstr(err, ": finish that shard first\n"));
    free(err);
    free(m1);

    /* a shard of another grid (its values differ) */
    static const char other[] =
        "{\"models\": [\"gpt2-1.5b\"], \"configs\": [\"zero2\", \"zero3\"],\n"
        " \"platforms\": [\"workstation-2x-titan-rtx\"], \"gpus\": [1, 2, 3],\n"
        " \"micro_batch\": [1, 4], \"seq_len\": 128,\n"
        " \"overrides\": {\"pcie.gpu_link.bw_bytes_per_s\": 6e9}}\n";
    write_text("other.json", other, sizeof other - 1);
    run_ok(sweep("other.json", "--shard", "1/3", "--out", "o1.csv", NULL));
    assert_int_equal(merge("x.csv", "m0.csv", "o1.csv", "m2.csv", NULL), 1);
    err = read_text("stderr.txt");
    assert_non_null(strstr(err, "o1.csv: expected rows of the grid run.json as it is now, got "
                                "rows of a grid that differs (other.json, 12 points)"));
    free(err);
    assert_int_equal(access("x.csv", F_OK), -1); /* nothing written on a refusal */
    free(whole);
    free(merged);
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
    assert_string_equal(err, "zerosim: other.csv: expected rows of `zerosim run`, got rows of "
                             "`zerosim estimate`: use another --out, or remove the file to start "
                             "again\n");
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_jobs_do_not_change_results),
        cmocka_unit_test(test_sweep_resume_skips_finished_rows),
        cmocka_unit_test(test_sweep_shards_partition_the_grid),
        cmocka_unit_test(test_sweep_resume_keeps_only_what_it_would_write),
        cmocka_unit_test(test_sweep_merge_checks_and_joins_shards),
        cmocka_unit_test(test_sweep_command_line_and_input_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
