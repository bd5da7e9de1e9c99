/*
 * ruby-internal.h - private interfaces of the Ruby host (vmheap_agent.so).
 *
 * The Ruby host joins MRI to libvmheap-agent.  Its parts:
 *
 *   ruby_agent.c   Init_vmheap_agent: the host struct, start at load, stop
 *                  at exit, a fresh agent after Process._fork in a child.
 *   ruby_worker.c  the "vmheap-agent" Ruby thread.  The agent's own
 *                  threads are plain pthreads that may not touch Ruby; they
 *                  post jobs here, and this thread runs them holding the
 *                  GVL.
 *   ruby_walk.c    walk_heap: every object, class and root into a writer,
 *                  without allocating a Ruby object.
 *   ruby_class_table.c  VALUE -> dense class id map (C heap only).
 *   ruby_vars.c    host variables: system.gc.*, system.threads.backtrace.
 *   ruby_names.c   names on references and roots (format 1.1 edge names):
 *                  @ivar, ::CONST, hash keys, array indices, $global;
 *                  ruby_name_text.c how they read, ruby_name_strings.c
 *                  each text once as a string record, ruby_name_globals.c
 *                  the globals of a dump child, ruby_names_var.c
 *                  config.dump.names, ruby_name_layout.c the locals of
 *                  an environment and a thread's name,
 *                  ruby_names_ivars.c a plain object's ivars by its
 *                  class's layout.
 *   ruby_imemo.c   imemo types ("<imemo:iseq>") and an iseq's location.
 *   ruby_alloc_sites.c  the allocation tracer (config.trace.allocations),
 *                  on ruby_site_table.c (sites interned to ids) and
 *                  ruby_object_table.c (object -> site id).
 *   ruby_dump_sites.c   the site of each object a dump writes.
 *
 * Ruby's own headers warn under -Wextra; the build includes them with
 * -isystem (see hosts/ruby/ruby.mk).
 */
#ifndef VMHEAP_RUBY_INTERNAL_H
#define VMHEAP_RUBY_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <ruby.h>

#include "vmheap.h"
#include "vmheap_agent.h"

/*
 * MRI exports these from libruby but declares them only in its internal
 * headers (ext/objspace uses them the same way).  Prototypes as in Ruby
 * 3.1's gc.c.
 */
void rb_objspace_each_objects(int (*callback)(void *start, void *end,
					      size_t stride, void *data),
			      void *data);
void rb_objspace_reachable_objects_from(VALUE obj,
					void (*func)(VALUE obj, void *data),
					void *data);
void rb_objspace_reachable_objects_from_root(
    void (*func)(const char *category, VALUE obj, void *data), void *data);
size_t rb_obj_memsize_of(VALUE obj);

/* ------------------------------------------------------------ worker */

/* A job for the Ruby thread: fn(arg) runs with the GVL held. */
struct ruby_job {
	int (*fn)(void *arg);
	void *arg;
	int result;
	int state; /* JOB_PENDING, JOB_RUNNING, JOB_DONE (ruby_worker.c) */
	struct ruby_job *next;
};

/*
 * Create the "vmheap-agent" Ruby thread.  Call with the GVL held (from
 * Init or after a fork).  Returns 0 or -1 if the thread could not be
 * created (a Ruby exception is raised instead when Ruby refuses).
 */
int ruby_worker_start(void);

/* End the "vmheap-agent" thread (Thread#kill, then join; queued jobs
 * fail): after an agent that could not start, so that a program without
 * an agent has no extra thread.  Holding the GVL. */
void ruby_worker_stop(void);

/*
 * Run fn(arg) on the Ruby thread, holding the GVL, and return its result.
 * Called from any non-Ruby thread (the agent's loop or dump thread).
 * Waits at most `timeout_ms` for the job to START (-1: forever); a job
 * that started always runs to completion and is waited for.  Returns
 * VMHEAP_AGENT_ETIMEOUT when it did not start in time, and
 * VMHEAP_AGENT_EDUMP when the Ruby thread is gone (the VM is exiting).
 */
int ruby_worker_run(int (*fn)(void *arg), void *arg, int timeout_ms);

/* Non-zero on the Ruby worker thread while it runs a job. */
int ruby_worker_in_job(void);

/*
 * In a child after fork(2): the Ruby thread and every waiter are gone.
 * Reinitialise the lock, drop the queue and mark the worker stopped.
 */
void ruby_worker_after_fork_child(void);

/* ------------------------------------------------------------ walk */

