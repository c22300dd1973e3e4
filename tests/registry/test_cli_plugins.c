/* `plugrt plugins`: text and JSON listings of the global registry plus
 * loaded libraries, shadowing, defaults of every kind, errors and exit
 * codes. The command's source is compiled into this program and its stdout
 * and stderr are captured in files. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

static prt_status cli_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                             prt_field_plugin **out, prt_msg *err)
{
    (void)c; (void)fc; (void)phase; (void)out; (void)err;
    return PRT_STATUS_UNSUPPORTED;
}

static const char def_mode[] = "nearest";
static const uint8_t def_flag = 1;
static const uint8_t def_bytes[3] = {0xde, 0xad, 0x01};
static const int32_t def_pad[2] = {0, -1};
static prt_dims def_shape = {2, 0, {3, -1, 0, 0, 0, 0, 0, 0}};
static const char *const def_labels[2] = {"cat", "dog"};
static const float def_table_data[4] = {1, 2, 3, 4};
static const prt_field_tensor def_table = {.dtype = PRT_DTYPE_F32, .dims = {2, 0, {2, 2}}, .data = def_table_data};
static const prt_field_graph def_body = {.name = "then_branch", .format = PRT_GRAPH_NETWORK_JSON, .data = "{}",
                                         .size = 2};

static const prt_field_schema cli_fields[] = {
    {.name = "mode", .type = PRT_FIELD_CHAR, .min_count = 1, .max_count = 16, .default_data = def_mode,
     .default_count = 7, .doc = "interpolation"},
    {.name = "flag", .type = PRT_FIELD_BOOL, .min_count = 1, .max_count = 1, .default_data = &def_flag,
     .default_count = 1},
    {.name = "bytes", .type = PRT_FIELD_BYTES, .min_count = 0, .max_count = PRT_COUNT_UNBOUNDED,
     .default_data = def_bytes, .default_count = 3},
    {.name = "pad", .type = PRT_FIELD_INT32, .min_count = 2, .max_count = 2, .default_data = def_pad,
     .default_count = 2, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX_EXCL, .min = -1, .max = 8},
    {.name = "shape", .type = PRT_FIELD_DIMS, .min_count = 1, .max_count = 1, .default_data = &def_shape,
     .default_count = 1},
    {.name = "k", .type = PRT_FIELD_INT64, .required = 1, .min_count = 1, .max_count = 1},
    {.name = "labels", .type = PRT_FIELD_STRINGS, .min_count = 0, .max_count = 4, .default_data = def_labels,
     .default_count = 2},
    {.name = "table", .type = PRT_FIELD_TENSOR, .min_count = 1, .max_count = 1, .default_data = &def_table,
     .default_count = 1},
    {.name = "body", .type = PRT_FIELD_GRAPH, .min_count = 1, .max_count = 1, .default_data = &def_body,
     .default_count = 1},
};

static const prt_plugin_creator cli_static = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegCliStatic", "3", "regcli", PRT_STYLE_FIELD,
    (int32_t)(sizeof cli_fields / sizeof cli_fields[0]), cli_fields, sizeof(prt_field_schema), 0, NULL, NULL,
    cli_create, "a creator for the listing tests", NULL};
/* Same key as the library's RegToyScale v2: the library's copy shadows it. */
static const prt_plugin_creator cli_shadowed = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegToyScale", "2", "regtoy", PRT_STYLE_FIELD, 0, NULL,
    sizeof(prt_field_schema), 0, NULL, NULL, cli_create, NULL, NULL};
/* A name and doc with escape, bell and newline characters. */
static const prt_plugin_creator cli_hostile = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegEvil\x1b[2J\a", "1", "regcli", PRT_STYLE_FIELD, 0, NULL,
    sizeof(prt_field_schema), 0, NULL, NULL, cli_create, "fine\nregcli::Forged v9  [field style]", NULL};
PRT_REGISTER_CREATOR(cli_static)
PRT_REGISTER_CREATOR(cli_shadowed)
PRT_REGISTER_CREATOR(cli_hostile)

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

/* Run the command with stdout/stderr captured; returns its exit status. */
static int run_cli(char **out, char **err, int argc, char **argv)
{
    char po[] = "/tmp/prt_cli_out_XXXXXX", pe[] = "/tmp/prt_cli_err_XXXXXX";
    int fo = mkstemp(po), fe = mkstemp(pe), so, se, rc;
    fflush(stdout);
    fflush(stderr);
    so = dup(1);
    se = dup(2);
    dup2(fo, 1);
    dup2(fe, 2);
    rc = prt_cli_plugins(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    close(fo);
    close(fe);
    *out = slurp(po);
    *err = slurp(pe);
    unlink(po);
    unlink(pe);
    return rc;
}

static cJSON *find_creator(cJSON *root, const char *name, const char *version, const char *owner)
{
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "creators"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(c, "version"));
        const char *o = cJSON_GetStringValue(cJSON_GetObjectItem(c, "owner"));
        if (n && v && o && strcmp(n, name) == 0 && strcmp(v, version) == 0 && strcmp(o, owner) == 0) return c;
    }
    return NULL;
}

