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

#endif /* VMHEAP_SPEC_HPROF_SHAPE_H */
