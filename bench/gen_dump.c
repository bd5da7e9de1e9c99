/*
 * gen_dump.c - write a synthetic vmheap dump with the real writer, for
 * benchmarks of vmheap-histo and vmheap-diff.
 *
 *   gen_dump [-n OBJECTS] [-c CLASSES] [-s SEED] [-g EXTRA] [-v VM] [-N] OUT
 *
 * The heap: CLASSES classes ("Bench::Class0001", ... plus a few usual
 * names), OBJECTS objects at increasing 40-byte-aligned addresses with a
 * skewed class distribution, 0-4 references each to earlier objects, and
 * some roots.  The same seed gives the same objects at the same addresses,
 * so a dump made with -g EXTRA is the first one plus EXTRA "Leak::Message"
 * objects, all held by one "Leak::Holder" (a leak for vmheap-diff).
 * With -N (format 1.1 edge names) every reference is named as a Ruby heap
 * would name it: the elements of "array" objects by index, those of
 * "hash" objects by one of 256 symbol keys ("[:k17]"), the others by
 * instance variable ("@iv0" .. "@iv3", by position), and the roots
 * "$root"; the objects and references are the same as without -N.
 * With -R every object is reachable and many are shared: object i holds
 * objects 2i+1 and 2i+2 (a balanced tree from object 0, a root) and 0-2
 * more references to random objects anywhere in the heap, as caches and
 * back pointers do (issue 32's heaps for paths and dominators).
 * OUT "-" is standard output.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static const char *const usual[] = {"String", "Array", "Hash",	"Object",
				    "Symbol", "Proc",  "Float", "Time"};
static const char *const kinds[] = {"object", "string", "array", "hash",
				    "data"};

/* -N: string ids of the names. */
enum { S_ROOT = 2, S_IVAR = 3, IVARS = 4, S_KEY = S_IVAR + IVARS, KEYS = 256 };

static int add_names(vmheap_writer *w)
{
	char text[32];
	int rc = vmheap_writer_add_string(w, S_ROOT, "$root", 5);

	for (int k = 0; !rc && k < IVARS; k++) {
		snprintf(text, sizeof(text), "@iv%d", k);
		rc = vmheap_writer_add_string(w, S_IVAR + (uint64_t)k, text,
					      strlen(text));
	}
	for (int k = 0; !rc && k < KEYS; k++) {
		snprintf(text, sizeof(text), "[:k%d]", k);
		rc = vmheap_writer_add_string(w, S_KEY + (uint64_t)k, text,
					      strlen(text));
	}
	return rc;
}

/* -N: the names of object i's references, by its kind (kinds[]). */
static void name_refs(int64_t *names, uint32_t kind, unsigned long long i,
		      size_t nrefs)
{
	for (size_t k = 0; k < nrefs; k++) {
		if (kind == 2) /* array */
			names[k] = vmheap_edge_name_index(k);
		else if (kind == 3) /* hash */
			names[k] = S_KEY + (int64_t)((i * 5 + k) % KEYS);
		else
			names[k] = S_IVAR + (int64_t)(k % IVARS);
	}
}

