/*
 * native_vars.c - the malloc tracker's variables:
 *
 *   config.native.track   bool  true starts tracking (loading the
 *                               tracker when vmheap-run did not preload
 *                               it: native_load.c), false stops and
 *                               forgets
 *   system.native.bytes   int   the live bytes of every tracked
 *                               allocation, now (the tracker's totals,
 *                               vmheap's own included)
 *   system.native.sites   array the top sites by live bytes, now, as
 *                               charged (native_charge.c; vmheap's own
 *                               left out): [{live_bytes, live_count,
 *                               allocs, frees, site, frames, vm}], site
 *                               the innermost frames as
 *                               "function+0xoff (module)" from dladdr,
 *                               frames as [module path, offset] for a
 *                               client that names them from the files
 *   (system.native.leaks, the leak scan now: native_leaks.c)
 *
 * The agent does not link the tracker: it finds its API at run time
 * (agent_native_api), so the same agent runs with and without it, and
 * loads it when tracking starts in a VM started without it
 * (native_load.c).  Loop thread only.
 */
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"
#include "vmheap_native.h"

#define TOP_STACKS 20
#define SHOWN_FRAMES 4
#define FILE_FRAMES 5 /* as many as vmheap-histo --native shows */

static const char missing[] =
	"the malloc tracker is not loaded in this VM; start it with: "
	"set config.native.track true";

static void *api(const char *name)
{
	return agent_native_api(name);
}

/*
 * A weak reference, resolved when the library is loaded (NULL without
 * the tracker), not a look-up: this runs first thing in the agent's
 * threads, which may start while the program's constructors still load
 * libraries, and find_tracker's dlopen inside dl_iterate_phdr then waits
 * on the loader's lock that such a load holds while it waits on the
 * one dl_iterate_phdr holds (a hang seen with the tracker's constructor
 * loading libgcc_s).
 */
extern void vmheap_native_own_thread(void) __attribute__((weak));

void agent_native_own_thread(void)
{
	if (vmheap_native_own_thread != NULL)
		vmheap_native_own_thread();
}

int agent_native_get_track(struct vmheap_agent *a, const char *name,
			   msgpack_packer *pk, char *err, size_t errlen)
{
	vmheap_native_tracking_fn on =
		(vmheap_native_tracking_fn)api("vmheap_native_tracking");

	(void)a, (void)name, (void)err, (void)errlen;
	if (on != NULL && on())
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	return 0;
}

int agent_native_set_track(struct vmheap_agent *a, const msgpack_object *value,
			   msgpack_packer *pk, uint64_t *job, char *err,
			   size_t errlen)
{
	vmheap_native_start_fn start =
		(vmheap_native_start_fn)api("vmheap_native_start");
	vmheap_native_stop_fn stop =
		(vmheap_native_stop_fn)api("vmheap_native_stop");
	int v;

	(void)job;
	if (agent_want_bool(value, &v) < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ETYPE,
				  "config.native.track takes a boolean "
				  "(true/false)");
	if (v && (start == NULL || stop == NULL)) {
		/* a VM started without vmheap-run: load the tracker */
		int rc = agent_native_load(err, errlen);
		if (rc < 0)
			return rc;
		start = (vmheap_native_start_fn)api("vmheap_native_start");
		stop = (vmheap_native_stop_fn)api("vmheap_native_stop");
	} else if (v && agent_native_route(err, errlen) < 0) {
		return VMHEAP_AGENT_EUNSUPPORTED;
	}
	if (start == NULL || stop == NULL) /* off, and never loaded */
		return agent_native_get_track(a, "config.native.track", pk,
					      err, errlen);
	if (v && start() != 0)
		return agent_fail(err, errlen, VMHEAP_ENOMEM,
				  "the malloc tracker cannot map its tables");
	if (!v)
		stop();
	return agent_native_get_track(a, "config.native.track", pk, err,
				      errlen);
}

static int by_live_bytes(const void *x, const void *y)
{
	const vmheap_native_stack *a = x, *b = y;

	if (a->live_bytes != b->live_bytes)
		return a->live_bytes < b->live_bytes ? 1 : -1;
	return a->live_count < b->live_count ? 1 : a->live_count > b->live_count ? -1 : 0;
}

/* "function+0xoff (module)" of a return address, or "0xaddr". */
static void frame_name(char *out, size_t cap, uint64_t ret)
{
	Dl_info info;
	void *at = (void *)(uintptr_t)(ret - 1); /* in the call */

	if (ret == 0 || !dladdr(at, &info) || info.dli_fname == NULL) {
		snprintf(out, cap, "0x%llx", (unsigned long long)ret);
		return;
	}
	const char *mod = strrchr(info.dli_fname, '/');
	mod = mod != NULL ? mod + 1 : info.dli_fname;
	if (info.dli_sname != NULL)
		snprintf(out, cap, "%s+0x%llx (%s)", info.dli_sname,
			 (unsigned long long)(ret - (uintptr_t)info.dli_saddr),
			 mod);
	else
		snprintf(out, cap, "0x%llx (%s)",
			 (unsigned long long)(ret - (uintptr_t)info.dli_fbase),
			 mod);
}

/* The tracker's totals into *t; 0, or the failure (tracker absent,
 * tracking off) in err. */
