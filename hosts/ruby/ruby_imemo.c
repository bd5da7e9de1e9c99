/*
 * ruby_imemo.c - MRI's internal memo objects (T_IMEMO) by their type.
 *
 * An imemo slot is an instruction sequence, a method entry, a call cache,
 * an environment, ...  MRI keeps the type in the flags, above the user
 * flags: (flags >> FL_USHIFT) & 0x0f (internal/imemo.h, Ruby 3.1), and
 * names it with rb_imemo_name(), which libruby exports and which
 * ObjectSpace.dump_all uses for its "imemo_type".  The walk names imemo
 * classes "<imemo:iseq>", "<imemo:ment>", ... from it.
 *
 * An instruction sequence knows where its code is: rb_iseq_path() and
 * rb_iseq_first_lineno() (exported, allocate nothing) give its file and
 * first line, which the walk writes as its site.
 */
#include <stdio.h>
#include <string.h>

#include "ruby-internal.h"

/* internal/imemo.h (3.1): imemo_mask, and imemo_iseq's value. */
#define IMEMO_MASK 0x0fu
#define IMEMO_ISEQ 7

/* Exported by libruby, declared only in its internal headers (gc.c,
 * iseq.c of Ruby 3.1); the enum is passed as an int. */
const char *rb_imemo_name(int type);
VALUE rb_iseq_path(const void *iseq);
VALUE rb_iseq_first_lineno(const void *iseq);

int ruby_imemo_type(VALUE obj)
{
	return (int)((RBASIC(obj)->flags >> RUBY_FL_USHIFT) & IMEMO_MASK);
}

int ruby_imemo_class_name(int type, char *buf, size_t size)
{
	const char *name = rb_imemo_name(type);

	return snprintf(buf, size, "<imemo:%s>", name ? name : "unknown");
}

int ruby_iseq_location(VALUE obj, const char **file, size_t *file_len,
		       uint64_t *line)
{
	/* struct rb_iseq_struct: flags, wrapper, then the body pointer;
	 * a body not yet made has no location to read. */
	const VALUE *slot = (const VALUE *)obj;
	VALUE path, first;

	if (ruby_imemo_type(obj) != IMEMO_ISEQ || slot[2] == 0)
		return 0;
	path = rb_iseq_path((const void *)obj);
	if (!RB_TYPE_P(path, T_STRING))
		return 0;
	first = rb_iseq_first_lineno((const void *)obj);
	*file = RSTRING_PTR(path);
	*file_len = (size_t)RSTRING_LEN(path);
	*line = RB_FIXNUM_P(first) && FIX2LONG(first) > 0
		    ? (uint64_t)FIX2LONG(first)
		    : 0;
	return 1;
}

int ruby_iseq_from_eval(const char *file, size_t file_len)
{
	/* "(eval)" in 3.1; "(eval at FILE:LINE)" in later Rubies */
	return file_len >= 5 && memcmp(file, "(eval", 5) == 0;
}
