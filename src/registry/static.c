/* registry/static.c - the list PRT_REGISTER_CREATOR fills at load time. */
#include <stdatomic.h>

#include "registry/static.h"

static _Atomic(prt_static_creator *) static_head;

void prt_static_creator_push(prt_static_creator *node)
{
    prt_static_creator *old = atomic_load(&static_head);
    do {
        node->next = old;
    } while (!atomic_compare_exchange_weak(&static_head, &old, node));
}

prt_static_creator *prt__static_list(void)
{
    return atomic_load(&static_head);
}
