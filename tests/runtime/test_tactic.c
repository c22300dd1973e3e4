/* tests/runtime/test_tactic.c - tactics: chosen by timing (a controlled
 * clock), recorded in the plan (TACT), handed to the plugin at load and to
 * every context, the timing cache, `plugrt inspect`; both plugin styles. */
#include <sys/wait.h>

#include "backend/cuda/device.h"
#include "core/core.h"
#include "engine/plan.h"
#include "engine/tactic.h"
#include "fakeplugins.h"
#include "plugrt/engine.h"
#include "plugrt/inspect.h"
#include "plugrt/trace.h"
#include "prt_test.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() CHECK_MSG(__lsan_do_recoverable_leak_check() == 0, "memory leaked (report above)")
#else
#define NO_LEAKS() ((void)0)
#endif

static const char *const k_styles[2] = {"1", "2"}; /* TestTactic v1 blob, v2 field */

static prt_field ids_field(const int32_t *ids, int32_t n)
{
    prt_field f;
    memset(&f, 0, sizeof f);
    f.name = "tactics";
    f.data = ids;
    f.type = PRT_FIELD_INT32;
    f.count = n;
    return f;
}

/* x [n, 8] -> TestTactic (version, tactics) -> y; n > 0 fixed, n < 0 dynamic. */
static prt_network *tactic_net(prt_registry *r, const char *version, const int32_t *ids, int32_t nb)
{
    prt_network *net = NULL;
    prt_field f = ids_field(ids, nb);
    prt_fields fc = {&f, 1, 0};
    prt_dims d;
    const char *in[] = {"x"}, *out[] = {"y"};
    memset(&d, 0, sizeof d);
    d.nb = 2;
    d.d[0] = -1;
    d.d[1] = 8;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "L", "TestTactic", version, "", ids ? &fc : NULL, in, 1, out, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    return net;
}

static prt_profile_range g_range;

/* Timing on with the fake clock, 1 warm-up and 3 timed runs, one thread;
 * the profile of x: opt rows `opt`. */
static void timed_cfg(prt_builder_config *cfg, int64_t opt)
{
    prt_builder_config_init(cfg);
    memset(&g_range, 0, sizeof g_range);
    g_range.input = "x";
    g_range.min.nb = g_range.opt.nb = g_range.max.nb = 2;
    g_range.min.d[0] = 1;
    g_range.opt.d[0] = opt;
    g_range.max.d[0] = 16;
    g_range.min.d[1] = g_range.opt.d[1] = g_range.max.d[1] = 8;
    cfg->nb_ranges = 1;
    cfg->ranges = &g_range;
    cfg->timing_warmup = 1;
    cfg->timing_runs = 3;
    cfg->timing_threads = 1;
    prt__tactic_set_clock(fake_tactic_clock, NULL);
}

static prt_engine *build_ok(prt_network *net, const prt_builder_config *cfg, prt_registry *r)
{
    prt_engine *e = NULL;
    char err[2048] = "";
    CHECK_MSG(prt_engine_build(net, cfg, r, &e, err, sizeof err) == PRT_OK, "build failed: %s", err);
    return e;
}

static uint8_t *plan_bytes(const prt_engine *e, size_t *len)
{
    uint8_t *b;
    CHECK_OK(prt_engine_serialize(e, NULL, 0, len));
    b = malloc(*len);
    CHECK_OK(prt_engine_serialize(e, b, *len, len));
    return b;
}

/* The plan of TestTactic (style st, tactics [1, 2]) built timed at opt rows,
 * with its registry and network. */
static uint8_t *built_plan(int st, int64_t opt, prt_registry **r, prt_network **net, size_t *len)
{
    prt_builder_config cfg;
    prt_engine *e;
    uint8_t *b;
    *r = fake_registry(1, 0, 10);
    *net = tactic_net(*r, k_styles[st], NULL, 0);
    timed_cfg(&cfg, opt);
    e = build_ok(*net, &cfg, *r);
    b = plan_bytes(e, len);
    prt_engine_destroy(e);
    return b;
}

/* The tactic of layer 0 as inspect describes it. */
static prt_plan_layer layer0(const uint8_t *bytes, size_t len, prt_plan_info **pi)
{
    prt_plan_layer l;
    char err[1024] = "";
    CHECK_MSG(prt_plan_info_read(bytes, len, pi, err, sizeof err) == PRT_OK, "%s", err);
    memset(&l, 0, sizeof l);
    l.struct_size = (uint32_t)sizeof l;
    CHECK_OK(prt_plan_info_layer(*pi, 0, &l));
    return l;
}

static int contains_tag(const uint8_t *b, size_t len, const char *tag)
{
    size_t i;
    for (i = 0; i + 4 <= len; i++)
        if (memcmp(b + i, tag, 4) == 0) return 1;
    return 0;
}

/* Destroy what a case made (any may be NULL), restore the clock, and check
 * that nothing leaked. */
static void release(prt_engine *e, prt_network *net, prt_registry *r)
{
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r);
    prt__tactic_set_clock(NULL, NULL);
    NO_LEAKS();
}

