/*
 * dump.c - open a dump named on a tool's command line (part of
 * libvmheap-report).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmheap_report.h"

int vmheap_dump_open(vmheap_reader **out, const char *arg, uint64_t *size,
		     int *regular, char *err, size_t errsz)
{
	struct stat st;
	int fd, rc;

	*out = NULL;
	*size = 0;
	*regular = 0;
	err[0] = '\0';
	if (!strcmp(arg, "-")) {
		if (!fstat(0, &st) && S_ISREG(st.st_mode)) {
			*size = (uint64_t)st.st_size;
			*regular = 1;
		}
		return vmheap_reader_open_fd(out, 0, "<stdin>");
	}
	fd = open(arg, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsz, "cannot open %s: %s", arg,
			 strerror(errno));
		return VMHEAP_EIO;
	}
	if (!fstat(fd, &st)) {
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			snprintf(err, errsz, "cannot read %s: is a directory",
				 arg);
			return VMHEAP_EIO;
		}
		if (S_ISREG(st.st_mode)) {
			*size = (uint64_t)st.st_size;
			*regular = 1;
		}
	}
	close(fd);
	rc = vmheap_reader_open_path(out, arg);
	return rc;
}
