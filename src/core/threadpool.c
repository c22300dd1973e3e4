/* core/threadpool.c - fixed pthread pool with a blocking parallel_for.
 *
 * Between jobs a worker spins for a short while (SPIN_NS) watching for the
 * next generation before it sleeps on the condition variable, and the
 * caller spins the same way for the job to finish: a network runs many
 * small parallel_for calls back to back, and a sleep and wake-up per call
 * costs more than the work of a small layer.
 *
 * A job's chunks are claimed from one 64-bit ticket: the job's generation
 * (high 32 bits), its chunk count (16) and the next chunk (16). A claim is a
 * compare-and-swap that succeeds only while the ticket still names the
 * claimer's generation and has chunks left, so a worker that wakes late
 * never runs a chunk of another job, and the caller waits for the job's
 * chunks to be completed, not for every worker to have seen the job (a
 * sleeping worker no longer holds up a job the others have finished). The
 * job fields are written before the ticket is published (release) and read
 * after a successful claim (acquire); the caller rewrites them only once
 * every chunk of the job is completed. The lock and the condition variables
 * are touched only where a thread sleeps or must be woken (counted in
 * sleepers and caller_asleep), so back-to-back jobs take no lock. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "core/threadpool.h"

struct prt__threadpool {
    int32_t size; /* threads including the caller */
    int32_t nb_workers;
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake;  /* workers wait for a new generation */
    pthread_cond_t idle;  /* the caller waits for the workers to finish */
    uint64_t generation;
    int stop;
    /* the words the threads spin on or update per job, a cache line apart (64 bytes of padding
     * between them: calloc gives no 64-byte alignment to rely on) */
    char pad0[64];
    atomic_ullong published;  /* the generation, for spinning workers */
    atomic_int stopping;
    char pad1[64];
    atomic_ullong ticket;     /* generation << 32 | nb_chunks << 16 | next chunk */
    char pad2[64];
    atomic_llong completed;   /* chunks of the current job finished, added once per thread and job */
    char pad3[64];
    atomic_int sleepers;      /* workers asleep (or about to be) on `wake` */
    atomic_int caller_asleep; /* the caller asleep (or about to be) on `idle` */
    /* the current job */
    prt_range_fn fn;
    void *arg;
    int64_t n;
    int64_t chunk;
    int64_t nb_chunks;
};

int32_t prt__threadpool_nb_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 1024) n = 1024;
    return (int32_t)n;
}

#define SPIN_NS 60000 /* how long a worker or the caller spins before it sleeps */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* The job published after `seen` (or a stop) is visible: *gen its generation. */
static int next_job(prt__threadpool *tp, uint64_t seen, uint64_t *gen)
{
    *gen = atomic_load_explicit(&tp->published, memory_order_acquire);
    return *gen != seen || atomic_load_explicit(&tp->stopping, memory_order_relaxed);
}

/* Every chunk of the current job (nb_chunks of them) is completed. */
static int job_done(prt__threadpool *tp, uint64_t nb_chunks, uint64_t *unused_out)
{
    (void)unused_out;
    return atomic_load_explicit(&tp->completed, memory_order_acquire) == (long long)nb_chunks;
}

/* Spin until done(tp, arg, out) holds (1) or SPIN_NS pass (0). */
static int spin_until(prt__threadpool *tp, int (*done)(prt__threadpool *, uint64_t, uint64_t *), uint64_t arg,
                      uint64_t *out)
{
    int64_t t0 = 0;
    int i;
    for (i = 0;; i++) {
        if (done(tp, arg, out)) return 1;
        if ((i & 63) == 63) {
            int64_t t = mono_ns();
            if (!t0) t0 = t;
            else if (t - t0 > SPIN_NS) return 0;
        }
        cpu_relax();
    }
}

/* Claim and run chunks of generation gen while it has any left; then add
 * how many this thread ran to completed (one update per thread and job). */
