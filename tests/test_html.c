/*
 * test_html.c - the page pieces (report/html.c) with hand-computed geometry.
 *
 * A stacked bar of 1 s and 3 s on the 900 px bar is 225 px and 675 px wide, the second
 * starting at x = 225; against a shared scale of 8 s they are 112.5 and 337.5 px. Horizontal
 * bars scale to the largest value (550 px of plot: 900 - 230 label - 120 value text). Text is
 * escaped so that the page stays well-formed.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *buf;
static size_t n;

static FILE *open_buf(void)
{
    buf = NULL;
    n = 0;
    return open_memstream(&buf, &n);
}

static void assert_contains(const char *text, const char *part)
{
    if (strstr(text, part) == NULL)
        fail_msg("expected the output to contain \"%s\"; it is:\n%s", part, text);
}

static void test_html_escape_markup(void **state)
{
    (void)state;
    FILE *f = open_buf();
    html_escape(f, "<a href=\"x\">R&D</a>");
    fclose(f);
    assert_string_equal(buf, "&lt;a href=&quot;x&quot;&gt;R&amp;D&lt;/a&gt;");
    free(buf);
}

static void test_html_stacked_bar_widths(void **state)
{
    (void)state;
    const HtmlPart parts[] = {{"compute", 1.0, "#111111"}, {"idle", 0.0, NULL},
                              {"all-gather", 3.0, "#222222"}};
    FILE *f = open_buf();
    html_stacked_bar(f, "time", parts, 3, 0.0, "%.1f s");
    fclose(f);
    assert_contains(buf, "<rect x=\"0.00\" y=\"0.00\" width=\"225.00\" height=\"28.00\" "
                         "fill=\"#111111\"><title>compute: 1.0 s (25.0%)</title></rect>");
    assert_contains(buf, "<rect x=\"225.00\" y=\"0.00\" width=\"675.00\" height=\"28.00\" "
                         "fill=\"#222222\"><title>all-gather: 3.0 s (75.0%)</title></rect>");
    assert_null(strstr(buf, "idle")); /* a zero part is neither drawn nor listed */
    assert_contains(buf, "all-gather 3.0 s (75.0%)</li>");
    free(buf);

    f = open_buf();
    html_stacked_bar(f, "time", parts, 3, 8.0, "%.1f s"); /* a shared scale of 8 s */
    fclose(f);
    assert_contains(buf, "width=\"112.50\"");
    assert_contains(buf, "<rect x=\"112.50\" y=\"0.00\" width=\"337.50\"");
    free(buf);
}

static void test_html_bars_scale_to_the_largest(void **state)
{
    (void)state;
    const HtmlPart parts[] = {{"nvlink", 8.0, NULL}, {"pcie", 2.0, NULL}};
    FILE *f = open_buf();
    html_bars(f, "bytes", parts, 2, "%.2f GB");
    fclose(f);
    assert_contains(buf, "width=\"550.00\""); /* 8 of 8 */
    assert_contains(buf, "width=\"137.50\""); /* 2 of 8 */
    assert_contains(buf, ">2.00 GB</text>");
    free(buf);
}

static void test_html_page_is_closed(void **state)
{
    (void)state;
    FILE *f = open_buf();
    html_begin(f, "a < b");
    html_heading(f, "x & y");
    html_end(f);
    fclose(f);
    assert_true(strncmp(buf, "<!DOCTYPE html>\n<html lang=\"en\">", 32) == 0);
    assert_contains(buf, "<title>a &lt; b</title>");
    assert_contains(buf, "<h2>x &amp; y</h2>");
    assert_contains(buf, "<link rel=\"icon\" href=\"data:,\" />");
    assert_true(strcmp(buf + n - 16, "</body>\n</html>\n") == 0);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_escape_markup),
        cmocka_unit_test(test_html_stacked_bar_widths),
        cmocka_unit_test(test_html_bars_scale_to_the_largest),
        cmocka_unit_test(test_html_page_is_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
