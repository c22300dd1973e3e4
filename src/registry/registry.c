/*
 * registry/registry.c - creators keyed by (name, version, namespace).
 *
 * Each registry keeps a sorted array of entries under a rwlock: lookups take
 * the read lock, registration takes the write lock for the whole batch, so a
 * lookup sees a registration completely or not at all. Owner strings are
 * interned for the life of the registry, so the owner a lookup returns stays
 * readable even while another thread removes the creator.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"
#include "registry/registry_impl.h"
#include "registry/schema.h"
#include "registry/static.h"

/* sizeof(prt_plugin_creator) at abi_version 1. */
#define CREATOR_V1_SIZE (offsetof(prt_plugin_creator, user) + sizeof(void *))
#define MSG_CAP PRT_ERR_CAP

/* ---- keys -------------------------------------------------------------------- */

/* NULL and "" are the default namespace, and so is "ai.onnx": ONNX writes its
 * own domain either way. */
static const char *ns_of(const char *ns)
{
    return !ns || strcmp(ns, "ai.onnx") == 0 ? "" : ns;
}

static int key_cmp(const char *ns_a, const char *name_a, const char *ver_a, const char *ns_b,
                   const char *name_b, const char *ver_b)
{
    int d = strcmp(ns_a, ns_b);
    if (d) return d;
    d = strcmp(name_a, name_b);
    if (d) return d;
    return strcmp(ver_a, ver_b);
}

static int entry_cmp(const prt__reg_entry *e, const char *ns, const char *name, const char *ver)
{
    return key_cmp(e->ns, e->c->name, e->c->version, ns, name, ver);
}

/* Index of the key, or -(insertion point) - 1. Caller holds the lock. */
static int32_t search(const prt_registry *r, const char *ns, const char *name, const char *ver)
{
    int32_t lo = 0, hi = r->nb;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int d = entry_cmp(&r->entries[mid], ns, name, ver);
        if (d == 0) return mid;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -lo - 1;
}

/* qsort order of creator pointers by key. */
static int creator_ptr_cmp(const void *a, const void *b)
{
    const prt_plugin_creator *x = *(const prt_plugin_creator *const *)a, *y = *(const prt_plugin_creator *const *)b;
    return key_cmp(ns_of(x->plugin_namespace), x->name, x->version, ns_of(y->plugin_namespace), y->name, y->version);
}

/* ---- messages ------------------------------------------------------------------ */

static void add_key(prt__text *t, const char *ns, const char *name, const char *ver)
{
    if (ns && ns[0]) prt__text_add(t, "%s::", ns);
    prt__text_add(t, "%s v%s", name, ver);
}

/* ---- creator checks -------------------------------------------------------------- */

