/*
 * pprof.c - a profile in pprof's format built in memory (vmheap_pprof.h):
 * strings, functions, locations and samples each deduplicated through
 * one byte-keyed hash map, then packed with protobuf-c (the messages of
 * report/profile.proto) and gzipped with zlib.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "vmheap_pprof.h"

/* ------------------------------------------------------------ key map */

/* An open-addressing map from byte strings to indices. */
struct keymap {
	struct slot {
		char *key; /* owned; NULL: empty */
		size_t len;
		size_t val;
	} *s;
	size_t cap, n; /* cap a power of two */
};

static uint64_t hash(const void *k, size_t len)
{
	const unsigned char *b = k;
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static struct slot *find(const struct keymap *m, const void *k, size_t len)
{
	size_t i = (size_t)hash(k, len) & (m->cap - 1);

	while (m->s[i].key &&
	       (m->s[i].len != len || memcmp(m->s[i].key, k, len) != 0))
		i = (i + 1) & (m->cap - 1);
	return &m->s[i];
}

static int grow(struct keymap *m)
{
	struct keymap g = {calloc(m->cap ? 2 * m->cap : 64, sizeof(*g.s)),
			   m->cap ? 2 * m->cap : 64, m->n};

	if (!g.s)
		return VMHEAP_ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].key)
			*find(&g, m->s[i].key, m->s[i].len) = m->s[i];
	free(m->s);
	*m = g;
	return 0;
}

/* The index of key k, adding it as `next` when new (*added set). */
static int lookup(struct keymap *m, const void *k, size_t len, size_t next,
		  size_t *val, int *added)
{
	*added = 0;
	if (2 * (m->n + 1) > m->cap && grow(m) < 0)
		return VMHEAP_ENOMEM;
	struct slot *s = find(m, k, len);
	if (!s->key) {
		s->key = malloc(len ? len : 1);
		if (!s->key)
			return VMHEAP_ENOMEM;
		memcpy(s->key, k, len);
		s->len = len;
		s->val = next;
		m->n++;
		*added = 1;
	}
	*val = s->val;
	return 0;
}

static void keymap_release(struct keymap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->s[i].key);
	free(m->s);
}

/* ------------------------------------------------------------ profile */

struct function {
	int64_t name, file; /* string indices */
};

struct location {
	uint64_t function; /* 1-based id */
	int64_t line;
};

struct sample {
	uint64_t *ids; /* location ids, leaf first; then, in the key only,
			  the label's key and value string indices */
	size_t n;
	int64_t label_key, label_str; /* 0: no label */
	int64_t count, bytes;
};

struct vmheap_pprof {
	char **strings;
	size_t nstrings, capstrings;
	struct function *functions;
	size_t nfunctions, capfunctions;
	struct location *locations;
	size_t nlocations, caplocations;
	struct sample *samples;
	size_t nsamples, capsamples;
	int64_t *comments;
	size_t ncomments, capcomments;
	struct keymap string_map, function_map, location_map, sample_map;
	int64_t time_nanos, duration_nanos;
};

/* Room for one more element in array a of n used, cap allocated: 0 or
 * VMHEAP_ENOMEM from the enclosing function. */
#define ROOM(a, n, cap)                                                        \
	do {                                                                   \
		if ((n) == (cap)) {                                            \
			void *g_ = vmheap_array_grow((a), &(cap),              \
						     sizeof(*(a)), 64);        \
			if (!g_)                                               \
				return VMHEAP_ENOMEM;                          \
			(a) = g_;                                              \
		}                                                              \
	} while (0)

/* The string table's index of s (added when new), or negative. */
static int64_t string_index(vmheap_pprof *p, const char *s)
{
	size_t len = strlen(s), v;
	int added;

	ROOM(p->strings, p->nstrings, p->capstrings);
	char *copy = strdup(s);
	if (!copy)
		return VMHEAP_ENOMEM;
	if (lookup(&p->string_map, s, len, p->nstrings, &v, &added) < 0) {
		free(copy);
		return VMHEAP_ENOMEM;
	}
	if (added)
		p->strings[p->nstrings++] = copy;
	else
		free(copy);
	return (int64_t)v;
}

