/*
 * native.c - decoding the native section (FORMAT.md section 15): the
 * malloc tracker's sites and the modules their frames point into.  The
 * writer's side is vmheap_writer_add_native in writer.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap.h"
#include "format-internal.h"
#include "mpcursor-internal.h"

struct dec {
	struct mpc c;
	const uint8_t *start; /* payload[0] */
	uint64_t base;	      /* its file offset */
	char *err;
	size_t errlen;
	size_t leak_sites; /* elements of leaks' sites */
};

static int fail(struct dec *d, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct dec *d, int code, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (d->err && d->errlen)
		snprintf(d->err, d->errlen,
			 "malformed native section at byte offset %llu: %s",
			 (unsigned long long)(d->base +
					      (uint64_t)(d->c.p - d->start)),
			 what);
	return code;
}

/* A bin value (a build id). */
static int bin(struct mpc *c, const uint8_t **p, uint32_t *n)
{
	size_t left = (size_t)(c->end - c->p);
	uint32_t hdr;

	if (!left)
		return MPC_EEND;
	if (c->p[0] == 0xc4 && left >= 2) {
		*n = c->p[1];
		hdr = 2;
	} else if (c->p[0] == 0xc5 && left >= 3) {
		*n = mpc_be16(c->p + 1);
		hdr = 3;
	} else if (c->p[0] == 0xc6 && left >= 5) {
		*n = vmheap_get_be32(c->p + 1);
		hdr = 5;
	} else {
		return c->p[0] >= 0xc4 && c->p[0] <= 0xc6 ? MPC_EEND
							   : MPC_ETYPE;
	}
	if (left - hdr < *n)
		return MPC_EEND;
	*p = c->p + hdr;
	c->p += hdr + *n;
	return MPC_OK;
}

/* Skip the trailing elements a newer writer may append to an array. */
static int skip_extra(struct dec *d, uint32_t n, uint32_t known)
{
	for (uint32_t i = known; i < n; i++) {
		int rc = mpc_skip(&d->c);
		if (rc)
			return fail(d, VMHEAP_EFORMAT, "%s", mpc_strerror(rc));
	}
	return 0;
}

static int modules(struct dec *d, struct vmheap_native *n)
{
	uint32_t count, k;
	int rc;

	if (mpc_array(&d->c, &count))
		return fail(d, VMHEAP_EFORMAT, "modules is not an array");
	if (count > (size_t)(d->c.end - d->c.p))
		return fail(d, VMHEAP_EFORMAT, "%u modules in %zu bytes",
			    count, (size_t)(d->c.end - d->c.p));
	free(n->modules);
	n->modules = calloc(count ? count : 1, sizeof(*n->modules));
	if (!n->modules)
		return fail(d, VMHEAP_ENOMEM, "out of memory");
	n->nmodules = count;
	for (uint32_t i = 0; i < count; i++) {
		struct vmheap_dump_module *m = &n->modules[i];
		const char *path;
		const uint8_t *id;
		uint32_t plen, idlen;

		if (mpc_array(&d->c, &k) || k < 3)
			return fail(d, VMHEAP_EFORMAT,
				    "module %u is not an array of 3", i);
		if (mpc_str(&d->c, &path, &plen))
			return fail(d, VMHEAP_EFORMAT,
				    "module %u: path is not a str", i);
		if (plen > VMHEAP_MAX_STRING_BYTES)
			return fail(d, VMHEAP_ELIMIT,
				    "module %u: path of %u bytes", i, plen);
		if (bin(&d->c, &id, &idlen))
			return fail(d, VMHEAP_EFORMAT,
				    "module %u: build id is not a bin", i);
		if (idlen > VMHEAP_MAX_BUILD_ID_BYTES)
			return fail(d, VMHEAP_ELIMIT,
				    "module %u: build id of %u bytes", i,
				    idlen);
		if (mpc_uint(&d->c, &m->base))
			return fail(d, VMHEAP_EFORMAT,
				    "module %u: base is not a uint", i);
		m->path = path;
		m->path_len = plen;
		m->build_id = idlen ? id : NULL;
		m->build_id_len = idlen;
		if ((rc = skip_extra(d, k, 3)))
			return rc;
	}
	return 0;
}

