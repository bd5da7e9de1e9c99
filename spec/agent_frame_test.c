/*
 * agent_frame_test.c - the frame codec on its own: what a payload must be
 * before msgpack-c ever sees it, and the token comparison.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"
#include "lib/vmheap_spec.h"

static int check_bytes(const unsigned char *b, size_t n, char *err,
		       size_t errlen)
{
	return frame_check((const char *)b, n, err, errlen);
}

START_TEST(well_formed_request_passes_the_check)
{
	static const unsigned char req[] = {0x93, 0x02, 0xa3, 'g',
					    'e',  't',	0xa1, 'x'};
	char err[256] = "";
	msgpack_unpacked m;

	ck_assert_int_eq(check_bytes(req, sizeof(req), err, sizeof(err)), 0);
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(
	    frame_decode((const char *)req, sizeof(req), &m, err, sizeof(err)),
	    0);
	ck_assert_int_eq(m.data.via.array.size, 3);
	msgpack_unpacked_destroy(&m);
}
END_TEST

START_TEST(container_claiming_more_elements_than_bytes_is_refused)
{
	/* array32 of 2^32-1 elements in 5 bytes: msgpack-c would allocate
	 * 96 GB for its element table */
	static const unsigned char arr[] = {0xdd, 0xff, 0xff, 0xff, 0xff};
	static const unsigned char map[] = {0xdf, 0x00, 0x00, 0x00, 0x03,
					    1,	  2,	3,    4,    5};
	char err[256];

	ck_assert_int_eq(check_bytes(arr, sizeof(arr), err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "claims 4294967295 elements"), "%s", err);
	/* a map of 3 pairs needs 6 objects; 5 are there */
	ck_assert_int_eq(check_bytes(map, sizeof(map), err, sizeof(err)), -1);
}
END_TEST

START_TEST(strings_and_extensions_running_past_the_end_are_refused)
{
	static const unsigned char str8[] = {0x91, 0xd9, 10, 'a', 'b'};
	static const unsigned char ext32[] = {0x91, 0xc9, 0, 0, 0, 9, 1, 0};
	static const unsigned char fixstr[] = {0x91, 0xa5, 'a'};
	static const unsigned char cut_u64[] = {0x91, 0xcf, 0, 0};
	char err[256];

	ck_assert_int_eq(check_bytes(str8, sizeof(str8), err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "byte 1"), "%s", err);
	ck_assert_int_eq(check_bytes(ext32, sizeof(ext32), err, sizeof(err)),
			 -1);
	ck_assert_int_eq(check_bytes(fixstr, sizeof(fixstr), err, sizeof(err)),
			 -1);
	ck_assert_int_eq(
	    check_bytes(cut_u64, sizeof(cut_u64), err, sizeof(err)), -1);
}
END_TEST

START_TEST(trailing_bytes_and_the_never_used_byte_are_refused)
{
	static const unsigned char extra[] = {0x90, 0x90};
	static const unsigned char c1[] = {0x91, 0xc1};
	char err[256];

	ck_assert_int_eq(check_bytes(extra, sizeof(extra), err, sizeof(err)),
			 -1);
	ck_assert_msg(strstr(err, "extra"), "%s", err);
	ck_assert_int_eq(check_bytes(c1, sizeof(c1), err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "0xc1"), "%s", err);
}
END_TEST

