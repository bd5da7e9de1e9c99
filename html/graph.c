/*
 * graph.c - vmheap-report's view of the last dump's heap graph: the
 * dominator tree, cut to the objects that retain the most, and the merged
 * paths from the roots to the classes that grew most.
 *
 * The tree is chosen greedily: of the objects already in it, the one that
 * retains the most is expanded next (its HTML_TREE_CHILDREN children that
 * retain the most join the tree), until HTML_TREE_NODES objects are in or
 * nothing is left to expand above HTML_TREE_DEPTH.  So the big retainers
 * are followed deep, and every node says how many of its children, and
 * how many of their bytes, the report leaves out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html-internal.h"

struct tree_node {
	uint32_t obj;
	int32_t parent;	      /* node index, -1 under the virtual root */
	uint32_t depth;	      /* 1 under the virtual root */
	uint32_t shown;	      /* children in the report */
	uint64_t shown_bytes; /* their retained bytes */
};

struct tree {
	const vmheap_graph *g;
	uint32_t *first; /* children of object o: kids[first[o]..first[o+1]),
			    o = n for the virtual root */
	uint32_t *kids;
	struct tree_node *nodes;
	size_t nnodes;
	uint32_t *heap; /* node indices, most retained on top */
	size_t nheap;
	uint32_t *labels; /* class table position -> label index, or NONE */
	uint32_t nlabels;
	/* what each label names: a class table position, or with
	 * LABEL_OBJECT set a class object's index (its own label, "Class
	 * Service"); room for every class and every node */
	uint64_t *label_src;
	/* per class table position, while the children of one object are
	 * grouped by class: their retained bytes and count */
	uint64_t *class_bytes;
	uint32_t *class_count;
	size_t *touched; /* the positions set, to clear them after */
};

static uint64_t retained(const struct tree *t, uint32_t obj)
{
	return vmheap_graph_retained_bytes(t->g, obj);
}

/* `text` (the shared text helpers' output) as a JSON string. */
static void text_json(struct vmheap_strbuf *sb, struct vmheap_strbuf *text)
{
	if (text->failed) {
		sb->failed = 1;
	} else {
		vmheap_strbuf_add_json_bytes(sb, text->len ? text->buf : "",
					     text->len);
	}
	vmheap_strbuf_release(text);
}

/* The children lists of the dominator tree (counting sort by idom). */
static int build_children(struct tree *t)
{
	uint32_t n = vmheap_graph_object_count(t->g);

	t->first = calloc((size_t)n + 2, sizeof(uint32_t));
	t->kids = malloc(((size_t)n ? n : 1) * sizeof(uint32_t));
	if (!t->first || !t->kids)
		return VMHEAP_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t d = vmheap_graph_idom(t->g, i);
		if (d == VMHEAP_GRAPH_NONE)
			continue;
		t->first[(d == VMHEAP_GRAPH_ROOT ? n : d) + 1]++;
	}
	for (size_t o = 0; o <= n; o++)
		t->first[o + 1] += t->first[o];
	/* first[o] is now where o's children start; fill, then shift back */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t d = vmheap_graph_idom(t->g, i);
		if (d == VMHEAP_GRAPH_NONE)
			continue;
		t->kids[t->first[d == VMHEAP_GRAPH_ROOT ? n : d]++] = i;
	}
	for (size_t o = (size_t)n + 1; o > 0; o--)
		t->first[o] = t->first[o - 1];
	t->first[0] = 0;
	return 0;
}

static void heap_push(struct tree *t, uint32_t node)
{
	size_t i = t->nheap++;
	uint64_t r = retained(t, t->nodes[node].obj);

	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (retained(t, t->nodes[t->heap[up]].obj) >= r)
			break;
		t->heap[i] = t->heap[up];
		i = up;
	}
	t->heap[i] = node;
}

