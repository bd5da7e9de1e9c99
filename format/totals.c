/*
 * totals.c - add one decoded record to a struct vmheap_totals, the way
 * the footer counts it (see FORMAT.md, "Footer").
 */
#include "vmheap.h"

void vmheap_totals_add_record(struct vmheap_totals *t,
			      const struct vmheap_record *rec)
{
	switch (rec->type) {
	case VMHEAP_RECORD_OBJECT:
		t->objects++;
		t->bytes += rec->u.object.bytes;
		t->references += rec->u.object.nrefs;
		break;
	case VMHEAP_RECORD_MORE_REFS:
		t->references += rec->u.object.nrefs;
		break;
	case VMHEAP_RECORD_STRING:
		t->strings++;
		break;
	case VMHEAP_RECORD_CLASS:
		t->classes++;
		break;
	case VMHEAP_RECORD_ROOT:
		t->roots++;
		break;
	case VMHEAP_RECORD_SITE:
		t->sites++;
		break;
	}
}
