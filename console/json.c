/*
 * json.c - reply values as JSON, for scripts (--json).  Strings are
 * escaped; bytes that are not UTF-8 become U+FFFD; binary data becomes a
 * string of hex digits; NaN and infinities become null.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"

/* Length of the valid UTF-8 sequence at s (0 if invalid). */
static size_t utf8_length(const unsigned char *s, size_t len)
{
	size_t n;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void console_json_string(FILE *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	fputc('"', out);
	while (i < len) {
		unsigned char c = s[i];
		size_t n;

		switch (c) {
		case '"':
			fputs("\\\"", out);
			i++;
			continue;
		case '\\':
			fputs("\\\\", out);
			i++;
			continue;
		case '\n':
			fputs("\\n", out);
			i++;
			continue;
		case '\r':
			fputs("\\r", out);
			i++;
			continue;
		case '\t':
			fputs("\\t", out);
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
			continue;
		}
		n = utf8_length(s + i, len - i);
		if (n == 0) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		fwrite(s + i, 1, n, out);
		i += n;
	}
	fputc('"', out);
}

static void print_value(FILE *out, const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		fputs("null", out);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		fputs(o->via.boolean ? "true" : "false", out);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		fprintf(out, "%llu", (unsigned long long)o->via.u64);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		fprintf(out, "%lld", (long long)o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (isfinite(o->via.f64))
			fprintf(out, "%.17g", o->via.f64);
		else
			fputs("null", out);
		break;
	case MSGPACK_OBJECT_STR:
		console_json_string(out, o->via.str.ptr, o->via.str.size);
		break;
	case MSGPACK_OBJECT_BIN:
		fputc('"', out);
		for (uint32_t i = 0; i < o->via.bin.size; i++)
			fprintf(out, "%02x", (unsigned char)o->via.bin.ptr[i]);
		fputc('"', out);
		break;
	case MSGPACK_OBJECT_ARRAY:
		fputc('[', out);
		for (uint32_t i = 0; i < o->via.array.size; i++) {
			if (i)
				fputc(',', out);
			print_value(out, &o->via.array.ptr[i]);
		}
		fputc(']', out);
		break;
	case MSGPACK_OBJECT_MAP:
		fputc('{', out);
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			const msgpack_object_kv *kv = &o->via.map.ptr[i];

			if (i)
				fputc(',', out);
			if (kv->key.type == MSGPACK_OBJECT_STR) {
				print_value(out, &kv->key);
			} else {
				/* JSON keys are strings: quote the value's
				 * JSON. */
				char *buf = NULL;
				size_t len = 0;
				FILE *f = open_memstream(&buf, &len);

				if (f) {
					print_value(f, &kv->key);
					fclose(f);
				}
				console_json_string(out, buf ? buf : "",
						    buf ? len : 0);
				free(buf);
			}
			fputc(':', out);
			print_value(out, &kv->val);
		}
		fputc('}', out);
		break;
	default:
		fputs("null", out);
		break;
	}
}

void console_json_print(FILE *out, const msgpack_object *value)
{
	print_value(out, value);
	fputc('\n', out);
}
