/* tools/plugrt/main.c - `plugrt <command> ...` dispatcher. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "plugrt/status.h"

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} cli_cmd;

static const cli_cmd cmds[] = {
#ifdef PRT_CLI_HAVE_PLUGINS
    {"plugins", prt_cli_plugins, "list every plugin creator: name, version, namespace, style, fields"},
#endif
#ifdef PRT_CLI_HAVE_DEMO
    {"demo", prt_cli_demo, "run the bundled demo"},
#endif
#ifdef PRT_CLI_HAVE_BUILD
    {"build", prt_cli_build, "build an engine (plan) from a JSON network description or an ONNX model"},
#endif
#ifdef PRT_CLI_HAVE_RUN
    {"run", prt_cli_run, "run a plan and time it"},
#endif
#ifdef PRT_CLI_HAVE_INSPECT
    {"inspect", prt_cli_inspect, "describe a plan or an ONNX model"},
#endif
#ifdef PRT_CLI_HAVE_TEST_PLUGIN
    {"test-plugin", prt_cli_test_plugin, "check a plugin against a PluginConfig YAML and golden IO"},
#endif
#ifdef PRT_CLI_HAVE_ONNX_TEST
    {"onnx-test", prt_cli_onnx_test, "run ONNX backend test folders (model.onnx + test_data_set_N)"},
#endif
#ifdef PRT_CLI_HAVE_GOLDEN
    {"golden", prt_cli_golden, "golden make: write a golden-IO JSON from a PluginConfig YAML"},
#endif
    {NULL, NULL, NULL}};

static void usage(FILE *f)
{
    const cli_cmd *c;
    fprintf(f, "plugrt %s\nusage: plugrt <command> [options]\ncommands:\n", prt_version_string());
    for (c = cmds; c->name; c++) fprintf(f, "  %-12s %s\n", c->name, c->help);
}

int main(int argc, char **argv)
{
    const cli_cmd *c;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("plugrt %s\n", prt_version_string());
        return 0;
    }
    for (c = cmds; c->name; c++)
        if (strcmp(argv[1], c->name) == 0) return c->fn(argc - 1, argv + 1);
    fprintf(stderr, "plugrt: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
