/*
 * report.c - vmheap-dominators' output: the objects that retain the most,
 * each with its chain of dominators up to the root, as a text table, JSON
 * or CSV.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "dominators-internal.h"

/* The chain of dominators of v: the first DOMINATORS_CHAIN of them in
 * chain[], how many more in *more, and how the top one is held: *root is
 * its root record, or (size_t)-1 when several roots reach it. */
struct chain {
	uint32_t links[DOMINATORS_CHAIN];
	size_t nlinks;
	uint64_t more;
	size_t root;
};

static void chain_of(const vmheap_graph *g, uint32_t v, struct chain *c)
{
	uint32_t top = v;

	c->nlinks = 0;
	c->more = 0;
	c->root = (size_t)-1;
	for (uint32_t d = vmheap_graph_idom(g, v); d != VMHEAP_GRAPH_ROOT;
	     d = vmheap_graph_idom(g, d)) {
		if (c->nlinks < DOMINATORS_CHAIN)
			c->links[c->nlinks++] = d;
		else
			c->more++;
		top = d;
	}
	for (size_t k = 0; k < vmheap_graph_root_count(g); k++)
		if (vmheap_graph_root(g, k)->object == top) {
			c->root = k;
			break;
		}
}

static double percent(const vmheap_graph *g, uint64_t bytes)
{
	uint64_t total = vmheap_graph_total_bytes(g);

	return total ? 100.0 * (double)bytes / (double)total : 0.0;
}

/* "Hash 0x... ← Array 0x... ← root globals", or with names
 * "Hash["k17"] 0x... ← @store of Registry 0x... ← root vm": each
 * dominator with the name of its reference to the object below it in
 * the chain when it references that object itself (else its class). */
static void chain_text(struct vmheap_strbuf *sb, const vmheap_graph *g,
		       uint32_t v, const struct chain *c)
{
	for (size_t k = 0; k < c->nlinks; k++) {
		uint32_t d = c->links[k], up = vmheap_graph_idom(g, d);
		struct vmheap_graph_name name, in;

		vmheap_graph_edge_name(g, d, k ? c->links[k - 1] : v, &name);
		if (up == VMHEAP_GRAPH_ROOT)
			in.type = VMHEAP_GRAPH_NAME_NONE;
		else
			vmheap_graph_edge_name(g, up, d, &in);
		vmheap_strbuf_add_holder(sb, g, d, &name, &in);
		vmheap_strbuf_addf(sb, " 0x%" PRIx64 " \xe2\x86\x90 ",
				   vmheap_graph_object_id(g, d));
	}
	if (c->more)
		vmheap_strbuf_addf(sb, "... %" PRIu64 " more \xe2\x86\x90 ",
				   c->more);
	if (c->root == (size_t)-1)
		vmheap_strbuf_addf(sb, "several roots");
	else
		vmheap_strbuf_add_root_text(sb, g, c->root);
}

static void render_text(const struct dominators_options *o,
			const struct dominators_result *res,
			struct vmheap_strbuf *out)
{
	const vmheap_graph *g = res->g;
	vmheap_table *tab = vmheap_table_new("rrrlll");
	char retained[32], pct[16], own[32], addr[32], all[64], lost[64];
	struct chain c;
	int rc;

	if (!tab) {
		out->failed = 1;
		return;
	}
	vmheap_strbuf_add(out, "dump: ", 6);
	vmheap_strbuf_add_dump_origin(out, res->reader);
	vmheap_report_bytes(&o->report, all, sizeof(all),
			    vmheap_graph_total_bytes(g));
	vmheap_report_bytes(&o->report, lost, sizeof(lost),
			    res->unreachable_bytes);
	vmheap_strbuf_addf(
	    out,
	    "\n%" PRIu32 " objects, %s; "
	    "unreachable from the roots: %" PRIu64 " objects, %s\n\n",
	    vmheap_graph_object_count(g), all, res->unreachable, lost);
	rc = vmheap_table_add_row(
	    tab, (const char *[]){"retained", "%", "own", "class", "address",
				  "dominated by"});
	for (size_t k = 0; k < res->ntop && !rc; k++) {
		uint32_t v = res->top[k];
		struct vmheap_strbuf cls = VMHEAP_STRBUF_INIT;
		struct vmheap_strbuf doms = VMHEAP_STRBUF_INIT;

		vmheap_report_size(&o->report, retained, sizeof(retained),
				   vmheap_graph_retained_bytes(g, v));
		vmheap_format_share(pct, sizeof(pct),
				    (double)vmheap_graph_retained_bytes(g, v),
				    (double)vmheap_graph_total_bytes(g), 0);
		vmheap_report_size(&o->report, own, sizeof(own),
				   vmheap_graph_object_bytes(g, v));
		snprintf(addr, sizeof(addr), "0x%" PRIx64,
			 vmheap_graph_object_id(g, v));
		vmheap_strbuf_add_object(&cls, g, v, VMHEAP_OUTPUT_TEXT);
		chain_of(g, v, &c);
		chain_text(&doms, g, v, &c);
		if (cls.failed || doms.failed)
			rc = VMHEAP_ENOMEM;
		else
			rc = vmheap_table_add_row(
			    tab, (const char *[]){retained, pct, own,
						  cls.buf ? cls.buf : "", addr,
						  doms.buf ? doms.buf : ""});
		vmheap_strbuf_release(&cls);
		vmheap_strbuf_release(&doms);
	}
	if (rc)
		out->failed = 1;
	else
		vmheap_table_render(tab, out);
	vmheap_table_free(tab);
	if (vmheap_graph_saturated(g))
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_TEXT);
}

