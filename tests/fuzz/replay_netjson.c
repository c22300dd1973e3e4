/* The network JSON fuzz entry under a name of its own, for the replay program. */
#define PRT_FUZZ_ENTRY prt_fuzz_netjson
#include "fuzz_netjson.c"
