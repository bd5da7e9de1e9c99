/*
 * attach_inject.c - run dlopen(PATH, RTLD_NOW) on the main thread of a
 * running process, with ptrace, and leave the process as it was.
 *
 * Only the main thread (tid == pid) is seized, with PTRACE_SEIZE and
 * stopped with PTRACE_INTERRUPT: never PTRACE_ATTACH, whose SIGSTOP would
 * stay pending and stop the service if we died.  Other threads run on.
 *
 * A safe stop.  dlopen takes the loader's lock and calls malloc: the
 * stopped thread must hold neither.  It may be called when the thread's
 * instruction pointer is outside ld.so and outside libc, or inside libc
 * only while the thread waits in a system call that malloc never makes
 * while holding an arena lock (not brk, mmap, munmap, mremap, mprotect,
 * madvise).  Otherwise the thread runs on and is interrupted again, up to
 * SAFE_STOP_TRIES times.  A thread that blocks more signals than it did
 * before it was seized may be inside a signal handler (MRI's handlers
 * block their signal while they run), which may have interrupted malloc:
 * that stop is not safe either.  (A thread inside a libc function that calls
 * back into other code while holding a lock, such as dl_iterate_phdr's
 * callback, would pass this test; MRI's main thread does not do that.)
 *
 * The code.  The stub is written into the unused tail of the last page of
 * libc's code segment (past the end of the segment's code, inside the
 * same private r-xp mapping; the bytes must be zero): no thread ever runs
 * those bytes, so writing them cannot disturb the threads that keep
 * running, and the write makes a private copy of that page only.  The
 * stack of the stopped thread, below its 128-byte red zone, holds the
 * path, an XSAVE area (every vector and x87 register, MXCSR), and the
 * saved general registers, flags and stack pointer.
 *
 * The stub restores the thread itself:
 *
 *     xsave  (%rbx)              save vector/FPU state
 *     call   *%r12               dlopen(path, RTLD_NOW)
 *     mov    %rax, %rdi
 *     mov    $SYS_getpid, %eax
 *     syscall                    <- the injector reads the result here
 *     xrstor (%rbx)
 *     pop    r15 ... rax; popfq
 *     mov    (%rsp), %rsp        the original stack pointer
 *     jmp    *orig_rip(%rip)     back where the thread was
 *
 * so the injector may die at any moment (even SIGKILL): the kernel then
 * detaches the thread and it runs the rest of the stub and goes back to
 * its own code.  Nothing ends in int3, whose SIGTRAP would kill an
 * untraced process.  The injector resumes the thread with PTRACE_SYSCALL
 * and waits for the getpid marker; it then detaches at once.
 *
 * A thread stopped inside a blocking system call (-ERESTARTSYS and
 * friends in rax) goes back as if a signal with a handler had
 * interrupted it: the call returns EINTR (ERESTARTNOINTR calls are
 * restarted).  That is what MRI's own SIGVTALRM does to a blocked Ruby
 * thread, and what makes it check its interrupts (attach.c).
 */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach-internal.h"

#define SAFE_STOP_TRIES 200
#define STUB_TIMEOUT_MS 20000
#define RED_ZONE 128
#define PATH_MAX_LEN 1024
#define XSAVE_MAX 65536

/* Kernel-internal restart codes a stopped system call shows in rax. */
#define K_ERESTARTSYS 512
#define K_ERESTARTNOINTR 513
#define K_ERESTARTNOHAND 514
#define K_ERESTART_RESTARTBLOCK 516

/* clang-format off */
static const unsigned char stub_code[] = {
	0xb8, 0xff, 0xff, 0xff, 0xff,	/* mov $-1, %eax */
	0xba, 0xff, 0xff, 0xff, 0xff,	/* mov $-1, %edx */
	0x0f, 0xae, 0x23,		/* xsave (%rbx) */
	0x41, 0xff, 0xd4,		/* call *%r12 */
	0x48, 0x89, 0xc7,		/* mov %rax, %rdi */
	0xb8, 0x27, 0x00, 0x00, 0x00,	/* mov $39 (getpid), %eax */
	0x0f, 0x05,			/* syscall  (marker) */
	0xb8, 0xff, 0xff, 0xff, 0xff,	/* mov $-1, %eax */
	0xba, 0xff, 0xff, 0xff, 0xff,	/* mov $-1, %edx */
	0x0f, 0xae, 0x2b,		/* xrstor (%rbx) */
	0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, /* pop r15..r12 */
	0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, /* pop r11..r8 */
	0x5d, 0x5f, 0x5e, 0x5a, 0x59, 0x5b, 0x58,	/* rbp rdi rsi rdx rcx rbx rax */
	0x9d,				/* popfq */
	0x48, 0x8b, 0x24, 0x24,		/* mov (%rsp), %rsp */
	0xff, 0x25, 0x00, 0x00, 0x00, 0x00, /* jmp *0(%rip): the next 8 bytes */
};
/* clang-format on */
#define STUB_MARKER_END 26 /* offset just after the marker's syscall */
#define STUB_SIZE (sizeof(stub_code) + 8)

