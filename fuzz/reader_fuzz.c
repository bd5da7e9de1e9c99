/*
 * reader_fuzz.c - fuzz target of libvmheap's reader.
 *
 * The input is a whole dump file.  It is put in a memfd and read four
 * ways, as the tools read dumps: record by record (vmheap_reader_next),
 * block by block with a block cursor (vmheap_reader_next_block), with
 * the census that vmheap-histo and vmheap-diff use, and into the heap
 * graph of the graph tools (its paths and the names on them).  Whatever the bytes,
 * each way must end in 0 or a negative code with a message, never crash
 * or leak; a reader that reports success must have seen the footer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-internal.h"
#include "vmheap.h"
#include "vmheap_analysis.h"
#include "vmheap_graph.h"

static int memfd_of(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-dump", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		abort();
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

/* A negative code must come with a message. */
static void check_error(int rc, const char *msg)
{
	if (rc < 0 && (!msg || !*msg)) {
		fprintf(stderr, "error %d without a message\n", rc);
		abort();
	}
}

static void read_records(int fd)
{
	struct vmheap_record rec;
	vmheap_reader *r = NULL;
	int rc = vmheap_reader_open_fd(&r, fd, "fuzz.vmheap");

	if (rc == 0) {
		const struct vmheap_header *h = vmheap_reader_header(r);
		uint64_t sum = 0;

		for (size_t i = 0; i < h->kind_count; i++)
			sum += strlen(h->kind_names[i]);
		sum += strlen(h->vm_name) + strlen(h->vm_version);
		while ((rc = vmheap_reader_next(r, &rec)) > 0) {
			/* touch what the record points to */
			if (rec.type == VMHEAP_RECORD_OBJECT ||
			    rec.type == VMHEAP_RECORD_MORE_REFS)
				for (size_t i = 0; i < rec.u.object.nrefs; i++)
					sum += rec.u.object.refs[i];
			else if (rec.type == VMHEAP_RECORD_STRING &&
				 rec.u.string.len)
				sum +=
				    (uint8_t)
					rec.u.string.text[rec.u.string.len - 1];
			else if (rec.type == VMHEAP_RECORD_CLASS &&
				 rec.u.klass.name_len)
				sum += (uint8_t)rec.u.klass
					   .name[rec.u.klass.name_len - 1];
		}
		if (rc == 0 && !vmheap_reader_totals(r))
			abort();
		if (rc == 0) { /* and its native section, if any */
			struct vmheap_native *n = NULL;
			int nrc = vmheap_reader_native(r, &n);
			check_error(nrc, vmheap_reader_error(r));
			vmheap_native_free(n);
		}
		(void)sum;
	}
	if (r)
		check_error(rc, vmheap_reader_error(r));
	vmheap_reader_free(r);
}

static void read_blocks(int fd)
{
	vmheap_block_cursor *cur = NULL;
	struct vmheap_record rec;
	struct vmheap_block blk;
	vmheap_reader *r = NULL;
	int rc = vmheap_reader_open_fd(&r, fd, "fuzz.vmheap");

	if (rc == 0) {
		while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
			int crc;

			if (cur)
				vmheap_block_cursor_reset(cur, &blk);
			else if (vmheap_block_cursor_open(&cur, &blk) < 0)
				abort();
			while ((crc = vmheap_block_cursor_next(cur, &rec)) > 0)
				;
			check_error(crc, vmheap_block_cursor_error(cur));
		}
	}
	if (r)
		check_error(rc, vmheap_reader_error(r));
	vmheap_block_cursor_free(cur);
	vmheap_reader_free(r);
}

/* The census as the tools run it: with two decoding threads for inputs
 * of odd length (the tools' default on a multi-core machine), else on
 * the calling thread; grouped by kind for lengths divisible by 3. */
static void read_census(int fd, size_t size)
{
	struct vmheap_scan_options opt = VMHEAP_SCAN_OPTIONS_INIT;
	vmheap_census *c = NULL;
	vmheap_reader *r = NULL;
	int rc;

	opt.threads = (size & 1) ? 2 : 1;
	if (vmheap_census_new(&c,
			      size % 3 ? VMHEAP_GROUP_CLASS : VMHEAP_GROUP_KIND,
			      opt.threads) < 0)
		abort();
	rc = vmheap_reader_open_fd(&r, fd, "fuzz.vmheap");
	if (rc == 0) {
		rc = vmheap_census_read(c, r, &opt);
		check_error(rc, vmheap_census_error(c));
		if (rc == 0) {
			size_t n;
			struct vmheap_census_row *rows =
			    vmheap_census_rows(c, &n);

			vmheap_census_rows_sort(rows, n, VMHEAP_SORT_COUNT);
			for (size_t i = 0; i < n; i++)
				if (strlen(rows[i].name) > (1u << 20))
					abort();
		}
	}
	vmheap_reader_free(r);
	vmheap_census_free(c);
}

/* The heap graph as vmheap-path reads it: every object's path and the
 * name each is reached by, every root's name. */
static void read_graph(int fd)
{
	vmheap_graph *g = NULL;
	vmheap_reader *r = NULL;
	struct vmheap_graph_name name;
	uint64_t sum = 0;
	int rc = vmheap_reader_open_fd(&r, fd, "fuzz.vmheap");

	if (rc == 0) {
		rc = vmheap_graph_read(&g, r);
		check_error(rc, vmheap_graph_error(g));
	}
	if (rc == 0 && vmheap_graph_shortest_paths(g) == 0) {
		for (uint32_t i = 0; i < vmheap_graph_object_count(g); i++) {
			const uint32_t *t;
			uint32_t n = vmheap_graph_references(g, i, &t);
			if (vmheap_graph_path_name(g, i, &name) ==
			    VMHEAP_GRAPH_NAME_TEXT)
				sum += (uint8_t)name.text[name.len];
			for (uint32_t k = 0; k < n; k++)
				sum += (unsigned)vmheap_graph_reference_name(
				    g, i, k, &name);
		}
		for (size_t k = 0; k < vmheap_graph_root_count(g); k++) {
			size_t len;
			const char *s = vmheap_graph_root_name(g, k, &len);
			if (s && s[len] != '\0')
				abort();
		}
	}
	(void)sum;
	vmheap_graph_free(g);
	vmheap_reader_free(r);
}

int fuzz_reader_one(const uint8_t *data, size_t size)
{
	int fd = memfd_of(data, size);

	read_records(fd);
	lseek(fd, 0, SEEK_SET);
	read_blocks(fd);
	lseek(fd, 0, SEEK_SET);
	read_census(fd, size);
	lseek(fd, 0, SEEK_SET);
	read_graph(fd);
	close(fd);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_reader_one(data, size);
}
#endif
