/*
 * writer_native.c - the dump writer's native section (FORMAT.md section
 * 15): the tracker's modules and live allocation sites, checked, then
 * packed into one NATV section between two blocks of records.
 */
#include <stdint.h>
#include <string.h>

#include <msgpack.h>

#include "vmheap.h"
#include "format-internal.h"
#include "writer-internal.h"

/* The arguments of add_native, checked before anything is packed. */
static int check_native(vmheap_writer *w, const struct vmheap_dump_module *m,
			size_t nm, const struct vmheap_dump_stack *s, size_t ns)
{
	if ((nm && !m) || (ns && !s)) {
		vmheap_writer_set_error(
		    w, 0, "NULL modules or sites with a non-zero count");
		return VMHEAP_EINVAL;
	}
	for (size_t i = 0; i < nm; i++) {
		if (m[i].path_len > VMHEAP_MAX_STRING_BYTES ||
		    m[i].build_id_len > VMHEAP_MAX_BUILD_ID_BYTES) {
			vmheap_writer_set_error(
			    w, 0, "module %zu: path or build id too long", i);
			return VMHEAP_ELIMIT;
		}
		if ((m[i].path_len && !m[i].path) ||
		    (m[i].build_id_len && !m[i].build_id)) {
			vmheap_writer_set_error(
			    w, 0, "module %zu: NULL path or build id", i);
			return VMHEAP_EINVAL;
		}
	}
	for (size_t i = 0; i < ns; i++) {
		if (s[i].depth > VMHEAP_MAX_STACK_FRAMES) {
			vmheap_writer_set_error(
			    w, 0, "site %zu: %zu frames, more than %u", i,
			    s[i].depth, VMHEAP_MAX_STACK_FRAMES);
			return VMHEAP_ELIMIT;
		}
		if (s[i].depth && !s[i].frames) {
			vmheap_writer_set_error(w, 0, "site %zu: NULL frames",
						i);
			return VMHEAP_EINVAL;
		}
		if (s[i].vm_file_len > VMHEAP_MAX_STRING_BYTES) {
			vmheap_writer_set_error(
			    w, 0, "site %zu: VM file name too long", i);
			return VMHEAP_ELIMIT;
		}
		for (size_t k = 0; k < s[i].depth; k++)
			if (s[i].frames[k].module != VMHEAP_NO_MODULE &&
			    s[i].frames[k].module >= nm) {
				vmheap_writer_set_error(
				    w, 0,
				    "site %zu frame %zu: module %u of %zu", i,
				    k, s[i].frames[k].module, nm);
				return VMHEAP_EINVAL;
			}
	}
	return 0;
}

/* The `leaks` key's value (FORMAT.md section 15). */
static void pack_leaks(msgpack_packer *pk, const struct vmheap_dump_leak_scan *l,
		       size_t nsites)
{
	msgpack_pack_map(pk, 7);
	vmheap_writer_pack_str(pk, "sites", 5);
	msgpack_pack_array(pk, nsites);
	for (size_t i = 0; i < nsites; i++) {
		const struct vmheap_dump_leaks *c = &l->stacks[i];
		msgpack_pack_array(pk, 8);
		msgpack_pack_uint64(pk, c->leaked_count);
		msgpack_pack_uint64(pk, c->leaked_bytes);
		msgpack_pack_uint64(pk, c->indirect_count);
		msgpack_pack_uint64(pk, c->indirect_bytes);
		msgpack_pack_uint64(pk, c->possible_count);
		msgpack_pack_uint64(pk, c->possible_bytes);
		msgpack_pack_uint64(pk, c->reachable_count);
		msgpack_pack_uint64(pk, c->reachable_bytes);
	}
	vmheap_writer_pack_str(pk, "blocks", 6);
	msgpack_pack_uint64(pk, l->blocks);
	vmheap_writer_pack_str(pk, "root_bytes", 10);
	msgpack_pack_uint64(pk, l->root_bytes);
	vmheap_writer_pack_str(pk, "skipped_mappings", 16);
	msgpack_pack_uint64(pk, l->skipped_mappings);
	vmheap_writer_pack_str(pk, "skipped_bytes", 13);
	msgpack_pack_uint64(pk, l->skipped_bytes);
	vmheap_writer_pack_str(pk, "scan_ns", 7);
	msgpack_pack_uint64(pk, l->scan_ns);
	vmheap_writer_pack_str(pk, "memory_bytes", 12);
	msgpack_pack_uint64(pk, l->memory_bytes);
}

int vmheap_writer_add_native(vmheap_writer *w,
			     const struct vmheap_dump_module *modules,
			     size_t nmodules,
			     const struct vmheap_dump_stack *sites,
			     size_t nsites)
{
	return vmheap_writer_add_native_leaks(w, modules, nmodules, sites,
					      nsites, NULL);
}

