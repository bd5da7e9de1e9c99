/*
 * native-internal.h - the pieces of the malloc tracker.
 *
 *   interpose.c  the allocator's entry points; the fast path and the
 *                tracked path, the thread's reentrancy guard, fork
 *   live.c       the lock-striped hash of the live tracked blocks:
 *                pointer -> (stack id, size); the blocks themselves are
 *                glibc's, untouched
 *   stack_table.c  the native stacks: frames and VM location -> stack id
 *   counters.c   each stack's counters, in a table per thread
 *   stack.c      taking the caller's stack (its per-thread cache,
 *                libunwind, libgcc)
 *   frames.c     the tracker's own stack walker, its rules per thread
 *   cfa.c        a code address's unwind rule, from its .eh_frame FDE
 *   files.c      the VM source files that stacks name (the location hook)
 *   modules.c    the module list (dl_iterate_phdr, build ids)
 *   got.c        routing a running process's allocator calls to a
 *                tracker that was dlopen'ed (GOT slots of every module)
 *   api.c        start, stop, snapshot (vmheap_native.h)
 *   scan.c       the leak scan of a forked child (vmheap_native_scan)
 *   chunks.c     glibc's heap as the scan reads it: the free chunks
 *   threads.c    the other threads' stack pointers, noted before a fork
 *   pages.c      the tracker's own memory, straight from mmap
 *   output_name.c  the file name a process writes (--output, --record)
 *   record*.c    recording the calls into a malloc trace (--record;
 *                record-internal.h)
 */
#ifndef VMHEAP_NATIVE_INTERNAL_H
#define VMHEAP_NATIVE_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vmheap_native.h"

/*
 * The tracker's thread-local variables.  libvmheap-malloc.so (preloaded)
 * keeps them in the static TLS block: initial-exec, a load off %fs.
 * libvmheap-malloc-attach.so (the same sources, dlopen'ed into a running
 * process by the agent: got.c) cannot, since its 80 KiB do not fit the
 * loader's spare static TLS ("cannot allocate memory in static TLS
 * block"): it is built with NATIVE_TLS_MODEL "global-dynamic" and TLS
 * descriptors (-mtls-dialect=gnu2), and each thread's block is made by
 * the loader at the thread's first use.
 */
#ifndef NATIVE_TLS_MODEL
#define NATIVE_TLS_MODEL "initial-exec"
#endif
#define NATIVE_TLS __attribute__((tls_model(NATIVE_TLS_MODEL)))

/* glibc's own allocator, under names that no preload can take. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

/*
 * The tracker's state: bit 0 is "tracking", the other bits count the
 * starts (a generation).  An allocation that began in one generation is
 * never accounted in another.
 */
extern _Atomic uint64_t native_state;

#define NATIVE_ON(state) (((state) & 1u) != 0)

/* Frames taken per allocation (VMHEAP_NATIVE_DEPTH, default 16). */
extern unsigned native_depth;

/* The VM's location hook (vmheap_native_set_location), or NULL. */
extern _Atomic(vmheap_native_location_fn) native_location;

/* Where an allocation was made: its stack and the VM's source location
 * (file NULL when none; an interned copy, see files.c). */
struct native_where {
	const uint64_t *frames;
	unsigned depth;
	const char *file;
	uint32_t line;
};

/* -------------------------------------------------------- interpose.c */

/* The tracker's entry points by names of its own (hidden aliases): inside
 * the tracker, `malloc` may be bound to glibc's (when it was dlopen'ed). */
#define NATIVE_HIDDEN __attribute__((visibility("hidden")))
NATIVE_HIDDEN void *native_malloc(size_t n);
NATIVE_HIDDEN void *native_calloc(size_t n, size_t m);
NATIVE_HIDDEN void *native_realloc(void *p, size_t n);
NATIVE_HIDDEN void *native_reallocarray(void *p, size_t n, size_t m);
NATIVE_HIDDEN void native_free(void *p);
NATIVE_HIDDEN void *native_memalign(size_t align, size_t n);
NATIVE_HIDDEN void *native_valloc(size_t n);
NATIVE_HIDDEN void *native_pvalloc(size_t n);
NATIVE_HIDDEN void *native_aligned_alloc(size_t align, size_t n);
NATIVE_HIDDEN int native_posix_memalign(void **out, size_t align, size_t n);
NATIVE_HIDDEN int native_dlclose(void *handle);

