/* Plugin libraries loaded at run time: the modules built beside this test
 * (regtoy_lib.c) are loaded, used, unloaded; bad ones are refused with clear
 * errors and leave the registry unchanged. */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define CHECK_NO_LEAKS() CHECK(__lsan_do_recoverable_leak_check() == 0)
#else
#define CHECK_NO_LEAKS() ((void)0)
#endif

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

/* Create RegToyScale v2 (field style) through its creator and run it. */
static void use_field_creator(const prt_plugin_creator *c)
{
    const float scale = 3.0f, bias = -1.0f;
    const float x[5] = {1, 2, -3, 0.5f, 100};
    float y[5];
    prt_field in[2];
    prt_fields fc;
    prt_owned_fields *of = NULL;
    prt_field_plugin *p = NULL;
    prt_tensor_desc d;
    const void *ins[1];
    void *outs[1];
    char err[512];
    prt_msg m;
    int i;
    memset(in, 0, sizeof in);
    in[0].name = "scale"; in[0].type = PRT_FIELD_FLOAT32; in[0].data = &scale; in[0].count = 1;
    in[1].name = "bias"; in[1].type = PRT_FIELD_FLOAT32; in[1].data = &bias; in[1].count = 1;
    fc.fields = in;
    fc.nb = 2;
    fc.reserved_ = 0;
    CHECK_OK(prt_fields_validate(c, &fc, &of, err, sizeof err));
    if (!of) return;
    m.buf = err;
    m.cap = sizeof err;
    CHECK_OK(c->create_field(c, prt_owned_fields_get(of), PRT_PHASE_BUILD, &p, &m));
    prt_owned_fields_free(of);
    if (!p) return;
    CHECK(strcmp(p->ops->core->get_name(p), "RegToyScale") == 0);
    CHECK(strcmp(p->ops->core->get_version(p), "2") == 0);
    CHECK_EQ_INT(p->ops->build->get_nb_outputs(p), 1);
    memset(&d, 0, sizeof d);
    d.dtype = PRT_DTYPE_F32;
    d.dims.nb = 1;
    d.dims.d[0] = 5;
    ins[0] = x;
    outs[0] = y;
    for (i = 0; i < 5; i++) y[i] = NAN; /* poisoned */
    CHECK_OK(p->ops->runtime->enqueue(p, &d, &d, ins, outs, NULL, NULL));
    for (i = 0; i < 5; i++) CHECK_NEAR(y[i], (double)x[i] * 3.0 - 1.0, 1e-6 * (1 + fabs(x[i] * 3.0)));
    p->ops->destroy(p);

    /* a bad field reaches the validator, not the plugin */
    in[0].count = 0;
    CHECK_EQ_INT(prt_fields_validate(c, &fc, &of, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "regtoy::RegToyScale v2: field \"scale\" needs 1 value, got 0");
}

/* Create RegToyScale v1 (blob style) with its default scale, serialize it,
 * deserialize it, run the copy. */
static void use_blob_creator(const prt_plugin_creator *c)
{
    const float x[3] = {1, -2, 4};
    float y[3];
    prt_owned_fields *of = NULL;
    prt_blob_plugin *p = NULL, *q = NULL;
    prt_tensor_desc d;
    const void *ins[1];
    void *outs[1];
    uint8_t blob[16];
    char err[512];
    prt_msg m;
    int i;
    CHECK_OK(prt_fields_validate(c, NULL, &of, err, sizeof err)); /* scale defaults to 2 */
    if (!of) return;
    m.buf = err;
    m.cap = sizeof err;
    CHECK_OK(c->create_blob(c, prt_owned_fields_get(of), &p, &m));
    prt_owned_fields_free(of);
    if (!p) return;
    CHECK_EQ_INT(p->ops->get_serialization_size(p), 4);
    CHECK_OK(p->ops->serialize(p, blob, sizeof blob));
    p->ops->destroy(p);
    CHECK_OK(c->deserialize_blob(c, blob, 4, &q, &m));
    if (!q) return;
    memset(&d, 0, sizeof d);
    d.dtype = PRT_DTYPE_F32;
    d.dims.nb = 2;
    d.dims.d[0] = 1;
    d.dims.d[1] = 3;
    ins[0] = x;
    outs[0] = y;
    for (i = 0; i < 3; i++) y[i] = NAN;
    CHECK_OK(q->ops->enqueue(q, &d, &d, ins, outs, NULL, NULL));
    for (i = 0; i < 3; i++) CHECK_NEAR(y[i], 2.0 * x[i], 0);
    q->ops->destroy(q);
}

TEST(library_good_loaded_used_unloaded)
{
    prt_registry *r = new_reg(NULL);
    prt_library *lib = NULL;
    const prt_plugin_creator *c1 = NULL, *c2 = NULL;
    const char *owner = NULL;
    char real[PATH_MAX];
    CHECK_OK(prt_registry_load_library(r, REGTOY_GOOD_PATH, &lib));
    if (!lib) {
        fprintf(stderr, "  %s\n", prt_registry_last_error(r));
        return;
    }
    CHECK(strcmp(prt_library_name(lib), "regtoy") == 0);
    CHECK(realpath(REGTOY_GOOD_PATH, real) != NULL);
    CHECK(strcmp(prt_library_path(lib), real) == 0);
    CHECK_EQ_INT(count_of(r), 2);
    CHECK_OK(prt_registry_find(r, "RegToyScale", "2", "regtoy", &c2, &owner));
    CHECK(owner && strcmp(owner, "regtoy") == 0);
    CHECK_OK(prt_registry_find(r, "RegToyScale", "1", "regtoy", &c1, NULL));
    CHECK(c1 && c1->style == PRT_STYLE_BLOB && c2 && c2->style == PRT_STYLE_FIELD);
    if (c2) use_field_creator(c2);
    if (c1) use_blob_creator(c1);
    CHECK_OK(prt_registry_unload_library(r, lib));
    CHECK_EQ_INT(count_of(r), 0);
    CHECK_EQ_INT(prt_registry_find(r, "RegToyScale", "2", "regtoy", &c2, NULL), PRT_STATUS_NOT_FOUND);
    /* the handle is gone: unloading again is refused, not a crash */
    CHECK_EQ_INT(prt_registry_unload_library(r, lib), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "not loaded in this registry");
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(library_exports_only_the_entry_point)
{
    void *h = dlopen(REGTOY_GOOD_PATH, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    if (!h) return;
    CHECK(dlsym(h, PRT_LIBRARY_ENTRY_NAME) != NULL);
    CHECK(dlsym(h, "regtoy_internal_symbol") == NULL);
    CHECK(dlsym(h, "toy_create_field") == NULL);
    CHECK(dlsym(h, "toy_v2") == NULL);
    dlclose(h);
}

TEST(library_same_file_twice_is_harmless)
{
    prt_registry *r = new_reg(NULL);
    prt_library *a = NULL, *b = NULL, *c = NULL;
    const prt_plugin_creator *cr = NULL;
    char rel[PATH_MAX + 8], dir[PATH_MAX];
    const char *base;
    CHECK_OK(prt_registry_load_library(r, REGTOY_GOOD_PATH, &a));
    CHECK_OK(prt_registry_load_library(r, REGTOY_GOOD_PATH, &b));
    CHECK(a != NULL && a == b);
    CHECK_EQ_INT(count_of(r), 2);
    /* another spelling of the same file (…/dir/./name) is the same library */
    snprintf(dir, sizeof dir, "%s", REGTOY_GOOD_PATH);
    base = strrchr(REGTOY_GOOD_PATH, '/');
    if (base && strrchr(dir, '/')) {
        *strrchr(dir, '/') = 0;
        snprintf(rel, sizeof rel, "%s/.%s", dir, base);
        CHECK_OK(prt_registry_load_library(r, rel, &c));
        CHECK(c == a);
    }
    CHECK_EQ_INT(count_of(r), 2);
    /* the last unload deregisters */
    CHECK_OK(prt_registry_unload_library(r, a));
    CHECK_OK(prt_registry_unload_library(r, a));
    CHECK_EQ_INT(count_of(r), 2);
    CHECK_OK(prt_registry_find(r, "RegToyScale", "2", "regtoy", &cr, NULL));
    if (c) CHECK_OK(prt_registry_unload_library(r, a));
    CHECK_EQ_INT(count_of(r), 0);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(library_in_two_registries)
{
    prt_registry *r1 = new_reg(NULL), *r2 = new_reg(NULL);
    prt_library *a = NULL, *b = NULL;
    const prt_plugin_creator *c = NULL;
    CHECK_OK(prt_registry_load_library(r1, REGTOY_GOOD_PATH, &a));
    CHECK_OK(prt_registry_load_library(r2, REGTOY_GOOD_PATH, &b));
    CHECK(a && b && a != b);
    CHECK_EQ_INT(prt_registry_unload_library(r2, a), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_OK(prt_registry_unload_library(r1, a));
    /* r2's copy stays mapped and usable */
    CHECK_OK(prt_registry_find(r2, "RegToyScale", "2", "regtoy", &c, NULL));
    if (c) use_field_creator(c);
    prt_registry_destroy(r1);
    prt_registry_destroy(r2); /* unloads b */
    CHECK_NO_LEAKS();
}

TEST(library_child_registry_shadows_nothing_in_parent)
{
    prt_registry *parent = new_reg(NULL), *child = new_reg(parent);
    prt_library *lib = NULL;
    const prt_plugin_creator *c = NULL;
    CHECK_OK(prt_registry_load_library(child, REGTOY_GOOD_PATH, &lib));
    CHECK_EQ_INT(count_of(parent), 0);
    CHECK_OK(prt_registry_find(child, "RegToyScale", "1", "regtoy", &c, NULL));
    prt_registry_destroy(child); /* unloads the library */
    CHECK_EQ_INT(count_of(parent), 0);
    prt_registry_destroy(parent);
    CHECK_NO_LEAKS();
}

TEST(library_newer_abi_refused)
{
    prt_registry *r = new_reg(NULL);
    prt_library *lib = (prt_library *)(uintptr_t)0x10;
    CHECK_EQ_INT(prt_registry_load_library(r, REGTOY_NEWABI_PATH, &lib), PRT_STATUS_VERSION_MISMATCH);
    CHECK(lib == (prt_library *)(uintptr_t)0x10);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "is built for plugin ABI 2, this host supports up to 1");
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "libprt_regtoy_newabi");
    CHECK_EQ_INT(count_of(r), 0);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(library_without_entry_point_refused)
{
    prt_registry *r = new_reg(NULL);
    prt_library *lib = NULL;
    CHECK_EQ_INT(prt_registry_load_library(r, REGTOY_NOENTRY_PATH, &lib), PRT_STATUS_LIBRARY_ERROR);
    CHECK(lib == NULL);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "has no entry point \"prt_plugin_library_init\"");
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "libprt_regtoy_noentry");
    CHECK_EQ_INT(count_of(r), 0);
    prt_registry_destroy(r);
}

static int host_log_seen;
static void capture_log(void *user, prt_severity sev, const char *msg)
{
    (void)user;
    if (sev == PRT_SEVERITY_WARNING && strcmp(msg, "regtoy_failentry: refusing to load") == 0) host_log_seen = 1;
}

TEST(library_failing_entry_point_message)
{
    prt_registry *r = new_reg(NULL);
    prt_library *lib = NULL;
    prt_set_logger(capture_log, NULL, PRT_SEVERITY_VERBOSE);
    CHECK_EQ_INT(prt_registry_load_library(r, REGTOY_FAILENTRY_PATH, &lib), PRT_STATUS_LIBRARY_ERROR);
    prt_set_logger(NULL, NULL, PRT_SEVERITY_WARNING);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "prt_plugin_library_init failed with PRT_STATUS_NO_DEVICE: "
                                                   "regtoy_failentry needs a GPU of compute capability 90, "
                                                   "found none");
    CHECK(host_log_seen); /* through the host API table */
    CHECK_EQ_INT(count_of(r), 0);
    prt_registry_destroy(r);
}

TEST(library_bad_creator_registers_nothing)
{
    prt_registry *r = new_reg(NULL);
    prt_library *lib = NULL;
    CHECK_EQ_INT(prt_registry_load_library(r, REGTOY_BADCREATOR_PATH, &lib), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "plugin library \"regtoy_bad\"");
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "regtoy::RegToyBroken v1: schema field \"k\" has count "
                                                   "range [3, 1]");
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "nothing from it was registered");
    CHECK_EQ_INT(count_of(r), 0); /* not even its good creator */
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