int vmheap_writer_add_native_leaks(vmheap_writer *w,
				   const struct vmheap_dump_module *modules,
				   size_t nmodules,
				   const struct vmheap_dump_stack *sites,
				   size_t nsites,
				   const struct vmheap_dump_leak_scan *leaks)
{
	msgpack_packer *pk;
	size_t at;
	int rc = vmheap_writer_usable(w);

	if (rc)
		return rc;
	if (w->native != 1) {
		vmheap_writer_set_error(
		    w, 0, "%s",
		    w->native ? "the dump has its native section already"
			      : "the writer was not opened for a native "
				"section (options.native)");
		return VMHEAP_ESTATE;
	}
	if (nsites > UINT32_MAX) {
		vmheap_writer_set_error(
		    w, 0, "%zu sites, more than a section counts", nsites);
		return VMHEAP_ELIMIT;
	}
	if ((rc = check_native(w, modules, nmodules, sites, nsites)))
		return rc;
	if (leaks && nsites && !leaks->stacks) {
		vmheap_writer_set_error(w, 0, "NULL leak counts with %zu sites",
					nsites);
		return VMHEAP_EINVAL;
	}
	/* Close the block that holds records; the section goes where the
	 * next block's header slot was. */
	if (w->blk_records && (rc = vmheap_writer_flush_block(w)))
		return rc;
	w->len = w->blk_start;
	if (vmheap_writer_begin_section(w, &at) < 0)
		return vmheap_writer_out_of_memory(w);
	pk = &w->pk;
	msgpack_pack_map(pk, leaks ? 3 : 2);
	vmheap_writer_pack_str(pk, "modules", 7);
	msgpack_pack_array(pk, nmodules);
	for (size_t i = 0; i < nmodules; i++) {
		msgpack_pack_array(pk, 3);
		vmheap_writer_pack_str(pk,
				       modules[i].path ? modules[i].path : "",
				       modules[i].path_len);
		msgpack_pack_bin(pk, modules[i].build_id_len);
		msgpack_pack_bin_body(pk, modules[i].build_id,
				      modules[i].build_id_len);
		msgpack_pack_uint64(pk, modules[i].base);
	}
	vmheap_writer_pack_str(pk, "sites", 5);
	msgpack_pack_array(pk, nsites);
	for (size_t i = 0; i < nsites; i++) {
		const struct vmheap_dump_stack *s = &sites[i];
		/* 7 with the VM's location (FORMAT.md section 15). */
		msgpack_pack_array(pk, s->vm_file ? 7 : 5);
		msgpack_pack_uint64(pk, s->live_bytes);
		msgpack_pack_uint64(pk, s->live_count);
		msgpack_pack_uint64(pk, s->allocs);
		msgpack_pack_uint64(pk, s->frees);
		msgpack_pack_array(pk, 2 * s->depth);
		for (size_t k = 0; k < s->depth; k++) {
			if (s->frames[k].module == VMHEAP_NO_MODULE)
				msgpack_pack_nil(pk);
			else
				msgpack_pack_uint32(pk, s->frames[k].module);
			msgpack_pack_uint64(pk, s->frames[k].offset);
		}
		if (s->vm_file) {
			vmheap_writer_pack_str(pk, s->vm_file, s->vm_file_len);
			msgpack_pack_uint64(pk, s->vm_line);
		}
	}
	if (leaks) {
		vmheap_writer_pack_str(pk, "leaks", 5);
		pack_leaks(pk, leaks, nsites);
	}
	if (w->nomem)
		return vmheap_writer_out_of_memory(w);
	if (w->len - at - VMHEAP_SECTION_HEADER_LEN >
	    VMHEAP_MAX_SECTION_BYTES) {
		size_t big = w->len - at - VMHEAP_SECTION_HEADER_LEN;
		w->len = at; /* take it back; the dump goes on */
		if (vmheap_writer_begin_section(w, &w->blk_start) < 0)
			return vmheap_writer_out_of_memory(w);
		w->rec_start = w->len;
		vmheap_writer_set_error(
		    w, 0,
		    "native section would be %zu bytes, more than the "
		    "format's section limit of %u bytes; pass fewer "
		    "sites",
		    big, VMHEAP_MAX_SECTION_BYTES);
		return VMHEAP_ELIMIT;
	}
	vmheap_writer_seal_section(w, at, VMHEAP_TAG_NATV, (uint32_t)nsites);
	w->native = 2;
	if (vmheap_writer_begin_section(w, &w->blk_start) < 0)
		return vmheap_writer_out_of_memory(w);
	w->rec_start = w->len;
	return 0;
}
