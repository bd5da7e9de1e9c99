/*
 * escape.c - the one escaper of the tools' output (part of
 * libvmheap-report): text from a dump as a JSON string literal, as a
 * CSV field, or as text for a terminal, whatever bytes it holds.  The
 * rules are in vmheap_report.h and the man pages.
 */
#include <string.h>

#include "vmheap_report.h"

size_t vmheap_utf8_length(const unsigned char *s, size_t len)
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

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* The escape of a JSON string's ASCII special character, or NULL. */
static const char *json_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		return NULL;
	}
}

void vmheap_strbuf_add_json_bytes(struct vmheap_strbuf *sb, const char *str,
				  size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	vmheap_strbuf_add(sb, "\"", 1);
	while (i < len) {
		const char *e = json_escape(s[i]);
		size_t n;

		if (e) {
			vmheap_strbuf_add(sb, e, 2);
			i++;
		} else if (is_control(s[i])) {
			vmheap_strbuf_addf(sb, "\\u%04x", s[i]);
			i++;
		} else if ((n = vmheap_utf8_length(s + i, len - i)) == 0) {
			vmheap_strbuf_add(sb, "\\ufffd", 6);
			i++;
		} else {
			vmheap_strbuf_add(sb, str + i, n);
			i += n;
		}
	}
	vmheap_strbuf_add(sb, "\"", 1);
}

void vmheap_strbuf_add_json(struct vmheap_strbuf *sb, const char *s)
{
	vmheap_strbuf_add_json_bytes(sb, s, strlen(s));
}

/* Append `len` bytes of `str` with invalid UTF-8 bytes, and control
 * characters when `controls` is set, shown as \xNN. */
static void add_visible(struct vmheap_strbuf *sb, const char *str, size_t len,
			int controls)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		size_t n = vmheap_utf8_length(s + i, len - i);
		if (!n || (controls && is_control(s[i]))) {
			vmheap_strbuf_addf(sb, "\\x%02x", s[i]);
			i++;
		} else {
			vmheap_strbuf_add(sb, str + i, n);
			i += n;
		}
	}
}

void vmheap_strbuf_add_text(struct vmheap_strbuf *sb, const char *s)
{
	add_visible(sb, s, strlen(s), 1);
}

void vmheap_strbuf_add_csv(struct vmheap_strbuf *sb, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		add_visible(sb, s, strlen(s), 0);
		return;
	}
	vmheap_strbuf_add(sb, "\"", 1);
	for (const char *q; (q = strchr(s, '"')); s = q + 1) {
		add_visible(sb, s, (size_t)(q - s), 0);
		vmheap_strbuf_add(sb, "\"\"", 2);
	}
	add_visible(sb, s, strlen(s), 0);
	vmheap_strbuf_add(sb, "\"", 1);
}
