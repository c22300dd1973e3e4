/* tools/plugrt/cmd_onnx_test.c - `plugrt onnx-test DIR...`: run ONNX backend
 * test folders (model.onnx, test_data_set_N/input_K.pb, output_K.pb) and
 * compare with the tolerances of ONNX's own backend runner. Each test runs in
 * a child process, so that no test can take the runner down. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "clidev.h"
#include "cli.h"
#include "cliutil.h"
#include "plugrt/onnx.h"

#define OT_RTOL 1e-3
#define OT_ATOL 1e-7
#define OT_MAX_IO 64
#define OT_TIMEOUT_S 120

enum { OT_PASS = 'P', OT_FAIL = 'F', OT_UNSUPPORTED = 'U' };

static void onnx_test_usage(FILE *f)
{
    fprintf(f,
            "usage: plugrt onnx-test DIR... [--device cpu|cuda] [--json] [--load LIB ...] [--verbose]\n"
            "  DIR is an ONNX backend test folder (model.onnx, test_data_set_N/input_K.pb, output_K.pb) or a\n"
            "  folder of them. Each test is imported, built for the device and run on every data set; outputs\n"
            "  must match within rtol 1e-3, atol 1e-7. Ends with the line \"N passed, N failed, N unsupported\";\n"
            "  every failed or unsupported test gets a one-line reason (--json: all of them as JSON).\n");
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Unsupported: what plugrt does not offer (no plugin, a type, an attribute
 * kind); everything else that goes wrong is a failure. */
static int kind_of(prt_status s)
{
    return s == PRT_STATUS_NOT_FOUND || s == PRT_STATUS_UNSUPPORTED || s == PRT_STATUS_VERSION_MISMATCH
               ? OT_UNSUPPORTED
               : OT_FAIL;
}

static int result(char *msg, size_t cap, int kind, const char *fmt, ...) PRT_PRINTF(4, 5);
static int result(char *msg, size_t cap, int kind, const char *fmt, ...)
{
    va_list ap;
    char *p;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    for (p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return kind;
}

/* Compare one output; 1 if it matches, else writes why. */
static int compare(const prt_onnx_tensor *want, prt_dtype got_t, const prt_dims *got_d, const void *got,
                   const char *name, char *msg, size_t cap)
{
    int64_t n, i;
    char a[96], b[96];
    if (want->dtype != got_t) {
        snprintf(msg, cap, "output \"%s\": type %s, expected %s", name, prt_dtype_name(got_t),
                 prt_dtype_name(want->dtype));
        return 0;
    }
    if (!prt_dims_equal(&want->dims, got_d)) {
        snprintf(msg, cap, "output \"%s\": dims %s, expected %s", name, prt_dims_str(got_d, a, sizeof a),
                 prt_dims_str(&want->dims, b, sizeof b));
        return 0;
    }
    n = prt_dims_volume(got_d);
    for (i = 0; i < n; i++) {
        double x = prt__cliutil_elem(got, got_t, i), y = prt__cliutil_elem(want->data, got_t, i);
        int ok;
        if (isnan(y)) ok = isnan(x);
        else if (isinf(y)) ok = x == y;
        else ok = fabs(x - y) <= OT_ATOL + OT_RTOL * fabs(y);
        if (!ok) {
            snprintf(msg, cap, "output \"%s\" element %lld: %.9g, expected %.9g (rtol 1e-3, atol 1e-7)", name,
                     (long long)i, x, y);
            return 0;
        }
    }
    return 1;
}

/* Load input_K.pb / output_K.pb of a data set folder. */
static int load_set(const char *dir, const char *stem, prt_onnx_tensor **t, int *nb, char *msg, size_t cap)
{
    char path[4096], err[1024];
    int k;
    *nb = 0;
    for (k = 0; k < OT_MAX_IO; k++) {
        prt_status s;
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, stem, k);
        if (!is_file(path)) break;
        if ((s = prt_onnx_tensor_load(path, &t[k], err, sizeof err)) != PRT_OK)
            return result(msg, cap, kind_of(s), "%s", err);
        (*nb)++;
    }
    return OT_PASS;
}

