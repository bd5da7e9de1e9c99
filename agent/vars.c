/*
 * vars.c - the variable tree: the built-in system.* and config.*
 * variables, and the host's own.  Loop thread only.  A setter that
 * starts a long job (system.memory.dump) returns AGENT_PENDING and the
 * job's handle; it never sees the connection that asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"

struct var {
	const char *name;
	const char *type;
	int (*get)(struct vmheap_agent *a, const char *name, msgpack_packer *pk,
		   char *err, size_t errlen);
	/* NULL: read-only.  Returns 0 with the reply value in pk, a
	 * negative code, or AGENT_PENDING with a long job's handle in *job. */
	int (*set)(struct vmheap_agent *a, const msgpack_object *value,
		   msgpack_packer *pk, uint64_t *job, char *err, size_t errlen);
};

/* ---------------------------------------------------------- coercion */

/* ---------------------------------------------------------- getters */

static int host_get(struct vmheap_agent *a, const char *name,
		    msgpack_packer *pk)
{
	if (!a->host->get_var)
		return VMHEAP_AGENT_ENOTFOUND;
	return a->host->get_var(a->host->ctx, name,
				(vmheap_value_writer *)(void *)pk);
}

static int get_pid(struct vmheap_agent *a, const char *name, msgpack_packer *pk,
		   char *err, size_t errlen)
{
	(void)a, (void)name, (void)err, (void)errlen;
	msgpack_pack_int64(pk, (int64_t)getpid());
	return 0;
}

static int get_vm(struct vmheap_agent *a, const char *name, msgpack_packer *pk,
		  char *err, size_t errlen)
{
	(void)name, (void)err, (void)errlen;
	frame_pack_str(pk, a->vm);
	return 0;
}

static int get_argv(struct vmheap_agent *a, const char *name,
		    msgpack_packer *pk, char *err, size_t errlen)
{
	char buf[8192];
	ssize_t n = 0, r;
	size_t count = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	(void)a, (void)name;
	if (fd < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot read /proc/self/cmdline");
	while (n < (ssize_t)sizeof(buf) - 1 &&
	       (r = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	if (n > 0 && buf[n - 1] != '\0')
		buf[n++] = '\0'; /* truncated: end the last argument */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			count++;
	msgpack_pack_array(pk, count);
	for (ssize_t i = 0; i < n;) {
		size_t l = strlen(buf + i);
		msgpack_pack_str(pk, l);
		msgpack_pack_str_body(pk, buf + i, l);
		i += (ssize_t)l + 1;
	}
	return 0;
}

static int get_uptime(struct vmheap_agent *a, const char *name,
		      msgpack_packer *pk, char *err, size_t errlen)
{
	long long start = agent_proc_start_ticks(getpid());
	double up = -1, now;
	char buf[64];
	int fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	(void)name, (void)err, (void)errlen;
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0 && start >= 0) {
			buf[n] = '\0';
			now = strtod(buf, NULL);
			up = now - (double)start / (double)sysconf(_SC_CLK_TCK);
		}
	}
	if (up < 0) { /* no /proc: time since the agent started */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		up = (double)(ts.tv_sec - a->start_mono.tv_sec) +
		     (double)(ts.tv_nsec - a->start_mono.tv_nsec) / 1e9;
	}
	msgpack_pack_double(pk, up);
	return 0;
}

/* count / bytes: the host's live figures, else the last dump's, else nil */
static int get_memory_figure(struct vmheap_agent *a, const char *name,
			     msgpack_packer *pk, char *err, size_t errlen)
{
	int rc = host_get(a, name, pk), has;
	uint64_t v;

	(void)err, (void)errlen;
	if (rc != VMHEAP_AGENT_ENOTFOUND)
		return rc;
	pthread_mutex_lock(&a->lock);
	has = a->has_last;
	v = strcmp(name, "system.memory.count") == 0 ? a->last.objects
						     : a->last.bytes;
	pthread_mutex_unlock(&a->lock);
	if (has)
		msgpack_pack_uint64(pk, v);
	else
		msgpack_pack_nil(pk);
	return 0;
}

static int get_rss(struct vmheap_agent *a, const char *name, msgpack_packer *pk,
		   char *err, size_t errlen)
{
	char buf[128];
	long long size, resident;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	(void)a, (void)name;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot read /proc/self/statm");
	buf[n] = '\0';
	if (sscanf(buf, "%lld %lld", &size, &resident) != 2)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot parse /proc/self/statm");
	msgpack_pack_int64(pk, resident * (long long)sysconf(_SC_PAGESIZE));
	return 0;
}

static int get_last_dump(struct vmheap_agent *a, const char *name,
			 msgpack_packer *pk, char *err, size_t errlen)
{
	struct agent_dump_result r;

	(void)name, (void)err, (void)errlen;
	if (agent_dump_last(a, &r))
		agent_pack_dump_result(pk, &r);
	else
		msgpack_pack_nil(pk);
	return 0;
}

static int set_dump(struct vmheap_agent *a, const msgpack_object *value,
		    msgpack_packer *pk, uint64_t *job, char *err, size_t errlen)
{
	char path[PATH_MAX];

	(void)pk;
	if (frame_copy_str(value, path, sizeof(path)) < 0 || !path[0])
		return agent_fail(err, errlen, VMHEAP_AGENT_ETYPE,
				  "system.memory.dump takes a file name (a "
				  "non-empty string)");
	return agent_dump_start(a, path, job, err, errlen);
}

static int get_dumping(struct vmheap_agent *a, const char *name,
		       msgpack_packer *pk, char *err, size_t errlen)
{
	(void)name, (void)err, (void)errlen;
	if (agent_dump_running(a))
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	return 0;
}

static int get_backtrace(struct vmheap_agent *a, const char *name,
			 msgpack_packer *pk, char *err, size_t errlen)
{
	int rc = host_get(a, name, pk);

	if (rc == VMHEAP_AGENT_ENOTFOUND)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
		    "this VM (%s) does not provide thread backtraces", a->vm);
	return rc;
}