/* Site elements 5 and 6: the VM's source file and line. */
static int vm_location(struct dec *d, struct vmheap_dump_stack *s, uint32_t i)
{
	const char *file;
	uint32_t len;

	if (mpc_str(&d->c, &file, &len))
		return fail(d, VMHEAP_EFORMAT, "site %u: VM file is not a str",
			    i);
	if (len > VMHEAP_MAX_STRING_BYTES)
		return fail(d, VMHEAP_ELIMIT, "site %u: VM file of %u bytes",
			    i, len);
	if (mpc_uint(&d->c, &s->vm_line))
		return fail(d, VMHEAP_EFORMAT,
			    "site %u: VM line is not a uint", i);
	s->vm_file = file;
	s->vm_file_len = len;
	return 0;
}

static int sites(struct dec *d, struct vmheap_native *n,
		 struct vmheap_dump_frame **pool)
{
	uint32_t count, k, nf;
	size_t used = 0, cap = 0;
	int rc;

	if (mpc_array(&d->c, &count))
		return fail(d, VMHEAP_EFORMAT, "sites is not an array");
	if (count > (size_t)(d->c.end - d->c.p))
		return fail(d, VMHEAP_EFORMAT, "%u sites in %zu bytes", count,
			    (size_t)(d->c.end - d->c.p));
	free(n->stacks);
	n->stacks = calloc(count ? count : 1, sizeof(*n->stacks));
	if (!n->stacks)
		return fail(d, VMHEAP_ENOMEM, "out of memory");
	n->nstacks = count;
	/* Frames go into one pool; the sites point into it at the end. */
	size_t *first = calloc(count ? count : 1, sizeof(*first));
	if (!first)
		return fail(d, VMHEAP_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < count; i++) {
		struct vmheap_dump_stack *s = &n->stacks[i];

		if (mpc_array(&d->c, &k) || k < 5) {
			rc = fail(d, VMHEAP_EFORMAT,
				  "site %u is not an array of 5", i);
			goto out;
		}
		if (mpc_uint(&d->c, &s->live_bytes) ||
		    mpc_uint(&d->c, &s->live_count) ||
		    mpc_uint(&d->c, &s->allocs) || mpc_uint(&d->c, &s->frees)) {
			rc = fail(d, VMHEAP_EFORMAT,
				  "site %u: a count is not a uint", i);
			goto out;
		}
		if (mpc_array(&d->c, &nf) || nf % 2) {
			rc = fail(d, VMHEAP_EFORMAT,
				  "site %u: frames is not an array of pairs",
				  i);
			goto out;
		}
		if (nf / 2 > VMHEAP_MAX_STACK_FRAMES) {
			rc = fail(d, VMHEAP_ELIMIT, "site %u: %u frames", i,
				  nf / 2);
			goto out;
		}
		first[i] = used;
		s->depth = nf / 2;
		for (uint32_t f = 0; f < nf / 2; f++) {
			struct vmheap_dump_frame fr;
			uint64_t m;

			if (used == cap) {
				struct vmheap_dump_frame *g = vmheap_array_grow(
				    *pool, &cap, sizeof(*g), 256);
				if (!g) {
					rc = fail(d, VMHEAP_ENOMEM,
						  "out of memory");
					goto out;
				}
				*pool = g;
			}
			if (d->c.p < d->c.end && d->c.p[0] == 0xc0) {
				d->c.p++; /* nil: no module */
				fr.module = VMHEAP_NO_MODULE;
			} else if (mpc_uint(&d->c, &m) || m >= UINT32_MAX) {
				rc = fail(d, VMHEAP_EFORMAT,
					  "site %u frame %u: module is not "
					  "nil or a uint",
					  i, f);
				goto out;
			} else {
				fr.module = (uint32_t)m;
			}
			if (mpc_uint(&d->c, &fr.offset)) {
				rc = fail(d, VMHEAP_EFORMAT,
					  "site %u frame %u: offset is not a "
					  "uint",
					  i, f);
				goto out;
			}
			(*pool)[used++] = fr;
		}
		if (k >= 7 && (rc = vm_location(d, s, i)))
			goto out;
		if ((rc = skip_extra(d, k, k >= 7 ? 7 : 5)))
			goto out;
	}
	for (uint32_t i = 0; i < count; i++)
		n->stacks[i].frames = *pool ? *pool + first[i] : NULL;
	rc = 0;
out:
	free(first);
	return rc;
}

