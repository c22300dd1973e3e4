/* Stages of the OCR example (examples/ocr/) that do not need a model: the
 * size rules of the detection, classification and recognition inputs, box
 * ordering and filtering after detection, the classifier's rotation rule and
 * greedy CTC decoding. Each follows the pre- and post-processing of
 * rapidocr-onnxruntime 1.4.4 (see README.md in this folder); each is tested
 * against values computed by that package's own Python functions
 * (tests/examples/ocr/).
 *
 * Plain C11, no plugrt dependency. Functions returning int return 0 on
 * success and -1 on bad input or out of memory, leaving outputs untouched. */
#ifndef OCR_STAGES_H
#define OCR_STAGES_H
#include <stddef.h>
#include <stdint.h>

/* Detection input size: the image's smaller side is scaled up to limit_side
 * (when smaller), then each side is rounded to a multiple of 32 (half to
 * even, as Python's round). Returns -1 when a side would be 0. */
int ocr_det_size(int h, int w, int limit_side, int *out_h, int *out_w);

/* Width a crop of h x w is resized to before padding to max_w at height
 * dst_h: min(ceil(dst_h * w / h), max_w). */
int ocr_resized_width(int h, int w, int dst_h, int max_w);

/* Recognition batch width: int(dst_h * max(320/48, max of w/h)). */
int ocr_rec_batch_width(const int *hw, int n, int dst_h, int base_w);

/* Order of crops by aspect ratio w/h (stable), the order in which batches are
 * formed. hw holds n (h, w) pairs. */
int ocr_aspect_order(const int *hw, int n, int *order);

/* One quadrilateral: 4 points (x, y), top-left, top-right, bottom-right,
 * bottom-left once ordered. */
typedef struct ocr_quad {
    float p[4][2];
} ocr_quad;

/* Points ordered clockwise from the top-left (left pair by x, then each pair
 * by y), clipped to the image and truncated to integers. */
void ocr_quad_order_clip(ocr_quad *q, int img_h, int img_w);
/* Keeps the quads whose int(|p0-p1|) and int(|p0-p3|) are both > 3, in
 * place; returns how many are kept. Orders and clips each first. */
int ocr_quads_filter(ocr_quad *q, int n, int img_h, int img_w);
/* Reading order: by (y, x) of the first point, then a neighbour whose y is
 * within 10 pixels and whose x is smaller moves before. */
int ocr_quads_sort(ocr_quad *q, int n);

/* The classifier's rule: rotate by 180 degrees when the "180" label wins with
 * a score above thresh. prob holds [p0, p180]. */
int ocr_cls_rotate(const float prob[2], float thresh);

/* Recognition dictionary: symbol 0 is the CTC blank, then one per line of the
 * file, then a space. */
typedef struct ocr_dict {
    char **sym;
    int n;
} ocr_dict;
int ocr_dict_load(const char *path, ocr_dict *out);
void ocr_dict_free(ocr_dict *d);

/* Greedy CTC decoding of one sequence of t steps over c classes (softmax
 * output, row-major [t, c]): argmax per step (first on ties), repeats merged,
 * blanks dropped; *score is the mean probability of the kept steps (0 when
 * none). text receives a NUL-terminated UTF-8 string of at most cap bytes. */
int ocr_ctc_decode(const float *prob, int t, int c, const ocr_dict *d, char *text, size_t cap,
                   double *score);

#endif
