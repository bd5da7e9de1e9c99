/*
 * vmheap_native.h - the native (malloc) tracker's C API.
 *
 * libvmheap-malloc.so is loaded with LD_PRELOAD (vmheap-run does it);
 * libvmheap-malloc-attach.so, the same built for dlopen, is loaded by the
 * agent into a running process and routed to with vmheap_native_route.  It
 * interposes the C allocator's entry points (malloc, calloc, realloc,
 * free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc,
 * malloc_usable_size) and forwards each to glibc.  Until tracking is
 * started, that is all it does: one predictable branch per call.  While
 * tracking, each live allocation is accounted to its native stack, the
 * return addresses (at most VMHEAP_NATIVE_MAX_FRAMES, innermost first)
 * that led to the allocation, and to the VM location the VM gave (see
 * vmheap_native_set_location).  ("Site" is kept for the allocation sites
 * of managed objects, vmheap.h's site records; the tracker never says it.)
 *
 * A program that does not link the tracker (the agent) finds these
 * functions at run time with dlsym (the agent looks for the loaded module
 * by name first, so that no dlsym fails when it is absent); the typedefs
 * below are their types.  All functions are
 * thread-safe, never allocate with malloc, and never print.
 *
 * Errors: vmheap.h's convention (the one of every vmheap header), with
 * codes only: a function that can fail returns 0 or a negative
 * VMHEAP_E... code.  The tracker has no object to keep a message in and
 * runs inside malloc, where it cannot format one: the code is the whole
 * story.
 */
#ifndef VMHEAP_NATIVE_H
#define VMHEAP_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h" /* VMHEAP_EXPORT */