static cJSON *field_of(cJSON *creator, const char *name)
{
    cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(creator, "fields"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(f, "name"));
        if (n && strcmp(n, name) == 0) return f;
    }
    return NULL;
}

TEST(cli_plugins_json_with_library)
{
    char *argv[] = {"plugins", "--load", REGTOY_GOOD_PATH, "--json", NULL};
    char *out = NULL, *err = NULL;
    cJSON *root, *c, *f, *b, *d;
    int rc = run_cli(&out, &err, 4, argv);
    CHECK_EQ_INT(rc, 0);
    root = out ? cJSON_Parse(out) : NULL;
    CHECK_MSG(root != NULL, "output is not JSON: %.200s", out ? out : "(none)");
    if (!root) goto done;
    /* the library's creators, first */
    c = find_creator(root, "RegToyScale", "1", "regtoy");
    CHECK(c != NULL);
    CHECK(c == cJSON_GetArrayItem(cJSON_GetObjectItem(root, "creators"), 0));
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "style")), "blob") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "namespace")), "regtoy") == 0);
    f = field_of(c, "scale");
    CHECK(f != NULL);
    if (f) {
        CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "type")), "float32") == 0);
        CHECK(cJSON_IsFalse(cJSON_GetObjectItem(f, "required")));
        d = cJSON_GetObjectItem(f, "default");
        CHECK(cJSON_IsArray(d) && cJSON_GetArraySize(d) == 1 && cJSON_GetArrayItem(d, 0)->valuedouble == 2.0);
        b = cJSON_GetObjectItem(f, "bounds");
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(b, "min_exclusive")));
        CHECK(cJSON_GetObjectItem(b, "min")->valuedouble == 0.0);
        CHECK(cJSON_GetObjectItem(b, "max") == NULL);
        CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "doc")), "multiplier, > 0") == 0);
    }
    c = find_creator(root, "RegToyScale", "2", "regtoy");
    CHECK(c && cJSON_IsFalse(cJSON_GetObjectItem(c, "shadowed")));
    f = c ? field_of(c, "scale") : NULL;
    CHECK(f && cJSON_IsTrue(cJSON_GetObjectItem(f, "required")) && cJSON_IsNull(cJSON_GetObjectItem(f, "default")));
    /* the global one with the same key is shadowed */
    c = find_creator(root, "RegToyScale", "2", "static");
    CHECK(c && cJSON_IsTrue(cJSON_GetObjectItem(c, "shadowed")));
    /* defaults of every kind */
    c = find_creator(root, "RegCliStatic", "3", "static");
    CHECK(c != NULL);
    if (c) {
        f = field_of(c, "mode");
        CHECK(f && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "default")), "nearest") == 0);
        CHECK(f && cJSON_GetObjectItem(f, "max_count")->valuedouble == 16);
        f = field_of(c, "flag");
        CHECK(f && cJSON_IsTrue(cJSON_GetArrayItem(cJSON_GetObjectItem(f, "default"), 0)));
        f = field_of(c, "bytes");
        CHECK(f && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "default")), "dead01") == 0);
        CHECK(f && cJSON_IsNull(cJSON_GetObjectItem(f, "max_count")));
        f = field_of(c, "pad");
        d = f ? cJSON_GetObjectItem(f, "default") : NULL;
        CHECK(d && cJSON_GetArraySize(d) == 2 && cJSON_GetArrayItem(d, 1)->valuedouble == -1);
        b = f ? cJSON_GetObjectItem(f, "bounds") : NULL;
        CHECK(b && cJSON_IsFalse(cJSON_GetObjectItem(b, "min_exclusive")) &&
              cJSON_IsTrue(cJSON_GetObjectItem(b, "max_exclusive")) && cJSON_GetObjectItem(b, "max")->valuedouble == 8);
        f = field_of(c, "shape");
        d = f ? cJSON_GetArrayItem(cJSON_GetObjectItem(f, "default"), 0) : NULL;
        CHECK(d && cJSON_GetArraySize(d) == 2 && cJSON_GetArrayItem(d, 1)->valuedouble == -1);
        f = field_of(c, "k");
        CHECK(f && cJSON_IsTrue(cJSON_GetObjectItem(f, "required")) && cJSON_IsNull(cJSON_GetObjectItem(f, "doc")));
        f = field_of(c, "labels");
        d = f ? cJSON_GetObjectItem(f, "default") : NULL;
        CHECK(f && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "type")), "strings") == 0);
        CHECK(d && cJSON_GetArraySize(d) == 2 && strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(d, 1)), "dog") == 0);
        f = field_of(c, "table");
        d = f ? cJSON_GetArrayItem(cJSON_GetObjectItem(f, "default"), 0) : NULL;
        CHECK(d && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(d, "dtype")), "f32") == 0 &&
              cJSON_GetArraySize(cJSON_GetObjectItem(d, "dims")) == 2);
        f = field_of(c, "body");
        d = f ? cJSON_GetArrayItem(cJSON_GetObjectItem(f, "default"), 0) : NULL;
        CHECK(d && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(d, "name")), "then_branch") == 0 &&
              strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(d, "format")), "network-json") == 0);
    }
    d = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "libraries"), 0);
    CHECK(d && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(d, "name")), "regtoy") == 0);
    cJSON_Delete(root);
