/*
 * saturated.c - what every output says when a sum of sizes was held at
 * 2^64 - 1 (see vmheap_report.h).
 */
#include "vmheap_report.h"

#define NOTE                                                                   \
	"byte sums passed 2^64 - 1 and are held at 18446744073709551615: "   \
	"the dump's sizes cannot all be true"

void vmheap_strbuf_add_saturated(struct vmheap_strbuf *out,
				 enum vmheap_output_format format)
{
	switch (format) {
	case VMHEAP_OUTPUT_TEXT:
		vmheap_strbuf_addf(out, "warning: %s\n", NOTE);
		break;
	case VMHEAP_OUTPUT_JSON:
		vmheap_strbuf_addf(out, ",\"saturated\":true,\"warning\":\"%s\"",
				   NOTE);
		break;
	case VMHEAP_OUTPUT_CSV:
		vmheap_strbuf_addf(out, "# warning: %s\n", NOTE);
		break;
	}
}
