/*
 * got.c - routing a running process's allocator calls to the tracker,
 * for a tracker that was not preloaded (the agent dlopen's
 * libvmheap-malloc-attach.so when `set config.native.track true` comes to
 * a process started without vmheap-run: attached, or started with only
 * RUBYOPT=-rvmheap_agent).
 *
 * Every call a module makes to malloc and its family goes through a slot
 * that the loader filled with glibc's address: a GOT entry named by an
 * R_X86_64_JUMP_SLOT relocation (a PLT call), R_X86_64_GLOB_DAT (a call
 * through the GOT, -fno-plt, or the function's address taken; glibc's own
 * internal calls to malloc and free are of this kind) or R_X86_64_64 (an
 * address in data).  For each loaded module but ld.so and the tracker,
 * vmheap_native_route reads its dynamic section's relocations (DT_JMPREL,
 * DT_RELA past the DT_RELACOUNT relative ones), and a slot of one of the
 * wrapped functions that holds glibc's address (or, for a lazy PLT slot
 * not yet bound, an address inside the module) gets the tracker's entry
 * point instead: one aligned 8-byte store, which a thread calling through
 * the slot sees whole, old or new.  A slot inside the module's
 * PT_GNU_RELRO pages (read-only once the loader relocated it: BIND_NOW
 * libraries like libruby and libc keep their whole GOT there) is made
 * writable for the store and read-only again.  A slot holding anything
 * else (another allocator's malloc) is left alone.
 *
 * Which modules are safe to write: a module is written only while the
 * tracker holds a reference to it (dlopen RTLD_NOLOAD by its name, which
 * waits for a dlopen under way in another thread: so it is relocated and
 * its RELRO applied, and cannot be unmapped during the write), from
 * inside dl_iterate_phdr.  A module the loader cannot give back by name
 * (being unloaded, another namespace: dlmopen) is skipped.
 *
 * Modules loaded later: `dlopen` is routed too, to a wrapper that routes
 * again after each successful dlopen, so a Ruby `require` of a C
 * extension is routed before its Init_ function runs.  The wrapper's
 * dlopen runs from the tracker, so the loader takes the tracker for the
 * caller: a bare name would be searched without the calling module's
 * DT_RPATH/DT_RUNPATH.  So a module that has either keeps glibc's dlopen,
 * and what it loads is routed at the next vmheap_native_route (the agent
 * calls it before each snapshot).  dlclose is routed too (the stack
 * walker's rules are forgotten after it, as when preloaded).
 *
 * Allocations need no other care: the tracker's blocks are glibc's
 * (native/README.md), so a block allocated before the routing, or through
 * a slot not routed, is freed by the tracker as an unknown block, and one
 * the tracker counted and glibc's free released behind its back leaves a
 * record that live.c replaces when the address comes back.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "native-internal.h"

#define MAX_MODULES 1024
#define NAMES_BYTES (512u * 1024u)

/* The functions routed: name, the tracker's entry point, glibc's. */
struct route {
	const char *name;
	void *ours;
	void *theirs;
	int dl; /* dlopen: only in modules without RPATH/RUNPATH */
};

static void *routed_dlopen(const char *file, int mode);

static struct route routes[] = {
    {"malloc", (void *)native_malloc, NULL, 0},
    {"calloc", (void *)native_calloc, NULL, 0},
    {"realloc", (void *)native_realloc, NULL, 0},
    {"reallocarray", (void *)native_reallocarray, NULL, 0},
    {"free", (void *)native_free, NULL, 0},
    {"memalign", (void *)native_memalign, NULL, 0},
    {"valloc", (void *)native_valloc, NULL, 0},
    {"pvalloc", (void *)native_pvalloc, NULL, 0},
    {"aligned_alloc", (void *)native_aligned_alloc, NULL, 0},
    {"posix_memalign", (void *)native_posix_memalign, NULL, 0},
    {"dlclose", (void *)native_dlclose, NULL, 0},
    {"dlopen", (void *)routed_dlopen, NULL, 1},
};
#define NROUTES (sizeof routes / sizeof *routes)