static prt_status check_creator(const prt_plugin_creator *c, char *err, size_t cap)
{
    char label[256];
    prt__text t = prt__text_init(err, cap);
    if (!c) {
        prt__text_add(&t, "creator is NULL");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->struct_size < CREATOR_V1_SIZE) {
        prt__text_add(&t, "creator struct_size is %u, expected at least %zu (sizeof(prt_plugin_creator))",
                      (unsigned)c->struct_size, CREATOR_V1_SIZE);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    prt__schema_label(c, label, sizeof label);
    if (!c->name || !c->name[0] || !c->version || !c->version[0]) {
        prt__text_add(&t, "%s: a creator needs a non-empty name and version", label);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->abi_version == 0 || c->abi_version > PRT_ABI_VERSION) {
        prt__text_add(&t, "%s: creator is built for plugin ABI %u, this host supports 1 to %u", label,
                      (unsigned)c->abi_version, (unsigned)PRT_ABI_VERSION);
        return c->abi_version ? PRT_STATUS_VERSION_MISMATCH : PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->style == PRT_STYLE_BLOB) {
        if (!c->create_blob || !c->deserialize_blob) {
            prt__text_add(&t, "%s: blob-style creator needs create_blob and deserialize_blob, %s is NULL%s",
                          label, !c->create_blob ? "create_blob" : "deserialize_blob",
                          c->create_field ? " (create_field is set: is the style meant to be PRT_STYLE_FIELD?)"
                                     : "");
            return PRT_STATUS_INVALID_ARGUMENT;
        }
    } else if (c->style == PRT_STYLE_FIELD) {
        if (!c->create_field) {
            prt__text_add(&t, "%s: field-style creator needs create_field, it is NULL%s", label,
                          c->create_blob ? " (create_blob is set: is the style meant to be PRT_STYLE_BLOB?)" : "");
            return PRT_STATUS_INVALID_ARGUMENT;
        }
    } else {
        prt__text_add(&t, "%s: style is %d, expected PRT_STYLE_BLOB (1) or PRT_STYLE_FIELD (2)", label,
                      (int)c->style);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return prt__schema_check(c, err, cap);
}

/* ---- owners ------------------------------------------------------------------------ */

/* The registry's copy of `owner`. Caller holds the write lock. */
static const char *intern_owner(prt_registry *r, const char *owner)
{
    prt__reg_owner *o;
    size_t n;
    for (o = r->owners; o; o = o->next)
        if (strcmp(o->name, owner) == 0) return o->name;
    n = strlen(owner);
    o = prt__malloc(sizeof *o + n + 1);
    if (!o) return NULL;
    memcpy(o->name, owner, n + 1);
    o->next = r->owners;
    r->owners = o;
    return o->name;
}

/* ---- registration -------------------------------------------------------------------- */

prt_status prt__registry_add_many(prt_registry *r, const prt_plugin_creator *const *cs, int32_t n,
                                  const char *owner, char *err, size_t cap)
{
    prt__text t = prt__text_init(err, cap);
    prt_status st = PRT_OK;
    const char *own;
    const prt_plugin_creator **sorted = NULL;
    int32_t i, k;
    if (n < 0 || (n > 0 && !cs) || !owner) {
        prt__text_add(&t, "invalid registration request (%d creators, owner %s)", (int)n, owner ? owner : "NULL");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < n; i++) {
        st = check_creator(cs[i], err, cap);
        if (st != PRT_OK) return st;
    }
    if (n == 0) return PRT_OK;
    /* The batch sorted by key: duplicates are neighbours, and the batch
     * merges into the sorted entries in one pass (n log n, not n^2). */
    sorted = prt__malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        prt__text_add(&t, "out of memory registering %d creator%s for \"%s\"", (int)n, n == 1 ? "" : "s", owner);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    memcpy(sorted, cs, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, creator_ptr_cmp);
    for (i = 1; i < n; i++) {
        if (creator_ptr_cmp(&sorted[i - 1], &sorted[i]) == 0) {
            prt__text_add(&t, "creator ");
            add_key(&t, sorted[i]->plugin_namespace, sorted[i]->name, sorted[i]->version);
            prt__text_add(&t, " appears twice in what \"%s\" registers", owner);
            prt__free(sorted);
            return PRT_STATUS_ALREADY_EXISTS;
        }
    }
    pthread_rwlock_wrlock(&r->lock);
    for (i = 0; i < n; i++) {
        const prt_plugin_creator *c = cs[i];
        int32_t at = search(r, ns_of(c->plugin_namespace), c->name, c->version);
        if (at >= 0) {
            prt__text_add(&t, "creator ");
            add_key(&t, c->plugin_namespace, c->name, c->version);
            prt__text_add(&t, " is already registered by \"%s\"; \"%s\" cannot register it again",
                          r->entries[at].owner, owner);
            st = PRT_STATUS_ALREADY_EXISTS;
            goto unlock;
        }
    }
    if (n > INT32_MAX - r->nb) {
        prt__text_add(&t, "too many creators");
        st = PRT_STATUS_INVALID_ARGUMENT;
        goto unlock;
    }
    if (r->nb + n > r->cap) {
        int32_t ncap = r->cap ? r->cap : 16;
        prt__reg_entry *ne;
        while (ncap < r->nb + n) ncap = ncap > INT32_MAX / 2 ? INT32_MAX : ncap * 2;
        ne = prt__realloc(r->entries, (size_t)ncap * sizeof *ne);
        if (!ne) {
            prt__text_add(&t, "out of memory registering %d creator%s for \"%s\"", (int)n, n == 1 ? "" : "s",
                          owner);
            st = PRT_STATUS_OUT_OF_MEMORY;
            goto unlock;
        }
        r->entries = ne;
        r->cap = ncap;
    }
    own = intern_owner(r, owner);
    if (!own) {
        prt__text_add(&t, "out of memory registering creators for \"%s\"", owner);
        st = PRT_STATUS_OUT_OF_MEMORY;
        goto unlock;
    }
    /* Merge from the back: both lists are sorted and no key is in both. */
    for (i = r->nb - 1, k = n - 1; k >= 0;) {
        prt__reg_entry *dst = &r->entries[i + k + 1];
        const prt_plugin_creator *c = sorted[k];
        if (i >= 0 && entry_cmp(&r->entries[i], ns_of(c->plugin_namespace), c->name, c->version) > 0) {
            *dst = r->entries[i--];
        } else {
            dst->c = c;
            dst->ns = ns_of(c->plugin_namespace);
            dst->owner = own;
            k--;
        }
    }
    r->nb += n;
unlock:
    pthread_rwlock_unlock(&r->lock);
    prt__free(sorted);
    return st;
}

static int ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const void *const *)a, y = (uintptr_t) * (const void *const *)b;
    return (x > y) - (x < y);
}

