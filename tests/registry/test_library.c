/* Plugin libraries loaded at run time: the modules built beside this test
 * (regtoy_lib.c) are loaded, used, unloaded; bad ones are refused with clear
 * errors and leave the registry unchanged. */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"
#include "plugrt/engine.h"
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
    {
        char want[128];
        snprintf(want, sizeof want, "is built for plugin ABI %u, this host supports up to %u", PRT_ABI_VERSION + 1u,
                 PRT_ABI_VERSION);
        CHECK_STR_CONTAINS(prt_registry_last_error(r), want);
    }
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

/* ---- ABI versions, libraries built from static sources, host services ---- */

/* x [2, 3] -> plugin -> y through a built engine (CPU); fields as given. */
static prt_status run_one_layer(prt_registry *r, const char *plugin, const char *version, const char *ns,
                                const prt_fields *fc, const float *x, float *y, char *err, size_t cap)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims d = {.nb = 2, .d = {2, 3}};
    const char *in = "x", *out = "y";
    prt_status st;
    if ((st = prt_network_create(r, &net)) != PRT_OK) return st;
    st = prt_network_add_input(net, "x", PRT_DTYPE_F32, &d);
    if (st == PRT_OK) st = prt_network_add_layer(net, "l", plugin, version, ns, fc, &in, 1, &out, 1);
    if (st != PRT_OK) snprintf(err, cap, "%s", prt_network_last_error(net));
    if (st == PRT_OK) st = prt_network_mark_output(net, "y");
    if (st == PRT_OK) st = prt_engine_build(net, NULL, r, &e, err, cap);
    if (st == PRT_OK) st = prt_context_create(e, NULL, &ctx);
    if (st == PRT_OK) st = prt_context_set_tensor(ctx, "x", (void *)x);
    if (st == PRT_OK) st = prt_context_set_tensor(ctx, "y", y);
    if (st == PRT_OK) st = prt_context_execute(ctx);
    if (st != PRT_OK && ctx) snprintf(err, cap, "%s", prt_context_last_error(ctx));
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    return st;
}

static const float k_x[6] = {1, -2, 3, -4, 5, 0.5f};

