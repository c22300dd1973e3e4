/*
 * core/threadpool.h - a fixed pool of worker threads with a blocking
 * parallel_for (what prt_exec.parallel_for runs on).
 *
 * A pool of size N runs a parallel_for on the calling thread plus N - 1
 * workers. One caller thread at a time per pool; parallel_for returns when
 * every chunk is done. A pool of size 1 runs everything inline.
 */
#ifndef PLUGRT_CORE_THREADPOOL_H
#define PLUGRT_CORE_THREADPOOL_H

#include "plugrt/plugin.h"

typedef struct prt__threadpool prt__threadpool;

/* The most threads a pool may have: a bound on what a caller (or a command
 * line) can make the library start, checked before any thread starts. */
#define PRT__THREADPOOL_MAX 1024
/* nb_threads 0 = the number of online cores; negative or more than
 * PRT__THREADPOOL_MAX is invalid. On failure *out is untouched and err says
 * why. */
prt_status prt__threadpool_create(int32_t nb_threads, prt__threadpool **out, char *err, size_t cap);
/* Joins the workers. NULL ok. */
void prt__threadpool_destroy(prt__threadpool *tp);
int32_t prt__threadpool_size(const prt__threadpool *tp);
/* Run fn over [0, n) in chunks of at least `grain` (<= 0 means 1) items and
 * wait for all of them. n <= 0 does nothing. */
void prt__threadpool_parallel_for(prt__threadpool *tp, int64_t n, int64_t grain, prt_range_fn fn,
                                  void *arg);
/* Number of online cores (at least 1). */
int32_t prt__threadpool_nb_cores(void);

#endif
