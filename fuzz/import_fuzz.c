/*
 * import_fuzz.c - what the fuzz targets of libvmheap-import share
 * (import_json_fuzz.c: dump_all JSON; import_hprof_fuzz.c: HPROF).
 *
 * The input is fed to vmheap_import() in pieces of varying sizes (so that
 * lines and records straddle the converter's buffer refills), and the
 * vmheap dump goes to a memfd.  Whatever the bytes, the conversion must
 * end in 0 or a negative code with a message, never crash or leak; and a
 * conversion that succeeds must have written a complete dump, which
 * libvmheap's reader reads to its footer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-internal.h"
#include "vmheap.h"
#include "vmheap_import.h"

struct feed {
	const uint8_t *data;
	size_t size, pos;
	unsigned step;
};

static long feed_read(void *ctx, void *buf, size_t len)
{
	struct feed *f = ctx;
	size_t n = f->size - f->pos;
	size_t piece = 1 + (f->step++ * 7919u) % 4099u;

	if (n > len)
		n = len;
	if (n > piece)
		n = piece;
	memcpy(buf, f->data + f->pos, n);
	f->pos += n;
	return (long)n;
}

static void check_dump(int fd)
{
	struct vmheap_record rec;
	vmheap_reader *r = NULL;
	int rc;

	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	rc = vmheap_reader_open_fd(&r, fd, "fuzz.vmheap");
	while (rc == 0 && (rc = vmheap_reader_next(r, &rec)) > 0)
		rc = 0;
	if (rc != 0) {
		fprintf(stderr,
			"an import that succeeded wrote a dump the "
			"reader refuses: %s\n",
			vmheap_reader_error(r));
		abort();
	}
	vmheap_reader_free(r);
}

int fuzz_import_one(const uint8_t *data, size_t size, int hprof)
{
	struct feed f = {data, size, 0, (unsigned)size};
	struct vmheap_import_options o = {0};
	struct vmheap_import_result res;
	int fd = memfd_create("fuzz-import", MFD_CLOEXEC), rc;

	if (fd < 0)
		abort();
	o.from = hprof ? VMHEAP_IMPORT_HPROF : VMHEAP_IMPORT_RUBY_JSON;
	o.name = "fuzz";
	o.read = feed_read;
	o.read_ctx = &f;
	o.out_fd = fd;
	rc = vmheap_import(&o, &res);
	if (rc < 0 && !res.error[0]) {
		fprintf(stderr, "error %d without a message\n", rc);
		abort();
	}
	if (rc == 0)
		check_dump(fd);
	close(fd);
	return 0;
}
