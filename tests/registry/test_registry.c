/* The registry: registration checks, duplicates naming both owners, near
 * misses, parent fallback, removal, listing with shadowing, the global
 * registry and static registration, concurrent lookups while another thread
 * registers and removes, and allocation failures. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "core/core.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define CHECK_NO_LEAKS() CHECK(__lsan_do_recoverable_leak_check() == 0)
#else
#define CHECK_NO_LEAKS() ((void)0)
#endif

static prt_status field_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                               prt_field_plugin **out, prt_msg *err)
{
    (void)c; (void)fc; (void)phase; (void)out;
    prt_msg_set(err, "not meant to be called");
    return PRT_STATUS_UNSUPPORTED;
}

static prt_status blob_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                              prt_msg *err)
{
    (void)c; (void)fc; (void)out; (void)err;
    return PRT_STATUS_UNSUPPORTED;
}

static prt_status blob_deserialize(const prt_plugin_creator *c, const void *b, size_t n, prt_blob_plugin **out,
                                   prt_msg *err)
{
    (void)c; (void)b; (void)n; (void)out; (void)err;
    return PRT_STATUS_UNSUPPORTED;
}

static const prt_field_schema one_field[] = {
    {.name = "k", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1},
};

#define CREATOR(var, nm, ver, ns)                                                                       \
    static const prt_plugin_creator var = {sizeof(prt_plugin_creator), PRT_ABI_VERSION, nm, ver, ns,   \
                                           PRT_STYLE_FIELD, 1, one_field, sizeof(prt_field_schema), 0, \
                                           NULL, NULL, field_create, "a test creator", NULL}

CREATOR(foo1, "Foo", "1", "");
CREATOR(foo2, "Foo", "2", "");
CREATOR(foo2_again, "Foo", "2", "");
CREATOR(foo1_ns, "Foo", "1", "ns1");
CREATOR(foo3_lower, "foo", "3", "");
CREATOR(bar1, "Bar", "1", "");
CREATOR(baz1_null_ns, "Baz", "1", NULL);
CREATOR(static_ok, "RegTestStatic", "1", "regtest");
CREATOR(static_dup, "RegTestStatic", "1", "regtest");

static const prt_field_schema broken_field[] = {
    {.name = "k", .type = PRT_FIELD_INT32, .min_count = 2, .max_count = 1},
};
static const prt_plugin_creator static_broken = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegTestBroken", "1", "regtest", PRT_STYLE_FIELD, 1,
    broken_field, sizeof(prt_field_schema), 0, NULL, NULL, field_create, NULL, NULL};

/* Static registration: one good, one with a broken schema (skipped and
 * logged), one duplicate key (skipped and logged). */
PRT_REGISTER_CREATOR(static_ok)
PRT_REGISTER_CREATOR(static_broken)
PRT_REGISTER_CREATOR(static_dup)

static prt_registry *new_reg(prt_registry *parent)
{
    prt_registry *r = NULL;
    CHECK_OK(prt_registry_create(parent, &r));
    return r;
}

static int32_t count_of(prt_registry *r)
{
    int32_t nb = -1;
    CHECK_OK(prt_registry_list(r, NULL, 0, &nb));
    return nb;
}

TEST(registry_add_find_owner)
{
    prt_registry *r = new_reg(NULL);
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    char name[8];
    CHECK_OK(prt_registry_add(r, &foo1, "app"));
    CHECK_OK(prt_registry_add(r, &foo1_ns, "app"));
    CHECK_OK(prt_registry_add(r, &baz1_null_ns, "app"));
    CHECK_OK(prt_registry_find(r, "Foo", "1", NULL, &c, &owner));
    CHECK(c == &foo1);
    CHECK(owner && strcmp(owner, "app") == 0);
    CHECK_OK(prt_registry_find(r, "Foo", "1", "", &c, NULL));
    CHECK(c == &foo1);
    CHECK_OK(prt_registry_find(r, "Foo", "1", "ns1", &c, NULL));
    CHECK(c == &foo1_ns);
    CHECK_OK(prt_registry_find(r, "Baz", "1", "", &c, NULL)); /* NULL namespace is "" */
    CHECK(c == &baz1_null_ns);
    /* The owner string is a copy. */
    strcpy(name, "mine");
    CHECK_OK(prt_registry_add(r, &bar1, name));
    strcpy(name, "XXXX");
    CHECK_OK(prt_registry_find(r, "Bar", "1", NULL, &c, &owner));
    CHECK(strcmp(owner, "mine") == 0);
    CHECK_EQ_INT(count_of(r), 4);
    prt_registry_destroy(r);
    prt_registry_destroy(NULL);
    CHECK_NO_LEAKS();
}