void prt__registry_remove_creators(prt_registry *r, const prt_plugin_creator *const *cs, int32_t n)
{
    int32_t i, j, k;
    /* The creators sorted by address for a binary search; without memory
     * for that, a plain scan. */
    const prt_plugin_creator **by_addr = n > 0 ? prt__malloc((size_t)n * sizeof *by_addr) : NULL;
    if (by_addr) {
        memcpy(by_addr, cs, (size_t)n * sizeof *by_addr);
        qsort(by_addr, (size_t)n, sizeof *by_addr, ptr_cmp);
    }
    pthread_rwlock_wrlock(&r->lock);
    for (i = 0, j = 0; i < r->nb; i++) {
        int hit = 0;
        if (by_addr)
            hit = bsearch(&r->entries[i].c, by_addr, (size_t)n, sizeof *by_addr, ptr_cmp) != NULL;
        else
            for (k = 0; k < n && !hit; k++) hit = r->entries[i].c == cs[k];
        if (!hit) r->entries[j++] = r->entries[i];
    }
    r->nb = j;
    pthread_rwlock_unlock(&r->lock);
    prt__free(by_addr);
}

/* ---- the global registry ------------------------------------------------------------ */

static prt_registry global_reg = {
    .lock = PTHREAD_RWLOCK_INITIALIZER, .lib_lock = PTHREAD_MUTEX_INITIALIZER, .is_global = 1};
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
/* Head of the static list when it was last taken in. The list only grows at
 * its head, so the nodes before this one are the new ones. */
static _Atomic(prt_static_creator *) drained_head;

/* Register the static creators pushed since the last drain (all of them the
 * first time). One that fails its checks is logged and skipped. When memory
 * runs out the drain is not marked done, so the next use of the global
 * registry takes in what is missing (a creator already in is passed over). */
static void drain_static(void)
{
    prt_static_creator *head, *node, *stop;
    char err[MSG_CAP];
    int short_of_memory = 0;
    pthread_mutex_lock(&drain_lock);
    head = prt__static_list();
    stop = atomic_load(&drained_head);
    for (node = head; node && node != stop; node = node->next) {
        const prt_plugin_creator *c = node->creator;
        int32_t at;
        int already;
        prt_status s;
        pthread_rwlock_rdlock(&global_reg.lock);
        at = c && c->name && c->version ? search(&global_reg, ns_of(c->plugin_namespace), c->name, c->version) : -1;
        already = at >= 0 && global_reg.entries[at].c == c;
        pthread_rwlock_unlock(&global_reg.lock);
        if (already) continue; /* taken in by an earlier, interrupted drain */
        s = prt__registry_add_many(&global_reg, &c, 1, "static", err, sizeof err);
        if (s == PRT_STATUS_OUT_OF_MEMORY) short_of_memory = 1;
        else if (s != PRT_OK) prt_log(PRT_SEVERITY_WARNING, "statically registered creator skipped: %s", err);
    }
    if (!short_of_memory) atomic_store(&drained_head, head);
    pthread_mutex_unlock(&drain_lock);
}

