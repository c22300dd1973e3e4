/* The library boundary: libplugrt (the runtime) does not link libyaml nor
 * contain the conformance harness, no library source includes a plugin's
 * private header (plugins hand what the harness needs over through their
 * creators), and the CLI, the benchmarks and the examples include public
 * headers only. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "prt_test.h"

/* Lines of `cmd`'s output containing `needle`; -1 when it cannot run. */
static int count_lines(const char *cmd, const char *needle, char *first, size_t cap)
{
    char line[4096];
    int n = 0;
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    while (fgets(line, sizeof line, p)) {
        if (!strstr(line, needle)) continue;
        if (n++ == 0 && first) snprintf(first, cap, "%s", line);
    }
    return pclose(p) == -1 ? -1 : n;
}

TEST(libplugrt_does_not_link_libyaml)
{
    char cmd[2048], first[4096] = "";
    int n;
    snprintf(cmd, sizeof cmd, "readelf -d '%s' 2>/dev/null || objdump -p '%s'", PRT_LIBPLUGRT_PATH, PRT_LIBPLUGRT_PATH);
    CHECK(count_lines(cmd, "NEEDED", NULL, 0) > 0); /* the tool ran and saw the dependencies */
    n = count_lines(cmd, "yaml", first, sizeof first);
    CHECK_MSG(n == 0, "libplugrt needs libyaml: %s", first);
}

TEST(libplugrt_holds_no_harness_code)
{
    char cmd[2048], first[4096] = "";
    int n;
    snprintf(cmd, sizeof cmd, "nm -A '%s' 2>/dev/null", PRT_LIBPLUGRT_PATH);
    CHECK(count_lines(cmd, "prt_registry_find", NULL, 0) > 0);
    n = count_lines(cmd, "prt__pcfg_", first, sizeof first);
    CHECK_MSG(n == 0, "libplugrt contains the YAML reader: %s", first);
    n = count_lines(cmd, "prt_harness_test_plugin", first, sizeof first);
    CHECK_MSG(n == 0, "libplugrt contains the conformance runner: %s", first);
}

TEST(no_library_source_includes_a_plugin_header)
{
    char cmd[2048], first[4096] = "";
    int n;
    snprintf(cmd, sizeof cmd, "grep -rn --include='*.c' --include='*.h' --include='*.cu' '#include' '%s/src'",
             PRT_SOURCE_DIR);
    CHECK(count_lines(cmd, "#include", NULL, 0) > 0);
    n = count_lines(cmd, "plugins/", first, sizeof first);
    CHECK_MSG(n == 0, "a library file includes a plugin's header: %s", first);
}

/* ---- applications use public headers only ----------------------------------------------
 *
 * Every #include in tools/, bench/ and examples/ must name a header in
 * include/ or one in the including file's own folder (or below it). A quoted
 * include is resolved against the file's folder, then include/; an angle
 * include may name system headers, but not a file of the source tree outside
 * include/ (src/, plugins/, tests/, another folder). */

typedef struct incl_report {
    int nb_files, nb_includes, nb_bad;
    char first[2048];
} incl_report;

static int is_source_name(const char *n)
{
    static const char *const ext[] = {".c", ".h", ".cu", ".cuh", ".cpp", ".cc", ".hpp"};
    size_t i, ln = strlen(n);
    for (i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t le = strlen(ext[i]);
        if (ln > le && strcmp(n + ln - le, ext[i]) == 0) return 1;
    }
    return 0;
}

