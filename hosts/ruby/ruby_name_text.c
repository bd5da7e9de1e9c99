/*
 * ruby_name_text.c - how a name on a Ruby reference reads (FORMAT.md
 * section 16): hash keys as Ruby's inspect writes them ("k17" quoted and
 * escaped, :sym, 42), cut to RUBY_NAME_KEY_MAX bytes with "...".  Name
 * texts stay valid UTF-8 whatever the key's encoding: bytes that are not
 * UTF-8 are written \xNN.
 */
#include "ruby-internal.h"

#include <stdio.h>
#include <string.h>

/* Append s to buf (RUBY_NAME_MAX_BYTES, one kept for a NUL); a longer text
 * is cut. */
void ruby_name_put(char *buf, size_t *len, const char *s, size_t slen)
{
	if (*len >= RUBY_NAME_MAX_BYTES - 1)
		return;
	if (slen > RUBY_NAME_MAX_BYTES - 1 - *len)
		slen = RUBY_NAME_MAX_BYTES - 1 - *len;
	memcpy(buf + *len, s, slen);
	*len += slen;
}

/* Bytes of the valid UTF-8 sequence at s (at most `left`), or 0. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	size_t want, i;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	want = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	if (want > left)
		return 0;
	for (i = 1; i < want; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return want;
}

/* The letter of a control byte's escape as inspect writes it (\n, \e,
 * ...), or 0. */
static size_t control_escape(unsigned char c)
{
	switch (c) {
	case '\n': return 'n';
	case '\t': return 't';
	case '\r': return 'r';
	case '\f': return 'f';
	case '\v': return 'v';
	case '\a': return 'a';
	case '\b': return 'b';
	case 0x1b: return 'e';
	default: return 0;
	}
}

/*
 * Append `s` as Ruby's inspect would quote it: backslash, double quote
 * and control bytes escaped, valid UTF-8 kept, other bytes as \xNN; at
 * most RUBY_NAME_KEY_MAX bytes of `s`, then "..." when cut.
 */
void ruby_name_put_quoted(char *buf, size_t *len, const char *s, size_t slen)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, lim = slen > RUBY_NAME_KEY_MAX ? RUBY_NAME_KEY_MAX : slen;

	ruby_name_put(buf, len, "\"", 1);
	while (i < lim) {
		char esc[8];
		size_t k;

		if (u[i] == '"' || u[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)u[i];
			ruby_name_put(buf, len, esc, 2);
			i++;
		} else if ((k = control_escape(u[i])) != 0) {
			esc[0] = '\\';
			esc[1] = (char)k;
			ruby_name_put(buf, len, esc, 2);
			i++;
		} else if (u[i] >= 0x20 && u[i] < 0x7f) {
			ruby_name_put(buf, len, s + i, 1);
			i++;
		} else if ((k = utf8_len(u + i, lim - i)) != 0) {
			ruby_name_put(buf, len, s + i, k);
			i += k;
		} else {
			snprintf(esc, sizeof(esc), "\\x%02X", u[i]);
			ruby_name_put(buf, len, esc, 4);
			i++;
		}
	}
	if (slen > lim)
		ruby_name_put(buf, len, "...", 3);
	ruby_name_put(buf, len, "\"", 1);
}

/* A Symbol that Ruby prints bare after ':' (foo, foo?, Foo, foo=). */
static int plain_symbol(const char *s, size_t len)
{
	size_t i;

	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];
		int word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '_' ||
			   (unsigned char)c >= 0x80;

		if (!word && !(i == len - 1 && i > 0 &&
			       (c == '?' || c == '!' || c == '=')))
			return 0;
	}
	return len <= RUBY_NAME_KEY_MAX;
}

/* The text of the value of hash key `key` into buf; 0 for keys not
 * named. */
size_t ruby_name_key_text(VALUE key, char *buf)
{
	size_t len = 0;

	if (RB_FIXNUM_P(key))
		return (size_t)snprintf(buf, RUBY_NAME_MAX_BYTES, "[%ld]",
					FIX2LONG(key));
	if (RB_SYMBOL_P(key)) {
		VALUE s = rb_sym2str(key);

		if (!RB_TYPE_P(s, T_STRING))
			return 0;
		ruby_name_put(buf, &len, "[:", 2);
		if (plain_symbol(RSTRING_PTR(s), (size_t)RSTRING_LEN(s)))
			ruby_name_put(buf, &len, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
		else
			ruby_name_put_quoted(buf, &len, RSTRING_PTR(s),
				   (size_t)RSTRING_LEN(s));
	} else if (RB_TYPE_P(key, T_STRING)) {
		ruby_name_put(buf, &len, "[", 1);
		ruby_name_put_quoted(buf, &len, RSTRING_PTR(key),
			   (size_t)RSTRING_LEN(key));
	} else {
		return 0;
	}
	ruby_name_put(buf, &len, "]", 1);
	return len;
}
