/* engine/plugctx.c - per-context resources (engine/plugctx.h). */
#include <pthread.h>
#include <string.h>

#include "core/core.h"
#include "engine/plugctx.h"

typedef struct plugctx_res {
    char *key;
    void *res;
    prt_resource_destroy_fn destroy;
    void *user;
    int32_t refs;
    struct plugctx_res *next;
} plugctx_res;

struct prt__plugctx {
    prt_plugin_context pub;
    pthread_mutex_t lock;
    plugctx_res *list;
};

static prt_status ctx_acquire(prt_plugin_context *pc, const char *key, prt_resource_create_fn create,
                              prt_resource_destroy_fn destroy, void *user, void **out, prt_msg *err)
{
    prt__plugctx *c = pc ? (prt__plugctx *)pc->host_ : NULL;
    plugctx_res *r;
    prt_status s;
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    void *res = NULL;

    if (!c || !key || !out) {
        prt_msg_set(err, "acquire needs a context, a key and an out pointer");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&c->lock);
    for (r = c->list; r; r = r->next) {
        if (strcmp(r->key, key) == 0) {
            r->refs++;
            *out = r->res;
            pthread_mutex_unlock(&c->lock);
            return PRT_OK;
        }
    }
    if (!create) {
        pthread_mutex_unlock(&c->lock);
        prt_msg_set(err, "resource \"%s\" does not exist and no create function was given", key);
        return PRT_STATUS_NOT_FOUND;
    }
    r = prt__calloc(1, sizeof(*r));
    if (r) r->key = prt__strdup(key);
    if (!r || !r->key) {
        pthread_mutex_unlock(&c->lock);
        if (r) prt__free(r);
        prt_msg_set(err, "out of memory acquiring resource \"%s\"", key);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    /* Created under the lock so that two plugins never create it twice. */
    pmsg[0] = 0;
    s = create(user, c->pub.device, &res, &m);
    if (s != PRT_OK) {
        pthread_mutex_unlock(&c->lock);
        prt__free(r->key);
        prt__free(r);
        if (pmsg[0])
            prt_msg_set(err, "creating resource \"%s\" failed: %s", key, pmsg);
        else
            prt_msg_set(err, "creating resource \"%s\" failed with %s", key, prt_status_name(s));
        return (int)s > 0 && (int)s < (int)PRT_STATUS_COUNT_ ? s : PRT_STATUS_PLUGIN_ERROR;
    }
    r->res = res;
    r->destroy = destroy;
    r->user = user;
    r->refs = 1;
    r->next = c->list;
    c->list = r;
    *out = res;
    pthread_mutex_unlock(&c->lock);
    return PRT_OK;
}

static void ctx_release(prt_plugin_context *pc, const char *key)
{
    prt__plugctx *c = pc ? (prt__plugctx *)pc->host_ : NULL;
    plugctx_res **pp, *r = NULL;
    if (!c || !key) return;
    pthread_mutex_lock(&c->lock);
    for (pp = &c->list; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->key, key) == 0) {
            r = *pp;
            if (--r->refs == 0) *pp = r->next;
            else r = NULL;
            break;
        }
    }
    if (!*pp && !r) {
        pthread_mutex_unlock(&c->lock);
        prt_log(PRT_SEVERITY_WARNING, "plugin context: release of resource \"%s\", which is not held", key);
        return;
    }
    pthread_mutex_unlock(&c->lock);
    if (r) {
        if (r->destroy) r->destroy(r->user, r->res);
        prt__free(r->key);
        prt__free(r);
    }
}

static void ctx_log(prt_plugin_context *pc, prt_severity sev, const char *msg)
{
    (void)pc;
    prt_log(sev, "%s", msg ? msg : "");
}

prt_status prt__plugctx_create(prt_device device, int32_t cuda_device, prt__plugctx **out)
{
    prt__plugctx *c = prt__calloc(1, sizeof(*c));
    if (!c) return PRT_STATUS_OUT_OF_MEMORY;
    c->pub.struct_size = (uint32_t)sizeof(prt_plugin_context);
    c->pub.abi_version = PRT_ABI_VERSION;
    c->pub.device = device;
    c->pub.cuda_device = cuda_device;
    c->pub.acquire = ctx_acquire;
    c->pub.release = ctx_release;
    c->pub.log = ctx_log;
    c->pub.host_ = c;
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return PRT_OK;
}

prt_plugin_context *prt__plugctx_get(prt__plugctx *c)
{
    return c ? &c->pub : NULL;
}

int32_t prt__plugctx_nb_resources(prt__plugctx *c)
{
    plugctx_res *r;
    int32_t n = 0;
    if (!c) return 0;
    pthread_mutex_lock(&c->lock);
    for (r = c->list; r; r = r->next) n++;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void prt__plugctx_destroy(prt__plugctx *c)
{
    plugctx_res *r, *n;
    if (!c) return;
    for (r = c->list; r; r = n) {
        n = r->next;
        prt_log(PRT_SEVERITY_WARNING,
                "plugin context: resource \"%s\" still has %d reference%s at destruction; destroying it",
                r->key, (int)r->refs, r->refs == 1 ? "" : "s");
        if (r->destroy) r->destroy(r->user, r->res);
        prt__free(r->key);
        prt__free(r);
    }
    pthread_mutex_destroy(&c->lock);
    prt__free(c);
}
