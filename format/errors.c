/*
 * errors.c - names of libvmheap's error codes.
 */
#include "vmheap.h"

const char *vmheap_strerror(int code)
{
	switch (code) {
	case VMHEAP_OK:
		return "success";
	case VMHEAP_EIO:
		return "input/output error";
	case VMHEAP_ENOMEM:
		return "out of memory";
	case VMHEAP_EINVAL:
		return "invalid argument";
	case VMHEAP_EMAGIC:
		return "not a vmheap dump";
	case VMHEAP_EVERSION:
		return "unsupported format version";
	case VMHEAP_ETRUNCATED:
		return "dump is truncated";
	case VMHEAP_ECHECKSUM:
		return "checksum mismatch";
	case VMHEAP_EFORMAT:
		return "malformed dump";
	case VMHEAP_ELIMIT:
		return "format limit exceeded";
	case VMHEAP_ETOTALS:
		return "footer totals do not match the records";
	case VMHEAP_ENOSPC:
		return "no space left on device";
	case VMHEAP_ESTATE:
		return "call not valid in this state";
	default:
		return "unknown error";
	}
}
