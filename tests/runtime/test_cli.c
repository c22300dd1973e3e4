/* tests/runtime/test_cli.c - `plugrt build / inspect / run` end to end on the
 * bundled Swish network, and their errors (exit status, never a crash). */
#include <sys/wait.h>

#include "prt_test.h"

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[4096];
    int st;
    snprintf(cmd, sizeof cmd, fmt, a, b);
    st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static const char *cli(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tools/plugrt/plugrt", prt_test_bin_dir());
    return path;
}

TEST(build_inspect_run_swish_network)
{
    char net[1024], dir[64] = "/tmp/prt_cli_XXXXXX", plan[1200], out[1200];
    FILE *f;
    char line[4096];
    int saw_layers = 0;
    snprintf(net, sizeof net, "%s/networks/swish_small.json", prt_test_data_dir());
    CHECK(mkdtemp(dir) != NULL);
    snprintf(plan, sizeof plan, "%s/m.plan", dir);
    snprintf(out, sizeof out, "%s/inspect.txt", dir);
    {
        char args[4096];
        snprintf(args, sizeof args, "%s -o %s --profile x:1x3x4x5,2x3x4x5,4x3x4x5 >/dev/null", net, plan);
        CHECK_EQ_INT(sh("%s build %s", cli(), args), 0);
        snprintf(args, sizeof args, "%s > %s", plan, out);
        CHECK_EQ_INT(sh("%s inspect %s", cli(), args), 0);
    }
    f = fopen(out, "r");
    CHECK(f != NULL);
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "Swish v1 (blob style") || strstr(line, "Swish v2 (field style")) saw_layers++;
    if (f) fclose(f);
    CHECK_EQ_INT(saw_layers, 2);
    CHECK_EQ_INT(sh("%s inspect %s --json >/dev/null", cli(), plan), 0);
    CHECK_EQ_INT(sh("%s run %s --iterations 3 --warmup 1 --threads 1 >/dev/null", cli(), plan), 0);
    CHECK_EQ_INT(sh("%s run %s --json --iterations 2 --shape x=3x3x4x5 >/dev/null", cli(), plan), 0);
    /* Errors: exit 1 (bad input) or 2 (usage), never a signal. */
    CHECK_EQ_INT(sh("%s run %s --shape x=9x3x4x5 2>/dev/null >/dev/null", cli(), plan), 1);
    CHECK_EQ_INT(sh("%s run %s --input x=nothere.npy 2>/dev/null >/dev/null", cli(), plan), 1);
    CHECK_EQ_INT(sh("%s run %s --iterations 0 2>/dev/null", cli(), plan), 2);
    CHECK_EQ_INT(sh("%s inspect %s 2>/dev/null", cli(), net), 1);
    CHECK_EQ_INT(sh("%s build %s 2>/dev/null", cli(), net), 2);
    CHECK_EQ_INT(sh("%s build %s -o /dev/null/x 2>/dev/null", cli(), net), 1);
    CHECK_EQ_INT(sh("%s run %s/nothere.plan 2>/dev/null", cli(), dir), 1);
    {
        char args[2048];
        snprintf(args, sizeof args, "head -c 300 %s > %s/t.plan", plan, dir);
        CHECK_EQ_INT(sh("%s%s", "", args), 0);
        snprintf(args, sizeof args, "%s/t.plan 2>/dev/null", dir);
        CHECK_EQ_INT(sh("%s run %s", cli(), args), 1);
        CHECK_EQ_INT(sh("%s inspect %s", cli(), args), 1);
    }
    sh("rm -rf %s%s", dir, "");
}
