/*
 * ruby_vm_stacks.c - in a dump's forked child, before the malloc
 * tracker's leak scan: the dead part of each Ruby thread's VM stack, and
 * its signal stack, are zeroed (the signal stacks: clear_altstacks below;
 * in one run a thread's 47,824-byte signal stack held 20 of the stale
 * roots of 10,000 forgotten blocks).
 *
 * MRI gives every thread a VM stack (its main thread's is a 1 MiB malloc
 * from before tracking began, so a root of the scan): values grow up from
 * its start, control frames grow down from its end.  Ruby's own GC reads
 * as live only the values below the current frame's stack pointer and the
 * frames from the current one to the end (rb_execution_context_mark); the
 * words between are what calls that returned left: their operands, their
 * locals, their frames.  Those stale words name blocks long freed, whose
 * addresses newer blocks took (native/README.md, "The leak scan": one
 * run's 29 possibly leaked blocks of a forgotten 10,000 came from there).
 * Zeroing them in the child (a private copy) changes nothing Ruby or the
 * dump reads.
 *
 * Debian's ruby-dev does not install vm_core.h, so the layout is checked
 * at run time, and a thread whose stack does not match is left as it is
 * (its stale words stay roots, as before):
 *   - a Thread is a typed data object of type "VM/thread"; among the
 *     first words of its rb_thread_t is the pointer to its execution
 *     context, which begins {VALUE *vm_stack; size_t vm_stack_size;
 *     rb_control_frame_t *cfp} and names the thread among its next words;
 *   - the last frame of the stack is the dummy frame that
 *     rb_ec_initialize_vm_stack pushes: {pc, sp vm_stack + 3, iseq, self,
 *     ep vm_stack + 2, ...}; the main thread's gets a pc, an iseq and a
 *     self from Init_VM, and its environment moves to the heap
 *     (TOPLEVEL_BINDING), so only sp is checked, and ep is vm_stack + 2
 *     or outside the stack; where that frame starts gives the frame's
 *     size (8 words in Ruby 3.1);
 *   - cfp lies a whole number of frames below the end, and every frame
 *     from cfp to the end has its sp between the stack's start and cfp
 *     (a frame's sp never points into the frames).
 * Every read of a word the layout is not yet sure of goes through
 * process_vm_readv on this process: a wrong guess reads EFAULT, never
 * SIGSEGV.  Only while the tracker tracks, and only words not 0 already
 * (a page written is a page copied).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "ruby-internal.h"

#define TH_WORDS 16  /* where in rb_thread_t the ec pointer may be */
#define EC_WORDS 16  /* where in the ec the thread pointer may be */
#define MIN_FRAME 5  /* pc, sp, iseq, self, ep: the words checked */
#define MAX_FRAME 12 /* words of a control frame, at most */
#define MAX_STACK_WORDS ((uint64_t)1 << 28) /* 2 GiB: no VM stack is more */
#define DUMMY_SP 3 /* the dummy frame's sp and ep, in words from the */
#define DUMMY_EP 2 /* stack's start */
#define MAX_THREADS 4096
#define TH_MAX_WORDS 512  /* an rb_thread_t is about 50 words */
#define VM_MAX_WORDS 4096 /* rb_vm_t: 9,448 bytes in 3.1 */
#define MAX_ALTSTACK ((uint64_t)1 << 24)
#define CHUNK_FLAGS 7u	 /* glibc's chunk size word: its flags, */
#define CHUNK_MMAPPED 2u /* among them mmapped */

struct vm_stack {
	uint64_t lo;  /* vm_stack */
	uint64_t end; /* vm_stack + vm_stack_size */
	uint64_t cfp; /* the current frame */
	uint64_t sp;  /* its sp: the values end here */
	unsigned frame_words;
};

/* The frame size in words whose dummy frame ends the stack [lo, end), or
 * 0. */
