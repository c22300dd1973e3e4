// Compiled (not run) as TensorRT 11.x by the suite: the API traits hold and
// the test plugins' sources compile unchanged against the 11.x headers too.
#include "api_traits.h"

#if NV_TENSORRT_MAJOR != 11
#error "api_check.cpp is compiled with NV_TENSORRT_MAJOR=11"
#endif