/* The saved-register block the stub pops, in pop order. */
struct saved_block {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx,
	    rbx, rax, rflags, rsp;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/*
 * Wait for a ptrace stop (or the end) of pid, giving up at `deadline`.
 * 1 with *status, 0 at the deadline, -1 on error.  The kernel sends the
 * tracer SIGCHLD at each stop of its tracee; attach_inject keeps it
 * blocked, so it waits here as pending and the wait ends at once.  (A
 * first version slept 1 ms between polls: with the stub's dlopen stepped
 * through its system calls, about 20 stops, the target was held about
 * 23 ms; bench/RESULTS.md.)  The wait is cut to 20 ms at most, so a lost
 * signal costs a poll, not the deadline.
 */
static int wait_stop(pid_t pid, int *status, long deadline)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		pid_t r = waitpid(pid, status, __WALL | WNOHANG);
		long left;

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
		left = deadline - now_ms();
		if (left <= 0)
			return 0;
		if (left > 20)
			left = 20;
		struct timespec ts = {0, left * 1000000L};
		sigtimedwait(&chld, NULL, &ts);
	}
}

static int gone(int status)
{
	return WIFEXITED(status) || WIFSIGNALED(status);
}

/*
 * Stop the seized thread with PTRACE_INTERRUPT and wait for the
 * interrupt's stop, passing on any signal that arrives first.
 * 0, or -1 with err.
 */
static int interrupt_thread(pid_t pid, char *err, size_t errlen)
{
	long deadline = now_ms() + 5000;
	int status;

	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0) {
		snprintf(err, errlen, "cannot interrupt pid %ld: %s", (long)pid,
			 strerror(errno));
		return -1;
	}
	for (;;) {
		int r = wait_stop(pid, &status, deadline);

		if (r <= 0 || gone(status)) {
			snprintf(err, errlen,
				 r == 0	 ? "pid %ld did not stop within 5 s"
				 : r < 0 ? "lost pid %ld while stopping it"
					 : "pid %ld exited during the attach",
				 (long)pid);
			return -1;
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(status) == SIGTRAP)
				return 0;
			/* A group stop (SIGSTOP, SIGTSTP): someone stops
			 * the process; leave it so. */
			snprintf(err, errlen,
				 "pid %ld was stopped by a signal during the "
				 "attach; not attaching",
				 (long)pid);
			return -1;
		}
		/* A signal arrived first: deliver it, the interrupt stays
		 * pending. */
		ptrace(PTRACE_CONT, pid, 0, (void *)(long)WSTOPSIG(status));
	}
}

/* Is the thread, stopped with `r`, at a point where it may call dlopen? */
static int safe_stop(pid_t pid, const struct user_regs_struct *r,
		     const struct attach_module *libc,
		     const struct attach_module *ld, uint64_t blocked_before)
{
	uint64_t blocked = 0;

	if (ptrace(PTRACE_GETSIGMASK, pid, (void *)sizeof(blocked), &blocked) <
		0 ||
	    (blocked & ~blocked_before))
		return 0; /* maybe in a signal handler */
	static const long malloc_calls[] = {SYS_brk,	  SYS_mmap,
					    SYS_munmap,	  SYS_mremap,
					    SYS_mprotect, SYS_madvise};

	if (r->rip >= ld->exec_start && r->rip < ld->exec_end)
		return 0;
	if (r->rip < libc->exec_start || r->rip >= libc->exec_end)
		return 1;
	if ((long)r->orig_rax < 0)
		return 0; /* running libc code: maybe malloc's */
	for (size_t i = 0; i < sizeof(malloc_calls) / sizeof(*malloc_calls);
	     i++)
		if ((long)r->orig_rax == malloc_calls[i])
			return 0;
	return 1;
}

