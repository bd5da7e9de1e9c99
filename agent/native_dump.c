/*
 * native_dump.c - the native section of a dump (FORMAT.md section 15):
 * while the malloc tracker tracks, a dump carries its live native stacks and
 * the loaded modules.  The snapshot is taken before the heap walk (which
 * allocates, and in a forked child collects garbage), the section is
 * written after it.  In a forked child the snapshot comes from the
 * tracker's leak scan (vmheap_native_scan), first thing, before this
 * file's own allocations: each stack then carries how many of its blocks
 * are leaked, indirectly or possibly leaked, or reachable.
 */
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_native.h"

/* Stacks kept in a dump: the largest by live bytes (the section limit). */
#define MAX_DUMP_STACKS 100000

struct agent_native_snap {
	vmheap_native_stack *stacks; /* mmap'd: not a stack of its own */
	size_t nstacks, stacks_bytes;
	vmheap_native_leaks *leaks; /* parallel to stacks, or NULL; mmap'd */
	size_t leaks_bytes;
	vmheap_native_scan_info scan;
	struct vmheap_dump_module *mods;
	uint64_t *lo, *hi; /* each module's code range */
	size_t nmods, cap;
	char exe[PATH_MAX];
};

static int by_live(const void *x, const void *y)
{
	const vmheap_native_stack *a = x, *b = y;

	return a->live_bytes < b->live_bytes ? 1
	       : a->live_bytes > b->live_bytes ? -1 : 0;
}

static int add_module(const vmheap_native_module *m, void *arg)
{
	struct agent_native_snap *s = arg;
	const char *path = m->path;

	if (m->text_hi == 0)
		return 0; /* no code: no frame can point into it */
	if (s->nmods == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct vmheap_dump_module *g = realloc(s->mods, cap * sizeof(*g));
		uint64_t *lo = g ? realloc(s->lo, cap * sizeof(*lo)) : NULL;
		uint64_t *hi = lo ? realloc(s->hi, cap * sizeof(*hi)) : NULL;
		if (g)
			s->mods = g;
		if (lo)
			s->lo = lo;
		if (!hi)
			return -1;
		s->hi = hi;
		s->cap = cap;
	}
	if (path[0] == '\0' && s->nmods == 0)
		path = s->exe; /* the main program */
	char *copy = strdup(path);
	uint8_t *id = m->build_id_len ? malloc(m->build_id_len) : NULL;
	if (!copy || (m->build_id_len && !id)) {
		free(copy);
		free(id);
		return -1;
	}
	if (id)
		memcpy(id, m->build_id, m->build_id_len);
	s->mods[s->nmods] = (struct vmheap_dump_module){
		copy, strlen(copy), id,
		m->build_id_len > VMHEAP_MAX_BUILD_ID_BYTES
			? VMHEAP_MAX_BUILD_ID_BYTES : m->build_id_len,
		m->base};
	s->lo[s->nmods] = m->text_lo;
	s->hi[s->nmods] = m->text_hi;
	s->nmods++;
	return 0;
}

void agent_native_snap_free(struct agent_native_snap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		free((void *)s->mods[i].path);
		free((void *)s->mods[i].build_id);
	}
	free(s->mods);
	free(s->lo);
	free(s->hi);
	if (s->stacks)
		munmap(s->stacks, s->stacks_bytes);
	if (s->leaks)
		munmap(s->leaks, s->leaks_bytes);
	munmap(s, sizeof(*s));
}

/* A stack and its leaks, sorted together. */
struct stack_leaks {
	vmheap_native_stack stack;
	vmheap_native_leaks leaks;
};

static int by_live_leaks(const void *x, const void *y)
{
	return by_live(&((const struct stack_leaks *)x)->stack,
		       &((const struct stack_leaks *)y)->stack);
}

/* The stacks (and their leaks), the largest by live bytes first. */
static void sort_by_live(struct agent_native_snap *s)
{
	if (!s->leaks) {
		qsort(s->stacks, s->nstacks, sizeof(*s->stacks), by_live);
		return;
	}
	struct stack_leaks *p =
	    malloc((s->nstacks ? s->nstacks : 1) * sizeof(*p));
	if (!p) { /* unsorted: a reader does not rely on the order */
		return;
	}
	for (size_t i = 0; i < s->nstacks; i++)
		p[i] = (struct stack_leaks){s->stacks[i], s->leaks[i]};
	qsort(p, s->nstacks, sizeof(*p), by_live_leaks);
	for (size_t i = 0; i < s->nstacks; i++) {
		s->stacks[i] = p[i].stack;
		s->leaks[i] = p[i].leaks;
	}
	free(p);
}

