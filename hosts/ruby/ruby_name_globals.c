/*
 * ruby_name_globals.c - the global variables of a forked dump child and
 * their values, for the "$name" roots (ruby_names.c).
 *
 * Listing them needs rb_f_global_variables (a new Array) and each value
 * its getter (rb_gv_get): Ruby calls that may allocate.  So they are read
 * only in a forked dump child, from prepare_child before its GC (which
 * frees that garbage), and kept as C copies.  Only "$word" globals are
 * read, not $FILENAME (its getter reads ARGF), $_ (the caller's frame) or
 * the punctuation ones ($~, $1, ...); $VERBOSE is set to nil first, so
 * that a global that was never set gives no warning.
 */
#include "ruby-internal.h"

#include <stdlib.h>
#include <string.h>

static struct ruby_name_global *globals;
static size_t nglobals;

const struct ruby_name_global *ruby_name_globals(size_t *count)
{
	*count = nglobals;
	return globals;
}

static int learn(VALUE value, const char *text)
{
	struct ruby_name_global *g =
	    realloc(globals, (nglobals + 1) * sizeof(*globals));

	if (!g)
		return -1;
	globals = g;
	g[nglobals].value = value;
	g[nglobals].text = strdup(text);
	if (!g[nglobals].text)
		return -1;
	nglobals++;
	return 0;
}

/* A user's global: "$" and a word ($FILENAME and $_ excluded: their
 * getters read ARGF and the caller's frame). */
static int plain_global(const char *name)
{
	const char *p;

	if (name[0] != '$' || !name[1] || (name[1] >= '0' && name[1] <= '9'))
		return 0;
	if (!strcmp(name, "$FILENAME") || !strcmp(name, "$_"))
		return 0;
	for (p = name + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

static VALUE read_global(VALUE name)
{
	return rb_gv_get((const char *)name);
}

static VALUE read_globals(VALUE unused)
{
	VALUE list = rb_f_global_variables();
	long i;

	(void)unused;
	for (i = 0; i < RARRAY_LEN(list); i++) {
		VALUE sym = RARRAY_AREF(list, i), v;
		const char *name;
		int state = 0;

		if (!RB_SYMBOL_P(sym))
			continue;
		name = rb_id2name(rb_sym2id(sym));
		if (!name || !plain_global(name))
			continue;
		v = rb_protect(read_global, (VALUE)name, &state);
		if (state) {
			rb_set_errinfo(Qnil);
			continue;
		}
		if (!RB_SPECIAL_CONST_P(v) &&
		    learn(v, name) < 0)
			break;
	}
	RB_GC_GUARD(list);
	return Qnil;
}

void ruby_names_prepare_child(void)
{
	int state = 0;

	if (!ruby_names_enabled())
		return;
	/* No warning text for a global that was never set. */
	ruby_verbose = Qnil;
	rb_protect(read_globals, Qnil, &state);
	if (state)
		rb_set_errinfo(Qnil);
}
