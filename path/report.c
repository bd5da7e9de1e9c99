/*
 * report.c - vmheap-path's output: the target, then the path groups, most
 * instances first, each with its count, bytes and one example path from
 * its root record down to the target.
 */
#include <inttypes.h>
#include <stdio.h>

#include "path-internal.h"

/* The groups' bytes and the unreachable ones, held at UINT64_MAX (*held
 * set) if the sum would pass it. */
static uint64_t target_bytes(const struct vmheap_graph_class_paths *p,
			     int *held)
{
	uint64_t b = p->unreachable_bytes;

	for (size_t k = 0; k < p->group_count; k++) {
		b += p->groups[k].bytes;
		if (b < p->groups[k].bytes) {
			b = UINT64_MAX;
			*held = 1;
		}
	}
	return b;
}

/* The target's sites: "allocated at SITE" for an object; for a class
 * "allocated at: N at SITE, ..." (the first 5). */
#define SHOWN_SITES 5
static void sites_text(const struct path_result *res,
		       struct vmheap_strbuf *out)
{
	if (!res->nsites)
		return;
	if (res->by_address) {
		vmheap_strbuf_add(out, "allocated at ", 13);
		vmheap_strbuf_add_text(out, res->sites[0].text);
		vmheap_strbuf_add(out, "\n", 1);
		return;
	}
	vmheap_strbuf_add(out, "allocated at:", 13);
	for (size_t i = 0; i < res->nsites && i < SHOWN_SITES; i++) {
		vmheap_strbuf_addf(out, "%s %" PRIu64 " at ", i ? "," : "",
				   res->sites[i].count);
		vmheap_strbuf_add_text(out, res->sites[i].text);
	}
	uint64_t at = 0;
	for (size_t i = 0; i < res->nsites; i++)
		at += res->sites[i].count;
	if (res->nsites > SHOWN_SITES)
		vmheap_strbuf_addf(out, ", and %zu more sites",
				   res->nsites - SHOWN_SITES);
	if (at < res->paths->instances)
		vmheap_strbuf_addf(out, "; %" PRIu64 " without a site",
				   res->paths->instances - at);
	vmheap_strbuf_add(out, "\n", 1);
}

static void sites_json(const struct path_result *res,
		       struct vmheap_strbuf *out)
{
	if (res->by_address) {
		vmheap_strbuf_add(out, ",\"site\":", 8);
		if (res->nsites)
			vmheap_strbuf_add_json(out, res->sites[0].text);
		else
			vmheap_strbuf_add(out, "null", 4);
		return;
	}
	vmheap_strbuf_add(out, ",\"sites\":[", 10);
	for (size_t i = 0; i < res->nsites; i++) {
		vmheap_strbuf_add(out, i ? ",{\"site\":" : "{\"site\":",
				  i ? 9 : 8);
		vmheap_strbuf_add_json(out, res->sites[i].text);
		vmheap_strbuf_addf(out,
				   ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
				   "}",
				   res->sites[i].count, res->sites[i].bytes);
	}
	vmheap_strbuf_add(out, "]", 1);
}

static void render_text(const struct path_options *o,
			const struct path_result *res, size_t shown,
			struct vmheap_strbuf *out)
{
	const struct vmheap_graph_class_paths *p = res->paths;
	vmheap_graph *g = res->g;
	char size[64], lost[64];
	int held = vmheap_graph_saturated(g);

