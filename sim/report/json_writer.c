/*
 * json_writer.c - streaming JSON output (see json_writer.h).
 */
#include "json_writer.h"

#include "../common/utf8.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void json_writer_init(JsonWriter *w, FILE *out, bool is_pretty)
{
    w->out = out;
    w->depth = 0;
    w->needs_comma[0] = false;
    w->after_key = false;
    w->is_pretty = is_pretty;
}

static void newline(JsonWriter *w)
{
    if (!w->is_pretty)
        return;
    fputc('\n', w->out);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->out);
}

/* Separator before a value (or a key) at the current level. */
static void before_value(JsonWriter *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->needs_comma[w->depth])
        fputc(',', w->out);
    if (w->depth > 0)
        newline(w);
    w->needs_comma[w->depth] = true;
}

static void open(JsonWriter *w, char c)
{
    before_value(w);
    fputc(c, w->out);
    assert(w->depth + 1 < JSON_WRITER_MAX_DEPTH);
    w->depth++;
    w->needs_comma[w->depth] = false;
}

static void close(JsonWriter *w, char c)
{
    assert(w->depth > 0 && !w->after_key);
    bool had_items = w->needs_comma[w->depth];
    w->depth--;
    if (had_items)
        newline(w);
    fputc(c, w->out);
    if (w->depth == 0 && w->is_pretty)
        fputc('\n', w->out);
}

void json_begin_object(JsonWriter *w)
{
    open(w, '{');
}
void json_end_object(JsonWriter *w)
{
    close(w, '}');
}
void json_begin_array(JsonWriter *w)
{
    open(w, '[');
}
void json_end_array(JsonWriter *w)
{
    close(w, ']');
}

/* A JSON string: escapes what JSON requires, and a byte that is not valid UTF-8 (a path or a
 * name from the user's files) becomes U+FFFD, so that the report always parses. */
static void escaped(FILE *out, const char *s)
{
    fputc('"', out);
    const size_t n = strlen(s);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x80) {
            size_t len = utf8_sequence_length(p, n - (size_t)(p - (const unsigned char *)s));
            if (len == 0) {
                fputs("\\ufffd", out);
            } else {
                fwrite(p, 1, len, out);
                p += len - 1;
            }
            continue;
        }
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void json_key(JsonWriter *w, const char *key)
{
    assert(!w->after_key);
    before_value(w);
    escaped(w->out, key);
    fputs(w->is_pretty ? ": " : ":", w->out);
    w->after_key = true;
}

void json_string(JsonWriter *w, const char *s)
{
    before_value(w);
    escaped(w->out, s);
}

void json_u64(JsonWriter *w, uint64_t v)
{
    before_value(w);
    fprintf(w->out, "%" PRIu64, v);
}

void json_double(JsonWriter *w, double v)
{
    before_value(w);
    if (!isfinite(v)) {
        fputs("null", w->out);
        return;
    }
    /* The shortest of %.15g and %.17g that reads back as the same double. */
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, w->out);
}

void json_bool(JsonWriter *w, bool v)
{
    before_value(w);
    fputs(v ? "true" : "false", w->out);
}

void json_null(JsonWriter *w)
{
    before_value(w);
    fputs("null", w->out);
}

void json_kv_string(JsonWriter *w, const char *key, const char *s)
{
    json_key(w, key);
    json_string(w, s);
}

void json_kv_u64(JsonWriter *w, const char *key, uint64_t v)
{
    json_key(w, key);
    json_u64(w, v);
}

void json_kv_double(JsonWriter *w, const char *key, double v)
{
    json_key(w, key);
    json_double(w, v);
}

void json_kv_bool(JsonWriter *w, const char *key, bool v)
{
    json_key(w, key);
    json_bool(w, v);
}