static pthread_mutex_t route_lock = PTHREAD_MUTEX_INITIALIZER;
static void *(*libc_dlopen)(const char *, int);
static int (*libc_dlclose)(void *);

/* One module found by the first walk, then held by a reference. */
struct module {
	uintptr_t addr;
	const char *name; /* a copy, in names */
	void *handle;
};

static struct module *modules;
static char *names;
static uintptr_t self_addr, ldso_addr;

/* ---------------------------------------------------- the relocations */

struct dyn {
	const ElfW(Sym) * symtab;
	const char *strtab;
	size_t strsz;
	const ElfW(Rela) * jmprel, *rela;
	size_t jmprelsz, relasz, relacount;
	int pltrel_rela, has_path;
	uintptr_t relro_lo, relro_hi; /* the pages the loader made read-only */
};

/* A d_ptr of the loaded dynamic section: glibc adds the load address to
 * most of them in place; where it could not (a read-only dynamic
 * section) they are still file addresses. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) v)
{
	return v < base ? base + v : v;
}

static int read_dyn(const struct dl_phdr_info *info, struct dyn *d)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t base = info->dlpi_addr, page = (uintptr_t)getpagesize();

	memset(d, 0, sizeof *d);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			d->relro_lo = (base + ph->p_vaddr) & ~(page - 1);
			d->relro_hi =
			    (base + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
		}
	}
	if (dyn == NULL)
		return -1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab =
			    (const ElfW(Sym) *)dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab =
			    (const char *)dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			d->strsz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			d->jmprel =
			    (const ElfW(Rela) *)dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->jmprelsz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			d->pltrel_rela = dyn->d_un.d_val == DT_RELA;
			break;
		case DT_RELA:
			d->rela =
			    (const ElfW(Rela) *)dyn_ptr(base, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->relasz = dyn->d_un.d_val;
			break;
		case DT_RELACOUNT:
			d->relacount = dyn->d_un.d_val;
			break;
		case DT_RPATH:
		case DT_RUNPATH:
			d->has_path = 1;
			break;
		}
	}
	if (d->symtab == NULL || d->strtab == NULL)
		return -1;
	if (!d->pltrel_rela)
		d->jmprel = NULL; /* x86-64 has RELA only */
	return 0;
}

/* The module's loaded range (its PT_LOAD segments). */
static void load_range(const struct dl_phdr_info *info, uintptr_t *lo,
		       uintptr_t *hi)
{
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < *lo)
			*lo = a;
		if (a + ph->p_memsz > *hi)
			*hi = a + ph->p_memsz;
	}
}

/* Store v at slot; a slot in the read-only RELRO pages is made writable
 * for the store.  0, or -1 when the page's protection cannot change. */
static int store(const struct dyn *d, uintptr_t slot, uintptr_t v)
{
	uintptr_t page = slot & ~((uintptr_t)getpagesize() - 1);
	int ro = slot >= d->relro_lo && slot < d->relro_hi;

	if (ro && mprotect((void *)page, (size_t)getpagesize(),
			   PROT_READ | PROT_WRITE) != 0)
		return -1;
	__atomic_store_n((uintptr_t *)slot, v, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)page, (size_t)getpagesize(), PROT_READ);
	return 0;
}

/* The route for symbol `name`, or NULL. */
static const struct route *route_of(const char *name)
{
	/* every routed name starts with one of these letters */
	if (strchr("mcrfvpad", name[0]) == NULL)
		return NULL;
	for (size_t i = 0; i < NROUTES; i++)
		if (strcmp(name, routes[i].name) == 0)
			return &routes[i];
	return NULL;
}

