/* The test runner: forks one child per case, with a time limit. */
#define _GNU_SOURCE
#include "prt_test.h"

#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#define PRT_TEST_MAX 1024
#define PRT_TEST_SKIP_CODE 77

static struct {
    const char *name;
    const char *file;
    prt_test_fn fn;
} tests[PRT_TEST_MAX];
static int nb_tests;
static int case_failed;

void prt_test_register(const char *name, prt_test_fn fn, const char *file)
{
    if (nb_tests < PRT_TEST_MAX) {
        tests[nb_tests].name = name;
        tests[nb_tests].fn = fn;
        tests[nb_tests].file = file;
        nb_tests++;
    }
}

void prt_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "  %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    case_failed = 1;
}

void prt_test_skip(const char *why)
{
    fprintf(stderr, "  skipped: %s\n", why);
    fflush(stderr);
    exit(PRT_TEST_SKIP_CODE);
}

/* Both directories can be moved with the environment (PRT_TEST_DATA_DIR,
 * PRT_TEST_BIN_DIR), for running a build tree copied to another machine. */
const char *prt_test_data_dir(void)
{
    const char *e = getenv("PRT_TEST_DATA_DIR");
    if (e && *e) return e;
#ifdef PRT_TEST_DATA_DIR
    return PRT_TEST_DATA_DIR;
#else
    return "tests/data";
#endif
}

const char *prt_test_bin_dir(void)
{
    const char *e = getenv("PRT_TEST_BIN_DIR");
    if (e && *e) return e;
#ifdef PRT_TEST_BIN_DIR
    return PRT_TEST_BIN_DIR;
#else
    return ".";
#endif
}

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
int prt_test_have_cuda(void)
{
    int n = 0;
    if (getenv("PLUGRT_NO_GPU")) return 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
#else
int prt_test_have_cuda(void) { return 0; }
#endif

static int run_one(int i, unsigned timeout_s)
{
    pid_t pid;
    int st = 0;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        alarm(timeout_s);
        case_failed = 0;
        tests[i].fn();
        fflush(stdout);
        fflush(stderr);
        exit(case_failed ? 1 : 0); /* exit, not _exit: LeakSanitizer checks at exit */
    }
    while (waitpid(pid, &st, 0) < 0) {
    }
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "  %s: killed by signal %d%s\n", tests[i].name, WTERMSIG(st),
                WTERMSIG(st) == SIGALRM ? " (time limit)" : "");
    }
    return 2;
}

int main(int argc, char **argv)
{
    int i, passed = 0, failed = 0, skipped = 0;
    unsigned timeout_s = 300;
    const char *t = getenv("PRT_TEST_TIMEOUT");
    if (t && atoi(t) > 0) timeout_s = (unsigned)atoi(t);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 0; i < nb_tests; i++) {
        int rc;
        if (argc > 1) {
            int j, want = 0;
            for (j = 1; j < argc; j++)
                if (strcmp(argv[j], tests[i].name) == 0) want = 1;
            if (!want) continue;
        }
        rc = run_one(i, timeout_s);
        if (rc == 0) {
            passed++;
            printf("ok    %s\n", tests[i].name);
        } else if (rc == PRT_TEST_SKIP_CODE) {
            skipped++;
            printf("skip  %s\n", tests[i].name);
        } else {
            failed++;
            printf("FAIL  %s (%s)\n", tests[i].name, tests[i].file);
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
