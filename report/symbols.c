/*
 * symbols.c - naming native frames offline: (module file, offset) to
 * "function (file:line)" with elfutils' libdw, which reads the module's
 * symbol table and, where there is debug info (in the file, or found by
 * build id under /usr/lib/debug), its line table.  One Dwfl per module,
 * the module placed at address 0 so that a frame's offset is its address.
 * A file whose build id differs from the dump's is not trusted.
 */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmheap_report.h"

struct sym_module {
	char *path;
	Dwfl *dwfl;      /* NULL: cannot be read */
	Dwfl_Module *mod;
	const char *why; /* when dwfl is NULL or the build id differs */
	int runtime;     /* exports ruby_xmalloc: -1 not yet looked */
};

/* A frame named before: what libdw said for its module and address (the
 * names stay valid as long as the module's Dwfl).  A report names the
 * same return address in many stacks (MRI's ruby_xmalloc and its callers
 * in thousands), and libdw's dwfl_module_addrname searches the whole
 * symbol table each time: a Ruby process's leak report spent 3.3 s in it
 * for 3,852 sites. */
struct sym_seen {
	uint64_t pc;
	size_t module; /* index in m + 1; 0: an empty place */
	const char *fn, *file;
	int line;
};

struct vmheap_symbolizer {
	struct sym_module *m;
	size_t n, cap;
	struct sym_seen *seen; /* open addressing, seen_cap a power of 2 */
	size_t seen_n, seen_cap;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

vmheap_symbolizer *vmheap_symbolizer_new(void)
{
	return calloc(1, sizeof(vmheap_symbolizer));
}

void vmheap_symbolizer_free(vmheap_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (s->m[i].dwfl)
			dwfl_end(s->m[i].dwfl);
		free(s->m[i].path);
	}
	free(s->m);
	free(s->seen);
	free(s);
}

static size_t seen_home(const vmheap_symbolizer *s, size_t module, uint64_t pc)
{
	return (size_t)(((pc ^ ((uint64_t)module << 48)) *
			 0x9e3779b97f4a7c15ull) >>
			32) &
	       (s->seen_cap - 1);
}

/* The frame named before at (module, pc), or NULL. */
static const struct sym_seen *seen_find(const vmheap_symbolizer *s,
					size_t module, uint64_t pc)
{
	if (s->seen_cap == 0)
		return NULL;
	for (size_t j = seen_home(s, module, pc);;
	     j = (j + 1) & (s->seen_cap - 1)) {
		const struct sym_seen *e = &s->seen[j];
		if (e->module == 0)
			return NULL;
		if (e->module == module && e->pc == pc)
			return e;
	}
}

static void seen_put(vmheap_symbolizer *s, const struct sym_seen *v)
{
	if ((s->seen_n + 1) * 2 > s->seen_cap) {
		size_t cap = s->seen_cap ? s->seen_cap * 2 : 1024;
		struct sym_seen *t = calloc(cap, sizeof(*t)), *old = s->seen;
		size_t oldcap = s->seen_cap;
		if (!t)
			return; /* not remembered: named again next time */
		s->seen = t;
		s->seen_cap = cap;
		for (size_t j = 0; j < oldcap; j++)
			if (old[j].module != 0) {
				size_t k =
				    seen_home(s, old[j].module, old[j].pc);
				while (t[k].module != 0)
					k = (k + 1) & (cap - 1);
				t[k] = old[j];
			}
		free(old);
	}
	size_t k = seen_home(s, v->module, v->pc);
	while (s->seen[k].module != 0)
		k = (k + 1) & (s->seen_cap - 1);
	s->seen[k] = *v;
	s->seen_n++;
}

static struct sym_module *load(vmheap_symbolizer *s,
			       const struct vmheap_dump_module *dm)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->m[i].path) == dm->path_len &&
		    !memcmp(s->m[i].path, dm->path, dm->path_len))
			return &s->m[i];
	if (s->n == s->cap) {
		struct sym_module *g =
		    vmheap_array_grow(s->m, &s->cap, sizeof(*g), 16);
		if (!g)
			return NULL;
		s->m = g;
	}
	struct sym_module *m = &s->m[s->n];
	memset(m, 0, sizeof(*m));
	m->runtime = -1;
	m->path = strndup(dm->path, dm->path_len);
	if (!m->path)
		return NULL;
	s->n++;
	/* a path from the dump: a FIFO or a device must not block the
	 * open, nor anything but a regular file be read */
	int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0) {
		m->why = "missing";
		return m;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		m->why = "not a regular file";
		return m;
	}
	m->dwfl = dwfl_begin(&callbacks);
	if (m->dwfl)
		m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, fd, 0,
					 false);
	if (!m->dwfl || !m->mod) {
		close(fd);
		if (m->dwfl)
			dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->why = "not an ELF file";
		return m;
	}
	dwfl_report_end(m->dwfl, NULL, NULL);
	const unsigned char *id;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(m->mod, &id, &vaddr);
	if (dm->build_id_len &&
	    (len != (int)dm->build_id_len ||
	     memcmp(id, dm->build_id, dm->build_id_len) != 0))
		m->why = "other build";
	return m;
}

