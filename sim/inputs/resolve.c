/*
 * resolve.c - path-or-preset-name resolution (see resolve.h).
 */
#include "resolve.h"

#include "../common/xalloc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int resolve_is_name(const char *arg)
{
    return strchr(arg, '/') == NULL && !ends_with(arg, ".json");
}

const char *resolve_input_path(const char *arg, const char *data_dir, const char *subdir, char *out,
                               size_t out_size)
{
    if (!resolve_is_name(arg) || data_dir == NULL)
        snprintf(out, out_size, "%s", arg);
    else
        snprintf(out, out_size, "%s/%s/%s.json", data_dir, subdir, arg);
    return out;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

const char *resolve_list_names(const char *data_dir, const char *subdir, char *out, size_t out_size)
{
    out[0] = '\0';
    char dir_path[1024];
    snprintf(dir_path, sizeof dir_path, "%s/%s", data_dir ? data_dir : ".", subdir);
    DIR *dir = opendir(dir_path);
    if (dir == NULL)
        return out;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json"))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n] = xstrdup(e->d_name);
        names[n][strlen(names[n]) - 5] = '\0';
        n++;
    }
    closedir(dir);
    qsort(names, n, sizeof *names, compare_names);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (used < out_size)
            used += (size_t)snprintf(out + used, out_size - used, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
    free(names);
    return out;
}

#define MAX_INPUT_BYTES (64u * 1024u * 1024u)

char *resolve_read(const char *arg, const char *data_dir, const char *subdir, const char *what,
                   char *out_path, size_t out_path_size, size_t *out_n_bytes, Err *err)
{
    resolve_input_path(arg, data_dir, subdir, out_path, out_path_size);
    FILE *f = fopen(out_path, "rb");
    if (f == NULL) {
        if (resolve_is_name(arg) && data_dir != NULL) {
            char names[2048];
            resolve_list_names(data_dir, subdir, names, sizeof names);
            err_set(err, "%s \"%s\": expected a .json path or a shipped name (%s), got neither",
                    what, arg, names);
        } else {
            err_set(err, "%s: cannot open %s file: no such file or unreadable", out_path, what);
        }
        return NULL;
    }
    char *text = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            if (cap >= MAX_INPUT_BYTES) {
                free(text);
                fclose(f);
                err_set(err, "%s: expected a %s file under %u bytes, got a larger one", out_path,
                        what, MAX_INPUT_BYTES);
                return NULL;
            }
            cap = cap ? 2 * cap : 65536;
            text = xrealloc(text, cap);
        }
        size_t got = fread(text + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(text);
        err_set(err, "%s: cannot read %s file: I/O error (is it a directory?)", out_path, what);
        return NULL;
    }
    *out_n_bytes = n;
    return text;
}
