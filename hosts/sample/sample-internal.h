/*
 * sample-internal.h - the sample VM: a tiny object heap, a mutator that
 * allocates and leaks, and the agent host callbacks.
 */
#ifndef VMHEAP_SAMPLE_INTERNAL_H
#define VMHEAP_SAMPLE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vmheap_agent.h"

#define SAMPLE_MAX_CLASSES 64

/* Object kinds (the dump header's kind names). */
enum sample_kind { KIND_OBJECT, KIND_STRING, KIND_ARRAY, KIND_HASH };

struct sample_class {
	char name[48];
	uint32_t super; /* class id, 0 for none */
	enum sample_kind kind;
};

/* The names of references (format 1.1 edge names), as dumps write them:
 * sample_ref_names[name] is the text of name `name`. */
enum sample_ref_name {
	REF_UNNAMED, /* no name; an Array's elements are named by index */
	REF_GLOBALS, /* "@globals": the vm Object's Hash of globals */
	REF_LEAKS,   /* "[:leaks]": the globals' leak Array */
	REF_APP,     /* "[:app]": the globals' application name */
	REF_BUFFER,  /* "@buffer": a Session's Buffer */
	REF_TEXT,    /* "@text": a Message's String */
	REF_HEADERS, /* "@headers": a Message's Hash */
	REF_BODY,    /* ["body"]: that Hash's String */
	REF_NAMES
};
extern const char *const sample_ref_names[REF_NAMES];

/* An object: a malloc'd struct; its address is its id in dumps. */
struct sample_obj {
	struct sample_obj *prev, *next; /* every live object */
	uint32_t cls;
	uint32_t nrefs, cap;
	struct sample_obj **refs;
	uint8_t *ref_names; /* [cap] enum sample_ref_name of each reference */
	size_t payload; /* bytes of payload (strings, buffers) */
	void *data;
};

struct sample_leak {
	uint32_t cls;
	unsigned per_tick;
};

struct sample_vm {
	pthread_mutex_t heap_lock; /* held by the mutator during a tick */
	struct sample_class classes[SAMPLE_MAX_CLASSES + 1]; /* 1-based */
	uint32_t nclasses;
	struct sample_obj *all;
	uint64_t live[SAMPLE_MAX_CLASSES + 1];
	uint64_t live_bytes;
	uint64_t live_objects;

	struct sample_obj *vm_root; /* root "vm" */
	struct sample_obj *globals; /* root "globals": a Hash */
	struct sample_obj *leaks;   /* an Array in globals */
	struct sample_obj *session; /* root "stack": the current Session */

	/* published after every tick, under stats_lock */
	pthread_mutex_t stats_lock;
	uint64_t census[SAMPLE_MAX_CLASSES + 1];
	uint64_t census_objects, census_bytes;
	uint32_t census_classes;

	struct sample_leak leak[16];
	int nleak;
	uint64_t max_ticks; /* 0: forever */
	atomic_uint_fast64_t ticks;
	atomic_int tick_ms;
	int walk_delay_ms;
	atomic_int stop;
	pthread_t mutator;

	vmheap_agent *agent;
	const struct vmheap_agent_host *host; /* for a fresh agent after fork */
	struct vmheap_agent_config cfg;
	/* the page writer (writer.c, sample.write_mb) */
	pthread_mutex_t write_lock;
	pthread_t writer;
	int write_started;
	atomic_int write_mb, stop_writer;
	char *write_buf;
	size_t write_cap_mb;
	atomic_int fork_child;	/* pid of a test fork child, or 0 */
	atomic_int fork_status; /* its exit status, -1 while it runs */
	uint64_t rng;
};

/* heap.c */
void sample_heap_init(struct sample_vm *vm);
void sample_heap_free(struct sample_vm *vm);
uint32_t sample_class_find_or_add(struct sample_vm *vm, const char *name);
void sample_tick(struct sample_vm *vm);
void sample_publish_census(struct sample_vm *vm);
void *sample_mutator_main(void *arg);

/* writer.c: `set sample.write_mb N` (0 to SAMPLE_WRITE_MAX_MB): write
 * every page of N MiB over and over; returns 0, or -1 with err set.  The
 * writer is stopped and its buffer freed by sample_writer_stop. */
#define SAMPLE_WRITE_MAX_MB 4096
int sample_writer_set(struct sample_vm *vm, long long mb, char *err,
		      size_t errlen);
void sample_writer_stop(struct sample_vm *vm);

/* host.c */
void sample_host_init(struct vmheap_agent_host *h, struct sample_vm *vm);

#endif