static int run_set(prt_registry *reg, prt_onnx_model *m, const char *set_dir, prt_device dev, char *msg, size_t cap)
{
    prt_onnx_tensor *in[OT_MAX_IO] = {0}, *want[OT_MAX_IO] = {0};
    void *out_buf[OT_MAX_IO] = {0}, *dev_buf[2 * OT_MAX_IO] = {0};
    prt_profile_range ranges[OT_MAX_IO], net_ranges[OT_MAX_IO];
    prt_onnx_input_value values[OT_MAX_IO];
    int nin = 0, nout = 0, nnet = 0, k, j, rc;
    prt_onnx_import_config ic;
    prt_builder_config bc;
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_context_config cc;
    prt_status s;
    char err[2048];

    if ((rc = load_set(set_dir, "input", in, &nin, msg, cap)) != OT_PASS) goto done;
    if ((rc = load_set(set_dir, "output", want, &nout, msg, cap)) != OT_PASS) goto done;
    if (nin != prt_onnx_model_nb_inputs(m) || nout != prt_onnx_model_nb_outputs(m)) {
        rc = result(msg, cap, OT_FAIL, "%s: %d inputs and %d outputs, the model has %d and %d", set_dir, nin, nout,
                    (int)prt_onnx_model_nb_inputs(m), (int)prt_onnx_model_nb_outputs(m));
        goto done;
    }
    for (k = 0; k < nin; k++) {
        prt_onnx_io io;
        if (prt_onnx_model_input(m, k, &io) != PRT_OK) {
            rc = result(msg, cap, OT_FAIL, "input %d cannot be read back", k);
            goto done;
        }
        ranges[k].input = io.name;
        ranges[k].min = ranges[k].opt = ranges[k].max = in[k]->dims;
        values[k].name = io.name;
        values[k].dtype = in[k]->dtype;
        values[k].dims = in[k]->dims;
        values[k].data = in[k]->data;
        values[k].nbytes = in[k]->nbytes;
    }
    /* inputs that nodes take as fields ("input:<k>": axes, sizes, pads, ...)
     * become constants holding this data set's values */
    prt_onnx_import_config_init(&ic);
    ic.nb_ranges = nin;
    ic.ranges = ranges;
    ic.nb_values = nin;
    ic.values = values;
    ic.bind = PRT_ONNX_BIND_FIELDS;
    err[0] = 0;
    if ((s = prt_onnx_import(m, reg, &ic, &net, err, sizeof err)) != PRT_OK) {
        rc = result(msg, cap, kind_of(s), "import: %s", err);
        goto done;
    }
    for (k = 0; k < nin; k++) /* the inputs that stayed inputs of the network */
        for (j = 0; j < prt_network_nb_inputs(net); j++)
            if (strcmp(prt_network_input_name(net, j), ranges[k].input) == 0) net_ranges[nnet++] = ranges[k];
    prt_builder_config_init(&bc);
    bc.device = dev;
    bc.nb_ranges = nnet;
    bc.ranges = net_ranges;
    if ((s = prt_engine_build(net, &bc, reg, &e, err, sizeof err)) != PRT_OK) {
        rc = result(msg, cap, s == PRT_STATUS_UNSUPPORTED ? OT_UNSUPPORTED : OT_FAIL, "build: %s", err);
        goto done;
    }
    prt_context_config_init(&cc);
    cc.device = dev;
    cc.nb_threads = 1;
    if (dev == PRT_DEVICE_CUDA && prt__clidev_count() == 0) {
        rc = result(msg, cap, OT_UNSUPPORTED, "--device cuda: no CUDA device found");
        goto done;
    }
    if (prt_context_create(e, &cc, &ctx) != PRT_OK) {
        rc = result(msg, cap, OT_FAIL, "context: %s", prt_engine_last_error(e));
        goto done;
    }
    for (k = 0; k < nin; k++) {
        void *p = in[k]->data ? in[k]->data : (void *)in;
        if (prt_engine_find_io(e, ranges[k].input) < 0) continue; /* bound at import */
        if (dev == PRT_DEVICE_CUDA) {
            if (prt__clidev_alloc(in[k]->nbytes + 16, &dev_buf[k], err, sizeof err) != PRT_OK ||
                prt__clidev_copy(dev_buf[k], p, in[k]->nbytes, 1, err, sizeof err) != PRT_OK) {
                rc = result(msg, cap, OT_FAIL, "input \"%s\": %s", ranges[k].input, err);
                goto done;
            }
            p = dev_buf[k];
        }
        if (prt_context_set_input_shape(ctx, ranges[k].input, &in[k]->dims) != PRT_OK ||
            prt_context_set_tensor(ctx, ranges[k].input, p) != PRT_OK) {
            rc = result(msg, cap, OT_FAIL, "input \"%s\": %s", ranges[k].input, prt_context_last_error(ctx));
            goto done;
        }
    }
    for (k = 0; k < nout; k++) {
        prt_onnx_io io;
        size_t bytes = 0;
        void *p;
        if (prt_onnx_model_output(m, k, &io) != PRT_OK || prt_context_buffer_size(ctx, io.name, &bytes) != PRT_OK ||
            !(out_buf[k] = calloc(1, bytes + 16))) {
            rc = result(msg, cap, OT_FAIL, "output %d: %s", k, prt_context_last_error(ctx));
            goto done;
        }
        p = out_buf[k];
        if (dev == PRT_DEVICE_CUDA) {
            if (prt__clidev_alloc(bytes + 16, &dev_buf[OT_MAX_IO + k], err, sizeof err) != PRT_OK) {
                rc = result(msg, cap, OT_FAIL, "output %d: %s", k, err);
                goto done;
            }
            p = dev_buf[OT_MAX_IO + k];
        }
        if (prt_context_set_tensor(ctx, io.name, p) != PRT_OK) {
            rc = result(msg, cap, OT_FAIL, "output %d: %s", k, prt_context_last_error(ctx));
            goto done;
        }
    }
    if (prt_context_execute(ctx) != PRT_OK) {
        rc = result(msg, cap, OT_FAIL, "run: %s", prt_context_last_error(ctx));
        goto done;
    }
    for (k = 0; k < nout; k++) {
        prt_onnx_io io;
        prt_io_desc d;
        prt_dims got;
        if (prt_onnx_model_output(m, k, &io) != PRT_OK || prt_context_get_shape(ctx, io.name, &got) != PRT_OK ||
            prt_engine_io(e, prt_engine_find_io(e, io.name), &d) != PRT_OK) {
            rc = result(msg, cap, OT_FAIL, "output %d: no shape after the run", k);
            goto done;
        }
        if (dev == PRT_DEVICE_CUDA &&
            prt__clidev_copy(out_buf[k], dev_buf[OT_MAX_IO + k], (size_t)prt_dims_volume(&got) * prt_dtype_size(d.dtype),
                             0, err, sizeof err) != PRT_OK) {
            rc = result(msg, cap, OT_FAIL, "output \"%s\": %s", io.name, err);
            goto done;
        }
        if (!compare(want[k], d.dtype, &got, out_buf[k], io.name, err, sizeof err)) {
            rc = result(msg, cap, OT_FAIL, "%s", err);
            goto done;
        }
    }
    rc = OT_PASS;
done:
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    for (k = 0; k < OT_MAX_IO; k++) {
        prt_onnx_tensor_destroy(in[k]);
        prt_onnx_tensor_destroy(want[k]);
        free(out_buf[k]);
        prt__clidev_free(dev_buf[k]);
        prt__clidev_free(dev_buf[OT_MAX_IO + k]);
    }
    return rc;
}