static int write_words(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	unsigned char word[8];

	for (size_t i = 0; i < len; i += 8) {
		long v;
		size_t n = len - i < 8 ? len - i : 8;

		if (n < 8) {
			errno = 0;
			v = ptrace(PTRACE_PEEKDATA, pid, addr + i, 0);
			if (errno)
				return -1;
			memcpy(word, &v, 8);
		}
		memcpy(word, (const unsigned char *)buf + i, n);
		memcpy(&v, word, 8);
		if (ptrace(PTRACE_POKEDATA, pid, addr + i, (void *)v) < 0)
			return -1;
	}
	return 0;
}

static int read_words(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		long v;
		size_t n = len - i < 8 ? len - i : 8;

		errno = 0;
		v = ptrace(PTRACE_PEEKDATA, pid, addr + i, 0);
		if (errno)
			return -1;
		memcpy((unsigned char *)buf + i, &v, n);
	}
	return 0;
}

/*
 * The size of the XSAVE area of the stopped thread: what the kernel gives
 * for its NT_X86_XSTATE register set (every feature its XCR0 enables,
 * AVX-512 and AMX tiles included).  Not CPUID in this process: under
 * valgrind or an emulator it reports fewer features than the target's
 * CPU has, and a too small area would let xsave write over the target's
 * stack (seen: valgrind's CPUID gave a size that made the stub's xsave
 * fault past the top of ruby's stack).  0 when the thread has no XSAVE
 * state.
 */
static size_t xsave_size(pid_t pid)
{
	static unsigned char buf[XSAVE_MAX];
	struct iovec iov = {buf, sizeof(buf)};

	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &iov) < 0)
		return 0;
	return iov.iov_len;
}

/* The registers the thread goes back with, given how it was stopped. */
static void resume_state(const struct user_regs_struct *r, uint64_t *rax,
			 uint64_t *rip)
{
	long ret = (long)r->rax;

	*rax = r->rax;
	*rip = r->rip;
	if ((long)r->orig_rax < 0)
		return;
	if (ret == -K_ERESTARTNOINTR) {
		*rax = r->orig_rax; /* restart it: back to the syscall insn */
		*rip = r->rip - 2;
	} else if (ret == -K_ERESTARTSYS || ret == -K_ERESTARTNOHAND ||
		   ret == -K_ERESTART_RESTARTBLOCK) {
		*rax = (uint64_t)(long)-EINTR;
	}
}

/*
 * For the test suite only: with VMHEAP_ATTACH_TEST_STOP=N the injector
 * stops itself (SIGSTOP) at moment N, so that a test can kill it -9 there:
 * 4 the thread is seized, not yet interrupted; 1 it is interrupted at a
 * safe stop; 2 the stub and frame are written and the registers point at
 * the stub; 5 the stub runs dlopen, the thread at a system call stop
 * inside it; 3 the stub is at its marker; 6 (attach.c) the stub is done
 * and the thread detached, the console waits for the agent.
 */
void attach_test_stop(int moment)
{
	const char *v = getenv("VMHEAP_ATTACH_TEST_STOP");

	if (v && atoi(v) == moment)
		raise(SIGSTOP);
}

struct inject {
	pid_t pid;
	const char *so_path;
	struct attach_module libc, ld;
	uint64_t dlopen_addr, cave;
	size_t xsave;
};

/* Write the frame and the stub, point the thread at it. 0 or -1. */
static int prepare_call(struct inject *in, const struct user_regs_struct *r,
			char *err, size_t errlen)
{
	struct user_regs_struct call = *r;
	struct saved_block blk;
	unsigned char code[STUB_SIZE];
	size_t plen = strlen(in->so_path) + 1;
	uint64_t top, path_at, xsave_at, blk_at, rax, rip;
	unsigned char *frame;
	size_t frame_len;
	struct iovec local, remote;

	resume_state(r, &rax, &rip);
	top = r->rsp - RED_ZONE - 256;
	path_at = (top - plen) & ~(uint64_t)15;
	xsave_at = (path_at - in->xsave) & ~(uint64_t)63;
	blk_at = (xsave_at - sizeof(blk)) & ~(uint64_t)15;
	blk = (struct saved_block){r->r15,    r->r14, r->r13, r->r12, r->r11,
				   r->r10,    r->r9,  r->r8,  r->rbp, r->rdi,
				   r->rsi,    r->rdx, r->rcx, r->rbx, rax,
				   r->eflags, r->rsp};
	frame_len = top - blk_at;
	frame = calloc(1, frame_len);
	if (!frame) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(frame, &blk, sizeof(blk));
	memcpy(frame + (path_at - blk_at), in->so_path, plen);
	local = (struct iovec){frame, frame_len};
	remote = (struct iovec){(void *)blk_at, frame_len};
	if (process_vm_writev(in->pid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)frame_len) {
		snprintf(err, errlen,
			 "cannot write to the stack of pid %ld: %s",
			 (long)in->pid, strerror(errno));
		free(frame);
		return -1;
	}
	free(frame);
	memcpy(code, stub_code, sizeof(stub_code));
	memcpy(code + sizeof(stub_code), &rip, 8);
	if (write_words(in->pid, in->cave, code, sizeof(code)) < 0) {
		snprintf(err, errlen, "cannot write the stub into pid %ld: %s",
			 (long)in->pid, strerror(errno));
		return -1;
	}
	call.rip = in->cave;
	call.rsp = blk_at;
	call.rbx = xsave_at;
	call.r12 = in->dlopen_addr;
	call.rdi = path_at;
	call.rsi = 2;			 /* RTLD_NOW */
	call.orig_rax = (uint64_t)-1;	 /* no syscall restart on resume */
	call.eflags &= ~(uint64_t)0x400; /* DF clear, as the ABI wants */
	if (ptrace(PTRACE_SETREGS, in->pid, 0, &call) < 0) {
		snprintf(err, errlen, "cannot set the registers of pid %ld: %s",
			 (long)in->pid, strerror(errno));
		return -1;
	}
	return 0;
}