/* Kind names: index = Ruby's T_ type value (ruby/internal/value_type.h). */
extern const char *const ruby_kind_names[];
extern const size_t ruby_kind_count;

/*
 * Write every live heap object, its class and every root into `w`.  Runs
 * on a Ruby thread holding the GVL (or in a forked child on that thread).
 * Disables the GC for the walk and allocates no Ruby object.
 */
int ruby_walk_heap(vmheap_writer *w);

/* ------------------------------------------------------------ classes */

/* Open-addressing map from a non-zero key (a class VALUE or a small
 * pseudo key; the names use it for IDs, objects and text hashes) to a
 * dense id starting at 1.  C heap only. */
struct ruby_class_table {
	uint64_t *keys; /* 0 = empty slot */
	uint32_t *ids;
	size_t cap; /* power of two */
	size_t count;
};

void ruby_class_table_init(struct ruby_class_table *t);

/* The id of `key`, or 0 when absent. */
uint32_t ruby_class_table_get(const struct ruby_class_table *t, uint64_t key);

/* Insert `key` with the next dense id and return it, or 0 when out of
 * memory.  `key` must be absent and non-zero. */
uint32_t ruby_class_table_add(struct ruby_class_table *t, uint64_t key);

void ruby_class_table_free(struct ruby_class_table *t);

/* ------------------------------------------------------------ vars */

/*
 * Learn the GC.stat key names (with the GVL, at load): list_vars runs on
 * the agent's loop thread and may not call Ruby.  Returns 0 or -1.
 */
int ruby_vars_init(void);

void ruby_vars_list(void *ctx,
		    void (*add)(void *arg, const char *name, const char *type),
		    void *arg);
int ruby_vars_get(void *ctx, const char *name, vmheap_value_writer *pk);
int ruby_vars_set(void *ctx, const char *name, const vmheap_value *value,
		  vmheap_value_writer *pk, char *err, size_t errlen);

/* ------------------------------------------------------------ imemo */

/* The imemo type of a T_IMEMO object (MRI's enum imemo_type). */
int ruby_imemo_type(VALUE obj);

/* "<imemo:iseq>", ... for an imemo type, into buf; returns its length
 * (snprintf's). */
int ruby_imemo_class_name(int type, char *buf, size_t size);

/* For an instruction sequence (a T_IMEMO of type iseq): its file (owned
 * by the iseq) and first line, and 1; 0 for any other imemo or an iseq
 * without a location yet.  Allocates nothing. */
int ruby_iseq_location(VALUE obj, const char **file, size_t *file_len,
		       uint64_t *line);

/* Non-zero when an iseq's file names eval'd code without a file
 * ("(eval)"). */
int ruby_iseq_from_eval(const char *file, size_t file_len);

/* ------------------------------------------------------------ sites */

/* An allocation site: copies of its text, NUL-terminated. */
struct ruby_site {
	char *file;
	size_t file_len;
	uint64_t line;
	char *method; /* "" when unknown */
	size_t method_len;
	uint64_t hash;
};

/* Sites interned by content to dense ids from 1 (ruby_site_table.c). */
struct ruby_site_table {
	struct ruby_site *sites; /* id - 1 */
	size_t count, cap;
	uint32_t *slots; /* index by hash: site ids, 0 = empty */
	size_t nslots;
	size_t bytes; /* C memory held */
};

void ruby_site_table_init(struct ruby_site_table *t);

/* The id of (file, line, method), added (and *added set) when new; 0
 * when out of memory. */
uint32_t ruby_site_table_intern(struct ruby_site_table *t, const char *file,
				size_t file_len, uint64_t line,
				const char *method, size_t method_len,
				int *added);

/* The site of `id`, or NULL. */
const struct ruby_site *ruby_site_table_get(const struct ruby_site_table *t,
					    uint32_t id);

void ruby_site_table_free(struct ruby_site_table *t);

/* Object VALUE -> site id (ruby_object_table.c): per 64 KiB heap page an
 * array of site ids, found through a directory of pages. */
struct ruby_object_page;
struct ruby_object_dir {
	uint64_t page; /* VALUE >> 16; 0 = empty entry */
	struct ruby_object_page *p; /* NULL: no traced object there now */
};
struct ruby_object_table {
	struct ruby_object_dir *dir;
	size_t dir_cap, dir_len;
	struct ruby_object_dir *last; /* the entry used last */
	size_t pages;		      /* arrays allocated */
	size_t count;		      /* objects */
};

void ruby_object_table_init(struct ruby_object_table *t);
/* Map key (non-zero) to site, replacing an old entry.  0, or -1 when out
 * of memory (the table is unchanged). */
