/*
 * format_bench.c - size and speed of the vmheap dump format.
 *
 * Writes a synthetic Ruby-like dump (3,000,000 objects by default: 40-byte
 * slots in 16 KiB heap pages, a few classes, two references each, one to
 * a nearby object and one to an object anywhere in the heap) to a
 * temporary file, reads it back fully, and times `cat FILE >/dev/null`
 * on the same file in the same run.  Every timing is the median of
 * several runs.  It reports:
 *
 *   - bytes per object (target: at most 32);
 *   - writer objects per second;
 *   - the full decode with vmheap_reader_next() as a ratio to cat
 *     (target: at most 4x);
 *   - the same decode done with msgpack-c's generic msgpack_unpack_next()
 *     over the raw blocks, as a ratio to cat: the figure that justifies
 *     the reader's own typed decoder (format/mpcursor-internal.h).
 *
 * usage: format_bench [OBJECTS] [RUNS]
 * With FORMAT_BENCH_KEEP set in the environment the dump is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>

#include "vmheap.h"

#define PAGE_BYTES 16384u
#define SLOT_BYTES 40u
#define SLOTS_PER_PAGE (PAGE_BYTES / SLOT_BYTES)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) this process has used. */
static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v; v[0] is then the fastest run. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "format_bench: %s: %s\n", what, detail);
	exit(1);
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Heap pages at malloc-like addresses: mostly consecutive, sometimes a
 * jump, as Ruby's heap pages come from the C heap. */
static uint64_t *make_pages(uint64_t npages)
{
	uint64_t *pages = malloc(npages * sizeof(*pages));
	uint64_t addr = 0x00007f3a1c000000ull;

	if (!pages)
		die("out of memory", "pages");
	for (uint64_t i = 0; i < npages; i++) {
		pages[i] = addr + 40; /* slots start past the page header */
		addr += PAGE_BYTES + (rng() % 8 == 0 ? (rng() % 64) << 20 : 0);
	}
	return pages;
}

static uint64_t object_id(const uint64_t *pages, uint64_t i)
{
	return pages[i / SLOTS_PER_PAGE] + (i % SLOTS_PER_PAGE) * SLOT_BYTES;
}

static double write_dump(const char *path, uint64_t nobjects,
			 const uint64_t *pages, uint64_t *file_bytes)
{
	static const char *const classes[] = {"String",
					      "Array",
					      "Hash",
					      "Object",
					      "Proc",
					      "Symbol",
					      "ActiveRecord::Relation",
					      "MyApp::Order"};
	static const char *const kinds[] = {"object", "string", "array",
					    "hash"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	double t0, t1;
	int fd, rc;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path, strerror(errno));
	opt.vm_name = "bench";
	opt.vm_version = "1";
	opt.kind_names = kinds;
	opt.kind_count = 4;
	t0 = now();
	if ((rc = vmheap_writer_open(&w, fd, &opt)))
		die("open writer", vmheap_strerror(rc));
	for (uint64_t c = 0; c < 8; c++)
		vmheap_writer_add_class(w, c + 1, classes[c],
					strlen(classes[c]), c ? 4 : 0, 0);
	vmheap_writer_add_string(w, 1, "vm", 2);
	for (uint64_t i = 0; i < nobjects; i++) {
		uint64_t refs[2];
		uint64_t near = i + (rng() % 16) - 8;
		if (near >= nobjects)
			near = i;
		refs[0] = object_id(pages, near);
		refs[1] = object_id(pages, rng() % nobjects);
		rc = vmheap_writer_add_object(w, object_id(pages, i),
					      1 + (i * 7 + i / 13) % 8, 40,
					      (uint32_t)(i % 4), refs, 2);
		if (rc)
			die("add object", vmheap_writer_error(w));
	}
	for (uint64_t i = 0; i < 1000; i++)
		vmheap_writer_add_root(w, 1,
				       object_id(pages, i * 97 % nobjects));
	if (vmheap_writer_finish(w))
		die("finish", vmheap_writer_error(w));
	t1 = now();
	*file_bytes = vmheap_writer_bytes_written(w);
	vmheap_writer_free(w);
	close(fd);
	return t1 - t0;
}

/* Full decode with the library's reader; returns seconds. */
static double read_typed(const char *path, uint64_t want_objects, double *cpu)
{
	double c0 = cpu_self();
	struct vmheap_record rec;
	vmheap_reader *r;
	uint64_t objects = 0, sum = 0, refs = 0;
	double t0 = now();
	int rc;

	if (vmheap_reader_open_path(&r, path))
		die("open reader", vmheap_reader_error(r));
	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		if (rec.type == VMHEAP_RECORD_OBJECT) {
			objects++;
			/* What a histogram or a graph walk would take: the
			 * record's fields and a reference (all of them were
			 * decoded by the reader). */
			sum += rec.u.object.class_id + rec.u.object.bytes;
			if (rec.u.object.nrefs)
				sum ^=
				    rec.u.object.refs[rec.u.object.nrefs - 1];
			refs += rec.u.object.nrefs;
		}
	}
	if (rc < 0)
		die("read", vmheap_reader_error(r));
	vmheap_reader_free(r);
	if (objects != want_objects || refs != 2 * want_objects || sum == 42)
		die("read", "object or reference count differs");
	*cpu = cpu_self() - c0;
	return now() - t0;
}

