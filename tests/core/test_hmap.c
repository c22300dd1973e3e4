/* tests/core/test_hmap.c - the hash map against a plain array, through
 * inserts, repeated keys, removals and growth. */
#include <stdio.h>

#include "core/core.h"
#include "core/hmap.h"
#include "prt_test.h"

#define NKEYS 5000

TEST(string_map_matches_a_plain_array)
{
    static char keys[NKEYS][16];
    static int32_t want[NKEYS]; /* -1: not in the map */
    prt__hmap m;
    unsigned seed = 7;
    int i, step;
    prt__hmap_init(&m, PRT__HMAP_STRING);
    for (i = 0; i < NKEYS; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i * 7919 % NKEYS);
        want[i] = -1;
    }
    CHECK_EQ_INT(prt__hmap_get(&m, "absent"), -1);
    for (step = 0; step < 40000; step++) {
        int k;
        seed = seed * 1103515245u + 12345u;
        k = (int)((seed >> 8) % NKEYS);
        if ((seed >> 4) % 3) {
            int r = prt__hmap_put(&m, keys[k], k);
            CHECK_EQ_INT(r, want[k] >= 0 ? 1 : 0);
            want[k] = k;
        } else {
            prt__hmap_remove(&m, keys[k]);
            want[k] = -1;
        }
        if (step % 1000 == 0)
            for (i = 0; i < NKEYS; i++) CHECK_EQ_INT(prt__hmap_get(&m, keys[i]), want[i]);
    }
    for (i = 0; i < NKEYS; i++) CHECK_EQ_INT(prt__hmap_get(&m, keys[i]), want[i]);
    prt__hmap_free(&m);
}

TEST(pointer_map_compares_addresses_and_fails_cleanly)
{
    static int cells[1000];
    char a[] = "same", b[] = "same";
    prt__hmap m, s;
    int i;
    prt__hmap_init(&m, PRT__HMAP_POINTER);
    for (i = 0; i < 1000; i++) CHECK_EQ_INT(prt__hmap_put(&m, &cells[i], i), 0);
    for (i = 0; i < 1000; i++) CHECK_EQ_INT(prt__hmap_get(&m, &cells[i]), i);
    CHECK_EQ_INT(prt__hmap_put(&m, a, 1), 0);
    CHECK_EQ_INT(prt__hmap_get(&m, b), -1); /* equal text, other address */
    prt__hmap_free(&m);
    /* Out of memory: the map is unchanged. */
    prt__hmap_init(&s, PRT__HMAP_STRING);
    prt__alloc_fail_after(0);
    CHECK_EQ_INT(prt__hmap_put(&s, "x", 3), -1);
    prt__alloc_fail_after(-1);
    CHECK_EQ_INT(prt__hmap_get(&s, "x"), -1);
    CHECK_EQ_INT(prt__hmap_put(&s, "x", 3), 0);
    CHECK_EQ_INT(prt__hmap_get(&s, "x"), 3);
    prt__hmap_free(&s);
}