static int get_flag(struct vmheap_agent *a, const char *name,
		    msgpack_packer *pk, char *err, size_t errlen)
{
	int v = strcmp(name, "config.dump.fork") == 0
		    ? atomic_load(&a->dump_fork)
		    : atomic_load(&a->dump_gc);

	(void)err, (void)errlen;
	if (v)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	return 0;
}

static int set_fork(struct vmheap_agent *a, const msgpack_object *value,
		    msgpack_packer *pk, uint64_t *job, char *err, size_t errlen)
{
	int v;

	(void)job;
	if (agent_want_bool(value, &v) < 0)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_ETYPE,
		    "config.dump.fork takes a boolean (true/false)");
	if (v && !a->host->fork_stopped)
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "this VM cannot dump in a forked child");
	atomic_store(&a->dump_fork, v);
	return get_flag(a, "config.dump.fork", pk, err, errlen);
}

static int set_gc(struct vmheap_agent *a, const msgpack_object *value,
		  msgpack_packer *pk, uint64_t *job, char *err, size_t errlen)
{
	int v;

	(void)job;
	if (agent_want_bool(value, &v) < 0)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_ETYPE,
		    "config.dump.gc takes a boolean (true/false)");
	atomic_store(&a->dump_gc, v);
	return get_flag(a, "config.dump.gc", pk, err, errlen);
}

static int get_dump_timeout(struct vmheap_agent *a, const char *name,
			    msgpack_packer *pk, char *err, size_t errlen)
{
	(void)name, (void)err, (void)errlen;
	msgpack_pack_int64(pk, atomic_load(&a->dump_timeout_s));
	return 0;
}

/* An integer from 1 to max, from an int or a decimal string. */
static int want_int(const msgpack_object *o, long max, long *out)
{
	char s[24], *end;

	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		if (o->via.u64 < 1 || o->via.u64 > (uint64_t)max)
			return -1;
		*out = (long)o->via.u64;
		return 0;
	}
	if (frame_copy_str(o, s, sizeof(s)) < 0 || !s[0])
		return -1;
	*out = strtol(s, &end, 10);
	return *end || *out < 1 || *out > max ? -1 : 0;
}

static int set_dump_timeout(struct vmheap_agent *a, const msgpack_object *value,
			    msgpack_packer *pk, uint64_t *job, char *err,
			    size_t errlen)
{
	long v;

	(void)job;
	if (want_int(value, 86400, &v) < 0)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_ETYPE,
		    "config.dump.timeout takes whole seconds from 1 to 86400");
	atomic_store(&a->dump_timeout_s, (int)v);
	return get_dump_timeout(a, "config.dump.timeout", pk, err, errlen);
}