prt_registry *prt_registry_global(void)
{
    pthread_once(&global_once, drain_static);
    /* Creators of a library loaded (with its own constructors) after first use. */
    if (prt__static_list() != atomic_load(&drained_head)) drain_static();
    return &global_reg;
}

/* ---- create / destroy ------------------------------------------------------------------ */

prt_status prt_registry_create(prt_registry *parent, prt_registry **out)
{
    prt_registry *r;
    if (!out) return prt__err(parent, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_create: out is NULL");
    r = prt__calloc(1, sizeof *r);
    if (!r) return prt__err(parent, PRT_STATUS_OUT_OF_MEMORY, "out of memory creating a registry");
    if (pthread_rwlock_init(&r->lock, NULL) != 0) goto fail_rwlock;
    if (pthread_mutex_init(&r->lib_lock, NULL) != 0) goto fail_mutex;
    r->parent = parent;
    *out = r;
    return PRT_OK;
fail_mutex:
    pthread_rwlock_destroy(&r->lock);
fail_rwlock:
    prt__free(r);
    return prt__err(parent, PRT_STATUS_INTERNAL, "cannot initialize the registry's locks");
}

void prt_registry_destroy(prt_registry *r)
{
    prt__reg_owner *o, *next;
    if (!r) return;
    if (r->is_global) {
        prt_log(PRT_SEVERITY_WARNING, "prt_registry_destroy: the global registry is never destroyed");
        return;
    }
    prt__free(r->entries);
    r->entries = NULL;
    r->nb = r->cap = 0;
    prt__library_release_all(r);
    for (o = r->owners; o; o = next) {
        next = o->next;
        prt__free(o);
    }
    pthread_mutex_destroy(&r->lib_lock);
    pthread_rwlock_destroy(&r->lock);
    prt__err_clear(r);
    prt__free(r);
}

/* ---- public registration ------------------------------------------------------------- */

prt_status prt_registry_add(prt_registry *r, const prt_plugin_creator *c, const char *owner)
{
    char err[MSG_CAP];
    prt_status st;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!owner) return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_add: owner is NULL");
    st = prt__registry_add_many(r, &c, 1, owner, err, sizeof err);
    if (st != PRT_OK) return prt__err(r, st, "%s", err);
    return PRT_OK;
}

prt_status prt_registry_add_many(prt_registry *r, const prt_plugin_creator *const *creators, int32_t n,
                                 const char *owner)
{
    char err[MSG_CAP];
    prt_status st;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!owner) return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_add_many: owner is NULL");
    st = prt__registry_add_many(r, creators, n, owner, err, sizeof err);
    if (st != PRT_OK) return prt__err(r, st, "%s", err);
    return PRT_OK;
}

/* Near misses of a key across the chain, appended to t: the same name with
 * other versions or namespaces, and names equal but for case. */
static void add_near_misses(prt__text *t, prt_registry *r, const char *ns, const char *name, const char *ver)
{
    int32_t depth = 0, i, found = 0, total = 0;
    prt_registry *p;
    for (p = r; p; p = p->parent, depth++) {
        pthread_rwlock_rdlock(&p->lock);
        total += p->nb;
        for (i = 0; i < p->nb; i++) {
            const prt__reg_entry *e = &p->entries[i];
            if (strcasecmp(e->c->name, name) != 0) continue;
            if (key_cmp(e->ns, e->c->name, e->c->version, ns, name, ver) == 0) continue; /* exact (removed) */
            prt__text_add(t, "%s", found ? ", " : "; near misses: ");
            add_key(t, e->ns, e->c->name, e->c->version);
            prt__text_add(t, " (owner \"%s\"%s)", e->owner, depth == 0 ? "" : depth == 1 ? ", parent registry"
                                                                                     : ", ancestor registry");
            found++;
        }
        pthread_rwlock_unlock(&p->lock);
    }
    if (!found)
        prt__text_add(t, "; no creator of that name in any namespace or version (%d creator%s registered)",
                      (int)total, total == 1 ? "" : "s");
}

/* Creators missing at lookup often live in a plugin library not loaded yet. */
static void add_load_hint(prt__text *t)
{
    prt__text_add(t, " (is it in a plugin library? load it first: prt_registry_load_library, or --load LIB "
                     "with the plugrt CLI)");
}

