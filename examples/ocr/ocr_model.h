/* One ONNX model of the OCR example run through libplugrt's public API. */
#ifndef OCR_MODEL_H
#define OCR_MODEL_H
#include <stddef.h>
#include <stdint.h>

/* Runs the single-input, single-output model at `path` on x ([n, 3, h, w],
 * float32) and returns its output in a new malloc'ed buffer (*y, freed by the
 * caller) with its extents in y_dims[0..*y_nb). The model is imported and
 * built for exactly this input shape (a static profile, so shape
 * computations fold). On failure returns -1 with a message in err. */
int ocr_model_run(const char *path, const float *x, const int64_t x_dims[4], float **y, int64_t y_dims[8],
                  int *y_nb, char *err, size_t cap);

#endif
