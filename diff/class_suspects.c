/*
 * class_suspects.c - the short leak-suspects section at the top of the
 * class-by-class diff (suspects.c ranks it with libvmheap-analysis, as
 * for --suspects).
 *
 * It is computed after both censuses were read, when:
 *   - no --no-suspects, and the output is text or JSON (a CSV is one
 *     table);
 *   - both dumps hold references and roots (their censuses' totals), so
 *     that the graph says who holds what; otherwise it is left out without
 *     a word;
 *   - both dumps are regular files (they are read a second time, into heap
 *     graphs) and NEW has at most DIFF_SECTION_MAX_OBJECTS objects (the
 *     graphs cost 20 to 40 times the census's time); otherwise the section
 *     is one line saying why, and that --suspects computes it.
 * A failure of the section (memory) is said in that line too: the class
 * diff is never lost to it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "diff-internal.h"

/* Open d's dump again for a second read, into *r (the census read the
 * first reader to its end). */
static int reopen(const struct diff_dump *d, vmheap_reader **r, char *err,
		  size_t errsz)
{
	uint64_t size;
	int regular, rc;

	rc = vmheap_dump_open(r, d->path, &size, &regular, err, errsz);
	if (rc < 0 && *r)
		snprintf(err, errsz, "%s", vmheap_reader_error(*r));
	return rc;
}

/* Both dumps opened again: then they replace the readers of res (whose
 * headers are the same).  Returns 0 or a code with err set. */
static int reopen_both(struct diff_result *res, char *err, size_t errsz)
{
	vmheap_reader *old_r = NULL, *new_r = NULL;
	int rc = reopen(&res->old_d, &old_r, err, errsz);

	if (rc == 0 && (rc = reopen(&res->new_d, &new_r, err, errsz)) == 0) {
		vmheap_reader_free(res->old_d.reader);
		vmheap_reader_free(res->new_d.reader);
		res->old_d.reader = old_r;
		res->new_d.reader = new_r;
		return 0;
	}
	vmheap_reader_free(old_r);
	vmheap_reader_free(new_r);
	return rc;
}

static int has_graph(const struct diff_dump *d)
{
	const struct vmheap_totals *t = vmheap_census_totals(d->census);

	return t->references > 0 && t->roots > 0;
}

void diff_class_suspects(const struct diff_options *o, struct diff_result *res)
{
	struct diff_options so = *o;
	const struct diff_dump *d[2] = {&res->old_d, &res->new_d};
	uint64_t objects = vmheap_census_totals(res->new_d.census)->objects;
	char err[sizeof(res->suspects_skipped) - 64];
	int rc;

	if (o->no_suspects || o->report.format == VMHEAP_OUTPUT_CSV ||
	    !has_graph(&res->old_d) || !has_graph(&res->new_d))
		return;
	for (int k = 0; k < 2; k++)
		if (!strcmp(d[k]->path, "-") || !d[k]->regular) {
			snprintf(res->suspects_skipped,
				 sizeof(res->suspects_skipped),
				 "%s is %s (the section reads both dumps a "
				 "second time)",
				 k ? "NEW" : "OLD",
				 strcmp(d[k]->path, "-") ? "not a regular file"
							 : "standard input");
			return;
		}
	if (objects > DIFF_SECTION_MAX_OBJECTS) {
		snprintf(res->suspects_skipped, sizeof(res->suspects_skipped),
			 "NEW has %" PRIu64 " objects, more than the %u of "
			 "the default diff",
			 objects, DIFF_SECTION_MAX_OBJECTS);
		return;
	}
	so.report.top = DIFF_SECTION_SUSPECTS;
	if ((rc = reopen_both(res, err, sizeof(err))) == 0)
		rc = diff_suspects(&so, res, err, sizeof(err));
	if (rc < 0) {
		snprintf(res->suspects_skipped, sizeof(res->suspects_skipped),
			 "%s", err);
		diff_suspects_release(res->suspects);
		res->suspects = NULL;
	}
}
