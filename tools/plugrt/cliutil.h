/*
 * tools/plugrt/cliutil.h - small helpers shared by the `plugrt` sub-commands.
 */
#ifndef PLUGRT_TOOLS_CLIUTIL_H
#define PLUGRT_TOOLS_CLIUTIL_H

#include <stdint.h>

#include "plugrt/tensor.h"

/* Monotonic clock in milliseconds. */
double prt__cliutil_now_ms(void);

/* qsort comparator for doubles, ascending. */
int prt__cliutil_cmp_double(const void *a, const void *b);

/* Element i of a host buffer of type t as double (0 for types it does not read). */
double prt__cliutil_elem(const void *buf, prt_dtype t, int64_t i);

/* `s` made safe for a terminal: control characters (bytes below 0x20 and
 * 0x7f), bytes of 0x80 and above, and backslashes are written as \xNN (or
 * \n, \t, \e, \\), so that a name read from a file cannot move the cursor,
 * ring the bell or forge a line. The result lives in one of 8 rotating
 * buffers (enough for one printf); long names are cut with "...". NULL
 * gives "". */
const char *prt__cliutil_esc(const char *s);

#endif
