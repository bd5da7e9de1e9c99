/*
 * options.c - the command-line options the tools share
 * (--sort, --top, --format, --threads, --no-progress, --bytes), and the scan
 * options and row counts that follow from them (part of
 * libvmheap-report).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_report.h"

/* Index of `text` among the n words, or -1. */
static int word_index(const char *text, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(text, words[i]))
			return i;
	return -1;
}

int vmheap_sort_parse(const char *text, enum vmheap_sort *out)
{
	/* in the order of enum vmheap_sort */
	static const char *const keys[] = {"count", "bytes", "name"};
	int i = word_index(text, keys, 3);

	if (i < 0)
		return VMHEAP_EINVAL;
	*out = (enum vmheap_sort)i;
	return 0;
}

int vmheap_output_format_parse(const char *text, enum vmheap_output_format *out)
{
	/* in the order of enum vmheap_output_format */
	static const char *const formats[] = {"text", "json", "csv"};
	int i = word_index(text, formats, 3);

	if (i < 0)
		return VMHEAP_EINVAL;
	*out = (enum vmheap_output_format)i;
	return 0;
}

/* A positive decimal number up to max, nothing else; 0 when bad. */
static unsigned long positive_number(const char *text, unsigned long max)
{
	char *end;
	unsigned long v;

	if (!*text || *text == '-' || *text == '+')
		return 0;
	v = strtoul(text, &end, 10);
	if (*end || v > max)
		return 0;
	return v;
}

int vmheap_report_option(struct vmheap_report_options *o, const char *name,
			 const char *value, char *err, size_t errsz)
{
	const char *problem = NULL; /* a format for the value */

	if (!strcmp(name, "no-progress")) {
		o->progress = 0;
		return 1;
	}
	if (!strcmp(name, "bytes")) {
		o->raw_bytes = 1;
		return 1;
	}
	if (!value)
		return 0;
	if (!strcmp(name, "sort")) {
		if (vmheap_sort_parse(value, &o->sort) < 0)
			problem = "unknown sort key '%s' (use count, bytes or "
				  "name)";
	} else if (!strcmp(name, "top")) {
		o->top = positive_number(value, (unsigned long)-1 >> 1);
		if (!o->top)
			problem = "--top needs a positive number, not '%s'";
	} else if (!strcmp(name, "format")) {
		if (vmheap_output_format_parse(value, &o->format) < 0)
			problem = "unknown format '%s' (use text, json or csv)";
	} else if (!strcmp(name, "threads")) {
		o->threads = (unsigned)positive_number(value, 64);
		if (!o->threads)
			problem = "--threads needs a number from 1 to 64, not "
				  "'%s'";
	} else {
		return 0;
	}
	if (!problem)
		return 1;
	snprintf(err, errsz, problem, value);
	return VMHEAP_EINVAL;
}

void vmheap_report_size(const struct vmheap_report_options *o, char *buf,
			size_t len, uint64_t bytes)
{
	if (o->raw_bytes)
		snprintf(buf, len, "%" PRIu64, bytes);
	else
		vmheap_format_size(buf, len, bytes);
}

void vmheap_report_size_delta(const struct vmheap_report_options *o, char *buf,
			      size_t len, int64_t delta)
{
	if (o->raw_bytes)
		snprintf(buf, len, delta > 0 ? "+%" PRId64 : "%" PRId64, delta);
	else
		vmheap_format_size_delta(buf, len, delta);
}

void vmheap_report_amount(const struct vmheap_report_options *o, char *buf,
			  size_t len, uint64_t bytes)
{
	if (o->raw_bytes)
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	else
		vmheap_format_size(buf, len, bytes);
}

void vmheap_report_bytes(const struct vmheap_report_options *o, char *buf,
			 size_t len, uint64_t bytes)
{
	if (o->raw_bytes)
		vmheap_report_amount(o, buf, len, bytes);
	else
		vmheap_format_bytes(buf, len, bytes);
}

size_t vmheap_report_rows_shown(const struct vmheap_report_options *o, size_t n)
{
	return o->top && o->top < n ? o->top : n;
}

void vmheap_report_scan_options(const struct vmheap_report_options *o,
				const char *name, uint64_t size,
				struct vmheap_progress *bar,
				struct vmheap_scan_options *sopt)
{
	struct vmheap_scan_options init = VMHEAP_SCAN_OPTIONS_INIT;

	*sopt = init;
	sopt->threads = o->threads;
	bar->fd = 2;
	bar->name = name;
	bar->total = size;
	bar->drawn = 0;
	if (o->progress && vmheap_progress_wanted(2, size)) {
		sopt->progress = vmheap_progress_update;
		sopt->progress_arg = bar;
	}
}