/* Non-zero when the tracker was preloaded: its `malloc` is the one the
 * process's global scope finds. */
int native_preloaded(void);
/* The definition of `name` that the tracker wraps: the next one after
 * the tracker when preloaded, else glibc's (libc.so.6), else the global
 * scope's; NULL when none. */
void *native_libc_sym(const char *name);
/* This thread's allocations are never tracked nor recorded, from now on
 * (interpose.c; the recorder's writer thread). */
void native_thread_exclude(void);
/* Between hold and drop, this thread's allocations go straight to glibc
 * (the tracked paths' own guard, for tracker code that runs outside
 * them: a thread's exit handler). */
void native_guard_hold(void);
void native_guard_drop(void);

/* ------------------------------------------------------ output_name.c */

/*
 * The file this process writes at exit for vmheap-run's --output or
 * --record NAME (the rule is in output_name.c and vmheap-run(1)): "%p"
 * expanded to `pid`; else NAME when `run_pid` (VMHEAP_RUN_PID, may be
 * NULL) is this pid, else NAME.PID.  Writes a NUL-terminated name to
 * `out`; returns 0, VMHEAP_EINVAL when NAME is NULL or empty (or outsz
 * is 0), or VMHEAP_ELIMIT when the result does not fit `outsz`.
 * Allocates nothing.
 */
int native_output_name(const char *name, const char *run_pid, long pid,
		       char *out, size_t outsz);
/* Keep VMHEAP_RUN_PID for vmheap_native_output_name (the constructor). */
void native_output_init(void);

/* ------------------------------------------------------------ pages.c */

/* Zeroed memory from mmap, NULL on failure; counted in the overhead. */
void *native_pages(size_t bytes);
/* Give back what native_pages gave. */
void native_pages_free(void *p, size_t bytes);
/* Bytes mapped now. */
uint64_t native_pages_bytes(void);
/* The memory at *slot: mapped (zeroed, `bytes`) by the first caller that
 * finds it NULL, the same for every thread that races for it; NULL when
 * no memory is left. */
void *native_pages_once(void *_Atomic *slot, size_t bytes);

/* ------------------------------------------------------ stack_table.c */

/*
 * The id (> 0) of the native stack with these frames, made if new, in the
 * generation of `state`; 0 when the tracker stopped or restarted since,
 * or when no memory is left.
 */
uint32_t native_stacks_get(const struct native_where *w, uint64_t state);
/* Forget every stack (the caller holds no lock of the tracker). */
void native_stacks_clear(void);
/* Copy out, as vmheap_native_stacks; ids[i] (when ids is not NULL) gets
 * out[i]'s stack id. */
size_t native_stacks_copy(vmheap_native_stack *out, uint32_t *ids, size_t cap);
/* Add every stack's counters into *t (stacks, live, allocs, frees). */
void native_stacks_sum(vmheap_native_totals *t);
/* Lock and unlock the stack table around fork(). */
void native_stacks_lock(void);
void native_stacks_unlock(void);

/* --------------------------------------------------------- counters.c */

/* Stack ids go from 1 to at most this. */
#define NATIVE_MAX_STACKS (4096u * 1024u)

/* A stack's counters, summed over the threads. */
struct native_counts {
	uint64_t allocs, frees, live_bytes, alloc_bytes;
};

/* Count an allocation of `bytes` at stack `id`, in the calling thread's
 * own counters (no lock, no atomic add). */
void native_count_alloc(uint32_t id, uint64_t bytes);
/* Count a free of `bytes` allocated at stack `id`. */
void native_count_free(uint32_t id, uint64_t bytes);
/* Set the counters of stack `id` to zero in every thread (a new stack: its
 * id may have been another's before a stop). */