static int get_fork_min_free(struct vmheap_agent *a, const char *name,
			     msgpack_packer *pk, char *err, size_t errlen)
{
	(void)name, (void)err, (void)errlen;
	msgpack_pack_int64(pk, agent_fork_min_free(a));
	return 0;
}

/* config.dump.fork_min_free: bytes of MemAvailable a fork dump needs (0:
 * never refuse), or "auto" for the default share of the RSS. */
static int set_fork_min_free(struct vmheap_agent *a,
			     const msgpack_object *value, msgpack_packer *pk,
			     uint64_t *job, char *err, size_t errlen)
{
	char s[32], *end;
	long long v = -1;

	(void)job;
	if (value->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    value->via.u64 <= (uint64_t)LLONG_MAX) {
		v = (long long)value->via.u64;
	} else if (frame_copy_str(value, s, sizeof(s)) == 0 && s[0]) {
		if (strcasecmp(s, "auto") != 0) {
			errno = 0;
			v = strtoll(s, &end, 10);
			if (errno || *end || v < 0)
				v = -2;
		}
	} else {
		v = -2;
	}
	if (v == -2)
		return agent_fail(err, errlen, VMHEAP_AGENT_ETYPE,
				  "config.dump.fork_min_free takes bytes (0: "
				  "never refuse a fork dump) or auto (%d%% of "
				  "the RSS)",
				  AGENT_FORK_RSS_PERCENT);
	atomic_store(&a->fork_min_free, v);
	return get_fork_min_free(a, "config.dump.fork_min_free", pk, err,
				 errlen);
}

/* system.fork_estimate and system.native.leaks inside a group (get
 * system): nil; a get of the variable itself measures (a long job off
 * the loop: fork_estimate.c, native_leaks.c). */
static int get_alone(struct vmheap_agent *a, const char *name,
		     msgpack_packer *pk, char *err, size_t errlen)
{
	(void)a, (void)pk;
	return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
			  "%s is taken by a get of its own", name);
}

static int get_config(struct vmheap_agent *a, const char *name,
		      msgpack_packer *pk, char *err, size_t errlen)
{
	char addr[160];

	(void)err, (void)errlen;
	if (!strcmp(name, "config.dump.dir")) {
		char dir[PATH_MAX];

		agent_dump_dir(a, dir, sizeof(dir));
		frame_pack_str(pk, dir);
	} else if (!strcmp(name, "config.agent.address")) {
		snprintf(addr, sizeof(addr), "tcp://%s:%u", a->bind,
			 (unsigned)a->port);
		frame_pack_str(pk, addr);
	} else if (!strcmp(name, "config.agent.max_clients")) {
		msgpack_pack_int64(pk, a->max_clients);
	} else if (!strcmp(name, "config.agent.idle_timeout_ms")) {
		msgpack_pack_int64(pk, a->idle_timeout_ms);
	} else if (!strcmp(name, "config.agent.frame_timeout_ms")) {
		msgpack_pack_int64(pk, a->frame_timeout_ms);
	} else if (!strcmp(name, "config.agent.max_frame_bytes")) {
		msgpack_pack_int64(pk, VMHEAP_MAX_FRAME_BYTES);
	} else {
		frame_pack_str(pk, a->tmpdir);
	}
	return 0;
}

/* config.dump.dir: an absolute path to a directory this process can
 * write (tried for real, dump_dir.c).  Dumps that have started keep their
 * directory; later ones are made through the fd opened here. */
