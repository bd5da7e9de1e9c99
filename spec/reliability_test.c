/*
 * reliability_test.c - the load test: 200 concurrent clients x 500
 * requests on loopback against a working sample VM, mixed with 20 clients
 * that send garbage, oversized frames, half frames, or nothing at all.
 *
 * The VM is the sample VM (its heap, mutator and host callbacks) forked
 * from this suite with max_clients raised to 256: vmheap-sample itself
 * has no setting for the limit (default 32).
 *
 * It shows that every well-formed request is answered correctly, that
 * the VM's own work (sample.ticks, with the mutator ticking flat out)
 * keeps progressing, and prints by how much it slowed, and that the agent's
 * memory (system.memory.rss) comes back near its starting level once the
 * clients are gone.  The sanitizer build runs fewer requests per client
 * (printed).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <check.h>

#include "lib/vmheap_spec.h"

#define GOOD_CLIENTS 200
#define BAD_CLIENTS 20
#define MAX_CLIENTS 256

static int requests_per_client(void)
{
	return SPEC_SANITIZED ? 250 : 500;
}

struct load {
	struct spec_vm vm;
	atomic_int go;
	atomic_int done; /* good clients finished */
	atomic_int_fast64_t answered, wrong, failed;
	atomic_int_fast64_t bad_rounds, bad_closed, stalls;
	pthread_mutex_t lock;
	char first_problem[512];
};

static void problem(struct load *L, const char *fmt, const char *a,
		    const char *b)
{
	pthread_mutex_lock(&L->lock);
	if (!L->first_problem[0])
		snprintf(L->first_problem, sizeof(L->first_problem), fmt, a, b);
	pthread_mutex_unlock(&L->lock);
}

struct good_arg {
	struct load *L;
	int index;
};

/* A well-behaved client: connect, then requests one after another, each
 * checked against what the VM must answer. */
static void *good_client(void *arg)
{
	struct good_arg *g = arg;
	struct load *L = g->L;
	static const char *const vars[] = {"system.pid", "sample.ticks",
					   "system.memory.", "system.uptime"};
	vmheap_client *c = NULL;
	int n = requests_per_client();
	struct spec_wait w;

	spec_wait_begin(&w, 60000);
	w.interval_ms = 1;
	while (!atomic_load(&L->go) && spec_wait_next(&w))
		;
	if (vmheap_client_connect_addr(&c, "127.0.0.1", L->vm.info.port, L->vm.info.token,
				       30000) < 0) {
		problem(L, "connect failed: %s%s",
			c ? vmheap_client_error(c) : "?", "");
		atomic_fetch_add(&L->failed, n);
		if (c)
			vmheap_client_close(c);
		atomic_fetch_add(&L->done, 1);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		int k = (i + g->index) % 4, rc, right;
		struct spec_reply rep;

		rc = k == 2 ? spec_client_call(c, "list", vars[k], NULL, &rep)
			    : spec_client_call(c, "get", vars[k], NULL, &rep);
		if (rc < 0) {
			problem(L, "a call failed: %s%s",
				vmheap_client_error(c), "");
			spec_reply_release(&rep);
			atomic_fetch_add(&L->failed, n - i);
			break;
		}
		switch (k) {
		case 0:
			right =
			    rep.ok &&
			    rep.value.type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
			    rep.value.via.u64 == (uint64_t)L->vm.pid;
			break;
		case 1:
			right = rep.ok && rep.value.type ==
					      MSGPACK_OBJECT_POSITIVE_INTEGER;
			break;
		case 2:
			right = rep.ok &&
				(rep.value.type == MSGPACK_OBJECT_ARRAY ||
				 rep.value.type == MSGPACK_OBJECT_MAP) &&
				rep.value.via.array.size > 0;
			break;
		default:
			right =
			    rep.ok && rep.value.type == MSGPACK_OBJECT_FLOAT64;
		}
		if (right) {
			atomic_fetch_add(&L->answered, 1);
		} else {
			atomic_fetch_add(&L->wrong, 1);
			problem(L, "wrong reply to %s: %.400s", vars[k],
				rep.ok ? "(unexpected value)" : rep.message);
		}
		spec_reply_release(&rep);
	}
	vmheap_client_close(c);
	atomic_fetch_add(&L->done, 1);
	return NULL;
}