/* The `leaks` key: a map (FORMAT.md section 15). */
static int leaks(struct dec *d, struct vmheap_native *n)
{
	uint32_t keys, count, k;
	struct vmheap_dump_leak_scan *l;
	struct vmheap_dump_leaks *c = NULL;
	int have_sites = 0;

	if (mpc_map(&d->c, &keys))
		return fail(d, VMHEAP_EFORMAT, "leaks is not a map");
	if (n->leaks) { /* a repeated key: the last counts */
		free((void *)n->leaks->stacks);
		free(n->leaks);
	}
	l = n->leaks = calloc(1, sizeof(*l));
	if (!l)
		return fail(d, VMHEAP_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < keys; i++) {
		const char *key;
		uint32_t klen;
		uint64_t *v = NULL;

		if (mpc_str(&d->c, &key, &klen))
			return fail(d, VMHEAP_EFORMAT, "a leaks key is not a str");
#define KEY(s) (klen == sizeof(s) - 1 && !memcmp(key, s, klen))
		if (KEY("blocks"))
			v = &l->blocks;
		else if (KEY("root_bytes"))
			v = &l->root_bytes;
		else if (KEY("skipped_mappings"))
			v = &l->skipped_mappings;
		else if (KEY("skipped_bytes"))
			v = &l->skipped_bytes;
		else if (KEY("scan_ns"))
			v = &l->scan_ns;
		else if (KEY("memory_bytes"))
			v = &l->memory_bytes;
		if (v) {
			if (mpc_uint(&d->c, v))
				return fail(d, VMHEAP_EFORMAT,
					    "leaks %.*s is not a uint",
					    (int)klen, key);
			continue;
		}
		if (!KEY("sites")) {
			int rc = mpc_skip(&d->c);
			if (rc)
				return fail(d, VMHEAP_EFORMAT, "%s",
					    mpc_strerror(rc));
			continue;
		}
#undef KEY
		if (mpc_array(&d->c, &count))
			return fail(d, VMHEAP_EFORMAT,
				    "leaks sites is not an array");
		if (count > (size_t)(d->c.end - d->c.p))
			return fail(d, VMHEAP_EFORMAT,
				    "%u leak counts in %zu bytes", count,
				    (size_t)(d->c.end - d->c.p));
		free((void *)l->stacks);
		l->stacks = c = calloc(count ? count : 1, sizeof(*c));
		if (!c)
			return fail(d, VMHEAP_ENOMEM, "out of memory");
		for (uint32_t j = 0; j < count; j++) {
			uint64_t *f = &c[j].leaked_count;
			if (mpc_array(&d->c, &k) || k < 8)
				return fail(d, VMHEAP_EFORMAT,
					    "leak counts %u are not an array "
					    "of 8", j);
			for (int e = 0; e < 8; e++)
				if (mpc_uint(&d->c, &f[e]))
					return fail(d, VMHEAP_EFORMAT,
						    "leak counts %u: element "
						    "%d is not a uint", j, e);
			int rc = skip_extra(d, k, 8);
			if (rc)
				return rc;
		}
		have_sites = count;
		if (!have_sites)
			have_sites = -1; /* present, empty */
	}
	if (!have_sites)
		return fail(d, VMHEAP_EFORMAT, "leaks has no sites key");
	/* its count is checked against the sites' once both are read */
	d->leak_sites = have_sites < 0 ? 0 : (size_t)have_sites;
	return 0;
}

/* What a decoded section owns besides its public arrays: the public part
 * comes first, so that vmheap_native_free() finds the rest. */
struct native_section {
	struct vmheap_native pub;
	void *payload_copy; /* what the strings and build ids point into */
	void *frame_pool;   /* what the sites' frames point into */
};