static int set_dump_dir(struct vmheap_agent *a, const msgpack_object *value,
			msgpack_packer *pk, uint64_t *job, char *err,
			size_t errlen)
{
	char in[PATH_MAX], dir[PATH_MAX];
	int dfd;

	(void)job;
	if (frame_copy_str(value, in, sizeof(in)) < 0 || !in[0])
		return agent_fail(err, errlen, VMHEAP_AGENT_ETYPE,
				  "config.dump.dir takes a directory name (a "
				  "non-empty string)");
	if (in[0] != '/')
		return agent_fail(err, errlen, VMHEAP_AGENT_EPATH,
				  "%s is not an absolute path; config.dump.dir "
				  "takes one (it starts with /)",
				  in);
	dfd = agent_dump_dir_check(in, NULL, 1, dir, sizeof(dir), err, errlen);
	if (dfd < 0)
		return dfd;
	/* dead writers' leftovers, as at start */
	agent_dump_sweep(a, dfd);
	agent_dump_dir_set(a, dfd, dir);
	/* the discovery file's dump_dir follows (the console looks there
	 * for a dump whose reply it lost); on failure the old line stays */
	agent_discovery_write(a, NULL, 0);
	return get_config(a, "config.dump.dir", pk, err, errlen);
}

/* system.memory.histogram inside a group (get system.memory, list -v):
 * nil; a get of the variable itself takes the histogram (a long job). */
static int get_histogram_alone(struct vmheap_agent *a, const char *name,
			       msgpack_packer *pk, char *err, size_t errlen)
{
	(void)a, (void)pk;
	return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
			  "%s is taken by a get of its own", name);
}

static const struct var builtins[] = {
    {"config.agent.address", "string", get_config, NULL},
    {"config.agent.frame_timeout_ms", "int", get_config, NULL},
    {"config.agent.idle_timeout_ms", "int", get_config, NULL},
    {"config.agent.max_clients", "int", get_config, NULL},
    {"config.agent.max_frame_bytes", "int", get_config, NULL},
    {"config.agent.tmpdir", "string", get_config, NULL},
    {"config.dump.dir", "string", get_config, set_dump_dir},
    {"config.dump.fork", "bool", get_flag, set_fork},
    {"config.dump.fork_min_free", "int", get_fork_min_free, set_fork_min_free},
    {"config.dump.gc", "bool", get_flag, set_gc},
    {"config.dump.timeout", "int", get_dump_timeout, set_dump_timeout},
    {"config.native.track", "bool", agent_native_get_track,
     agent_native_set_track},
    {"system.argv", "array", get_argv, NULL},
    {"system.fork_estimate", "map", get_alone, NULL},
    {"system.memory.bytes", "int", get_memory_figure, NULL},
    {"system.memory.count", "int", get_memory_figure, NULL},
    {"system.memory.dump", "dump", get_last_dump, set_dump},
    {"system.memory.dumping", "bool", get_dumping, NULL},
    {AGENT_HISTOGRAM_VAR, "histogram", get_histogram_alone, NULL},
    {"system.memory.rss", "int", get_rss, NULL},
    {"system.native.bytes", "int", agent_native_get_bytes, NULL},
    {"system.native.leaks", "map", get_alone, NULL},
    {"system.native.sites", "array", agent_native_get_stacks, NULL},
    {"system.pid", "int", get_pid, NULL},
    {"system.threads.backtrace", "string", get_backtrace, NULL},
    {"system.uptime", "float", get_uptime, NULL},
    {"system.vm", "string", get_vm, NULL},
};
#define NBUILTINS (sizeof(builtins) / sizeof(*builtins))

static const struct var *find_builtin(const char *name)
{
	for (size_t i = 0; i < NBUILTINS; i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

/* ---------------------------------------------------------- the list */

struct entry {
	char *name;
	char *type;
};

struct listing {
	struct entry *e;
	size_t n, cap;
	const char *prefix;
	size_t plen;
	int nomem;
};

static int matches(const struct listing *l, const char *name)
{
	if (!l->plen)
		return 1;
	return !strncmp(name, l->prefix, l->plen) &&
	       (name[l->plen] == '\0' || name[l->plen] == '.');
}

static void add_entry(void *arg, const char *name, const char *type)
{
	struct listing *l = arg;

	if (!name || !*name || !matches(l, name))
		return;
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->e[i].name, name))
			return; /* a host variable shadowing a built-in */
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		struct entry *p = realloc(l->e, nc * sizeof(*p));
		if (!p) {
			l->nomem = 1;
			return;
		}
		l->e = p;
		l->cap = nc;
	}
	l->e[l->n].name = strdup(name);
	l->e[l->n].type = strdup(type ? type : "");
	if (!l->e[l->n].name || !l->e[l->n].type) {
		free(l->e[l->n].name);
		free(l->e[l->n].type);
		l->nomem = 1;
		return;
	}
	l->n++;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct entry *)x)->name,
		      ((const struct entry *)y)->name);
}

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].name);
		free(l->e[i].type);
	}
	free(l->e);
}