static void die(const char *what, vmheap_writer *w)
{
	fprintf(stderr, "gen_dump: %s: %s\n", what,
		w ? vmheap_writer_error(w) : "");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long n = 1000000, extra = 0;
	unsigned long classes = 200, seed = 1;
	const char *vm = "bench";
	int ch, named = 0, reachable = 0;

	while ((ch = getopt(argc, argv, "n:c:s:g:v:NR")) != -1) {
		switch (ch) {
		case 'n':
			n = strtoull(optarg, NULL, 10);
			break;
		case 'c':
			classes = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 10);
			break;
		case 'g':
			extra = strtoull(optarg, NULL, 10);
			break;
		case 'v':
			vm = optarg;
			break;
		case 'N':
			named = 1;
			break;
		case 'R':
			reachable = 1;
			break;
		default:
			fprintf(stderr, "usage: gen_dump [-n OBJECTS] "
					"[-c CLASSES] [-s SEED] [-g EXTRA] "
					"[-v VM] [-N] [-R] OUT\n");
			return 2;
		}
	}
	if (optind + 1 != argc || classes < 1) {
		fprintf(stderr, "gen_dump: give one output path\n");
		return 2;
	}
	const char *out = argv[optind];
	int fd = strcmp(out, "-")
		     ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600)
		     : 1;
	if (fd < 0) {
		perror(out);
		return 2;
	}

	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	opt.vm_name = vm;
	opt.vm_version = "1.0";
	opt.pid = 4242;
	opt.time = 1700000000 + (int64_t)extra;
	opt.kind_names = kinds;
	opt.kind_count = sizeof(kinds) / sizeof(kinds[0]);
	opt.edge_names = named;
	vmheap_writer *w;
	if (vmheap_writer_open(&w, fd, &opt) < 0)
		die("open", NULL);

	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	char name[64];
	size_t nusual = sizeof(usual) / sizeof(usual[0]);
	for (unsigned long c = 1; c <= classes; c++) {
		if (c <= nusual)
			snprintf(name, sizeof(name), "%s", usual[c - 1]);
		else
			snprintf(name, sizeof(name), "Bench::Class%04lu", c);
		if (vmheap_writer_add_class(w, c, name, strlen(name), 0, 0))
			die("class", w);
	}
	if (vmheap_writer_add_class(w, classes + 1, "Leak::Message", 13, 0,
				    0) ||
	    vmheap_writer_add_class(w, classes + 2, "Leak::Holder", 12, 0, 0))
		die("class", w);
	if (vmheap_writer_add_string(w, 1, "vm", 2))
		die("string", w);
	if (named && add_names(w) < 0)
		die("string", w);

	const uint64_t base = 0x7f0000000000ULL;
	uint64_t refs[8];
	int64_t names[8];
	for (unsigned long long i = 0; i < n; i++) {
		uint64_t r = rng();
		/* skewed: half the objects in the first 8 classes */
		uint64_t cls = (r & 1)
				   ? 1 + (r >> 8) % (classes < 8 ? classes : 8)
				   : 1 + (r >> 8) % classes;
		uint64_t bytes = 40 + ((r >> 20) % 4) * 40;
		uint32_t kind = (uint32_t)(cls % opt.kind_count);
		size_t nrefs = i ? (r >> 32) % 5 : 0;
		for (size_t k = 0; k < nrefs; k++)
			refs[k] = base + 40 * ((rng() >> 11) % i);
		if (reachable) {
			nrefs = 0;
			for (unsigned long long c = 2 * i + 1;
			     c <= 2 * i + 2 && c < n; c++)
				refs[nrefs++] = base + 40 * c;
			for (uint64_t k = (r >> 32) % 3; k > 0; k--)
				refs[nrefs++] = base + 40 * ((rng() >> 11) % n);
		}
		name_refs(names, kind, i, nrefs);
		if (vmheap_writer_add_object_named(w, base + 40 * i, cls, bytes,
						   kind, refs,
						   named ? names : NULL, nrefs,
						   0))
			die("object", w);
		if ((reachable ? i == 0 : i % 1000 == 0) &&
		    vmheap_writer_add_root_named(w, 1, base + 40 * i,
						 named ? S_ROOT : 0))
			die("root", w);
	}
	/* the leak: EXTRA messages past the end, one holder for them all */
	uint64_t leak_base = base + 40 * (n + 1);
	for (unsigned long long i = 0; i < extra; i++)
		if (vmheap_writer_add_object(w, leak_base + 80 * i, classes + 1,
					     80, 0, NULL, 0))
			die("object", w);
	if (extra) {
		uint64_t *held = malloc(extra * sizeof(*held));
		if (!held)
			die("out of memory", NULL);
		for (unsigned long long i = 0; i < extra; i++)
			held[i] = leak_base + 80 * i;
		uint64_t holder = leak_base + 80 * extra;
		int64_t *held_names = NULL;
		if (named && !(held_names = malloc(extra * sizeof(*held_names))))
			die("out of memory", NULL);
		for (unsigned long long i = 0; named && i < extra; i++)
			held_names[i] = vmheap_edge_name_index(i);
		if (vmheap_writer_add_object_named(w, holder, classes + 2, 40,
						   0, held, held_names, extra,
						   0) ||
		    vmheap_writer_add_root_named(w, 1, holder,
						 named ? S_ROOT : 0))
			die("object", w);
		free(held);
		free(held_names);
	}
	if (vmheap_writer_finish(w))
		die("finish", w);
	fprintf(stderr, "gen_dump: %s: %llu objects, %llu bytes of dump\n", out,
		(unsigned long long)vmheap_writer_objects(w),
		(unsigned long long)vmheap_writer_bytes_written(w));
	vmheap_writer_free(w);
	if (fd != 1 && close(fd) < 0) {
		perror(out);
		return 2;
	}
	return 0;
}
