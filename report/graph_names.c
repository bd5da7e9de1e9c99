/*
 * graph_names.c - the names of references and roots (format 1.1) as the
 * graph tools show them: Hash["k17"], @store of Registry, constant
 * Registry::STORE, Node.next, root global $audit (part of
 * libvmheap-report).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_graph_query.h"
#include "vmheap_report.h"

/* Append len bytes of text as a text cell would show them. */
static void add_text_bytes(struct vmheap_strbuf *sb, const char *s, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy) {
		sb->failed = 1;
		return;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	vmheap_strbuf_add_text(sb, copy);
	free(copy);
}

static void add_class_of(struct vmheap_strbuf *sb, const vmheap_graph *g,
			 uint32_t i)
{
	vmheap_strbuf_add_object(sb, g, i, VMHEAP_OUTPUT_TEXT);
}

/* The name of a root record of object `i` that reads as a class's path
 * (its first letter upper case: a VM that names a class root by its
 * path, as the Ruby host does), or NULL. */
static const char *class_root_name(const vmheap_graph *g, uint32_t i,
				   size_t *len)
{
	for (size_t k = 0; k < vmheap_graph_root_count(g); k++) {
		const char *name;
		if (vmheap_graph_root(g, k)->object != i)
			continue;
		name = vmheap_graph_root_name(g, k, len);
		if (name && *name >= 'A' && *name <= 'Z')
			return name;
	}
	return NULL;
}

/*
 * The own name of `holder`, a class or module object holding a constant
 * or a static field: the class record whose id is the holder's id (a VM
 * whose class ids are its class objects' addresses), else the constant
 * the holder is itself reached by (*holder_in "::Registry": Registry;
 * holder_in may be NULL), else the name of a root that holds it and
 * reads as a class's path, else its class.
 */
static void add_holder_own_name(struct vmheap_strbuf *sb, const vmheap_graph *g,
				uint32_t holder,
				const struct vmheap_graph_name *holder_in)
{
	size_t len;
	uint64_t self;
	const char *own =
	    vmheap_graph_object_as_class(g, holder, &self)
		? vmheap_graph_class_name(g, self, &len)
		: vmheap_graph_class_name(g, vmheap_graph_object_id(g, holder),
					  &len);

	if (own && len) {
		add_text_bytes(sb, own, len);
	} else if (holder_in && holder_in->type == VMHEAP_GRAPH_NAME_TEXT &&
		   holder_in->len > 2 && !strncmp(holder_in->text, "::", 2)) {
		add_text_bytes(sb, holder_in->text + 2, holder_in->len - 2);
	} else if ((own = class_root_name(g, holder, &len))) {
		add_text_bytes(sb, own, len);
	} else {
		add_class_of(sb, g, holder);
	}
}

void vmheap_strbuf_add_holder(struct vmheap_strbuf *sb, const vmheap_graph *g,
			      uint32_t holder,
			      const struct vmheap_graph_name *name,
			      const struct vmheap_graph_name *holder_in)
{
	const char *t = name->text;

	switch (name->type) {
	case VMHEAP_GRAPH_NAME_NONE:
		add_class_of(sb, g, holder);
		return;
	case VMHEAP_GRAPH_NAME_INDEX:
		add_class_of(sb, g, holder);
		vmheap_strbuf_addf(sb, "[%" PRIu64 "]", name->index);
		return;
	case VMHEAP_GRAPH_NAME_UNKNOWN:
		vmheap_strbuf_addf(sb, "<string %" PRIu64 "> of ",
				   name->string_id);
		add_class_of(sb, g, holder);
		return;
	case VMHEAP_GRAPH_NAME_TEXT:
		break;
	}
	if (name->len > 2 && !strncmp(t, "::", 2)) {
		vmheap_strbuf_add(sb, "constant ", 9);
		add_holder_own_name(sb, g, holder, holder_in);
		add_text_bytes(sb, t, name->len);
	} else if (t[0] == '.') {
		/* a static field's class object has the class's own name */
		add_holder_own_name(sb, g, holder, NULL);
		add_text_bytes(sb, t, name->len);
	} else if (t[0] == '[') {
		add_class_of(sb, g, holder);
		add_text_bytes(sb, t, name->len);
	} else if (name->len >= 5 && !strncmp(t, "stack", 5)) {
		/* a thread's stack: "stack of thread 0x55d0 main" */
		add_text_bytes(sb, t, name->len);
	} else if (t[0] == '@') {
		/* "@store of Registry"; a class object known by name holds
		 * its own ivars: "@cache of Gem" */
		add_text_bytes(sb, t, name->len);
		vmheap_strbuf_add(sb, " of ", 4);
		add_holder_own_name(sb, g, holder, NULL);
	} else if (name->len > 6 && !strncmp(t, "local ", 6)) {
		/* "local messages of <main> (app.rb)" says whose it is */
		add_text_bytes(sb, t, name->len);
	} else {
		/* "key of Hash", "NAME of Holder" */
		add_text_bytes(sb, t, name->len);
		vmheap_strbuf_add(sb, " of ", 4);
		add_class_of(sb, g, holder);
	}
}

void vmheap_strbuf_add_root_text(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, size_t root)
{
	const char *kind = vmheap_graph_root(g, root)->kind;
	size_t len;
	const char *name = vmheap_graph_root_name(g, root, &len);

	vmheap_strbuf_add(sb, "root", 4);
	if (kind) {
		vmheap_strbuf_add(sb, " ", 1);
		vmheap_strbuf_add_text(sb, kind);
	}
	if (name) {
		vmheap_strbuf_add(sb, " ", 1);
		add_text_bytes(sb, name, len);
	}
}

void vmheap_strbuf_add_root_json(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, size_t root)
{
	const char *kind = vmheap_graph_root(g, root)->kind;
	size_t len;
	const char *name = vmheap_graph_root_name(g, root, &len);

	vmheap_strbuf_add(sb, "{\"kind\":", 8);
	if (kind)
		vmheap_strbuf_add_json(sb, kind);
	else
		vmheap_strbuf_add(sb, "null", 4);
	vmheap_strbuf_add(sb, ",\"name\":", 8);
	if (name)
		vmheap_strbuf_add_json_bytes(sb, name, len);
	else
		vmheap_strbuf_add(sb, "null", 4);
	vmheap_strbuf_add(sb, "}", 1);
}

void vmheap_strbuf_add_name_json(struct vmheap_strbuf *sb,
				 const struct vmheap_graph_name *name)
{
	switch (name->type) {
	case VMHEAP_GRAPH_NAME_NONE:
		break;
	case VMHEAP_GRAPH_NAME_TEXT:
		vmheap_strbuf_add(sb, ",\"name\":", 8);
		vmheap_strbuf_add_json_bytes(sb, name->text, name->len);
		break;
	case VMHEAP_GRAPH_NAME_INDEX:
		vmheap_strbuf_addf(sb, ",\"index\":%" PRIu64, name->index);
		break;
	case VMHEAP_GRAPH_NAME_UNKNOWN:
		vmheap_strbuf_addf(sb, ",\"name_string_id\":%" PRIu64,
				   name->string_id);
		break;
	}
}