TEST(library_built_against_abi1_headers_loads_and_runs)
{
    prt_registry *r = new_reg(prt_registry_global());
    prt_library *lib = NULL;
    const prt_plugin_creator *c = NULL;
    float scale = 3, bias = 1, y[6];
    prt_field f[2];
    prt_fields fc = {f, 2, 0};
    char err[1024] = "";
    int i;
    CHECK_MSG(prt_registry_load_library(r, PRT_REGTOY_V1ABI_PATH, &lib) == PRT_OK, "%s", prt_registry_last_error(r));
    CHECK_OK(prt_registry_find(r, "RegToyScale", "2", "regtoy", &c, NULL));
    CHECK(c && c->abi_version == 1);
    CHECK(c && c->struct_size == offsetof(prt_plugin_creator, user) + sizeof(void *));
    memset(f, 0, sizeof f);
    f[0].name = "scale"; f[0].type = PRT_FIELD_FLOAT32; f[0].data = &scale; f[0].count = 1;
    f[1].name = "bias"; f[1].type = PRT_FIELD_FLOAT32; f[1].data = &bias; f[1].count = 1;
    CHECK_MSG(run_one_layer(r, "RegToyScale", "2", "regtoy", &fc, k_x, y, err, sizeof err) == PRT_OK, "%s", err);
    for (i = 0; i < 6; i++) CHECK_NEAR(y[i], 3.0f * k_x[i] + 1.0f, 0);
    /* The blob-style creator of the same library too. */
    fc.nb = 1;
    CHECK_MSG(run_one_layer(r, "RegToyScale", "1", "regtoy", &fc, k_x, y, err, sizeof err) == PRT_OK, "%s", err);
    for (i = 0; i < 6; i++) CHECK_NEAR(y[i], 3.0f * k_x[i], 0);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(library_same_source_as_static_plugin)
{
    prt_registry *r = new_reg(prt_registry_global());
    prt_library *lib = NULL;
    const prt_plugin_creator *c = NULL, *cs = NULL;
    const char *owner = NULL;
    float beta = 1.5f, y_lib[6], y_static[6];
    prt_field f[1];
    prt_fields fc = {f, 1, 0};
    char err[1024] = "";
    int32_t nb = 0;
    memset(f, 0, sizeof f);
    f[0].name = "beta"; f[0].type = PRT_FIELD_FLOAT32; f[0].data = &beta; f[0].count = 1;
    CHECK_MSG(prt_registry_load_library(r, PRT_SWISH_LIB_PATH, &lib) == PRT_OK, "%s", prt_registry_last_error(r));
    CHECK(lib && strcmp(prt_library_name(lib), "prt_swish_lib") == 0);
    /* Both versions came through PRT_REGISTER_CREATOR inside the library. */
    CHECK_OK(prt_registry_list(r, NULL, 0, &nb));
    CHECK_OK(prt_registry_find(r, "Swish", "2", "", &c, &owner));
    CHECK(owner && strcmp(owner, "prt_swish_lib") == 0);
    CHECK_OK(prt_registry_find(prt_registry_global(), "Swish", "2", "", &cs, &owner));
    CHECK(owner && strcmp(owner, "static") == 0 && cs != c);
    CHECK_OK(prt_registry_find(r, "Swish", "1", "", &c, &owner));
    CHECK(owner && strcmp(owner, "prt_swish_lib") == 0);
    CHECK_MSG(run_one_layer(r, "Swish", "2", "", &fc, k_x, y_lib, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_MSG(run_one_layer(prt_registry_global(), "Swish", "2", "", &fc, k_x, y_static, err, sizeof err) == PRT_OK,
              "%s", err);
    CHECK(memcmp(y_lib, y_static, sizeof y_lib) == 0);
    CHECK_NEAR(y_lib[0], 1.0 / (1.0 + exp(-1.5)), 1e-6);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

static char host_log_buf[4096];
static void capture_host_log(void *user, prt_severity sev, const char *msg)
{
    (void)user; (void)sev;
    if (strlen(host_log_buf) + strlen(msg) + 2 < sizeof host_log_buf) {
        strcat(host_log_buf, msg);
        strcat(host_log_buf, "\n");
    }
}

TEST(library_uses_host_services_and_device_memory)
{
    prt_registry *r = new_reg(prt_registry_global());
    prt_library *lib = NULL;
    float bias[3] = {10, 20, 30}, y[6];
    prt_field f[1];
    prt_fields fc = {f, 1, 0};
    char err[1024] = "";
    int i;
    memset(f, 0, sizeof f);
    f[0].name = "bias"; f[0].type = PRT_FIELD_FLOAT32; f[0].data = bias; f[0].count = 3;
    host_log_buf[0] = 0;
    prt_set_logger(capture_host_log, NULL, PRT_SEVERITY_VERBOSE);
    CHECK_MSG(prt_registry_load_library(r, PRT_HOSTUSE_LIB_PATH, &lib) == PRT_OK, "%s", prt_registry_last_error(r));
    CHECK(lib && strcmp(prt_library_name(lib), "prt_hostuse_lib") == 0);
    CHECK_MSG(run_one_layer(r, "HostUse", "1", "hostuse", &fc, k_x, y, err, sizeof err) == PRT_OK, "%s", err);
    for (i = 0; i < 6; i++) CHECK_NEAR(y[i], k_x[i] + bias[i % 3], 0);
    CHECK_STR_CONTAINS(host_log_buf, "HostUse: creating with 3 bias values (build phase), host status 2 is \"not found\"");
    CHECK_STR_CONTAINS(host_log_buf, "HostUse: configured for [2, 3]");
    prt_set_logger(NULL, NULL, PRT_SEVERITY_WARNING);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

TEST(host_table_members_and_device_memory)
{
    const prt_host_api *h = prt_host_api_get();
    void *p = NULL;
    char b[64], e[128];
    prt_msg m = {e, sizeof e};
    prt_dims d = {.nb = 2, .d = {4, -1}};
    CHECK(h->struct_size == sizeof(prt_host_api) && h->abi_version == PRT_ABI_VERSION);
    CHECK(PRT_HOST_HAS(h, device_count));
    CHECK_EQ_INT(prt_host_device_count(PRT_DEVICE_CPU), 1);
    CHECK(prt_host_device_count(PRT_DEVICE_CUDA) >= 0 && prt_host_device_count((prt_device)9) == 0);
    CHECK(strcmp(prt_host_dims_str(&d, b, sizeof b), "[4, -1]") == 0);
    CHECK(strcmp(prt_host_status_name(PRT_STATUS_NOT_FOUND), "PRT_STATUS_NOT_FOUND") == 0);
    CHECK_OK(prt_host_device_alloc(PRT_DEVICE_CPU, 0, 100, &p, &m));
    CHECK(p && (uintptr_t)p % 64 == 0);
    memset(p, 1, 100);
    prt_host_device_free(PRT_DEVICE_CPU, 0, p);
    if (prt_host_device_alloc(PRT_DEVICE_CUDA, 999, 16, &p, &m) == PRT_OK) {
        CHECK(0);
    } else {
        CHECK_STR_CONTAINS(e, "CUDA device 999 does not exist");
    }
    CHECK_EQ_INT(prt_host_device_alloc((prt_device)7, 0, 16, &p, &m), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_NO_LEAKS();
}

/* A plan built with the static Swish, read where a library provides Swish. */
TEST(plan_owner_differs_warns_or_refuses)
{
    prt_registry *r = new_reg(prt_registry_global());
    prt_library *lib = NULL;
    prt_network *net = NULL;
    prt_engine *e = NULL, *back = NULL;
    prt_dims d = {.nb = 1, .d = {4}};
    const char *in = "x", *out = "y";
    char err[1024] = "";
    size_t len = 0;
    void *plan;
    CHECK_OK(prt_network_create(prt_registry_global(), &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "act", "Swish", "2", "", NULL, &in, 1, &out, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    CHECK_MSG(prt_engine_build(net, NULL, prt_registry_global(), &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_engine_serialize(e, NULL, 0, &len));
    plan = malloc(len);
    CHECK_OK(prt_engine_serialize(e, plan, len, &len));
    CHECK_OK(prt_registry_load_library(r, PRT_SWISH_LIB_PATH, &lib));
    /* default: a warning naming both owners */
    host_log_buf[0] = 0;
    prt_set_logger(capture_host_log, NULL, PRT_SEVERITY_WARNING);
    CHECK_EQ_INT(prt_registry_owner_policy(r), PRT_OWNER_WARN);
    CHECK_MSG(prt_engine_deserialize(r, plan, len, &back, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_STR_CONTAINS(host_log_buf, "act: the plan was built with Swish v2 from \"static\"; loading the one from "
                                     "\"prt_swish_lib\"");
    prt_engine_destroy(back);
    back = NULL;
    /* refuse */
    CHECK_OK(prt_registry_set_owner_policy(r, PRT_OWNER_REFUSE));
    CHECK_EQ_INT(prt_engine_deserialize(r, plan, len, &back, err, sizeof err), PRT_STATUS_VERSION_MISMATCH);
    CHECK(back == NULL);
    CHECK_STR_CONTAINS(err, "the plan was built with Swish v2 from \"static\", but here \"prt_swish_lib\" provides it");
    /* any: silent */
    CHECK_OK(prt_registry_set_owner_policy(r, PRT_OWNER_ANY));
    host_log_buf[0] = 0;
    CHECK_OK(prt_engine_deserialize(r, plan, len, &back, err, sizeof err));
    CHECK(strstr(host_log_buf, "plan was built") == NULL);
    CHECK_EQ_INT(prt_registry_set_owner_policy(r, (prt_owner_policy)9), PRT_STATUS_INVALID_ARGUMENT);
    /* the same owner: silent under every policy */
    CHECK_OK(prt_registry_set_owner_policy(prt_registry_global(), PRT_OWNER_REFUSE));
    prt_engine_destroy(back);
    back = NULL;
    CHECK_OK(prt_engine_deserialize(prt_registry_global(), plan, len, &back, err, sizeof err));
    CHECK_OK(prt_registry_set_owner_policy(prt_registry_global(), PRT_OWNER_WARN));
    prt_set_logger(NULL, NULL, PRT_SEVERITY_WARNING);
    prt_engine_destroy(back);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    free(plan);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}