/* The base name of a path. */
static const char *base(const char *path, size_t len, size_t *blen)
{
	const char *p = path + len;
	while (p > path && p[-1] != '/')
		p--;
	*blen = len - (size_t)(p - path);
	return p;
}

/* Does module m define the symbol `name` (MRI's allocator)?  Looked up
 * once per module. */
static int defines(struct sym_module *m, const char *name)
{
	if (m->runtime >= 0)
		return m->runtime;
	m->runtime = 0;
	int n = dwfl_module_getsymtab(m->mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *sn = dwfl_module_getsym(m->mod, i, &sym, NULL);
		if (sn && sym.st_shndx != SHN_UNDEF &&
		    GELF_ST_TYPE(sym.st_info) == STT_FUNC && !strcmp(sn, name)) {
			m->runtime = 1;
			break;
		}
	}
	return m->runtime;
}

void vmheap_symbolize_frame(vmheap_symbolizer *s,
			    const struct vmheap_native *n,
			    const struct vmheap_dump_frame *f,
			    struct vmheap_symbol *out)
{
	memset(out, 0, sizeof(*out));
	if (f->module == VMHEAP_NO_MODULE || f->module >= n->nmodules) {
		snprintf(out->function, sizeof(out->function), "0x%llx",
			 (unsigned long long)f->offset);
		return;
	}
	const struct vmheap_dump_module *dm = &n->modules[f->module];
	size_t blen;
	const char *b = base(dm->path, dm->path_len, &blen);
	struct sym_module *m = load(s, dm);
	if (!m || !m->dwfl || (m->why && !strcmp(m->why, "other build"))) {
		snprintf(out->function, sizeof(out->function),
			 "%.*s+0x%llx%s%s%s", (int)blen, b,
			 (unsigned long long)f->offset,
			 m && m->why ? " (" : "", m && m->why ? m->why : "",
			 m && m->why ? ")" : "");
		snprintf(out->module, sizeof(out->module), "%.*s", (int)blen,
			 b);
		return;
	}
	snprintf(out->module, sizeof(out->module), "%.*s", (int)blen, b);
	out->runtime = defines(m, "ruby_xmalloc");
	/* A return address: the call is the byte before it. */
	Dwarf_Addr pc = f->offset ? f->offset - 1 : 0;
	size_t module = (size_t)(m - s->m) + 1;
	const struct sym_seen *e = seen_find(s, module, pc);
	struct sym_seen v = {pc, module, NULL, NULL, 0};
	if (e) {
		v = *e;
	} else {
		v.fn = dwfl_module_addrname(m->mod, pc);
		Dwfl_Line *line = dwfl_module_getsrc(m->mod, pc);
		v.file =
		    line ? dwfl_lineinfo(line, NULL, &v.line, NULL, NULL, NULL)
			 : NULL;
		if (v.file) {
			const char *slash = strrchr(v.file, '/');
			v.file = slash ? slash + 1 : v.file;
		}
		seen_put(s, &v);
	}
	const char *fn = v.fn, *file = v.file;
	int lineno = v.line;
	if (fn) {
		out->named = 1;
		snprintf(out->function, sizeof(out->function), "%s", fn);
	} else
		snprintf(out->function, sizeof(out->function), "%.*s+0x%llx",
			 (int)blen, b, (unsigned long long)f->offset);
	if (fn && file) {
		snprintf(out->file, sizeof(out->file), "%s", file);
		out->line = lineno;
	}
}

void vmheap_symbolize(vmheap_symbolizer *s,
		      const struct vmheap_native *n,
		      const struct vmheap_dump_frame *f, char *buf, size_t len)
{
	struct vmheap_symbol y;

	vmheap_symbolize_frame(s, n, f, &y);
	if (y.named && y.file[0])
		snprintf(buf, len, "%s (%s:%d)", y.function, y.file, y.line);
	else if (y.named)
		snprintf(buf, len, "%s (%s)", y.function, y.module);
	else
		snprintf(buf, len, "%s", y.function);
}
