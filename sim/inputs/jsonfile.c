/*
 * jsonfile.c - JSON loading, key vocabulary checks and typed readers (see jsonfile.h).
 */
#include "jsonfile.h"

#include "json_scan.h"

#include "../common/suggest.h"
#include "../common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* cJSON points one byte past the offending one when an object key fails to parse (a trailing
 * comma before '}', an unquoted key). Moves end back onto it: when the byte before end is not
 * whitespace or a quote, follows '{' or ',' and sits inside an object (not an array). */
static const char *key_error_position(const char *text, const char *end)
{
    if (end <= text)
        return end;
    const char *k = end - 1;
    if ((unsigned char)*k <= 32 || *k == '"')
        return end;
    const char *prev = k;
    while (prev > text && (unsigned char)prev[-1] <= 32)
        prev--;
    if (prev == text || (prev[-1] != '{' && prev[-1] != ','))
        return end;
    /* The innermost bracket open at k: scan from the start, skipping strings. */
    size_t depth = 0, cap = 64;
    char *stack = xmalloc(cap);
    bool in_string = false;
    for (const char *p = text; p < k; p++) {
        if (in_string) {
            if (*p == '\\' && p + 1 < k)
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '{' || *p == '[') {
            if (depth == cap)
                stack = xrealloc(stack, cap *= 2);
            stack[depth++] = *p;
        } else if ((*p == '}' || *p == ']') && depth > 0) {
            depth--;
        }
    }
    bool in_object = depth > 0 && stack[depth - 1] == '{';
    free(stack);
    return in_object ? k : end;
}

cJSON *jsonfile_parse(const char *file, const char *text, size_t n_bytes, Err *err)
{
    const char *end = NULL;
    bool is_trailing = false;
    cJSON *root = cJSON_ParseWithLengthOpts(text, n_bytes, &end, 0);
    if (root != NULL) {
        /* cJSON stops after the first value: anything but whitespace after it is an error. */
        const char *p = end;
        while (p < text + n_bytes && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        if (p == text + n_bytes) {
            if (json_scan_check(file, text, n_bytes, err) == 0)
                return root;
            cJSON_Delete(root);
            return NULL;
        }
        cJSON_Delete(root);
        end = p;
        is_trailing = true;
    } else if (n_bytes > 0) {
        /* When the text ends too early cJSON points at its last byte, not past it. Parsing it
         * again with two newlines appended tells the cases apart: a text that ends too early
         * then fails at the second newline (or its end), any other error no later than at
         * the first. */
        char *copy = xmalloc(n_bytes + 2);
        memcpy(copy, text, n_bytes);
        copy[n_bytes] = '\n';
        copy[n_bytes + 1] = '\n';
        const char *end2 = NULL;
        cJSON *again = cJSON_ParseWithLengthOpts(copy, n_bytes + 2, &end2, 0);
        bool is_at_eof = again == NULL && end2 != NULL && end2 >= copy + n_bytes + 1;
        cJSON_Delete(again);
        free(copy);
        if (is_at_eof)
            end = text + n_bytes;
        else if (end != NULL && end >= text && end <= text + n_bytes)
            end = key_error_position(text, end);
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
        near[n++] = '\'';
        for (const char *p = end; p < text + n_bytes && n < 17 && *p != '\n' && *p != '\r'; p++)
            near[n++] = (*p >= 32 && *p < 127) ? *p : '?';
        near[n++] = '\'';
        near[n] = '\0';
        if (n == 2)
            snprintf(near, sizeof near, "end of line");
    }
    err_set(err, "%s:%d:%d: JSON syntax error: expected %s, got %s", file, line, column,
            is_trailing ? "nothing after the top-level value" : "a valid JSON value", near);
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
            return err_set(err,
                           "%s: %s: expected a known key, got unknown key \"%s\" (did you "
                           "mean \"%s\"?)",
                           at.file, path, key, best);
        return err_set(err, "%s: %s: expected a known key, got unknown key \"%s\"", at.file, path,
                       key);
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
    double d = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
    /* A bound of 2^53 or more only guards against overflow: the message names it only to a
     * value beyond it, and then in short form. */
    if (max < (1ull << 53))
        snprintf(expected, sizeof expected, "integer in [%llu, %llu]", (unsigned long long)min,
                 (unsigned long long)max);
    else if (max != UINT64_MAX && d > (double)max)
        snprintf(expected, sizeof expected, "integer in [%llu, %.3g]", (unsigned long long)min,
                 (double)max);
    else
        snprintf(expected, sizeof expected, "integer >= %llu", (unsigned long long)min);
    if (!cJSON_IsNumber(v))
        return fail_value(v, key, at, expected, err);
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

int jsonfile_get_string(const cJSON *obj, const char *key, JsonAt at, char *out, size_t out_size,
                        Err *err)
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
        used += (size_t)snprintf(expected + used, sizeof expected - used, "%s \"%s\"", i ? "," : "",
                                 values[i]);
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
