/* The build-and-run fuzz entry under a name of its own, for the replay program. */
#define PRT_FUZZ_ENTRY prt_fuzz_netrun
#include "fuzz_netrun.c"
