/*
 * retainers.c - vmheap-path --retainers: every reference to the target
 * (an object, or every instance of a class), grouped by the holder's
 * class and the reference's name, with counts (libvmheap-analysis:
 * vmheap_graph_retainers), most references first.
 */
#include <inttypes.h>
#include <stdio.h>

#include "path-internal.h"

/* "@next of Node", "constant Billing::RateCache::TABLE", "Hash[...]" for
 * any key, "root vm" for root records: the group as one holder phrase. */
static void group_text(struct vmheap_strbuf *sb, const vmheap_graph *g,
		       const struct vmheap_graph_retainer_group *x)
{
	if (x->holder_class == VMHEAP_GRAPH_ROOT) {
		vmheap_strbuf_add_root_text(sb, g, x->example);
		return;
	}
	if (x->element) {
		vmheap_strbuf_add_class(sb, g, x->holder_class_id,
					VMHEAP_OUTPUT_TEXT);
		vmheap_strbuf_add(sb, "[...]", 5);
		return;
	}
	/* the holder as its own path names it ("constant RateCache::TABLE"
	 * for a module reached by ::RateCache) */
	struct vmheap_graph_name in;
	int named = vmheap_graph_path_name(g, x->example, &in) !=
		    VMHEAP_GRAPH_NAME_NONE;
	vmheap_strbuf_add_holder(sb, g, x->example, &x->name,
				 named ? &in : NULL);
}

static void render_text(const struct path_options *o,
			const struct path_result *res, size_t shown,
			struct vmheap_strbuf *out)
{
	const struct vmheap_graph_retainers *r = res->retainers;
	vmheap_graph *g = res->g;

	vmheap_strbuf_add(out, "dump: ", 6);
	vmheap_strbuf_add_dump_origin(out, res->reader);
	vmheap_strbuf_add(out, "\n", 1);
	vmheap_strbuf_add(out, "retainers of ", 13);
	vmheap_strbuf_add_text(out, o->target);
	vmheap_strbuf_addf(out,
			   " (%" PRIu64 " object%s): %" PRIu64
			   " reference%s, %" PRIu64 " root record%s, %zu "
			   "group%s\n",
			   r->targets, r->targets == 1 ? "" : "s",
			   r->references, r->references == 1 ? "" : "s",
			   r->roots, r->roots == 1 ? "" : "s", r->group_count,
			   r->group_count == 1 ? "" : "s");
	for (size_t k = 0; k < shown; k++) {
		const struct vmheap_graph_retainer_group *x = &r->groups[k];
		vmheap_strbuf_addf(out, "%10" PRIu64 "  ", x->references);
		group_text(out, g, x);
		if (x->holder_class != VMHEAP_GRAPH_ROOT)
			vmheap_strbuf_addf(out,
					   "  (%" PRIu64 " holder%s, e.g. 0x%" PRIx64
					   ")",
					   x->holders,
					   x->holders == 1 ? "" : "s",
					   vmheap_graph_object_id(g, x->example));
		if (x->stack)
			vmheap_strbuf_add(out, "  [stack]", 9);
		if (x->internal)
			vmheap_strbuf_add(out, "  [internal]", 12);
		vmheap_strbuf_add(out, "\n", 1);
	}
	if (shown < r->group_count)
		vmheap_strbuf_addf(out, "(top %zu of %zu groups shown)\n", shown,
				   r->group_count);
}

static void render_json(const struct path_options *o,
			const struct path_result *res, size_t shown,
			struct vmheap_strbuf *out)
{
	const struct vmheap_graph_retainers *r = res->retainers;
	vmheap_graph *g = res->g;
	struct vmheap_totals t = {0};

	t.objects = vmheap_graph_object_count(g);
	t.bytes = vmheap_graph_total_bytes(g);
	vmheap_strbuf_add(out, "{", 1);
	vmheap_strbuf_add_dump_json(out, res->reader, &t);
	vmheap_strbuf_add(out, ",\"target\":", 10);
	vmheap_strbuf_add_json(out, o->target);
	vmheap_strbuf_addf(out,
			   ",\"targets\":%" PRIu64 ",\"references\":%" PRIu64
			   ",\"roots\":%" PRIu64
			   ",\"group_count\":%zu,\"retainers\":[",
			   r->targets, r->references, r->roots, r->group_count);
	for (size_t k = 0; k < shown; k++) {
		const struct vmheap_graph_retainer_group *x = &r->groups[k];
		struct vmheap_strbuf text = VMHEAP_STRBUF_INIT;
		int root = x->holder_class == VMHEAP_GRAPH_ROOT;

		group_text(&text, g, x);
		vmheap_strbuf_add(out, k ? ",{\"holder\":" : "{\"holder\":",
				  k ? 11 : 10);
		vmheap_strbuf_add_json(out, text.buf ? text.buf : "");
		if (text.failed)
			out->failed = 1;
		vmheap_strbuf_release(&text);
		vmheap_strbuf_add(out, ",\"class\":", 9);
		if (root)
			vmheap_strbuf_add(out, "null", 4);
		else
			vmheap_strbuf_add_class(out, g, x->holder_class_id,
						VMHEAP_OUTPUT_JSON);
		vmheap_strbuf_addf(out,
				   ",\"root\":%s,\"references\":%" PRIu64
				   ",\"holders\":%" PRIu64
				   ",\"stack\":%s,\"internal\":%s",
				   root ? "true" : "false", x->references,
				   x->holders, x->stack ? "true" : "false",
				   x->internal ? "true" : "false");
		if (!root)
			vmheap_strbuf_addf(out, ",\"example\":\"0x%" PRIx64 "\"",
					   vmheap_graph_object_id(g, x->example));
		vmheap_strbuf_add(out, "}", 1);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

void path_render_retainers(const struct path_options *o,
			   const struct path_result *res,
			   struct vmheap_strbuf *out)
{
	struct vmheap_report_options top = o->report;

	if (!top.top)
		top.top = PATH_DEFAULT_TOP;
	size_t shown =
	    vmheap_report_rows_shown(&top, res->retainers->group_count);
	if (o->report.format == VMHEAP_OUTPUT_JSON)
		render_json(o, res, shown, out);
	else
		render_text(o, res, shown, out);
}
