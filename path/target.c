/*
 * target.c - vmheap-path's target (an object by address, or every instance
 * of a class) and its paths merged by shape.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path-internal.h"

/* 1 and *id when `s` is 0x followed by 1 to 16 hex digits and nothing
 * else. */
static int parse_address(const char *s, uint64_t *id)
{
	char *end;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2] ||
	    strlen(s + 2) > 16 || strspn(s + 2, "0123456789abcdefABCDEF") !=
					  strlen(s + 2))
		return 0;
	*id = strtoull(s + 2, &end, 16);
	return !*end;
}

/* The instances of every class labelled o->target; 1 when none. */
static int class_instances(const struct path_options *o, vmheap_graph *g,
			   uint32_t **objects, size_t *n, char *err,
			   size_t errsz)
{
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;

	if (vmheap_graph_instances_of(g, o->target, objects, n) < 0) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	if (*n)
		return 0;
	vmheap_strbuf_add_no_class(&sb, g, o->target, o->dump);
	snprintf(err, errsz, "%s",
		 sb.failed || !sb.buf ? "out of memory" : sb.buf);
	vmheap_strbuf_release(&sb);
	return 1;
}

int path_find(const struct path_options *o, struct path_result *res,
	      char *err, size_t errsz)
{
	uint32_t *objects = NULL, one;
	size_t n = 1;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = vmheap_graph_load(o->dump, &res->reader, &res->g, err, errsz);
	if (rc < 0)
		return rc;
	if (vmheap_graph_exclude(res->g, o->exclude) < 0 ||
	    vmheap_graph_set_path_rule(res->g,
				       o->shortest
					   ? VMHEAP_GRAPH_PATHS_SHORTEST
					   : VMHEAP_GRAPH_PATHS_EXPLAINING) < 0) {
		snprintf(err, errsz, "cannot apply --exclude or --shortest");
		return VMHEAP_ESTATE;
	}
	res->by_address = parse_address(o->target, &res->address);
	if (res->by_address) {
		one = vmheap_graph_find(res->g, res->address);
		if (one == VMHEAP_GRAPH_NONE) {
			snprintf(err, errsz, "no object at 0x%" PRIx64 " in %s",
				 res->address, o->dump);
			return 1;
		}
	} else if ((rc = class_instances(o, res->g, &objects, &n, err,
					 errsz)) != 0) {
		return rc;
	}
	/* only the targets' paths, unless --retainers names the paths of
	 * their holders too */
	if (!o->retainers && vmheap_graph_shortest_paths_to(
				 res->g, objects ? objects : &one, n) < 0)
		rc = VMHEAP_ENOMEM;
	else
		rc = vmheap_graph_object_paths(res->g, objects ? objects : &one,
					       n, &res->paths);
	if (rc == 0 && o->retainers)
		rc = vmheap_graph_retainers(res->g, objects ? objects : &one,
					    n, &res->retainers);
	if (rc < 0)
		snprintf(err, errsz, "%s", vmheap_graph_error(res->g));
	else
		rc = path_find_sites(o, res, err, errsz);
	free(objects);
	return rc;
}

void path_result_release(struct path_result *res)
{
	vmheap_graph_object_paths_free(res->paths);
	vmheap_graph_retainers_free(res->retainers);
	path_sites_release(res);
	vmheap_graph_free(res->g);
	vmheap_reader_free(res->reader);
	memset(res, 0, sizeof(*res));
}