TEST(registry_duplicate_names_both_owners)
{
    prt_registry *r = new_reg(NULL);
    const prt_plugin_creator *c = NULL;
    CHECK_OK(prt_registry_add(r, &foo2, "libalpha"));
    CHECK_EQ_INT(prt_registry_add(r, &foo2_again, "libbeta"), PRT_STATUS_ALREADY_EXISTS);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "creator Foo v2 is already registered by \"libalpha\"; "
                                                   "\"libbeta\" cannot register it again");
    CHECK_EQ_INT(prt_registry_add(r, &foo2, "libalpha"), PRT_STATUS_ALREADY_EXISTS);
    CHECK_OK(prt_registry_find(r, "Foo", "2", NULL, &c, NULL));
    CHECK(c == &foo2); /* the first stays */
    CHECK_EQ_INT(count_of(r), 1);
    prt_registry_destroy(r);
}

TEST(registry_near_misses)
{
    prt_registry *parent = new_reg(NULL);
    prt_registry *r = new_reg(parent);
    const prt_plugin_creator *c = (const prt_plugin_creator *)(uintptr_t)0x42;
    const char *msg;
    CHECK_OK(prt_registry_add(r, &foo1, "app"));
    CHECK_OK(prt_registry_add(r, &foo1_ns, "app"));
    CHECK_OK(prt_registry_add(parent, &foo2, "base"));
    CHECK_OK(prt_registry_add(parent, &foo3_lower, "base"));
    CHECK_OK(prt_registry_add(parent, &bar1, "base"));
    CHECK_EQ_INT(prt_registry_find(r, "Foo", "7", NULL, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK(c == (const prt_plugin_creator *)(uintptr_t)0x42);
    msg = prt_registry_last_error(r);
    CHECK_STR_CONTAINS(msg, "no plugin creator Foo v7 (default namespace)");
    CHECK_STR_CONTAINS(msg, "near misses: ");
    CHECK_STR_CONTAINS(msg, "Foo v1 (owner \"app\")");
    CHECK_STR_CONTAINS(msg, "ns1::Foo v1 (owner \"app\")");
    CHECK_STR_CONTAINS(msg, "Foo v2 (owner \"base\", parent registry)");
    CHECK_STR_CONTAINS(msg, "foo v3 (owner \"base\", parent registry)");
    CHECK(strstr(msg, "Bar") == NULL);
    /* other namespace asked for: the default-namespace ones are near misses */
    CHECK_EQ_INT(prt_registry_find(r, "Foo", "2", "ns1", &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "no plugin creator ns1::Foo v2; near misses: ");
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "Foo v2 (owner \"base\", parent registry)");
    /* nothing close */
    CHECK_EQ_INT(prt_registry_find(r, "Qux", "1", NULL, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "no creator of that name in any namespace or version "
                                                   "(5 creators registered)");
    prt_registry_destroy(r);
    prt_registry_destroy(parent);
}

TEST(registry_parent_fallback_and_shadowing)
{
    prt_registry *root = new_reg(NULL);
    prt_registry *mid = new_reg(root);
    prt_registry *leaf = new_reg(mid);
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    prt_creator_info info[8];
    int32_t nb = 0;
    CHECK_OK(prt_registry_add(root, &foo2, "root"));
    CHECK_OK(prt_registry_add(root, &bar1, "root"));
    CHECK_OK(prt_registry_add(mid, &foo1, "mid"));
    CHECK_OK(prt_registry_add(leaf, &foo2_again, "leaf"));
    /* leaf shadows root's Foo v2 */
    CHECK_OK(prt_registry_find(leaf, "Foo", "2", NULL, &c, &owner));
    CHECK(c == &foo2_again && strcmp(owner, "leaf") == 0);
    CHECK_OK(prt_registry_find(mid, "Foo", "2", NULL, &c, &owner));
    CHECK(c == &foo2 && strcmp(owner, "root") == 0);
    CHECK_OK(prt_registry_find(leaf, "Bar", "1", NULL, &c, &owner)); /* two levels up */
    CHECK(c == &bar1 && strcmp(owner, "root") == 0);
    CHECK_OK(prt_registry_find(leaf, "Foo", "1", NULL, &c, &owner));
    CHECK(c == &foo1 && strcmp(owner, "mid") == 0);
    /* the parent does not see the child's */
    CHECK_EQ_INT(prt_registry_find(root, "Foo", "1", NULL, &c, NULL), PRT_STATUS_NOT_FOUND);

    CHECK_OK(prt_registry_list(leaf, info, 8, &nb));
    CHECK_EQ_INT(nb, 4);
    /* nearest first, each sorted by (namespace, name, version) */
    CHECK(info[0].creator == &foo2_again && info[0].depth == 0 && !info[0].shadowed);
    CHECK(info[1].creator == &foo1 && info[1].depth == 1 && !info[1].shadowed);
    CHECK(info[2].creator == &bar1 && info[2].depth == 2 && !info[2].shadowed);
    CHECK(info[3].creator == &foo2 && info[3].depth == 2 && info[3].shadowed);
    CHECK(strcmp(info[3].owner, "root") == 0 && strcmp(info[0].owner, "leaf") == 0);
    /* a short array gets the first entries, nb says how many exist */
    memset(info, 0, sizeof info);
    CHECK_OK(prt_registry_list(leaf, info, 2, &nb));
    CHECK_EQ_INT(nb, 4);
    CHECK(info[0].creator == &foo2_again && info[1].creator == &foo1 && info[2].creator == NULL);
    CHECK_EQ_INT(prt_registry_list(leaf, NULL, 3, &nb), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_registry_list(leaf, info, -1, &nb), PRT_STATUS_INVALID_ARGUMENT);
    prt_registry_destroy(leaf);
    prt_registry_destroy(mid);
    prt_registry_destroy(root);
    CHECK_NO_LEAKS();
}

TEST(registry_list_sorted)
{
    prt_registry *r = new_reg(NULL);
    prt_creator_info info[8];
    int32_t nb = 0;
    CHECK_OK(prt_registry_add(r, &foo2, "a"));
    CHECK_OK(prt_registry_add(r, &foo1_ns, "a"));
    CHECK_OK(prt_registry_add(r, &bar1, "a"));
    CHECK_OK(prt_registry_add(r, &foo1, "a"));
    CHECK_OK(prt_registry_add(r, &foo3_lower, "a"));
    CHECK_OK(prt_registry_list(r, info, 8, &nb));
    CHECK_EQ_INT(nb, 5);
    /* "" < "ns1"; "Bar" < "Foo" < "foo"; "1" < "2" */
    CHECK(info[0].creator == &bar1);
    CHECK(info[1].creator == &foo1);
    CHECK(info[2].creator == &foo2);
    CHECK(info[3].creator == &foo3_lower);
    CHECK(info[4].creator == &foo1_ns);
    prt_registry_destroy(r);
}

TEST(registry_remove_and_remove_owner)
{
    prt_registry *parent = new_reg(NULL);
    prt_registry *r = new_reg(parent);
    const prt_plugin_creator *c = NULL;
    int32_t removed = -1;
    CHECK_OK(prt_registry_add(parent, &foo1, "base"));
    CHECK_OK(prt_registry_add(r, &foo1, "lib1"));
    CHECK_OK(prt_registry_add(r, &foo2, "lib1"));
    CHECK_OK(prt_registry_add(r, &bar1, "lib2"));
    CHECK_OK(prt_registry_add(r, &foo1_ns, "lib1"));
    CHECK_OK(prt_registry_remove(r, "Foo", "1", NULL));
    /* now found in the parent */
    CHECK_OK(prt_registry_find(r, "Foo", "1", "", &c, NULL));
    CHECK(c == &foo1);
    CHECK_EQ_INT(prt_registry_remove(r, "Foo", "1", NULL), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "cannot remove creator Foo v1: it is not registered in this "
                                                   "registry");
    CHECK_EQ_INT(count_of(parent), 1); /* the parent's is untouched */
    CHECK_OK(prt_registry_remove_owner(r, "lib1", &removed));
    CHECK_EQ_INT(removed, 2);
    CHECK_EQ_INT(prt_registry_find(r, "Foo", "2", NULL, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_OK(prt_registry_find(r, "Bar", "1", NULL, &c, NULL));
    CHECK_OK(prt_registry_remove_owner(r, "nobody", &removed));
    CHECK_EQ_INT(removed, 0);
    CHECK_OK(prt_registry_remove_owner(r, "lib2", NULL));
    CHECK_EQ_INT(count_of(r), 1); /* only the parent's */
    /* re-adding after removal works */
    CHECK_OK(prt_registry_add(r, &foo2, "lib3"));
    CHECK_EQ_INT(prt_registry_remove(r, NULL, "1", NULL), PRT_STATUS_INVALID_ARGUMENT);
    prt_registry_destroy(r);
    prt_registry_destroy(parent);
    CHECK_NO_LEAKS();
}

static void expect_refused(const prt_plugin_creator *c, prt_status want, const char *needle)
{
    prt_registry *r = new_reg(NULL);
    CHECK_EQ_INT(prt_registry_add(r, c, "app"), want);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), needle);
    CHECK_EQ_INT(count_of(r), 0);
    prt_registry_destroy(r);
}

TEST(registry_bad_creators_refused)
{
    prt_plugin_creator c = foo1;
    expect_refused(NULL, PRT_STATUS_INVALID_ARGUMENT, "creator is NULL");
    c.struct_size = 40;
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "creator struct_size is 40, expected at least 96");
    c = foo1;
    c.abi_version = PRT_ABI_VERSION + 1;
    {
        char want[128];
        snprintf(want, sizeof want, "Foo v1: creator is built for plugin ABI %u, this host supports 1 to %u",
                 PRT_ABI_VERSION + 1u, PRT_ABI_VERSION);
        expect_refused(&c, PRT_STATUS_VERSION_MISMATCH, want);
    }
    c.abi_version = 0;
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "plugin ABI 0");
    c = foo1;
    c.name = NULL;
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "needs a non-empty name and version");
    c = foo1;
    c.version = "";
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "needs a non-empty name and version");
    c = foo1;
    c.style = PRT_STYLE_BLOB;
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "blob-style creator needs create_blob and deserialize_blob, "
                                                    "create_blob is NULL (create_field is set: is the style "
                                                    "meant to be PRT_STYLE_FIELD?)");
    c.create_blob = blob_create;
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "deserialize_blob is NULL");
    c.deserialize_blob = blob_deserialize;
    {
        prt_registry *r = new_reg(NULL);
        CHECK_OK(prt_registry_add(r, &c, "app")); /* a complete blob creator */
        prt_registry_destroy(r);
    }
    c.style = PRT_STYLE_FIELD;
    c.create_field = NULL;
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "field-style creator needs create_field, it is NULL "
                                                    "(create_blob is set: is the style meant to be "
                                                    "PRT_STYLE_BLOB?)");
    c = foo1;
    c.style = (prt_plugin_style)5;
    expect_refused(&c, PRT_STATUS_INVALID_ARGUMENT, "style is 5, expected PRT_STYLE_BLOB (1) or PRT_STYLE_FIELD");
    {
        prt_registry *r = new_reg(NULL);
        CHECK_EQ_INT(prt_registry_add(r, &foo1, NULL), PRT_STATUS_INVALID_ARGUMENT);
        CHECK_EQ_INT(prt_registry_add(NULL, &foo1, "x"), PRT_STATUS_INVALID_ARGUMENT);
        prt_registry_destroy(r);
    }
}

