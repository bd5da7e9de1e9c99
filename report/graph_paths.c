/*
 * graph_paths.c - paths from the roots and class labels of a heap graph,
 * as text and JSON (part of libvmheap-report).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "vmheap_graph_query.h"
#include "vmheap_report.h"

/* Add `label` (a graph label, owned: freed here; NULL after a failed
 * allocation) in the output format f. */
static void add_label(struct vmheap_strbuf *sb, char *label,
		      enum vmheap_output_format f)
{
	const char *s = label ? label : "<out of memory>";

	switch (f) {
	case VMHEAP_OUTPUT_TEXT:
		vmheap_strbuf_add_text(sb, s);
		break;
	case VMHEAP_OUTPUT_JSON:
		vmheap_strbuf_add_json(sb, s);
		break;
	case VMHEAP_OUTPUT_CSV:
		vmheap_strbuf_add_csv(sb, s);
		break;
	}
	free(label);
}

void vmheap_strbuf_add_class(struct vmheap_strbuf *sb, const vmheap_graph *g,
			     uint64_t class_id, enum vmheap_output_format f)
{
	add_label(sb, vmheap_graph_class_label(g, class_id), f);
}

void vmheap_strbuf_add_object(struct vmheap_strbuf *sb, const vmheap_graph *g,
			      uint32_t i, enum vmheap_output_format f)
{
	add_label(sb, vmheap_graph_object_label(g, i), f);
}

void vmheap_strbuf_add_self_json(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i)
{
	uint64_t self;

	if (!vmheap_graph_object_as_class(g, i, &self))
		return;
	vmheap_strbuf_addf(sb, ",\"class_of_itself\":");
	vmheap_strbuf_add_class(sb, g, self, VMHEAP_OUTPUT_JSON);
}

/* The path of i into a new array; its length in *len (0: unreachable or
 * out of memory, then sb fails in the second case). */
static uint32_t *path_of(struct vmheap_strbuf *sb, const vmheap_graph *g,
			 uint32_t i, size_t *len, size_t *root)
{
	int64_t n = vmheap_graph_path(g, i, NULL, 0, root);
	uint32_t *path;

	*len = 0;
	if (n <= 0)
		return NULL;
	if (!(path = malloc((size_t)n * sizeof(*path)))) {
		sb->failed = 1;
		return NULL;
	}
	*len = (size_t)vmheap_graph_path(g, i, path, (size_t)n, root);
	return path;
}

/* Segments of the one-line chain shown at each end of a long path. */
#define CHAIN_ENDS 4

/* The holder phrase of path[k] (k + 1 < len): it holds path[k + 1]. */
static void add_path_holder(struct vmheap_strbuf *sb, const vmheap_graph *g,
			    const uint32_t *path, size_t k)
{
	struct vmheap_graph_name name, in;

	vmheap_graph_path_name(g, path[k + 1], &name);
	vmheap_graph_path_name(g, path[k], &in);
	vmheap_strbuf_add_holder(sb, g, path[k], &name, &in);
}

/* 1 when holders k and k + 1 of the path are one run: the same class
 * holding the next object by the same named reference ("@next"). */
static int same_step(const vmheap_graph *g, const uint32_t *path, size_t k)
{
	struct vmheap_graph_name a, b;

	if (vmheap_graph_object_class(g, path[k]) !=
	    vmheap_graph_object_class(g, path[k + 1]))
		return 0;
	vmheap_graph_path_name(g, path[k + 1], &a);
	vmheap_graph_path_name(g, path[k + 2], &b);
	return a.type == VMHEAP_GRAPH_NAME_TEXT &&
	       b.type == VMHEAP_GRAPH_NAME_TEXT && a.string_id == b.string_id;
}

/* " ×99,999" */
static void add_times(struct vmheap_strbuf *sb, uint64_t n)
{
	char digits[32], out[48];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, n), o = 0;

	for (int d = 0; d < len; d++) {
		if (d && (len - d) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[d];
	}
	out[o] = 0;
	vmheap_strbuf_addf(sb, " \xc3\x97%s", out);
}