/* The same decode with msgpack-c's generic unpacker over raw blocks. */
static double read_generic(const char *path, uint64_t want_objects)
{
	struct vmheap_block blk;
	msgpack_unpacked u;
	vmheap_reader *r;
	uint64_t objects = 0, sum = 0;
	double t0 = now();
	int rc;

	if (vmheap_reader_open_path(&r, path))
		die("open reader", vmheap_reader_error(r));
	msgpack_unpacked_init(&u);
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		size_t off = 0;
		uint64_t prev = 0;
		while (off < blk.length) {
			msgpack_object *a;
			if (msgpack_unpack_next(&u, (const char *)blk.data,
						blk.length,
						&off) != MSGPACK_UNPACK_SUCCESS)
				die("msgpack_unpack_next", "failed");
			if (u.data.type != MSGPACK_OBJECT_ARRAY ||
			    u.data.via.array.size < 6)
				continue;
			a = u.data.via.array.ptr;
			if (a[0].via.u64 != VMHEAP_RECORD_OBJECT)
				continue;
			uint64_t id = prev + (uint64_t)a[1].via.i64;
			prev = id;
			objects++;
			sum += a[2].via.u64 + a[3].via.u64;
			for (uint32_t k = 0; k < a[5].via.array.size; k++)
				sum ^= id +
				       (uint64_t)a[5].via.array.ptr[k].via.i64;
		}
	}
	if (rc < 0)
		die("read", vmheap_reader_error(r));
	msgpack_unpacked_destroy(&u);
	vmheap_reader_free(r);
	if (objects != want_objects || sum == 42)
		die("generic read", "object count differs");
	return now() - t0;
}

/* `cat FILE >/dev/null`, run as a real process. */
static double time_cat(const char *path, double *cpu)
{
	double t0 = now();
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null < 0 || dup2(null, 1) < 0)
			_exit(127);
		execlp("cat", "cat", path, (char *)NULL);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("cat", "failed");
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return now() - t0;
}

int main(int argc, char **argv)
{
	uint64_t nobjects = argc > 1 ? strtoull(argv[1], NULL, 10) : 3000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	double tw[16], tr[16], tg[16], tc[16], cr[16], cc[16];
	uint64_t file_bytes = 0, *pages;
	double w, rd, gen, cat, rd_cpu, cat_cpu;

	if (nobjects < 1 || runs < 1 || runs > 16)
		die("usage", "format_bench [OBJECTS] [RUNS<=16]");
	snprintf(path, sizeof(path), "%s/vmheap-format-bench-%d.vmheap",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());
	pages = make_pages(nobjects / SLOTS_PER_PAGE + 1);
	for (int i = 0; i < runs; i++) {
		rng_state = 0x9E3779B97F4A7C15ull;
		tw[i] = write_dump(path, nobjects, pages, &file_bytes);
	}
	/* Interleave the readers so that they share the machine's state. */
	for (int i = 0; i < runs; i++) {
		tc[i] = time_cat(path, &cc[i]);
		tr[i] = read_typed(path, nobjects, &cr[i]);
		tg[i] = read_generic(path, nobjects);
	}
	if (getenv("FORMAT_BENCH_KEEP"))
		fprintf(stderr, "format_bench: kept %s\n", path);
	else
		unlink(path);
	free(pages);
	w = median(tw, runs);
	rd = median(tr, runs);
	gen = median(tg, runs);
	cat = median(tc, runs);
	rd_cpu = median(cr, runs);
	cat_cpu = median(cc, runs);

	printf("format: %llu objects (40-byte slots in 16 KiB pages, 2 "
	       "references each), median of %d runs\n",
	       (unsigned long long)nobjects, runs);
	printf("  file size                    %12llu bytes\n",
	       (unsigned long long)file_bytes);
	printf("  bytes per object             %12.2f   (target <= 32) %s\n",
	       (double)file_bytes / (double)nobjects,
	       (double)file_bytes / (double)nobjects <= 32 ? "met" : "MISSED");
	printf("  writer                       %12.0f objects/s (%.3f s)\n",
	       (double)nobjects / w, w);
	printf(
	    "  cat FILE >/dev/null          %12.4f s   (fastest run %.4f s)\n",
	    cat, tc[0]);
	printf("  reader, typed decoder        %12.4f s = %.2fx cat (target "
	       "<= 4x) %s   (fastest runs: %.2fx)\n",
	       rd, rd / cat, rd / cat <= 4 ? "met" : "MISSED", tr[0] / tc[0]);
	printf("  CPU time (user+system): reader %.4f s, cat %.4f s = %.2fx "
	       "(less disturbed by other jobs on the machine)\n",
	       rd_cpu, cat_cpu, rd_cpu / cat_cpu);
	printf("  reader, msgpack_unpack_next  %12.4f s = %.2fx cat   "
	       "(fastest runs: %.2fx)\n",
	       gen, gen / cat, tg[0] / tc[0]);
	return 0;
}