/* Every variable name under `prefix`, sorted (built-ins and host). */
static int collect(struct vmheap_agent *a, const char *prefix,
		   struct listing *l)
{
	memset(l, 0, sizeof(*l));
	l->prefix = prefix;
	l->plen = strlen(prefix);
	while (l->plen && prefix[l->plen - 1] == '.')
		l->plen--;
	for (size_t i = 0; i < NBUILTINS; i++)
		add_entry(l, builtins[i].name, builtins[i].type);
	if (a->host->list_vars)
		a->host->list_vars(a->host->ctx, add_entry, l);
	if (l->nomem) {
		listing_free(l);
		return VMHEAP_ENOMEM;
	}
	if (l->n)
		qsort(l->e, l->n, sizeof(*l->e), by_name);
	return 0;
}

int agent_var_list(struct vmheap_agent *a, const char *prefix,
		   struct agent_value *v, char *err, size_t errlen)
{
	struct listing l;
	int rc = collect(a, prefix, &l);

	if (rc < 0)
		return agent_fail(err, errlen, rc, "out of memory");
	if (l.n == 0 && *prefix) {
		listing_free(&l);
		return agent_fail(err, errlen, VMHEAP_AGENT_ENOTFOUND,
				  "no variables under \"%s\"", prefix);
	}
	msgpack_pack_map(&v->pk, l.n);
	for (size_t i = 0; i < l.n; i++) {
		frame_pack_str(&v->pk, l.e[i].name);
		frame_pack_str(&v->pk, l.e[i].type);
	}
	listing_free(&l);
	return 0;
}

/* The error for a name that is not a variable. */
static int not_found(struct vmheap_agent *a, const char *name, char *err,
		     size_t errlen)
{
	struct listing l;
	int group = 0;

	if (*name && collect(a, name, &l) == 0) {
		group = l.n > 0;
		listing_free(&l);
	}
	if (group)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_ENOTFOUND,
		    "\"%s\" is a group of variables, not one; try: list %s",
		    name, name);
	return agent_fail(err, errlen, VMHEAP_AGENT_ENOTFOUND,
			  "no such variable: \"%s\" (list shows them all)",
			  name);
}

/* One variable's value appended to v, or nil when it cannot be read
 * (a VM without backtraces, a host read that timed out). */
static void pack_value(struct vmheap_agent *a, const char *name,
		       struct agent_value *v)
{
	const struct var *b = find_builtin(name);
	struct agent_value one;
	char err[AGENT_JOB_MESSAGE_MAX];
	int rc;

	msgpack_sbuffer_init(&one.sb);
	msgpack_packer_init(&one.pk, &one.sb, msgpack_sbuffer_write);
	rc = b ? b->get(a, name, &one.pk, err, sizeof(err))
	       : host_get(a, name, &one.pk);
	if (rc == 0 && one.sb.size)
		msgpack_sbuffer_write(&v->sb, one.sb.data, one.sb.size);
	else
		msgpack_pack_nil(&v->pk);
	msgpack_sbuffer_destroy(&one.sb);
}

/* Length of the name part of e[i] from `off` to the next '.' or end. */
static size_t part_len(const struct entry *e, size_t off)
{
	return strcspn(e->name + off, ".");
}

/*
 * The variables e[0..n), which share their first `off` characters, as a
 * map from the next name part to a value, or to a map of the variables
 * below it (a tree).  A variable whose name is also the group of others
 * is left out of the tree (no such variable exists among the built-ins).
 */
static void pack_tree(struct vmheap_agent *a, const struct entry *e, size_t n,
		      size_t off, struct agent_value *v)
{
	size_t groups = 0;

	for (size_t i = 0; i < n;) {
		size_t l = part_len(&e[i], off), j = i + 1;

		while (j < n && part_len(&e[j], off) == l &&
		       !strncmp(e[j].name + off, e[i].name + off, l))
			j++;
		groups++;
		i = j;
	}
	msgpack_pack_map(&v->pk, groups);
	for (size_t i = 0; i < n;) {
		size_t l = part_len(&e[i], off), j = i + 1;

		while (j < n && part_len(&e[j], off) == l &&
		       !strncmp(e[j].name + off, e[i].name + off, l))
			j++;
		msgpack_pack_str(&v->pk, l);
		msgpack_pack_str_body(&v->pk, e[i].name + off, l);
		if (j == i + 1 && e[i].name[off + l] == '\0')
			pack_value(a, e[i].name, v);
		else if (e[i].name[off + l] == '\0')
			pack_tree(a, e + i + 1, j - i - 1, off + l + 1, v);
		else
			pack_tree(a, e + i, j - i, off + l + 1, v);
		i = j;
	}
}

