/* The timing-cache fuzz entry under a name of its own, for the replay program. */
#define PRT_FUZZ_ENTRY prt_fuzz_tcache
#include "fuzz_tcache.c"
