/*
 * gen_chain.c - write a dump whose leak is a linked list, with the real
 * writer (format 1.1 names), for make bench-chains:
 *
 *   gen_chain N OUT
 *
 * root vm "$head" -> Holder -@head-> Node 0 -@next-> Node 1 ... Node N-1,
 * and a Thread (root vm "thread 1") whose stack ("stack of thread 1")
 * holds Node N/2: every node's explaining path goes down the list.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap.h"

static void check(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "gen_chain: %s: error %d\n", what, rc);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = {"object"};
	static const char *const strings[] = {
	    "vm", "$head", "@head", "@next", "stack of thread 1", "thread 1"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	unsigned long n;
	uint64_t ref;
	int64_t name;
	int fd;

	if (argc != 3 || (n = strtoul(argv[1], NULL, 10)) < 2) {
		fprintf(stderr, "usage: gen_chain N OUT (N >= 2)\n");
		return 2;
	}
	fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	opt.vm_name = "gen_chain";
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.edge_names = 1;
	check(vmheap_writer_open(&w, fd, &opt), "open");
	for (uint64_t k = 0; k < 6; k++)
		check(vmheap_writer_add_string(w, k + 1, strings[k],
					       strlen(strings[k])),
		      "string");
	check(vmheap_writer_add_class(w, 1, "Holder", 6, 0, 0), "class");
	check(vmheap_writer_add_class(w, 2, "Node", 4, 0, 0), "class");
	check(vmheap_writer_add_class(w, 3, "Thread", 6, 0, 0), "class");
	ref = 0x10000, name = 3;
	check(vmheap_writer_add_object_named(w, 0x1000, 1, 40, 0, &ref, &name,
					     1, 0),
	      "object");
	ref = 0x10000 + 16ULL * (n / 2), name = 5;
	check(vmheap_writer_add_object_named(w, 0x2000, 3, 40, 0, &ref, &name,
					     1, 0),
	      "object");
	for (unsigned long k = 0; k < n; k++) {
		ref = 0x10000 + 16ULL * (k + 1), name = 4;
		check(vmheap_writer_add_object_named(w, 0x10000 + 16ULL * k, 2,
						     16, 0, &ref, &name,
						     k + 1 < n, 0),
		      "object");
	}
	check(vmheap_writer_add_root_named(w, 1, 0x1000, 2), "root");
	check(vmheap_writer_add_root_named(w, 1, 0x2000, 6), "root");
	check(vmheap_writer_finish(w), "finish");
	vmheap_writer_free(w);
	if (close(fd) < 0) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}
