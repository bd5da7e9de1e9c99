/*
 * leaky.c - a C extension for real Ruby that leaks, for spec/native_test.c:
 * Leaky.leak(N, SIZE) mallocs N buffers of SIZE bytes in leaky_keep() and
 * keeps them; Leaky.release(N) frees N of them in leaky_drop().
 */
#include <ruby.h>
#include <stdlib.h>
#include <string.h>

static void **kept;
static long nkept, capkept;

__attribute__((noinline)) static void leaky_keep(long n, long size)
{
	for (long i = 0; i < n; i++) {
		if (nkept == capkept) {
			capkept = capkept ? 2 * capkept : 1024;
			kept = realloc(kept, (size_t)capkept * sizeof(*kept));
		}
		kept[nkept] = malloc((size_t)size); /* the leak */
		memset(kept[nkept], 1, (size_t)size);
		nkept++;
	}
}

__attribute__((noinline)) static void leaky_drop(long n)
{
	while (n-- > 0 && nkept > 0)
		free(kept[--nkept]);
}

static VALUE leak(VALUE self, VALUE n, VALUE size)
{
	(void)self;
	leaky_keep(NUM2LONG(n), NUM2LONG(size));
	return Qnil;
}

static VALUE release(VALUE self, VALUE n)
{
	(void)self;
	leaky_drop(NUM2LONG(n));
	return Qnil;
}

/* Leaky.forget(N, SIZE): N buffers malloc'd in leaky_forget(), every
 * pointer to them dropped (a leak the leak scan must call leaked).
 * (Below the rest: the tests name leaky.c's lines above.) */
static void *volatile forgotten;

__attribute__((noinline)) static void leaky_forget(long n, long size)
{
	for (long i = 0; i < n; i++) {
		forgotten = malloc((size_t)size);
		memset(forgotten, 2, (size_t)size);
	}
	forgotten = NULL;
}

static VALUE forget(VALUE self, VALUE n, VALUE size)
{
	(void)self;
	leaky_forget(NUM2LONG(n), NUM2LONG(size));
	return Qnil;
}

RUBY_FUNC_EXPORTED void Init_leaky(void)
{
	VALUE m = rb_define_module("Leaky");
	rb_define_module_function(m, "leak", leak, 2);
	rb_define_module_function(m, "release", release, 1);
	rb_define_module_function(m, "forget", forget, 2);
}