static unsigned dummy_frame_words(uint64_t lo, uint64_t end)
{
	for (unsigned f = MIN_FRAME + 1; f <= MAX_FRAME; f++) {
		uint64_t w[MIN_FRAME];
		if (ruby_peek(end - 8 * f, w, sizeof w) != 0)
			return 0;
		if (w[1] == lo + 8 * DUMMY_SP &&
		    (w[4] == lo + 8 * DUMMY_EP || w[4] < lo || w[4] >= end))
			return f;
	}
	return 0;
}

/* Whether ec (an address) is th's execution context with a VM stack laid
 * out as above; fills *st. */
static int ec_stack(uint64_t ec, uint64_t th, struct vm_stack *st)
{
	uint64_t e[EC_WORDS];
	int names_th = 0;

	if (ec == 0 || ec % 8 != 0 || ruby_peek(ec, e, sizeof e) != 0)
		return 0;
	for (int i = 3; i < EC_WORDS; i++)
		names_th |= e[i] == th;
	uint64_t lo = e[0], words = e[1], cfp = e[2];
	if (!names_th || lo == 0 || lo % 8 != 0 || words < 16 ||
	    words > MAX_STACK_WORDS || cfp % 8 != 0)
		return 0;
	uint64_t end = lo + 8 * words;
	if (end < lo || cfp < lo + 8 * DUMMY_SP || cfp >= end)
		return 0;
	unsigned f = dummy_frame_words(lo, end);
	if (f == 0 || (end - cfp) % (8 * f) != 0)
		return 0;
	uint64_t sp = 0;
	for (uint64_t c = cfp; c < end; c += 8 * f) {
		uint64_t w[2];
		if (ruby_peek(c, w, sizeof w) != 0 || w[1] < lo || w[1] > cfp ||
		    w[1] % 8 != 0)
			return 0;
		if (c == cfp)
			sp = w[1];
	}
	*st = (struct vm_stack){lo, end, cfp, sp, f};
	return 1;
}

/* Zero the words of [lo, hi) that are not 0. */
static void clear_words(uint64_t lo, uint64_t hi)
{
	for (uint64_t *w = (uint64_t *)(uintptr_t)lo;
	     w < (uint64_t *)(uintptr_t)hi; w++)
		if (*w != 0)
			*w = 0;
}

/* Zero the words of [sp, cfp): the dead part. */
static void clear_dead(const struct vm_stack *st)
{
	clear_words(st->sp, st->cfp);
}

/* ---------------------------------------------------- signal stacks */

/* The bytes glibc gives the block at p, from its chunk's size word (8
 * bytes before it), or 0 when that cannot be read or is no chunk's. */
static uint64_t usable(uint64_t p)
{
	uint64_t size;

	if (p == 0 || p % 16 != 0 || ruby_peek(p - 8, &size, sizeof size) != 0)
		return 0;
	uint64_t chunk = size & ~(uint64_t)CHUNK_FLAGS;
	uint64_t overhead = (size & CHUNK_MMAPPED) ? 16 : 8;
	if (chunk % 16 != 0 || chunk <= overhead || chunk > MAX_ALTSTACK)
		return 0;
	return chunk - overhead;
}

/* The one block among th's words whose size is `size` (the signal stack's,
 * rounded up to a chunk), or 0 when none or more than one is. */
static uint64_t altstack_in(uint64_t th, size_t size, uint64_t max_words)
{
	uint64_t words = usable(th) / 8, found = 0;

	if (words == 0 || words > max_words)
		return 0;
	for (uint64_t i = 0; i < words; i++) {
		uint64_t p;
		if (ruby_peek(th + 8 * i, &p, sizeof p) != 0)
			return 0;
		uint64_t u = usable(p);
		if (u >= size && u < size + 32) {
			if (found != 0 && found != p)
				return 0;
			found = p;
		}
	}
	return found;
}

static uint64_t altstack_of(uint64_t th, size_t size)
{
	return altstack_in(th, size, TH_MAX_WORDS);
}

