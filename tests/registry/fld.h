/* tests/registry/fld.h - a prt_field in one expression, for field tests. */
#ifndef TESTS_REGISTRY_FLD_H
#define TESTS_REGISTRY_FLD_H

#include <string.h>

#include "plugrt/field.h"

static inline prt_field fld(const char *name, prt_field_type type, const void *data, int64_t count)
{
    prt_field f;
    memset(&f, 0, sizeof f);
    f.name = name;
    f.type = type;
    f.data = data;
    f.count = count;
    return f;
}

#endif
