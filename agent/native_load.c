/*
 * native_load.c - the malloc tracker in a VM started without vmheap-run:
 * `set config.native.track true` loads it.
 *
 * The tracker is found by name among the loaded modules (preloaded by
 * vmheap-run, or loaded here before).  When it is absent, the agent
 * dlopen's libvmheap-malloc-attach.so (the tracker built for dlopen:
 * native/native.mk) from $VMHEAP_MALLOC_LIB's directory when set, else
 * from where the agent's own module lies: ../lib/ (a build tree, a
 * program linking the agent in PREFIX/bin), ../../ (the Ruby extension
 * in PREFIX/lib/<arch>/site_ruby), the same directory; then by bare name
 * (the loader's search path).  Then vmheap_native_route sends the
 * process's allocator calls to it (native/got.c), and the VM's location
 * hook, kept since the host gave it (vmheap_agent_native_location), is
 * handed over.  Before each snapshot the agent routes again, for modules
 * that a dlopen the tracker did not see has loaded since.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_native.h"

#define ATTACH_LIB "libvmheap-malloc-attach.so"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *_Atomic handle;
static _Atomic(vmheap_native_location_fn) location;

/*
 * The tracker's handle: the loaded module named libvmheap-malloc*,
 * opened again with RTLD_NOLOAD.  Looked for by name, so that no dl call
 * fails when the tracker is absent: a failing dlsym leaves a dlerror
 * record behind in the calling thread (LeakSanitizer reports it).
 */
static int find_tracker(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *base;
	void **out = arg;

	(void)size;
	if (!name || !*name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "libvmheap-malloc", 16) != 0)
		return 0;
	*out = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	return *out != NULL;
}

static void *find_locked(void)
{
	void *h = atomic_load(&handle);

	if (h == NULL) {
		dl_iterate_phdr(find_tracker, &h);
		atomic_store(&handle, h);
	}
	return h;
}

void *agent_native_api(const char *name)
{
	void *h = atomic_load(&handle);

	if (h == NULL) {
		pthread_mutex_lock(&lock);
		h = find_locked();
		pthread_mutex_unlock(&lock);
	}
	return h ? dlsym(h, name) : NULL;
}

/* The directory of the module holding the agent's code into dir. */
static int own_dir(char *dir, size_t cap)
{
	Dl_info info;
	struct link_map *lm = NULL;
	const char *path;
	char exe[PATH_MAX];

	if (!dladdr1((void *)own_dir, &info, (void **)&lm, RTLD_DL_LINKMAP) ||
	    lm == NULL)
		return -1;
	path = lm->l_name;
	if (path == NULL || path[0] == '\0') { /* linked into the program */
		ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (l <= 0)
			return -1;
		exe[l] = '\0';
		path = exe;
	}
	const char *slash = strrchr(path, '/');
	if (slash == NULL || (size_t)(slash - path) >= cap)
		return -1;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return 0;
}

/* dlopen the tracker (lock held); its handle or NULL with the reason. */
static void *load_locked(char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	const char *env = getenv("VMHEAP_MALLOC_LIB");
	static const char *const rel[] = {"/../lib/", "/../../", "/"};
	void *h = NULL;

	if (env != NULL && env[0] != '\0') {
		/* vmheap-run's variable names the preload library; the
		 * attach build lies next to it */
		const char *slash = strrchr(env, '/');
		snprintf(path, sizeof(path), "%.*s%s",
			 slash ? (int)(slash - env + 1) : 0, env, ATTACH_LIB);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	if (h == NULL && own_dir(dir, sizeof(dir)) == 0)
		for (size_t i = 0; h == NULL && i < sizeof(rel) / sizeof(*rel);
		     i++) {
			snprintf(path, sizeof(path), "%s%s%s", dir, rel[i],
				 ATTACH_LIB);
			if (access(path, R_OK) == 0)
				h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
	if (h == NULL)
		h = dlopen(ATTACH_LIB, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		agent_msgf(
		    err, errlen,
		    "the malloc tracker cannot be loaded into this VM "
		    "(%s); install it next to the agent, set "
		    "VMHEAP_MALLOC_LIB in the VM's environment, or start "
		    "the VM with vmheap-run",
		    e ? e : ATTACH_LIB " not found");
	}
	return h;
}

int agent_native_route(char *err, size_t errlen)
{
	vmheap_native_route_fn route =
	    (vmheap_native_route_fn)agent_native_api("vmheap_native_route");
	vmheap_native_route_info info;

	if (route == NULL) /* an older tracker, preloaded */
		return 0;
	if (route(&info) != 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "native tracking cannot start: %s", info.why);
	return 0;
}

int agent_native_load(char *err, size_t errlen)
{
	vmheap_native_set_location_fn set;
	void *h;

	pthread_mutex_lock(&lock);
	h = find_locked();
	if (h == NULL) {
		h = load_locked(err, errlen);
		atomic_store(&handle, h);
	}
	pthread_mutex_unlock(&lock);
	if (h == NULL)
		return VMHEAP_AGENT_EUNSUPPORTED;
	if (agent_native_route(err, errlen) < 0)
		return VMHEAP_AGENT_EUNSUPPORTED;
	set = (vmheap_native_set_location_fn)dlsym(
	    h, "vmheap_native_set_location");
	if (set != NULL)
		set(atomic_load(&location));
	return 0;
}

VMHEAP_EXPORT int vmheap_agent_native_location(int (*where)(const char **,
							    uint32_t *))
{
	vmheap_native_set_location_fn set =
	    (vmheap_native_set_location_fn)agent_native_api(
		"vmheap_native_set_location");

	atomic_store(&location, where);
	if (set == NULL)
		return VMHEAP_AGENT_EUNSUPPORTED;
	set(where);
	return 0;
}
