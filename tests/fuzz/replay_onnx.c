/* The ONNX reader fuzz entry under a name of its own, for the replay program. */
#ifdef PLUGRT_HAVE_ONNX
#define PRT_FUZZ_ENTRY prt_fuzz_onnx
#include "fuzz_onnx.c"
#endif
