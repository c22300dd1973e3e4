/* core/threadpool: every index visited exactly once, chunks >= grain,
 * blocking, inline for one thread, reuse across many calls. */
#include <pthread.h>
#include <stdatomic.h>

#include "core/core.h"
#include "core/threadpool.h"
#include "prt_test.h"

typedef struct visit {
    atomic_int *hits;
    int64_t grain;
    int64_t n;
    atomic_int small_chunks;
    atomic_int chunks;
    pthread_t caller;
    atomic_int on_caller;
} visit;

static void visit_range(void *arg, int64_t b, int64_t e)
{
    visit *v = arg;
    int64_t i;
    atomic_fetch_add(&v->chunks, 1);
    if (e - b < v->grain && e != v->n) atomic_fetch_add(&v->small_chunks, 1);
    if (pthread_equal(pthread_self(), v->caller)) atomic_fetch_add(&v->on_caller, 1);
    for (i = b; i < e; i++) atomic_fetch_add(&v->hits[i], 1);
}

static void check_pool(int32_t threads, int64_t n, int64_t grain)
{
    char err[256];
    prt__threadpool *tp = NULL;
    visit v;
    int64_t i;
    int rep;
    CHECK_OK(prt__threadpool_create(threads, &tp, err, sizeof err));
    if (threads > 0) CHECK_EQ_INT(prt__threadpool_size(tp), threads);
    else CHECK_EQ_INT(prt__threadpool_size(tp), prt__threadpool_nb_cores());
    for (rep = 0; rep < 20; rep++) {
        memset(&v, 0, sizeof v);
        v.hits = calloc((size_t)(n ? n : 1), sizeof(atomic_int));
        v.grain = grain < 1 ? 1 : grain;
        v.n = n;
        v.caller = pthread_self();
        prt__threadpool_parallel_for(tp, n, grain, visit_range, &v);
        /* returned only when all is done: every index exactly once */
        for (i = 0; i < n; i++)
            CHECK_MSG(atomic_load(&v.hits[i]) == 1, "threads %d n %lld grain %lld: index %lld hit %d times",
                      (int)threads, (long long)n, (long long)grain, (long long)i, atomic_load(&v.hits[i]));
        CHECK_EQ_INT(atomic_load(&v.small_chunks), 0);
        if (threads == 1) CHECK_EQ_INT(atomic_load(&v.on_caller), atomic_load(&v.chunks));
        free(v.hits);
    }
    prt__threadpool_destroy(tp);
}

TEST(every_index_once)
{
    check_pool(1, 1000, 1);
    check_pool(2, 1000, 1);
    check_pool(4, 1000, 7);
    check_pool(8, 10007, 100);
    check_pool(3, 5, 100); /* fewer items than the grain: one chunk */
    check_pool(3, 0, 1);   /* nothing */
    check_pool(0, 4096, 0); /* all cores, grain <= 0 means 1 */
}

TEST(invalid_size_is_refused)
{
    char err[256];
    prt__threadpool *tp = (prt__threadpool *)err;
    CHECK(prt__threadpool_create(-1, &tp, err, sizeof err) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK(tp == (prt__threadpool *)err);
    CHECK_STR_CONTAINS(err, "got -1");
    /* Too many: refused before any thread starts. */
    CHECK(prt__threadpool_create(100000, &tp, err, sizeof err) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK(tp == (prt__threadpool *)err);
    CHECK_STR_CONTAINS(err, "must be 0 (the number of cores) to 1024, got 100000");
    prt__threadpool_destroy(NULL);
    prt__threadpool_parallel_for(NULL, 3, 1, NULL, NULL); /* no fn: nothing */
}

TEST(out_of_memory_is_clean)
{
    char err[256];
    prt__threadpool *tp = NULL;
    prt__alloc_fail_after(0);
    CHECK(prt__threadpool_create(4, &tp, err, sizeof err) == PRT_STATUS_OUT_OF_MEMORY);
    prt__alloc_fail_after(1);
    CHECK(prt__threadpool_create(4, &tp, err, sizeof err) == PRT_STATUS_OUT_OF_MEMORY);
    prt__alloc_fail_after(-1);
    CHECK(tp == NULL);
}
