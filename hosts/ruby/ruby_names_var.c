/*
 * ruby_names_var.c - config.dump.names, the Ruby host's variable that
 * turns names on references and roots on (the default) or off.  Read on
 * the agent's threads and in the walk: an atomic.
 */
#include "ruby-internal.h" /* first: Ruby's headers before stdatomic.h */

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int names_on = 1;

int ruby_names_enabled(void)
{
	return atomic_load(&names_on);
}

#define NAMES_VAR "config.dump.names"

void ruby_names_list_var(void (*add)(void *arg, const char *name,
				     const char *type),
			 void *arg)
{
	add(arg, NAMES_VAR, "bool");
}

int ruby_names_get_var(const char *name, vmheap_value_writer *pk)
{
	if (strcmp(name, NAMES_VAR) != 0)
		return VMHEAP_AGENT_ENOTFOUND;
	return vmheap_value_write_bool(pk, atomic_load(&names_on));
}

int ruby_names_set_var(const char *name, const vmheap_value *value,
		       vmheap_value_writer *pk, char *err, size_t errlen)
{
	int on;
	const char *s = NULL;
	size_t len = 0;

	if (strcmp(name, NAMES_VAR) != 0)
		return VMHEAP_AGENT_ENOTFOUND;
	if (vmheap_value_str(value, &s, &len) < 0)
		len = 0;
	if (vmheap_value_bool(value, &on) < 0) {
		if (len == 4 && !memcmp(s, "true", 4)) {
			on = 1;
		} else if (len == 5 && !memcmp(s, "false", 5)) {
			on = 0;
		} else {
			if (errlen)
				snprintf(err, errlen,
					 NAMES_VAR
					 " takes a boolean (true/false)");
			return VMHEAP_AGENT_ETYPE;
		}
	}
	atomic_store(&names_on, on);
	return ruby_names_get_var(name, pk);
}
