/* The plugin-record fuzz entry under a name of its own, for the replay program. */
#define PRT_FUZZ_ENTRY prt_fuzz_record
#include "fuzz_record.c"
