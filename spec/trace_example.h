/* trace_example.h - format/TRACE.md's worked example, as the encoder
 * writes it (spec/trace_example.c). */
#ifndef SPEC_TRACE_EXAMPLE_H
#define SPEC_TRACE_EXAMPLE_H
#include <stddef.h>
#include <stdint.h>
/* The example's bytes (malloc'd), *len their count. */
uint8_t *trace_example(size_t *len);
#endif
