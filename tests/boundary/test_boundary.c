/* The library boundary: libplugrt (the runtime) does not link libyaml nor
 * contain the conformance harness, and no library source includes a
 * plugin's private header (plugins hand what the harness needs over through
 * their creators). */
#include <stdio.h>
#include <stdlib.h>

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
    n = count_lines(cmd, "prt__runner_run", first, sizeof first);
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