/* Run the stub to its marker; *handle gets dlopen's result.  1 when the
 * marker was reached, 0 when the thread was detached before (it runs the
 * stub to its end on its own), -1 when the process ended. */
static int run_stub(struct inject *in, uint64_t *handle, char *err,
		    size_t errlen)
{
	long deadline = now_ms() + STUB_TIMEOUT_MS;
	int sig = 0, status;

	for (;;) {
		struct user_regs_struct r;
		int w;

		if (ptrace(PTRACE_SYSCALL, in->pid, 0, (void *)(long)sig) < 0) {
			int e = errno;

			/* Killed meanwhile: we, its tracer, hear of its
			 * end first. */
			if (e == ESRCH &&
			    wait_stop(in->pid, &status, now_ms() + 5000) > 0 &&
			    gone(status))
				snprintf(err, errlen,
					 "pid %ld exited during the attach",
					 (long)in->pid);
			else
				snprintf(err, errlen, "lost pid %ld: %s",
					 (long)in->pid, strerror(e));
			return -1;
		}
		sig = 0;
		w = wait_stop(in->pid, &status, deadline);
		if (w < 0 || (w > 0 && gone(status))) {
			snprintf(err, errlen,
				 "pid %ld exited while dlopen ran in it",
				 (long)in->pid);
			return -1;
		}
		if (w == 0) {
			/* dlopen waits (a lock another thread holds?):
			 * leave it; the stub finishes on its own. */
			ptrace(PTRACE_INTERRUPT, in->pid, 0, 0);
			if (wait_stop(in->pid, &status, now_ms() + 2000) > 0 &&
			    !gone(status))
				ptrace(PTRACE_DETACH, in->pid, 0, 0);
			snprintf(
			    err, errlen,
			    "dlopen did not return within %d s in pid %ld; "
			    "it goes on in the background",
			    STUB_TIMEOUT_MS / 1000, (long)in->pid);
			return 0;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GETREGS, in->pid, 0, &r) == 0 &&
			    r.rip == in->cave + STUB_MARKER_END &&
			    (long)r.orig_rax == SYS_getpid) {
				*handle = r.rdi;
				attach_test_stop(3);
				ptrace(PTRACE_DETACH, in->pid, 0, 0);
				return 1;
			}
			attach_test_stop(5);
			continue;
		}
		if ((status >> 16) == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(status) != SIGTRAP) {
				/* A group stop (SIGSTOP, SIGTSTP): let it
				 * stop; the stub runs when it continues. */
				ptrace(PTRACE_DETACH, in->pid, 0, 0);
				snprintf(err, errlen,
					 "pid %ld was stopped by a signal "
					 "during the attach; the agent loads "
					 "when it continues",
					 (long)in->pid);
				return 0;
			}
			continue;
		}
		sig = WSTOPSIG(status); /* a signal for the program: pass it */
	}
}

static int seize_error(pid_t pid, int e, char *err, size_t errlen)
{
	if (e == ESRCH)
		snprintf(err, errlen, "no process %ld", (long)pid);
	else if (e != EPERM)
		snprintf(err, errlen, "cannot trace pid %ld: %s", (long)pid,
			 strerror(e));
	else
		attach_refusal(pid, err, errlen);
	return -1;
}