vmheap_pprof *vmheap_pprof_new(void)
{
	vmheap_pprof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	/* [0] must be "", then the sample types' names */
	static const char *const fixed[] = {"", "objects", "count", "space",
					    "bytes"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (string_index(p, fixed[i]) != (int64_t)i) {
			vmheap_pprof_free(p);
			return NULL;
		}
	return p;
}

/* The 1-based id of the location of frame f, added when new. */
static int location_id(vmheap_pprof *p, const struct vmheap_pprof_frame *f,
		       uint64_t *id)
{
	int64_t name = string_index(p, f->function);
	int64_t file = name < 0 ? name : string_index(p, f->file);
	struct function fk = {name, file};
	size_t v;
	int added;

	if (file < 0)
		return VMHEAP_ENOMEM;
	ROOM(p->functions, p->nfunctions, p->capfunctions);
	ROOM(p->locations, p->nlocations, p->caplocations);
	if (lookup(&p->function_map, &fk, sizeof(fk), p->nfunctions, &v,
		   &added) < 0)
		return VMHEAP_ENOMEM;
	if (added)
		p->functions[p->nfunctions++] = fk;
	struct location lk = {(uint64_t)v + 1, f->line};
	if (lookup(&p->location_map, &lk, sizeof(lk), p->nlocations, &v,
		   &added) < 0)
		return VMHEAP_ENOMEM;
	if (added)
		p->locations[p->nlocations++] = lk;
	*id = (uint64_t)v + 1;
	return 0;
}

int vmheap_pprof_add_labeled(vmheap_pprof *p,
			     const struct vmheap_pprof_frame *frames, size_t n,
			     const char *key, const char *value, int64_t count,
			     int64_t bytes)
{
	if (!n || !frames || !key != !value)
		return VMHEAP_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!frames[i].function || !frames[i].file)
			return VMHEAP_EINVAL;
	int64_t lk = key ? string_index(p, key) : 0;
	int64_t ls = key && lk >= 0 ? string_index(p, value) : 0;
	if (lk < 0 || ls < 0)
		return VMHEAP_ENOMEM;
	uint64_t *ids = calloc(n + 2, sizeof(*ids));
	size_t v;
	int added;

	if (!ids)
		return VMHEAP_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (location_id(p, &frames[i], &ids[i]) < 0)
			goto nomem;
	ids[n] = (uint64_t)lk;
	ids[n + 1] = (uint64_t)ls;
	if (p->nsamples == p->capsamples) {
		void *g = vmheap_array_grow(p->samples, &p->capsamples,
					    sizeof(*p->samples), 64);
		if (!g)
			goto nomem;
		p->samples = g;
	}
	if (lookup(&p->sample_map, ids, (n + 2) * sizeof(*ids), p->nsamples,
		   &v, &added) < 0)
		goto nomem;
	if (added) {
		p->samples[p->nsamples++] =
		    (struct sample){ids, n, lk, ls, count, bytes};
		return 0;
	}
	free(ids);
	p->samples[v].count += count;
	p->samples[v].bytes += bytes;
	return 0;
nomem:
	free(ids);
	return VMHEAP_ENOMEM;
}

int vmheap_pprof_add(vmheap_pprof *p, const struct vmheap_pprof_frame *frames,
		     size_t n, int64_t count, int64_t bytes)
{
	return vmheap_pprof_add_labeled(p, frames, n, NULL, NULL, count,
					bytes);
}

void vmheap_pprof_set_time(vmheap_pprof *p, int64_t time_nanos,
			   int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

int64_t vmheap_pprof_nanos(int64_t ms)
{
	const int64_t limit = INT64_MAX / 1000000;

	return ms > limit || ms < -limit ? 0 : ms * 1000000;
}

int vmheap_pprof_comment(vmheap_pprof *p, const char *text)
{
	int64_t i = string_index(p, text);

	if (i < 0)
		return VMHEAP_ENOMEM;
	ROOM(p->comments, p->ncomments, p->capcomments);
	p->comments[p->ncomments++] = i;
	return 0;
}

size_t vmheap_pprof_samples(const vmheap_pprof *p)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		k += p->samples[i].count || p->samples[i].bytes;
	return k;
}

/* --------------------------------------------------------------- write */

/* The protobuf-c messages of p, pointing into one allocation each. */
struct packed {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType types[2], *type_ptrs[2];
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
	int64_t *values;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
};

static void packed_release(struct packed *k)
{
	free(k->samples);
	free(k->sample_ptrs);
	free(k->labels);
	free(k->label_ptrs);
	free(k->values);
	free(k->locations);
	free(k->location_ptrs);
	free(k->lines);
	free(k->line_ptrs);
	free(k->functions);
	free(k->function_ptrs);
}

