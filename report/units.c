/*
 * units.c - quantities for people: byte counts with binary units, three
 * significant digits, and shares of a total (part of libvmheap-report).
 */
#include <stdio.h>

#include "vmheap_report.h"

void vmheap_format_size(char *buf, size_t len, unsigned long long bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB",
					    "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", bytes);
		return;
	}
	while (v >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	/* Three significant digits; a value that rounds up to 1024 moves
	 * to the next unit ("1023.9 KiB" is "1.00 MiB"). */
	if (v >= 999.5 && u < 5) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len,
		 v >= 99.95   ? "%.0f %s"
		 : v >= 9.995 ? "%.1f %s"
			      : "%.2f %s",
		 v, units[u]);
}

void vmheap_format_size_delta(char *buf, size_t len, long long delta)
{
	unsigned long long mag = delta < 0 ? 0ULL - (unsigned long long)delta
					   : (unsigned long long)delta;

	if (len < 2) {
		if (len)
			buf[0] = '\0';
		return;
	}
	buf[0] = delta > 0 ? '+' : '-';
	if (delta == 0) {
		snprintf(buf, len, "0 B");
		return;
	}
	vmheap_format_size(buf + 1, len - 1, mag);
}

void vmheap_format_bytes(char *buf, size_t len, unsigned long long bytes)
{
	char size[32];

	if (bytes < 1024) {
		snprintf(buf, len, "%llu bytes", bytes);
		return;
	}
	vmheap_format_size(size, sizeof(size), bytes);
	snprintf(buf, len, "%s (%llu bytes)", size, bytes);
}

void vmheap_format_share(char *buf, size_t len, double part, double total,
			 int plus)
{
	double pct;

	if (total <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	pct = 100.0 * part / total;
	if (pct > -0.05 && pct < 0.05)
		pct = 0; /* no "-0.0%" */
	snprintf(buf, len, plus && pct > 0 ? "+%.1f%%" : "%.1f%%", pct);
}