static void *map_zero(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void agent_native_before_fork(void)
{
	vmheap_native_tracking_fn on =
	    (vmheap_native_tracking_fn)agent_native_api(
		"vmheap_native_tracking");
	vmheap_native_scan_prepare_fn prepare =
	    (vmheap_native_scan_prepare_fn)agent_native_api(
		"vmheap_native_scan_prepare");

	if (on && prepare && on())
		prepare();
}

struct agent_native_snap *agent_native_snapshot(int forked)
{
	vmheap_native_scan_fn scan = forked ? (vmheap_native_scan_fn)
		agent_native_api("vmheap_native_scan") : NULL;
	vmheap_native_tracking_fn on = (vmheap_native_tracking_fn)
		agent_native_api("vmheap_native_tracking");
	vmheap_native_stacks_fn stacks =
	    (vmheap_native_stacks_fn)agent_native_api("vmheap_native_stacks");
	vmheap_native_modules_fn modules = (vmheap_native_modules_fn)
		agent_native_api("vmheap_native_modules");
	struct agent_native_snap *s;
	size_t cap, n;

	if (!on || !stacks || !modules || !on())
		return NULL;
	/* mmap'd like the stacks, so that the snapshot is not a stack of the
	 * dump it goes into (in an in-process dump). */
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return NULL;
	ssize_t l = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
	s->exe[l > 0 ? l : 0] = '\0';
	cap = stacks(NULL, 0) + 256;
	s->stacks_bytes = cap * sizeof(*s->stacks);
	s->stacks = map_zero(s->stacks_bytes);
	if (!s->stacks)
		goto fail;
	if (scan) {
		s->leaks_bytes = cap * sizeof(*s->leaks);
		s->leaks = map_zero(s->leaks_bytes);
		/* a scan that fails leaves the dump without leak counts */
		if (s->leaks &&
		    scan(s->stacks, s->leaks, cap, &n, &s->scan) != 0) {
			munmap(s->leaks, s->leaks_bytes);
			s->leaks = NULL;
		}
	}
	if (!s->leaks)
		n = stacks(s->stacks, cap);
	s->nstacks =
	    agent_native_charge(s->stacks, s->leaks, n < cap ? n : cap);
	/* The live ones, the largest first. */
	sort_by_live(s);
	while (s->nstacks > 0 && s->stacks[s->nstacks - 1].live_count == 0)
		s->nstacks--;
	if (s->nstacks > MAX_DUMP_STACKS)
		s->nstacks = MAX_DUMP_STACKS;
	if (modules(add_module, s) != 0)
		goto fail;
	return s;
fail:
	agent_native_snap_free(s);
	return NULL;
}

void agent_native_scan_note(const struct agent_native_snap *s,
			    struct agent_scan_note *note)
{
	memset(note, 0, sizeof(*note));
	if (!s || !s->leaks)
		return;
	note->scanned = 1;
	note->blocks = s->scan.blocks;
	note->skipped_mappings = s->scan.skipped_mappings;
	note->skipped_bytes = s->scan.skipped_bytes;
}

static uint32_t module_of(const struct agent_native_snap *s, uint64_t pc)
{
	for (size_t i = 0; i < s->nmods; i++)
		if (pc >= s->lo[i] && pc < s->hi[i])
			return (uint32_t)i;
	return VMHEAP_NO_MODULE;
}

int agent_native_write(vmheap_writer *wr, const struct agent_native_snap *s)
{
	struct vmheap_dump_stack *out;
	struct vmheap_dump_frame *frames;
	int rc;

	out = calloc(s->nstacks ? s->nstacks : 1, sizeof(*out));
	frames = calloc(s->nstacks ? s->nstacks * VMHEAP_NATIVE_MAX_FRAMES : 1,
			sizeof(*frames));
	if (!out || !frames) {
		free(out);
		free(frames);
		return VMHEAP_ENOMEM;
	}
	for (size_t i = 0; i < s->nstacks; i++) {
		const vmheap_native_stack *v = &s->stacks[i];
		struct vmheap_dump_frame *f = frames + i * VMHEAP_NATIVE_MAX_FRAMES;

		for (uint32_t k = 0; k < v->depth; k++) {
			f[k].module = module_of(s, v->frames[k]);
			f[k].offset = f[k].module == VMHEAP_NO_MODULE
					  ? v->frames[k]
					  : v->frames[k] - s->mods[f[k].module].base;
		}
		out[i] = (struct vmheap_dump_stack){
		    v->live_bytes,
		    v->live_count,
		    v->allocs,
		    v->frees,
		    f,
		    v->depth,
		    v->vm_file,
		    v->vm_file ? strlen(v->vm_file) : 0,
		    v->vm_line};
	}
	struct vmheap_dump_leak_scan scan = {
		NULL, s->scan.blocks, s->scan.root_bytes,
		s->scan.skipped_mappings, s->scan.skipped_bytes,
		s->scan.scan_ns, s->scan.memory_bytes};
	struct vmheap_dump_leaks *l = NULL;
	if (s->leaks) {
		l = calloc(s->nstacks ? s->nstacks : 1, sizeof(*l));
		if (!l) {
			free(out);
			free(frames);
			return VMHEAP_ENOMEM;
		}
		for (size_t i = 0; i < s->nstacks; i++) {
			const vmheap_native_leaks *v = &s->leaks[i];
			l[i] = (struct vmheap_dump_leaks){
				v->leaked_count, v->leaked_bytes,
				v->indirect_count, v->indirect_bytes,
				v->possible_count, v->possible_bytes,
				v->reachable_count, v->reachable_bytes};
		}
		scan.stacks = l;
	}
	rc = vmheap_writer_add_native_leaks(wr, s->mods, s->nmods, out,
					    s->nstacks, l ? &scan : NULL);
	free(l);
	free(out);
	free(frames);
	return rc;
}

int agent_process_memory(pid_t pid, struct vmheap_process_memory *m)
{
	char path[64], buf[128];
	long long size, resident;
	struct mallinfo2 mi = mallinfo2();
	int fd;
	ssize_t n;

	memset(m, 0, sizeof(*m));
	m->malloc_in_use = mi.uordblks;
	m->malloc_free = mi.fordblks;
	m->malloc_mmap = mi.hblkhd;
	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%lld %lld", &size, &resident) != 2)
		return -1;
	m->rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}
