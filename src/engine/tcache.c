/* engine/tcache.c - the timing cache (format: engine/tcache.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/plan.h"
#include "engine/tcache.h"

#define MAX_ENTRIES 1000000
#define MAX_INPUTS 1024

struct prt_timing_cache {
    pthread_mutex_t lock;
    prt__tentry **e; /* sorted by key bytes */
    int32_t nb, cap;
};

/* ---- keys ------------------------------------------------------------------ */

static int key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    int r = memcmp(a, b, na < nb ? na : nb);
    if (r) return r;
    return na < nb ? -1 : na > nb ? 1 : 0;
}

/* Index of key in c, or -(insertion point) - 1. */
static int32_t find(const prt_timing_cache *c, const uint8_t *key, size_t len)
{
    int32_t lo = 0, hi = c->nb;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int r = key_cmp(c->e[mid]->key, c->e[mid]->len, key, len);
        if (r == 0) return mid;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return -lo - 1;
}

static void write_key(prt_writer *w, const char *name, const char *version, const char *ns, uint64_t body_hash,
                      const char *device, const prt_tensor_desc *in, int32_t nb_in)
{
    int32_t i, j;
    prt_write_str(w, name ? name : "");
    prt_write_str(w, version ? version : "");
    prt_write_str(w, ns ? ns : "");
    prt_write_u64(w, body_hash);
    prt_write_str(w, device ? device : "");
    prt_write_u32(w, (uint32_t)nb_in);
    for (i = 0; i < nb_in; i++) {
        int absent = in[i].dims.nb < 0;
        prt_write_u32(w, absent ? 0xffffffffu : (uint32_t)in[i].dtype);
        prt_write_u32(w, absent ? 0u : (uint32_t)in[i].format);
        prt_write_i32(w, absent ? -1 : in[i].dims.nb);
        for (j = 0; !absent && j < in[i].dims.nb && j < PRT_MAX_DIMS; j++) prt_write_i64(w, in[i].dims.d[j]);
    }
}

prt_status prt__tcache_key(const char *name, const char *version, const char *ns, uint64_t body_hash,
                           const char *device, const prt_tensor_desc *in, int32_t nb_in, uint8_t **key, size_t *len)
{
    prt_writer w = prt_writer_init(NULL, 0);
    uint8_t *buf;
    size_t n;
    if (nb_in < 0 || nb_in > MAX_INPUTS || (nb_in && !in)) return PRT_STATUS_INVALID_ARGUMENT;
    write_key(&w, name, version, ns, body_hash, device, in, nb_in);
    if (w.failed) return PRT_STATUS_INVALID_ARGUMENT;
    n = w.len;
    buf = prt__malloc(n ? n : 1);
    if (!buf) return PRT_STATUS_OUT_OF_MEMORY;
    w = prt_writer_init(buf, n);
    write_key(&w, name, version, ns, body_hash, device, in, nb_in);
    *key = buf;
    *len = n;
    return PRT_OK;
}

/* ---- entries ------------------------------------------------------------------ */

prt__tentry *prt__tentry_new(const uint8_t *key, size_t len, const int32_t *ids, const uint64_t *ns, int32_t nb)
{
    prt__tentry *e;
    if (nb < 1 || nb > PRT__TCACHE_MAX_TACTICS) return NULL;
    e = prt__calloc(1, sizeof *e);
    if (!e) return NULL;
    e->key = prt__malloc(len ? len : 1);
    if (!e->key) {
        prt__free(e);
        return NULL;
    }
    if (len) memcpy(e->key, key, len);
    e->len = len;
    e->nb = nb;
    memcpy(e->ids, ids, (size_t)nb * sizeof *ids);
    memcpy(e->ns, ns, (size_t)nb * sizeof *ns);
    return e;
}

void prt__tentry_free(prt__tentry *e)
{
    if (!e) return;
    prt__free(e->key);
    prt__free(e);
}

