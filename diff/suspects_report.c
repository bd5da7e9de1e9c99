/*
 * suspects_report.c - vmheap-diff --suspects in text, JSON and CSV (the
 * numbers are vmheap_suspects_rank's, libvmheap-analysis).
 */
#include <inttypes.h>
#include <stdio.h>

#include "diff-internal.h"

/* "A, B and C" of the held classes. */
static void held_names(struct vmheap_strbuf *out, const struct vmheap_suspects *s,
		       const struct vmheap_suspect *r)
{
	for (size_t k = 0; k < r->held_count; k++) {
		if (k)
			vmheap_strbuf_addf(
			    out, "%s", k + 1 == r->held_count ? " and " : ", ");
		vmheap_strbuf_add_text(out, s->objects.names[r->held[k].name]);
	}
}

/* "leak suspects: N classes of owners holding THRESHOLD or more of new
 * objects", and CUT " K" when only the top K are shown. */
static void headline(struct vmheap_strbuf *out, const struct vmheap_suspects *s,
		     const char *threshold, const char *cut)
{
	vmheap_strbuf_addf(out,
			   "leak suspects: %zu class%s of owners holding %s "
			   "or more of new objects",
			   s->nrows, s->nrows == 1 ? "" : "es", threshold);
	if (s->shown < s->nrows)
		vmheap_strbuf_addf(out, "%s %zu", cut, s->shown);
}

static void suspect_text(struct vmheap_strbuf *out, const vmheap_graph *g,
			 const struct vmheap_suspects *s, size_t k)
{
	const struct vmheap_suspect *r = &s->rows[k];
	const struct vmheap_graph_class_paths *gp = r->paths;
	char held[96], ranked[96];

	vmheap_format_bytes(held, sizeof(held), r->held_bytes);
	vmheap_strbuf_addf(out, "\n#%zu  ", k + 1);
	vmheap_strbuf_add_text(out, s->objects.names[r->name]);
	vmheap_strbuf_addf(out, ": %" PRIu64 " new, holding %s", r->owners,
			   held);
	if (r->held_count) {
		vmheap_strbuf_add(out, " (their ", 8);
		held_names(out, s, r);
		vmheap_strbuf_add(out, " objects)", 9);
	}
	vmheap_strbuf_addf(out, "\n    class grew by %" PRId64, r->growth);
	if (r->ranked_bytes != r->held_bytes) {
		vmheap_format_bytes(ranked, sizeof(ranked), r->ranked_bytes);
		vmheap_strbuf_addf(out, " (ranked by the growth's share: %s)",
				   ranked);
	}
	vmheap_strbuf_addf(out, "; %" PRIu64 " new objects in all",
			   r->held_objects);
	for (size_t h = 0; h < r->held_count; h++) {
		vmheap_strbuf_addf(out, "%s%" PRIu64 " ", h ? ", " : ": ",
				   r->held[h].count);
		vmheap_strbuf_add_text(out, s->objects.names[r->held[h].name]);
	}
	if (r->held_classes > r->held_count)
		vmheap_strbuf_addf(out, ", %zu more classes",
				   r->held_classes - r->held_count);
	vmheap_strbuf_add(out, "\n", 1);
	if (!gp->group_count)
		return;
	const struct vmheap_graph_path_group *grp = &gp->groups[0];
	vmheap_strbuf_add(out, "    held by ", 12);
	vmheap_strbuf_add_held_by(out, g, grp);
	vmheap_strbuf_addf(out,
			   " (%" PRIu64 " of the %" PRIu64 ", %.1f%%; %zu "
			   "path shape%s)\n",
			   grp->count, r->owners,
			   100.0 * (double)grp->count / (double)r->owners,
			   gp->group_count, gp->group_count == 1 ? "" : "s");
	vmheap_strbuf_add_path_text(out, g, grp->example, "      ");
}

void diff_suspects_text(const struct diff_options *o, struct diff_result *res,
			struct vmheap_strbuf *out)
{
	const struct vmheap_suspects *s = res->suspects->s;
	const vmheap_graph *g = res->suspects->new_g;
	char bytes[96], threshold[96];