#ifdef __cplusplus
extern "C" {
#endif

/* The most frames a stack holds. */
#define VMHEAP_NATIVE_MAX_FRAMES 32

/* One native stack, copied out by vmheap_native_stacks(). */
typedef struct vmheap_native_stack {
	uint32_t depth;                              /* frames used */
	uint64_t frames[VMHEAP_NATIVE_MAX_FRAMES];   /* return addresses */
	uint64_t live_count; /* allocations from here not yet freed */
	uint64_t live_bytes; /* their requested bytes */
	uint64_t allocs;     /* allocations since tracking began */
	uint64_t frees;      /* frees of those since tracking began */
	uint64_t alloc_bytes; /* bytes requested since tracking began */
	/* The VM location of the allocations (see
	 * vmheap_native_set_location): file NULL when there was none.  The
	 * string is the tracker's copy and stays valid while the process
	 * lives. */
	const char *vm_file;
	uint32_t vm_line;
} vmheap_native_stack;

/* The tracker's totals over all stacks. */
typedef struct vmheap_native_totals {
	uint64_t stacks;     /* distinct native stacks */
	uint64_t live_count; /* live tracked allocations */
	uint64_t live_bytes; /* their requested bytes */
	uint64_t allocs;     /* allocations since tracking began */
	uint64_t frees;      /* frees of tracked allocations */
	uint64_t overhead_bytes; /* memory the tracker maps for its tables */
} vmheap_native_totals;

/* One loaded module (the program, a shared library, the vDSO). */
typedef struct vmheap_native_module {
	const char *path;   /* "" for the main program when the loader
			       gives no name: then see /proc/self/exe */
	uint64_t base;      /* load address (the ELF's l_addr) */
	uint64_t text_lo, text_hi; /* its executable segments' range */
	const uint8_t *build_id; /* GNU build id, NULL if none */
	size_t build_id_len;
} vmheap_native_module;

/* Called once per module; a non-zero return stops the walk. */
typedef int (*vmheap_native_module_fn)(const vmheap_native_module *m,
				       void *arg);

/*
 * Start tracking (a no-op when already on).  Allocations made from now on
 * are accounted; those made before are not (their frees are ignored).
 * Returns 0 (nothing in it can fail today;
 * the int is kept for the callers that check it).
 */
VMHEAP_EXPORT int vmheap_native_start(void);

/* Stop tracking and forget every stack and live allocation. */
VMHEAP_EXPORT void vmheap_native_stop(void);

/* Non-zero while tracking. */
VMHEAP_EXPORT int vmheap_native_tracking(void);

/*
 * Copy up to `cap` stacks into `out` (may be NULL when cap is 0), in no
 * particular order.  Returns the number of stacks the tracker holds, which
 * may be more than `cap`: call again with a larger buffer for all of them.
 */
VMHEAP_EXPORT size_t vmheap_native_stacks(vmheap_native_stack *out, size_t cap);

/* Fill *t with the totals (all zero when tracking is off). */
VMHEAP_EXPORT void vmheap_native_get_totals(vmheap_native_totals *t);

/*
 * Call `fn` for each loaded module, in the loader's order (the main
 * program first).  Returns fn's first non-zero value, or 0.  The module's
 * strings are valid only during the call.
 */
VMHEAP_EXPORT int vmheap_native_modules(vmheap_native_module_fn fn,
					void *arg);

/*
 * The location hook: a VM's host (the Ruby agent does) tells the tracker
 * how to read the VM's current source location, so that an allocation
 * made while the VM runs code also names the line of that code (for
 * Ruby, the line of the Ruby method that called Fiddle.malloc or a C
 * extension).  Allocations are then told apart by their stack and that
 * location.
 *
 * The tracker calls fn on the allocating thread, inside malloc, for each
 * tracked allocation.  fn sets *file (a NUL-terminated path, read only
 * during the call: the tracker copies it once) and *line and returns
 * non-zero, or returns 0 when the thread has no location (it is not a VM
 * thread, or does not hold the VM's lock).  fn must be cheap and must not
 * wait for a lock; an allocation it makes is forwarded to the C allocator
 * untracked.
 */
typedef int (*vmheap_native_location_fn)(const char **file, uint32_t *line);

/* Set the location hook, or remove it with NULL.  A call of the old hook
 * that is under way on another thread may still finish after this
 * returns; remove the hook before what it reads goes away. */
VMHEAP_EXPORT void vmheap_native_set_location(vmheap_native_location_fn fn);

/* One stack's live blocks as the leak scan classified them. */
typedef struct vmheap_native_leaks {
	uint64_t leaked_count, leaked_bytes;     /* nothing points at them */
	uint64_t indirect_count, indirect_bytes; /* only leaked blocks do */
	uint64_t possible_count, possible_bytes; /* only into their interior */
	uint64_t reachable_count, reachable_bytes;
} vmheap_native_leaks;

/* What a leak scan did. */
typedef struct vmheap_native_scan_info {
	uint64_t blocks;           /* tracked blocks classified */
	uint64_t root_bytes;       /* bytes read as roots */
	uint64_t skipped_mappings; /* writable mappings that could not be read */
	uint64_t skipped_bytes;    /* their size */
	uint64_t scan_ns;          /* the scan's time (CLOCK_MONOTONIC) */
	uint64_t memory_bytes;     /* memory the scan mapped for itself */
	uint64_t free_bytes;	   /* glibc's free chunks: not read */
	uint64_t unparsed_gaps;	   /* gaps between blocks whose chunks did not
				      parse: read whole */
	uint64_t threads_from_sp;  /* other threads' stacks read from their
				      stack pointer up */
	uint64_t stack_bytes_below_sp; /* their dead frames: not read */
} vmheap_native_scan_info;

/*
 * The leak scan, for a forked child only (it reads the whole process and
 * assumes that no other thread runs: after fork() none does).  It
 * classifies every live tracked block conservatively (native/README.md,
 * "The leak scan"): every aligned word of the roots (the calling thread's
 * stack above this call, every other writable mapping that is neither a
 * tracked block nor the tracker's or the scan's own memory) and of the
 * blocks reached is taken for a pointer.  Then it copies the stacks as
 * vmheap_native_stacks does, up to `cap` into `stacks`, and into leaks[i]
 * the classification of stacks[i]'s blocks; *nstacks gets the number of
 * stacks the tracker holds (more than cap: call again with more room).
 * *info (may be NULL) says what the scan read and skipped.  Returns 0, or
 * VMHEAP_ESTATE when tracking is off, VMHEAP_EINVAL for a NULL nstacks (or
 * NULL arrays with a non-zero cap), VMHEAP_ENOMEM when the scan's memory
 * cannot be mapped.
 */
VMHEAP_EXPORT int vmheap_native_scan(vmheap_native_stack *stacks,
				     vmheap_native_leaks *leaks, size_t cap,
				     size_t *nstacks,
				     vmheap_native_scan_info *info);

/*
 * Call on the thread that forks, just before the fork() of a dump whose
 * child runs vmheap_native_scan: notes the stack pointer of every other
 * thread that is blocked in a system call (/proc/self/task/TID/syscall),
 * so that the child's scan reads their stacks from there up, not the
 * dead frames below (native/README.md, "The leak scan").  A thread that
 * is running is not noted; its whole stack mapping is read.  What it
 * notes holds for the next fork only (the parent forgets it after every
 * fork).  Allocates nothing.  Returns how many threads were noted, or
 * VMHEAP_EIO when /proc/self/task cannot be read.
 */
VMHEAP_EXPORT int vmheap_native_scan_prepare(void);
/* What vmheap_native_route did. */
typedef struct vmheap_native_route_info {
	int preloaded;     /* 1: the tracker was preloaded; nothing to do */
	uint64_t modules;  /* modules whose relocations were read */
	uint64_t skipped;  /* modules left alone (ld.so, the tracker, one
			      being unloaded or in another namespace) */
	uint64_t written;  /* slots this call pointed at the tracker */
	uint64_t routed;   /* slots that point at the tracker now */
	uint64_t failed;   /* slots whose page could not be made writable */
	uint64_t scan_ns;  /* the call's time (CLOCK_MONOTONIC) */
	const char *why;   /* on failure: why, one sentence (static storage) */
} vmheap_native_route_info;

/*
 * For a tracker loaded with dlopen into a running process (the agent
 * loads libvmheap-malloc-attach.so): route the process's calls of the
 * allocator's functions (malloc, calloc, realloc, reallocarray, free,
 * memalign, valloc, pvalloc, aligned_alloc, posix_memalign) and of
 * dlopen and dlclose to the tracker, by writing the GOT slots of every
 * loaded module that hold glibc's addresses (native/got.c and
 * native/README.md, "Tracking without a preload": which slots, the
 * read-only pages, later dlopen's, the risks).  Modules loaded later by a
 * routed dlopen are routed at once; others (a dlopen from a module with
 * an RPATH or RUNPATH, glibc's own internal loads) at the next call:
 * call it again before each snapshot.  Calls already routed stay routed
 * when tracking stops (then each is one load and one branch more than
 * glibc's).  When the tracker was preloaded it does nothing
 * (info->preloaded).  *info (may be NULL) says what it did.  Returns 0,
 * or with info->why when nothing can be routed VMHEAP_ESTATE (the
 * process's malloc is not glibc's, or glibc's dlopen cannot be found) or
 * VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_native_route(vmheap_native_route_info *info);
/*
 * The calling thread is vmheap's own (the agent's loop, job and helper
 * threads): from now on its allocations are not recorded into a malloc
 * trace (vmheap-run --record), as the agent's own memory is never a
 * native stack of the program's.  A free on such a thread of a block the
 * program allocated is not recorded either: the trace counts it freed when its
 * address is allocated again.
 */
VMHEAP_EXPORT void vmheap_native_own_thread(void);

/*
 * The file this process writes for vmheap-run's `--output NAME` (and
 * any other file NAME a process under vmheap-run writes at exit), by the
 * one rule of vmheap-run(1) FILES: "%p" in NAME
 * becomes this process's pid ("%%" one "%"); else the process that
 * vmheap-run executed (its pid was VMHEAP_RUN_PID when the tracker
 * loaded) writes NAME, and any other (a forked child, a program it
 * executed) NAME.PID.  Writes the NUL-terminated name into out[outsz];
 * returns 0, VMHEAP_EINVAL when NAME is NULL or empty or outsz is 0, or
 * VMHEAP_ELIMIT when the name does not fit.
 * Allocates nothing.
 */
VMHEAP_EXPORT int vmheap_native_output_name(const char *name, char *out,
					    size_t outsz);

/* The types of the functions above, for dlsym. */
typedef int (*vmheap_native_start_fn)(void);
typedef void (*vmheap_native_stop_fn)(void);
typedef int (*vmheap_native_tracking_fn)(void);
typedef size_t (*vmheap_native_stacks_fn)(vmheap_native_stack *, size_t);
typedef void (*vmheap_native_get_totals_fn)(vmheap_native_totals *);
typedef int (*vmheap_native_modules_fn)(vmheap_native_module_fn, void *);
typedef void (*vmheap_native_set_location_fn)(vmheap_native_location_fn);
typedef int (*vmheap_native_route_fn)(vmheap_native_route_info *);
typedef void (*vmheap_native_own_thread_fn)(void);
typedef int (*vmheap_native_scan_fn)(vmheap_native_stack *,
				     vmheap_native_leaks *, size_t, size_t *,
				     vmheap_native_scan_info *);
typedef int (*vmheap_native_scan_prepare_fn)(void);
typedef int (*vmheap_native_output_name_fn)(const char *, char *, size_t);

#ifdef __cplusplus
}
#endif

#endif