static void add_holders(struct vmheap_strbuf *sb, const vmheap_graph *g,
			const uint32_t *path, size_t len, size_t root);

/* "Entry ← Hash["k17"] ← @store of Registry ← root vm": the target, then
 * each holder up to the root, a run of holders of one class by one name
 * as one "@next of Node ×99,999". */
static void add_chain(struct vmheap_strbuf *sb, const vmheap_graph *g,
		      const uint32_t *path, size_t len, size_t root)
{
	vmheap_strbuf_add_object(sb, g, path[len - 1], VMHEAP_OUTPUT_TEXT);
	vmheap_strbuf_add(sb, " \xe2\x86\x90 ", 5);
	add_holders(sb, g, path, len, root);
}

/* The holders of add_chain, from the target's up to the root. */
static void add_holders(struct vmheap_strbuf *sb, const vmheap_graph *g,
			const uint32_t *path, size_t len, size_t root)
{
	size_t *seg = malloc((len ? len : 1) * sizeof(*seg)), nseg = 0;

	if (!seg) {
		sb->failed = 1;
		return;
	}
	/* seg[]: the first holder (nearest the target) of each run */
	for (size_t k = len - 1; k-- > 0;)
		if (k + 2 >= len || !same_step(g, path, k))
			seg[nseg++] = k;
	for (size_t x = 0; x < nseg; x++) {
		size_t k = seg[x], end = x + 1 < nseg ? seg[x + 1] : (size_t)-1;
		if (nseg > 2 * CHAIN_ENDS + 1 && x == CHAIN_ENDS) {
			size_t skip = nseg - 2 * CHAIN_ENDS, objects = 0;
			for (size_t y = x; y < x + skip; y++)
				objects += seg[y] - (y + 1 < nseg ? seg[y + 1]
								  : (size_t)-1);
			vmheap_strbuf_addf(sb, "... %zu more \xe2\x86\x90 ",
					   objects);
			x += skip - 1;
			continue;
		}
		add_path_holder(sb, g, path, k);
		if (k - end > 1)
			add_times(sb, k - end);
		vmheap_strbuf_add(sb, " \xe2\x86\x90 ", 5);
	}
	free(seg);
	vmheap_strbuf_add_root_text(sb, g, root);
}

/* "also from the stack of thread 0x55d0 main (holding Hash 0x7f10)": a
 * thread's stack also holds an object on the path (libvmheap-analysis:
 * vmheap_graph_stack_holder). */
static void add_stack_holder(struct vmheap_strbuf *sb, const vmheap_graph *g,
			     uint32_t i,
			     const struct vmheap_graph_stack_holder *hp);
static int has_names(const vmheap_graph *g);

static void add_also_from(struct vmheap_strbuf *sb, const vmheap_graph *g,
			  uint32_t i, const char *indent)
{
	struct vmheap_graph_stack_holder h;
	int rc = vmheap_graph_stack_holder(g, i, &h);

	if (rc == VMHEAP_ENOMEM)
		sb->failed = 1;
	if (rc != 1)
		return;
	vmheap_strbuf_addf(sb, "%salso from ", indent);
	add_stack_holder(sb, g, i, &h);
	vmheap_strbuf_add(sb, "\n", 1);
}

/* "the stack of thread 0x55d0 main (holding Hash 0x7f10)" */
static void add_stack_holder(struct vmheap_strbuf *sb, const vmheap_graph *g,
			     uint32_t i,
			     const struct vmheap_graph_stack_holder *hp)
{
	struct vmheap_graph_stack_holder h = *hp;
	struct vmheap_graph_name name;

	if (h.holder == VMHEAP_GRAPH_ROOT) {
		vmheap_strbuf_add_root_text(sb, g, h.reference);
	} else {
		vmheap_graph_reference_name(g, h.holder, h.reference, &name);
		vmheap_strbuf_add(sb, "the ", 4);
		vmheap_strbuf_add_holder(sb, g, h.holder, &name, NULL);
	}
	if (h.object != i) {
		vmheap_strbuf_add(sb, " (holding ", 10);
		vmheap_strbuf_add_class(sb, g, vmheap_graph_object_class(g, h.object),
					VMHEAP_OUTPUT_TEXT);
		vmheap_strbuf_addf(sb, " 0x%" PRIx64 ")",
				   vmheap_graph_object_id(g, h.object));
	}
}