int ruby_object_table_set(struct ruby_object_table *t, uint64_t key,
			  uint32_t site);
/* The site of key, or 0. */
uint32_t ruby_object_table_get(struct ruby_object_table *t, uint64_t key);
void ruby_object_table_remove(struct ruby_object_table *t, uint64_t key);
/* After objects moved (GC.compact): each entry goes to the key where(key)
 * gives (the object's address now; its own when it did not move).
 * Returns how many entries could not be moved for want of memory (they
 * stay at their old keys, so those objects read as untraced). */
size_t ruby_object_table_move(struct ruby_object_table *t,
			      uint64_t (*where)(uint64_t key));
size_t ruby_object_table_bytes(const struct ruby_object_table *t);
void ruby_object_table_free(struct ruby_object_table *t);

/* ------------------------------------------------------------ tracer */

/* The tracer (ruby_alloc_sites.c).  All with the GVL held. */
int ruby_alloc_sites_on(void);
/* The tracer's site id of obj (0: none recorded, or tracing is off). */
uint32_t ruby_alloc_site_of(VALUE obj);
/* The tracer's site `id`, or NULL. */
const struct ruby_site *ruby_alloc_site(uint32_t id);
/* How many sites the tracer holds. */
uint32_t ruby_alloc_site_count(void);

/* Its variables, for ruby_vars.c: list, get (VMHEAP_AGENT_ENOTFOUND for
 * another name), set (the host's set_var; VMHEAP_AGENT_ENOTFOUND with an
 * empty err for another name). */
void ruby_alloc_sites_list(void (*add)(void *arg, const char *name,
				       const char *type),
			   void *arg);
int ruby_alloc_sites_get(const char *name, vmheap_value_writer *pk);
int ruby_alloc_sites_set(void *ctx, const char *name, const vmheap_value *value,
			 vmheap_value_writer *pk, char *err, size_t errlen);

/* The sites of one dump (ruby_dump_sites.c). */
struct ruby_dump_sites {
	vmheap_writer *w;
	struct ruby_site_table table; /* the dump's ids */
	uint64_t *traced;	      /* tracer id -> dump id (0: not yet) */
	size_t ntraced;
};

void ruby_dump_sites_init(struct ruby_dump_sites *ds, vmheap_writer *w);
void ruby_dump_sites_free(struct ruby_dump_sites *ds);

/* The dump's site id of obj (0: none), writing the site record before its
 * first use.  0 or a negative code (writer, memory). */
int ruby_dump_site_of(struct ruby_dump_sites *ds, VALUE obj, int type,
		      uint64_t *site);

/* ------------------------------------------------------------ names */

/* ruby_name_text.c: how a name reads.  Texts built here are at most
 * RUBY_NAME_MAX_BYTES - 1 bytes; a hash key's text is cut at
 * RUBY_NAME_KEY_MAX bytes and ends in "...". */
#define RUBY_NAME_MAX_BYTES 512
#define RUBY_NAME_KEY_MAX 64
/* A Hash of more entries names no value by its key (ruby_names.c): each
 * distinct key text costs a string record (a 1M-entry Hash with String
 * keys made a dump 1.8x larger and its walk 2-2.7x slower). */
#define RUBY_NAME_HASH_MAX 10000

/* Append s[0..slen-1] to buf (holding *len bytes), cut at the limit. */
void ruby_name_put(char *buf, size_t *len, const char *s, size_t slen);

/* Append s quoted as Ruby's inspect quotes a String ("a\"b"), the
 * escapes making it valid UTF-8; cut after RUBY_NAME_KEY_MAX bytes of s
 * with "...". */
void ruby_name_put_quoted(char *buf, size_t *len, const char *s, size_t slen);

/* The name of a Hash value by its key into buf (RUBY_NAME_MAX_BYTES):
 * [:sym], ["text"], [42]; returns its length, 0 for other keys. */
size_t ruby_name_key_text(VALUE key, char *buf);

/* ruby_name_strings.c: each name text once, as a string record. */
#define RUBY_NAME_ROOT_IDS (UINT64_C(1) << 32) /* first id of root names */

struct ruby_name_strings {
	vmheap_writer *w;
	uint64_t next_id[2];		 /* reference names, root names */
	struct ruby_class_table index;	 /* text hash -> dense index */
	size_t *off, *len, cap;		 /* each index's text in arena */
	uint64_t *id;			 /* each index's string id */
	char *arena;
	size_t arena_len, arena_cap;
};