int vmheap_native_decode(const uint8_t *payload, size_t len, uint64_t offset,
			 struct vmheap_native **out, char *err, size_t errlen)
{
	struct native_section *ns;
	struct dec d = {{payload, payload + len}, payload,
			offset + VMHEAP_SECTION_HEADER_LEN, err, errlen, 0};
	struct vmheap_dump_frame *pool = NULL;
	struct vmheap_native *n;
	uint32_t keys;
	int rc = 0, have_modules = 0, have_sites = 0;

	if (!out || (!payload && len))
		return VMHEAP_EINVAL;
	*out = NULL;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return fail(&d, VMHEAP_ENOMEM, "out of memory");
	n = &ns->pub;
	n->offset = offset;
	if (mpc_map(&d.c, &keys)) {
		rc = fail(&d, VMHEAP_EFORMAT, "its payload is not a map");
		goto bad;
	}
	for (uint32_t i = 0; i < keys; i++) {
		const char *key;
		uint32_t klen;

		if (mpc_str(&d.c, &key, &klen)) {
			rc = fail(&d, VMHEAP_EFORMAT, "a key is not a str");
			goto bad;
		}
		if (klen == 7 && !memcmp(key, "modules", 7)) {
			if ((rc = modules(&d, n)))
				goto bad;
			have_modules = 1;
		} else if (klen == 5 && !memcmp(key, "sites", 5)) {
			free(pool);
			pool = NULL;
			if ((rc = sites(&d, n, &pool)))
				goto bad;
			have_sites = 1;
		} else if (klen == 5 && !memcmp(key, "leaks", 5)) {
			if ((rc = leaks(&d, n)))
				goto bad;
		} else if ((rc = mpc_skip(&d.c))) {
			rc = fail(&d, VMHEAP_EFORMAT, "%s", mpc_strerror(rc));
			goto bad;
		}
	}
	if (d.c.p != d.c.end) {
		rc = fail(&d, VMHEAP_EFORMAT, "%zu bytes follow its map",
			  (size_t)(d.c.end - d.c.p));
		goto bad;
	}
	if (!have_modules || !have_sites) {
		rc = fail(&d, VMHEAP_EFORMAT, "no %s key",
			  have_modules ? "sites" : "modules");
		goto bad;
	}
	if (n->leaks && d.leak_sites != n->nstacks) {
		d.c.p = d.start; /* the section as a whole */
		rc = fail(&d, VMHEAP_EFORMAT, "%zu leak counts for %zu sites",
			  d.leak_sites, n->nstacks);
		goto bad;
	}
	for (size_t i = 0; i < n->nstacks; i++)
		for (size_t f = 0; f < n->stacks[i].depth; f++) {
			uint32_t m = n->stacks[i].frames[f].module;
			if (m != VMHEAP_NO_MODULE && m >= n->nmodules) {
				d.c.p = d.start; /* the section as a whole */
				rc = fail(&d, VMHEAP_EFORMAT,
					  "site %zu frame %zu names module "
					  "%u of %zu",
					  i, f, m, n->nmodules);
				goto bad;
			}
		}
	/* The strings and build ids point into the caller's payload: copy
	 * that, so the result stands alone. */
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy) {
		rc = fail(&d, VMHEAP_ENOMEM, "out of memory");
		goto bad;
	}
	memcpy(copy, payload, len);
	for (size_t i = 0; i < n->nmodules; i++) {
		struct vmheap_dump_module *m = &n->modules[i];
		m->path = (const char *)copy + ((const uint8_t *)m->path - payload);
		if (m->build_id)
			m->build_id = copy + (m->build_id - payload);
	}
	for (size_t i = 0; i < n->nstacks; i++)
		if (n->stacks[i].vm_file)
			n->stacks[i].vm_file =
			    (const char *)copy +
			    ((const uint8_t *)n->stacks[i].vm_file - payload);
	ns->payload_copy = copy;
	ns->frame_pool = pool;
	*out = n;
	return 0;
bad:
	free(pool);
	ns->frame_pool = NULL;
	vmheap_native_free(n);
	return rc;
}

void vmheap_native_free(struct vmheap_native *n)
{
	struct native_section *ns = (struct native_section *)n;

	if (!n)
		return;
	free(n->modules);
	free(n->stacks);
	free(ns->frame_pool);
	free(ns->payload_copy);
	if (n->leaks)
		free((void *)n->leaks->stacks);
	free(n->leaks);
	free(n);
}
