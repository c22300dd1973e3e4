#ifndef PLUGRT_REGISTRY_STATIC_H
#define PLUGRT_REGISTRY_STATIC_H
#include "plugrt/plugin.h"
/* Head of the statically registered creators (newest first). */
prt_static_creator *prt__static_list(void);
#endif