/* get of a group ("system.memory"): the whole subtree as a map.
 * Returns 1 when `name` is a group and v holds the map. */
static int get_group(struct vmheap_agent *a, const char *name,
		     struct agent_value *v)
{
	struct listing l;
	size_t plen = strlen(name);

	if (!*name || name[plen - 1] == '.' || collect(a, name, &l) < 0)
		return 0;
	/* the histogram is a walk of the heap: taken by its own get only */
	for (size_t i = 0; i < l.n; i++)
		if (!strcmp(l.e[i].name, AGENT_HISTOGRAM_VAR)) {
			free(l.e[i].name);
			free(l.e[i].type);
			memmove(&l.e[i], &l.e[i + 1],
				(l.n - i - 1) * sizeof(*l.e));
			l.n--;
			break;
		}
	if (l.n == 0) {
		listing_free(&l);
		return 0;
	}
	pack_tree(a, l.e, l.n, plen + 1, v);
	listing_free(&l);
	return 1;
}

int agent_var_get(struct vmheap_agent *a, const char *name,
		  struct agent_value *v, uint64_t *job, char *err,
		  size_t errlen)
{
	const struct var *b = find_builtin(name);
	int rc;

	if (!strcmp(name, AGENT_HISTOGRAM_VAR))
		return agent_histogram_start(a, job, err, errlen);
	if (!strcmp(name, "system.fork_estimate"))
		return agent_fork_estimate_start(a, job, err, errlen);
	if (!strcmp(name, "system.native.leaks"))
		return agent_native_leaks_start(a, job, err, errlen);
	if (b)
		return b->get(a, name, &v->pk, err, errlen);
	rc = host_get(a, name, &v->pk);
	if (rc == VMHEAP_AGENT_ENOTFOUND && get_group(a, name, v))
		return 0;
	if (rc == VMHEAP_AGENT_ENOTFOUND)
		return not_found(a, name, err, errlen);
	if (rc < 0)
		return agent_fail(err, errlen, rc, "cannot read %s: %s", name,
				  vmheap_agent_strerror(rc));
	return 0;
}

int agent_var_set(struct vmheap_agent *a, const char *name,
		  const msgpack_object *value, struct agent_value *v,
		  uint64_t *job, char *err, size_t errlen)
{
	const struct var *b = find_builtin(name);
	struct agent_value probe;
	int rc;

	if (b) {
		if (!b->set)
			return agent_fail(err, errlen, VMHEAP_AGENT_EREADONLY,
					  "%s is read-only", name);
		return b->set(a, value, &v->pk, job, err, errlen);
	}
	if (a->host->set_var) {
		err[0] = '\0';
		rc = a->host->set_var(a->host->ctx, name,
				      (const vmheap_value *)(const void *)value,
				      (vmheap_value_writer *)(void *)&v->pk,
				      err, errlen);
		if (rc == VMHEAP_AGENT_ENOTFOUND && !err[0])
			return not_found(a, name, err, errlen);
		if (rc < 0 && !err[0])
			agent_fail(err, errlen, rc, "cannot set %s: %s", name,
				   vmheap_agent_strerror(rc));
		return rc < 0 ? rc : 0;
	}
	/* no setter: read-only if it exists at all */
	msgpack_sbuffer_init(&probe.sb);
	msgpack_packer_init(&probe.pk, &probe.sb, msgpack_sbuffer_write);
	rc = host_get(a, name, &probe.pk);
	msgpack_sbuffer_destroy(&probe.sb);
	if (rc == VMHEAP_AGENT_ENOTFOUND)
		return not_found(a, name, err, errlen);
	return agent_fail(err, errlen, VMHEAP_AGENT_EREADONLY,
			  "%s is read-only", name);
}
