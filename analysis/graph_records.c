/*
 * graph_records.c - a dump's records read ahead on a second thread for
 * graph_build (graph-internal.h, "Records read ahead").
 *
 * The second thread calls vmheap_reader_next() (reading, CRC, decoding:
 * about half the build's time) and copies each record the graph uses into
 * a batch: the records themselves, and their references, names and texts
 * into the batch's own arrays.  The building thread takes whole batches in
 * file order.  Three batches go round, so that neither thread waits on the
 * other while both have work.  The reader is only ever used by the second
 * thread until the end (or error) was handed over; its error message is
 * read after that.  The first THREAD_AFTER_BATCHES batches, and every one
 * on a single processor, are filled on the calling thread when asked for:
 * the same records in the same order.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph-internal.h"

#define BATCHES 3
#define BATCH_RECORDS 4096
/* The first million records or so are read on the calling thread: a
 * small dump costs no thread (nor the memory arena glibc gives the
 * thread's allocations, which would stay mapped). */
#define THREAD_AFTER_BATCHES 256

struct batch {
	struct vmheap_record *recs; /* [BATCH_RECORDS] */
	size_t n;
	uint64_t *refs;
	size_t nrefs, refs_cap;
	int64_t *names;
	size_t nnames, names_cap;
	char *text;
	size_t ntext, text_cap;
	int rc; /* after the records: 1 more to come, 0 end, < 0 error */
	int copy_failed; /* rc is keep_record's, not the reader's */
};

struct graph_records {
	vmheap_reader *r;
	struct batch batches[BATCHES];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* batches filled so far, and given back by the builder: batch k
	 * is batches[k % BATCHES]; filled - released <= BATCHES */
	size_t filled, released;
	int holding; /* the builder reads batch `released` */
	int stop;    /* the builder wants no more */
	int threaded;
	size_t sync_batches; /* filled on the calling thread */
	pthread_t tid;
};

static int reserve(void **p, size_t *cap, size_t len, size_t add, size_t size)
{
	if (len + add <= *cap)
		return 0;
	size_t c = *cap ? *cap : 4096;
	while (c < len + add)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return VMHEAP_ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Copy rec's arrays into b; the pointers are set once the batch is full
 * (the arrays may move while it fills), from the offsets left in them. */
static int keep_record(struct batch *b, const struct vmheap_record *rec)
{
	struct vmheap_record *k = &b->recs[b->n];

	*k = *rec;
	switch (rec->type) {
	case VMHEAP_RECORD_OBJECT:
	case VMHEAP_RECORD_MORE_REFS: {
		size_t nr = rec->u.object.nrefs;
		if (reserve((void **)&b->refs, &b->refs_cap, b->nrefs, nr,
			    sizeof(*b->refs)) < 0)
			return VMHEAP_ENOMEM;
		if (nr)
			memcpy(b->refs + b->nrefs, rec->u.object.refs,
			       nr * sizeof(*b->refs));
		k->u.object.refs = (const uint64_t *)(uintptr_t)b->nrefs;
		b->nrefs += nr;
		if (rec->u.object.names) {
			if (reserve((void **)&b->names, &b->names_cap,
				    b->nnames, nr, sizeof(*b->names)) < 0)
				return VMHEAP_ENOMEM;
			if (nr)
				memcpy(b->names + b->nnames,
				       rec->u.object.names,
				       nr * sizeof(*b->names));
			/* offset + 1: 0 stays "no names" */
			k->u.object.names =
			    (const int64_t *)(uintptr_t)(b->nnames + 1);
			b->nnames += nr;
		}
		break;
	}
	case VMHEAP_RECORD_STRING:
	case VMHEAP_RECORD_CLASS: {
		const char *t = rec->type == VMHEAP_RECORD_STRING
				    ? rec->u.string.text
				    : rec->u.klass.name;
		size_t len = rec->type == VMHEAP_RECORD_STRING
				 ? rec->u.string.len
				 : rec->u.klass.name_len;
		if (reserve((void **)&b->text, &b->text_cap, b->ntext, len + 1,
			    1) < 0)
			return VMHEAP_ENOMEM;
		if (len)
			memcpy(b->text + b->ntext, t, len);
		if (rec->type == VMHEAP_RECORD_STRING)
			k->u.string.text = (const char *)(uintptr_t)b->ntext;
		else
			k->u.klass.name = (const char *)(uintptr_t)b->ntext;
		b->ntext += len + 1;
		break;
	}
	case VMHEAP_RECORD_ROOT:
		break;
	case VMHEAP_RECORD_SITE: /* not part of the graph */
		return 0;
	}
	b->n++;
	return 0;
}

/* Turn the offsets keep_record left into pointers. */
static void point_records(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct vmheap_record *k = &b->recs[i];
		switch (k->type) {
		case VMHEAP_RECORD_OBJECT:
		case VMHEAP_RECORD_MORE_REFS:
			k->u.object.refs =
			    b->refs + (uintptr_t)k->u.object.refs;
			if (k->u.object.names)
				k->u.object.names =
				    b->names +
				    ((uintptr_t)k->u.object.names - 1);
			break;
		case VMHEAP_RECORD_STRING:
			k->u.string.text =
			    b->text + (uintptr_t)k->u.string.text;
			break;
		case VMHEAP_RECORD_CLASS:
			k->u.klass.name = b->text + (uintptr_t)k->u.klass.name;
			break;
		default:
			break;
		}
	}
}