/* Reference names take string ids from first_id up (it must be below
 * RUBY_NAME_ROOT_IDS). */
void ruby_name_strings_init(struct ruby_name_strings *s, vmheap_writer *w,
			    uint64_t first_id);

/* The string id of `text` in *id, writing its string record the first
 * time, with an id of the root range when `root` is non-zero.  0,
 * VMHEAP_ENOMEM or the writer's error. */
int ruby_name_strings_id(struct ruby_name_strings *s, const char *text,
			 size_t len, int root, uint64_t *id);

void ruby_name_strings_free(struct ruby_name_strings *s);

/* ruby_names_ivars.c: a plain object's instance variables by its class's
 * ivar layout, learnt once per class (C heap only). */
struct ruby_ivar_layout;
struct ruby_ivar_layouts {
	struct ruby_class_table classes; /* class -> layouts[id - 1] */
	struct ruby_ivar_layout *layouts;
	size_t count, cap;
};

void ruby_ivar_layouts_init(struct ruby_ivar_layouts *t);
void ruby_ivar_layouts_free(struct ruby_ivar_layouts *t);

/* The name of ivar `id` (0: none); cached per class layout. */
typedef int64_t (*ruby_ivar_name_fn)(ID id, void *arg);
/* A reference of the object to `value` under `name`; < 0 stops. */
typedef int (*ruby_ivar_ref_fn)(VALUE value, int64_t name, void *arg);

/*
 * Call ref(value, name, arg) for each instance variable of obj that holds
 * a heap object, in rb_ivar_foreach's order (name from name_of(id, arg),
 * asked once per class and ivar), and return 1; or return 0 without
 * calling either when obj is no T_OBJECT or its class's layout does not
 * cover it (then use rb_ivar_foreach).  Allocates no Ruby object; out of
 * memory, it returns 0.
 */
int ruby_ivar_layouts_each(struct ruby_ivar_layouts *t, VALUE obj,
			   ruby_ivar_name_fn name_of, ruby_ivar_ref_fn ref,
			   void *arg);

/* ruby_names.c: the names of a walk. */

/* The names of one walk: a string table and scratch space (C heap). */
struct ruby_names;

/*
 * Start naming for a walk writing into `w`; name strings take string ids
 * from `first_string_id` up.  Sets *out to NULL and returns 0 when
 * config.dump.names is false; returns VMHEAP_ENOMEM or a writer error.
 */
int ruby_names_open(struct ruby_names **out, vmheap_writer *w,
		    uint64_t first_string_id);

/*
 * The names of obj's references refs[0..nrefs-1] (as reported by
 * rb_objspace_reachable_objects_from), one per reference as in
 * vmheap_writer_add_object_named, or NULL when none has a name.  The
 * array is valid until the next call.  Writes the string records of new
 * names first.  Allocates no Ruby object.
 */
const int64_t *ruby_names_for_object(struct ruby_names *n, VALUE obj,
				     int type, const uint64_t *refs,
				     size_t nrefs);

/*
 * The names of the references of Thread `th` (nrefs of them): all
 * "stack of thread 0x... [main]" (FORMAT.md "Stack and internal
 * references").  MRI marks a thread's VM stack, its machine stack and its
 * few own fields (the block it runs, its locals, its group) in one mark
 * function, and which reference came from where cannot be told from
 * outside without its private layouts: all are the thread's stack.
 * Allocates no Ruby object; NULL after an error (ruby_names_error).
 */
const int64_t *ruby_names_of_thread_stack(struct ruby_names *n, VALUE th,
					  size_t nrefs);

/* The name string id of a root of MRI's `category` holding obj, or 0. */
uint64_t ruby_names_for_root(struct ruby_names *n, const char *category,
			     VALUE obj);

/* The first error of the walk's naming (0: none). */
int ruby_names_error(const struct ruby_names *n);

void ruby_names_close(struct ruby_names *n);

/*
 * In a forked dump child, before its GC: learn the global variables and
 * their values (which needs Ruby calls that allocate), keeping only C
 * copies (ruby_name_globals.c).  In-process dumps go without.
 */
void ruby_names_prepare_child(void);

/* ruby_free_slots.c: in a dump's forked child, while the malloc tracker
 * tracks, zero the stale words of every free heap slot (past its flags
 * and free-list link) so that the leak scan does not take them for
 * pointers. */
void ruby_clear_free_slots(void);

/* ruby_peek.c: copy len bytes of this process at addr into buf through
 * process_vm_readv: 0, or -1 where they are not all readable (no
 * SIGSEGV). */