void vmheap_strbuf_add_also_from(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i)
{
	struct vmheap_graph_stack_holder h;
	int rc = vmheap_graph_stack_holder(g, i, &h);

	if (rc == 1) {
		vmheap_strbuf_add(sb, "; also from ", 12);
		add_stack_holder(sb, g, i, &h);
	} else if (rc == VMHEAP_ENOMEM) {
		sb->failed = 1;
	}
}

/* 1 when the dump names references or roots: the path shows names. */
static int has_names(const vmheap_graph *g)
{
	if (vmheap_graph_has_edge_names(g))
		return 1;
	for (size_t k = 0; k < vmheap_graph_root_count(g); k++)
		if (vmheap_graph_root(g, k)->name_string_id)
			return 1;
	return 0;
}

void vmheap_strbuf_add_path_text(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i,
				 const char *indent)
{
	size_t len, root;
	uint32_t *path = path_of(sb, g, i, &len, &root);

	if (!path)
		return;
	if (has_names(g)) {
		vmheap_strbuf_addf(sb, "%s", indent);
		add_chain(sb, g, path, len, root);
		vmheap_strbuf_add(sb, "\n", 1);
	}
	add_also_from(sb, g, i, indent);
	vmheap_strbuf_addf(sb, "%s", indent);
	vmheap_strbuf_add_root_text(sb, g, root);
	vmheap_strbuf_add(sb, "\n", 1);
	for (size_t k = 0; k < len; k++) {
		struct vmheap_graph_name name;
		if (len > 2 * VMHEAP_PATH_ENDS && k == VMHEAP_PATH_ENDS) {
			size_t skip = len - 2 * VMHEAP_PATH_ENDS;
			vmheap_strbuf_addf(sb, "%s  ... %zu more objects ...\n",
					   indent, skip);
			k += skip - 1;
			continue;
		}
		vmheap_strbuf_addf(sb, "%s  ", indent);
		vmheap_strbuf_add_object(sb, g, path[k], VMHEAP_OUTPUT_TEXT);
		vmheap_strbuf_addf(sb, "  0x%" PRIx64,
				   vmheap_graph_object_id(g, path[k]));
		if (k && vmheap_graph_path_name(g, path[k], &name) !=
			     VMHEAP_GRAPH_NAME_NONE) {
			vmheap_strbuf_add(sb, "  \xe2\x86\x90 ", 6);
			add_path_holder(sb, g, path, k - 1);
		}
		vmheap_strbuf_add(sb, "\n", 1);
	}
	free(path);
}

void vmheap_strbuf_add_shape_steps(struct vmheap_strbuf *sb,
				   const vmheap_graph *g, uint32_t example,
				   size_t length, const uint64_t *classes)
{
	size_t len = 0, root;
	uint32_t *path = length > 1 ? path_of(sb, g, example, &len, &root)
				    : NULL;

	for (size_t l = 0; l + 1 < length; l++) {
		struct vmheap_graph_name name;

		vmheap_strbuf_add(sb, " > ", 3);
		/* the example's own path, when it is this shape's */
		if (path && len == length &&
		    vmheap_graph_object_class(g, path[l]) == classes[l]) {
			if (vmheap_graph_path_name(g, path[l + 1], &name) ==
			    VMHEAP_GRAPH_NAME_TEXT)
				add_path_holder(sb, g, path, l);
			else
				vmheap_strbuf_add_object(sb, g, path[l],
							 VMHEAP_OUTPUT_TEXT);
			continue;
		}
		vmheap_strbuf_add_class(sb, g, classes[l], VMHEAP_OUTPUT_TEXT);
	}
	free(path);
}

