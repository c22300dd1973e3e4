// plugrt/npy.h must compile as C++ as well as C11.
#include "plugrt/npy.h"

extern "C" size_t prt_test_npy_cxx_size(void);
extern "C" size_t prt_test_npy_cxx_size(void)
{
    prt_npy_array a = {};
    a.type = PRT_NPY_F8;
    return prt_npy_type_size(a.type) + sizeof a;
}