/* One test folder, in this process. */
static int run_test(prt_registry *reg, const char *dir, prt_device dev, char *msg, size_t cap)
{
    char path[4096], err[2048];
    prt_onnx_model *m = NULL;
    prt_status s;
    DIR *d;
    struct dirent *de;
    char *sets[256];
    int nsets = 0, k, rc = OT_PASS;

    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if ((s = prt_onnx_model_load(path, &m, err, sizeof err)) != PRT_OK) return result(msg, cap, kind_of(s), "%s", err);
    if (!(d = opendir(dir))) {
        prt_onnx_model_destroy(m);
        return result(msg, cap, OT_FAIL, "%s: %s", dir, strerror(errno));
    }
    while ((de = readdir(d)) && nsets < 256)
        if (strncmp(de->d_name, "test_data_set_", 14) == 0 && (sets[nsets] = strdup(de->d_name))) nsets++;
    closedir(d);
    qsort(sets, (size_t)nsets, sizeof *sets, cmp_str);
    if (!nsets) rc = result(msg, cap, OT_FAIL, "no test_data_set_N folder");
    for (k = 0; k < nsets && rc == OT_PASS; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, sets[k]);
        rc = run_set(reg, m, path, dev, msg, cap);
    }
    for (k = 0; k < nsets; k++) free(sets[k]);
    prt_onnx_model_destroy(m);
    return rc;
}