static int raw_connect(uint16_t port)
{
	struct timeval tv = {15, 0};
	int fd = spec_tcp_connect(port);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * Read until the agent closes.  1 if it did within the receive timeout
 * after an error reply (the hello, then [nil, "error", code, message]),
 * 0 otherwise.
 */
static int agent_closes(int fd)
{
	static const char word[] = "\xa5"
				   "error";
	char buf[8192];
	size_t got = 0;

	for (;;) {
		ssize_t n = recv(fd, buf + got, sizeof(buf) - got, 0);
		if (n > 0 && got + (size_t)n < sizeof(buf)) {
			got += (size_t)n;
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return memmem(buf, got, word, sizeof(word) - 1) != NULL;
		if (n < 0 && errno != EINTR)
			return 0;
	}
}

/* A misbehaving client, again and again until the good ones finish:
 * kind 0 a frame of random bytes, 1 an oversized length, 2 half a frame then
 * silence, 3 nothing at all (no auth). */
static void *bad_client(void *arg)
{
	struct good_arg *g = arg;
	struct load *L = g->L;
	unsigned seed = (unsigned)g->index * 7919u + 1;
	int kind = g->index % 4;
	struct spec_wait w;

	/* waits of a thread: they do not fail the test (the good clients'
	 * counts do); the load ends within the test's own 50 s */
	spec_wait_begin(&w, 120000);
	w.interval_ms = 1;
	while (!atomic_load(&L->go) && spec_wait_next(&w))
		;
	w.interval_ms = 10;
	while (atomic_load(&L->done) < GOOD_CLIENTS) {
		int fd = raw_connect(L->vm.info.port);
		unsigned char buf[256];

		if (fd < 0) {
			if (!spec_wait_next(&w))
				break;
			continue;
		}
		if (kind < 2)
			atomic_fetch_add(&L->bad_rounds, 1);
		else
			atomic_fetch_add(&L->stalls, 1);
		if (kind == 0) {
			for (size_t i = 0; i < sizeof(buf); i++)
				buf[i] = (unsigned char)rand_r(&seed);
			/* a whole frame of random bytes */
			buf[0] = buf[1] = buf[2] = 0;
			buf[3] = (unsigned char)(sizeof(buf) - 4);
			if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) > 0 &&
			    agent_closes(fd))
				atomic_fetch_add(&L->bad_closed, 1);
		} else if (kind == 1) {
			static const unsigned char huge[] = {0xff, 0xff, 0xff,
							     0xff, 0x93};
			if (send(fd, huge, sizeof(huge), MSG_NOSIGNAL) > 0 &&
			    agent_closes(fd))
				atomic_fetch_add(&L->bad_closed, 1);
		} else {
			static const unsigned char half[] = {0,	 0,    0,
							     40, 0x94, 1};
			if (kind == 2 &&
			    send(fd, half, sizeof(half), MSG_NOSIGNAL) < 0)
				(void)0;
			/* hold the connection while the load runs */
			while (atomic_load(&L->done) < GOOD_CLIENTS &&
			       spec_wait_next(&w))
				;
		}
		close(fd);
	}
	return NULL;
}

