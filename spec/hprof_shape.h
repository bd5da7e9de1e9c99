/*
 * hprof_shape.h - a real HotSpot HPROF rewritten in the shapes other JVMs
 * write (for spec/import_test.c): an older header, 4-byte ids, the old
 * hprof agent's class names, records out of HotSpot's order.
 */
#ifndef VMHEAP_SPEC_HPROF_SHAPE_H
#define VMHEAP_SPEC_HPROF_SHAPE_H

#include <stddef.h>

/*
 * The HPROF in[0..len) (HotSpot's: "JAVA PROFILE 1.0.2", 8-byte ids;
 * UTF8, LOAD CLASS, FRAME, TRACE and HEAP DUMP SEGMENT records) written
 * again as JDK 6's hprof agent wrote it: header `version`; ids of
 * `id_size` bytes (4: renumbered 1, 2, ... in the order met, the CLASS
 * DUMP's instance size recomputed); class names dotted, arrays named
 * "java.lang.Object[]", "int[][]"; and one HEAP DUMP SEGMENT in which
 * every CLASS DUMP comes after all the instances, arrays and roots.
 * Returns the new file (malloc'd), its length in *out_len.  Fails the
 * test on a record it does not know.
 */
unsigned char *hprof_old_shape(const unsigned char *in, size_t len,
			       const char *version, unsigned id_size,
			       size_t *out_len);

/* A file being built: bytes appended (big-endian values), malloc'd. */
struct hprof_out {
	unsigned char *p;
	size_t len, cap;
};
void hprof_put(struct hprof_out *o, const void *data, size_t n);
void hprof_put_u(struct hprof_out *o, unsigned long long v, unsigned size);
/* A record of `tag` whose body is b (time 0). */
void hprof_put_record(struct hprof_out *o, unsigned tag,
		      const struct hprof_out *b);

#endif /* VMHEAP_SPEC_HPROF_SHAPE_H */