START_TEST(deep_nesting_and_non_arrays_do_not_decode)
{
	unsigned char deep[100];
	static const unsigned char map[] = {0x80};
	char err[256];
	msgpack_unpacked m;

	memset(deep, 0x91, sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = 0xc0;
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(frame_decode((const char *)deep, sizeof(deep), &m, err,
				      sizeof(err)),
			 -1);
	ck_assert_msg(strstr(err, "nested"), "%s", err);
	ck_assert_int_eq(
	    frame_decode((const char *)map, sizeof(map), &m, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "not a MessagePack array"), "%s", err);
	ck_assert_int_eq(frame_decode("", 0, &m, err, sizeof(err)), -1);
	msgpack_unpacked_destroy(&m);
}
END_TEST

START_TEST(frame_header_is_big_endian_and_capped_at_one_mebibyte)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	char *big;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	frame_begin(&sb);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_uint32(&pk, 0x01020304);
	ck_assert_int_eq(frame_end(&sb, 0), 0);
	ck_assert_int_eq(frame_length((const unsigned char *)sb.data), 6);
	ck_assert(!memcmp(sb.data, "\0\0\0\6\x91\xce\1\2\3\4", 10));
	msgpack_sbuffer_destroy(&sb);

	msgpack_sbuffer_init(&sb);
	frame_begin(&sb);
	big = calloc(1, VMHEAP_MAX_FRAME_BYTES + 1);
	msgpack_sbuffer_write(&sb, big, VMHEAP_MAX_FRAME_BYTES);
	ck_assert_int_eq(frame_end(&sb, 0), 0);
	msgpack_sbuffer_write(&sb, big, 1);
	ck_assert_int_eq(frame_end(&sb, 0), -1);
	free(big);
	msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(token_comparison_needs_all_32_bytes)
{
	char tok[33];

	ck_assert_int_eq(agent_token_new(tok, NULL, 0), 0);
	ck_assert_int_eq(strlen(tok), 32);
	ck_assert_int_eq(strspn(tok, "0123456789abcdef"), 32);
	ck_assert(agent_token_equal(tok, tok, 32));
	ck_assert(!agent_token_equal(tok, tok, 31));
	ck_assert(!agent_token_equal(tok, "", 0));
	tok[31] ^= 1;
	{
		char copy[33];
		memcpy(copy, tok, 33);
		tok[31] ^= 1;
		ck_assert(!agent_token_equal(tok, copy, 32));
	}
}
END_TEST

/* A request's objects are counted before msgpack-c decodes them (24
 * bytes each): [nil x 5000] is refused with a limit of 4096, and decodes
 * without one; exactly 4096 objects (the array and 4095 nils) pass. */
START_TEST(requests_of_too_many_objects_are_refused_before_decoding)
{
	static unsigned char buf[3 + 5000];
	char err[256];
	msgpack_unpacked m;

	buf[0] = 0xdc; /* array 16 */
	buf[1] = 5000 >> 8;
	buf[2] = 5000 & 0xff;
	memset(buf + 3, 0xc0, 5000);
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(frame_decode_limited((const char *)buf, sizeof(buf),
					      4096, &m, err, sizeof(err)),
			 -1);
	ck_assert_msg(strstr(err, "more than 4096 objects"), "%s", err);
	ck_assert_int_eq(frame_decode_limited((const char *)buf, sizeof(buf),
					      0, &m, err, sizeof(err)),
			 0);
	ck_assert_int_eq(m.data.via.array.size, 5000);
	buf[1] = 4095 >> 8;
	buf[2] = 4095 & 0xff;
	ck_assert_int_eq(frame_decode_limited((const char *)buf, 3 + 4095, 4096,
					      &m, err, sizeof(err)),
			 0);
	msgpack_unpacked_destroy(&m);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("agent_frame");
	TCase *t = spec_tcase(s, "frame", 10);

	tcase_add_test(t, well_formed_request_passes_the_check);
	tcase_add_test(t,
		       container_claiming_more_elements_than_bytes_is_refused);
	tcase_add_test(t,
		       strings_and_extensions_running_past_the_end_are_refused);
	tcase_add_test(t, trailing_bytes_and_the_never_used_byte_are_refused);
	tcase_add_test(t, deep_nesting_and_non_arrays_do_not_decode);
	tcase_add_test(t, requests_of_too_many_objects_are_refused_before_decoding);
	tcase_add_test(t,
		       frame_header_is_big_endian_and_capped_at_one_mebibyte);
	tcase_add_test(t, token_comparison_needs_all_32_bytes);
	return s;
}
