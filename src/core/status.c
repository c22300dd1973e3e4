/* core/status.c - status names and messages, the logger, version, dims. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

const char *prt_status_name(prt_status s)
{
    switch (s) {
#define PRT_NAME_(name, value, msg) case PRT_STATUS_##name: return "PRT_STATUS_" #name;
        PRT_STATUS_MAP(PRT_NAME_)
#undef PRT_NAME_
    default: return "PRT_STATUS_UNKNOWN";
    }
}

const char *prt_status_str(prt_status s)
{
    switch (s) {
#define PRT_STR_(name, value, msg) case PRT_STATUS_##name: return msg;
        PRT_STATUS_MAP(PRT_STR_)
#undef PRT_STR_
    default: return "unknown status";
    }
}

const char *prt_version_string(void)
{
    return "0.1.0";
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static prt_log_fn log_fn;
static void *log_user;
static prt_severity log_max = PRT_SEVERITY_WARNING;

void prt_set_logger(prt_log_fn fn, void *user, prt_severity max_severity)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_user = user;
    log_max = max_severity;
    pthread_mutex_unlock(&log_lock);
}

void prt__vlog(prt_severity sev, const char *fmt, va_list ap)
{
    static const char *names[] = {"error", "warning", "info", "verbose"};
    char buf[2048];
    prt_log_fn fn;
    void *user;
    prt_severity max;
    pthread_mutex_lock(&log_lock);
    fn = log_fn;
    user = log_user;
    max = log_max;
    pthread_mutex_unlock(&log_lock);
    if (sev > max) return;
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (fn) {
        fn(user, sev, buf);
    } else {
        fprintf(stderr, "plugrt %s: %s\n",
                (unsigned)sev < 4 ? names[sev] : "log", buf);
    }
}

void prt_log(prt_severity sev, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt__vlog(sev, fmt, ap);
    va_end(ap);
}

const char *prt_dims_str(const prt_dims *d, char *buf, size_t cap)
{
    size_t n = 0;
    int32_t i;
    if (!buf || cap == 0) return "";
    buf[0] = 0;
    if (!d || d->nb < 0 || d->nb > PRT_MAX_DIMS) {
        snprintf(buf, cap, "[invalid]");
        return buf;
    }
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (i = 0; i < d->nb && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId64, i ? ", " : "", d->d[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}