static uint32_t heap_pop(struct tree *t)
{
	uint32_t top = t->heap[0], last = t->heap[--t->nheap];
	uint64_t r = retained(t, t->nodes[last].obj);
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= t->nheap)
			break;
		if (c + 1 < t->nheap &&
		    retained(t, t->nodes[t->heap[c + 1]].obj) >
			retained(t, t->nodes[t->heap[c]].obj))
			c++;
		if (retained(t, t->nodes[t->heap[c]].obj) <= r)
			break;
		t->heap[i] = t->heap[c];
		i = c;
	}
	if (t->nheap)
		t->heap[i] = last;
	return top;
}

/* The k children of `o` (n: the virtual root) that retain the most, most
 * first (ties: lower index), into best; returns k. */
static size_t top_children(const struct tree *t, size_t o, uint32_t *best,
			   size_t cap)
{
	size_t k = 0;

	for (uint32_t j = t->first[o]; j < t->first[o + 1]; j++) {
		uint32_t c = t->kids[j];
		uint64_t r = retained(t, c);
		size_t at = k;
		if (k == cap && r <= retained(t, best[k - 1]))
			continue;
		while (at > 0 && retained(t, best[at - 1]) < r)
			at--;
		if (k < cap)
			k++;
		memmove(best + at + 1, best + at, (k - 1 - at) * sizeof(*best));
		best[at] = c;
	}
	return k;
}

/* Add the top children of node `p` (-1: the virtual root). */
static void expand(struct tree *t, int32_t p)
{
	uint32_t n = vmheap_graph_object_count(t->g);
	size_t o = p < 0 ? n : t->nodes[p].obj;
	uint32_t depth = p < 0 ? 1 : t->nodes[p].depth + 1;
	uint32_t best[HTML_TREE_CHILDREN];
	size_t room = HTML_TREE_NODES - t->nnodes;
	size_t cap = room < HTML_TREE_CHILDREN ? room : HTML_TREE_CHILDREN;
	size_t k = top_children(t, o, best, cap);

	for (size_t i = 0; i < k; i++) {
		uint32_t node = (uint32_t)t->nnodes++;
		t->nodes[node] = (struct tree_node){
		    .obj = best[i], .parent = p, .depth = depth};
		if (p >= 0) {
			t->nodes[p].shown++;
			t->nodes[p].shown_bytes += retained(t, best[i]);
		}
		if (depth < HTML_TREE_DEPTH &&
		    t->first[best[i] + 1] > t->first[best[i]])
			heap_push(t, node);
	}
}

#define LABEL_OBJECT (UINT64_C(1) << 63)

/* The label of class table position c, made when new. */
static uint32_t class_label(struct tree *t, size_t c)
{
	if (t->labels[c] == UINT32_MAX) {
		t->label_src[t->nlabels] = c;
		t->labels[c] = t->nlabels++;
	}
	return t->labels[c];
}

/* A node's label: its class's, or for a class object a label of its own
 * (each object is one node, so it is made once). */
static uint32_t label_of(struct tree *t, uint32_t obj)
{
	uint64_t self;

	if (vmheap_graph_object_as_class(t->g, obj, &self)) {
		t->label_src[t->nlabels] = LABEL_OBJECT | obj;
		return t->nlabels++;
	}
	return class_label(t, vmheap_graph_object_class_index(t->g, obj));
}

/*
 * All the children of `o` (n: the virtual root) grouped by class: the
 * HTML_TREE_GROUPS classes whose children retain the most, as
 * [[label, count, retained bytes], ...], most first.
 */