/* 1 when `path` exists and its real path lies inside the real folder `dir`. */
static int inside(const char *path, const char *dir)
{
    char rp[PATH_MAX], rd[PATH_MAX];
    size_t n;
    if (!realpath(path, rp) || !realpath(dir, rd)) return 0;
    n = strlen(rd);
    return strncmp(rp, rd, n) == 0 && rp[n] == '/';
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void incl_bad(incl_report *r, const char *file, int line, const char *what)
{
    if (r->nb_bad++ == 0) snprintf(r->first, sizeof r->first, "%s:%d: %s", file, line, what);
}

static void check_file(const char *root, const char *file, incl_report *r)
{
    char line[4096], dir[PATH_MAX], inc[PATH_MAX], p[PATH_MAX + 512], what[PATH_MAX + 64];
    static const char *const tree[] = {"src", "plugins", "tests", "tools", "bench", "examples", "cmake", "."};
    FILE *f = fopen(file, "r");
    char *slash;
    int ln = 0;
    size_t k;
    if (!f) return;
    snprintf(dir, sizeof dir, "%s", file);
    slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    r->nb_files++;
    while (fgets(line, sizeof line, f)) {
        const char *s = line;
        char close;
        size_t n;
        ln++;
        while (*s == ' ' || *s == '\t') s++;
        if (*s++ != '#') continue;
        while (*s == ' ' || *s == '\t') s++;
        if (strncmp(s, "include", 7) != 0) continue;
        s += 7;
        while (*s == ' ' || *s == '\t') s++;
        if (*s != '"' && *s != '<') continue;
        close = *s == '"' ? '"' : '>';
        n = strcspn(s + 1, close == '"' ? "\"" : ">");
        if (n == 0 || n >= sizeof inc || s[1 + n] != close) continue;
        memcpy(inc, s + 1, n);
        inc[n] = 0;
        r->nb_includes++;
        snprintf(p, sizeof p, "%s/include/%s", root, inc);
        if (exists(p)) continue; /* a public header */
        if (close == '"') {
            snprintf(p, sizeof p, "%s/%s", dir, inc);
            if (exists(p) && inside(p, dir)) continue; /* the folder's own header */
            snprintf(what, sizeof what, "#include \"%s\" is neither in include/ nor in the file's own folder", inc);
            incl_bad(r, file, ln, what);
            continue;
        }
        for (k = 0; k < sizeof tree / sizeof tree[0]; k++) {
            snprintf(p, sizeof p, "%s/%s/%s", root, tree[k], inc);
            if (exists(p) && !inside(p, dir)) {
                snprintf(what, sizeof what, "#include <%s> names %s/%s, outside include/", inc, tree[k], inc);
                incl_bad(r, file, ln, what);
                break;
            }
        }
    }
    fclose(f);
}

static void check_tree(const char *root, const char *dir, incl_report *r)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d))) {
        char p[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) check_tree(root, p, r);
        else if (S_ISREG(st.st_mode) && is_source_name(e->d_name)) check_file(root, p, r);
    }
    closedir(d);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

TEST(tools_bench_and_examples_include_public_headers_only)
{
    static const char *const dirs[] = {"tools", "bench", "examples"};
    size_t i;
    for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        incl_report r;
        char d[PATH_MAX];
        memset(&r, 0, sizeof r);
        snprintf(d, sizeof d, "%s/%s", PRT_SOURCE_DIR, dirs[i]);
        check_tree(PRT_SOURCE_DIR, d, &r);
        CHECK_MSG(r.nb_files > 0 && r.nb_includes > 0, "%s: no source file or include seen", dirs[i]);
        CHECK_MSG(r.nb_bad == 0, "%s: %d include%s of private headers, first: %s", dirs[i], r.nb_bad,
                  r.nb_bad == 1 ? "" : "s", r.first);
    }
}

/* The check itself: a tree with one allowed and three private includes. */
TEST(include_check_finds_private_headers)
{
    char root[] = "/tmp/prt_boundary_XXXXXX", p[PATH_MAX];
    static const char *const mk[] = {"include", "include/plugrt", "src", "src/core", "plugins", "plugins/nms",
                                     "tools", "tools/x", "tools/y"};
    incl_report r;
    size_t i;
    CHECK(mkdtemp(root) != NULL);
    for (i = 0; i < sizeof mk / sizeof mk[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", root, mk[i]);
        CHECK(mkdir(p, 0700) == 0);
    }
    snprintf(p, sizeof p, "%s/include/plugrt/engine.h", root);
    write_file(p, "\n");
    snprintf(p, sizeof p, "%s/src/core/core.h", root);
    write_file(p, "\n");
    snprintf(p, sizeof p, "%s/plugins/nms/nms.h", root);
    write_file(p, "\n");
    snprintf(p, sizeof p, "%s/tools/y/other.h", root);
    write_file(p, "\n");
    snprintf(p, sizeof p, "%s/tools/x/own.h", root);
    write_file(p, "#include <stdio.h>\n");
    snprintf(p, sizeof p, "%s/tools/x/a.c", root);
    write_file(p, "#include \"own.h\"\n#include \"plugrt/engine.h\"\n#include <plugrt/engine.h>\n"
                  " * #include \"core/core.h\" (in a comment)\n"
                  "#include \"core/core.h\"\n#  include \"../y/other.h\"\n#include <plugins/nms/nms.h>\n");
    memset(&r, 0, sizeof r);
    snprintf(p, sizeof p, "%s/tools", root);
    check_tree(root, p, &r);
    CHECK_EQ_INT(r.nb_files, 3);
    CHECK_EQ_INT(r.nb_includes, 7);
    CHECK_EQ_INT(r.nb_bad, 3);
    CHECK_STR_CONTAINS(r.first, "core/core.h");
    snprintf(p, sizeof p, "rm -rf '%s'", root);
    CHECK(system(p) == 0);
}
