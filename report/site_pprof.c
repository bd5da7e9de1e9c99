/*
 * site_pprof.c - allocation sites (census rows by site) as pprof
 * samples (vmheap_pprof_add_site): the site's method at its file and
 * line as the one frame, the class as the sample's label.
 */
#include <stdlib.h>
#include <string.h>

#include "vmheap_pprof.h"

/* Split "FILE:LINE in METHOD" or "FILE:LINE" (vmheap_site_text's
 * shapes) at the first ":DIGITS" followed by " in " or the end: 1 with
 * the parts set (*loc_len: the length of "FILE:LINE"; *method NULL or
 * ""  when none), 0 when `site` is of neither shape. */
static int split(const char *site, size_t *file_len, size_t *loc_len,
		 long long *line, const char **method)
{
	for (const char *c = strchr(site, ':'); c; c = strchr(c + 1, ':')) {
		const char *d = c + 1;
		long long v = 0;
		while (*d >= '0' && *d <= '9' && v < 1000000000000LL)
			v = v * 10 + (*d++ - '0');
		if (d == c + 1 || c == site)
			continue;
		if (*d == '\0' || !strncmp(d, " in ", 4)) {
			*file_len = (size_t)(c - site);
			*loc_len = (size_t)(d - site);
			*line = v;
			*method = *d ? d + 4 : NULL;
			return 1;
		}
	}
	return 0;
}

int vmheap_pprof_add_site(vmheap_pprof *p, const char *cls, const char *site,
			  int64_t count, int64_t bytes)
{
	struct vmheap_pprof_frame f = {"no allocation site", "", 0};
	size_t file_len, loc_len;
	long long line;
	const char *method;
	char *file = NULL, *loc = NULL;
	int rc;

	if (!cls)
		return VMHEAP_EINVAL;
	if (site && split(site, &file_len, &loc_len, &line, &method)) {
		file = strndup(site, file_len);
		/* without a method, "FILE:LINE" names the frame */
		loc = method && *method ? NULL : strndup(site, loc_len);
		if (!file || (!(method && *method) && !loc)) {
			rc = VMHEAP_ENOMEM;
			goto out;
		}
		f = (struct vmheap_pprof_frame){loc ? loc : method, file, line};
	} else if (site)
		f.function = site;
	rc = vmheap_pprof_add_labeled(p, &f, 1, "class", cls, count, bytes);
out:
	free(file);
	free(loc);
	return rc;
}
