/* The plan-running fuzz entry under a name of its own, for the replay program. */
#define PRT_FUZZ_ENTRY prt_fuzz_planrun
#include "fuzz_planrun.c"