/* ---- the lifecycle trace ---- */

static char g_trace[64][128];
static int g_nb_trace;

static void on_trace(void *user, const char *line)
{
    (void)user;
    if (g_nb_trace < 64) snprintf(g_trace[g_nb_trace], sizeof g_trace[0], "%s", line);
    g_nb_trace++;
}

static int trace_index(const char *line, int from)
{
    int i;
    for (i = from; i < g_nb_trace && i < 64; i++)
        if (strcmp(g_trace[i], line) == 0) return i;
    return -1;
}

static void trace_reset(void) { g_nb_trace = 0; }

/* ---- chosen by measurement ---- */

TEST(fastest_tactic_is_chosen_and_recorded_blob_and_field)
{
    /* The fake clock: tactic 1 1 ms a run, tactic 2 1 us, tactic 3 30 us. */
    static const int32_t orders[3][3] = {{1, 2, 0}, {2, 1, 0}, {1, 3, 0}};
    static const int32_t nbs[3] = {2, 2, 2}, want[3] = {2, 2, 3};
    int st, k;
    for (st = 0; st < 2; st++)
        for (k = 0; k < 3; k++) {
            prt_registry *r = fake_registry(1, 0, 10);
            prt_network *net = tactic_net(r, k_styles[st], orders[k], nbs[k]);
            prt_builder_config cfg;
            prt_engine *e;
            prt_plan_info *pi = NULL;
            prt_plan_layer l;
            uint8_t *b;
            size_t len = 0;
            int32_t j;
            timed_cfg(&cfg, 4);
            fake_tactic_reset();
            e = build_ok(net, &cfg, r);
            /* Each candidate: 1 warm-up + 3 timed runs on its own instance. */
            for (j = 0; j < nbs[k]; j++) CHECK_EQ_INT(fake_tactic_enqueues(orders[k][j]), 4);
            CHECK_EQ_INT(fake_tactic_enqueues(0), 0);
            b = plan_bytes(e, &len);
            CHECK(contains_tag(b, len, "TACT"));
            l = layer0(b, len, &pi);
            CHECK_EQ_INT(l.tactic, want[k]);
            CHECK_EQ_INT(l.tactic_source, PRT_TACTIC_TIMED);
            CHECK_EQ_INT(l.nb_tactics, nbs[k]);
            for (j = 0; j < nbs[k]; j++) {
                CHECK_EQ_INT(l.tactic_ids[j], orders[k][j]);
                CHECK(l.tactic_ns[j] == (orders[k][j] == 1 ? 1000000u : orders[k][j] == 2 ? 1000u : 30000u));
            }
            CHECK_STR_CONTAINS(l.tactic_name, want[k] == 2 ? "fast" : "");
            if (want[k] == 3) CHECK(l.tactic_name[0] == 0); /* the plugin gives 3 no name */
            prt_plan_info_destroy(pi);
            free(b);
            release(e, net, r);
        }
    prt__tactic_set_clock(NULL, NULL);
    NO_LEAKS();
}

/* The real clock: tactic 1 does 256 times the work. Which wins is not
 * asserted (a loaded machine may stall any run); that every candidate got a
 * time, and the choice is one of them, is. */
TEST(real_clock_times_every_candidate)
{
    static const int32_t ids[2] = {1, 2};
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = tactic_net(r, "2", ids, 2);
    prt_builder_config cfg;
    prt_engine *e;
    prt_plan_info *pi = NULL;
    prt_plan_layer l;
    uint8_t *b;
    size_t len = 0;
    timed_cfg(&cfg, 16);
    prt__tactic_set_clock(NULL, NULL);
    e = build_ok(net, &cfg, r);
    b = plan_bytes(e, &len);
    l = layer0(b, len, &pi);
    CHECK_EQ_INT(l.tactic_source, PRT_TACTIC_TIMED);
    CHECK(l.tactic == 1 || l.tactic == 2);
    CHECK(l.tactic_ns[0] > 0 && l.tactic_ns[0] != UINT64_MAX && l.tactic_ns[1] > 0 && l.tactic_ns[1] != UINT64_MAX);
    prt_plan_info_destroy(pi);
    free(b);
    release(e, net, r);
}

/* ---- the plan round trip and the lifecycle ---- */