static prt_status app_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                             prt_field_plugin **out, prt_msg *err)
{
    (void)c; (void)fc; (void)phase; (void)out; (void)err;
    return PRT_STATUS_UNSUPPORTED;
}

TEST(library_conflict_names_both_owners)
{
    static const prt_plugin_creator mine = {
        sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegToyScale", "2", "regtoy", PRT_STYLE_FIELD, 0,
        NULL, sizeof(prt_field_schema), 0, NULL, NULL, app_create, NULL, NULL};
    prt_registry *r = new_reg(NULL);
    prt_library *lib = NULL;
    const prt_plugin_creator *c = NULL;
    CHECK_OK(prt_registry_add(r, &mine, "application"));
    CHECK_EQ_INT(prt_registry_load_library(r, REGTOY_GOOD_PATH, &lib), PRT_STATUS_ALREADY_EXISTS);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "regtoy::RegToyScale v2 is already registered by "
                                                   "\"application\"; \"regtoy\" cannot register it again");
    CHECK_EQ_INT(count_of(r), 1); /* v1 was not registered either */
    CHECK_EQ_INT(prt_registry_find(r, "RegToyScale", "1", "regtoy", &c, NULL), PRT_STATUS_NOT_FOUND);
    /* after the conflict is gone the library loads */
    CHECK_OK(prt_registry_remove_owner(r, "application", NULL));
    CHECK_OK(prt_registry_load_library(r, REGTOY_GOOD_PATH, &lib));
    CHECK_EQ_INT(count_of(r), 2);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(library_missing_and_non_library_files)
{
    prt_registry *r = new_reg(NULL);
    prt_library *lib = NULL;
    char path[] = "/tmp/prt_regtoy_notlib_XXXXXX";
    int fd;
    CHECK_EQ_INT(prt_registry_load_library(r, "/nonexistent/libnothing.so", &lib), PRT_STATUS_LIBRARY_ERROR);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "cannot load plugin library \"/nonexistent/libnothing.so\": "
                                                   "No such file or directory");
    fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        const char junk[] = "this is not a shared object, just some text long enough to be read\n";
        CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
        close(fd);
        CHECK_EQ_INT(prt_registry_load_library(r, path, &lib), PRT_STATUS_LIBRARY_ERROR);
        CHECK_STR_CONTAINS(prt_registry_last_error(r), "cannot load plugin library \"");
        CHECK_STR_CONTAINS(prt_registry_last_error(r), path);
        CHECK_STR_CONTAINS(prt_registry_last_error(r), "ELF"); /* dlerror's text */
        unlink(path);
    }
    CHECK_EQ_INT(prt_registry_load_library(r, "", &lib), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_registry_load_library(r, NULL, &lib), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_registry_load_library(r, REGTOY_GOOD_PATH, NULL), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_registry_unload_library(r, NULL), PRT_STATUS_INVALID_ARGUMENT);
    CHECK(prt_library_name(NULL) == NULL && prt_library_path(NULL) == NULL);
    CHECK_EQ_INT(count_of(r), 0);
    prt_registry_destroy(r);
}

TEST(library_load_alloc_failure)
{
    prt_registry *r = new_reg(NULL);
    long n;
    int ok = 0, nb_fail = 0;
    for (n = 0; n < 20 && !ok; n++) {
        prt_library *lib = (prt_library *)(uintptr_t)0x20;
        prt_status st;
        prt__alloc_fail_after(n);
        st = prt_registry_load_library(r, REGTOY_GOOD_PATH, &lib);
        prt__alloc_fail_after(-1);
        if (st == PRT_OK) {
            ok = 1;
            CHECK_EQ_INT(count_of(r), 2);
            CHECK_OK(prt_registry_unload_library(r, lib));
        } else {
            nb_fail++;
            CHECK_EQ_INT(st, PRT_STATUS_OUT_OF_MEMORY);
            CHECK(lib == (prt_library *)(uintptr_t)0x20);
            CHECK_EQ_INT(count_of(r), 0);
        }
    }
    CHECK(ok);
    CHECK(nb_fail >= 3); /* library array, library record, entry array, owner */
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}