static int pack(const vmheap_pprof *p, struct packed *k)
{
	size_t ns = p->nsamples, nl = p->nlocations, nf = p->nfunctions;

	memset(k, 0, sizeof(*k));
	k->samples = calloc(ns + 1, sizeof(*k->samples));
	k->sample_ptrs = calloc(ns + 1, sizeof(*k->sample_ptrs));
	k->labels = calloc(ns + 1, sizeof(*k->labels));
	k->label_ptrs = calloc(ns + 1, sizeof(*k->label_ptrs));
	k->values = calloc(2 * ns + 1, sizeof(*k->values));
	k->locations = calloc(nl + 1, sizeof(*k->locations));
	k->location_ptrs = calloc(nl + 1, sizeof(*k->location_ptrs));
	k->lines = calloc(nl + 1, sizeof(*k->lines));
	k->line_ptrs = calloc(nl + 1, sizeof(*k->line_ptrs));
	k->functions = calloc(nf + 1, sizeof(*k->functions));
	k->function_ptrs = calloc(nf + 1, sizeof(*k->function_ptrs));
	if (!k->samples || !k->sample_ptrs || !k->labels || !k->label_ptrs ||
	    !k->values || !k->locations ||
	    !k->location_ptrs || !k->lines || !k->line_ptrs ||
	    !k->functions || !k->function_ptrs) {
		packed_release(k);
		return VMHEAP_ENOMEM;
	}
	Perftools__Profiles__Profile init = PERFTOOLS__PROFILES__PROFILE__INIT;
	k->prof = init;
	for (int t = 0; t < 2; t++) {
		Perftools__Profiles__ValueType vt =
		    PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		vt.type = 1 + 2 * t; /* "objects", "space" */
		vt.unit = 2 + 2 * t; /* "count", "bytes" */
		k->types[t] = vt;
		k->type_ptrs[t] = &k->types[t];
	}
	k->prof.n_sample_type = 2;
	k->prof.sample_type = k->type_ptrs;
	k->prof.default_sample_type = 3; /* "space" */
	size_t m = 0;
	for (size_t i = 0; i < ns; i++) {
		const struct sample *s = &p->samples[i];
		if (!s->count && !s->bytes)
			continue;
		Perftools__Profiles__Sample v = PERFTOOLS__PROFILES__SAMPLE__INIT;
		v.n_location_id = s->n;
		v.location_id = s->ids;
		k->values[2 * m] = s->count;
		k->values[2 * m + 1] = s->bytes;
		v.n_value = 2;
		v.value = &k->values[2 * m];
		if (s->label_key) {
			Perftools__Profiles__Label l =
			    PERFTOOLS__PROFILES__LABEL__INIT;
			l.key = s->label_key;
			l.str = s->label_str;
			k->labels[m] = l;
			k->label_ptrs[m] = &k->labels[m];
			v.n_label = 1;
			v.label = &k->label_ptrs[m];
		}
		k->samples[m] = v;
		k->sample_ptrs[m] = &k->samples[m];
		m++;
	}
	k->prof.n_sample = m;
	k->prof.sample = k->sample_ptrs;
	for (size_t i = 0; i < nl; i++) {
		Perftools__Profiles__Line ln = PERFTOOLS__PROFILES__LINE__INIT;
		ln.function_id = p->locations[i].function;
		ln.line = p->locations[i].line;
		k->lines[i] = ln;
		k->line_ptrs[i] = &k->lines[i];
		Perftools__Profiles__Location lo =
		    PERFTOOLS__PROFILES__LOCATION__INIT;
		lo.id = i + 1;
		lo.n_line = 1;
		lo.line = &k->line_ptrs[i];
		k->locations[i] = lo;
		k->location_ptrs[i] = &k->locations[i];
	}
	k->prof.n_location = nl;
	k->prof.location = k->location_ptrs;
	for (size_t i = 0; i < nf; i++) {
		Perftools__Profiles__Function f =
		    PERFTOOLS__PROFILES__FUNCTION__INIT;
		f.id = i + 1;
		f.name = f.system_name = p->functions[i].name;
		f.filename = p->functions[i].file;
		k->functions[i] = f;
		k->function_ptrs[i] = &k->functions[i];
	}
	k->prof.n_function = nf;
	k->prof.function = k->function_ptrs;
	k->prof.n_string_table = p->nstrings;
	k->prof.string_table = p->strings;
	k->prof.time_nanos = p->time_nanos;
	k->prof.duration_nanos = p->duration_nanos;
	k->prof.n_comment = p->ncomments;
	k->prof.comment = p->comments;
	return 0;
}

/* gzip `len` bytes of `in` onto out. */
static int gzip(const uint8_t *in, size_t len, struct vmheap_strbuf *out)
{
	z_stream z;
	unsigned char buf[16384];
	int rc;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper, not zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return VMHEAP_ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)in;
	do {
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;
		z.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			rc = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			if (rc == Z_STREAM_ERROR) {
				deflateEnd(&z);
				return VMHEAP_EIO;
			}
			vmheap_strbuf_add(out, (const char *)buf,
					  sizeof(buf) - z.avail_out);
		} while (z.avail_out == 0);
	} while (len);
	deflateEnd(&z);
	if (rc != Z_STREAM_END)
		return VMHEAP_EIO;
	return out->failed ? VMHEAP_ENOMEM : 0;
}

int vmheap_pprof_write(const vmheap_pprof *p, struct vmheap_strbuf *out)
{
	struct packed k;
	int rc = pack(p, &k);

	if (rc < 0) {
		out->failed = 1;
		return rc;
	}
	size_t len = perftools__profiles__profile__get_packed_size(&k.prof);
	uint8_t *raw = malloc(len ? len : 1);
	if (!raw) {
		packed_release(&k);
		out->failed = 1;
		return VMHEAP_ENOMEM;
	}
	perftools__profiles__profile__pack(&k.prof, raw);
	rc = gzip(raw, len, out);
	free(raw);
	packed_release(&k);
	return rc;
}

void vmheap_pprof_free(vmheap_pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->functions);
	free(p->locations);
	for (size_t i = 0; i < p->nsamples; i++)
		free(p->samples[i].ids);
	free(p->samples);
	free(p->comments);
	keymap_release(&p->string_map);
	keymap_release(&p->function_map);
	keymap_release(&p->location_map);
	keymap_release(&p->sample_map);
	free(p);
}
