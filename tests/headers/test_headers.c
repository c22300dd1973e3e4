/* The header checks are compile-time (tests/headers/CMakeLists.txt); this
 * program confirms the build saw the public headers and that plugin.h alone
 * gives a plugin what it needs. */
#include "plugrt/plugin.h"
#include "prt_test.h"

TEST(public_headers_compiled_as_c11_and_cpp)
{
    CHECK(PRT_NB_HEADERS >= 6);
}

TEST(plugin_h_is_self_sufficient)
{
    prt_writer w = prt_writer_init(NULL, 0);
    prt_write_str(&w, "abc");
    CHECK_EQ_INT(w.len, 7);
    CHECK_EQ_INT(prt_dtype_size(PRT_DTYPE_F16), 2);
    CHECK_EQ_INT(PRT_ABI_VERSION, 3); /* raised by every ABI addition (docs/plugin-abi.md) */
}