	(void)o;
	vmheap_strbuf_add(out, "old: ", 5);
	vmheap_strbuf_add_dump_origin(out, res->old_d.reader);
	vmheap_strbuf_add(out, "\nnew: ", 6);
	vmheap_strbuf_add_dump_origin(out, res->new_d.reader);
	vmheap_format_bytes(bytes, sizeof(bytes), s->new_bytes);
	vmheap_format_bytes(threshold, sizeof(threshold), s->threshold);
	vmheap_strbuf_addf(out,
			   "\nnew objects: %" PRIu64 ", %s, held by %" PRIu64
			   " owner%s of %zu class%s",
			   s->new_objects, bytes, s->owners,
			   s->owners == 1 ? "" : "s", s->owner_classes,
			   s->owner_classes == 1 ? "" : "es");
	if (s->unreachable) {
		vmheap_format_bytes(bytes, sizeof(bytes), s->unreachable_bytes);
		vmheap_strbuf_addf(out,
				   "; %" PRIu64 " more reached by no root (%s)",
				   s->unreachable, bytes);
	}
	if (!s->nrows) {
		vmheap_strbuf_addf(out,
				   "\nno leak suspects: no class of owners "
				   "holds %s of new objects beyond churn\n",
				   threshold);
		return;
	}
	vmheap_strbuf_add(out, "\n", 1);
	headline(out, s, threshold, "; the top");
	vmheap_strbuf_add(out, "\n", 1);
	for (size_t k = 0; k < s->shown; k++)
		suspect_text(out, g, s, k);
}

/* The members of a suspects report after "old" and "new":
 * "new_objects":N,...,"suspects":[...] (the shown suspects). */
static void suspects_json_members(struct vmheap_strbuf *out,
				  const vmheap_graph *g,
				  const struct vmheap_suspects *s)
{
	vmheap_strbuf_addf(
	    out,
	    "\"new_objects\":%" PRIu64 ",\"new_bytes\":%" PRIu64
	    ",\"unreachable_new_objects\":%" PRIu64
	    ",\"unreachable_new_bytes\":%" PRIu64 ",\"owners\":%" PRIu64
	    ",\"owner_classes\":%zu,\"threshold_bytes\":%" PRIu64
	    ",\"suspect_count\":%zu,\"suspects\":[",
	    s->new_objects, s->new_bytes, s->unreachable, s->unreachable_bytes,
	    s->owners, s->owner_classes, s->threshold, s->nrows);
	for (size_t k = 0; k < s->shown; k++) {
		const struct vmheap_suspect *r = &s->rows[k];
		const struct vmheap_graph_class_paths *gp = r->paths;

		vmheap_strbuf_add(
		    out, k ? ",{\"class\":" : "{\"class\":", k ? 10 : 9);
		vmheap_strbuf_add_json(out, s->objects.names[r->name]);
		vmheap_strbuf_addf(
		    out,
		    ",\"owners\":%" PRIu64 ",\"growth\":%" PRId64
		    ",\"held_objects\":%" PRIu64 ",\"held_bytes\":%" PRIu64
		    ",\"ranked_bytes\":%" PRIu64 ",\"held_classes\":%zu"
		    ",\"held\":[",
		    r->owners, r->growth, r->held_objects, r->held_bytes,
		    r->ranked_bytes, r->held_classes);
		for (size_t h = 0; h < r->held_count; h++) {
			vmheap_strbuf_add(
			    out,
			    h ? ",{\"class\":" : "{\"class\":", h ? 10 : 9);
			vmheap_strbuf_add_json(out,
					       s->objects.names[r->held[h].name]);
			vmheap_strbuf_addf(out,
					   ",\"count\":%" PRIu64
					   ",\"bytes\":%" PRIu64 "}",
					   r->held[h].count, r->held[h].bytes);
		}
		vmheap_strbuf_addf(out, "],\"path_shapes\":%zu",
				   gp->group_count);
		if (gp->group_count) {
			const struct vmheap_graph_path_group *grp =
			    &gp->groups[0];
			vmheap_strbuf_addf(
			    out,
			    ",\"top_path\":{\"count\":%" PRIu64
			    ",\"example\":\"0x%" PRIx64 "\",",
			    grp->count,
			    vmheap_graph_object_id(g, grp->example));
			vmheap_strbuf_add_path_json(out, g,
						    grp->example);
			vmheap_strbuf_add(out, "},\"held_by\":", 12);
			struct vmheap_strbuf h = VMHEAP_STRBUF_INIT;
			vmheap_strbuf_add_held_by(&h, g, grp);
			vmheap_strbuf_add_json(out, h.buf ? h.buf : "");
			if (h.failed)
				out->failed = 1;
			vmheap_strbuf_release(&h);
		}
		vmheap_strbuf_add(out, "}", 1);
	}
	vmheap_strbuf_add(out, "]", 1);
}

void diff_suspects_json(const struct diff_options *o, struct diff_result *res,
			struct vmheap_strbuf *out)
{
	(void)o;
	vmheap_strbuf_add(out, "{\"old\":{", 8);
	vmheap_strbuf_add_dump_json(out, res->old_d.reader, NULL);
	vmheap_strbuf_add(out, "},\"new\":{", 9);
	vmheap_strbuf_add_dump_json(out, res->new_d.reader, NULL);
	vmheap_strbuf_add(out, "},", 2);
	suspects_json_members(out, res->suspects->new_g, res->suspects->s);
	vmheap_strbuf_add(out, "}\n", 2);
}