int ruby_peek(uint64_t addr, void *buf, size_t len);

/* ruby_vm_stacks.c: in a dump's forked child, while the malloc tracker
 * tracks, zero the dead part of each Ruby thread's VM stack (above the
 * current frame's values, below its frames) and its signal stack, where
 * the layout checks out; a thread whose layout does not is left as it
 * is. */
void ruby_clear_dead_vm_stacks(void);

/* ruby_transient_heap.c: in a dump's forked child, while the malloc
 * tracker tracks, zero the free part of each block of MRI's transient
 * heap, where the layout checks out; a block whose layout does not is left
 * as it is.  Allocates one Array. */
void ruby_clear_transient_heap(void);

/* ruby_st_tables.c: in a dump's forked child, while the malloc tracker
 * tracks, zero the keys and values of the deleted and unused entries of
 * the st tables that rb_vm_t holds, where a table's layout checks out. */
void ruby_clear_vm_st_tables(void);
/* The same for the struct st_table at `at`, if its layout checks out. */
void ruby_clear_st_table(uint64_t at);

/* ruby_array_tails.c: in a dump's forked child, while the malloc tracker
 * tracks, zero each Array's words past its length (in its slot or its
 * body; an Array that shares its elements is left alone), and each
 * Hash's entries past its bound or deleted. */
void ruby_clear_array_tails(void);

/* A global variable learnt by ruby_names_prepare_child. */
struct ruby_name_global {
	VALUE value;
	char *text; /* "$audit" */
};

/* The globals learnt (none outside a dump child); *count of them. */
const struct ruby_name_global *ruby_name_globals(size_t *count);

/* config.dump.names (bool, default true): the host variable
 * (ruby_names_var.c). */
int ruby_names_enabled(void);
void ruby_names_list_var(void (*add)(void *arg, const char *name,
				     const char *type),
			 void *arg);
int ruby_names_get_var(const char *name, vmheap_value_writer *pk);
int ruby_names_set_var(const char *name, const vmheap_value *value,
		       vmheap_value_writer *pk, char *err, size_t errlen);

/* ruby_name_layout.c: what names read of MRI's private structures. */

/* Learn the layouts (at load, with the GVL; runs a little Ruby code):
 * locals are named only when a probe confirms them. */
void ruby_name_layout_init(void);

/* Non-zero when environments' locals can be named. */
int ruby_name_layout_locals_known(void);

/* Learn where rb_thread_t keeps Thread#name from `thread`, which has a
 * name (at load, with the GVL: calls Thread#name once). */
void ruby_name_layout_learn_thread(VALUE thread);

/* An environment's local variables: ids[i] names values[i]. */
struct ruby_env_locals {
	const ID *ids;
	const VALUE *values;
	unsigned int count;
	VALUE iseq; /* the code whose locals they are */
};

/* The locals of `env` (a T_IMEMO env) in *out and 1; 0 when it has none
 * or their layout is unknown.  Reads only. */
int ruby_env_locals(VALUE env, struct ruby_env_locals *out);

/* An iseq's label ("<main>", "block in run", "leak"), a String it holds,
 * or Qnil. */
VALUE ruby_iseq_label_string(VALUE iseq);

/* Thread#name of a Thread as the String the thread holds, or Qnil (no
 * name, or its place unknown).  Reads only. */
VALUE ruby_thread_name_string(VALUE thread);

/* The VM-internal holders a walk labels: the symbol table and the objects
 * registered with rb_gc_register_mark_object, with the hidden Arrays they
 * are made of (members[0]: the table's chunks, members[1]: the buckets;
 * sorted).  All zero when they are unknown. */
struct ruby_vm_tables {
	VALUE symbols, registered;
	VALUE *members[2];
	size_t n[2], cap[2];
};

/* Read the tables as they are now (C heap only): 0, or VMHEAP_ENOMEM. */
int ruby_vm_tables_open(struct ruby_vm_tables *t);

/* "<symbol table>", "<registered objects>" for the tables and their
 * parts, NULL for any other object. */
const char *ruby_vm_table_label(const struct ruby_vm_tables *t, VALUE obj);

void ruby_vm_tables_close(struct ruby_vm_tables *t);

/* ------------------------------------------------------- ruby_native.c */

/* Give the malloc tracker the Ruby file:line of each allocation made by a
 * thread that holds the GVL (0), or -1 when the tracker is not loaded. */
int ruby_native_init(void);
/* Take that back (at exit, before the VM goes). */
void ruby_native_stop(void);

#endif /* VMHEAP_RUBY_INTERNAL_H */
