/*
 * console_render_test.c - how the console prints replies (render.c and
 * json.c), on values built with msgpack-c: the "rendering" case of the
 * console suite.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "../console/console-internal.h"
#include "console_render-internal.h"
#include "lib/vmheap_spec.h"

/* A msgpack value built by `fill`, unpacked for the renderer. */
struct value {
	msgpack_sbuffer sbuf;
	msgpack_packer pk;
	msgpack_unpacked up;
};

static void value_begin(struct value *v)
{
	msgpack_sbuffer_init(&v->sbuf);
	msgpack_packer_init(&v->pk, &v->sbuf, msgpack_sbuffer_write);
	msgpack_unpacked_init(&v->up);
}

static const msgpack_object *value_end(struct value *v)
{
	ck_assert_int_eq(
	    msgpack_unpack_next(&v->up, v->sbuf.data, v->sbuf.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	return &v->up.data;
}

static void value_free(struct value *v)
{
	msgpack_unpacked_destroy(&v->up);
	msgpack_sbuffer_destroy(&v->sbuf);
}

static void pack_str(msgpack_packer *pk, const char *s, size_t len)
{
	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, s, len);
}

#define PACK_STR(pk, s) pack_str((pk), (s), strlen(s))

/* Render into a string. */
static char *render(const char *verb, const char *path, const msgpack_object *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	console_render_reply(f, verb, path, o);
	fclose(f);
	return buf;
}

static char *to_json(const msgpack_object *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	console_json_print(f, o);
	fclose(f);
	return buf;
}

START_TEST(byte_counts_show_a_binary_unit_and_the_exact_figure)
{
	char buf[96];

	vmheap_format_bytes(buf, sizeof(buf), 0);
	ck_assert_str_eq(buf, "0 bytes");
	vmheap_format_bytes(buf, sizeof(buf), 1023);
	ck_assert_str_eq(buf, "1023 bytes");
	vmheap_format_bytes(buf, sizeof(buf), 1024);
	ck_assert_str_eq(buf, "1.00 KiB (1024 bytes)");
	vmheap_format_bytes(buf, sizeof(buf), 1572864);
	ck_assert_str_eq(buf, "1.50 MiB (1572864 bytes)");
	vmheap_format_bytes(buf, sizeof(buf), 5ULL << 30);
	ck_assert_str_eq(buf, "5.00 GiB (5368709120 bytes)");
	vmheap_format_bytes(buf, sizeof(buf), UINT64_MAX);
	ck_assert_str_eq(buf, "16.0 EiB (18446744073709551615 bytes)");
}
END_TEST

START_TEST(a_byte_variable_is_shown_with_units_and_a_count_is_not)
{
	struct value v;
	char *out;

	value_begin(&v);
	msgpack_pack_uint64(&v.pk, 3355443);
	out = render("get", "system.memory.rss", value_end(&v));
	ck_assert_str_eq(out, "3.20 MiB (3355443 bytes)\n");
	free(out);
	out = render("get", "system.memory.count", &v.up.data);
	ck_assert_str_eq(out, "3355443\n");
	free(out);
	value_free(&v);
}
END_TEST

START_TEST(a_dump_reply_is_one_line_with_path_objects_size_and_time)
{
	struct value v;
	char *out;

	value_begin(&v);
	msgpack_pack_map(&v.pk, 5);
	PACK_STR(&v.pk, "path");
	PACK_STR(&v.pk, "/var/dumps/heap.vmheap");
	PACK_STR(&v.pk, "objects");
	msgpack_pack_uint64(&v.pk, 120000);
	PACK_STR(&v.pk, "bytes");
	msgpack_pack_uint64(&v.pk, 7340032);
	PACK_STR(&v.pk, "file_bytes");
	msgpack_pack_uint64(&v.pk, 99);
	PACK_STR(&v.pk, "seconds");
	msgpack_pack_double(&v.pk, 0.25);
	out = render("set", "system.memory.dump", value_end(&v));
	ck_assert_str_eq(
	    out, "dump written: /var/dumps/heap.vmheap, 120000 objects, "
		 "heap 7.00 MiB (7340032 bytes), file 99 B, in 0.250 s\n");
	free(out);
	value_free(&v);
}
END_TEST

START_TEST(a_map_is_printed_as_aligned_columns)
{
	struct value v;
	char *out;

	value_begin(&v);
	msgpack_pack_map(&v.pk, 3);
	PACK_STR(&v.pk, "a");
	PACK_STR(&v.pk, "int");
	PACK_STR(&v.pk, "system.memory.dump");
	PACK_STR(&v.pk, "dump");
	PACK_STR(&v.pk, "heap_bytes");
	msgpack_pack_uint64(&v.pk, 2048);
	out = render("list", "", value_end(&v));
	ck_assert_str_eq(out, "a                   int\n"
			      "system.memory.dump  dump\n"
			      "heap_bytes          2.00 KiB (2048 bytes)\n");
	free(out);
	value_free(&v);
}
END_TEST

START_TEST(rows_of_maps_get_a_header_and_columns_matched_by_key)
{
	struct value v;
	char *out;

	value_begin(&v);
	msgpack_pack_array(&v.pk, 2);
	msgpack_pack_map(&v.pk, 2);
	PACK_STR(&v.pk, "class");
	PACK_STR(&v.pk, "String");
	PACK_STR(&v.pk, "count");
	msgpack_pack_uint64(&v.pk, 7);
	msgpack_pack_map(&v.pk, 2);
	PACK_STR(&v.pk, "count"); /* other order */
	msgpack_pack_uint64(&v.pk, 12345);
	PACK_STR(&v.pk, "class");
	PACK_STR(&v.pk, "Hash");
	out = render("get", "x.census", value_end(&v));
	ck_assert_str_eq(out, "class   count\n"
			      "String  7\n"
			      "Hash    12345\n");
	free(out);
	value_free(&v);
}
END_TEST

START_TEST(records_holding_lists_print_as_blocks_a_line_per_element)
{
	struct value v;
	char *out;

	value_begin(&v);
	msgpack_pack_array(&v.pk, 2);
	for (int i = 0; i < 2; i++) {
		msgpack_pack_map(&v.pk, 2);
		PACK_STR(&v.pk, "thread");
		PACK_STR(&v.pk, i ? "worker" : "main");
		PACK_STR(&v.pk, "backtrace");
		msgpack_pack_array(&v.pk, 2 - i);
		PACK_STR(&v.pk, "app.rb:3:in `sleep'");
		if (!i)
			PACK_STR(&v.pk, "app.rb:9:in `<main>'");
	}
	out = render("get", "system.threads.backtrace", value_end(&v));
	ck_assert_str_eq(out, "thread     main\n"
			      "backtrace  app.rb:3:in `sleep'\n"
			      "           app.rb:9:in `<main>'\n"
			      "\n"
			      "thread     worker\n"
			      "backtrace  app.rb:3:in `sleep'\n");
	free(out);
	value_free(&v);
}
END_TEST

static void append_name(void *arg, const char *name, size_t len)
{
	fprintf(arg, "%.*s;", (int)len, name);
}

START_TEST(list_names_come_from_maps_arrays_and_rows)
{
	struct value v;
	char *names = NULL;
	size_t len = 0;
	FILE *f;

	value_begin(&v);
	msgpack_pack_array(&v.pk, 4);
	PACK_STR(&v.pk, "one.a");
	msgpack_pack_array(&v.pk, 2);
	PACK_STR(&v.pk, "two.b");
	PACK_STR(&v.pk, "int");
	msgpack_pack_nil(&v.pk); /* skipped */
	msgpack_pack_map(&v.pk, 1);
	PACK_STR(&v.pk, "name");
	PACK_STR(&v.pk, "three.c");
	f = open_memstream(&names, &len);
	console_render_each_name(value_end(&v), append_name, f);
	fclose(f);
	ck_assert_str_eq(names, "one.a;two.b;three.c;");
	free(names);
	value_free(&v);

	value_begin(&v);
	msgpack_pack_map(&v.pk, 2);
	PACK_STR(&v.pk, "system.pid");
	PACK_STR(&v.pk, "int");
	PACK_STR(&v.pk, "system.vm");
	PACK_STR(&v.pk, "string");
	names = NULL;
	f = open_memstream(&names, &len);
	console_render_each_name(value_end(&v), append_name, f);
	fclose(f);
	ck_assert_str_eq(names, "system.pid;system.vm;");
	free(names);
	value_free(&v);
}
END_TEST

/* Parse with jq (a real JSON parser) and print the value back. */
static int jq_roundtrip(const char *json, char *out, size_t outlen)
{
	const char *argv[] = {"jq", "-c", ".", NULL};
	struct spec_run r;
	int ok;

	ck_assert_int_eq(spec_run(argv, NULL, json, 20000, &r), 0);
	snprintf(out, outlen, "%s%s", r.out, r.err);
	ok = r.status == 0;
	spec_run_free(&r);
	return ok;
}

START_TEST(json_escapes_control_characters_and_replaces_bad_utf8)
{
	struct value v;
	char *out, back[1024];
	static const char text[] =
	    "tab\there \"q\" back\\slash \x01 caf\xc3\xa9 bad\xff\xfe end";

	value_begin(&v);
	msgpack_pack_map(&v.pk, 4);
	PACK_STR(&v.pk, "s");
	pack_str(&v.pk, text, sizeof(text) - 1);
	PACK_STR(&v.pk, "n");
	msgpack_pack_int64(&v.pk, -42);
	PACK_STR(&v.pk, "big");
	msgpack_pack_uint64(&v.pk, 1ULL << 40); /* past 32 bits */
	msgpack_pack_int(&v.pk, 7);		/* a key that is not a string */
	msgpack_pack_array(&v.pk, 3);
	msgpack_pack_true(&v.pk);
	msgpack_pack_nil(&v.pk);
	msgpack_pack_double(&v.pk, 1.5);
	out = to_json(value_end(&v));
	ck_assert_msg(jq_roundtrip(out, back, sizeof(back)), "jq: %s on %s",
		      back, out);
	ck_assert_str_eq(
	    back,
	    "{\"s\":\"tab\\there \\\"q\\\" back\\\\slash \\u0001 caf\xc3\xa9 "
	    "bad\xef\xbf\xbd\xef\xbf\xbd end\",\"n\":-42,"
	    "\"big\":1099511627776,\"7\":[true,null,1.5]}\n");
	free(out);
	value_free(&v);

	/* 64-bit integers are printed whole (jq would round this one) */
	value_begin(&v);
	msgpack_pack_uint64(&v.pk, UINT64_MAX);
	out = to_json(value_end(&v));
	ck_assert_str_eq(out, "18446744073709551615\n");
	free(out);
	value_free(&v);
}
END_TEST

TCase *console_render_tcase(void)
{
	TCase *tc = tcase_create("rendering");

	tcase_set_timeout(tc, 60);

	tcase_add_test(tc, byte_counts_show_a_binary_unit_and_the_exact_figure);
	tcase_add_test(tc,
		       a_byte_variable_is_shown_with_units_and_a_count_is_not);
	tcase_add_test(
	    tc, a_dump_reply_is_one_line_with_path_objects_size_and_time);
	tcase_add_test(tc, a_map_is_printed_as_aligned_columns);
	tcase_add_test(tc,
		       rows_of_maps_get_a_header_and_columns_matched_by_key);
	tcase_add_test(
	    tc, records_holding_lists_print_as_blocks_a_line_per_element);
	tcase_add_test(tc, list_names_come_from_maps_arrays_and_rows);
	tcase_add_test(tc,
		       json_escapes_control_characters_and_replaces_bad_utf8);
	return tc;
}
