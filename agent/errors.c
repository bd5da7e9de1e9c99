/*
 * errors.c - names of the agent's error codes and their protocol words.
 */
#include <errno.h>
#include <stdio.h>

#include "agent-internal.h"

const char *vmheap_agent_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case VMHEAP_AGENT_ESYS:
		return "system call failed";
	case VMHEAP_AGENT_EPROTO:
		return "protocol error";
	case VMHEAP_AGENT_EAUTH:
		return "token refused";
	case VMHEAP_AGENT_EBUSY:
		return "a dump is already running";
	case VMHEAP_AGENT_EEXIST:
		return "file exists";
	case VMHEAP_AGENT_EPATH:
		return "path leaves the dump directory";
	case VMHEAP_AGENT_ENOTFOUND:
		return "not found";
	case VMHEAP_AGENT_ETYPE:
		return "wrong value type";
	case VMHEAP_AGENT_EREADONLY:
		return "variable is read-only";
	case VMHEAP_AGENT_ECONNECT:
		return "cannot connect";
	case VMHEAP_AGENT_ECLOSED:
		return "connection closed by the agent";
	case VMHEAP_AGENT_ETIMEOUT:
		return "timed out";
	case VMHEAP_AGENT_EDUMP:
		return "dump failed";
	case VMHEAP_AGENT_EDISCOVERY:
		return "bad discovery file";
	case VMHEAP_AGENT_ELIMIT:
		return "limit exceeded";
	case VMHEAP_AGENT_ECOMMAND:
		return "unknown command";
	case VMHEAP_AGENT_EUNSUPPORTED:
		return "not supported by this VM";
	}
	if (code < 0 && code > -100)
		return vmheap_strerror(code);
	return "unknown error";
}

const char *agent_code_word(int code)
{
	switch (code) {
	case VMHEAP_AGENT_ESYS:
		return "system";
	case VMHEAP_AGENT_EPROTO:
		return "protocol";
	case VMHEAP_AGENT_EAUTH:
		return "auth";
	case VMHEAP_AGENT_EBUSY:
		return "busy";
	case VMHEAP_AGENT_EEXIST:
		return "exists";
	case VMHEAP_AGENT_EPATH:
		return "path";
	case VMHEAP_AGENT_ENOTFOUND:
		return "notfound";
	case VMHEAP_AGENT_ETYPE:
		return "type";
	case VMHEAP_AGENT_EREADONLY:
		return "readonly";
	case VMHEAP_AGENT_ETIMEOUT:
		return "timeout";
	case VMHEAP_AGENT_EDUMP:
		return "dump";
	case VMHEAP_AGENT_ELIMIT:
		return "limit";
	case VMHEAP_AGENT_ECOMMAND:
		return "command";
	case VMHEAP_AGENT_EUNSUPPORTED:
		return "unsupported";
	case VMHEAP_ENOSPC:
		return "nospace";
	case VMHEAP_ENOMEM:
		return "nomem";
	}
	return "internal";
}

int agent_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

void agent_msgf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

int agent_is_nospace(int e)
{
	return e == ENOSPC || e == EFBIG || e == EDQUOT;
}
