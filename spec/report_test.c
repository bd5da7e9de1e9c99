/*
 * report_test.c - Check suite for libvmheap-report: the options histo and
 * diff share, the one escaper behind JSON, CSV and text output, text
 * tables, the labels of total rows, and sizes and shares for people.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_report.h"
#include "lib/vmheap_spec.h"

/* ------------------------------------------------------------ options */

/* The options histo and diff share: good values land in the struct, bad
 * ones are refused with a message naming them, other names are left to
 * the tool. */
START_TEST(report_options_take_good_values_and_name_bad_ones)
{
	struct vmheap_report_options o = VMHEAP_REPORT_OPTIONS_INIT;
	char err[200];

	ck_assert_int_eq(o.progress, 1);
	ck_assert_int_eq(vmheap_report_option(&o, "sort", "bytes", err, 200),
			 1);
	ck_assert_int_eq(o.sort, VMHEAP_SORT_BYTES);
	ck_assert_int_eq(vmheap_report_option(&o, "top", "12", err, 200), 1);
	ck_assert_uint_eq(o.top, 12);
	ck_assert_uint_eq(vmheap_report_rows_shown(&o, 20), 12);
	ck_assert_uint_eq(vmheap_report_rows_shown(&o, 5), 5);
	ck_assert_int_eq(vmheap_report_option(&o, "format", "csv", err, 200),
			 1);
	ck_assert_int_eq(o.format, VMHEAP_OUTPUT_CSV);
	ck_assert_int_eq(vmheap_report_option(&o, "threads", "64", err, 200),
			 1);
	ck_assert_uint_eq(o.threads, 64);
	ck_assert_int_eq(
	    vmheap_report_option(&o, "no-progress", NULL, err, 200), 1);
	ck_assert_int_eq(o.progress, 0);
	ck_assert_int_eq(vmheap_report_option(&o, "kind", NULL, err, 200), 0);

	ck_assert_int_eq(vmheap_report_option(&o, "threads", "65", err, 200),
			 VMHEAP_EINVAL);
	ck_assert_str_eq(err,
			 "--threads needs a number from 1 to 64, not '65'");
	ck_assert_int_eq(vmheap_report_option(&o, "top", "+3", err, 200),
			 VMHEAP_EINVAL);
	ck_assert_str_eq(err, "--top needs a positive number, not '+3'");
	ck_assert_int_eq(vmheap_report_option(&o, "sort", "size", err, 200),
			 VMHEAP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'size'"));
	ck_assert_int_eq(vmheap_report_option(&o, "format", "xml", err, 200),
			 VMHEAP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'xml'"));

	vmheap_report_total_label(err, sizeof(err), "total", 12, "classes", 5);
	ck_assert_str_eq(err, "total (12 classes, top 5 shown)");
	vmheap_report_total_label(err, sizeof(err), "total new", 3, "classes",
				  3);
	ck_assert_str_eq(err, "total new (3 classes)");
	vmheap_report_total_label(err, sizeof(err), "total", 1,
				  "classes changed", 1);
	ck_assert_str_eq(err, "total (1 class changed)");
	vmheap_report_total_label(err, sizeof(err), "total", 1, "kinds", 1);
	ck_assert_str_eq(err, "total (1 kind)");
	vmheap_report_total_label(err, sizeof(err), "total", 1,
				  "sites changed", 1);
	ck_assert_str_eq(err, "total (1 site changed)");
	vmheap_report_total_label(err, sizeof(err), "total", 0,
				  "classes changed", 0);
	ck_assert_str_eq(err, "total (0 classes changed)");
}
END_TEST

/* ------------------------------------------------------------ escaping */

/* What `add` appends to an empty buffer, as a malloc'ed string. */
static char *rendered(void (*add)(struct vmheap_strbuf *, const char *),
		      const char *s)
{
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;

	add(&sb, s);
	ck_assert_int_eq(sb.failed, 0);
	return sb.buf ? sb.buf : strdup("");
}

#define ASSERT_RENDERS(add, in, want)                                          \
	do {                                                                   \
		char *got_ = rendered(add, in);                                \
		ck_assert_str_eq(got_, want);                                  \
		free(got_);                                                    \
	} while (0)

/* Valid UTF-8 passes through in every form; invalid bytes become U+FFFD
 * in JSON and \xNN in text and CSV, one per byte. */
START_TEST(invalid_utf8_is_u_fffd_in_json_and_visible_bytes_elsewhere)
{
	ASSERT_RENDERS(vmheap_strbuf_add_json, "\xc3\x84rger",
		       "\"\xc3\x84rger\"");
	ASSERT_RENDERS(vmheap_strbuf_add_text, "\xc3\x84rger", "\xc3\x84rger");
	ASSERT_RENDERS(vmheap_strbuf_add_csv, "\xc3\x84rger", "\xc3\x84rger");
	/* a lone Latin-1 byte */
	ASSERT_RENDERS(vmheap_strbuf_add_json, "\xc4rger", "\"\\ufffdrger\"");
	ASSERT_RENDERS(vmheap_strbuf_add_text, "\xc4rger", "\\xc4rger");
	ASSERT_RENDERS(vmheap_strbuf_add_csv, "\xc4rger", "\\xc4rger");
	/* a truncated sequence at the end, a stray continuation byte */
	ASSERT_RENDERS(vmheap_strbuf_add_json, "a\xe2\x82",
		       "\"a\\ufffd\\ufffd\"");
	ASSERT_RENDERS(vmheap_strbuf_add_text, "\x80z", "\\x80z");
	/* an overlong "/", a surrogate, a code point past U+10FFFF, 0xFF */
	ASSERT_RENDERS(vmheap_strbuf_add_json, "\xc0\xaf",
		       "\"\\ufffd\\ufffd\"");
	ASSERT_RENDERS(vmheap_strbuf_add_text, "\xed\xa0\x80",
		       "\\xed\\xa0\\x80");
	ASSERT_RENDERS(vmheap_strbuf_add_text, "\xf4\x90\x80\x80",
		       "\\xf4\\x90\\x80\\x80");
	ASSERT_RENDERS(vmheap_strbuf_add_json, "\xff", "\"\\ufffd\"");
	/* the largest code point and a 4-byte emoji are valid */
	ASSERT_RENDERS(vmheap_strbuf_add_text, "\xf4\x8f\xbf\xbf",
		       "\xf4\x8f\xbf\xbf");
	ASSERT_RENDERS(vmheap_strbuf_add_json, "\xf0\x9f\x98\x80",
		       "\"\xf0\x9f\x98\x80\"");
}
END_TEST

/* Quotes, backslashes and control characters: JSON escapes, text shows
 * \xNN, CSV quotes per RFC 4180 and keeps control characters. */
START_TEST(special_characters_are_escaped_per_output)
{
	ASSERT_RENDERS(vmheap_strbuf_add_json, "q\"b\\n\nr\rt\t\x01\x7f",
		       "\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u007f\"");
	ASSERT_RENDERS(vmheap_strbuf_add_text, "a\nb\tc\x7f",
		       "a\\x0ab\\x09c\\x7f");
	ASSERT_RENDERS(vmheap_strbuf_add_csv, "plain\ttab", "plain\ttab");
	ASSERT_RENDERS(vmheap_strbuf_add_csv, "a,b", "\"a,b\"");
	ASSERT_RENDERS(vmheap_strbuf_add_csv, "say \"hi\"\n\xc4",
		       "\"say \"\"hi\"\"\n\\xc4\"");
	ASSERT_RENDERS(vmheap_strbuf_add_json, "", "\"\"");
	ASSERT_RENDERS(vmheap_strbuf_add_csv, "", "");

	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;
	vmheap_strbuf_add_json_bytes(&sb, "nul\0in", 6);
	ck_assert_str_eq(sb.buf, "\"nul\\u0000in\"");
	vmheap_strbuf_release(&sb);
}
END_TEST

/* ------------------------------------------------------------ tables */

/* Columns align by characters, not bytes: a two-byte letter and an
 * escaped byte (four characters) each take their width. */
START_TEST(table_aligns_escaped_and_multibyte_cells)
{
	vmheap_table *t = vmheap_table_new("rl");
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(
	    vmheap_table_add_row(t, (const char *[]){"count", "class"}), 0);
	ck_assert_int_eq(
	    vmheap_table_add_row(t, (const char *[]){"7", "\xc3\x84rger"}), 0);
	ck_assert_int_eq(
	    vmheap_table_add_row(t, (const char *[]){"12", "\xc4rger"}), 0);
	vmheap_table_render(t, &sb);
	ck_assert_int_eq(sb.failed, 0);
	ck_assert_str_eq(sb.buf, "count  class\n"
				 "    7  \xc3\x84rger\n"
				 "   12  \\xc4rger\n");
	vmheap_strbuf_release(&sb);
	vmheap_table_free(t);
}
END_TEST

/* -------------------------------------------------------------- units */

/* Sizes for people: binary units, three significant digits, rounding
 * that moves to the next unit instead of printing "1024 KiB". */
START_TEST(sizes_have_three_significant_digits_in_binary_units)
{
	static const struct {
		unsigned long long bytes;
		const char *text;
	} cases[] = {
	    {0, "0 B"},
	    {1023, "1023 B"},
	    {1024, "1.00 KiB"},
	    {1536, "1.50 KiB"},
	    {10235, "10.0 KiB"}, /* 9.995 KiB rounds to 10.0 */
	    {102348, "99.9 KiB"},
	    {102349, "100 KiB"}, /* 99.95 KiB */
	    {1023487, "999 KiB"},
	    {1048575, "1.00 MiB"}, /* 1023.999 KiB */
	    {132434432, "126 MiB"},
	    {5ULL << 30, "5.00 GiB"},
	    {18446744073709551615ULL, "16.0 EiB"},
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vmheap_format_size(buf, sizeof(buf), cases[i].bytes);
		ck_assert_str_eq(buf, cases[i].text);
	}
	vmheap_format_size_delta(buf, sizeof(buf), 475136);
	ck_assert_str_eq(buf, "+464 KiB");
	vmheap_format_size_delta(buf, sizeof(buf), -1258291);
	ck_assert_str_eq(buf, "-1.20 MiB");
	vmheap_format_size_delta(buf, sizeof(buf), 0);
	ck_assert_str_eq(buf, "0 B");
	vmheap_format_bytes(buf, sizeof(buf), 4008240);
	ck_assert_str_eq(buf, "3.82 MiB (4008240 bytes)");
}
END_TEST

/* The % column: one decimal, no "-0.0%", "-" for an empty total; --bytes
 * switches size cells to exact figures. */
START_TEST(shares_and_the_bytes_option)
{
	struct vmheap_report_options o = VMHEAP_REPORT_OPTIONS_INIT;
	char buf[64], err[200];

	vmheap_format_share(buf, sizeof(buf), 200, 1902, 0);
	ck_assert_str_eq(buf, "10.5%");
	vmheap_format_share(buf, sizeof(buf), 464000, 4008240, 1);
	ck_assert_str_eq(buf, "+11.6%");
	vmheap_format_share(buf, sizeof(buf), -20, 970, 1);
	ck_assert_str_eq(buf, "-2.1%");
	vmheap_format_share(buf, sizeof(buf), -1, 1000000, 1);
	ck_assert_str_eq(buf, "0.0%");
	vmheap_format_share(buf, sizeof(buf), 5, 0, 0);
	ck_assert_str_eq(buf, "-");

	vmheap_report_size(&o, buf, sizeof(buf), 4008240);
	ck_assert_str_eq(buf, "3.82 MiB");
	vmheap_report_size_delta(&o, buf, sizeof(buf), 559288);
	ck_assert_str_eq(buf, "+546 KiB");
	ck_assert_int_eq(vmheap_report_option(&o, "bytes", NULL, err, 200), 1);
	vmheap_report_size(&o, buf, sizeof(buf), 4008240);
	ck_assert_str_eq(buf, "4008240");
	vmheap_report_size_delta(&o, buf, sizeof(buf), 559288);
	ck_assert_str_eq(buf, "+559288");
	vmheap_report_size_delta(&o, buf, sizeof(buf), -20);
	ck_assert_str_eq(buf, "-20");
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc;

	tc = spec_tcase(s, "options", 30);
	tcase_add_test(tc, report_options_take_good_values_and_name_bad_ones);

	tc = spec_tcase(s, "escaping", 30);
	tcase_add_test(
	    tc, invalid_utf8_is_u_fffd_in_json_and_visible_bytes_elsewhere);
	tcase_add_test(tc, special_characters_are_escaped_per_output);

	tc = spec_tcase(s, "tables", 30);
	tcase_add_test(tc, table_aligns_escaped_and_multibyte_cells);

	tc = spec_tcase(s, "units", 30);
	tcase_add_test(tc, sizes_have_three_significant_digits_in_binary_units);
	tcase_add_test(tc, shares_and_the_bytes_option);
	return s;
}
