/*
 * ruby_kinds.c - the object kinds of an imported dump_all: Ruby's T_ type
 * numbers, named as hosts/ruby names them ("object", "string", "imemo",
 * ...), followed by one kind per imemo type ("imemo:ment", ...) and
 * "unknown" (part of libvmheap-import).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruby_json-internal.h"

/* dump_all's "type" strings and Ruby's T_ values (ruby/internal/value_type.h)
 */
static const struct {
	const char *type;
	unsigned t;
} types[] = {
    {"NONE", 0x00},
    {"OBJECT", 0x01},
    {"CLASS", 0x02},
    {"MODULE", 0x03},
    {"FLOAT", 0x04},
    {"STRING", 0x05},
    {"REGEXP", 0x06},
    {"ARRAY", 0x07},
    {"HASH", 0x08},
    {"STRUCT", 0x09},
    {"BIGNUM", 0x0a},
    {"FILE", 0x0b},
    {"DATA", 0x0c},
    {"MATCH", 0x0d},
    {"COMPLEX", 0x0e},
    {"RATIONAL", 0x0f},
    {"NIL", 0x11},
    {"TRUE", 0x12},
    {"FALSE", 0x13},
    {"SYMBOL", 0x14},
    {"FIXNUM", 0x15},
    {"UNDEF", 0x16},
    {"IMEMO", RUBY_T_IMEMO},
    {"NODE", RUBY_T_NODE},
    {"ICLASS", RUBY_T_ICLASS},
    {"ZOMBIE", 0x1d},
    {"MOVED", 0x1e},
};

/* rb_imemo_name()'s names (MRI 3.1) */
static const char *const imemo_types[] = {
    "env",  "cref",	"svar",	     "throw_data", "ifunc",
    "memo", "ment",	"iseq",	     "tmpbuf",	   "parser_strterm",
    "ast",  "callinfo", "callcache", "constcache",
};
#define NIMEMO (sizeof(imemo_types) / sizeof(imemo_types[0]))

int ruby_kinds_init(struct ruby_kinds *k)
{
	size_t i, j;
	char name[64];

	k->count = RUBY_T_COUNT + NIMEMO + 1;
	k->names = calloc(k->count, sizeof(*k->names));
	if (!k->names)
		return VMHEAP_ENOMEM;
	for (i = 0; i < RUBY_T_COUNT; i++) {
		snprintf(name, sizeof(name), "unused-0x%02zx", i);
		k->names[i] = strdup(name);
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		for (j = 0; types[i].type[j] && j + 1 < sizeof(name); j++)
			name[j] = (char)(types[i].type[j] - 'A' + 'a');
		name[j] = '\0';
		free(k->names[types[i].t]);
		k->names[types[i].t] = strdup(name);
	}
	for (i = 0; i < NIMEMO; i++) {
		snprintf(name, sizeof(name), "imemo:%s", imemo_types[i]);
		k->names[RUBY_T_COUNT + i] = strdup(name);
	}
	k->names[k->count - 1] = strdup("unknown");
	for (i = 0; i < k->count; i++)
		if (!k->names[i])
			return VMHEAP_ENOMEM;
	return 0;
}

void ruby_kinds_free(struct ruby_kinds *k)
{
	size_t i;

	for (i = 0; k->names && i < k->count; i++)
		free(k->names[i]);
	free(k->names);
	k->names = NULL;
}

int ruby_kind_of_type(const char *type, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].type) == len &&
		    memcmp(types[i].type, type, len) == 0)
			return (int)types[i].t;
	return -1;
}

unsigned ruby_kind_of_imemo(const char *imemo, size_t len)
{
	size_t i;

	for (i = 0; i < NIMEMO; i++)
		if (strlen(imemo_types[i]) == len &&
		    memcmp(imemo_types[i], imemo, len) == 0)
			return (unsigned)(RUBY_T_COUNT + i);
	return RUBY_T_IMEMO;
}

unsigned ruby_kind_unknown(const struct ruby_kinds *k)
{
	return (unsigned)(k->count - 1);
}
