/*
 * csv.c - writing and splitting CSV fields (see csv.h).
 */
#include "csv.h"

#include <string.h>

void csv_field(Buf *b, const char *s, bool is_first)
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
            buf_add(b, "\"", 1);
    }
    buf_add(b, "\"", 1);
}

int csv_split(const char *line, size_t n, StrList *out)
{
    size_t i = 0;
    Buf field = {0};
    int rc = 0;
    for (;;) {
        field.n = 0;
        buf_add(&field, "", 0);
        if (i < n && line[i] == '"') {
            bool closed = false;
            for (i++; i < n; i++) {
                if (line[i] == '"' && i + 1 < n && line[i + 1] == '"') {
                    buf_add(&field, line + i++, 1);
                } else if (line[i] == '"') {
                    closed = true;
                    i++;
                    break;
                } else {
                    buf_add(&field, line + i, 1);
                }
            }
            if (!closed || (i < n && line[i] != ',')) {
                rc = -1;
                break;
            }
        } else {
            size_t start = i;
            while (i < n && line[i] != ',') {
                if (line[i] == '"') { /* a quote inside an unquoted field */
                    rc = -1;
                    break;
                }
                i++;
            }
            if (rc)
                break;
            buf_add(&field, line + start, i - start);
        }
        strlist_addf(out, "%s", field.data);
        if (i >= n)
            break;
        i++; /* the comma */
    }
    buf_free(&field);
    return rc;
}