static void route_relocs(const struct dl_phdr_info *info, const struct dyn *d,
			 const ElfW(Rela) * r, size_t n,
			 vmheap_native_route_info *out)
{
	uintptr_t lo, hi;

	load_range(info, &lo, &hi);
	for (size_t i = 0; i < n; i++) {
		unsigned type = ELF64_R_TYPE(r[i].r_info);
		size_t sym = ELF64_R_SYM(r[i].r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
		    type != R_X86_64_64)
			continue;
		/* glibc's own relocations name the functions it defines */
		if (sym == 0 || d->symtab[sym].st_name >= d->strsz)
			continue;
		const struct route *rt =
		    route_of(d->strtab + d->symtab[sym].st_name);
		if (rt == NULL || rt->theirs == NULL ||
		    (rt->dl && d->has_path) ||
		    (type == R_X86_64_64 && r[i].r_addend != 0))
			continue;
		uintptr_t slot = info->dlpi_addr + r[i].r_offset;
		if (slot < lo || slot + sizeof(uintptr_t) > hi)
			continue;
		uintptr_t v =
		    __atomic_load_n((uintptr_t *)slot, __ATOMIC_ACQUIRE);
		if (v == (uintptr_t)rt->ours) {
			out->routed++;
			continue;
		}
		/* glibc's; or a lazy PLT slot still at its own stub */
		if (v != (uintptr_t)rt->theirs &&
		    !(type == R_X86_64_JUMP_SLOT && v >= lo && v < hi))
			continue;
		if (store(d, slot, (uintptr_t)rt->ours) == 0) {
			out->written++;
			out->routed++;
		} else {
			out->failed++;
		}
	}
}

/* ------------------------------------------------------------- walks */

struct walk {
	size_t n, used;
	vmheap_native_route_info *out;
};

/* First walk: every module's address and a copy of its name. */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
	size_t len = strlen(name) + 1;

	(void)size;
	if (w->n == MAX_MODULES || w->used + len > NAMES_BYTES) {
		w->out->skipped++;
		return 0;
	}
	memcpy(names + w->used, name, len);
	modules[w->n++] =
	    (struct module){info->dlpi_addr, names + w->used, NULL};
	w->used += len;
	return 0;
}

/* Second walk: route each module that is held. */
static int route_held(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	struct dyn d;

	(void)size;
	for (size_t i = 0; i < w->n; i++) {
		if (modules[i].handle == NULL ||
		    modules[i].addr != info->dlpi_addr ||
		    strcmp(modules[i].name,
			   info->dlpi_name != NULL ? info->dlpi_name : "") != 0)
			continue;
		if (read_dyn(info, &d) != 0)
			return 0;
		w->out->modules++;
		if (d.jmprel != NULL)
			route_relocs(info, &d, d.jmprel,
				     d.jmprelsz / sizeof(ElfW(Rela)), w->out);
		if (d.rela != NULL) {
			size_t n = d.relasz / sizeof(ElfW(Rela));
			size_t skip = d.relacount < n ? d.relacount : n;
			route_relocs(info, &d, d.rela + skip, n - skip, w->out);
		}
		return 0;
	}
	return 0;
}

/* The load address of the module holding `fn`, 0 when none. */
static uintptr_t module_of(const void *fn)
{
	Dl_info info;
	struct link_map *lm = NULL;

	if (!dladdr1(fn, &info, (void **)&lm, RTLD_DL_LINKMAP) || lm == NULL)
		return 0;
	return lm->l_addr;
}

/* Once: glibc's definitions, the modules to leave alone, the tables.  0,
 * or VMHEAP_ESTATE / VMHEAP_ENOMEM with out->why. */
