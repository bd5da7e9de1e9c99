/*
 * input.c - the converters' buffered input (part of libvmheap-import).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "import-internal.h"

#define INITIAL_BYTES (1u << 20)
#define PROGRESS_STEP (4u << 20)

int imp_input_init(struct imp_input *in,
		   const struct vmheap_import_options *opt)
{
	memset(in, 0, sizeof(*in));
	in->opt = opt;
	in->buf = malloc(INITIAL_BYTES);
	if (!in->buf)
		return VMHEAP_ENOMEM;
	in->cap = INITIAL_BYTES;
	return 0;
}

void imp_input_free(struct imp_input *in)
{
	free(in->buf);
	in->buf = NULL;
}

/* Read more after in->end; 0 at the end, 1 when something came. */
static int read_more(struct imp_input *in)
{
	long n;

	if (in->eof)
		return 0;
	do
		n = in->opt->read(in->opt->read_ctx, in->buf + in->end,
				  in->cap - in->end);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		in->error = errno;
		return VMHEAP_EIO;
	}
	if (n == 0) {
		in->eof = 1;
		return 0;
	}
	in->end += (size_t)n;
	if (in->opt->progress && in->base + in->end >= in->next_progress) {
		in->opt->progress(in->opt->progress_arg, in->base + in->end);
		in->next_progress = in->base + in->end + PROGRESS_STEP;
	}
	return 1;
}

/* Room for `n` unread bytes from buf[0]: move them down, grow. */
static int make_room(struct imp_input *in, size_t n)
{
	if (in->pos) {
		memmove(in->buf, in->buf + in->pos, in->end - in->pos);
		in->base += in->pos;
		in->end -= in->pos;
		in->pos = 0;
	}
	if (n > in->cap) {
		size_t cap = in->cap;
		unsigned char *buf;

		while (cap < n)
			cap *= 2;
		buf = realloc(in->buf, cap);
		if (!buf)
			return VMHEAP_ENOMEM;
		in->buf = buf;
		in->cap = cap;
	}
	return 0;
}

long imp_input_fill(struct imp_input *in, size_t n)
{
	int rc;

	if (in->end - in->pos >= n)
		return (long)(in->end - in->pos);
	if (in->pos + n > in->cap || in->end == in->cap) {
		rc = make_room(in, n > in->cap / 2 ? n : in->cap / 2);
		if (rc < 0)
			return rc;
	}
	while (in->end - in->pos < n) {
		rc = read_more(in);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
	}
	return (long)(in->end - in->pos);
}

int imp_input_line(struct imp_input *in, const char **line, size_t *len,
		   uint64_t *offset)
{
	size_t scanned = 0;
	unsigned char *nl;
	int rc;

	for (;;) {
		nl = memchr(in->buf + in->pos + scanned, '\n',
			    in->end - in->pos - scanned);
		if (nl)
			break;
		scanned = in->end - in->pos;
		if (in->end == in->cap) {
			rc = make_room(in, in->pos ? in->cap : in->cap * 2);
			if (rc < 0)
				return rc;
		}
		rc = read_more(in);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			*offset = imp_input_offset(in);
			return in->pos == in->end ? 0 : VMHEAP_ETRUNCATED;
		}
	}
	*line = (const char *)in->buf + in->pos;
	*len = (size_t)(nl - (in->buf + in->pos));
	*offset = imp_input_offset(in);
	in->pos += *len + 1;
	in->line++;
	return 1;
}