static void groups_json(struct tree *t, struct vmheap_strbuf *sb, size_t o)
{
	size_t ntouched = 0, best[HTML_TREE_GROUPS], k = 0;

	for (uint32_t j = t->first[o]; j < t->first[o + 1]; j++) {
		size_t c = vmheap_graph_object_class_index(t->g, t->kids[j]);
		if (!t->class_count[c]++)
			t->touched[ntouched++] = c;
		t->class_bytes[c] += retained(t, t->kids[j]);
	}
	for (size_t i = 0; i < ntouched; i++) {
		size_t c = t->touched[i], at = k;
		uint64_t b = t->class_bytes[c];
		if (k == HTML_TREE_GROUPS && b <= t->class_bytes[best[k - 1]])
			continue;
		while (at > 0 && t->class_bytes[best[at - 1]] < b)
			at--;
		if (k < HTML_TREE_GROUPS)
			k++;
		memmove(best + at + 1, best + at, (k - 1 - at) * sizeof(*best));
		best[at] = c;
	}
	vmheap_strbuf_add(sb, "[", 1);
	for (size_t i = 0; i < k; i++) {
		size_t c = best[i];
		uint32_t l = class_label(t, c);
		vmheap_strbuf_addf(
		    sb, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 "]", i ? "," : "",
		    l, t->class_count[c], t->class_bytes[c]);
	}
	vmheap_strbuf_add(sb, "]", 1);
	for (size_t i = 0; i < ntouched; i++) {
		t->class_bytes[t->touched[i]] = 0;
		t->class_count[t->touched[i]] = 0;
	}
}

/*
 * "top_roots": for each of the first `top` nodes (those under the virtual
 * root), the first root record that names its object as people read it
 * ("root KIND NAME"), or null (an object reached from several roots, no
 * single one holding it).
 */
static void top_roots_json(struct tree *t, struct vmheap_strbuf *sb, size_t top)
{
	size_t nroots = vmheap_graph_root_count(t->g);

	vmheap_strbuf_add(sb, ",\"top_roots\":[", 14);
	for (size_t i = 0; i < top; i++) {
		size_t k = 0;
		while (k < nroots &&
		       vmheap_graph_root(t->g, k)->object != t->nodes[i].obj)
			k++;
		if (i)
			vmheap_strbuf_add(sb, ",", 1);
		if (k < nroots) {
			struct vmheap_strbuf text = VMHEAP_STRBUF_INIT;
			vmheap_strbuf_add_root_text(&text, t->g, k);
			text_json(sb, &text);
		} else {
			vmheap_strbuf_add(sb, "null", 4);
		}
	}
	vmheap_strbuf_add(sb, "]", 1);
}

static void tree_json(struct tree *t, struct vmheap_strbuf *sb,
		      size_t top_shown)
{
	uint32_t n = vmheap_graph_object_count(t->g);
	uint64_t unreachable = 0, unreachable_bytes = 0, top_bytes = 0;

	vmheap_graph_unreachable(t->g, &unreachable, &unreachable_bytes);
	for (size_t i = 0; i < top_shown; i++)
		top_bytes += retained(t, t->nodes[i].obj);
	vmheap_strbuf_addf(
	    sb,
	    "{\"objects\":%" PRIu32 ",\"bytes\":%" PRIu64
	    ",\"unreachable\":%" PRIu64 ",\"unreachable_bytes\":%" PRIu64
	    ",\"top\":%" PRIu32 ",\"top_bytes\":%" PRIu64
	    ",\"top_shown_bytes\":%" PRIu64 ",\"top_groups\":",
	    n, vmheap_graph_total_bytes(t->g), unreachable, unreachable_bytes,
	    t->first[n + 1] - t->first[n],
	    vmheap_graph_total_bytes(t->g) - unreachable_bytes, top_bytes);
	groups_json(t, sb, n);
	top_roots_json(t, sb, top_shown);
	vmheap_strbuf_add(sb, ",\"nodes\":[", 10);
	/* [parent, label, "0xID", shallow, retained, children, shown,
	 * shown retained bytes, and for an object whose children are shown
	 * its children grouped by class (groups_json)] */
	for (size_t i = 0; i < t->nnodes; i++) {
		const struct tree_node *nd = &t->nodes[i];
		vmheap_strbuf_addf(
		    sb,
		    "%s[%" PRId32 ",%" PRIu32 ",\"0x%" PRIx64 "\",%" PRIu64
		    ",%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64,
		    i ? "," : "", nd->parent, label_of(t, nd->obj),
		    vmheap_graph_object_id(t->g, nd->obj),
		    vmheap_graph_object_bytes(t->g, nd->obj),
		    retained(t, nd->obj),
		    t->first[nd->obj + 1] - t->first[nd->obj], nd->shown,
		    nd->shown_bytes);
		if (nd->shown) {
			vmheap_strbuf_add(sb, ",", 1);
			groups_json(t, sb, nd->obj);
		}
		vmheap_strbuf_add(sb, "]", 1);
	}
	vmheap_strbuf_add(sb, "],\"labels\":[", 12);
	for (uint32_t k = 0; k < t->nlabels; k++) {
		uint64_t src = t->label_src[k];
		if (k)
			vmheap_strbuf_add(sb, ",", 1);
		if (src & LABEL_OBJECT)
			vmheap_strbuf_add_object(sb, t->g,
						 (uint32_t)(src & ~LABEL_OBJECT),
						 VMHEAP_OUTPUT_JSON);
		else
			vmheap_strbuf_add_class(
			    sb, t->g, vmheap_graph_class_id(t->g, (size_t)src),
			    VMHEAP_OUTPUT_JSON);
	}
	vmheap_strbuf_add(sb, "]}", 2);
}

