#include "core/core.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

TEST(status_names_and_messages)
{
    CHECK(strcmp(prt_status_name(PRT_STATUS_NOT_FOUND), "PRT_STATUS_NOT_FOUND") == 0);
    CHECK(strcmp(prt_status_str(PRT_OK), "success") == 0);
    CHECK(strcmp(prt_status_name((prt_status)999), "PRT_STATUS_UNKNOWN") == 0);
    CHECK(strcmp(prt_status_str((prt_status)-1), "unknown status") == 0);
}

TEST(error_messages_live_on_objects)
{
    int a, b;
    CHECK_EQ_INT(prt__err(&a, PRT_STATUS_NOT_FOUND, "a failed: %d", 1), PRT_STATUS_NOT_FOUND);
    (void)prt__err(&b, PRT_STATUS_INTERNAL, "b failed");
    CHECK(strcmp(prt_last_error(&a), "a failed: 1") == 0);
    CHECK(strcmp(prt_last_error(&b), "b failed") == 0);
    prt__err_clear(&a);
    CHECK(strcmp(prt_last_error(&a), "") == 0);
    /* NULL is a key of its own: calls made on no object */
    CHECK(strcmp(prt_last_error(NULL), "") == 0);
    (void)prt__err(NULL, PRT_STATUS_INVALID_ARGUMENT, "no object");
    CHECK(strcmp(prt_last_error(NULL), "no object") == 0);
    CHECK(strcmp(prt_last_error(&b), "b failed") == 0);
}

/* A message copied from another slot into a new key, when the store is full
 * and the new key takes exactly that slot (the least recently set): the copy
 * keeps the text (it was lost before: the slot was rewritten while it was
 * the argument, and a failure came back without a message). */
TEST(error_message_copied_from_the_slot_it_replaces)
{
    static int objs[16], outer;
    char want[64];
    int i;
    for (i = 0; i < 16; i++) (void)prt__err(&objs[i], PRT_STATUS_INTERNAL, "inner %d", i);
    CHECK(strcmp(prt_last_error(&objs[0]), "inner 0") == 0); /* the least recently set */
    (void)prt__err(&outer, PRT_STATUS_OUT_OF_MEMORY, "outer: %s", prt_last_error(&objs[0]));
    CHECK(strcmp(prt_last_error(&outer), "outer: inner 0") == 0);
    /* and into its own slot */
    (void)prt__err(&outer, PRT_STATUS_OUT_OF_MEMORY, "again: %s", prt_last_error(&outer));
    CHECK(strcmp(prt_last_error(&outer), "again: outer: inner 0") == 0);
    /* a cleared slot is taken before a live message is dropped */
    prt__err_clear(&objs[5]);
    (void)prt__err(&want, PRT_STATUS_INTERNAL, "new");
    for (i = 1; i < 16; i++) {
        char w[16];
        if (i == 5) continue;
        snprintf(w, sizeof w, "inner %d", i);
        CHECK_MSG(strcmp(prt_last_error(&objs[i]), w) == 0, "objs[%d]: \"%s\"", i, prt_last_error(&objs[i]));
    }
    CHECK(strcmp(prt_last_error(&want), "new") == 0);
}

TEST(alloc_failure_injection)
{
    void *p, *q;
    prt__alloc_fail_after(1);
    p = prt__malloc(8);
    q = prt__malloc(8);
    CHECK(p != NULL);
    CHECK(q == NULL);
    prt__alloc_fail_after(-1);
    prt__free(p);
}

TEST(f16_conversion_round_trips)
{
    uint32_t h;
    for (h = 0; h < 0x10000u; h++) {
        float f = prt_f16_to_f32((uint16_t)h);
        if (f != f) continue; /* NaN */
        CHECK_EQ_INT(prt_f32_to_f16(f), h);
    }
    CHECK_EQ_INT(prt_f32_to_f16(1.0f), 0x3c00);
    CHECK_EQ_INT(prt_f32_to_f16(65520.0f), 0x7c00);
    CHECK_NEAR(prt_f16_to_f32(prt_f32_to_f16(0.1f)), 0.0999755859375, 0);
}

static int logged;
static void count_log(void *user, prt_severity sev, const char *msg)
{
    (void)user;
    (void)sev;
    if (strstr(msg, "hello 7")) logged++;
}

TEST(logger_callback_and_severity_filter)
{
    prt_set_logger(count_log, NULL, PRT_SEVERITY_WARNING);
    prt_log(PRT_SEVERITY_INFO, "hello %d", 7);
    CHECK_EQ_INT(logged, 0);
    prt_log(PRT_SEVERITY_ERROR, "hello %d", 7);
    CHECK_EQ_INT(logged, 1);
    prt_set_logger(NULL, NULL, PRT_SEVERITY_WARNING);
}

TEST(dims_str)
{
    char buf[64];
    prt_dims d = {3, 0, {2, -1, 7}};
    CHECK(strcmp(prt_dims_str(&d, buf, sizeof buf), "[2, -1, 7]") == 0);
    CHECK_EQ_INT(prt_dims_volume(&d), -1);
    d.d[1] = 3;
    CHECK_EQ_INT(prt_dims_volume(&d), 42);
}