static void run_chunks(prt__threadpool *tp, uint64_t gen)
{
    int64_t done = 0, nb = 0;
    for (;;) {
        uint64_t v = atomic_load_explicit(&tp->ticket, memory_order_acquire);
        int64_t c, b, e;
        if ((v >> 32) != (gen & 0xFFFFFFFFu) || (v & 0xFFFFu) >= ((v >> 16) & 0xFFFFu)) break;
        if (!atomic_compare_exchange_weak_explicit(&tp->ticket, &v, v + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        c = (int64_t)(v & 0xFFFFu); /* ours: the job's fields stay until it is completed */
        nb = (int64_t)((v >> 16) & 0xFFFFu);
        b = c * tp->chunk;
        e = tp->n - b < tp->chunk ? tp->n : b + tp->chunk;
        tp->fn(tp->arg, b, e);
        done++;
    }
    /* The update that completes the job wakes the caller if it went to sleep: the caller sets
     * caller_asleep and then reads completed, this adds to completed and then reads caller_asleep (both
     * sequentially consistent), so one of the two sees the other; the lock makes the signal wait for the
     * caller's wait. */
    if (done > 0 && atomic_fetch_add(&tp->completed, done) + done == nb && atomic_load(&tp->caller_asleep)) {
        pthread_mutex_lock(&tp->lock);
        pthread_cond_signal(&tp->idle);
        pthread_mutex_unlock(&tp->lock);
    }
}

static void *worker_main(void *p)
{
    prt__threadpool *tp = p;
    uint64_t seen = 0, gen = 0;
    for (;;) {
        if (!spin_until(tp, next_job, seen, &gen)) {
            /* as for the caller below: sleepers first, then the generation; the publisher stores the
             * generation, then reads sleepers */
            pthread_mutex_lock(&tp->lock);
            atomic_fetch_add(&tp->sleepers, 1);
            while (!tp->stop && atomic_load(&tp->published) == seen) pthread_cond_wait(&tp->wake, &tp->lock);
            atomic_fetch_sub(&tp->sleepers, 1);
            gen = atomic_load(&tp->published);
            pthread_mutex_unlock(&tp->lock);
        }
        if (atomic_load_explicit(&tp->stopping, memory_order_acquire)) break;
        seen = gen;
        run_chunks(tp, gen);
    }
    return NULL;
}

static void stop_workers(prt__threadpool *tp, int32_t started)
{
    int32_t i;
    pthread_mutex_lock(&tp->lock);
    tp->stop = 1;
    atomic_store_explicit(&tp->stopping, 1, memory_order_release);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->lock);
    for (i = 0; i < started; i++) pthread_join(tp->workers[i], NULL);
}

prt_status prt__threadpool_create(int32_t nb_threads, prt__threadpool **out, char *err, size_t cap)
{
    prt__threadpool *tp;
    int32_t i;
    int rc;
    if (nb_threads < 0 || nb_threads > PRT__THREADPOOL_MAX) {
        snprintf(err, cap, "thread pool size must be 0 (the number of cores) to %d, got %d", PRT__THREADPOOL_MAX,
                 (int)nb_threads);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (nb_threads == 0) nb_threads = prt__threadpool_nb_cores();
    tp = prt__calloc(1, sizeof(*tp));
    if (!tp) goto oom;
    tp->size = nb_threads;
    tp->nb_workers = nb_threads - 1;
    atomic_init(&tp->ticket, 0);
    atomic_init(&tp->completed, 0);
    atomic_init(&tp->sleepers, 0);
    atomic_init(&tp->caller_asleep, 0);
    atomic_init(&tp->published, 0);
    atomic_init(&tp->stopping, 0);
    if (tp->nb_workers > 0) {
        tp->workers = prt__calloc((size_t)tp->nb_workers, sizeof(pthread_t));
        if (!tp->workers) {
            prt__free(tp);
            goto oom;
        }
    }
    pthread_mutex_init(&tp->lock, NULL);
    pthread_cond_init(&tp->wake, NULL);
    pthread_cond_init(&tp->idle, NULL);
    for (i = 0; i < tp->nb_workers; i++) {
        rc = pthread_create(&tp->workers[i], NULL, worker_main, tp);
        if (rc != 0) {
            stop_workers(tp, i);
            snprintf(err, cap, "cannot start thread %d of %d: %s", (int)i + 1, (int)tp->nb_workers,
                     strerror(rc));
            pthread_mutex_destroy(&tp->lock);
            pthread_cond_destroy(&tp->wake);
            pthread_cond_destroy(&tp->idle);
            prt__free(tp->workers);
            prt__free(tp);
            return PRT_STATUS_OUT_OF_MEMORY;
        }
    }
    *out = tp;
    return PRT_OK;
oom:
    snprintf(err, cap, "out of memory creating a thread pool of %d threads", (int)nb_threads);
    return PRT_STATUS_OUT_OF_MEMORY;
}

void prt__threadpool_destroy(prt__threadpool *tp)
{
    if (!tp) return;
    stop_workers(tp, tp->nb_workers);
    pthread_mutex_destroy(&tp->lock);
    pthread_cond_destroy(&tp->wake);
    pthread_cond_destroy(&tp->idle);
    prt__free(tp->workers);
    prt__free(tp);
}

int32_t prt__threadpool_size(const prt__threadpool *tp)
{
    return tp ? tp->size : 1;
}

void prt__threadpool_parallel_for(prt__threadpool *tp, int64_t n, int64_t grain, prt_range_fn fn,
                                  void *arg)
{
    int64_t chunk, target;
    int32_t threads;
    if (n <= 0 || !fn) return;
    if (grain < 1) grain = 1;
    threads = tp ? tp->size : 1;
    if (threads <= 1 || n <= grain) {
        fn(arg, 0, n);
        return;
    }
    /* About four chunks per thread for balance, never below the grain. */
    target = n / ((int64_t)threads * 4);
    chunk = target > grain ? target : grain;
    tp->fn = fn;
    tp->arg = arg;
    tp->n = n;
    tp->chunk = chunk;
    tp->nb_chunks = n / chunk + (n % chunk != 0); /* < 8 * threads: fits the ticket's 16 bits */
    atomic_store_explicit(&tp->completed, 0, memory_order_relaxed);
    tp->generation++;
    atomic_store_explicit(&tp->ticket,
                          (tp->generation & 0xFFFFFFFFu) << 32 | (uint64_t)tp->nb_chunks << 16,
                          memory_order_release);
    atomic_store(&tp->published, tp->generation);
    if (atomic_load(&tp->sleepers) > 0) { /* spinning workers see `published`; sleeping ones need waking */
        pthread_mutex_lock(&tp->lock);
        pthread_cond_broadcast(&tp->wake);
        pthread_mutex_unlock(&tp->lock);
    }
    run_chunks(tp, tp->generation);
    if (!spin_until(tp, job_done, (uint64_t)tp->nb_chunks, NULL)) {
        pthread_mutex_lock(&tp->lock);
        atomic_store(&tp->caller_asleep, 1);
        while (atomic_load(&tp->completed) < tp->nb_chunks) pthread_cond_wait(&tp->idle, &tp->lock);
        atomic_store(&tp->caller_asleep, 0);
        pthread_mutex_unlock(&tp->lock);
    }
}
