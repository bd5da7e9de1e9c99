/*
 * graph_classes.c - the message of a graph tool when a class named on its
 * command line has no objects in the dump, with the nearest class names
 * (part of libvmheap-report; the classes by label are analysis's,
 * vmheap_graph_query.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_graph_query.h"
#include "vmheap_report.h"

#define SUGGESTIONS 5

void vmheap_strbuf_add_no_class(struct vmheap_strbuf *sb, const vmheap_graph *g,
				const char *label, const char *dump)
{
	size_t ks[SUGGESTIONS + 1];
	int64_t n = vmheap_graph_nearest_classes(g, label, ks, SUGGESTIONS + 1);
	int shown = 0;

	vmheap_strbuf_addf(sb, "no objects of class ");
	vmheap_strbuf_add_text(sb, label);
	vmheap_strbuf_addf(sb, " in %s", dump);
	for (int64_t k = 0; k < n && shown < SUGGESTIONS; k++) {
		char *l = vmheap_graph_class_label(
		    g, vmheap_graph_class_id(g, ks[k]));
		if (l && strcmp(l, label)) {
			vmheap_strbuf_addf(sb, "%s",
					   shown ? ", " : "; nearest: ");
			vmheap_strbuf_add_text(sb, l);
			shown++;
		}
		free(l);
	}
	if (!shown)
		vmheap_strbuf_addf(sb, "; no class name is near it");
}
