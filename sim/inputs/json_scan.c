/*
 * json_scan.c - UTF-8, duplicate keys and overflowing numbers in a JSON text (see json_scan.h).
 *
 * A small recursive walk over well-formed JSON: strings are skipped (and decoded when they are
 * keys), each object collects its keys and, when it closes, sorts them to find a repeat.
 * Depth is bounded by the input's nesting, which cJSON already limited (CJSON_NESTING_LIMIT).
 */
#include "json_scan.h"

#include "../common/utf8.h"
#include "../common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Scan {
    const char *file, *text;
    size_t n, at;
    char path[512]; /* the dotted path of the value being read */
    Err *err;
} Scan;

typedef struct Key {
    char *name; /* decoded */
    size_t at;  /* offset of its opening quote */
} Key;

static void position(const Scan *s, size_t at, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < at && i < s->n; i++) {
        if (s->text[i] == '\n') {
            ++*line;
            *column = 1;
        } else if (((unsigned char)s->text[i] & 0xC0) != 0x80) { /* count characters */
            ++*column;
        }
    }
}

static void skip_space(Scan *s)
{
    while (s->at < s->n && (s->text[s->at] == ' ' || s->text[s->at] == '\t' ||
                            s->text[s->at] == '\n' || s->text[s->at] == '\r'))
        s->at++;
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v = v * 16 + (unsigned)(c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
    }
    return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Skips the string at s->at (its opening quote); with out_decoded, returns its decoded text
 * (malloc'd). The text is well-formed, so every escape is complete. */
static void read_string(Scan *s, char **out_decoded)
{
    size_t start = ++s->at;
    while (s->at < s->n && s->text[s->at] != '"')
        s->at += s->text[s->at] == '\\' ? 2 : 1;
    size_t end = s->at < s->n ? s->at : s->n;
    s->at = end + 1;
    if (out_decoded == NULL)
        return;
    char *d = xmalloc(end - start + 1);
    size_t o = 0;
    for (size_t i = start; i < end; i++) {
        char c = s->text[i];
        if (c != '\\' || i + 1 >= end) {
            d[o++] = c;
            continue;
        }
        c = s->text[++i];
        switch (c) {
        case 'b': d[o++] = '\b'; break;
        case 'f': d[o++] = '\f'; break;
        case 'n': d[o++] = '\n'; break;
        case 'r': d[o++] = '\r'; break;
        case 't': d[o++] = '\t'; break;
        case 'u':
            if (i + 4 < end) {
                unsigned cp = hex4(s->text + i + 1);
                i += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < end && s->text[i + 1] == '\\' &&
                    s->text[i + 2] == 'u') {
                    unsigned lo = hex4(s->text + i + 3);
                    if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        i += 6;
                    }
                }
                o += put_utf8(d + o, cp); /* 6 escaped bytes never decode to more than 4 */
            }
            break;
        default: d[o++] = c; /* \" \\ \/ */
        }
    }
    d[o] = '\0';
    *out_decoded = d;
}

static int compare_keys(const void *a, const void *b)
{
    const Key *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

static int scan_value(Scan *s);

static int scan_object(Scan *s)
{
    s->at++; /* '{' */
    Key *keys = NULL;
    size_t n_keys = 0, cap = 0;
    const size_t path_len = strlen(s->path);
    int rc = 0;
    for (;;) {
        skip_space(s);
        if (s->at >= s->n || s->text[s->at] == '}')
            break;
        if (s->text[s->at] == ',') {
            s->at++;
            continue;
        }
        if (n_keys == cap)
            keys = xrealloc(keys, (cap = cap ? 2 * cap : 16) * sizeof *keys);
        keys[n_keys].at = s->at;
        read_string(s, &keys[n_keys].name);
        snprintf(s->path + path_len, sizeof s->path - path_len, "%s%s", path_len ? "." : "",
                 keys[n_keys].name);
        n_keys++;
        skip_space(s);
        s->at++; /* ':' */
        skip_space(s);
        if ((rc = scan_value(s)) != 0)
            break;
    }
    s->at++; /* '}' */
    if (rc == 0 && n_keys > 1) {
        qsort(keys, n_keys, sizeof *keys, compare_keys);
        for (size_t i = 1; i < n_keys && rc == 0; i++) {
            if (strcmp(keys[i].name, keys[i - 1].name) != 0)
                continue;
            int line, column, first_line, first_column;
            position(s, keys[i].at, &line, &column);
            position(s, keys[i - 1].at, &first_line, &first_column);
            snprintf(s->path + path_len, sizeof s->path - path_len, "%s%s", path_len ? "." : "",
                     keys[i].name);
            rc = err_set(s->err,
                         "%s:%d:%d: %s: expected each key once in an object, got it again "
                         "(first at %d:%d; DeepSpeed and HuggingFace would take the last)",
                         s->file, line, column, s->path, first_line, first_column);
        }
    }
    s->path[path_len] = '\0';
    for (size_t i = 0; i < n_keys; i++)
        free(keys[i].name);
    free(keys);
    return rc;
}

static int scan_array(Scan *s)
{
    s->at++; /* '[' */
    for (;;) {
        skip_space(s);
        if (s->at >= s->n || s->text[s->at] == ']')
            break;
        if (s->text[s->at] == ',') {
            s->at++;
            continue;
        }
        if (scan_value(s))
            return -1;
    }
    s->at++;
    return 0;
}

static int scan_number(Scan *s)
{
    size_t start = s->at;
    while (s->at < s->n && strchr("+-0123456789.eE", s->text[s->at]) != NULL)
        s->at++;
    char buf[64];
    size_t len = s->at - start < sizeof buf - 1 ? s->at - start : sizeof buf - 1;
    memcpy(buf, s->text + start, len);
    buf[len] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    if (!isinf(v)) /* overflow gives HUGE_VAL; underflow to 0 is a harmless tiny number */
        return 0;
    int line, column;
    position(s, start, &line, &column);
    return err_set(s->err, "%s:%d:%d: %s: expected a number a double can hold, got %s",
                   s->file, line, column, s->path[0] ? s->path : "(top level)", buf);
}

static int scan_value(Scan *s)
{
    skip_space(s);
    if (s->at >= s->n)
        return 0;
    switch (s->text[s->at]) {
    case '{': return scan_object(s);
    case '[': return scan_array(s);
    case '"': read_string(s, NULL); return 0;
    case 't': s->at += 4; return 0;
    case 'f': s->at += 5; return 0;
    case 'n': s->at += 4; return 0;
    default: return scan_number(s);
    }
}

int json_scan_check(const char *file, const char *text, size_t n_bytes, Err *err)
{
    Scan s = {.file = file, .text = text, .n = n_bytes, .err = err};
    size_t bad = utf8_first_invalid(text, n_bytes);
    if (bad < n_bytes) {
        int line, column;
        position(&s, bad, &line, &column);
        return err_set(err, "%s:%d:%d: expected UTF-8 text, got the byte 0x%02x", file, line,
                       column, (unsigned char)text[bad]);
    }
    return scan_value(&s);
}
