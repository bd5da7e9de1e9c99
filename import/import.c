/*
 * import.c - vmheap_import(): guess the input's format and run its
 * converter (part of libvmheap-import).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "import-internal.h"

static const char hprof_magic[] = "JAVA PROFILE ";

enum vmheap_import_format vmheap_import_guess(const void *head, size_t len)
{
	const unsigned char *p = head;
	size_t i = 0;

	if (len >= sizeof(hprof_magic) - 1 &&
	    memcmp(p, hprof_magic, sizeof(hprof_magic) - 1) == 0)
		return VMHEAP_IMPORT_HPROF;
	while (i < len &&
	       (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	if (i < len && p[i] == '{')
		return VMHEAP_IMPORT_RUBY_JSON;
	return VMHEAP_IMPORT_GUESS;
}

const char *vmheap_import_format_name(enum vmheap_import_format f)
{
	switch (f) {
	case VMHEAP_IMPORT_RUBY_JSON:
		return "ruby-json";
	case VMHEAP_IMPORT_HPROF:
		return "hprof";
	default:
		return "guess";
	}
}

int vmheap_import_format_parse(const char *text, enum vmheap_import_format *out)
{
	if (strcmp(text, "ruby-json") == 0)
		*out = VMHEAP_IMPORT_RUBY_JSON;
	else if (strcmp(text, "hprof") == 0)
		*out = VMHEAP_IMPORT_HPROF;
	else
		return VMHEAP_EINVAL;
	return 0;
}

int imp_fail(struct vmheap_import_result *res, const char *name, int rc,
	     const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(res->error, sizeof(res->error), "%s: ", name);

	if (n < 0 || (size_t)n >= sizeof(res->error))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(res->error + n, sizeof(res->error) - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

int imp_writer_fail(struct vmheap_import_result *res, const char *name,
		    vmheap_writer *w, int rc)
{
	return imp_fail(res, name, rc, "writing the vmheap dump: %s",
			vmheap_writer_error(w)[0] ? vmheap_writer_error(w)
						  : vmheap_strerror(rc));
}

void imp_count_output(struct vmheap_import_result *res, vmheap_writer *w)
{
	res->objects = vmheap_writer_objects(w);
	res->bytes_out = vmheap_writer_bytes_written(w);
}

int vmheap_import(const struct vmheap_import_options *opt,
		  struct vmheap_import_result *res)
{
	struct imp_input in;
	const char *name;
	long got;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!opt || !opt->read || opt->out_fd < 0)
		return VMHEAP_EINVAL;
	name = opt->name ? opt->name : "<input>";
	rc = imp_input_init(&in, opt);
	if (rc < 0)
		return imp_fail(res, name, rc, "out of memory");
	got = imp_input_fill(&in, 64);
	if (got < 0) {
		rc = imp_fail(res, name, (int)got, "cannot read: %s",
			      got == VMHEAP_EIO ? strerror(in.error)
						: "out of memory");
		goto out;
	}
	res->from = opt->from;
	if (res->from == VMHEAP_IMPORT_GUESS)
		res->from = vmheap_import_guess(in.buf, (size_t)got);
	switch (res->from) {
	case VMHEAP_IMPORT_RUBY_JSON:
		rc = imp_ruby_json(&in, res);
		break;
	case VMHEAP_IMPORT_HPROF:
		rc = imp_hprof(&in, res);
		break;
	default:
		rc = imp_fail(res, name, VMHEAP_EINVAL,
			      got ? "not a dump vmheap-import reads (neither "
				    "HPROF nor ObjectSpace.dump_all JSON) at "
				    "byte offset 0"
				  : "empty input, no dump at byte offset 0");
	}
	res->bytes_in = in.base + in.end;
out:
	imp_input_free(&in);
	return rc;
}
