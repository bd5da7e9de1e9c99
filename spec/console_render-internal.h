/*
 * console_render-internal.h - the "rendering" case of the console suite
 * (spec/console_render_test.c: render.c and json.c on values built with
 * msgpack-c), added to the suite by spec/console_test.c.
 */
#ifndef CONSOLE_RENDER_INTERNAL_H
#define CONSOLE_RENDER_INTERNAL_H

#include <check.h>

TCase *console_render_tcase(void);

#endif