/* Zero each Ruby thread's signal stack (MRI gives every thread one, a
 * malloc of rb_sigaltstack_size() bytes that rb_thread_t points to, the
 * main thread's rb_vm_t: its main_altstack): no thread runs a handler on
 * it in the child, so all of it is the frames of handlers that returned
 * (MRI's timer interrupts threads with SIGVTALRM), each with the
 * registers the signal interrupted.  Checked: the child's own thread has
 * a signal stack and is not on it, and its rb_thread_t, or for the main
 * thread (the exit dump's, hosts/ruby/ruby_agent.c) rb_vm_t, holds
 * exactly one block of that size, that stack; each other thread's is the
 * one block of that size its rb_thread_t holds. */
static void clear_altstacks(const uint64_t *th, size_t n)
{
	stack_t ss;
	void **vm_ptr = (void **)dlsym(RTLD_DEFAULT, "ruby_current_vm_ptr");

	if (sigaltstack(NULL, &ss) != 0 || (ss.ss_flags & SS_ONSTACK) ||
	    (ss.ss_flags & SS_DISABLE) || ss.ss_sp == NULL || ss.ss_size == 0)
		return;
	uint64_t mine = (uint64_t)(uintptr_t)ss.ss_sp;
	uint64_t main_alt = vm_ptr && *vm_ptr
				? altstack_in((uint64_t)(uintptr_t)*vm_ptr,
					      ss.ss_size, VM_MAX_WORDS)
				: 0;
	int seen = main_alt != 0 && main_alt == mine;
	for (size_t i = 0; i < n; i++)
		seen |= altstack_of(th[i], ss.ss_size) == mine;
	if (!seen)
		return; /* not the layout this expects: leave them all */
	if (main_alt != 0)
		clear_words(main_alt, main_alt + ss.ss_size);
	for (size_t i = 0; i < n; i++) {
		uint64_t p = altstack_of(th[i], ss.ss_size);
		if (p != 0)
			clear_words(p, p + ss.ss_size);
	}
}

/* ---------------------------------------------------------- threads */

struct threads {
	uint64_t th[MAX_THREADS]; /* every Thread's rb_thread_t */
	size_t n;
};

static void clear_thread(VALUE obj, struct threads *ts)
{
	uint64_t th = (uint64_t)(uintptr_t)RTYPEDDATA_DATA(obj);
	uint64_t t[TH_WORDS];
	struct vm_stack st;

	if (th == 0 || ruby_peek(th, t, sizeof t) != 0)
		return;
	/* its signal stack, also when the thread is done (a thread that was
	 * killed and joined frees it only on its way out of its pthread,
	 * which may not have run by the fork) */
	if (ts->n < MAX_THREADS)
		ts->th[ts->n++] = th;
	for (int i = 0; i < TH_WORDS; i++)
		if (ec_stack(t[i], th, &st)) {
			clear_dead(&st);
			return;
		}
}

static int thread_p(VALUE v)
{
	if (RBASIC(v)->flags == 0 || BUILTIN_TYPE(v) != T_DATA ||
	    !RTYPEDDATA_P(v))
		return 0;
	const rb_data_type_t *type = RTYPEDDATA_TYPE(v);
	return type && type->wrap_struct_name &&
	       strcmp(type->wrap_struct_name, "VM/thread") == 0;
}

static int each_page(void *start, void *end, size_t stride, void *data)
{
	for (uintptr_t p = (uintptr_t)start; p < (uintptr_t)end; p += stride)
		if (thread_p((VALUE)p))
			clear_thread((VALUE)p, data);
	return 0;
}

void ruby_clear_dead_vm_stacks(void)
{
	int (*tracking)(void) =
	    (int (*)(void))dlsym(RTLD_DEFAULT, "vmheap_native_tracking");

	if (!tracking || !tracking())
		return;
	static struct threads ts; /* the child's: one thread, no reentry */
	ts.n = 0;
	rb_objspace_each_objects(each_page, &ts);
	clear_altstacks(ts.th, ts.n);
}