void native_counters_zero(uint32_t id);
/* The sums of stack `id`'s counters. */
void native_counters_sum(uint32_t id, struct native_counts *sum);
/* Make the key that frees a thread's counters when it exits (from the
 * constructor). */
void native_counters_init(void);
/* Around fork(): lock the list of free tables; the parent unlocks, and
 * the child (native_counters_after_fork) frees every other thread's
 * table and unlocks. */
void native_counters_lock(void);
void native_counters_unlock(void);
void native_counters_after_fork(void);

/* ------------------------------------------------------------- live.c */

/*
 * Record live allocation p of `size` bytes from stack `id`, and count it
 * at the stack, if the tracker is still in generation `state`.  A record
 * already there for p (its block was freed past the tracker, by a library
 * bound to glibc's free) is counted freed and replaced.
 */
void native_live_add(void *p, uint64_t size, uint32_t id, uint64_t state);
/*
 * Forget p if it is tracked and count the free at its stack; *size gets
 * its size and the return is its stack id, or 0 when p was not tracked.
 */
uint32_t native_live_remove(void *p, uint64_t *size);
/* Put back a record that native_live_remove took (a failed realloc),
 * without counting anything. */
void native_live_restore(void *p, uint64_t size, uint32_t id,
			 uint64_t state);
/* Forget every live allocation. */
void native_live_clear(void);
/*
 * Call block(ptr, size, stack id, arg) for every live record, and
 * table(p, bytes, arg) (when not NULL) for each piece of memory the
 * records are kept in.  Takes no lock: for a forked child, where no other
 * thread runs (the leak scan, scan.c).
 */
typedef void (*native_live_block_fn)(uint64_t ptr, uint64_t size, uint32_t id,
				     void *arg);
typedef void (*native_live_table_fn)(const void *p, size_t bytes, void *arg);
void native_live_foreach(native_live_block_fn block, native_live_table_fn table,
			 void *arg);
/* Lock and unlock every stripe around fork(). */
void native_live_lock(void);
void native_live_unlock(void);

/* ----------------------------------------------------------- chunks.c */

struct native_chunks {
	uint64_t tcache_key; /* 0: none learnt (no tcache) */
};
typedef void (*native_chunk_span_fn)(uint64_t lo, uint64_t hi, void *arg);
/* In the forked child, before the walks: consolidate glibc's fast bins
 * into its bins (malloc_trim(0), in the child's copy only) and learn the
 * tcache key.  Allocates through glibc directly, never tracked. */
void native_chunks_prepare(struct native_chunks *c);
/*
 * Walk glibc's chunks from chunk address `at` to chunk address `to`
 * inside a heap mapping that ends at `end` (readable up to there): first
 * checks that the size words lead exactly from `at` to `to`, then calls
 * span(lo, hi, arg) for the bytes of each free chunk past its header.
 * Returns 0, or -1 (nothing called) when the size words do not lead to
 * `to` (not a glibc heap, or a block freed past the tracker).
 */
int native_chunks_free(const struct native_chunks *c, uint64_t at, uint64_t to,
		       uint64_t end, native_chunk_span_fn span, void *arg);
/* The address of the chunk header that follows the glibc block at
 * `block` (glibc's free lists and its top pointer point there, inside
 * the block's last usable bytes), or 0 for an mmapped block. */
uint64_t native_chunk_next_header(uint64_t block);
/* The bytes of the glibc block at `block`, which the program asked `size`
 * bytes of, past `size` up to glibc's usable size (malloc_usable_size,
 * read from its size word); 0 when the size word does not fit a block of
 * that size (a block freed behind the tracker's back). */
uint16_t native_chunk_slack(uint64_t block, uint64_t size);

/* ---------------------------------------------------------- threads.c */

/* The lowest stack pointer noted by vmheap_native_scan_prepare inside
 * [lo, hi), or 0. */
uint64_t native_threads_sp_in(uint64_t lo, uint64_t hi);
/* Forget the noted stack pointers (the parent, after every fork). */
void native_threads_forget(void);
/* The stack pointer of a /proc/PID/task/TID/syscall text ("nr a1 .. a6
 * sp pc", NUL-terminated), or 0 when there is none ("running", -1, a
 * short or malformed line). */