done:
    free(out);
    free(err);
}

TEST(cli_plugins_text)
{
    char *argv[] = {"plugins", NULL};
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(run_cli(&out, &err, 1, argv), 0);
    CHECK_STR_CONTAINS(out, "plugin creators\n");
    CHECK_STR_CONTAINS(out, "regcli::RegCliStatic v3  [field style, owner \"static\"]\n");
    CHECK_STR_CONTAINS(out, "  a creator for the listing tests\n");
    CHECK_STR_CONTAINS(out, "  mode             char     1..16  default \"nearest\"      -              interpolation\n");
    CHECK_STR_CONTAINS(out, "  bytes            bytes    0..*   default 0xdead01");
    CHECK_STR_CONTAINS(out, "  pad              int32    2      default [0, -1]        in [-1, 8)");
    CHECK_STR_CONTAINS(out, "  shape            dims     1      default [3, -1]");
    CHECK_STR_CONTAINS(out, "  flag             bool     1      default true");
    CHECK_STR_CONTAINS(out, "  k                int64    1      required");
    CHECK_STR_CONTAINS(out, "  labels           strings  0..4   default [\"cat\", \"dog\"]");
    CHECK_STR_CONTAINS(out, "  table            tensor   1      default f32[2, 2]");
    CHECK_STR_CONTAINS(out, "  body             graph    1      default graph \"then_branch\"");
    CHECK_STR_CONTAINS(out, "regtoy::RegToyScale v2  [field style, owner \"static\"]\n  no fields\n");
    CHECK(err && err[0] == 0);
    free(out);
    free(err);
}

/* Names reach the terminal escaped: no escape sequence, bell or forged line. */
TEST(cli_plugins_text_escapes_control_characters)
{
    char *argv[] = {"plugins", NULL};
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(run_cli(&out, &err, 1, argv), 0);
    CHECK_STR_CONTAINS(out, "regcli::RegEvil\\e[2J\\x07 v1  [field style");
    CHECK_STR_CONTAINS(out, "  fine\\nregcli::Forged v9  [field style]\n");
    CHECK(out && !strchr(out, 0x1b) && !strchr(out, 0x07));
    free(out);
    free(err);
}

TEST(cli_plugins_errors)
{
    char *bad_lib[] = {"plugins", "--load", REGTOY_NOENTRY_PATH, NULL};
    char *missing[] = {"plugins", "--load=/nonexistent/lib.so", NULL};
    char *no_arg[] = {"plugins", "--load", NULL};
    char *unknown[] = {"plugins", "--frobnicate", NULL};
    char *help[] = {"plugins", "--help", NULL};
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(run_cli(&out, &err, 3, bad_lib), 1);
    CHECK_STR_CONTAINS(err, "plugrt plugins: plugin library \"");
    CHECK_STR_CONTAINS(err, "has no entry point \"prt_plugin_library_init\"");
    CHECK(out && out[0] == 0);
    free(out);
    free(err);
    CHECK_EQ_INT(run_cli(&out, &err, 2, missing), 1);
    CHECK_STR_CONTAINS(err, "cannot load plugin library \"/nonexistent/lib.so\"");
    free(out);
    free(err);
    CHECK_EQ_INT(run_cli(&out, &err, 2, no_arg), 2);
    CHECK_STR_CONTAINS(err, "--load needs a library path");
    free(out);
    free(err);
    CHECK_EQ_INT(run_cli(&out, &err, 2, unknown), 2);
    CHECK_STR_CONTAINS(err, "unknown option \"--frobnicate\"");
    CHECK_STR_CONTAINS(err, "usage: plugrt plugins");
    free(out);
    free(err);
    CHECK_EQ_INT(run_cli(&out, &err, 2, help), 0);
    CHECK_STR_CONTAINS(out, "usage: plugrt plugins");
    free(out);
    free(err);
}
