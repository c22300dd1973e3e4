/* tests/compat/static_app.c - a program as docs/porting-from-tensorrt.md
 * describes it: TensorRT-style plugin sources compiled in, linked with
 * plugrt_trt and the shared libplugrt. REGISTER_TENSORRT_PLUGIN must have put
 * SwishPlugin into the global registry before main; a v2 network then runs.
 * Exit status 0 on success. */
#include <math.h>
#include <stdio.h>

#include "compat_util.h"

int main(void)
{
    const char *json =
        "{\"name\": \"app\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 2]}],"
        " \"layers\": [{\"name\": \"act\", \"plugin\": \"SwishPlugin\", \"version\": \"2\","
        " \"fields\": {\"beta\": 1.0, \"weights\": [2.0, -1.0]}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}";
    static const int64_t shape[2] = {1, 2};
    float x[2] = {0.5f, -1.5f}, y[2] = {0, 0};
    const double w[2] = {2.0, -1.0};
    char err[1024] = "";
    compat_io in = {"x", compat_dims(2, shape), x, sizeof x};
    compat_io out = {"y", {0}, y, sizeof y};
    int i;
    if (compat_run(NULL, json, PRT_DEVICE_CPU, &in, 1, &out, 1, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "static_app: %s\n", err);
        return 1;
    }
    for (i = 0; i < 2; i++) {
        double r = w[i] * x[i] / (1.0 + exp(-(double)x[i]));
        if (fabs(y[i] - r) > 1e-6) {
            fprintf(stderr, "static_app: y[%d] = %.9g, expected %.9g\n", i, y[i], r);
            return 1;
        }
    }
    printf("static_app: SwishPlugin v2 ran through libplugrt\n");
    return 0;
}