/* Fill b with the next records of r (up to BATCH_RECORDS). */
static void fill(struct batch *b, vmheap_reader *r)
{
	struct vmheap_record rec;
	int rc = 1;

	b->n = b->nrefs = b->nnames = b->ntext = 0;
	b->copy_failed = 0;
	while (b->n < BATCH_RECORDS && (rc = vmheap_reader_next(r, &rec)) > 0)
		if (keep_record(b, &rec) < 0) {
			rc = VMHEAP_ENOMEM;
			b->copy_failed = 1;
			break;
		}
	b->rc = rc;
	point_records(b);
}

static void *read_ahead(void *arg)
{
	struct graph_records *q = arg;

	for (;;) {
		pthread_mutex_lock(&q->mu);
		while (!q->stop && q->filled - q->released == BATCHES)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop) {
			pthread_mutex_unlock(&q->mu);
			return NULL;
		}
		/* the batch the builder gave back last: none reads it */
		struct batch *b = &q->batches[q->filled % BATCHES];
		pthread_mutex_unlock(&q->mu);
		fill(b, q->r);
		pthread_mutex_lock(&q->mu);
		q->filled++;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		if (b->rc <= 0)
			return NULL;
	}
}

int graph_records_open(struct graph_records **out, vmheap_reader *r)
{
	struct graph_records *q = calloc(1, sizeof(*q));

	*out = NULL;
	if (!q)
		return VMHEAP_ENOMEM;
	q->r = r;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	for (size_t i = 0; i < BATCHES; i++) {
		q->batches[i].recs =
		    malloc(BATCH_RECORDS * sizeof(*q->batches[i].recs));
		if (!q->batches[i].recs) {
			graph_records_close(q);
			return VMHEAP_ENOMEM;
		}
	}
	*out = q;
	return 0;
}

int graph_records_next(struct graph_records *q,
		       const struct vmheap_record **recs, size_t *n,
		       int *reader_failed)
{
	struct batch *b;

	if (!q->threaded && q->sync_batches == THREAD_AFTER_BATCHES)
		q->threaded = sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
			      pthread_create(&q->tid, NULL, read_ahead, q) == 0;
	if (!q->threaded) {
		b = &q->batches[0];
		fill(b, q->r);
		q->sync_batches++; /* (tried once at the threshold) */
	} else {
		pthread_mutex_lock(&q->mu);
		if (q->holding) { /* the batch before is done with */
			q->released++;
			pthread_cond_broadcast(&q->cv);
		}
		while (q->filled == q->released)
			pthread_cond_wait(&q->cv, &q->mu);
		b = &q->batches[q->released % BATCHES];
		q->holding = 1;
		pthread_mutex_unlock(&q->mu);
	}
	*recs = b->recs;
	*n = b->n;
	*reader_failed = b->rc < 0 && !b->copy_failed;
	return b->rc;
}

void graph_records_close(struct graph_records *q)
{
	if (!q)
		return;
	if (q->threaded) {
		pthread_mutex_lock(&q->mu);
		q->stop = 1;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		pthread_join(q->tid, NULL);
	}
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	for (size_t i = 0; i < BATCHES; i++) {
		free(q->batches[i].recs);
		free(q->batches[i].refs);
		free(q->batches[i].names);
		free(q->batches[i].text);
	}
	free(q);
}
