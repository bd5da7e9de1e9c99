/*
 * lose_keep.c - a plain C program (no agent of its own) that leaks
 * through real malloc, for vmheap-run --output (spec/native_run_test.c):
 *
 *   lose_keep N [MODE]
 *
 * lose_here() forgets N blocks of 40 bytes, keep_here() keeps N blocks
 * of 56 bytes in a static array.  Then, by MODE:
 *
 *   return      (the default) returns 0 from main
 *   exit        calls exit(3) from inside a function
 *   _exit       calls _exit(4): no destructor runs, no dump
 *   wait        prints "ready" and waits for a line on stdin (the
 *               console dumps it meanwhile), then returns 0
 *   fork        forks: the child forgets N more at child_lose_here and
 *               exits 0; the parent waits for it and returns 5
 *   status      returns 7
 *   thread      a second thread forgets N blocks of 32 bytes at
 *               thread_lose_here and waits for ever: main returns while
 *               it is still alive (its stack is read whole: stale slots)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_KEEP 100000

/* Not static: the compiler must keep the stores. */
void *kept[MAX_KEEP];

/* Each block goes through a volatile store, so that no pointer to a
 * forgotten block outlives the loop in a register. */
static void *volatile sink;

__attribute__((noinline)) void lose_here(int n)
{
	for (int i = 0; i < n; i++) {
		sink = malloc(40);
		memset(sink, 0x22, 40);
	}
	sink = NULL;
}

__attribute__((noinline)) void keep_here(int n)
{
	for (int i = 0; i < n && i < MAX_KEEP; i++)
		kept[i] = calloc(1, 56);
}

__attribute__((noinline)) void child_lose_here(int n)
{
	for (int i = 0; i < n; i++) {
		sink = malloc(24);
		memset(sink, 0x33, 24);
	}
	sink = NULL;
}

__attribute__((noinline)) void thread_lose_here(int n)
{
	for (int i = 0; i < n; i++) {
		sink = malloc(32);
		memset(sink, 0x44, 32);
	}
	sink = NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int thread_done;

static void *thread_main(void *arg)
{
	thread_lose_here(*(int *)arg);
	pthread_mutex_lock(&lock);
	thread_done = 1;
	pthread_cond_broadcast(&cond);
	for (;;) /* alive until the process exits */
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

__attribute__((noinline)) static void leave(int code)
{
	exit(code);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	const char *mode = argc > 2 ? argv[2] : "return";

	lose_here(n);
	keep_here(n);
	if (strcmp(mode, "exit") == 0)
		leave(3);
	if (strcmp(mode, "_exit") == 0)
		_exit(4);
	if (strcmp(mode, "status") == 0)
		return 7;
	if (strcmp(mode, "wait") == 0) {
		char line[64];
		printf("ready\n");
		fflush(stdout);
		if (fgets(line, sizeof line, stdin) == NULL)
			return 1;
		return 0;
	}
	if (strcmp(mode, "thread") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, thread_main, &n) != 0)
			return 1;
		pthread_mutex_lock(&lock);
		while (!thread_done)
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
		return 0;
	}
	if (strcmp(mode, "fork") == 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_lose_here(n);
			printf("child %ld\n", (long)getpid());
			return 0;
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 1;
		return 5;
	}
	return 0;
}