TEST(registry_errors_are_per_registry_and_thread)
{
    prt_registry *a = new_reg(NULL), *b = new_reg(NULL);
    const prt_plugin_creator *c;
    CHECK(strcmp(prt_registry_last_error(a), "") == 0);
    CHECK_EQ_INT(prt_registry_find(a, "Nope", "1", NULL, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_EQ_INT(prt_registry_find(b, "Other", "9", NULL, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(a), "Nope v1");
    CHECK_STR_CONTAINS(prt_registry_last_error(b), "Other v9");
    prt_registry_destroy(a);
    prt_registry_destroy(b);
}

static int static_skips_logged;
static void capture_log(void *user, prt_severity sev, const char *msg)
{
    (void)user;
    if (sev == PRT_SEVERITY_WARNING && strstr(msg, "statically registered creator skipped")) {
        if (strstr(msg, "RegTestBroken v1") && strstr(msg, "count range [2, 1]")) static_skips_logged |= 1;
        if (strstr(msg, "regtest::RegTestStatic v1 is already registered by \"static\"")) static_skips_logged |= 2;
    }
}

TEST(registry_global_takes_static_creators)
{
    prt_registry *g, *child;
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    prt_set_logger(capture_log, NULL, PRT_SEVERITY_VERBOSE);
    g = prt_registry_global();
    prt_set_logger(NULL, NULL, PRT_SEVERITY_WARNING);
    CHECK(g != NULL && g == prt_registry_global());
    CHECK_OK(prt_registry_find(g, "RegTestStatic", "1", "regtest", &c, &owner));
    CHECK(c == &static_ok || c == &static_dup);
    CHECK(owner && strcmp(owner, "static") == 0);
    CHECK_EQ_INT(prt_registry_find(g, "RegTestBroken", "1", "regtest", &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_EQ_INT(static_skips_logged, 3);
    /* a child of the global one */
    child = new_reg(g);
    CHECK_OK(prt_registry_find(child, "RegTestStatic", "1", "regtest", &c, NULL));
    prt_registry_destroy(child);
    prt_registry_destroy(g); /* refused (logged), the global one stays usable */
    CHECK_OK(prt_registry_find(g, "RegTestStatic", "1", "regtest", &c, NULL));
}

CREATOR(late_static, "RegTestLate", "1", "regtest");

TEST(registry_global_takes_creators_pushed_after_first_use)
{
    static prt_static_creator node = {&late_static, NULL};
    prt_registry *g = prt_registry_global();
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    int32_t before = 0, after = 0;
    CHECK_EQ_INT(prt_registry_find(g, "RegTestLate", "1", "regtest", &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_OK(prt_registry_list(g, NULL, 0, &before));
    prt_static_creator_push(&node); /* what a constructor of a library loaded later does */
    CHECK_OK(prt_registry_find(prt_registry_global(), "RegTestLate", "1", "regtest", &c, &owner));
    CHECK(c == &late_static && owner && strcmp(owner, "static") == 0);
    CHECK_OK(prt_registry_list(prt_registry_global(), NULL, 0, &after));
    CHECK_EQ_INT(after, before + 1); /* the earlier ones are not taken in twice */
}

static void *global_first_use(void *arg)
{
    (void)arg;
    return prt_registry_global();
}

TEST(registry_global_first_use_from_threads)
{
    pthread_t th[4];
    void *got[4];
    int i;
    int32_t nb = 0;
    for (i = 0; i < 4; i++) CHECK_EQ_INT(pthread_create(&th[i], NULL, global_first_use, NULL), 0);
    for (i = 0; i < 4; i++) pthread_join(th[i], &got[i]);
    for (i = 1; i < 4; i++) CHECK(got[i] == got[0]);
    CHECK_OK(prt_registry_list(prt_registry_global(), NULL, 0, &nb));
    CHECK(nb >= 1);
}

/* ---- concurrency -------------------------------------------------------------- */

#define NB_KEYS 8
static prt_plugin_creator churn[NB_KEYS];
static const char *churn_versions[NB_KEYS] = {"1", "2", "3", "4", "5", "6", "7", "8"};
static atomic_int stop_readers;
static atomic_int bad_lookups;
static atomic_long good_lookups;
static atomic_int readers_started;

static void *reader(void *arg)
{
    prt_registry *r = arg;
    long n = 0;
    atomic_fetch_add(&readers_started, 1);
    while (!atomic_load(&stop_readers)) {
        int k = (int)(n % NB_KEYS);
        const prt_plugin_creator *c = NULL;
        const char *owner = NULL;
        prt_status st = prt_registry_find(r, "Churn", churn_versions[k], "conc", &c, &owner);
        if (st == PRT_OK) {
            /* a complete entry: the right creator and its owner */
            if (c != &churn[k] || !owner || strcmp(owner, k % 2 ? "odd" : "even") != 0 ||
                strcmp(c->version, churn_versions[k]) != 0)
                atomic_fetch_add(&bad_lookups, 1);
            else
                atomic_fetch_add(&good_lookups, 1);
        } else if (st != PRT_STATUS_NOT_FOUND) {
            atomic_fetch_add(&bad_lookups, 1);
        }
        /* the stable creator is always there (in the parent) */
        if (prt_registry_find(r, "Foo", "1", NULL, &c, NULL) != PRT_OK || c != &foo1)
            atomic_fetch_add(&bad_lookups, 1);
        if (n % 16 == 0) {
            prt_creator_info info[NB_KEYS + 4];
            int32_t nb = 0, i;
            if (prt_registry_list(r, info, NB_KEYS + 4, &nb) != PRT_OK || nb < 1 || nb > NB_KEYS + 1) {
                atomic_fetch_add(&bad_lookups, 1);
            } else {
                for (i = 0; i + 1 < nb && info[i + 1].depth == 0; i++)
                    if (strcmp(info[i].creator->version, info[i + 1].creator->version) >= 0)
                        atomic_fetch_add(&bad_lookups, 1); /* not sorted */
            }
        }
        n++;
    }
    return NULL;
}

TEST(registry_concurrent_lookups_during_registration)
{
    prt_registry *parent = new_reg(NULL);
    prt_registry *r = new_reg(parent);
    pthread_t th[4];
    int i, iter;
    for (i = 0; i < NB_KEYS; i++) {
        churn[i] = foo1;
        churn[i].name = "Churn";
        churn[i].version = churn_versions[i];
        churn[i].plugin_namespace = "conc";
    }
    CHECK_OK(prt_registry_add(parent, &foo1, "stable"));
    atomic_store(&stop_readers, 0);
    for (i = 0; i < 4; i++) CHECK_EQ_INT(pthread_create(&th[i], NULL, reader, r), 0);
    while (atomic_load(&readers_started) < 4) sched_yield();
    for (iter = 0; iter < 3000; iter++) {
        int k = iter % NB_KEYS;
        prt_status st = prt_registry_add(r, &churn[k], k % 2 ? "odd" : "even");
        if (st != PRT_OK && st != PRT_STATUS_ALREADY_EXISTS) atomic_fetch_add(&bad_lookups, 1);
        if (iter % 5 == 0 && prt_registry_remove(r, "Churn", churn_versions[(k + 3) % NB_KEYS], "conc") != PRT_OK &&
            prt_registry_last_error(r)[0] == 0)
            atomic_fetch_add(&bad_lookups, 1);
        if (iter % 8 == 7) {
            int32_t a = 0, b = 0;
            CHECK_OK(prt_registry_remove_owner(r, "odd", &a));
            CHECK_OK(prt_registry_remove_owner(r, "even", &b));
        }
    }
    /* Everything registered again; stop once the readers have seen some. */
    for (i = 0; i < NB_KEYS; i++) {
        prt_status st = prt_registry_add(r, &churn[i], i % 2 ? "odd" : "even");
        CHECK(st == PRT_OK || st == PRT_STATUS_ALREADY_EXISTS);
    }
    while (atomic_load(&good_lookups) == 0) sched_yield();
    atomic_store(&stop_readers, 1);
    for (i = 0; i < 4; i++) pthread_join(th[i], NULL);
    CHECK_EQ_INT(atomic_load(&bad_lookups), 0);
    CHECK(atomic_load(&good_lookups) > 0);
    prt_registry_destroy(r);
    prt_registry_destroy(parent);
    CHECK_NO_LEAKS();
}

/* ---- allocation failures -------------------------------------------------------- */

/* The registry's content as one string, to compare before and after. */
static void snapshot(prt_registry *r, char *buf, size_t cap)
{
    prt_creator_info info[32];
    int32_t nb = 0, i;
    size_t n = 0;
    buf[0] = 0;
    CHECK_OK(prt_registry_list(r, info, 32, &nb));
    for (i = 0; i < nb && i < 32 && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s/%s/%s/%s/%d/%d;", info[i].creator->plugin_namespace
                              ? info[i].creator->plugin_namespace : "", info[i].creator->name,
                              info[i].creator->version, info[i].owner, (int)info[i].depth,
                              (int)info[i].shadowed);
}

TEST(registry_alloc_failure_add)
{
    prt_registry *r = new_reg(NULL);
    static prt_plugin_creator many[40];
    static char versions[40][8];
    char before[4096], after[4096];
    int i, nb_fail = 0;
    long n;
    CHECK_OK(prt_registry_add(r, &foo1, "first"));
    /* Each add below may grow the array and intern a new owner. */
    for (i = 0; i < 40; i++) {
        int ok = 0;
        char owner[32];
        many[i] = foo1;
        snprintf(versions[i], sizeof versions[i], "m%d", i);
        many[i].version = versions[i];
        snprintf(owner, sizeof owner, "owner%d", i % 7);
        snapshot(r, before, sizeof before);
        for (n = 0; n < 10 && !ok; n++) {
            prt_status st;
            prt__alloc_fail_after(n);
            st = prt_registry_add(r, &many[i], owner);
            prt__alloc_fail_after(-1);
            if (st == PRT_OK) {
                ok = 1;
            } else {
                CHECK_EQ_INT(st, PRT_STATUS_OUT_OF_MEMORY);
                nb_fail++;
                CHECK_STR_CONTAINS(prt_registry_last_error(r), "out of memory");
                snapshot(r, after, sizeof after);
                CHECK(strcmp(before, after) == 0);
            }
        }
        CHECK(ok);
    }
    CHECK_EQ_INT(count_of(r), 41);
    CHECK(nb_fail >= 8); /* 2 array growths, 7 new owners (and the first owner) */
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(registry_alloc_failure_create)
{
    long n;
    int ok = 0;
    for (n = 0; n < 10 && !ok; n++) {
        prt_registry *r = (prt_registry *)(uintptr_t)0x31;
        prt_status st;
        prt__alloc_fail_after(n);
        st = prt_registry_create(NULL, &r);
        prt__alloc_fail_after(-1);
        if (st == PRT_OK) {
            ok = 1;
            prt_registry_destroy(r);
        } else {
            CHECK_EQ_INT(st, PRT_STATUS_OUT_OF_MEMORY);
            CHECK(r == (prt_registry *)(uintptr_t)0x31);
        }
    }
    CHECK(ok);
    CHECK_NO_LEAKS();
}

TEST(registry_lookups_do_not_allocate)
{
    prt_registry *r = new_reg(NULL);
    const prt_plugin_creator *c = NULL;
    prt_creator_info info[4];
    int32_t nb = 0, removed = 0;
    CHECK_OK(prt_registry_add(r, &foo1, "a"));
    CHECK_OK(prt_registry_add(r, &foo2, "a"));
    prt__alloc_fail_after(0);
    CHECK_OK(prt_registry_find(r, "Foo", "1", NULL, &c, NULL));
    CHECK_EQ_INT(prt_registry_find(r, "Foo", "9", NULL, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "near misses");
    CHECK_OK(prt_registry_list(r, info, 4, &nb));
    CHECK_OK(prt_registry_remove(r, "Foo", "2", NULL));
    CHECK_OK(prt_registry_remove_owner(r, "a", &removed));
    prt__alloc_fail_after(-1);
    CHECK_EQ_INT(removed, 1);
    prt_registry_destroy(r);
}

/* ---- versioned lookup ------------------------------------------------------ */

CREATOR(op1, "Op", "1", "");
CREATOR(op11, "Op", "11", "");
CREATOR(op13, "Op", "13", "ai.onnx");
CREATOR(op_v20, "Op", "v20", "");
CREATOR(op_dotted, "Op", "14.1", "");
CREATOR(op_zero_lead, "Op", "012", "");
CREATOR(op15_parent, "Op", "15", "");
CREATOR(op13_parent, "Op", "13", "");
CREATOR(op16_ns, "Op", "16", "custom");

TEST(registry_find_latest_picks_largest_at_most)
{
    prt_registry *r = new_reg(NULL);
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    CHECK_OK(prt_registry_add(r, &op1, "app"));
    CHECK_OK(prt_registry_add(r, &op11, "app"));
    CHECK_OK(prt_registry_add(r, &op13, "onnx"));
    CHECK_OK(prt_registry_add(r, &op_v20, "app"));
    CHECK_OK(prt_registry_add(r, &op_dotted, "app"));
    CHECK_OK(prt_registry_add(r, &op_zero_lead, "app"));
    CHECK_OK(prt_registry_add(r, &op16_ns, "app"));
    CHECK_OK(prt_registry_find_latest(r, "Op", "", 17, &c, &owner));
    CHECK(c == &op13);
    CHECK(owner && strcmp(owner, "onnx") == 0);
    CHECK_OK(prt_registry_find_latest(r, "Op", "ai.onnx", 13, &c, NULL));
    CHECK(c == &op13);
    CHECK_OK(prt_registry_find_latest(r, "Op", NULL, 12, &c, NULL));
    CHECK(c == &op11); /* "012" is not a decimal version */
    CHECK_OK(prt_registry_find_latest(r, "Op", "", 1, &c, NULL));
    CHECK(c == &op1);
    CHECK_OK(prt_registry_find_latest(r, "Op", "custom", 100, &c, NULL));
    CHECK(c == &op16_ns);
    /* The exact lookup treats "ai.onnx" and "" alike too. */
    CHECK_OK(prt_registry_find(r, "Op", "13", NULL, &c, NULL));
    CHECK(c == &op13);
    CHECK_OK(prt_registry_find(r, "Op", "1", "ai.onnx", &c, NULL));
    CHECK(c == &op1);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(registry_find_latest_refuses_with_versions)
{
    prt_registry *r = new_reg(NULL);
    const prt_plugin_creator *c = (const prt_plugin_creator *)(uintptr_t)0x42;
    const char *owner = "untouched";
    const char *msg;
    CHECK_OK(prt_registry_add(r, &op11, "app"));
    CHECK_OK(prt_registry_add(r, &op13, "app"));
    CHECK_OK(prt_registry_add(r, &op_v20, "app"));
    CHECK_EQ_INT(prt_registry_find_latest(r, "Op", "", 10, &c, &owner), PRT_STATUS_NOT_FOUND);
    CHECK(c == (const prt_plugin_creator *)(uintptr_t)0x42);
    CHECK(strcmp(owner, "untouched") == 0);
    msg = prt_registry_last_error(r);
    CHECK_STR_CONTAINS(msg, "no plugin creator Op with a decimal version <= 10 (default namespace)");
    CHECK_STR_CONTAINS(msg, "versions that exist: 11, 13, v20 (not decimal)");
    CHECK_STR_CONTAINS(msg, "--load");
    CHECK_OK(prt_registry_add(r, &op1, "app"));
    CHECK_EQ_INT(prt_registry_find_latest(r, "Op", "", 0, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "versions that exist: 1, 11, 13, v20 (not decimal)");
    /* v20 is never chosen, however large the limit. */
    CHECK_OK(prt_registry_find_latest(r, "Op", "", 1000, &c, NULL));
    CHECK(c == &op13);
    CHECK_OK(prt_registry_remove(r, "Op", "1", ""));
    CHECK_OK(prt_registry_remove(r, "Op", "11", ""));
    CHECK_OK(prt_registry_remove(r, "Op", "13", ""));
    CHECK_EQ_INT(prt_registry_find_latest(r, "Op", "", 1000, &c, NULL), PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "versions that exist: v20 (not decimal)");
    CHECK_OK(prt_registry_add(r, &op13, "app"));
    /* Wrong namespace: none there, near misses named. */
    CHECK_EQ_INT(prt_registry_find_latest(r, "Op", "other", 17, &c, NULL), PRT_STATUS_NOT_FOUND);
    msg = prt_registry_last_error(r);
    CHECK_STR_CONTAINS(msg, "no plugin creator other::Op with a decimal version <= 17; near misses: ");
    CHECK_STR_CONTAINS(msg, "Op v13 (owner \"app\")");
    CHECK_EQ_INT(prt_registry_find_latest(r, "Op", "", -1, &c, NULL), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_registry_find_latest(r, NULL, "", 1, &c, NULL), PRT_STATUS_INVALID_ARGUMENT);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(registry_find_latest_across_parents)
{
    prt_registry *parent = new_reg(NULL);
    prt_registry *r = new_reg(parent);
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    CHECK_OK(prt_registry_add(r, &op13, "child"));
    CHECK_OK(prt_registry_add(parent, &op13_parent, "parent"));
    CHECK_OK(prt_registry_add(parent, &op15_parent, "parent"));
    CHECK_OK(prt_registry_find_latest(r, "Op", "", 14, &c, &owner));
    CHECK(c == &op13 && strcmp(owner, "child") == 0); /* the nearer one wins a tie */
    CHECK_OK(prt_registry_find_latest(r, "Op", "", 17, &c, &owner));
    CHECK(c == &op15_parent && strcmp(owner, "parent") == 0);
    prt_registry_destroy(r);
    prt_registry_destroy(parent);
}

TEST(registry_ai_onnx_is_the_default_namespace)
{
    prt_registry *r = new_reg(NULL);
    CHECK_OK(prt_registry_add(r, &op13, "a"));
    CHECK_EQ_INT(prt_registry_add(r, &op13_parent, "b"), PRT_STATUS_ALREADY_EXISTS);
    CHECK_OK(prt_registry_remove(r, "Op", "13", ""));
    CHECK_EQ_INT(count_of(r), 0);
    prt_registry_destroy(r);
}