static int tracked_totals(vmheap_native_totals *t, char *err, size_t errlen)
{
	vmheap_native_get_totals_fn get =
		(vmheap_native_get_totals_fn)api("vmheap_native_get_totals");
	vmheap_native_tracking_fn on =
		(vmheap_native_tracking_fn)api("vmheap_native_tracking");

	if (get == NULL || on == NULL)
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "%s", missing);
	if (!on())
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "native tracking is off; start it with: "
				  "set config.native.track true");
	get(t);
	return 0;
}

int agent_native_get_bytes(struct vmheap_agent *a, const char *name,
			   msgpack_packer *pk, char *err, size_t errlen)
{
	vmheap_native_totals t;
	int rc = tracked_totals(&t, err, errlen);

	(void)a, (void)name;
	if (rc < 0)
		return rc;
	msgpack_pack_uint64(pk, t.live_bytes);
	return 0;
}

/* The stack's innermost FILE_FRAMES frames as [module path, offset]:
 * the return address minus the module's load address (l_addr), as a
 * dump's native section has them, so that a client resolves them
 * against the file as the offline tools do; path "" and the address
 * itself when no module holds it. */
static void pack_frames(msgpack_packer *pk, const vmheap_native_stack *v)
{
	uint32_t n = v->depth < FILE_FRAMES ? v->depth : FILE_FRAMES;

	msgpack_pack_array(pk, n);
	for (uint32_t k = 0; k < n; k++) {
		Dl_info info;
		struct link_map *lm = NULL;
		const char *path = "";
		uint64_t off = v->frames[k];
		char exe[PATH_MAX];

		if (v->frames[k] != 0 &&
		    dladdr1((void *)(uintptr_t)(v->frames[k] - 1), &info,
			    (void **)&lm, RTLD_DL_LINKMAP) && lm != NULL) {
			path = lm->l_name;
			off = v->frames[k] - lm->l_addr;
			if (path == NULL || path[0] == '\0') { /* the program */
				ssize_t l = readlink("/proc/self/exe", exe,
						     sizeof(exe) - 1);
				exe[l > 0 ? l : 0] = '\0';
				path = exe;
			}
		}
		msgpack_pack_array(pk, 2);
		frame_pack_str(pk, path);
		msgpack_pack_uint64(pk, off);
	}
}

int agent_native_get_stacks(struct vmheap_agent *a, const char *name,
			    msgpack_packer *pk, char *err, size_t errlen)
{
	vmheap_native_stacks_fn stacks =
	    (vmheap_native_stacks_fn)api("vmheap_native_stacks");
	vmheap_native_tracking_fn on =
		(vmheap_native_tracking_fn)api("vmheap_native_tracking");
	vmheap_native_stack *v;
	size_t n, cap;

	(void)a, (void)name;
	if (stacks == NULL || on == NULL)
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "%s", missing);
	if (!on())
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "native tracking is off; start it with: "
				  "set config.native.track true");
	agent_native_route(NULL, 0); /* modules loaded past the tracker */
	/* Stacks may appear between the count and the copy: some room. */
	cap = stacks(NULL, 0) + 256;
	v = malloc(cap * sizeof(*v));
	if (v == NULL)
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	n = stacks(v, cap);
	if (n > cap)
		n = cap;
	n = agent_native_charge(v, NULL, n);
	qsort(v, n, sizeof(*v), by_live_bytes);
	size_t shown = 0;
	for (size_t i = 0; i < n && shown < TOP_STACKS; i++) {
		if (v[i].live_bytes == 0)
			break;
		/* vmheap's own memory is no stack of the VM's */
		if (v[i].vm_file && !strcmp(v[i].vm_file, VMHEAP_NATIVE_OWN))
			continue;
		v[shown++] = v[i];
	}
	msgpack_pack_array(pk, shown);
	for (size_t i = 0; i < shown; i++) {
		msgpack_pack_map(pk, 7);
		frame_pack_str(pk, "live_bytes");
		msgpack_pack_uint64(pk, v[i].live_bytes);
		frame_pack_str(pk, "live_count");
		msgpack_pack_uint64(pk, v[i].live_count);
		frame_pack_str(pk, "allocs");
		msgpack_pack_uint64(pk, v[i].allocs);
		frame_pack_str(pk, "frees");
		msgpack_pack_uint64(pk, v[i].frees);
		agent_native_pack_stack(pk, &v[i]);
	}
	free(v);
	return 0;
}

void agent_native_pack_stack(msgpack_packer *pk, const vmheap_native_stack *v)
{
	char text[SHOWN_FRAMES * 160 + 8] = "", f[160], vm[256];

	for (uint32_t k = 0; k < v->depth && k < SHOWN_FRAMES; k++) {
		frame_name(f, sizeof(f), v->frames[k]);
		if (k)
			strcat(text, " < ");
		strcat(text, f);
	}
	if (v->vm_file) {	     /* the VM's line, outermost */
		if (v->vm_line == 0) /* none: a label, "<ruby: gc>" */
			snprintf(vm, sizeof(vm), " < %s", v->vm_file);
		else
			snprintf(vm, sizeof(vm), " < %s:%u", v->vm_file,
				 (unsigned)v->vm_line);
		strncat(text, vm, sizeof(text) - strlen(text) - 1);
	}
	frame_pack_str(pk, "site");
	frame_pack_str(pk, text);
	frame_pack_str(pk, "frames");
	pack_frames(pk, v);
	frame_pack_str(pk, "vm");
	if (v->vm_file)
		frame_pack_str(pk, vm + 3); /* without " < " */
	else
		msgpack_pack_nil(pk);
}