static int dominator_tree(vmheap_graph *g, struct vmheap_strbuf *sb)
{
	struct tree t = {.g = g};
	size_t nclasses = vmheap_graph_class_count(g);
	int rc = vmheap_graph_dominators(g);

	if (rc == 0)
		rc = build_children(&t);
	t.nodes = malloc(HTML_TREE_NODES * sizeof(*t.nodes));
	t.heap = malloc(HTML_TREE_NODES * sizeof(*t.heap));
	t.labels = malloc((nclasses ? nclasses : 1) * sizeof(*t.labels));
	t.label_src = malloc((nclasses + HTML_TREE_NODES) * sizeof(*t.label_src));
	t.class_bytes = calloc(nclasses ? nclasses : 1, sizeof(uint64_t));
	t.class_count = calloc(nclasses ? nclasses : 1, sizeof(uint32_t));
	t.touched = malloc((nclasses ? nclasses : 1) * sizeof(size_t));
	if (!t.nodes || !t.heap || !t.labels || !t.label_src || !t.class_bytes ||
	    !t.class_count || !t.touched)
		rc = VMHEAP_ENOMEM;
	if (rc == 0) {
		memset(t.labels, 0xff, nclasses * sizeof(*t.labels));
		expand(&t, -1);
		size_t top_shown = t.nnodes;
		while (t.nheap && t.nnodes < HTML_TREE_NODES)
			expand(&t, (int32_t)heap_pop(&t));
		tree_json(&t, sb, top_shown);
	}
	free(t.first);
	free(t.kids);
	free(t.nodes);
	free(t.heap);
	free(t.labels);
	free(t.label_src);
	free(t.class_bytes);
	free(t.class_count);
	free(t.touched);
	return rc;
}

/* ------------------------------------------------------------- paths */

/*
 * A shape: its count, bytes, root record as people read it ("root KIND
 * NAME"), then both ends of its classes and, for each, the holder phrase
 * of the reference that reaches that object on the example's path
 * ("@store of Registry", "Hash[\"k17\"]"; null without a name: dumps
 * before format 1.1 have none).
 */