void diff_suspects_section_json(const struct diff_options *o,
				struct diff_result *res,
				struct vmheap_strbuf *out)
{
	(void)o;
	if (!res->suspects || !res->suspects->s)
		return;
	vmheap_strbuf_add(out, ",\"leak_suspects\":{", 18);
	suspects_json_members(out, res->suspects->new_g, res->suspects->s);
	vmheap_strbuf_add(out, "}", 1);
}

void diff_suspects_section_text(const struct diff_options *o,
				struct diff_result *res,
				struct vmheap_strbuf *out)
{
	const struct vmheap_suspects *s = res->suspects ? res->suspects->s : NULL;
	const vmheap_graph *g = s ? res->suspects->new_g : NULL;
	char size[96];

	if (!s) {
		if (res->suspects_skipped[0])
			vmheap_strbuf_addf(out,
					   "leak suspects: not computed: %s; "
					   "vmheap-diff --suspects computes "
					   "them\n",
					   res->suspects_skipped);
		return;
	}
	vmheap_report_amount(&o->report, size, sizeof(size), s->threshold);
	if (!s->nrows) {
		vmheap_strbuf_addf(out,
				   "leak suspects: none (no class of owners "
				   "holds %s of new objects beyond churn)\n",
				   size);
		return;
	}
	headline(out, s, size, ", the top");
	vmheap_strbuf_add(out, " (paths: vmheap-diff --suspects)\n", 33);
	for (size_t k = 0; k < s->shown; k++) {
		const struct vmheap_suspect *r = &s->rows[k];
		vmheap_report_amount(&o->report, size, sizeof(size),
				     r->held_bytes);
		vmheap_strbuf_addf(out, "#%zu  ", k + 1);
		vmheap_strbuf_add_text(out, s->objects.names[r->name]);
		vmheap_strbuf_addf(out, ": %" PRIu64 " new, holding %s",
				   r->owners, size);
		if (r->held_count) {
			vmheap_strbuf_add(out, " (their ", 8);
			held_names(out, s, r);
			vmheap_strbuf_add(out, " objects)", 9);
		}
		if (r->paths->group_count) {
			vmheap_strbuf_add(out, ", held by ", 10);
			vmheap_strbuf_add_held_by(out, g, &r->paths->groups[0]);
		}
		vmheap_strbuf_add(out, "\n", 1);
	}
}

void diff_suspects_csv(const struct diff_options *o, struct diff_result *res,
		       struct vmheap_strbuf *out)
{
	const struct vmheap_suspects *s = res->suspects->s;
	const vmheap_graph *g = res->suspects->new_g;

	(void)o;
	vmheap_strbuf_addf(out, "rank,class,owners,growth,held_objects,"
				"held_bytes,ranked_bytes,held,top_path_owners,"
				"held_by\n");
	for (size_t k = 0; k < s->shown; k++) {
		const struct vmheap_suspect *r = &s->rows[k];
		const struct vmheap_graph_class_paths *gp = r->paths;
		struct vmheap_strbuf f = VMHEAP_STRBUF_INIT;

		vmheap_strbuf_addf(out, "%zu,", k + 1);
		vmheap_strbuf_add_csv(out, s->objects.names[r->name]);
		vmheap_strbuf_addf(out,
				   ",%" PRIu64 ",%" PRId64 ",%" PRIu64
				   ",%" PRIu64 ",%" PRIu64 ",",
				   r->owners, r->growth, r->held_objects,
				   r->held_bytes, r->ranked_bytes);
		for (size_t h = 0; h < r->held_count; h++) {
			vmheap_strbuf_addf(&f, "%s%" PRIu64 " ", h ? "; " : "",
					   r->held[h].count);
			vmheap_strbuf_add_text(&f, s->objects.names[r->held[h].name]);
		}
		vmheap_strbuf_add_csv(out, f.buf ? f.buf : "");
		vmheap_strbuf_release(&f);
		f = (struct vmheap_strbuf)VMHEAP_STRBUF_INIT;
		if (gp->group_count)
			vmheap_strbuf_add_held_by(&f, g, &gp->groups[0]);
		vmheap_strbuf_addf(out, ",%" PRIu64 ",",
				   gp->group_count ? gp->groups[0].count : 0);
		vmheap_strbuf_add_csv(out, f.buf ? f.buf : "");
		vmheap_strbuf_add(out, "\n", 1);
		if (f.failed)
			out->failed = 1;
		vmheap_strbuf_release(&f);
	}
}
