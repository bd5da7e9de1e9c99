/*
 * holdout.c - a C extension for real Ruby, for spec/native_test.c's
 * hold-out shape of the leak scan (issue 25): Holdout.lose(N) mallocs N
 * blocks of 24 to 72 bytes, writes "lost I" into each with snprintf and
 * forgets them; Holdout.hold(N) keeps N 48-byte nodes in a list whose
 * head is a static.
 */
#include <ruby.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	char pad[40];
};

static struct node *head;

static VALUE lose(VALUE self, VALUE n)
{
	long k = NUM2LONG(n);
	(void)self;
	for (long i = 0; i < k; i++) {
		char *p = malloc(24 + (size_t)(i % 7) * 8);
		snprintf(p, 24, "lost %ld", i);
	}
	return Qnil;
}

static VALUE hold(VALUE self, VALUE n)
{
	long k = NUM2LONG(n);
	(void)self;
	for (long i = 0; i < k; i++) {
		struct node *x = malloc(sizeof *x);
		memset(x->pad, 'k', sizeof x->pad);
		x->next = head;
		head = x;
	}
	return Qnil;
}

RUBY_FUNC_EXPORTED void Init_holdout(void)
{
	VALUE m = rb_define_module("Holdout");
	rb_define_module_function(m, "lose", lose, 1);
	rb_define_module_function(m, "hold", hold, 1);
}