static void render_json(const struct dominators_result *res,
			struct vmheap_strbuf *out)
{
	const vmheap_graph *g = res->g;
	struct vmheap_totals t = {0};
	struct chain c;

	t.objects = vmheap_graph_object_count(g);
	t.bytes = vmheap_graph_total_bytes(g);
	vmheap_strbuf_add(out, "{", 1);
	vmheap_strbuf_add_dump_json(out, res->reader, &t);
	if (vmheap_graph_saturated(g))
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_JSON);
	vmheap_strbuf_addf(out,
			   ",\"unreachable\":%" PRIu64
			   ",\"unreachable_bytes\":%" PRIu64 ",\"top\":[",
			   res->unreachable, res->unreachable_bytes);
	for (size_t k = 0; k < res->ntop; k++) {
		uint32_t v = res->top[k];
		uint64_t r = vmheap_graph_retained_bytes(g, v);

		vmheap_strbuf_addf(out, "%s{\"address\":\"0x%" PRIx64
					"\",\"class\":",
				   k ? "," : "", vmheap_graph_object_id(g, v));
		vmheap_strbuf_add_class(out, g, vmheap_graph_object_class(g, v),
					VMHEAP_OUTPUT_JSON);
		vmheap_strbuf_add_self_json(out, g, v);
		vmheap_strbuf_addf(out,
				   ",\"own_bytes\":%" PRIu64
				   ",\"retained_bytes\":%" PRIu64
				   ",\"retained_percent\":%.4f,\"dominators\":[",
				   vmheap_graph_object_bytes(g, v), r,
				   percent(g, r));
		chain_of(g, v, &c);
		for (size_t l = 0; l < c.nlinks; l++) {
			struct vmheap_graph_name name;
			vmheap_strbuf_addf(out, "%s{\"class\":", l ? "," : "");
			vmheap_strbuf_add_class(
			    out, g, vmheap_graph_object_class(g, c.links[l]),
			    VMHEAP_OUTPUT_JSON);
			vmheap_strbuf_addf(out, ",\"address\":\"0x%" PRIx64 "\"",
					   vmheap_graph_object_id(g, c.links[l]));
			vmheap_strbuf_add_self_json(out, g, c.links[l]);
			vmheap_graph_edge_name(g, c.links[l], l ? c.links[l - 1] : v, &name);
			vmheap_strbuf_add_name_json(out, &name);
			vmheap_strbuf_add(out, "}", 1);
		}
		vmheap_strbuf_addf(out, "],\"more_dominators\":%" PRIu64
					",\"root\":",
				   c.more);
		if (c.root == (size_t)-1) {
			vmheap_strbuf_add(out, "\"several\"", 9);
		} else {
			vmheap_strbuf_add_root_json(out, g, c.root);
		}
		vmheap_strbuf_add(out, "}", 1);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void render_csv(const struct dominators_result *res,
		       struct vmheap_strbuf *out)
{
	const vmheap_graph *g = res->g;
	struct chain c;

	vmheap_strbuf_addf(out, "address,class,own_bytes,retained_bytes,"
				"retained_percent,dominated_by\n");
	for (size_t k = 0; k < res->ntop; k++) {
		uint32_t v = res->top[k];
		uint64_t r = vmheap_graph_retained_bytes(g, v);
		struct vmheap_strbuf doms = VMHEAP_STRBUF_INIT;

		vmheap_strbuf_addf(out, "0x%" PRIx64 ",",
				   vmheap_graph_object_id(g, v));
		vmheap_strbuf_add_class(out, g, vmheap_graph_object_class(g, v),
					VMHEAP_OUTPUT_CSV);
		vmheap_strbuf_addf(out, ",%" PRIu64 ",%" PRIu64 ",%.4f,",
				   vmheap_graph_object_bytes(g, v), r,
				   percent(g, r));
		chain_of(g, v, &c);
		chain_text(&doms, g, v, &c);
		if (doms.failed)
			out->failed = 1;
		vmheap_strbuf_add_csv(out, doms.buf ? doms.buf : "");
		vmheap_strbuf_add(out, "\n", 1);
		vmheap_strbuf_release(&doms);
	}
	if (vmheap_graph_saturated(g))
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_CSV);
}

void dominators_render(const struct dominators_options *o,
		       const struct dominators_result *res,
		       struct vmheap_strbuf *out)
{
	switch (o->report.format) {
	case VMHEAP_OUTPUT_TEXT:
		render_text(o, res, out);
		break;
	case VMHEAP_OUTPUT_JSON:
		render_json(res, out);
		break;
	case VMHEAP_OUTPUT_CSV:
		render_csv(res, out);
		break;
	}
}