uint64_t native_threads_parse_sp(const char *text);

/* ------------------------------------------------------------ stack.c */

/* The native stack id that a cached C stack was last found to be, with the VM's
 * location and the tracker's state then (0: none yet). */
struct native_id_memo {
	uint64_t state;
	const char *file;
	uint32_t line, id;
};

/* The caller's stack, innermost first, without the tracker's own frames:
 * at most `max` return addresses.  Returns how many.  *memo is the
 * stack's memo in the thread's stack cache, or NULL when it is not
 * cached (valid until the thread's next call). */
unsigned native_stack(uint64_t *frames, unsigned max,
		      struct native_id_memo **memo);
/*
 * The fast path: the memo of the caller's stack when the thread's stack
 * cache holds that stack, else NULL (then native_stack finds it).  `fp`
 * is a frame pointer of the tracker's, the caller's own frame: the walk
 * to the first frame outside the tracker starts there.  It copies no
 * frames: a stack seen before, with its id known, needs none.
 */
struct native_id_memo *native_stack_memo(void *fp);
/* Find the tracker's own code range (once, from the constructor). */
void native_stack_init(void);

/* ----------------------------------------------------------- frames.c */

/* Find libgcc's FDE lookup (once, from the constructor). */
void native_frames_init(void);
/* Whether the walker can run (libgcc_s.so.1 was found). */
int native_frames_ready(void);
/* Whether ip lies in libgcc_s's code: an allocation made there must not
 * be unwound through libgcc (frames.c says why). */
int native_frames_in_libgcc(uint64_t ip);
/* Forget every thread's rules (after a dlclose: the code they describe
 * may be gone).  Each thread relearns a rule at its next use. */
void native_frames_forget(void);

#define FRAMES_UNSUPPORTED (-1)

/*
 * Walk the stack from the return address at slot0 (the first frame
 * outside the tracker; rbp is the caller's rbp then), reading only inside
 * [slot0, hi): at most max frames into frames, with the address each was
 * read from in slots.  Returns how many, or FRAMES_UNSUPPORTED when a
 * frame's unwind rule is one the walker does not model, or the
 * allocation comes from libgcc itself (then unwind the stack some other
 * way, not through libgcc).
 */
int native_frames_walk(uint64_t slot0, uint64_t rbp, uintptr_t lo,
		       uintptr_t hi, uint64_t *frames, uint64_t *slots,
		       unsigned max);

/* -------------------------------------------------------------- cfa.c */

enum { NATIVE_CFA_OK, NATIVE_CFA_UNSUPPORTED, NATIVE_CFA_END };

/* Where a frame's CFA is (rsp or, cfa_rbp set, rbp plus cfa_off) and
 * where its caller's rbp was saved (CFA plus rbp_off; 0: rbp unchanged). */
struct native_cfa_rule {
	int cfa_rbp;
	int64_t cfa_off, rbp_off;
};

/*
 * The rule at code address pc from the FDE at fde (its length word) of a
 * function starting at func, reading only inside [lo, hi) (the FDE and
 * its CIE).  NATIVE_CFA_OK fills *out; NATIVE_CFA_END: pc's return address
 * is undefined (the outermost frame); NATIVE_CFA_UNSUPPORTED: malformed,
 * or a rule the walker does not model (DWARF expressions, a signal
 * frame, the return address elsewhere than CFA - 8).
 */
int native_cfa_rule(uintptr_t lo, uintptr_t hi, const uint8_t *fde,
		    uint64_t func, uint64_t pc, struct native_cfa_rule *out);

/* ------------------------------------------------------------ files.c */

/* The tracker's copy of path s (NUL-terminated, never freed: one pointer
 * per distinct path), or NULL when no memory is left. */
const char *native_file_intern(const char *s);
/* Lock and unlock the file table around fork(). */
void native_files_lock(void);
void native_files_unlock(void);

#endif
