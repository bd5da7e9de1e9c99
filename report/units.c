/*
 * units.c - quantities for people: byte counts with binary units (part of
 * libvmheap-report).
 */
#include <stdio.h>

#include "vmheap_report.h"

void vmheap_format_bytes(char *buf, size_t len, unsigned long long bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB",
					    "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu bytes", bytes);
		return;
	}
	while (v >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, "%.1f %s (%llu bytes)", v, units[u], bytes);
}
