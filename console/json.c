/*
 * json.c - reply values as JSON, for scripts (--json).  Strings are
 * escaped by libvmheap-report's escaper (bytes that are not UTF-8 become
 * U+FFFD); binary data becomes a string of hex digits; NaN and infinities
 * become null.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"

void console_json_string(FILE *out, const char *str, size_t len)
{
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;

	vmheap_strbuf_add_json_bytes(&sb, str, len);
	if (sb.failed)
		fputs("\"\"", out);
	else
		fwrite(sb.buf, 1, sb.len, out);
	vmheap_strbuf_release(&sb);
}

/*
 * Print o as JSON.  A key that is not a string becomes a string holding
 * its JSON; inside such a key (`in_key`) keys are printed as they are,
 * not quoted again: quoting at every level of keys nested in keys doubled
 * the backslashes each time (fuzz_native_sites: 30 levels, 2^30 bytes).
 */
static void print_value(FILE *out, const msgpack_object *o, int in_key)
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
			print_value(out, &o->via.array.ptr[i], in_key);
		}
		fputc(']', out);
		break;
	case MSGPACK_OBJECT_MAP:
		fputc('{', out);
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			const msgpack_object_kv *kv = &o->via.map.ptr[i];

			if (i)
				fputc(',', out);
			if (kv->key.type == MSGPACK_OBJECT_STR || in_key) {
				print_value(out, &kv->key, in_key);
			} else {
				/* JSON keys are strings: quote the value's
				 * JSON. */
				char *buf = NULL;
				size_t len = 0;
				FILE *f = open_memstream(&buf, &len);

				if (f) {
					print_value(f, &kv->key, 1);
					fclose(f);
				}
				console_json_string(out, buf ? buf : "",
						    buf ? len : 0);
				free(buf);
			}
			fputc(':', out);
			print_value(out, &kv->val, in_key);
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
	print_value(out, value, 0);
	fputc('\n', out);
}
