/*
 * native_sites.c - the live native sites (`get system.native.sites`)
 * named as vmheap-histo --native names them: the agent sends each row's
 * innermost frames as (module file, offset), and the console resolves
 * them against the files with the offline tools' symbolizer (libdw: the
 * function, and file:line where there is debug info), on this machine,
 * where the VM's files are.  The agent's own "site" text (dladdr: dynamic
 * symbols only) is what a row keeps when it has no frames.
 */
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"
#include "vmheap_report.h"

static int key_is(const msgpack_object_kv *kv, const char *name)
{
	return kv->key.type == MSGPACK_OBJECT_STR &&
	       kv->key.via.str.size == strlen(name) &&
	       !memcmp(kv->key.via.str.ptr, name, kv->key.via.str.size);
}

/* The symbolized site of one row, or NULL (no frames, out of memory). */
static char *row_site(vmheap_symbolizer *sym, const msgpack_object *frames,
		      const msgpack_object *vm)
{
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;

	if (frames->type != MSGPACK_OBJECT_ARRAY || frames->via.array.size == 0)
		return NULL;
	for (uint32_t k = 0; k < frames->via.array.size; k++) {
		const msgpack_object *f = &frames->via.array.ptr[k];
		if (f->type != MSGPACK_OBJECT_ARRAY || f->via.array.size < 2 ||
		    f->via.array.ptr[0].type != MSGPACK_OBJECT_STR ||
		    f->via.array.ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
			vmheap_strbuf_release(&sb);
			return NULL;
		}
		struct vmheap_dump_module m = {
			f->via.array.ptr[0].via.str.ptr,
			f->via.array.ptr[0].via.str.size, NULL, 0, 0};
		struct vmheap_native n = {0};
		n.modules = &m;
		n.nmodules = 1;
		struct vmheap_dump_frame fr = {
			m.path_len ? 0 : VMHEAP_NO_MODULE,
			f->via.array.ptr[1].via.u64};
		char name[1024];
		vmheap_symbolize(sym, &n, &fr, name, sizeof(name));
		vmheap_strbuf_addf(&sb, "%s%s", k ? " < " : "", name);
	}
	if (vm->type == MSGPACK_OBJECT_STR)
		vmheap_strbuf_addf(&sb, " < %.*s", (int)vm->via.str.size,
				   vm->via.str.ptr);
	if (sb.failed) {
		vmheap_strbuf_release(&sb);
		return NULL;
	}
	return sb.buf;
}

char **console_native_sites(msgpack_object *value)
{
	if (value->type != MSGPACK_OBJECT_ARRAY)
		return NULL;
	uint32_t rows = value->via.array.size;
	char **kept = calloc((size_t)rows + 1, sizeof(*kept));
	vmheap_symbolizer *sym = vmheap_symbolizer_new();
	if (!kept || !sym) {
		free(kept);
		vmheap_symbolizer_free(sym);
		return NULL;
	}
	size_t nk = 0;
	for (uint32_t i = 0; i < rows; i++) {
		msgpack_object *row = &value->via.array.ptr[i];
		msgpack_object frames = {0}, vm = {0};
		int have_site = 0, have_frames = 0;
		uint32_t at = 0;
		if (row->type != MSGPACK_OBJECT_MAP)
			continue;
		msgpack_object_map *m = &row->via.map;
		uint32_t w = 0;
		for (uint32_t k = 0; k < m->size; k++) {
			/* copied out before a later entry moves over them */
			if (key_is(&m->ptr[k], "frames")) {
				frames = m->ptr[k].val;
				have_frames = 1;
				continue; /* not shown */
			}
			if (key_is(&m->ptr[k], "vm")) {
				vm = m->ptr[k].val;
				continue;
			}
			if (key_is(&m->ptr[k], "site")) {
				have_site = 1;
				at = w;
			}
			m->ptr[w++] = m->ptr[k];
		}
		m->size = w;
		char *s = have_site && have_frames ? row_site(sym, &frames, &vm)
						   : NULL;
		if (s) {
			m->ptr[at].val.type = MSGPACK_OBJECT_STR;
			m->ptr[at].val.via.str.ptr = s;
			m->ptr[at].val.via.str.size = (uint32_t)strlen(s);
			kept[nk++] = s;
		}
	}
	vmheap_symbolizer_free(sym);
	return kept;
}

void console_native_sites_free(char **kept)
{
	for (size_t i = 0; kept && kept[i]; i++)
		free(kept[i]);
	free(kept);
}
