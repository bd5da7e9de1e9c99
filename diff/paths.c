/*
 * paths.c - vmheap-diff --paths: for the classes with the most new objects
 * (objects of NEW whose id OLD does not hold with the same class name, the
 * rule of vmheap_identity_diff), the shortest paths from NEW's roots to
 * those new objects, merged by shape.  Both dumps are read once, into heap
 * graphs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-internal.h"
#include "vmheap_graph_query.h"

#define DEFAULT_PATH_CLASSES 5
#define GROUPS_PER_CLASS 3

struct path_class {
	char *name; /* NEW's class label, owned by g.names */
	uint64_t count, bytes;
	struct vmheap_graph_class_paths *paths;
};

struct diff_paths {
	struct diff_graphs g;
	struct path_class *classes; /* one per name; sorted, then the top */
	size_t nclasses;	    /* names with new objects */
	size_t shown;		    /* the first `shown` have paths */
	uint64_t new_objects, new_bytes;
};

static enum vmheap_sort sort_key;
static int compare_classes(const void *a, const void *b)
{
	const struct path_class *x = a, *y = b;
	uint64_t p = sort_key == VMHEAP_SORT_BYTES ? x->bytes : x->count;
	uint64_t q = sort_key == VMHEAP_SORT_BYTES ? y->bytes : y->count;

	if (sort_key != VMHEAP_SORT_NAME && p != q)
		return p > q ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Count the new objects per class name. */
static void count_new(struct diff_paths *p)
{
	const uint32_t *mark = p->g.mark;

	for (uint32_t i = 0; i < vmheap_graph_object_count(p->g.new_g); i++) {
		if (!mark[i])
			continue;
		uint64_t b = vmheap_graph_object_bytes(p->g.new_g, i);
		p->classes[mark[i] - 1].count++;
		p->classes[mark[i] - 1].bytes += b;
		p->new_objects++;
		p->new_bytes += b;
	}
}

/* The paths of the new objects of the top classes. */
static int merge_top(struct diff_paths *p)
{
	const uint32_t *mark = p->g.mark;
	uint32_t n = vmheap_graph_object_count(p->g.new_g);
	uint32_t *objects = malloc((n ? n : 1) * sizeof(*objects));

	if (!objects)
		return VMHEAP_ENOMEM;
	for (size_t c = 0; c < p->shown; c++) {
		size_t m = 0;
		/* the rows were sorted: find the group by its name */
		uint32_t x = 0;
		while (p->g.names[x] != p->classes[c].name)
			x++;
		for (uint32_t i = 0; i < n; i++)
			if (mark[i] == x + 1)
				objects[m++] = i;
		if (vmheap_graph_object_paths(p->g.new_g, objects, m,
					      &p->classes[c].paths) < 0) {
			free(objects);
			return VMHEAP_ENOMEM;
		}
	}
	free(objects);
	return 0;
}

static int compute(const struct diff_options *o, struct diff_paths *p)
{
	size_t top = o->report.top ? o->report.top : DEFAULT_PATH_CLASSES;

	if (!(p->classes = calloc(p->g.nnames ? p->g.nnames : 1,
				  sizeof(*p->classes))))
		return VMHEAP_ENOMEM;
	for (size_t x = 0; x < p->g.nnames; x++)
		p->classes[x].name = p->g.names[x];
	count_new(p);
	sort_key = o->report.sort;
	qsort(p->classes, p->g.nnames, sizeof(*p->classes), compare_classes);
	while (p->nclasses < p->g.nnames && p->classes[p->nclasses].count)
		p->nclasses++;
	if (o->report.sort == VMHEAP_SORT_NAME) { /* new ones only */
		size_t kept = 0;
		for (size_t x = 0; x < p->g.nnames; x++)
			if (p->classes[x].count)
				p->classes[kept++] = p->classes[x];
		p->nclasses = kept;
	}
	p->shown = p->nclasses < top ? p->nclasses : top;
	return merge_top(p);
}

int diff_paths(const struct diff_options *o, struct diff_result *res,
	       char *err, size_t errsz)
{
	struct diff_paths *p = calloc(1, sizeof(*p));
	int rc;

	if (!p) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	res->paths = p;
	rc = diff_graphs_read(res, &p->g, err, errsz);
	if (rc == 0 && (rc = compute(o, p)) < 0)
		snprintf(err, errsz, "out of memory");
	return rc;
}

void diff_paths_release(struct diff_paths *p)
{
	if (!p)
		return;
	for (size_t c = 0; p->classes && c < p->g.nnames; c++)
		vmheap_graph_object_paths_free(p->classes[c].paths);
	free(p->classes);
	diff_graphs_release(&p->g);
	free(p);
}

/* ------------------------------------------------------------ output */

static size_t groups_shown(const struct vmheap_graph_class_paths *gp)
{
	return gp->group_count < GROUPS_PER_CLASS ? gp->group_count
						  : GROUPS_PER_CLASS;
}

void diff_paths_text(const struct diff_options *o, struct diff_result *res,
		     struct vmheap_strbuf *out)
{
	const struct diff_paths *p = res->paths;
	char size[64];

	diff_dump_line(out, o, "old", res->old_d.reader,
		       vmheap_graph_object_count(p->g.old_g),
		       vmheap_graph_total_bytes(p->g.old_g));
	diff_dump_line(out, o, "new", res->new_d.reader,
		       vmheap_graph_object_count(p->g.new_g),
		       vmheap_graph_total_bytes(p->g.new_g));
	vmheap_report_bytes(&o->report, size, sizeof(size), p->new_bytes);
	vmheap_strbuf_addf(out,
			   "new objects: %" PRIu64 ", %s, in %zu class%s; "
			   "paths of the top %zu\n",
			   p->new_objects, size, p->nclasses,
			   p->nclasses == 1 ? "" : "es", p->shown);
	for (size_t c = 0; c < p->shown; c++) {
		const struct path_class *pc = &p->classes[c];
		const struct vmheap_graph_class_paths *gp = pc->paths;

		vmheap_report_amount(&o->report, size, sizeof(size), pc->bytes);
		vmheap_strbuf_add(out, "\n", 1);
		vmheap_strbuf_add_text(out, pc->name);
		vmheap_strbuf_addf(out,
				   ": %" PRIu64 " new objects, %s; %zu path "
				   "shape%s; %" PRIu64 " unreachable\n",
				   pc->count, size, gp->group_count,
				   gp->group_count == 1 ? "" : "s",
				   gp->unreachable);
		for (size_t k = 0; k < groups_shown(gp); k++)
			vmheap_strbuf_add_path_group(out, &o->report, p->g.new_g,
						     &gp->groups[k], k + 1,
						     "new", pc->count, "  ");
		if (groups_shown(gp) < gp->group_count)
			vmheap_strbuf_addf(out,
					   "  (top %zu of %zu path shapes shown: "
					   "vmheap-path shows them all)\n",
					   groups_shown(gp), gp->group_count);
	}
}

void diff_paths_json(const struct diff_options *o, struct diff_result *res,
		     struct vmheap_strbuf *out)
{
	const struct diff_paths *p = res->paths;

	(void)o;
	vmheap_strbuf_add(out, "{\"old\":{", 8);
	vmheap_strbuf_add_dump_json(out, res->old_d.reader, NULL);
	vmheap_strbuf_add(out, "},\"new\":{", 9);
	vmheap_strbuf_add_dump_json(out, res->new_d.reader, NULL);
	vmheap_strbuf_addf(out,
			   "},\"new_objects\":%" PRIu64 ",\"new_bytes\":%" PRIu64
			   ",\"class_count\":%zu,\"classes\":[",
			   p->new_objects, p->new_bytes, p->nclasses);
	for (size_t c = 0; c < p->shown; c++) {
		const struct path_class *pc = &p->classes[c];
		const struct vmheap_graph_class_paths *gp = pc->paths;

		vmheap_strbuf_add(out, c ? ",{\"class\":" : "{\"class\":", c ? 10 : 9);
		vmheap_strbuf_add_json(out, pc->name);
		vmheap_strbuf_addf(out,
				   ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
				   ",\"unreachable\":%" PRIu64
				   ",\"group_count\":%zu,\"groups\":[",
				   pc->count, pc->bytes, gp->unreachable,
				   gp->group_count);
		for (size_t k = 0; k < groups_shown(gp); k++) {
			const struct vmheap_graph_path_group *grp = &gp->groups[k];
			vmheap_strbuf_addf(
			    out,
			    "%s{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
			    ",\"example\":\"0x%" PRIx64 "\",",
			    k ? "," : "", grp->count, grp->bytes,
			    vmheap_graph_object_id(p->g.new_g, grp->example));
			vmheap_strbuf_add_path_json(out, p->g.new_g, grp->example);
			vmheap_strbuf_add(out, "}", 1);
		}
		vmheap_strbuf_add(out, "]}", 2);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

void diff_paths_csv(const struct diff_options *o, struct diff_result *res,
		    struct vmheap_strbuf *out)
{
	const struct diff_paths *p = res->paths;

	(void)o;
	vmheap_strbuf_addf(out, "class,new_count,new_bytes,shape,count,bytes,"
				"root,path\n");
	for (size_t c = 0; c < p->shown; c++) {
		const struct path_class *pc = &p->classes[c];
		const struct vmheap_graph_class_paths *gp = pc->paths;

		for (size_t k = 0; k < groups_shown(gp); k++) {
			const struct vmheap_graph_path_group *grp = &gp->groups[k];
			struct vmheap_strbuf shape = VMHEAP_STRBUF_INIT;
			const char *kind =
			    vmheap_graph_root(p->g.new_g, grp->root)->kind;

			vmheap_strbuf_add_csv(out, pc->name);
			vmheap_strbuf_addf(out,
					   ",%" PRIu64 ",%" PRIu64 ",%zu,%" PRIu64
					   ",%" PRIu64 ",",
					   pc->count, pc->bytes, k + 1,
					   grp->count, grp->bytes);
			vmheap_strbuf_add_csv(out, kind ? kind : "");
			for (size_t l = 0; l < grp->length; l++) {
				if (l)
					vmheap_strbuf_add(&shape, " > ", 3);
				vmheap_strbuf_add_class(&shape, p->g.new_g,
							grp->classes[l],
							VMHEAP_OUTPUT_TEXT);
			}
			vmheap_strbuf_add(out, ",", 1);
			vmheap_strbuf_add_csv(out, shape.buf ? shape.buf : "");
			vmheap_strbuf_add(out, "\n", 1);
			if (shape.failed)
				out->failed = 1;
			vmheap_strbuf_release(&shape);
		}
	}
}