	vmheap_strbuf_add(out, "dump: ", 6);
	vmheap_strbuf_add_dump_origin(out, res->reader);
	vmheap_strbuf_add(out, "\n", 1);
	if (res->by_address) {
		uint32_t i = vmheap_graph_find(g, res->address);
		vmheap_strbuf_addf(out, "object 0x%" PRIx64 ": ", res->address);
		vmheap_strbuf_add_object(out, g, i, VMHEAP_OUTPUT_TEXT);
		vmheap_report_bytes(&o->report, size, sizeof(size),
				    vmheap_graph_object_bytes(g, i));
		vmheap_strbuf_addf(out, ", %s\n", size);
		if (p->unreachable)
			vmheap_strbuf_addf(out, "unreachable: no root "
						"reaches it\n");
	} else {
		vmheap_report_bytes(&o->report, size, sizeof(size),
				    target_bytes(p, &held));
		vmheap_report_amount(&o->report, lost, sizeof(lost),
				     p->unreachable_bytes);
		vmheap_strbuf_add(out, "class ", 6);
		vmheap_strbuf_add_text(out, o->target);
		vmheap_strbuf_addf(out,
				   ": %" PRIu64 " instance%s, %s; %zu path "
				   "shape%s; %" PRIu64 " unreachable, %s\n",
				   p->instances, p->instances == 1 ? "" : "s",
				   size, p->group_count,
				   p->group_count == 1 ? "" : "s",
				   p->unreachable, lost);
	}
	sites_text(res, out);
	for (size_t k = 0; k < shown; k++) {
		const struct vmheap_graph_path_group *grp = &p->groups[k];
		vmheap_strbuf_add(out, "\n", 1);
		vmheap_strbuf_add_path_group(out, &o->report, g, grp, k + 1,
					     grp->count == 1 ? "instance"
							     : "instances",
					     p->instances, "");
	}
	if (shown < p->group_count)
		vmheap_strbuf_addf(out, "\n(top %zu of %zu path shapes shown)\n",
				   shown, p->group_count);
	if (held)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_TEXT);
}

static void render_json(const struct path_options *o,
			const struct path_result *res, size_t shown,
			struct vmheap_strbuf *out)
{
	const struct vmheap_graph_class_paths *p = res->paths;
	vmheap_graph *g = res->g;
	struct vmheap_totals t = {0};
	int held = vmheap_graph_saturated(g);
	uint64_t instance_bytes = target_bytes(p, &held);

	t.objects = vmheap_graph_object_count(g);
	t.bytes = vmheap_graph_total_bytes(g);
	vmheap_strbuf_add(out, "{", 1);
	vmheap_strbuf_add_dump_json(out, res->reader, &t);
	if (held)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_JSON);
	vmheap_strbuf_add(out, ",\"target\":", 10);
	vmheap_strbuf_add_json(out, o->target);
	if (res->by_address) {
		uint32_t i = vmheap_graph_find(g, res->address);
		vmheap_strbuf_add(out, ",\"class\":", 9);
		vmheap_strbuf_add_class(out, g, vmheap_graph_object_class(g, i),
					VMHEAP_OUTPUT_JSON);
		vmheap_strbuf_add_self_json(out, g, i);
	}
	sites_json(res, out);
	vmheap_strbuf_addf(out,
			   ",\"instances\":%" PRIu64 ",\"instance_bytes\":%" PRIu64
			   ",\"unreachable\":%" PRIu64
			   ",\"unreachable_bytes\":%" PRIu64
			   ",\"group_count\":%zu,\"groups\":[",
			   p->instances, instance_bytes, p->unreachable,
			   p->unreachable_bytes, p->group_count);
	for (size_t k = 0; k < shown; k++) {
		const struct vmheap_graph_path_group *grp = &p->groups[k];
		vmheap_strbuf_addf(out,
				   "%s{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
				   ",\"example\":\"0x%" PRIx64 "\",",
				   k ? "," : "", grp->count, grp->bytes,
				   vmheap_graph_object_id(g, grp->example));
		vmheap_strbuf_add_path_json(out, g, grp->example);
		vmheap_strbuf_add(out, "}", 1);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

void path_render(const struct path_options *o, const struct path_result *res,
		 struct vmheap_strbuf *out)
{
	struct vmheap_report_options top = o->report;

	if (!top.top)
		top.top = PATH_DEFAULT_TOP;
	size_t shown = vmheap_report_rows_shown(&top, res->paths->group_count);
	if (o->report.format == VMHEAP_OUTPUT_JSON)
		render_json(o, res, shown, out);
	else
		render_text(o, res, shown, out);
}