/* Run one test in a child; its verdict comes back through a pipe. */
static int run_isolated(prt_registry *reg, const char *dir, prt_device dev, char *msg, size_t cap)
{
    int fd[2], status = 0;
    pid_t pid;
    ssize_t n;
    size_t got = 0;
    char buf[2100];
    fflush(stdout);
    fflush(stderr);
    if (pipe(fd) != 0) return result(msg, cap, OT_FAIL, "pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return result(msg, cap, OT_FAIL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        char m2[2048];
        int rc;
        close(fd[0]);
        alarm(OT_TIMEOUT_S);
        m2[0] = 0;
        rc = run_test(reg, dir, dev, m2, sizeof m2);
        buf[0] = (char)rc;
        snprintf(buf + 1, sizeof buf - 1, "%s", m2);
        if (write(fd[1], buf, strlen(buf)) < 0) _exit(3);
        _exit(0);
    }
    close(fd[1]);
    while (got < sizeof buf - 1 && (n = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)n;
    buf[got] = 0;
    close(fd[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        return result(msg, cap, OT_FAIL, "crashed: signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
                      WTERMSIG(status) == SIGALRM ? ", ran past the time limit" : "");
    if (got < 1 || (buf[0] != OT_PASS && buf[0] != OT_FAIL && buf[0] != OT_UNSUPPORTED))
        return result(msg, cap, OT_FAIL, "the test process ended without a verdict (exit status %d)",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    snprintf(msg, cap, "%s", buf + 1);
    return buf[0];
}

/* The test folders under `dir`: itself if it holds model.onnx, else its
 * sub-folders that do, sorted. */
static int collect(const char *dir, char ***list, int *nb, int *cap)
{
    char path[4096];
    DIR *d;
    struct dirent *de;
    int start = *nb;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (is_file(path)) {
        if (*nb == *cap) {
            char **nl = realloc(*list, (size_t)(*cap ? *cap * 2 : 64) * sizeof *nl);
            if (!nl) return 0;
            *list = nl;
            *cap = *cap ? *cap * 2 : 64;
        }
        return ((*list)[(*nb)++] = strdup(dir)) != NULL;
    }
    if (!(d = opendir(dir))) return 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, de->d_name);
        if (!is_file(path)) continue;
        if (*nb == *cap) {
            char **nl = realloc(*list, (size_t)(*cap ? *cap * 2 : 64) * sizeof *nl);
            if (!nl) break;
            *list = nl;
            *cap = *cap ? *cap * 2 : 64;
        }
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (((*list)[*nb] = strdup(path))) (*nb)++;
    }
    closedir(d);
    qsort(*list + start, (size_t)(*nb - start), sizeof **list, cmp_str);
    return 1;
}

int prt_cli_onnx_test(int argc, char **argv)
{
    prt_registry *reg = NULL;
    prt_device dev = PRT_DEVICE_CPU;
    char **tests = NULL;
    int nb = 0, cap = 0, i, json = 0, verbose = 0, rc = 1, npass = 0, nfail = 0, nuns = 0, ndirs = 0;
    cJSON *root = NULL, *jp = NULL, *jf = NULL, *ju = NULL;
    char msg[2048];

    if (prt_registry_create(prt_registry_global(), &reg) != PRT_OK) {
        fprintf(stderr, "plugrt onnx-test: out of memory\n");
        return 1;
    }
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            onnx_test_usage(stdout);
            rc = 0;
            goto done;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(a, "--device") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            if (strcmp(d, "cpu") == 0) dev = PRT_DEVICE_CPU;
            else if (strcmp(d, "cuda") == 0) dev = PRT_DEVICE_CUDA;
            else {
                fprintf(stderr, "plugrt onnx-test: --device takes cpu or cuda, got \"%s\"\n", d);
                rc = 2;
                goto done;
            }
        } else if (strcmp(a, "--load") == 0 && i + 1 < argc) {
            prt_library *lib = NULL;
            if (prt_registry_load_library(reg, argv[++i], &lib) != PRT_OK) {
                fprintf(stderr, "plugrt onnx-test: %s\n", prt_registry_last_error(reg));
                goto done;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "plugrt onnx-test: unknown or incomplete option \"%s\"\n", a);
            onnx_test_usage(stderr);
            rc = 2;
            goto done;
        } else {
            ndirs++;
            if (!is_dir(a)) {
                fprintf(stderr, "plugrt onnx-test: \"%s\" is not a folder\n", a);
                rc = 2;
                goto done;
            }
            if (!collect(a, &tests, &nb, &cap)) {
                fprintf(stderr, "plugrt onnx-test: cannot list \"%s\": %s\n", a, strerror(errno));
                goto done;
            }
        }
    }
    if (!ndirs) {
        onnx_test_usage(stderr);
        rc = 2;
        goto done;
    }
    if (json) {
        root = cJSON_CreateObject();
        jp = cJSON_AddArrayToObject(root, "passed");
        jf = cJSON_AddArrayToObject(root, "failed");
        ju = cJSON_AddArrayToObject(root, "unsupported");
        if (!root || !jp || !jf || !ju) goto done;
    }
    for (i = 0; i < nb; i++) {
        const char *name = strrchr(tests[i], '/') ? strrchr(tests[i], '/') + 1 : tests[i];
        int r;
        msg[0] = 0;
        r = run_isolated(reg, tests[i], dev, msg, sizeof msg);
        if (r == OT_PASS) npass++;
        else if (r == OT_UNSUPPORTED) nuns++;
        else nfail++;
        if (json) {
            if (r == OT_PASS) {
                cJSON_AddItemToArray(jp, cJSON_CreateString(name));
            } else {
                cJSON *o = cJSON_CreateObject();
                if (o) {
                    cJSON_AddStringToObject(o, "test", name);
                    cJSON_AddStringToObject(o, "reason", msg);
                    cJSON_AddItemToArray(r == OT_UNSUPPORTED ? ju : jf, o);
                }
            }
        } else if (r != OT_PASS) {
            printf("%s %s: %s\n", r == OT_UNSUPPORTED ? "unsupported" : "FAILED", name, msg);
        } else if (verbose) {
            printf("passed %s\n", name);
        }
    }
    if (json) {
        char *txt;
        cJSON_AddNumberToObject(root, "nb_passed", npass);
        cJSON_AddNumberToObject(root, "nb_failed", nfail);
        cJSON_AddNumberToObject(root, "nb_unsupported", nuns);
        txt = cJSON_Print(root);
        if (txt) printf("%s\n", txt);
        free(txt);
    }
    fprintf(json ? stderr : stdout, "%d passed, %d failed, %d unsupported\n", npass, nfail, nuns);
    rc = nfail ? 1 : 0;
done:
    cJSON_Delete(root);
    for (i = 0; i < nb; i++) free(tests[i]);
    free(tests);
    prt_registry_destroy(reg);
    return rc;
}
