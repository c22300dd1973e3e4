/* conf_cli_main.c - a `plugrt` with only the conformance sub-commands
 * (test-plugin, golden), built for the tests so that they do not depend on
 * every other sub-command. Same arguments and exit status as `plugrt`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "test-plugin") == 0) return prt_cli_test_plugin(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "golden") == 0) return prt_cli_golden(argc - 1, argv + 1);
    fprintf(stderr, "usage: %s test-plugin ... | golden make ...\n", argc ? argv[0] : "prt_conf_cli");
    return 2;
}
