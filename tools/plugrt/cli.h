/*
 * tools/plugrt/cli.h - the sub-commands of the `plugrt` command.
 *
 * Each sub-command gets argv with argv[0] = the sub-command name, prints its
 * result to stdout and its errors to stderr, and returns the process exit
 * status (0 success, 1 failure, 2 usage error). None of them may crash on any
 * input.
 */
#ifndef PLUGRT_TOOLS_CLI_H
#define PLUGRT_TOOLS_CLI_H

int prt_cli_plugins(int argc, char **argv);     /* cmd_plugins.c */
int prt_cli_demo(int argc, char **argv);        /* cmd_demo.c */
int prt_cli_build(int argc, char **argv);       /* cmd_build.c (engine) */
int prt_cli_run(int argc, char **argv);         /* cmd_run.c (engine) */
int prt_cli_inspect(int argc, char **argv);     /* cmd_inspect.c (engine) */
int prt_cli_test_plugin(int argc, char **argv); /* cmd_test_plugin.c (harness) */
int prt_cli_golden(int argc, char **argv);      /* cmd_golden.c (harness) */
int prt_cli_onnx_test(int argc, char **argv);   /* cmd_onnx_test.c (onnx) */

#endif