void vmheap_strbuf_add_path_group(struct vmheap_strbuf *sb,
				  const struct vmheap_report_options *o,
				  const vmheap_graph *g,
				  const struct vmheap_graph_path_group *grp,
				  size_t k, const char *noun, uint64_t of,
				  const char *indent)
{
	char share[16], size[32], deeper[64];
	int64_t objects = vmheap_graph_path(g, grp->example, NULL, 0, NULL);

	vmheap_format_share(share, sizeof(share), (double)grp->count,
			    (double)of, 0);
	vmheap_report_amount(o, size, sizeof(size), grp->bytes);
	vmheap_strbuf_addf(sb,
			   "%s#%zu  %" PRIu64 " %s (%s), %s, path of %zu "
			   "object%s\n",
			   indent, k, grp->count, noun, share, size,
			   (size_t)objects, objects == 1 ? "" : "s");
	snprintf(deeper, sizeof(deeper), "%s    ", indent);
	vmheap_strbuf_add_path_text(sb, g, grp->example, deeper);
}

/* ,"also_from":{"holder":TEXT,"object":"0x..."} or null */
static void add_also_from_json(struct vmheap_strbuf *sb, const vmheap_graph *g,
			       uint32_t i)
{
	struct vmheap_strbuf text = VMHEAP_STRBUF_INIT;
	struct vmheap_graph_stack_holder h;
	struct vmheap_graph_name name;
	int rc = vmheap_graph_stack_holder(g, i, &h);

	if (rc == VMHEAP_ENOMEM)
		sb->failed = 1;
	if (rc != 1) {
		vmheap_strbuf_add(sb, ",\"also_from\":null", 17);
		return;
	}
	if (h.holder == VMHEAP_GRAPH_ROOT) {
		vmheap_strbuf_add_root_text(&text, g, h.reference);
	} else {
		vmheap_graph_reference_name(g, h.holder, h.reference, &name);
		vmheap_strbuf_add_holder(&text, g, h.holder, &name, NULL);
	}
	vmheap_strbuf_add(sb, ",\"also_from\":{\"holder\":", 23);
	vmheap_strbuf_add_json(sb, text.buf ? text.buf : "");
	vmheap_strbuf_addf(sb, ",\"object\":\"0x%" PRIx64 "\"}",
			   vmheap_graph_object_id(g, h.object));
	if (text.failed)
		sb->failed = 1;
	vmheap_strbuf_release(&text);
}

void vmheap_strbuf_add_path_json(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i)
{
	size_t len, root;
	uint32_t *path = path_of(sb, g, i, &len, &root);

	vmheap_strbuf_add(sb, "\"root\":", 7);
	if (!path) {
		vmheap_strbuf_add(sb, "null,\"length\":0,\"path\":[]", 25);
		return;
	}
	vmheap_strbuf_add_root_json(sb, g, root);
	vmheap_strbuf_addf(sb, ",\"length\":%zu,\"path\":[", len);
	for (size_t k = 0; k < len; k++) {
		struct vmheap_graph_name name;
		vmheap_strbuf_addf(sb, "%s{\"class\":", k ? "," : "");
		vmheap_strbuf_add_class(sb, g,
					vmheap_graph_object_class(g, path[k]),
					VMHEAP_OUTPUT_JSON);
		vmheap_strbuf_addf(sb, ",\"address\":\"0x%" PRIx64 "\"",
				   vmheap_graph_object_id(g, path[k]));
		vmheap_strbuf_add_self_json(sb, g, path[k]);
		vmheap_graph_path_name(g, path[k], &name);
		vmheap_strbuf_add_name_json(sb, &name);
		vmheap_strbuf_add(sb, "}", 1);
	}
	vmheap_strbuf_add(sb, "]", 1);
	free(path);
	add_also_from_json(sb, g, i);
}

void vmheap_strbuf_add_held_by(struct vmheap_strbuf *sb, const vmheap_graph *g,
			       const struct vmheap_graph_path_group *grp)
{
	vmheap_strbuf_add_root_text(sb, g, grp->root);
	vmheap_strbuf_add_shape_steps(sb, g, grp->example, grp->length,
				      grp->classes);
	vmheap_strbuf_add_also_from(sb, g, grp->example);
}
