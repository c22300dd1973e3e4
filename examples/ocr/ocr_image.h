/* Image stages of the OCR example: 8-bit interleaved images, resized the way
 * OpenCV's cv2.resize(INTER_LINEAR) resizes 8-bit images (which rapidocr
 * uses), and normalized into the planar float input of a model.
 * Plain C11, no plugrt dependency; 0 on success, -1 on bad input or out of
 * memory (outputs untouched). */
#ifndef OCR_IMAGE_H
#define OCR_IMAGE_H
#include <stdint.h>

typedef struct ocr_image {
    int h, w, c;    /* rows, columns, channels (interleaved) */
    uint8_t *data;  /* h * w * c bytes, owned */
} ocr_image;

int ocr_image_alloc(ocr_image *im, int h, int w, int c);
void ocr_image_free(ocr_image *im);

/* Bilinear resize with pixel centres at +0.5, 11-bit fixed-point weights and
 * OpenCV's rounding of the two passes; edges replicate. Known difference:
 * OpenCV 5.0's cv2.resize differs by 1 in about 1% of the values when
 * enlarging (not found yet where; tested: it is not its IPP path). */
int ocr_image_resize(const ocr_image *src, int dst_h, int dst_w, ocr_image *dst);

/* dst[ch][y][x] = (src/255 - 0.5) / 0.5 for x < src->w, 0 for
 * src->w <= x < dst_w (the zero padding of the classifier and recognizer);
 * dst holds src->c * src->h * dst_w floats. */
int ocr_image_normalize(const ocr_image *src, int dst_w, float *dst);

/* rapidocr's crop of one text box: the quad (top-left, top-right,
 * bottom-right, bottom-left) mapped by a perspective transform onto an
 * upright int(max of the two horizontal sides) x int(max of the two vertical
 * sides) image, sampled bicubically (a = -0.75, OpenCV's 1/32-pixel
 * positions and 15-bit fixed-point weights), edges replicated; turned 90
 * degrees counter-clockwise when its height is >= 1.5 times its width.
 * Known difference: values differ from OpenCV 5.0's warpPerspective by 1 in
 * about 13% of the places (never more; not found yet where). */
int ocr_image_crop(const ocr_image *src, const float quad[4][2], ocr_image *dst);

/* The image turned by 180 degrees (the classifier's correction), in place. */
void ocr_image_rotate180(ocr_image *im);

#endif