int prt__tcache_lookup(prt_timing_cache *c, const uint8_t *key, size_t len, const int32_t *ids, int32_t nb,
                       uint64_t *ns)
{
    uint64_t got[PRT__TCACHE_MAX_TACTICS];
    int32_t at, i, j;
    int ok = 0;
    if (!c || nb < 1 || nb > PRT__TCACHE_MAX_TACTICS) return 0;
    pthread_mutex_lock(&c->lock);
    at = find(c, key, len);
    if (at >= 0) {
        const prt__tentry *e = c->e[at];
        ok = 1;
        for (i = 0; i < nb && ok; i++) {
            for (j = 0; j < e->nb && e->ids[j] != ids[i]; j++) {}
            if (j == e->nb) ok = 0;
            else got[i] = e->ns[j];
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (ok) memcpy(ns, got, (size_t)nb * sizeof *ns);
    return ok;
}

prt_status prt__tcache_commit(prt_timing_cache *c, prt__tentry **entries, int32_t n, int32_t *nb_new)
{
    int32_t i, added = 0;
    if (!c || n < 0 || (n && !entries)) return PRT_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    if (c->nb + n > c->cap) {
        int32_t ncap = c->cap ? c->cap : 16;
        prt__tentry **q;
        while (ncap < c->nb + n) ncap *= 2;
        q = prt__realloc(c->e, (size_t)ncap * sizeof *q);
        if (!q) {
            pthread_mutex_unlock(&c->lock);
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        c->e = q;
        c->cap = ncap;
    }
    for (i = 0; i < n; i++) { /* room is reserved: nothing below fails */
        int32_t at = find(c, entries[i]->key, entries[i]->len);
        if (at >= 0) {
            prt__tentry_free(c->e[at]);
            c->e[at] = entries[i];
            continue;
        }
        at = -at - 1;
        memmove(&c->e[at + 1], &c->e[at], (size_t)(c->nb - at) * sizeof *c->e);
        c->e[at] = entries[i];
        c->nb++;
        added++;
    }
    pthread_mutex_unlock(&c->lock);
    if (nb_new) *nb_new = added;
    return PRT_OK;
}

/* ---- the public object -------------------------------------------------------- */

prt_status prt_timing_cache_create(prt_timing_cache **out)
{
    prt_timing_cache *c;
    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    c = prt__calloc(1, sizeof *c);
    if (!c) return PRT_STATUS_OUT_OF_MEMORY;
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return PRT_OK;
}

void prt_timing_cache_destroy(prt_timing_cache *c)
{
    int32_t i;
    if (!c) return;
    for (i = 0; i < c->nb; i++) prt__tentry_free(c->e[i]);
    prt__free(c->e);
    pthread_mutex_destroy(&c->lock);
    prt__free(c);
}

int32_t prt_timing_cache_nb_entries(prt_timing_cache *c)
{
    int32_t n;
    if (!c) return 0;
    pthread_mutex_lock(&c->lock);
    n = c->nb;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* ---- writer ---------------------------------------------------------------------- */

static void put_u64(uint8_t *b, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}

static void write_all(const prt_timing_cache *c, prt_writer *w)
{
    static const uint8_t zeros[8] = {0};
    int32_t i, j;
    prt_write_bytes(w, PRT__TCACHE_MAGIC, 8);
    prt_write_u32(w, PRT__TCACHE_VERSION);
    prt_write_u32(w, PRT__TCACHE_VERSION);
    prt_write_u64(w, 0); /* total length: patched */
    prt_write_u64(w, 0); /* checksum: patched */
    prt_write_u32(w, PRT__TCACHE_HEADER_SIZE);
    prt_write_u32(w, (uint32_t)c->nb);
    prt_write_bytes(w, zeros, sizeof zeros);
    for (i = 0; i < c->nb; i++) {
        const prt__tentry *e = c->e[i];
        prt_write_bytes(w, e->key, e->len);
        prt_write_u32(w, (uint32_t)e->nb);
        for (j = 0; j < e->nb; j++) {
            prt_write_i32(w, e->ids[j]);
            prt_write_u64(w, e->ns[j]);
        }
    }
}

prt_status prt_timing_cache_serialize(prt_timing_cache *c, void *buf, size_t cap, size_t *len)
{
    prt_writer w = prt_writer_init(NULL, 0);
    prt_status s = PRT_OK;
    size_t n;
    if (!c || !len) return PRT_STATUS_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    write_all(c, &w);
    n = w.len;
    if (w.failed) {
        s = PRT_STATUS_INVALID_ARGUMENT;
    } else if (!buf) {
        *len = n;
    } else if (cap < n) {
        s = PRT_STATUS_INVALID_ARGUMENT;
    } else {
        uint8_t *b = buf;
        w = prt_writer_init(buf, n);
        write_all(c, &w);
        put_u64(b + 16, (uint64_t)n);
        put_u64(b + 24, prt__plan_checksum(b + PRT__TCACHE_HEADER_SIZE, n - PRT__TCACHE_HEADER_SIZE));
        *len = n;
    }
    pthread_mutex_unlock(&c->lock);
    return s;
}

prt_status prt_timing_cache_save(prt_timing_cache *c, const char *path, char *err, size_t cap)
{
    uint8_t *buf;
    size_t n = 0, m = 0;
    char msg[PRT_ERR_CAP];
    prt_status s;
    if (err && cap) err[0] = 0;
    if (!c || !path) {
        if (err && cap) snprintf(err, cap, "no timing cache or path given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    /* Size and bytes under one lock hold would need a second entry point; a
     * build that adds entries in between makes the second call fail, and
     * this one retries with the new size. */
    for (;;) {
        if ((s = prt_timing_cache_serialize(c, NULL, 0, &n)) != PRT_OK) {
            if (err && cap) snprintf(err, cap, "%s: the timing cache is too large to write", path);
            return s;
        }
        buf = prt__malloc(n);
        if (!buf) {
            if (err && cap) snprintf(err, cap, "out of memory writing a timing cache of %zu bytes", n);
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        if (prt_timing_cache_serialize(c, buf, n, &m) == PRT_OK) break;
        prt__free(buf);
    }
    msg[0] = 0;
    s = prt__write_file_atomic(path, buf, m, msg, sizeof msg);
    prt__free(buf);
    if (s != PRT_OK && err && cap) snprintf(err, cap, "%s", msg);
    return s;
}

/* ---- reader ------------------------------------------------------------------------ */

static prt_status bad(char *err, size_t cap, prt_status s, const char *fmt, ...) PRT_PRINTF(4, 5);
static prt_status bad(char *err, size_t cap, prt_status s, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (err && cap) snprintf(err, cap, "not a usable timing cache: %s", msg);
    return s;
}

static uint32_t get_u32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t get_u64(const uint8_t *b)
{
    return (uint64_t)get_u32(b) | (uint64_t)get_u32(b + 4) << 32;
}

/* A string of the key: no NUL inside. */
static int key_str(prt_reader *r)
{
    uint32_t n = 0;
    const char *s = prt_read_str(r, &n);
    return !r->failed && !(n && memchr(s, 0, n));
}

/* One entry at r's position: checks it, and gives its key's span and the
 * times. Returns a message (static text) or NULL. */
static const char *read_entry(prt_reader *r, size_t *key_at, size_t *key_len, prt__tentry *t)
{
    uint32_t nin, i, k;
    int32_t j;
    *key_at = r->pos;
    if (!key_str(r) || !key_str(r) || !key_str(r)) return "a plugin key string ends early or holds a NUL byte";
    (void)prt_read_u64(r);
    if (!key_str(r)) return "the device name ends early or holds a NUL byte";
    nin = prt_read_u32(r);
    if (r->failed) return "an entry ends early";
    if (nin > MAX_INPUTS) return "an entry has more than 1024 inputs";
    for (i = 0; i < nin; i++) {
        uint32_t dt = prt_read_u32(r), fmt = prt_read_u32(r);
        int32_t nd = prt_read_i32(r);
        if (r->failed) return "an input ends early";
        if (nd == -1) {
            if (dt != 0xffffffffu || fmt != 0) return "an absent input has a type or format";
            continue;
        }
        if (dt >= (uint32_t)PRT_DTYPE_COUNT_ || fmt >= (uint32_t)PRT_FORMAT_COUNT_ || nd < 0 || nd > PRT_MAX_DIMS)
            return "an input has an unknown type or format, or not 0..8 dims";
        for (j = 0; j < nd; j++)
            if (prt_read_i64(r) < 0) return "an input extent is negative";
        if (r->failed) return "an input ends early";
    }
    *key_len = r->pos - *key_at;
    t->nb = (int32_t)prt_read_u32(r);
    if (r->failed) return "an entry ends before its tactics";
    if (t->nb < 1 || t->nb > PRT__TCACHE_MAX_TACTICS) return "an entry has not 1..64 tactics";
    for (j = 0; j < t->nb; j++) {
        t->ids[j] = prt_read_i32(r);
        t->ns[j] = prt_read_u64(r);
        if (r->failed) return "a tactic ends early";
        if (t->ids[j] <= 0) return "a tactic id is not > 0";
        if (t->ns[j] == 0) return "a tactic time is 0";
        for (k = 0; k < (uint32_t)j; k++)
            if (t->ids[k] == t->ids[j]) return "an entry lists a tactic twice";
    }
    return NULL;
}

prt_status prt_timing_cache_deserialize(const void *data, size_t len, prt_timing_cache **out, char *err, size_t cap)
{
    const uint8_t *b = data;
    prt_timing_cache *c = NULL;
    prt_reader r;
    uint32_t rv, wv, hs, n, i;
    uint64_t total, sum;
    prt_status s;
    if (err && cap) err[0] = 0;
    if (!out || (!data && len)) {
        if (err && cap) snprintf(err, cap, "no timing cache bytes or no output pointer given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (len < 8 || memcmp(b, PRT__TCACHE_MAGIC, 8) != 0)
        return bad(err, cap, PRT_STATUS_BAD_FORMAT, "no \"%s\" magic at its start", PRT__TCACHE_MAGIC);
    if (len < PRT__TCACHE_HEADER_SIZE)
        return bad(err, cap, PRT_STATUS_TRUNCATED, "%zu bytes, shorter than the %u-byte header", len,
                   PRT__TCACHE_HEADER_SIZE);
    rv = get_u32(b + 8);
    wv = get_u32(b + 12);
    total = get_u64(b + 16);
    sum = get_u64(b + 24);
    hs = get_u32(b + 32);
    n = get_u32(b + 36);
    if (rv > PRT__TCACHE_VERSION)
        return bad(err, cap, PRT_STATUS_VERSION_MISMATCH, "it needs reader version %u, this is %u (written by format "
                   "version %u)", rv, PRT__TCACHE_VERSION, wv);
    if (rv == 0 || wv < rv)
        return bad(err, cap, PRT_STATUS_BAD_FORMAT, "read version %u / write version %u are inconsistent", rv, wv);
    if (total != len)
        return bad(err, cap, total > len ? PRT_STATUS_TRUNCATED : PRT_STATUS_BAD_FORMAT,
                   "the header says %" PRIu64 " bytes, got %zu", total, len);
    if (prt__plan_checksum(b + PRT__TCACHE_HEADER_SIZE, len - PRT__TCACHE_HEADER_SIZE) != sum)
        return bad(err, cap, PRT_STATUS_BAD_FORMAT, "checksum mismatch (the file is damaged)");
    if (hs != PRT__TCACHE_HEADER_SIZE)
        return bad(err, cap, PRT_STATUS_BAD_FORMAT, "header size is %u; expected %u", hs, PRT__TCACHE_HEADER_SIZE);
    for (i = 40; i < PRT__TCACHE_HEADER_SIZE; i++)
        if (b[i]) return bad(err, cap, PRT_STATUS_BAD_FORMAT, "reserved header byte %u is not zero", i);
    /* Each entry takes at least 40 bytes (3 strings, hash, device, count, one tactic). */
    if (n > MAX_ENTRIES || (uint64_t)n * 40u > len - PRT__TCACHE_HEADER_SIZE)
        return bad(err, cap, PRT_STATUS_BAD_FORMAT, "%u entries do not fit in %zu bytes", n,
                   len - PRT__TCACHE_HEADER_SIZE);
    if ((s = prt_timing_cache_create(&c)) != PRT_OK) {
        if (err && cap) snprintf(err, cap, "out of memory reading a timing cache");
        return s;
    }
    c->e = prt__calloc((size_t)(n ? n : 1), sizeof *c->e);
    if (!c->e) {
        s = PRT_STATUS_OUT_OF_MEMORY;
        if (err && cap) snprintf(err, cap, "out of memory reading a timing cache of %u entries", n);
        goto fail;
    }
    c->cap = (int32_t)(n ? n : 1);
    r = prt_reader_init(data, len);
    r.pos = PRT__TCACHE_HEADER_SIZE;
    for (i = 0; i < n; i++) {
        prt__tentry t;
        size_t at = 0, kl = 0, start = r.pos;
        const char *why = read_entry(&r, &at, &kl, &t);
        if (why) {
            s = bad(err, cap, PRT_STATUS_BAD_FORMAT, "entry %u (byte %zu): %s", i, start, why);
            goto fail;
        }
        if (c->nb && key_cmp(c->e[c->nb - 1]->key, c->e[c->nb - 1]->len, b + at, kl) >= 0) {
            s = bad(err, cap, PRT_STATUS_BAD_FORMAT, "entry %u (byte %zu): keys are not in increasing order (or one "
                    "repeats)", i, start);
            goto fail;
        }
        c->e[c->nb] = prt__tentry_new(b + at, kl, t.ids, t.ns, t.nb);
        if (!c->e[c->nb]) {
            s = PRT_STATUS_OUT_OF_MEMORY;
            if (err && cap) snprintf(err, cap, "out of memory reading a timing cache");
            goto fail;
        }
        c->nb++;
    }
    if (r.pos != len) {
        s = bad(err, cap, PRT_STATUS_BAD_FORMAT, "%zu bytes after the last entry", len - r.pos);
        goto fail;
    }
    *out = c;
    return PRT_OK;
fail:
    prt_timing_cache_destroy(c);
    return s;
}

prt_status prt_timing_cache_load(const char *path, prt_timing_cache **out, char *err, size_t cap)
{
    void *data = NULL;
    size_t len = 0;
    char msg[PRT_ERR_CAP];
    prt_status s;
    if (err && cap) err[0] = 0;
    msg[0] = 0;
    if (!path) {
        if (err && cap) snprintf(err, cap, "no timing cache path given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    s = prt__read_file(path, &data, &len, msg, sizeof msg);
    if (s != PRT_OK) {
        if (err && cap) snprintf(err, cap, "%s", msg);
        return s;
    }
    s = prt_timing_cache_deserialize(data, len, out, msg, sizeof msg);
    prt__free(data);
    if (s != PRT_OK && err && cap) snprintf(err, cap, "%s: %s", path, msg);
    return s;
}
