/*
 * symbols_test.c - naming frames in a stripped library (report/
 * symbols.c): a dynamic symbol names an address only inside its extent
 * [start, start + size); past its end the frame is "module+0xOFF".  The
 * truth is the loader's: the library is loaded here, and dlsym and
 * dladdr1 give each function's address and the exported one's size.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/vmheap_spec.h"
#include "vmheap_report.h"

/* The name of the frame whose return address is at `offset` in the
 * library (the symbolizer looks up offset - 1, the call). */
static void name_of(const char *path, uint64_t offset, char *out,
		    size_t len)
{
	struct vmheap_dump_module m = {path, strlen(path), NULL, 0, 0};
	struct vmheap_native n = {0};
	struct vmheap_dump_frame f = {0, offset};
	vmheap_symbolizer *s = vmheap_symbolizer_new();

	ck_assert_ptr_nonnull(s);
	n.modules = &m;
	n.nmodules = 1;
	vmheap_symbolize(s, &n, &f, out, len);
	vmheap_symbolizer_free(s);
}

START_TEST(dynamic_symbol_only_inside_its_extent)
{
	const char *path = spec_build("spec/symbols/stripped.so");
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "%s", dlerror());
	void *exported = dlsym(h, "vmheap_spec_exported");
	int (**hidden)(int) = dlsym(h, "vmheap_spec_hidden");
	ck_assert_ptr_nonnull(exported);
	ck_assert_ptr_nonnull(hidden);
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	struct link_map *lm = NULL;
	ck_assert(dladdr1(exported, &info, (void **)&sym, RTLD_DL_SYMENT));
	ck_assert(dladdr1(exported, &info, (void **)&lm, RTLD_DL_LINKMAP));
	ck_assert_ptr_nonnull(sym);
	ck_assert_ptr_nonnull(lm);
	uint64_t start = (uint64_t)(uintptr_t)exported - lm->l_addr;
	uint64_t size = sym->st_size;
	uint64_t in_hidden = (uint64_t)(uintptr_t)*hidden - lm->l_addr + 1;
	ck_assert_uint_gt(size, 1);
	/* hidden() lies past the exported function's end, and no dynamic
	 * symbol holds it: the loader says so too */
	ck_assert_uint_ge(in_hidden, start + size);
	ck_assert(dladdr((void *)(uintptr_t)(in_hidden + lm->l_addr), &info));
	ck_assert_ptr_null(info.dli_sname);

	char got[512], want[512];
	/* inside [start, start + size): the dynamic symbol */
	name_of(path, start + 1, got, sizeof got);
	ck_assert_str_eq(got, "vmheap_spec_exported (stripped.so)");
	name_of(path, start + size, got, sizeof got); /* the last byte */
	ck_assert_str_eq(got, "vmheap_spec_exported (stripped.so)");
	/* at its end and past it: the offset, not the nearest symbol */
	name_of(path, start + size + 1, got, sizeof got);
	snprintf(want, sizeof want, "stripped.so+0x%llx",
		 (unsigned long long)(start + size + 1));
	ck_assert_str_eq(got, want);
	name_of(path, in_hidden + 1, got, sizeof got);
	snprintf(want, sizeof want, "stripped.so+0x%llx",
		 (unsigned long long)(in_hidden + 1));
	ck_assert_str_eq(got, want);
	dlclose(h);
}
END_TEST

/* A module path that names a FIFO (a crafted dump, a bad peer): said, at
 * once; opening it for reading would wait for a writer forever. */
START_TEST(fifo_is_not_opened_as_a_module)
{
	char path[700], got[512];
	snprintf(path, sizeof path, "%s/pipe.so", spec_mkdtemp("symbols"));
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	name_of(path, 0x10, got, sizeof got);
	ck_assert_str_eq(got, "pipe.so+0x10 (not a regular file)");
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *t = spec_tcase(s, "stripped", 30);
	tcase_add_test(t, dynamic_symbol_only_inside_its_extent);
	tcase_add_test(t, fifo_is_not_opened_as_a_module);
	return s;
}