prt_status prt_registry_remove(prt_registry *r, const char *name, const char *version,
                               const char *plugin_namespace)
{
    const char *ns = ns_of(plugin_namespace);
    int32_t at;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!name || !version)
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_remove: %s is NULL",
                        !name ? "name" : "version");
    pthread_rwlock_wrlock(&r->lock);
    at = search(r, ns, name, version);
    if (at >= 0) {
        memmove(&r->entries[at], &r->entries[at + 1], (size_t)(r->nb - at - 1) * sizeof *r->entries);
        r->nb--;
    }
    pthread_rwlock_unlock(&r->lock);
    if (at < 0) {
        char msg[MSG_CAP];
        prt__text t = prt__text_init(msg, sizeof msg);
        prt__text_add(&t, "cannot remove creator ");
        add_key(&t, ns, name, version);
        prt__text_add(&t, ": it is not registered in this registry");
        return prt__err(r, PRT_STATUS_NOT_FOUND, "%s", msg);
    }
    return PRT_OK;
}

prt_status prt_registry_remove_owner(prt_registry *r, const char *owner, int32_t *nb_removed)
{
    int32_t i, j;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!owner) return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_remove_owner: owner is NULL");
    pthread_rwlock_wrlock(&r->lock);
    for (i = 0, j = 0; i < r->nb; i++)
        if (strcmp(r->entries[i].owner, owner) != 0) r->entries[j++] = r->entries[i];
    if (nb_removed) *nb_removed = r->nb - j;
    r->nb = j;
    pthread_rwlock_unlock(&r->lock);
    return PRT_OK;
}

/* ---- lookups -------------------------------------------------------------------------- */

prt_status prt_registry_find(prt_registry *r, const char *name, const char *version,
                             const char *plugin_namespace, const prt_plugin_creator **out,
                             const char **owner_out)
{
    const char *ns = ns_of(plugin_namespace);
    prt_registry *p;
    char msg[MSG_CAP];
    prt__text t;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!name || !version || !out)
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_find: %s is NULL",
                        !name ? "name" : !version ? "version" : "out");
    for (p = r; p; p = p->parent) {
        int32_t at;
        pthread_rwlock_rdlock(&p->lock);
        at = search(p, ns, name, version);
        if (at >= 0) {
            *out = p->entries[at].c;
            if (owner_out) *owner_out = p->entries[at].owner;
        }
        pthread_rwlock_unlock(&p->lock);
        if (at >= 0) return PRT_OK;
    }
    t = prt__text_init(msg, sizeof msg);
    prt__text_add(&t, "no plugin creator ");
    add_key(&t, ns, name, version);
    if (!ns[0]) prt__text_add(&t, " (default namespace)");
    add_near_misses(&t, r, ns, name, version);
    add_load_hint(&t);
    return prt__err(r, PRT_STATUS_NOT_FOUND, "%s", msg);
}

static void add_latest_key(prt__text *t, const char *ns, const char *name, int64_t max_version)
{
    prt__text_add(t, "no plugin creator %s%s%s with a decimal version <= %" PRId64 "%s", ns, ns[0] ? "::" : "",
                  name, max_version, ns[0] ? "" : " (default namespace)");
}

/* Value of a canonical decimal version ("0" or a non-zero digit then digits,
 * at most 18 of them), or -1 for any other string. */