TEST(loaded_plugin_and_contexts_get_the_recorded_tactic)
{
    int st;
    for (st = 0; st < 2; st++) {
        prt_registry *r;
        prt_network *net;
        prt_engine *e2 = NULL;
        prt_context *ctx = NULL;
        uint8_t *b;
        size_t len = 0;
        char err[1024] = "";
        float x[16], y[16];
        prt_dims d;
        int i, at;
        b = built_plan(st, 2, &r, &net, &len);
        trace_reset();
        prt_set_trace_callback(on_trace, NULL);
        fake_tactic_reset();
        CHECK_MSG(prt_engine_deserialize(r, b, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
        /* Load: asked again for its tactics, then told the recorded one. */
        at = trace_index("L: get_valid_tactics", 0);
        CHECK_MSG(at >= 0, "no get_valid_tactics at load");
        CHECK_MSG(trace_index("L: set_tactic(2)", at) > at, "no set_tactic(2) after it at load");
        CHECK_EQ_INT(fake_tactic_set_calls(), 1);
        trace_reset();
        CHECK_OK(prt_context_create(e2, NULL, &ctx));
        if (st == 0) { /* blob: clone, set_tactic, then (no attach, no initialize here) */
            at = trace_index("L: clone", 0);
            CHECK(at >= 0 && trace_index("L: set_tactic(2)", at) == at + 1);
        } else { /* field: attach_to_context (a clone), then set_tactic */
            at = trace_index("L: attach_to_context", 0);
            CHECK(at >= 0 && trace_index("L: set_tactic(2)", at) == at + 1);
        }
        prt_set_trace_callback(NULL, NULL);
        CHECK_EQ_INT(fake_tactic_set_calls(), 2);
        CHECK_EQ_INT(fake_tactic_last_set(), 2);
        memset(&d, 0, sizeof d);
        d.nb = 2;
        d.d[0] = 2;
        d.d[1] = 8;
        for (i = 0; i < 16; i++) x[i] = (float)i;
        CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
        CHECK_OK(prt_context_set_tensor(ctx, "x", x));
        CHECK_OK(prt_context_set_tensor(ctx, "y", y));
        CHECK_OK(prt_context_execute(ctx));
        for (i = 0; i < 16; i++) CHECK(y[i] == x[i] + 1.0f);
        CHECK_EQ_INT(fake_tactic_enqueues(2), 1);
        CHECK_EQ_INT(fake_tactic_enqueues(1) + fake_tactic_enqueues(0), 0);
        prt_context_destroy(ctx);
        free(b);
        release(e2, net, r);
    }
}

/* The build's calls for a layer with two tactics, in the order
 * docs/lifecycle.md gives (step 8). */
TEST(build_calls_follow_the_lifecycle)
{
    static const char *const blob[] = {
        "L: get_valid_tactics", "L: get_serialization_size", "L: get_serialization_size", "L: serialize",
        "L: clone", "L: set_tactic(1)", "L: enqueue", "L: enqueue", "L: enqueue", "L: enqueue", "L: destroy",
        "L: clone", "L: set_tactic(2)", "L: enqueue", "L: enqueue", "L: enqueue", "L: enqueue", "L: destroy",
        "L: get_tactic_name", NULL};
    static const char *const field[] = {
        "L: get_valid_tactics", "L: get_fields_to_serialize", "L: get_fields_to_serialize",
        "L: attach_to_context", "L: set_tactic(1)", "L: enqueue", "L: enqueue", "L: enqueue", "L: enqueue",
        "L: destroy", "L: attach_to_context", "L: set_tactic(2)", "L: enqueue", "L: enqueue", "L: enqueue",
        "L: enqueue", "L: destroy", "L: get_tactic_name", NULL};
    int st;
    for (st = 0; st < 2; st++) {
        const char *const *want = st == 0 ? blob : field;
        prt_registry *r = fake_registry(1, 0, 10);
        prt_network *net = tactic_net(r, k_styles[st], NULL, 0);
        prt_builder_config cfg;
        prt_engine *e;
        int at, k;
        timed_cfg(&cfg, 4);
        trace_reset();
        prt_set_trace_callback(on_trace, NULL);
        e = build_ok(net, &cfg, r);
        prt_set_trace_callback(NULL, NULL);
        at = trace_index(want[0], 0);
        CHECK_MSG(at >= 0, "style %d: no get_valid_tactics in the build", st);
        for (k = 0; at >= 0 && want[k]; k++)
            CHECK_MSG(at + k < g_nb_trace && at + k < 64 && strcmp(g_trace[at + k], want[k]) == 0,
                      "style %d: call %d after get_valid_tactics is \"%s\", expected \"%s\"", st, k,
                      at + k < g_nb_trace && at + k < 64 ? g_trace[at + k] : "(none)", want[k]);
        release(e, net, r);
    }
}

/* Built without timing: the first listed, nothing run, and builds agree to
 * the byte. */
TEST(timing_off_takes_the_first_and_builds_are_identical)
{
    static const int32_t ids[2] = {1, 2};
    int st;
    for (st = 0; st < 2; st++) {
        prt_registry *r = fake_registry(1, 0, 10);
        prt_network *net = tactic_net(r, k_styles[st], ids, 2);
        prt_builder_config cfg;
        prt_engine *e1, *e2;
        prt_plan_info *pi = NULL;
        prt_plan_layer l;
        uint8_t *b1, *b2;
        size_t n1 = 0, n2 = 0;
        timed_cfg(&cfg, 4);
        cfg.tactic_timing = PRT_TACTIC_TIMING_OFF;
        fake_tactic_reset();
        e1 = build_ok(net, &cfg, r);
        e2 = build_ok(net, &cfg, r);
        CHECK_EQ_INT(fake_tactic_enqueues(1) + fake_tactic_enqueues(2), 0);
        b1 = plan_bytes(e1, &n1);
        b2 = plan_bytes(e2, &n2);
        CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0);
        l = layer0(b1, n1, &pi);
        CHECK_EQ_INT(l.tactic, 1);
        CHECK_EQ_INT(l.tactic_source, PRT_TACTIC_UNTIMED);
        CHECK(l.tactic_ns[0] == 0 && l.tactic_ns[1] == 0);
        CHECK_STR_CONTAINS(l.tactic_name, "slow");
        prt_plan_info_destroy(pi);
        free(b1);
        free(b2);
        prt_engine_destroy(e1);
        prt_engine_destroy(e2);
        prt_network_destroy(net);
        prt_registry_destroy(r);
    }
    prt__tactic_set_clock(NULL, NULL);
    NO_LEAKS();
}

TEST(one_tactic_is_recorded_untimed_and_none_records_nothing)
{
    static const int32_t one[1] = {5};
    int st;
    for (st = 0; st < 2; st++) {
        prt_registry *r = fake_registry(1, 0, 10);
        prt_network *n1 = tactic_net(r, k_styles[st], one, 1), *n0 = tactic_net(r, k_styles[st], one, 0);
        prt_builder_config cfg;
        prt_engine *e1, *e0, *e2 = NULL;
        prt_plan_info *pi = NULL;
        prt_plan_layer l;
        uint8_t *b;
        size_t len = 0;
        char err[1024] = "";
        timed_cfg(&cfg, 4);
        fake_tactic_reset();
        e1 = build_ok(n1, &cfg, r);
        CHECK_EQ_INT(fake_tactic_enqueues(5), 0);
        b = plan_bytes(e1, &len);
        l = layer0(b, len, &pi);
        CHECK_EQ_INT(l.tactic, 5);
        CHECK_EQ_INT(l.tactic_source, PRT_TACTIC_ONLY);
        prt_plan_info_destroy(pi);
        free(b);
        /* No tactics: no TACT section, and nobody is told a tactic. */
        e0 = build_ok(n0, &cfg, r);
        b = plan_bytes(e0, &len);
        CHECK(!contains_tag(b, len, "TACT"));
        l = layer0(b, len, &pi);
        CHECK_EQ_INT(l.tactic, 0);
        CHECK_EQ_INT(l.nb_tactics, 0);
        fake_tactic_reset();
        CHECK_MSG(prt_engine_deserialize(r, b, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
        CHECK_EQ_INT(fake_tactic_set_calls(), 0);
        prt_plan_info_destroy(pi);
        free(b);
        prt_engine_destroy(e2);
        prt_engine_destroy(e1);
        prt_engine_destroy(e0);
        prt_network_destroy(n1);
        prt_network_destroy(n0);
        prt_registry_destroy(r);
    }
    prt__tactic_set_clock(NULL, NULL);
    NO_LEAKS();
}

/* A plan read back, changed and written again with the plan writer. */
static uint8_t *rewrite(const uint8_t *b, size_t len, int32_t new_tactic, size_t *out_len)
{
    prt__plan *p = NULL;
    uint8_t *o = NULL;
    char err[1024] = "";
    CHECK_MSG(prt__plan_read(b, len, &p, err, sizeof err) == PRT_OK, "%s", err);
    if (new_tactic == 0) {
        prt__ptactic_free(p->layers[0].tactic); /* as a plan of write version 2 has it */
        p->layers[0].tactic = NULL;
    } else {
        p->layers[0].tactic->tactic = new_tactic;
        p->layers[0].tactic->ids[p->layers[0].tactic->nb - 1] = new_tactic;
        p->layers[0].tactic->name[0] = 0;
    }
    CHECK_OK(prt__plan_write(p, &o, out_len, err, sizeof err));
    prt__plan_free(p);
    return o;
}

TEST(plan_without_tactics_loads_with_the_default)
{
    int st;
    for (st = 0; st < 2; st++) {
        prt_registry *r;
        prt_network *net;
        prt_engine *e2 = NULL;
        prt_context *ctx = NULL;
        uint8_t *b, *old;
        size_t len = 0, olen = 0;
        char err[1024] = "";
        float x[8] = {0}, y[8];
        b = built_plan(st, 1, &r, &net, &len);
        old = rewrite(b, len, 0, &olen);
        CHECK(!contains_tag(old, olen, "TACT"));
        fake_tactic_reset();
        CHECK_MSG(prt_engine_deserialize(r, old, olen, &e2, err, sizeof err) == PRT_OK, "%s", err);
        CHECK_OK(prt_context_create(e2, NULL, &ctx));
        CHECK_EQ_INT(fake_tactic_set_calls(), 0);
        CHECK_OK(prt_context_set_tensor(ctx, "x", x));
        CHECK_OK(prt_context_set_tensor(ctx, "y", y));
        CHECK_OK(prt_context_execute(ctx));
        CHECK_EQ_INT(fake_tactic_enqueues(0), 1); /* the plugin's own default */
        prt_context_destroy(ctx);
        free(b);
        prt__free(old);
        release(e2, net, r);
    }
}

TEST(tactic_the_plugin_does_not_list_is_refused_at_load)
{
    int st;
    for (st = 0; st < 2; st++) {
        prt_registry *r;
        prt_network *net;
        prt_engine *e2 = (prt_engine *)(uintptr_t)0x7;
        uint8_t *b, *bad;
        size_t len = 0, blen = 0;
        char err[1024] = "";
        b = built_plan(st, 1, &r, &net, &len);
        bad = rewrite(b, len, 7, &blen);
        fake_tactic_reset();
        CHECK_EQ_INT(prt_engine_deserialize(r, bad, blen, &e2, err, sizeof err), PRT_STATUS_BAD_FORMAT);
        CHECK(e2 == (prt_engine *)(uintptr_t)0x7);
        CHECK_STR_CONTAINS(err, "layer \"L\" (TestTactic v");
        CHECK_STR_CONTAINS(err, "the plan records tactic 7, but the plugin lists only tactics 1, 2 for the plan's "
                                "shapes on the cpu; build the plan again");
        CHECK_EQ_INT(fake_tactic_set_calls(), 0);
        /* The section's own rules: a tactic that is not a candidate. */
        {
            prt__plan *p = NULL;
            uint8_t *o = NULL;
            size_t olen = 0;
            CHECK_OK(prt__plan_read(b, len, &p, err, sizeof err));
            p->layers[0].tactic->tactic = 9;
            CHECK_OK(prt__plan_write(p, &o, &olen, err, sizeof err));
            prt__plan_free(p);
            p = NULL;
            CHECK_EQ_INT(prt__plan_read(o, olen, &p, err, sizeof err), PRT_STATUS_BAD_FORMAT);
            CHECK_STR_CONTAINS(err, "section TACT: layer \"L\": tactic 9 is not one of its 2 candidates");
            prt__free(o);
        }
        free(b);
        prt__free(bad);
        release(NULL, net, r);
    }
}

/* ---- the timing cache ---- */

static int total_runs(void) { return fake_tactic_enqueues(1) + fake_tactic_enqueues(2) + fake_tactic_enqueues(3); }

TEST(timing_cache_hit_skips_timing_and_gives_identical_plans)
{
    int st;
    for (st = 0; st < 2; st++) {
        prt_registry *r = fake_registry(1, 0, 10);
        prt_network *net = tactic_net(r, k_styles[st], NULL, 0);
        prt_builder_config cfg;
        prt_timing_cache *c = NULL, *c2 = NULL;
        prt_engine *e1, *e2, *e3, *e4;
        prt_plan_info *pi = NULL;
        prt_plan_layer l;
        uint8_t *b1, *b2, *b3, *b4, *cb;
        size_t n1 = 0, n2 = 0, n3 = 0, n4 = 0, clen = 0;
        char err[1024] = "";
        CHECK_OK(prt_timing_cache_create(&c));
        timed_cfg(&cfg, 4);
        cfg.timing_cache = c;
        fake_tactic_reset();
        e1 = build_ok(net, &cfg, r);
        CHECK_EQ_INT(total_runs(), 8);
        CHECK_EQ_INT(prt_timing_cache_nb_entries(c), 1);
        fake_tactic_reset();
        e2 = build_ok(net, &cfg, r);
        CHECK_EQ_INT(total_runs(), 0); /* a hit: nothing timed */
        e3 = build_ok(net, &cfg, r);
        CHECK_EQ_INT(prt_timing_cache_nb_entries(c), 1);
        b1 = plan_bytes(e1, &n1);
        b2 = plan_bytes(e2, &n2);
        b3 = plan_bytes(e3, &n3);
        CHECK(n2 == n3 && memcmp(b2, b3, n2) == 0); /* same cache, same plan */
        l = layer0(b2, n2, &pi);
        CHECK_EQ_INT(l.tactic, 2);
        CHECK_EQ_INT(l.tactic_source, PRT_TACTIC_FROM_CACHE);
        CHECK(l.tactic_ns[0] == 1000000u && l.tactic_ns[1] == 1000u);
        prt_plan_info_destroy(pi);
        /* Through bytes and back: the same entries, the same plan. */
        CHECK_OK(prt_timing_cache_serialize(c, NULL, 0, &clen));
        cb = malloc(clen);
        CHECK_OK(prt_timing_cache_serialize(c, cb, clen, &clen));
        CHECK_MSG(prt_timing_cache_deserialize(cb, clen, &c2, err, sizeof err) == PRT_OK, "%s", err);
        CHECK_EQ_INT(prt_timing_cache_nb_entries(c2), 1);
        cfg.timing_cache = c2;
        fake_tactic_reset();
        e4 = build_ok(net, &cfg, r);
        CHECK_EQ_INT(total_runs(), 0);
        b4 = plan_bytes(e4, &n4);
        CHECK(n4 == n2 && memcmp(b4, b2, n2) == 0);
        {
            size_t n = 0;
            uint8_t *again;
            CHECK_OK(prt_timing_cache_serialize(c2, NULL, 0, &n));
            again = malloc(n);
            CHECK_OK(prt_timing_cache_serialize(c2, again, n, &n));
            CHECK(n == clen && memcmp(again, cb, n) == 0);
            free(again);
        }
        free(b1);
        free(b2);
        free(b3);
        free(b4);
        free(cb);
        prt_engine_destroy(e1);
        prt_engine_destroy(e2);
        prt_engine_destroy(e3);
        prt_engine_destroy(e4);
        prt_timing_cache_destroy(c);
        prt_timing_cache_destroy(c2);
        prt_network_destroy(net);
        prt_registry_destroy(r);
    }
    prt__tactic_set_clock(NULL, NULL);
    NO_LEAKS();
}

TEST(timing_cache_key_mismatch_times_again)
{
    static const int32_t three[3] = {1, 2, 3}, other[2] = {2, 1};
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = tactic_net(r, "2", NULL, 0), *n3 = tactic_net(r, "2", three, 3), *no = tactic_net(r, "2", other, 2);
    prt_network *blob = tactic_net(r, "1", NULL, 0);
    prt_builder_config cfg;
    prt_timing_cache *c = NULL;
    prt_engine *e[6];
    int i;
    CHECK_OK(prt_timing_cache_create(&c));
    timed_cfg(&cfg, 4);
    cfg.timing_cache = c;
    fake_tactic_reset();
    e[0] = build_ok(net, &cfg, r);
    CHECK_EQ_INT(total_runs(), 8);
    /* Another opt shape: another key. */
    timed_cfg(&cfg, 8);
    cfg.timing_cache = c;
    fake_tactic_reset();
    e[1] = build_ok(net, &cfg, r);
    CHECK_EQ_INT(total_runs(), 8);
    CHECK_EQ_INT(prt_timing_cache_nb_entries(c), 2);
    /* Other fields (another hash of the record body), another version. */
    fake_tactic_reset();
    e[2] = build_ok(n3, &cfg, r);
    CHECK_EQ_INT(total_runs(), 12);
    fake_tactic_reset();
    e[3] = build_ok(no, &cfg, r);
    CHECK_EQ_INT(total_runs(), 8);
    fake_tactic_reset();
    e[4] = build_ok(blob, &cfg, r);
    CHECK_EQ_INT(total_runs(), 8);
    /* Another number of CPU threads: another device. */
    cfg.timing_threads = 2;
    fake_tactic_reset();
    e[5] = build_ok(net, &cfg, r);
    CHECK_EQ_INT(total_runs(), 8);
    CHECK_EQ_INT(prt_timing_cache_nb_entries(c), 6);
    for (i = 0; i < 6; i++) prt_engine_destroy(e[i]);
    prt_timing_cache_destroy(c);
    prt_network_destroy(net);
    prt_network_destroy(n3);
    prt_network_destroy(no);
    prt_network_destroy(blob);
    prt_registry_destroy(r);
    prt__tactic_set_clock(NULL, NULL);
    NO_LEAKS();
}

/* x [n, 8] -> A: TestTactic v2 -> h -> B: `plugin` v`version` (fields) -> y. */
static prt_network *two_layer_net(prt_registry *r, const char *plugin, const char *version, const prt_fields *fc)
{
    prt_network *net = NULL;
    prt_dims d;
    const char *in1[] = {"x"}, *o1[] = {"h"}, *in2[] = {"h"}, *o2[] = {"y"};
    memset(&d, 0, sizeof d);
    d.nb = 2;
    d.d[0] = -1;
    d.d[1] = 8;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "A", "TestTactic", "2", "", NULL, in1, 1, o1, 1));
    CHECK_OK(prt_network_add_layer(net, "B", plugin, version, "", fc, in2, 1, o2, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    return net;
}

/* Two layers with one key in one build: timed once. */
TEST(identical_layers_are_timed_once)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = two_layer_net(r, "TestTactic", "2", NULL);
    prt_builder_config cfg;
    prt_engine *e;
    timed_cfg(&cfg, 4);
    fake_tactic_reset();
    e = build_ok(net, &cfg, r);
    CHECK_EQ_INT(total_runs(), 8);
    {
        uint8_t *b;
        size_t len = 0;
        prt_plan_info *pi = NULL;
        prt_plan_layer l;
        b = plan_bytes(e, &len);
        l = layer0(b, len, &pi);
        CHECK_EQ_INT(l.tactic_source, PRT_TACTIC_TIMED);
        memset(&l, 0, sizeof l);
        l.struct_size = (uint32_t)sizeof l;
        CHECK_OK(prt_plan_info_layer(pi, 1, &l));
        CHECK_EQ_INT(l.tactic, 2);
        CHECK_EQ_INT(l.tactic_source, PRT_TACTIC_FROM_CACHE);
        prt_plan_info_destroy(pi);
        free(b);
    }
    release(e, net, r);
}

/* A build that fails after timing leaves the cache as it was. */
TEST(failed_build_leaves_the_cache_unchanged)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net;
    prt_builder_config cfg;
    prt_timing_cache *c = NULL;
    prt_engine *e = (prt_engine *)(uintptr_t)0x9;
    char err[1024] = "";
    static const float one = 1.0f;
    static const int32_t crop = 4;
    prt_field sf[2];
    prt_fields sfc = {sf, 2, 0};
    memset(sf, 0, sizeof sf);
    sf[0].name = "scale";
    sf[0].data = &one;
    sf[0].type = PRT_FIELD_FLOAT32;
    sf[0].count = 1;
    sf[1].name = "crop";
    sf[1].data = &crop;
    sf[1].type = PRT_FIELD_INT32;
    sf[1].count = 1;
    /* B drops 4 rows: a negative extent at the profile's min (1 row) fails the build after A was timed. */
    net = two_layer_net(r, "TestScale", "1", &sfc);
    CHECK_OK(prt_timing_cache_create(&c));
    timed_cfg(&cfg, 4);
    cfg.timing_cache = c;
    fake_tactic_reset();
    if (prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_OK) {
        prt_engine_destroy(e);
        CHECK_MSG(0, "the build was expected to fail");
    }
    CHECK_STR_CONTAINS(err, "extents must be >= 0");
    CHECK(e == (prt_engine *)(uintptr_t)0x9);
    CHECK_EQ_INT(total_runs(), 8); /* A was timed ... */
    CHECK_EQ_INT(prt_timing_cache_nb_entries(c), 0); /* ... and nothing of it kept */
    prt_timing_cache_destroy(c);
    release(NULL, net, r);
}

static uint8_t *cache_bytes(size_t *len)
{
    static const int32_t ids[2] = {1, 2};
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = tactic_net(r, "2", ids, 2);
    prt_builder_config cfg;
    prt_timing_cache *c = NULL;
    prt_engine *e;
    uint8_t *b;
    CHECK_OK(prt_timing_cache_create(&c));
    timed_cfg(&cfg, 4);
    cfg.timing_cache = c;
    e = build_ok(net, &cfg, r);
    prt__tactic_set_clock(NULL, NULL);
    CHECK_OK(prt_timing_cache_serialize(c, NULL, 0, len));
    b = malloc(*len);
    CHECK_OK(prt_timing_cache_serialize(c, b, *len, len));
    prt_engine_destroy(e);
    prt_timing_cache_destroy(c);
    prt_network_destroy(net);
    prt_registry_destroy(r);
    return b;
}

static void fix_checksum(uint8_t *b, size_t len)
{
    uint64_t sum = prt__plan_checksum(b + 48, len - 48);
    int k;
    for (k = 0; k < 8; k++) b[24 + k] = (uint8_t)(sum >> (8 * k));
}

TEST(corrupt_or_foreign_timing_cache_is_refused_with_a_reason)
{
    size_t len = 0, i;
    uint8_t *b = cache_bytes(&len), *q = malloc(len + 8);
    prt_timing_cache *c = (prt_timing_cache *)(uintptr_t)0x5;
    char err[1024] = "";
    int loads = 0;
    CHECK(len > 48);
    memcpy(q, b, len);
    q[len / 2] ^= 0x40;
    CHECK_EQ_INT(prt_timing_cache_deserialize(q, len, &c, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "not a usable timing cache: checksum mismatch (the file is damaged)");
    CHECK(c == (prt_timing_cache *)(uintptr_t)0x5);
    CHECK_EQ_INT(prt_timing_cache_deserialize(b, len - 3, &c, err, sizeof err), PRT_STATUS_TRUNCATED);
    CHECK_STR_CONTAINS(err, "got");
    CHECK_EQ_INT(prt_timing_cache_deserialize("PLUGRTPL\2\0\0\0", 12, &c, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "no \"PLUGRTTC\" magic");
    memcpy(q, b, len);
    q[8] = 2; /* a newer format */
    CHECK_EQ_INT(prt_timing_cache_deserialize(q, len, &c, err, sizeof err), PRT_STATUS_VERSION_MISMATCH);
    CHECK_STR_CONTAINS(err, "it needs reader version 2, this is 1");
    /* Every byte flipped with the checksum fixed up: refused or loaded, never a crash. */
    for (i = 48; i < len; i++) {
        prt_timing_cache *t = NULL;
        memcpy(q, b, len);
        q[i] ^= 0x11;
        fix_checksum(q, len);
        if (prt_timing_cache_deserialize(q, len, &t, err, sizeof err) == PRT_OK) {
            loads++;
            prt_timing_cache_destroy(t);
        } else {
            CHECK_STR_CONTAINS(err, "not a usable timing cache");
        }
    }
    CHECK(loads < (int)(len - 48));
    CHECK(c == (prt_timing_cache *)(uintptr_t)0x5);
    free(b);
    free(q);
    NO_LEAKS();
}

/* ---- the command line ---- */

static int sh(const char *cmd)
{
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static const char *cli(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tools/plugrt/plugrt", prt_test_bin_dir());
    return path;
}

static int file_has(const char *path, const char *needle)
{
    char *data = NULL;
    size_t len = 0;
    char err[256];
    int found;
    if (prt__read_file(path, (void **)&data, &len, err, sizeof err) != PRT_OK) return 0;
    data = prt__realloc(data, len + 1);
    data[len] = 0;
    found = strstr(data, needle) != NULL;
    prt__free(data);
    return found;
}

TEST(inspect_shows_each_layers_tactic)
{
    char dir[64] = "/tmp/prt_tactic_XXXXXX", plan[128], out[128], cmd[1024];
    int st;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(plan, sizeof plan, "%s/t.plan", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    for (st = 0; st < 2; st++) {
        prt_registry *r = fake_registry(1, 0, 10);
        prt_network *net = tactic_net(r, k_styles[st], NULL, 0);
        prt_builder_config cfg;
        prt_engine *e;
        char err[1024] = "";
        timed_cfg(&cfg, 4);
        e = build_ok(net, &cfg, r);
        CHECK_MSG(prt_engine_save(e, plan, err, sizeof err) == PRT_OK, "%s", err);
        snprintf(cmd, sizeof cmd, "%s inspect %s > %s", cli(), plan, out);
        CHECK_EQ_INT(sh(cmd), 0);
        CHECK(file_has(out, "tactic 2 (fast), timed; candidates 1: 1.000 ms, 2: 1.000 us"));
        snprintf(cmd, sizeof cmd, "%s inspect %s --json > %s", cli(), plan, out);
        CHECK_EQ_INT(sh(cmd), 0);
        CHECK(file_has(out, "\"tactic\":"));
        CHECK(file_has(out, "\"name\":\t\"fast\""));
        CHECK(file_has(out, "\"source\":\t\"timed\""));
        CHECK(file_has(out, "\"time_ns\":\t1000000"));
        release(e, net, r);
    }
    prt__tactic_set_clock(NULL, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
}

/* `plugrt build --timing-cache` with the bundled ModulatedDeformConv2d in
 * fp16 on CUDA, whose kernels are tactics: timed where a GPU is found; kept
 * at the first without one. A file that is not a cache is refused and left. */
TEST(cli_build_with_a_timing_cache)
{
    char dir[64] = "/tmp/prt_tactic_XXXXXX", plan[128], out[128], tc[128], net[1024], cmd[4096];
    int gpu = prt__cuda_device_count() > 0;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(plan, sizeof plan, "%s/d.plan", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(tc, sizeof tc, "%s/t.tcache", dir);
    snprintf(net, sizeof net, "%s/../../examples/detector_tail.json", prt_test_data_dir());
    /* Not a cache: an error naming the file, which stays as it was. */
    snprintf(cmd, sizeof cmd, "printf 'not a cache' > %s && %s build %s -o %s --device cuda --fp16 --timing-cache %s "
             "> %s 2>&1", tc, cli(), net, plan, tc, out);
    CHECK_EQ_INT(sh(cmd), 1);
    CHECK(file_has(out, "--timing-cache"));
    CHECK(file_has(out, "not a usable timing cache: no \"PLUGRTTC\" magic"));
    CHECK(file_has(tc, "not a cache"));
    snprintf(cmd, sizeof cmd, "rm -f %s", tc);
    CHECK_EQ_INT(sh(cmd), 0);
    /* No file yet: made. */
    snprintf(cmd, sizeof cmd, "%s build %s -o %s --device cuda --fp16 --timing-cache %s > %s 2>&1", cli(), net, plan,
             tc, out);
    CHECK_EQ_INT(sh(cmd), 0);
    {
        prt_timing_cache *c = NULL;
        char err[1024] = "", want[64];
        CHECK_MSG(prt_timing_cache_load(tc, &c, err, sizeof err) == PRT_OK, "%s", err);
        /* one entry per DCN layer of another shape (3 in this network) where they are timed */
        CHECK(gpu ? prt_timing_cache_nb_entries(c) == 3 : prt_timing_cache_nb_entries(c) == 0);
        snprintf(want, sizeof want, "%d entries (%d new)", (int)prt_timing_cache_nb_entries(c),
                 (int)prt_timing_cache_nb_entries(c));
        CHECK(file_has(out, want));
        prt_timing_cache_destroy(c);
    }
    snprintf(cmd, sizeof cmd, "%s inspect %s > %s", cli(), plan, out);
    CHECK_EQ_INT(sh(cmd), 0);
#ifdef PLUGRT_HAVE_CUDA
    CHECK(file_has(out, gpu ? ", timed; candidates" : ", no device; candidates"));
    if (gpu) { /* again: from the cache, nothing new */
        snprintf(cmd, sizeof cmd, "%s build %s -o %s --device cuda --fp16 --timing-cache %s > %s.build 2>&1 && %s "
                 "inspect %s > %s", cli(), net, plan, tc, out, cli(), plan, out);
        CHECK_EQ_INT(sh(cmd), 0);
        CHECK(file_has(out, ", timing cache; candidates"));
        CHECK(!file_has(out, ", timed; candidates"));
        snprintf(cmd, sizeof cmd, "%s.build", out);
        CHECK(file_has(cmd, "3 entries (0 new)"));
    }
#endif
    snprintf(cmd, sizeof cmd, "%s build %s -o %s --no-timing --device cuda --fp16 > /dev/null 2>&1 && %s inspect %s > %s",
             cli(), net, plan, cli(), plan, out);
    CHECK_EQ_INT(sh(cmd), 0);
#ifdef PLUGRT_HAVE_CUDA
    CHECK(file_has(out, ", timing off; candidates"));
#endif
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
}
