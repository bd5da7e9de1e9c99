/*
 * vmheap_pprof.h - writing profiles in pprof's format (profile.proto,
 * gzipped: what `go tool pprof`, Pyroscope, Parca and speedscope read),
 * for --format pprof of vmheap-histo and vmheap-diff.
 *
 * A profile is built in memory: samples of two values, objects (count)
 * and space (bytes), each at a stack of frames given leaf first.  Frames
 * that name the same function and file are one pprof Function, and the
 * same function at the same line one Location; samples at the same stack
 * add up (a diff adds the old dump's sites negated and the new dump's).
 * The encoding is protobuf-c's (report/profile.proto, a subset of the
 * public specification), the gzip zlib's.
 *
 * A writer, not a parser: it reads nothing from outside, so it has no
 * libFuzzer target; its input is the tools' own rows.
 *
 * Errors follow the library's convention: 0 or a negative VMHEAP_E* code;
 * nothing prints.  Not thread-safe: one profile per thread.
 */
#ifndef VMHEAP_PPROF_H
#define VMHEAP_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap_report.h"

typedef struct vmheap_pprof vmheap_pprof;

/* One frame of a stack: NUL-terminated strings, copied by the profile
 * (the caller keeps its own); file may be "" and line 0 when unknown. */
struct vmheap_pprof_frame {
	const char *function;
	const char *file;
	int64_t line;
};

/* A new empty profile with the sample types objects/count and
 * space/bytes (space the default), or NULL when out of memory. */
vmheap_pprof *vmheap_pprof_new(void);

/*
 * Add `count` objects and `bytes` bytes (negative in a diff) at the stack
 * frames[0..n-1], leaf first, root last.  A stack added before adds up.
 * 0; VMHEAP_EINVAL when n is 0 or a string is NULL; VMHEAP_ENOMEM (the
 * profile is then unchanged but for strings it keeps).
 */
int vmheap_pprof_add(vmheap_pprof *p, const struct vmheap_pprof_frame *frames,
		     size_t n, int64_t count, int64_t bytes);

/* The same with a text label key=value on the sample (pprof's -tags,
 * -tagfocus): samples add up when their stacks and labels both match.
 * key and value NULL: none, as vmheap_pprof_add. */
int vmheap_pprof_add_labeled(vmheap_pprof *p,
			     const struct vmheap_pprof_frame *frames, size_t n,
			     const char *key, const char *value, int64_t count,
			     int64_t bytes);

/* The profile's time (nanoseconds since the epoch: the dump's, or the new
 * dump's in a diff) and the span it covers (0 for one dump). */
void vmheap_pprof_set_time(vmheap_pprof *p, int64_t time_nanos,
			   int64_t duration_nanos);

/* Milliseconds since the epoch (a dump header's time_ms) as nanoseconds,
 * 0 when they do not fit (a hostile header). */
int64_t vmheap_pprof_nanos(int64_t ms);

/* Add a comment line (`go tool pprof -comments` prints them); 0 or
 * VMHEAP_ENOMEM. */
int vmheap_pprof_comment(vmheap_pprof *p, const char *text);

/* Samples held (stacks whose values are not both zero count). */
size_t vmheap_pprof_samples(const vmheap_pprof *p);

/*
 * Append the encoded, gzipped profile to `out` (binary).  Samples whose
 * values are both zero are left out.  0, or VMHEAP_ENOMEM (out->failed
 * set too) or VMHEAP_EIO when zlib fails.
 */
int vmheap_pprof_write(const vmheap_pprof *p, struct vmheap_strbuf *out);

/* Free the profile (NULL is fine). */
void vmheap_pprof_free(vmheap_pprof *p);

/* ------------------------------------------------ profiles of native sites */

/*
 * Add the sites of native section n (vmheap's own memory left out, as
 * vmheap_native_rows does) with their live count and bytes times `sign`
 * (1, or -1 for the old dump of a diff): one location per frame, the
 * allocator's own frames (malloc, ruby_xmalloc and their internals) at
 * the leaf dropped, so that the leaf is the function that called the
 * allocator; the VM's line (a Ruby "file:line") as the root frame when
 * the site has one.  The internals are known by name
 * (vmheap_pprof_allocator_frame) or, in MRI's library without debug
 * info, as its frames without a symbol (its static objspace_xmalloc0 and
 * such, to which the exported ruby_xmalloc jumps): leading ones are
 * dropped up to the first frame with a name or in another module, so
 * that a leak through rb_ary_push reads rb_ary_push.  0 or
 * VMHEAP_ENOMEM.
 */
int vmheap_pprof_add_native(vmheap_pprof *p, const struct vmheap_native *n,
			    vmheap_symbolizer *sym, int sign);

/* ------------------------------------------ profiles of allocation sites */

/*
 * Add `count` objects of class `cls` and `bytes` bytes allocated at
 * `site` (a census row's "file:line in method", "file:line", another
 * text, or NULL for none): one frame, the method at its file and line
 * (the site's text when it is not of that shape, "no allocation site"
 * when NULL), labeled class=cls.  0, VMHEAP_EINVAL (cls NULL) or
 * VMHEAP_ENOMEM.
 */
int vmheap_pprof_add_site(vmheap_pprof *p, const char *cls, const char *site,
			  int64_t count, int64_t bytes);

/* 1 when `function` (a symbol's name) is the allocator's or one of its
 * internals that a native profile drops at the leaf. */
int vmheap_pprof_allocator_frame(const char *function);

#endif /* VMHEAP_PPROF_H */
