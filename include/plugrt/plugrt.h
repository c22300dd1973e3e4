/* plugrt/plugrt.h - umbrella header for applications. Plugins include only
 * plugrt/plugin.h. */
#ifndef PLUGRT_PLUGRT_H
#define PLUGRT_PLUGRT_H
#include "status.h"
#include "tensor.h"
#include "field.h"
#include "blob.h"
#include "plugin.h"
#include "registry.h"
#include "op.h"
#include "inspect.h"
#endif
