/* The error idiom (docs/plugin-abi.md, "Errors: one idiom"): an application
 * call leaves its message on the object it was made on, per thread, read
 * with prt_last_error(obj); a call made on no object (a NULL handle) leaves
 * it on NULL; calls with an err/cap buffer write there. One store holds the
 * messages (src/core/alloc.c). */
#include <pthread.h>

#include "plugrt/engine.h"
#include "plugrt/npy.h"
#include "plugrt/op.h"
#include "prt_test.h"

TEST(creating_calls_leave_the_message_on_the_handle_they_were_made_on)
{
    prt_registry *r = NULL, *child = NULL;
    prt_op *op = NULL;
    prt_network *net = NULL;
    prt_fields none = {NULL, 0, 0};
    CHECK_OK(prt_registry_create(NULL, &r));
    /* prt_registry_create: on the parent */
    CHECK_EQ_INT(prt_registry_create(r, NULL), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "prt_registry_create: out is NULL");
    /* prt_op_create / prt_op_deserialize: on the registry (and, for older callers, prt_op_last_error(NULL)) */
    CHECK_EQ_INT(prt_op_create(r, "NoSuchOp", "1", "", &none, &op), PRT_STATUS_NOT_FOUND);
    CHECK(op == NULL);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "NoSuchOp");
    CHECK(strcmp(prt_last_error(r), prt_op_last_error(NULL)) == 0);
    CHECK(prt_op_deserialize(r, "x", 1, &op) != PRT_OK);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "plugin record");
    /* prt_network_create: on the registry */
    CHECK_EQ_INT(prt_network_create(r, NULL), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "prt_network_create: out is NULL");
    /* a child's failure does not touch its parent's message */
    CHECK_OK(prt_registry_create(r, &child));
    CHECK_EQ_INT(prt_op_create(child, "OtherOp", "1", "", &none, &op), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(child), "OtherOp");
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "prt_network_create");
    prt_registry_destroy(child);
    prt_registry_destroy(r);
}

TEST(calls_made_on_no_object_leave_the_message_on_null)
{
    prt_op *op = NULL;
    prt_fields none = {NULL, 0, 0};
    CHECK_EQ_INT(prt_registry_create(NULL, NULL), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_last_error(NULL), "prt_registry_create: out is NULL");
    CHECK_EQ_INT(prt_op_create(NULL, "X", "1", "", &none, &op), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_last_error(NULL), "prt_op_create needs a registry");
    CHECK(prt_op_last_error(NULL) == prt_last_error(NULL));
}

TEST(context_and_npy_messages_live_on_their_objects)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_context_config cc;
    prt_npy_array a;
    prt_dims d = {1, 0, {4}};
    const float beta = 1.0f;
    prt_field f = {"beta", &beta, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    const char *in[1] = {"x"}, *out[1] = {"y"};
    char err[512];
    CHECK_OK(prt_network_create(NULL, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_EQ_INT(prt_network_add_layer(net, "s", "Swish", "1", "", &fc, in, 1, in, 1), PRT_STATUS_ALREADY_EXISTS);
    CHECK_STR_CONTAINS(prt_network_last_error(net), "\"x\"");
    CHECK_OK(prt_network_add_layer(net, "s", "Swish", "1", "", &fc, in, 1, out, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    CHECK_OK(prt_engine_build(net, NULL, NULL, &e, err, sizeof err));
    prt_context_config_init(&cc);
    cc.struct_size = 4;
    CHECK_EQ_INT(prt_context_create(e, &cc, &ctx), PRT_STATUS_INVALID_ARGUMENT);
    CHECK(ctx == NULL);
    CHECK_STR_CONTAINS(prt_engine_last_error(e), "struct_size");
    memset(&a, 0, sizeof a);
    CHECK(prt_npy_read_file("/nonexistent/plugrt.npy", &a) != PRT_OK);
    CHECK_STR_CONTAINS(prt_last_error(&a), "/nonexistent/plugrt.npy");
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

static void *fail_on_thread(void *arg)
{
    prt_registry *r = arg;
    prt_op *op = NULL;
    prt_fields none = {NULL, 0, 0};
    if (prt_op_create(r, "ThreadOp", "1", "", &none, &op) == PRT_OK) prt_op_destroy(op);
    return (void *)(strstr(prt_registry_last_error(r), "ThreadOp") ? r : NULL);
}

TEST(messages_are_per_thread)
{
    prt_registry *r = NULL;
    pthread_t t;
    void *res = NULL;
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_EQ_INT(prt_registry_create(r, NULL), PRT_STATUS_INVALID_ARGUMENT);
    CHECK(pthread_create(&t, NULL, fail_on_thread, r) == 0);
    CHECK(pthread_join(t, &res) == 0);
    CHECK(res == r);                                    /* the other thread saw its own message */
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "out is NULL"); /* this thread keeps its own */
    prt_registry_destroy(r);
}

/* The library keeps one store of messages: no module holds a buffer of its
 * own for "the last error" (op.c's thread-local one is gone). */
TEST(one_message_store_in_the_library)
{
    char cmd[2048], line[4096], first[4096] = "";
    int n = 0;
    FILE *p;
    snprintf(cmd, sizeof cmd, "grep -rn --include='*.c' --include='*.h' -E '_Thread_local[^;]*char' '%s/src'",
             PRT_SOURCE_DIR);
    p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) return;
    while (fgets(line, sizeof line, p))
        if (n++ == 0) snprintf(first, sizeof first, "%s", line);
    pclose(p);
    CHECK_MSG(n == 0, "a second store of messages: %s", first);
}
