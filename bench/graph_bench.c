/*
 * graph_bench.c - speed and memory of the heap graph (analysis/graph*.c),
 * and a dump to compare its dominator tree with a peer's.
 *
 *   graph_bench gen [-n OBJECTS] [-s SEED] DUMP EDGES
 *	write a random heap with the real writer: OBJECTS objects at
 *	increasing 40-byte-aligned ids, 0-4 references each (2 on average)
 *	to any object (cycles and self-references included), a root record
 *	for one object in a thousand; and the same graph as text for a peer,
 *	one "SOURCE TARGET" line per reference in object indices, with
 *	SOURCE -1 for the virtual root's edge to each root object.
 *
 *   graph_bench dom DUMP [IDOMS]
 *	build the graph of DUMP and its dominator tree, print the time of
 *	each step and the peak RSS per object; with IDOMS, write one
 *	"OBJECT IDOM" line per reachable object (indices; -1: the virtual
 *	root), for bench/graph_peer.py to compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "vmheap.h"
#include "vmheap_graph.h"

static uint64_t rng_state = 1;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void die(const char *what)
{
	fprintf(stderr, "graph_bench: %s\n", what);
	exit(2);
}

static int gen(int argc, char **argv)
{
	static const char *const kinds[] = {"object"};
	unsigned long long n = 1000000, seed = 1;
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	FILE *edges;
	int ch, fd;

	while ((ch = getopt(argc, argv, "n:s:")) != -1) {
		if (ch == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (ch == 's')
			seed = strtoull(optarg, NULL, 10);
		else
			return 2;
	}
	if (argc - optind != 2 || n == 0)
		die("usage: graph_bench gen [-n OBJECTS] [-s SEED] DUMP EDGES");
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	edges = fopen(argv[optind + 1], "w");
	if (fd < 0 || !edges)
		die("cannot create the output files");
	opt.vm_name = "graph-bench";
	opt.kind_names = kinds;
	opt.kind_count = 1;
	if (vmheap_writer_open(&w, fd, &opt) < 0)
		die("writer open failed");
	vmheap_writer_add_string(w, 1, "vm", 2);
	for (uint64_t c = 1; c <= 10; c++) {
		char name[32];
		int len = snprintf(name, sizeof(name), "Bench::Node%llu",
				   (unsigned long long)c);
		vmheap_writer_add_class(w, c, name, (size_t)len, 0, 0);
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t refs[4];
		size_t nrefs = (size_t)(rng() % 5);
		for (size_t k = 0; k < nrefs; k++) {
			uint64_t t = rng() % n;
			refs[k] = 0x100000 + 40 * t;
			fprintf(edges, "%llu %llu\n", (unsigned long long)i,
				(unsigned long long)t);
		}
		if (vmheap_writer_add_object(w, 0x100000 + 40 * i,
					     1 + rng() % 10, 16 + rng() % 200,
					     0, refs, nrefs) < 0)
			die(vmheap_writer_error(w));
	}
	for (uint64_t i = 0; i < n; i += 1000) {
		uint64_t t = (i + rng() % 1000) % n;
		vmheap_writer_add_root(w, 1, 0x100000 + 40 * t);
		fprintf(edges, "-1 %llu\n", (unsigned long long)t);
	}
	if (vmheap_writer_finish(w) < 0)
		die(vmheap_writer_error(w));
	vmheap_writer_free(w);
	if (close(fd) < 0 || fclose(edges) != 0)
		die("write failed");
	return 0;
}

static int dom(int argc, char **argv)
{
	vmheap_graph *g;
	double t0, t1, t2, t3;
	uint64_t unreachable, n;
	long rss_built;

	if (argc < 3)
		die("usage: graph_bench dom DUMP [IDOMS]");
	t0 = now();
	if (vmheap_graph_open_path(&g, argv[2]) < 0)
		die(vmheap_graph_error(g));
	t1 = now();
	rss_built = peak_rss_kb();
	if (vmheap_graph_dominators(g) < 0)
		die(vmheap_graph_error(g));
	t2 = now();
	long rss_dom = peak_rss_kb();
	uint64_t *by_class =
	    malloc((vmheap_graph_class_count(g) + 1) * sizeof(*by_class));
	double tc0 = now();
	if (!by_class || vmheap_graph_class_retained(g, by_class) < 0)
		die("class retained sizes failed");
	double tc1 = now();
	free(by_class);
	if (vmheap_graph_shortest_paths(g) < 0)
		die(vmheap_graph_error(g));
	t3 = now();
	n = vmheap_graph_object_count(g);
	vmheap_graph_unreachable(g, &unreachable, NULL);
	printf("objects %llu references %llu missing %llu unreachable %llu\n",
	       (unsigned long long)n,
	       (unsigned long long)vmheap_graph_reference_count(g),
	       (unsigned long long)vmheap_graph_missing_references(g),
	       (unsigned long long)unreachable);
	printf("build %.2f s, dominators %.2f s, retained by class %.2f s, "
	       "shortest paths %.2f s\n",
	       t1 - t0, t2 - t1, tc1 - tc0, t3 - tc1);
	printf("peak RSS: after build %ld KB (%.1f B/object), after "
	       "dominators %ld KB (%.1f B/object), after paths %ld KB\n",
	       rss_built, n ? rss_built * 1024.0 / n : 0.0, rss_dom,
	       n ? rss_dom * 1024.0 / n : 0.0, peak_rss_kb());
	if (argc > 3) {
		FILE *f = fopen(argv[3], "w");
		if (!f)
			die("cannot create the idom file");
		for (uint32_t i = 0; i < n; i++) {
			uint32_t d = vmheap_graph_idom(g, i);
			if (d == VMHEAP_GRAPH_NONE)
				continue;
			if (d == VMHEAP_GRAPH_ROOT)
				fprintf(f, "%u -1\n", i);
			else
				fprintf(f, "%u %u\n", i, d);
		}
		if (fclose(f) != 0)
			die("write failed");
	}
	vmheap_graph_free(g);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "gen"))
		return gen(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "dom"))
		return dom(argc, argv);
	die("usage: graph_bench gen|dom ...");
	return 2;
}