static void shape_json(struct vmheap_strbuf *sb, const vmheap_graph *g,
		       const struct vmheap_graph_path_group *grp)
{
	struct vmheap_strbuf text = VMHEAP_STRBUF_INIT;
	/* the example's own path: a run of a shape is one step of
	 * grp->classes but all its objects here */
	int64_t n = vmheap_graph_path(g, grp->example, NULL, 0, NULL);
	size_t len = n > 0 ? (size_t)n : 0, ends = HTML_PATH_ENDS;
	uint32_t *path = malloc((len ? len : 1) * sizeof(*path));
	size_t root;

	if (!path || vmheap_graph_path(g, grp->example, path, len, &root) !=
			 (int64_t)len) {
		free(path);
		path = NULL;
		len = 0;
	}
	vmheap_strbuf_addf(sb,
			   "{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			   ",\"length\":%zu,\"root\":",
			   grp->count, grp->bytes, len);
	vmheap_strbuf_add_root_text(&text, g, grp->root);
	text_json(sb, &text);
	/* both ends of a long shape; "skipped" objects between them */
	vmheap_strbuf_addf(sb, ",\"skipped\":%zu,\"classes\":[",
			   len > 2 * ends ? len - 2 * ends : 0);
	for (size_t i = 0; i < len; i++) {
		if (len > 2 * ends && i >= ends && i < len - ends)
			continue;
		if (i)
			vmheap_strbuf_add(sb, ",", 1);
		vmheap_strbuf_add_class(sb, g,
					vmheap_graph_object_class(g, path[i]),
					VMHEAP_OUTPUT_JSON);
	}
	vmheap_strbuf_add(sb, "],\"holders\":[", 13);
	for (size_t i = 0; i < len; i++) {
		struct vmheap_graph_name name, in;
		if (len > 2 * ends && i >= ends && i < len - ends)
			continue;
		if (i)
			vmheap_strbuf_add(sb, ",", 1);
		if (!path || !i ||
		    vmheap_graph_path_name(g, path[i], &name) ==
			VMHEAP_GRAPH_NAME_NONE) {
			vmheap_strbuf_add(sb, "null", 4);
			continue;
		}
		if (i > 1)
			vmheap_graph_path_name(g, path[i - 1], &in);
		vmheap_strbuf_add_holder(&text, g, path[i - 1], &name,
					 i > 1 ? &in : NULL);
		text_json(sb, &text);
	}
	vmheap_strbuf_add(sb, "]}", 2);
	free(path);
}

static int class_paths_json(vmheap_graph *g, const char *name,
			    struct vmheap_strbuf *sb)
{
	struct vmheap_graph_class_paths *p = NULL;
	uint32_t *objs = NULL;
	size_t n = 0;
	int rc = vmheap_graph_instances_of(g, name, &objs, &n);

	if (rc == 0)
		rc = vmheap_graph_object_paths(g, objs, n, &p);
	if (rc == 0) {
		vmheap_strbuf_add(sb, "{\"class\":", 9);
		vmheap_strbuf_add_json(sb, name);
		vmheap_strbuf_addf(
		    sb,
		    ",\"instances\":%" PRIu64 ",\"unreachable\":%" PRIu64
		    ",\"shapes\":%zu,\"groups\":[",
		    p->instances, p->unreachable, p->group_count);
		for (size_t k = 0; k < p->group_count && k < HTML_PATH_GROUPS;
		     k++) {
			if (k)
				vmheap_strbuf_add(sb, ",", 1);
			shape_json(sb, g, &p->groups[k]);
		}
		vmheap_strbuf_add(sb, "]}", 2);
	}
	vmheap_graph_object_paths_free(p);
	free(objs);
	return rc;
}

int html_graph_json(const struct html_options *o, const struct html_report *rep,
		    struct vmheap_strbuf *sb, char *err, size_t errsz)
{
	const char *names[HTML_PATH_CLASSES];
	size_t nnames = html_path_classes(rep, names, HTML_PATH_CLASSES);
	vmheap_reader *r = NULL;
	vmheap_graph *g = NULL;
	int rc = vmheap_graph_load(o->dumps[o->ndumps - 1], &r, &g, err, errsz);

	if (rc < 0)
		return rc;
	vmheap_strbuf_add(sb, ",\"tree\":", 8);
	rc = dominator_tree(g, sb);
	vmheap_strbuf_add(sb, ",\"paths\":[", 10);
	for (size_t k = 0; k < nnames && rc == 0; k++) {
		if (k)
			vmheap_strbuf_add(sb, ",", 1);
		rc = class_paths_json(g, names[k], sb);
	}
	vmheap_strbuf_add(sb, "]", 1);
	if (rc < 0)
		snprintf(err, errsz, "%s: %s", o->dumps[o->ndumps - 1],
			 vmheap_graph_error(g)[0] ? vmheap_graph_error(g)
						  : "out of memory");
	vmheap_graph_free(g);
	vmheap_reader_free(r);
	return rc;
}