int attach_inject(pid_t pid, const char *so_path, char *err, size_t errlen)
{
	struct inject in = {.pid = pid, .so_path = so_path};
	struct user_regs_struct regs;
	char file[1100];
	uint64_t sym, end, page_end, handle = 0;
	unsigned char cave_bytes[STUB_SIZE], zero[STUB_SIZE] = {0};
	sigset_t block, old;
	uint64_t blocked_before;
	int tries, rc;

	if (strlen(so_path) >= PATH_MAX_LEN) {
		snprintf(err, errlen, "the library path is too long");
		return -1;
	}
	if (attach_proc_module(pid, "libc.so.", &in.libc) < 0 ||
	    attach_proc_module(pid, "ld-linux-", &in.ld) < 0) {
		snprintf(err, errlen,
			 "pid %ld has no glibc libc.so.6 and ld-linux mapped "
			 "(a static or non-glibc program): cannot attach",
			 (long)pid);
		return -1;
	}
	snprintf(file, sizeof(file), "/proc/%ld/root%s", (long)pid,
		 in.libc.path);
	if (attach_elf_symbol(file, "dlopen", &sym, err, errlen) < 0 &&
	    attach_elf_symbol(file, "__libc_dlopen_mode", &sym, err, errlen) <
		0)
		return -1;
	in.dlopen_addr = in.libc.base + sym;
	if (attach_elf_code_slack(file, &end, &page_end, err, errlen) < 0)
		return -1;
	in.cave = (in.libc.base + end + 15) & ~(uint64_t)15;
	if (in.cave + STUB_SIZE > in.libc.base + page_end ||
	    in.libc.base + page_end > in.libc.exec_end) {
		snprintf(err, errlen,
			 "%s leaves no room after its code for the stub",
			 in.libc.path);
		return -1;
	}

	if (attach_proc_blocked(pid, &blocked_before) < 0) {
		snprintf(err, errlen, "cannot read /proc/%ld/status",
			 (long)pid);
		return -1;
	}

	/* SIGINT and friends would only end us between two ptrace calls,
	 * which is safe (see the top), but a message is better. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGCHLD); /* wait_stop waits for it */
	sigprocmask(SIG_BLOCK, &block, &old);

	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD) <
	    0) {
		rc = seize_error(pid, errno, err, errlen);
		goto out;
	}
	attach_test_stop(4);
	rc = -1;
	for (tries = 0; tries < SAFE_STOP_TRIES; tries++) {
		if (interrupt_thread(pid, err, errlen) < 0)
			goto detach;
		if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0) {
			snprintf(err, errlen,
				 "cannot read the registers of pid %ld: %s",
				 (long)pid, strerror(errno));
			goto detach;
		}
		if (safe_stop(pid, &regs, &in.libc, &in.ld, blocked_before)) {
			attach_test_stop(1);
			break;
		}
		ptrace(PTRACE_CONT, pid, 0, 0);
		pause_ms(1 + tries % 5);
	}
	if (tries == SAFE_STOP_TRIES) {
		snprintf(
		    err, errlen,
		    "the main thread of pid %ld was inside the loader, libc "
		    "or a signal handler at each of %d stops; try again",
		    (long)pid, SAFE_STOP_TRIES);
		goto detach;
	}
	in.xsave = xsave_size(pid);
	if (in.xsave < 576 || in.xsave >= XSAVE_MAX) {
		snprintf(err, errlen,
			 "the kernel gives no XSAVE state for pid %ld (%zu "
			 "bytes); attach needs XSAVE to keep its vector "
			 "registers",
			 (long)pid, in.xsave);
		goto detach;
	}
	if (read_words(pid, in.cave, cave_bytes, sizeof(cave_bytes)) < 0 ||
	    (memcmp(cave_bytes, zero, sizeof(zero)) != 0 &&
	     memcmp(cave_bytes, stub_code, sizeof(stub_code)) != 0)) {
		snprintf(err, errlen,
			 "the bytes after libc's code in pid %ld are not free; "
			 "not attaching",
			 (long)pid);
		goto detach;
	}
	if (prepare_call(&in, &regs, err, errlen) < 0) {
		ptrace(PTRACE_SETREGS, pid, 0, &regs);
		goto detach;
	}
	attach_test_stop(2);
	rc = run_stub(&in, &handle, err, errlen);
	if (rc == 1 && handle == 0) {
		snprintf(err, errlen,
			 "dlopen(\"%s\") failed in pid %ld (is the file "
			 "readable by it and built for its libc?)",
			 so_path, (long)pid);
		rc = -1;
	} else {
		rc = rc == 1 ? 0 : -1;
	}
	goto out;
detach:
	ptrace(PTRACE_DETACH, pid, 0, 0);
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
