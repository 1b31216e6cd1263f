/*
 * jsonfile.c - JSON loading, key vocabulary checks and typed readers (see jsonfile.h).
 */
#include "jsonfile.h"

#include "../common/suggest.h"
#include "../common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

cJSON *jsonfile_parse(const char *file, const char *text, size_t n_bytes, Err *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, n_bytes, &end, 0);
    if (root != NULL) {
        /* cJSON stops after the first value: anything but whitespace after it is an error. */
        const char *p = end;
        while (p < text + n_bytes && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        if (p == text + n_bytes)
            return root;
        cJSON_Delete(root);
        end = p;
    }
    if (end == NULL || end < text || end > text + n_bytes)
        end = text + n_bytes;
    int line = 1, column = 1;
    for (const char *p = text; p < end; p++) {
        if (*p == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    char near[24] = "end of file";
    if (end < text + n_bytes) {
        size_t n = 0;
        for (const char *p = end; p < text + n_bytes && n < 16 && *p != '\n' && *p != '\r'; p++)
            near[n++] = (*p >= 32 && *p < 127) ? *p : '?';
        near[n] = '\0';
        if (n == 0)
            snprintf(near, sizeof near, "end of line");
    }
    err_set(err, "%s:%d:%d: JSON syntax error: expected a valid JSON value, got '%s'", file,
            line, column, near);
    return NULL;
}

const char *jsonfile_key_path(JsonAt at, const char *key, char *buf, size_t buf_size)
{
    if (at.path == NULL || at.path[0] == '\0')
        snprintf(buf, buf_size, "%s", key);
    else
        snprintf(buf, buf_size, "%s.%s", at.path, key);
    return buf;
}

const char *jsonfile_describe(const cJSON *value, char *buf, size_t buf_size)
{
    if (value == NULL) {
        snprintf(buf, buf_size, "nothing");
        return buf;
    }
    if (cJSON_IsObject(value)) {
        snprintf(buf, buf_size, "an object");
        return buf;
    }
    if (cJSON_IsArray(value)) {
        snprintf(buf, buf_size, "an array");
        return buf;
    }
    char *s = cJSON_PrintUnformatted(value);
    if (s == NULL) {
        snprintf(buf, buf_size, "an unprintable value");
        return buf;
    }
    if (strlen(s) + 1 > buf_size && buf_size > 4)
        snprintf(buf, buf_size, "%.*s...", (int)(buf_size - 4), s);
    else
        snprintf(buf, buf_size, "%s", s);
    free(s);
    return buf;
}

static int fail_value(const cJSON *value, const char *key, JsonAt at, const char *expected,
                      Err *err)
{
    char path[256], found[64];
    return err_set(err, "%s: %s: expected %s, got %s", at.file,
                   jsonfile_key_path(at, key, path, sizeof path), expected,
                   jsonfile_describe(value, found, sizeof found));
}

int jsonfile_expect_object(const cJSON *value, JsonAt at, Err *err)
{
    if (cJSON_IsObject(value))
        return 0;
    char found[64];
    return err_set(err, "%s: %s: expected an object, got %s", at.file,
                   (at.path && at.path[0]) ? at.path : "(top level)",
                   jsonfile_describe(value, found, sizeof found));
}

static bool in_list(const char *key, const char *const *list)
{
    for (size_t i = 0; list != NULL && list[i] != NULL; i++)
        if (strcmp(key, list[i]) == 0)
            return true;
    return false;
}

int jsonfile_check_keys(const cJSON *obj, JsonAt at, const char *const *modelled,
                        const char *const *not_modelled, StrList *warnings, Err *err)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, obj)
    {
        const char *key = item->string ? item->string : "";
        char path[256];
        if (in_list(key, modelled))
            continue;
        if (in_list(key, not_modelled)) {
            if (warnings != NULL)
                strlist_addf(warnings, "%s", jsonfile_key_path(at, key, path, sizeof path));
            continue;
        }
        const char *best = suggest_closest(key, modelled);
        if (best == NULL && not_modelled != NULL)
            best = suggest_closest(key, not_modelled);
        jsonfile_key_path(at, key, path, sizeof path);
        if (best != NULL)
            return err_set(err, "%s: %s: expected a known key, got unknown key \"%s\" (did you "
                           "mean \"%s\"?)", at.file, path, key, best);
        return err_set(err, "%s: %s: expected a known key, got unknown key \"%s\"", at.file,
                       path, key);
    }
    return 0;
}

