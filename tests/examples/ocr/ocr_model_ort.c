/* A stand-in for examples/ocr/ocr_model.c that runs each model with
 * onnxruntime in a Python subprocess (through .npy files), so that the C
 * stages of the OCR program are checked end to end before the op plugins the
 * models need are registered (ctest ocr_example_page_ort). Test-only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocr_model.h"

static int npy_write(const char *path, const float *x, const int64_t d[4])
{
    char hdr[128];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %lld, %lld, %lld), }",
                     (long long)d[0], (long long)d[1], (long long)d[2], (long long)d[3]);
    int total = 10 + n + 1, pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    unsigned short hl = (unsigned short)(n + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fwrite(&hl, 2, 1, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    size_t cnt = (size_t)(d[0] * d[1] * d[2] * d[3]);
    int ok = fwrite(x, sizeof(float), cnt, f) == cnt;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Reads the raw float32 output and its shape, written as y.bin and y.shape. */
int ocr_model_run(const char *path, const float *x, const int64_t x_dims[4], float **y, int64_t y_dims[8],
                  int *y_nb, char *err, size_t cap)
{
    char dir[] = "/tmp/ocr_ort_XXXXXX", cmd[4096], xp[64], yp[64], sp[64];
    if (!mkdtemp(dir)) {
        snprintf(err, cap, "mkdtemp failed");
        return -1;
    }
    snprintf(xp, sizeof xp, "%s/x.npy", dir);
    snprintf(yp, sizeof yp, "%s/y.bin", dir);
    snprintf(sp, sizeof sp, "%s/y.shape", dir);
    int ret = -1;
    if (npy_write(xp, x, x_dims)) {
        snprintf(err, cap, "cannot write %s", xp);
        goto done;
    }
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import sys, numpy as np, onnxruntime as ort; "
             "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider']); "
             "y = s.run(None, {s.get_inputs()[0].name: np.load(sys.argv[2])})[0].astype(np.float32); "
             "y.tofile(sys.argv[3]); open(sys.argv[4], 'w').write(' '.join(map(str, y.shape)))\" '%s' '%s' '%s' '%s'",
             path, xp, yp, sp);
    if (system(cmd) != 0) {
        snprintf(err, cap, "onnxruntime failed on %s", path);
        goto done;
    }
    FILE *f = fopen(sp, "r");
    int nb = 0;
    long long v;
    size_t cnt = 1;
    while (f && nb < 8 && fscanf(f, "%lld", &v) == 1)
        y_dims[nb++] = v, cnt *= (size_t)v;
    if (f)
        fclose(f);
    float *out = malloc(cnt * sizeof(float));
    f = fopen(yp, "rb");
    if (!out || !f || fread(out, sizeof(float), cnt, f) != cnt) {
        snprintf(err, cap, "cannot read the output of %s", path);
        free(out);
        if (f)
            fclose(f);
        goto done;
    }
    fclose(f);
    *y = out;
    *y_nb = nb;
    ret = 0;
done:
    remove(xp), remove(yp), remove(sp), rmdir(dir);
    return ret;
}
