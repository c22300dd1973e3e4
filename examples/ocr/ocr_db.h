/* DB (differentiable binarization) post-processing pieces of the OCR example,
 * following rapidocr-onnxruntime 1.4.4. Plain C11; 0 on success, -1 on bad
 * input or out of memory (outputs untouched). */
#ifndef OCR_DB_H
#define OCR_DB_H
#include <stdint.h>

#include "ocr_stages.h"

/* mask[y][x] = 1 where any of prob[y][x], prob[y-1][x], prob[y][x-1],
 * prob[y-1][x-1] (those inside the map) is > thresh: the threshold followed by
 * the 2x2 dilation rapidocr applies (OpenCV's anchor at the kernel's centre,
 * (1, 1) for a 2x2 kernel). */
int ocr_db_mask(const float *prob, int h, int w, float thresh, uint8_t *mask);

/* The minimum-area rectangle around n points (x, y) (convex hull, then the
 * best rectangle with a side on a hull edge), its corners ordered as rapidocr's
 * get_mini_boxes orders them (left pair by y, then right pair by y:
 * top-left, top-right, bottom-right, bottom-left) and its shorter side. */
int ocr_min_area_box(const float *pts, int n, ocr_quad *box, float *short_side);

/* The minimum-area box (and shorter side) of every contour cv2.findContours
 * (RETR_LIST) finds in a 0/1 mask: one per 8-connected region of ones (its
 * pixels with a zero or the map's edge among their 4 neighbours) and one per
 * hole, a 4-connected region of zeros not touching the edge (the ones next to
 * it). A box depends only on its contour's convex hull, so the contour itself
 * is not traced. At most cap boxes are written; *n receives how many there
 * are. Known difference: the order is by region (scan order of each region's
 * first pixel, holes after), not OpenCV's. */
int ocr_db_regions(const uint8_t *mask, int h, int w, ocr_quad *boxes, float *sides, int cap, int *n);

/* rapidocr's box_score_fast: the mean of prob (h x w) over the pixels of the
 * quad (corners truncated to integers; the outline's 8-connected line pixels
 * and everything between them on each row), within the quad's bounding box
 * clipped to the map. Known difference: OpenCV's Bresenham lines break ties
 * by direction, so a few outline pixels may differ from cv2.fillPoly's. */
int ocr_db_box_score(const float *prob, int h, int w, const ocr_quad *quad, double *score);

/* From map coordinates (map_w x map_h) to the image's (img_w x img_h):
 * x * img_w / map_w rounded half to even and clipped to [0, img_w], y
 * likewise; the result is integral, as rapidocr keeps boxes as int32. */
void ocr_db_box_to_image(ocr_quad *q, int map_h, int map_w, int img_h, int img_w);

/* rapidocr's unclip followed by get_mini_boxes: the quad's corners truncated
 * to integers, offset outwards by area * ratio / perimeter (of the float
 * quad) with round joins (arc tolerance 0.25, vertices rounded half away from
 * zero, as the Clipper library's offset does), then the minimum-area box of
 * the offset outline and its shorter side. */
int ocr_db_unclip(const ocr_quad *quad, double ratio, ocr_quad *box, float *short_side);

#endif