static int64_t decimal_version(const char *v)
{
    int64_t x = 0;
    size_t i, n = strlen(v);
    if (n == 0 || n > 18 || (v[0] == '0' && n > 1)) return -1;
    for (i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

/* Entries of (ns, name) in p are contiguous: [*lo, return). Caller holds p's lock. */
static int32_t name_range(const prt_registry *p, const char *ns, const char *name, int32_t *lo)
{
    int32_t at = search(p, ns, name, ""), end;
    if (at < 0) at = -at - 1;
    for (end = at; end < p->nb && strcmp(p->entries[end].ns, ns) == 0 && strcmp(p->entries[end].c->name, name) == 0;)
        end++;
    *lo = at;
    return end;
}

prt_status prt_registry_find_latest(prt_registry *r, const char *name, const char *plugin_namespace,
                                    int64_t max_version, const prt_plugin_creator **out,
                                    const char **owner_out)
{
    const char *ns = ns_of(plugin_namespace);
    const prt_plugin_creator *best = NULL;
    const char *best_owner = NULL;
    int64_t best_v = -1;
    int32_t nb_seen = 0, i, lo, hi;
    prt_registry *p;
    char msg[MSG_CAP];
    prt__text t = prt__text_init(msg, sizeof msg);
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!name || !out)
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_find_latest: %s is NULL",
                        !name ? "name" : "out");
    if (max_version < 0)
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT,
                        "prt_registry_find_latest: version limit must be >= 0, got %" PRId64, max_version);
    add_latest_key(&t, ns, name, max_version);
    prt__text_add(&t, "; versions that exist: ");
    /* Nearest registry first, so on equal versions the nearer one wins. */
    for (p = r; p; p = p->parent) {
        pthread_rwlock_rdlock(&p->lock);
        hi = name_range(p, ns, name, &lo);
        for (i = lo; i < hi; i++) {
            const prt__reg_entry *e = &p->entries[i];
            int64_t v = decimal_version(e->c->version);
            prt__text_add(&t, "%s%s%s", nb_seen ? ", " : "", e->c->version, v < 0 ? " (not decimal)" : "");
            nb_seen++;
            if (v >= 0 && v <= max_version && v > best_v) {
                best = e->c;
                best_owner = e->owner;
                best_v = v;
            }
        }
        pthread_rwlock_unlock(&p->lock);
    }
    if (best) {
        *out = best;
        if (owner_out) *owner_out = best_owner;
        return PRT_OK;
    }
    if (nb_seen == 0) {
        t = prt__text_init(msg, sizeof msg);
        add_latest_key(&t, ns, name, max_version);
        add_near_misses(&t, r, ns, name, "");
    }
    add_load_hint(&t);
    return prt__err(r, PRT_STATUS_NOT_FOUND, "%s", msg);
}

prt_status prt_registry_list(prt_registry *r, prt_creator_info *out, int32_t cap, int32_t *nb)
{
    prt_registry *p, *q;
    int32_t depth, total = 0, w = 0, i;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (cap < 0 || (cap > 0 && !out) || !nb)
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT,
                        "prt_registry_list: expected cap >= 0, out set when cap > 0 and nb set; got cap %d, "
                        "out %s, nb %s", (int)cap, out ? "set" : "NULL", nb ? "set" : "NULL");
    /* One consistent snapshot: read-lock the whole chain, child first. */
    for (p = r; p; p = p->parent) pthread_rwlock_rdlock(&p->lock);
    for (p = r, depth = 0; p; p = p->parent, depth++) {
        if (p->nb > INT32_MAX - total) break;
        total += p->nb;
        for (i = 0; i < p->nb && w < cap; i++) {
            const prt__reg_entry *e = &p->entries[i];
            int shadowed = 0;
            for (q = r; q != p && !shadowed; q = q->parent)
                shadowed = search(q, e->ns, e->c->name, e->c->version) >= 0;
            out[w].creator = e->c;
            out[w].owner = e->owner;
            out[w].depth = depth;
            out[w].shadowed = shadowed;
            w++;
        }
    }
    for (p = r; p; p = p->parent) pthread_rwlock_unlock(&p->lock);
    *nb = total;
    return PRT_OK;
}

prt_status prt_registry_set_owner_policy(prt_registry *r, prt_owner_policy policy)
{
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (policy != PRT_OWNER_WARN && policy != PRT_OWNER_REFUSE && policy != PRT_OWNER_ANY)
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT,
                        "prt_registry_set_owner_policy: policy %d is not PRT_OWNER_WARN (0), PRT_OWNER_REFUSE (1) "
                        "or PRT_OWNER_ANY (2)", (int)policy);
    atomic_store(&r->owner_policy, (int)policy);
    return PRT_OK;
}

prt_owner_policy prt_registry_owner_policy(const prt_registry *r)
{
    return r ? (prt_owner_policy)atomic_load(&((prt_registry *)r)->owner_policy) : PRT_OWNER_WARN;
}

const char *prt_registry_last_error(const prt_registry *r)
{
    return prt__err_get(r);
}