static int setup(vmheap_native_route_info *out)
{
	if (modules != NULL)
		return 0;
	libc_dlopen = (void *(*)(const char *, int))native_libc_sym("dlopen");
	libc_dlclose = (int (*)(void *))native_libc_sym("dlclose");
	if (libc_dlopen == NULL || libc_dlclose == NULL) {
		out->why = "glibc's dlopen cannot be found";
		return VMHEAP_ESTATE;
	}
	for (size_t i = 0; i < NROUTES; i++)
		routes[i].theirs = native_libc_sym(routes[i].name);
	/* The process's malloc must be glibc's: the tracker hands every
	 * call to glibc, and a block of another allocator given to glibc's
	 * free would break the heap. */
	if (routes[0].theirs == NULL ||
	    dlsym(RTLD_DEFAULT, "malloc") != routes[0].theirs ||
	    dlsym(RTLD_DEFAULT, "free") != routes[4].theirs) {
		out->why = "this process's malloc is not glibc's (another "
			   "allocator is linked or preloaded); the tracker "
			   "wraps glibc's only";
		return VMHEAP_ESTATE;
	}
	/* ld.so allocates through pointers to glibc's malloc and free that
	 * it set itself (no relocations of theirs): left as it is */
	self_addr = module_of((const void *)native_malloc);
	void *r_debug = dlsym(RTLD_DEFAULT, "_r_debug");
	ldso_addr = r_debug != NULL ? module_of(r_debug) : 0;
	struct module *m = native_pages(MAX_MODULES * sizeof *m);
	names = native_pages(NAMES_BYTES);
	if (m == NULL || names == NULL) {
		out->why = "no memory for the module list";
		return VMHEAP_ENOMEM;
	}
	modules = m;
	return 0;
}

static void route_all(vmheap_native_route_info *out)
{
	struct timespec t0, t1;
	struct walk w = {0, 0, out};

	clock_gettime(CLOCK_MONOTONIC, &t0);
	dl_iterate_phdr(collect, &w);
	for (size_t i = 0; i < w.n; i++) {
		struct module *m = &modules[i];
		m->handle = NULL;
		if (m->addr == self_addr || m->addr == ldso_addr) {
			out->skipped++;
			continue;
		}
		if (m->name[0] == '\0') { /* the program: relocated first */
			m->handle = libc_dlopen(NULL, RTLD_LAZY);
		} else {
			m->handle =
			    libc_dlopen(m->name, RTLD_LAZY | RTLD_NOLOAD);
		}
		struct link_map *lm = NULL;
		if (m->handle != NULL &&
		    (dlinfo(m->handle, RTLD_DI_LINKMAP, &lm) != 0 ||
		     lm == NULL || lm->l_addr != m->addr)) {
			libc_dlclose(m->handle);
			m->handle = NULL;
		}
		if (m->handle == NULL)
			out->skipped++;
	}
	dl_iterate_phdr(route_held, &w);
	for (size_t i = 0; i < w.n; i++)
		if (modules[i].handle != NULL)
			libc_dlclose(modules[i].handle);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->scan_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
		       (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
}

/* dlopen, routed: what it loaded is routed before the caller runs any of
 * it.  A dlopen that a constructor makes while another thread routes
 * (holding route_lock, and waiting for the loader's lock this thread
 * holds) does not wait: the next route picks it up. */
static void *routed_dlopen(const char *file, int mode)
{
	void *h = libc_dlopen(file, mode);
	vmheap_native_route_info info;

	if (h != NULL && !(mode & RTLD_NOLOAD) &&
	    pthread_mutex_trylock(&route_lock) == 0) {
		memset(&info, 0, sizeof info);
		route_all(&info);
		pthread_mutex_unlock(&route_lock);
	}
	return h;
}

VMHEAP_EXPORT int vmheap_native_route(vmheap_native_route_info *info)
{
	vmheap_native_route_info local;
	int rc = 0;

	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof *info);
	if (native_preloaded()) {
		info->preloaded = 1;
		return 0;
	}
	pthread_mutex_lock(&route_lock);
	rc = setup(info);
	if (rc == 0)
		route_all(info);
	pthread_mutex_unlock(&route_lock);
	return rc;
}
