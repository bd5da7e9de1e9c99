/*
 * record_fence.c - the recorder's asymmetric fence.
 *
 * A recording thread and a thread that must know it is outside every
 * call's recording (the end, native_record_finish; a growing table,
 * record_ids.c) meet as in Dekker's algorithm: the recording thread sets
 * its in_use (or clears its parked) then reads native_rec_gate,
 * the other sets the flag then reads every in_use.  Each side needs a
 * full fence between its store and its load.  The rare side's is
 * membarrier(2), which makes every running thread of the process pass
 * one, so the recording threads' side is a compiler barrier (an xchg per
 * call otherwise: 20-odd cycles each); without membarrier, a seq_cst
 * store.
 */
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native-internal.h"
#include "record-internal.h"

int native_rec_asymmetric;

void native_record_fences(void)
{
	native_rec_asymmetric =
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0) == 0;
}

void native_record_fence_end(void)
{
	if (!native_rec_asymmetric ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) !=
		0)
		atomic_thread_fence(memory_order_seq_cst);
}
