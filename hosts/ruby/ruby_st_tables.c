/*
 * ruby_st_tables.c - in a dump's forked child, before the malloc
 * tracker's leak scan: the stale words of the st tables the VM itself
 * holds are zeroed.
 *
 * An st table (Ruby's st.c) deletes an entry by setting its hash to all
 * ones and leaves its key and value in place; the entries before
 * entries_start were deleted, those from entries_bound on are not in use.
 * The VM's table of the features being loaded keys each entry by a copy
 * of the path that Ruby frees after the require: its deleted entries keep
 * the freed strings' addresses, which newer blocks take, and the leak scan
 * would read those blocks as reachable (native/README.md, "The leak
 * scan").  struct st_table is public (ruby/st.h); the entry {hash, key,
 * record} and the deleted mark are st.c's, unchanged since Ruby 2.6.
 * rb_vm_t's layout is not in Debian's ruby-dev: every word of its first
 * VM_WORDS that names a struct st_table whose fields agree (the entry
 * counts within the entries array, the hash type two code pointers, the
 * entries a glibc block of exactly the array's size) is taken for one,
 * all read through process_vm_readv (a wrong guess reads EFAULT, not
 * SIGSEGV).
 *
 * The VM's other tables hang from libruby's statics: variable.c's table
 * of generic instance variables (an object that is not a T_OBJECT with
 * ivars -> a malloc'd struct gen_ivtbl) deletes an object's entry when
 * GC frees the object, and frees its gen_ivtbl; the deleted entry keeps
 * the address, which a newer block takes (the interior of one of 10,000
 * forgotten blocks read possibly leaked in one run of three,
 * spec/native/holdout).  Every word of libruby's writable segments (its
 * data and bss, from its program headers) that names a table that checks
 * out the same way is taken too.  Only the child's copy is written; only
 * while the tracker tracks.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "ruby-internal.h"

#define VM_WORDS 512	   /* rb_vm_t is about 1.3 KiB in 3.1 */
#define MAX_ENTRY_POWER 24 /* 16 M entries */
#define DELETED (~(uint64_t)0)

struct entry { /* st.c's st_table_entry */
	uint64_t hash, key, record;
};

/* entries: a glibc block of exactly n entries (usable size n * 24 up to
 * 24 bytes of slack, not mmapped). */
static int entries_block(uint64_t entries, uint64_t n)
{
	uint64_t head, need = n * sizeof(struct entry);
	if (entries % 16 != 0 || ruby_peek(entries - 8, &head, 8) != 0 ||
	    (head & 2))
		return 0;
	uint64_t usable = (head & ~(uint64_t)7) - 8;
	return usable >= need && usable - need <= 24;
}

void ruby_clear_st_table(uint64_t at)
{
	struct st_table t;
	uint64_t type[2];
	if (at == 0 || at % 8 != 0 || ruby_peek(at, &t, sizeof t) != 0)
		return;
	if (t.entry_power > MAX_ENTRY_POWER || t.type == NULL ||
	    ruby_peek((uint64_t)(uintptr_t)t.type, type, sizeof type) != 0 ||
	    type[0] == 0 || type[1] == 0)
		return;
	uint64_t n = (uint64_t)1 << t.entry_power;
	if (t.entries_start > t.entries_bound || t.entries_bound > n ||
	    t.num_entries > t.entries_bound - t.entries_start ||
	    !entries_block((uint64_t)(uintptr_t)t.entries, n))
		return;
	struct entry *e = (struct entry *)(void *)t.entries;
	for (uint64_t i = 0; i < n; i++) {
		int unused = i < t.entries_start || i >= t.entries_bound;
		if (!unused && e[i].hash != DELETED)
			continue;
		if (e[i].key != 0)
			e[i].key = 0;
		if (e[i].record != 0)
			e[i].record = 0;
	}
}

void ruby_clear_vm_st_tables(void)
{
	int (*tracking)(void) =
	    (int (*)(void))dlsym(RTLD_DEFAULT, "vmheap_native_tracking");
	void **vm_ptr = (void **)dlsym(RTLD_DEFAULT, "ruby_current_vm_ptr");
	uint64_t words[VM_WORDS];
	if (!tracking || !tracking() || vm_ptr == NULL || *vm_ptr == NULL)
		return;
	uint64_t vm = (uint64_t)(uintptr_t)*vm_ptr;
	/* as much of the struct as can be read */
	size_t n = VM_WORDS;
	while (n > 0 && ruby_peek(vm, words, n * 8) != 0)
		n /= 2;
	for (size_t i = 0; i < n; i++)
		ruby_clear_st_table(words[i]);
}

struct segments {
	uint64_t base; /* libruby's load address */
	int found;
};

/* Each writable PT_LOAD segment of the object loaded at sg->base: its
 * words, each a table if it checks out. */
static int static_tables(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct segments *sg = arg;
	(void)size;
	if ((uint64_t)info->dlpi_addr != sg->base)
		return 0;
	sg->found = 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uint64_t lo =
		    (info->dlpi_addr + ph->p_vaddr + 7) & ~(uint64_t)7;
		uint64_t hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		for (uint64_t a = lo; a + 8 <= hi; a += 8) {
			uint64_t w = *(const uint64_t *)(uintptr_t)a;
			if (w >= 4096 && w % 8 == 0)
				ruby_clear_st_table(w);
		}
	}
	return 1;
}

void ruby_clear_static_st_tables(void)
{
	int (*tracking)(void) =
	    (int (*)(void))dlsym(RTLD_DEFAULT, "vmheap_native_tracking");
	Dl_info info;
	if (!tracking || !tracking() ||
	    dladdr((void *)(uintptr_t)rb_gc, &info) == 0 ||
	    info.dli_fbase == NULL)
		return;
	struct segments sg = {(uint64_t)(uintptr_t)info.dli_fbase, 0};
	dl_iterate_phdr(static_tables, &sg);
}
