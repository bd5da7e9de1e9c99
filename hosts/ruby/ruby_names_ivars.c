/*
 * ruby_names_ivars.c - the instance variables of a plain object
 * (T_OBJECT) without rb_ivar_foreach, by its class's ivar layout.
 *
 * rb_ivar_foreach walks the class's whole ivar index table per object
 * (st_foreach_safe and a callback per ivar), and the callback looked up
 * each ivar's name string: together 8.7% of a fork dump child's
 * instructions on the bench heap (callgrind, 317k objects), 5.6% with a
 * layout per class and its names kept (the child: -2.8%).
 * MRI keeps an object's ivars in ROBJECT_IVPTR, slot i holding the ivar
 * whose index in the class's table is i (Qundef where unset), and
 * rb_ivar_foreach reports the ivars in the table's order.  A layout is
 * that order and those indices, learnt once per class from one object
 * by rb_ivar_foreach itself: a (ID, value) pair it reports belongs to the
 * slot holding that value, taken only when exactly one slot holds it and
 * every set slot is accounted for (an object whose ivars repeat a value,
 * such as two nils, teaches nothing; the next one of its class is
 * tried, up to LEARN_TRIES).
 *
 * An object then gets its references from its slots, in the learnt order,
 * each with its ivar's name (asked of name_of once per class and ivar,
 * when first needed, so no name is made that the ivar-by-ivar way would
 * not make), only
 * when every set slot is one the layout knows; otherwise (an ivar the
 * learning object did not have, more ivars than LAYOUT_MAX) the caller
 * falls back to rb_ivar_foreach.  Both give the same pairs in the same
 * order.  The class's table does not change during a walk: the walk
 * runs holding the GVL, or alone in a forked child.  Allocates no Ruby
 * object; C heap only.
 */
#include <stdlib.h>
#include <string.h>

#include "ruby-internal.h"

#define LAYOUT_MAX 16 /* ivars a layout holds */
#define LEARN_TRIES 8 /* objects a class may teach before giving up */

enum { LAYOUT_NONE, LAYOUT_KNOWN, LAYOUT_UNUSABLE };

struct ruby_ivar_layout {
	int state;
	int tries;
	int count;
	uint32_t index[LAYOUT_MAX];
	ID id[LAYOUT_MAX];
	int64_t name[LAYOUT_MAX]; /* name_fn's, once asked; 0: not yet */
};

/* What rb_ivar_foreach reports while learning. */
struct learning {
	int count, overflow;
	ID id[LAYOUT_MAX];
	VALUE value[LAYOUT_MAX];
};

void ruby_ivar_layouts_init(struct ruby_ivar_layouts *t)
{
	memset(t, 0, sizeof(*t));
	ruby_class_table_init(&t->classes);
}

void ruby_ivar_layouts_free(struct ruby_ivar_layouts *t)
{
	ruby_class_table_free(&t->classes);
	free(t->layouts);
	memset(t, 0, sizeof(*t));
}

/* The layout slot of klass, made empty when new; NULL without memory. */
static struct ruby_ivar_layout *layout_of(struct ruby_ivar_layouts *t,
					  VALUE klass)
{
	uint32_t i = ruby_class_table_get(&t->classes, (uint64_t)klass);

	if (!i) {
		if (t->count == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 16;
			struct ruby_ivar_layout *l =
			    realloc(t->layouts, cap * sizeof(*l));

			if (!l)
				return NULL;
			t->layouts = l;
			t->cap = cap;
		}
		i = ruby_class_table_add(&t->classes, (uint64_t)klass);
		if (!i)
			return NULL;
		memset(&t->layouts[i - 1], 0, sizeof(t->layouts[i - 1]));
		t->count = i;
	}
	return &t->layouts[i - 1];
}

static int learn_pair(ID id, VALUE value, st_data_t arg)
{
	struct learning *l = (struct learning *)arg;

	if (l->count == LAYOUT_MAX) {
		l->overflow = 1;
		return ST_STOP;
	}
	l->id[l->count] = id;
	l->value[l->count++] = value;
	return ST_CONTINUE;
}

/* Learn obj's class layout from obj; 0 when obj could not teach it (the
 * layout is then as it was). */
static int learn(struct ruby_ivar_layout *lay, VALUE obj)
{
	struct learning l;
	uint32_t index[LAYOUT_MAX];
	uint32_t n = ROBJECT_NUMIV(obj), i, set = 0;
	const VALUE *slot = ROBJECT_IVPTR(obj);
	int j;

	memset(&l, 0, sizeof(l));
	rb_ivar_foreach(obj, learn_pair, (st_data_t)&l);
	if (l.overflow) {
		lay->state = LAYOUT_UNUSABLE;
		return 0;
	}
	for (i = 0; i < n; i++)
		set += slot[i] != Qundef;
	if (set != (uint32_t)l.count)
		return 0;
	for (j = 0; j < l.count; j++) {
		uint32_t at = 0, found = 0;

		for (i = 0; i < n; i++)
			if (slot[i] == l.value[j]) {
				at = i;
				found++;
			}
		if (found != 1)
			return 0;
		index[j] = at;
	}
	for (j = 0; j < l.count; j++) {
		lay->index[j] = index[j];
		lay->id[j] = l.id[j];
		lay->name[j] = 0;
	}
	lay->count = l.count;
	lay->state = LAYOUT_KNOWN;
	return 1;
}

/* 1 when every set slot of obj is one the layout knows. */
static int covers(const struct ruby_ivar_layout *lay, const VALUE *slot,
		  uint32_t n)
{
	uint32_t i, set = 0, known = 0;
	int j;

	for (i = 0; i < n; i++)
		set += slot[i] != Qundef;
	for (j = 0; j < lay->count; j++)
		known += lay->index[j] < n && slot[lay->index[j]] != Qundef;
	return set == known;
}

int ruby_ivar_layouts_each(struct ruby_ivar_layouts *t, VALUE obj,
			   ruby_ivar_name_fn name_of, ruby_ivar_ref_fn ref,
			   void *arg)
{
	struct ruby_ivar_layout *lay;
	const VALUE *slot;
	uint32_t n;
	int j;

	if (RB_BUILTIN_TYPE(obj) != T_OBJECT || !RBASIC_CLASS(obj))
		return 0;
	lay = layout_of(t, RBASIC_CLASS(obj));
	if (!lay || lay->state == LAYOUT_UNUSABLE)
		return 0;
	n = ROBJECT_NUMIV(obj);
	slot = ROBJECT_IVPTR(obj);
	if (lay->state != LAYOUT_KNOWN || !covers(lay, slot, n)) {
		/* learn from this object, or let the caller fall back */
		if (lay->tries >= LEARN_TRIES)
			return 0;
		lay->tries++;
		if (!learn(lay, obj))
			return 0;
	}
	for (j = 0; j < lay->count; j++) {
		VALUE v;

		if (lay->index[j] >= n)
			continue;
		v = slot[lay->index[j]];
		if (v == Qundef || RB_SPECIAL_CONST_P(v))
			continue; /* no reference: no name asked for */
		if (!lay->name[j])
			lay->name[j] = name_of(lay->id[j], arg);
		if (ref(v, lay->name[j], arg) < 0)
			break;
	}
	return 1;
}
