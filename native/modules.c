/* modules.c - the loaded modules, with their build ids (PT_NOTE). */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "native-internal.h"

struct walk {
	vmheap_native_module_fn fn;
	void *arg;
};

/* The GNU build id in the notes of one PT_NOTE segment. */
static void build_id(const struct dl_phdr_info *info, const ElfW(Phdr) *ph,
		     vmheap_native_module *m)
{
	const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
	const uint8_t *end = p + ph->p_memsz;
	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
		size_t name = (n->n_namesz + 3) & ~(size_t)3;
		size_t desc = (n->n_descsz + 3) & ~(size_t)3;
		const uint8_t *d = p + sizeof *n + name;
		if (d + n->n_descsz > end)
			return;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    memcmp(p + sizeof *n, "GNU", 4) == 0) {
			m->build_id = d;
			m->build_id_len = n->n_descsz;
			return;
		}
		p = d + desc;
	}
}

static int one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct walk *w = arg;
	vmheap_native_module m = {
		.path = info->dlpi_name != NULL ? info->dlpi_name : "",
		.base = info->dlpi_addr,
		.text_lo = UINT64_MAX,
	};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE && m.build_id == NULL)
			build_id(info, ph, &m);
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uint64_t a = info->dlpi_addr + ph->p_vaddr;
			if (a < m.text_lo)
				m.text_lo = a;
			if (a + ph->p_memsz > m.text_hi)
				m.text_hi = a + ph->p_memsz;
		}
	}
	if (m.text_hi == 0)
		m.text_lo = 0;
	return w->fn(&m, w->arg);
}

VMHEAP_EXPORT int vmheap_native_modules(vmheap_native_module_fn fn,
					void *arg)
{
	struct walk w = {fn, arg};
	return dl_iterate_phdr(one, &w);
}