static const cJSON *lookup(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNull(v) ? NULL : v;
}

int jsonfile_get_u64(const cJSON *obj, const char *key, JsonAt at, uint64_t min, uint64_t max,
                     uint64_t *out, Err *err)
{
    const cJSON *v = lookup(obj, key);
    if (v == NULL)
        return 0;
    char expected[96];
    if (max == UINT64_MAX)
        snprintf(expected, sizeof expected, "integer >= %llu", (unsigned long long)min);
    else
        snprintf(expected, sizeof expected, "integer in [%llu, %llu]", (unsigned long long)min,
                 (unsigned long long)max);
    if (!cJSON_IsNumber(v))
        return fail_value(v, key, at, expected, err);
    double d = v->valuedouble;
    /* 1.8e19 is the largest double below 2^64; configs write sizes like 5e8 as doubles. */
    if (!isfinite(d) || d != floor(d) || d < (double)min || d > 1.8e19 || d > (double)max)
        return fail_value(v, key, at, expected, err);
    *out = (uint64_t)d;
    return 1;
}

int jsonfile_get_double(const cJSON *obj, const char *key, JsonAt at, double min, double max,
                        double *out, Err *err)
{
    const cJSON *v = lookup(obj, key);
    if (v == NULL)
        return 0;
    char expected[96];
    snprintf(expected, sizeof expected, "number in [%g, %g]", min, max);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min ||
        v->valuedouble > max)
        return fail_value(v, key, at, expected, err);
    *out = v->valuedouble;
    return 1;
}

int jsonfile_get_bool(const cJSON *obj, const char *key, JsonAt at, bool *out, Err *err)
{
    const cJSON *v = lookup(obj, key);
    if (v == NULL)
        return 0;
    if (!cJSON_IsBool(v))
        return fail_value(v, key, at, "true or false", err);
    *out = cJSON_IsTrue(v);
    return 1;
}

int jsonfile_get_string(const cJSON *obj, const char *key, JsonAt at, char *out,
                        size_t out_size, Err *err)
{
    const cJSON *v = lookup(obj, key);
    if (v == NULL)
        return 0;
    if (!cJSON_IsString(v) || v->valuestring == NULL)
        return fail_value(v, key, at, "a string", err);
    if (strlen(v->valuestring) >= out_size) {
        char expected[64];
        snprintf(expected, sizeof expected, "a string of at most %zu characters", out_size - 1);
        return fail_value(v, key, at, expected, err);
    }
    snprintf(out, out_size, "%s", v->valuestring);
    return 1;
}

int jsonfile_get_enum(const cJSON *obj, const char *key, JsonAt at, const char *const *values,
                      int *out, Err *err)
{
    const cJSON *v = lookup(obj, key);
    if (v == NULL)
        return 0;
    char expected[256];
    size_t used = (size_t)snprintf(expected, sizeof expected, "one of");
    for (size_t i = 0; values[i] != NULL && used < sizeof expected; i++)
        used += (size_t)snprintf(expected + used, sizeof expected - used, "%s \"%s\"",
                                 i ? "," : "", values[i]);
    if (!cJSON_IsString(v) || v->valuestring == NULL)
        return fail_value(v, key, at, expected, err);
    for (int i = 0; values[i] != NULL; i++) {
        if (strcasecmp(v->valuestring, values[i]) == 0) {
            *out = i;
            return 1;
        }
    }
    return fail_value(v, key, at, expected, err);
}

int jsonfile_require(int rc, const char *key, JsonAt at, const char *expected, Err *err)
{
    if (rc > 0)
        return 0;
    if (rc == 0) {
        char path[256];
        return err_set(err, "%s: %s: expected %s, got nothing (key missing)", at.file,
                       jsonfile_key_path(at, key, path, sizeof path), expected);
    }
    return -1;
}