START_TEST(many_clients_are_all_answered_while_the_vm_keeps_working)
{
	static struct load L;
	pthread_t good[GOOD_CLIENTS], bad[BAD_CLIENTS];
	struct good_arg ga[GOOD_CLIENTS], ba[BAD_CLIENTS];
	const char *tmp = spec_mkdtemp("load");
	vmheap_client *mon;
	int64_t t0, t1, tk0, tk1, tl0, tl1, rss0, rss1, rss_peak = 0, ms_load;
	int n = requests_per_client();
	double before, during;
	struct spec_wait w;
	struct spec_embedded opt = {.max_clients = MAX_CLIENTS};

	pthread_mutex_init(&L.lock, NULL);
	spec_vm_start_embedded(&L.vm, tmp, tmp, &opt);
	mon = spec_connect(&L.vm, 10000);
	ck_assert_ptr_nonnull(mon);

	/* The mutator runs flat out (no sleep between ticks), so that its
	 * tick rate measures what the agent's work takes from the VM. */
	{
		struct spec_reply rep;
		ck_assert_int_eq(spec_client_call_str(
				     mon, "set", "sample.tick_ms", "0", &rep),
				 0);
		ck_assert(rep.ok);
		spec_reply_release(&rep);
	}
	/* the VM alone: ticks per second over 2000 ticks, once it ticks
	 * flat out (a first 200) */
	spec_wait_uint(mon, "sample.ticks", spec_get_uint(mon, "sample.ticks") + 200,
		       30000);
	rss0 = spec_get_uint(mon, "system.memory.rss");
	tk0 = spec_get_uint(mon, "sample.ticks");
	t0 = spec_now_ms();
	spec_wait_uint(mon, "sample.ticks", tk0 + 2000, 60000);
	tk1 = spec_get_uint(mon, "sample.ticks");
	t1 = spec_now_ms();
	ck_assert_int_gt(tk1, tk0);
	before = (double)(tk1 - tk0) * 1000.0 / (double)(t1 - t0);

	for (int i = 0; i < GOOD_CLIENTS; i++) {
		ga[i] = (struct good_arg){&L, i};
		ck_assert_int_eq(
		    pthread_create(&good[i], NULL, good_client, &ga[i]), 0);
	}
	for (int i = 0; i < BAD_CLIENTS; i++) {
		ba[i] = (struct good_arg){&L, i};
		ck_assert_int_eq(
		    pthread_create(&bad[i], NULL, bad_client, &ba[i]), 0);
	}
	tl0 = spec_get_uint(mon, "sample.ticks");
	t0 = spec_now_ms();
	atomic_store(&L.go, 1);
	spec_wait_begin(&w, 50000);
	w.interval_ms = 200; /* the RSS's peak, sampled meanwhile */
	while (atomic_load(&L.done) < GOOD_CLIENTS && spec_wait_next(&w)) {
		int64_t r = spec_get_uint(mon, "system.memory.rss");
		if (r > rss_peak)
			rss_peak = r;
	}
	tl1 = spec_get_uint(mon, "sample.ticks");
	t1 = spec_now_ms();
	ms_load = t1 - t0;
	ck_assert_msg(
	    atomic_load(&L.done) == GOOD_CLIENTS,
	    "the load did not finish within 50 s (%d of %d clients done)",
	    atomic_load(&L.done), GOOD_CLIENTS);
	for (int i = 0; i < GOOD_CLIENTS; i++)
		pthread_join(good[i], NULL);
	for (int i = 0; i < BAD_CLIENTS; i++)
		pthread_join(bad[i], NULL);
	during = (double)(tl1 - tl0) * 1000.0 / (double)(ms_load ? ms_load : 1);

	/* the clients are gone (the agent holds only the monitor's
	 * connection): memory comes back */
	SPEC_WAIT_UNTIL(spec_tcp_count(L.vm.info.port, 1,
				       SPEC_TCP_ESTABLISHED |
					   SPEC_TCP_CLOSE_WAIT) == 1,
			30000, "the agent to close all but the monitor's connection "
			"(it holds %d)",
			spec_tcp_count(L.vm.info.port, 1,
				       SPEC_TCP_ESTABLISHED | SPEC_TCP_CLOSE_WAIT));
	rss1 = spec_get_uint(mon, "system.memory.rss");

	printf("load: %d clients x %d requests%s = %d requests in %.1f s "
	       "(%.0f requests/s); %lld answered correctly, %lld wrong, "
	       "%lld failed\n",
	       GOOD_CLIENTS, n,
	       SPEC_SANITIZED ? " (scaled down from 500 under ASan)" : "",
	       GOOD_CLIENTS * n, (double)ms_load / 1000.0,
	       (double)GOOD_CLIENTS * n * 1000.0 / (double)ms_load,
	       (long long)atomic_load(&L.answered),
	       (long long)atomic_load(&L.wrong),
	       (long long)atomic_load(&L.failed));
	printf("load: %d misbehaving clients: %lld connections sent garbage or "
	       "an oversized length, the agent replied with an error and "
	       "closed %lld of them; %lld "
	       "connections stalled (half a frame, or no auth) for the whole "
	       "run\n",
	       BAD_CLIENTS, (long long)atomic_load(&L.bad_rounds),
	       (long long)atomic_load(&L.bad_closed),
	       (long long)atomic_load(&L.stalls));
	printf("load: VM ticks/s %.1f before, %.1f during the load (%.0f%% of "
	       "before, slowed by %.0f%%)\n",
	       before, during, 100.0 * during / before,
	       during < before ? 100.0 * (before - during) / before : 0.0);
	printf(
	    "load: agent RSS %.1f MiB before, %.1f MiB peak, %.1f MiB after\n",
	    (double)rss0 / 1048576.0, (double)rss_peak / 1048576.0,
	    (double)rss1 / 1048576.0);
	if (L.first_problem[0])
		printf("load: first problem: %s\n", L.first_problem);

	ck_assert_int_eq(atomic_load(&L.answered), (int64_t)GOOD_CLIENTS * n);
	ck_assert_int_eq(atomic_load(&L.wrong), 0);
	ck_assert_int_eq(atomic_load(&L.failed), 0);
	ck_assert_int_gt(atomic_load(&L.bad_rounds), 0);
	ck_assert_int_eq(atomic_load(&L.bad_closed),
			 atomic_load(&L.bad_rounds));
	ck_assert_msg(tl1 > tl0, "the VM made no progress during the load");
	ck_assert_int_gt(rss0, 0);
	ck_assert_int_gt(rss1, 0);
	/* Generous: the allocator may keep some.  Not under ASan, whose
	 * quarantine holds on to freed memory (the mutator's too). */
	if (SPEC_SANITIZED)
		printf("load: the RSS bound is not asserted under ASan (its "
		       "quarantine keeps freed memory)\n");
	else
		ck_assert_msg(rss1 <= rss0 + 64 * 1048576LL,
			      "RSS %lld after the load vs %lld before",
			      (long long)rss1, (long long)rss0);
	/* the VM still answers, and stops cleanly */
	ck_assert_int_eq(spec_get_uint(mon, "system.pid"), L.vm.pid);
	vmheap_client_close(mon);
	ck_assert_int_eq(spec_vm_stop(&L.vm), 0);
	{
		char *left = spec_ls(tmp, '\n');
		ck_assert_msg(!*left, "files left behind: %s", left);
		free(left);
	}
	spec_rmrf(tmp);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("reliability_load");
	TCase *t = spec_tcase(s, "load", 120);

	tcase_add_test(
	    t, many_clients_are_all_answered_while_the_vm_keeps_working);
	return s;
}
