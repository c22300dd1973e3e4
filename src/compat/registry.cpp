/* compat/registry.cpp - getPluginRegistry(), getLogger(),
 * initLibNvInferPlugins(), the host-path query, and (built with
 * PRT_COMPAT_LIBRARY) the entry point of a plugin library.
 *
 * In a program (the default build, library plugrt_trt), a creator registered
 * through REGISTER_TENSORRT_PLUGIN or registerCreator() is wrapped and pushed
 * onto plugrt's static-registration list, exactly like PRT_REGISTER_CREATOR,
 * so the global registry takes it in on its next use.
 *
 * In a plugin library (plugrt_trt_library, PRT_COMPAT_LIBRARY), nothing is
 * registered with a host at static-initialization time: the creators are
 * collected, together with those a getCreators() / getPluginCreators()
 * function of the library returns (TensorRT's library entry points), and
 * handed to the host by prt_plugin_library_init when the library is loaded.
 * All or nothing: a creator that cannot be wrapped fails the load, with the
 * reason. */
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

#include "compat/compat.h"
#ifndef PRT_COMPAT_LIBRARY
#include "plugrt/registry.h"
#endif

#ifndef PRT_COMPAT_LIBRARY_NAME
#define PRT_COMPAT_LIBRARY_NAME "trt-compat"
#endif

namespace prt_compat
{
namespace
{

struct state {
    std::mutex mu;
    std::vector<creator *> creators;
    std::vector<std::string> errors; /* creators that could not be wrapped */
    std::vector<nvinfer1::IPluginCreator *> v1_list;
    std::vector<nvinfer1::IPluginCreatorInterface *> all_list;
    nvinfer1::IErrorRecorder *recorder = nullptr;
    void (*host_log)(prt_severity, const char *) = nullptr;
#ifdef PRT_COMPAT_LIBRARY
    /* The library is being unloaded: its creators went with the host's
     * registration. (In a program the wrappers live as long as the process:
     * the static-registration list points at them.) */
    ~state()
    {
        for (creator *c : creators) creator_free(c);
    }
#endif
};

state &S()
{
    static state s; /* first use may come from another file's static initializer */
    return s;
}

thread_local prt_exec *tl_exec = nullptr;
thread_local bool tl_asked = false;

void logf(prt_severity sev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void logf(prt_severity sev, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_message(sev, buf);
}

creator *find(const char *name, const char *version, const char *ns)
{
    if (!name || !version) return nullptr;
    std::string want_ns = ns ? ns : "";
    std::lock_guard<std::mutex> lock(S().mu);
    for (creator *c : S().creators) {
        const prt_plugin_creator *p = creator_get(c);
        if (std::strcmp(p->name, name) == 0 && std::strcmp(p->version, version) == 0 &&
            want_ns == p->plugin_namespace)
            return c;
    }
    return nullptr;
}

bool add(nvinfer1::IPluginCreatorInterface &c, const char *ns)
{
    std::string why;
    creator *w = creator_wrap(&c, ns, &why);
    try {
        std::lock_guard<std::mutex> lock(S().mu);
        if (!w) {
            S().errors.push_back(why);
        } else {
            S().creators.push_back(w);
        }
    } catch (...) {
        return false;
    }
    if (!w) {
        logf(PRT_SEVERITY_ERROR, "TensorRT-style creator not registered: %s", why.c_str());
        return false;
    }
#ifndef PRT_COMPAT_LIBRARY
    auto *node = new (std::nothrow) prt_static_creator{creator_get(w), nullptr};
    if (!node) return false;
    prt_static_creator_push(node);
#endif
    return true;
}

class registry final : public nvinfer1::IPluginRegistry
{
public:
#if NV_TENSORRT_MAJOR < 11
    bool registerCreator(nvinfer1::IPluginCreator &creator, nvinfer1::AsciiChar const *const ns) noexcept override
    {
        return add(creator, ns);
    }
    nvinfer1::IPluginCreator *const *getPluginCreatorList(int32_t *const nb) const noexcept override
    {
        std::lock_guard<std::mutex> lock(S().mu);
        try {
            S().v1_list.clear();
            for (creator *c : S().creators)
                if (auto *v1 = dynamic_cast<nvinfer1::IPluginCreator *>(creator_trt(c))) S().v1_list.push_back(v1);
        } catch (...) {
        }
        if (nb) *nb = static_cast<int32_t>(S().v1_list.size());
        return S().v1_list.data();
    }
    nvinfer1::IPluginCreator *getPluginCreator(nvinfer1::AsciiChar const *const name,
                                               nvinfer1::AsciiChar const *const version,
                                               nvinfer1::AsciiChar const *const ns) noexcept override
    {
        creator *c = find(name, version, ns);
        return c ? dynamic_cast<nvinfer1::IPluginCreator *>(creator_trt(c)) : nullptr;
    }
    bool deregisterCreator(nvinfer1::IPluginCreator const &creator) noexcept override
    {
        return deregisterCreator(static_cast<nvinfer1::IPluginCreatorInterface const &>(creator));
    }
#endif
    void setErrorRecorder(nvinfer1::IErrorRecorder *const recorder) noexcept override
    {
        S().recorder = recorder;
    }
    nvinfer1::IErrorRecorder *getErrorRecorder() const noexcept override
    {
        return S().recorder;
    }
    bool isParentSearchEnabled() const override
    {
        return true;
    }
    void setParentSearchEnabled(bool const) override {}
    nvinfer1::PluginLibraryHandle loadLibrary(nvinfer1::AsciiChar const *path) noexcept override
    {
#ifndef PRT_COMPAT_LIBRARY
        prt_library *lib = nullptr;
        prt_registry *r = prt_registry_global();
        if (prt_registry_load_library(r, path, &lib) != PRT_OK) {
            logf(PRT_SEVERITY_ERROR, "loadLibrary: %s", prt_registry_last_error(r));
            return nullptr;
        }
        return lib;
#else
        logf(PRT_SEVERITY_ERROR, "loadLibrary(%s): a plugin library cannot load other libraries; the host does",
             path ? path : "nullptr");
        return nullptr;
#endif
    }
    bool deregisterLibrary(nvinfer1::PluginLibraryHandle handle) noexcept override
    {
#ifndef PRT_COMPAT_LIBRARY
        return handle && prt_registry_unload_library(prt_registry_global(), static_cast<prt_library *>(handle)) == PRT_OK;
#else
        return false;
#endif
    }
    bool registerCreator(nvinfer1::IPluginCreatorInterface &creator,
                         nvinfer1::AsciiChar const *const ns) noexcept override
    {
        return add(creator, ns);
    }
    nvinfer1::IPluginCreatorInterface *const *getAllCreators(int32_t *const nb) const noexcept override
    {
        std::lock_guard<std::mutex> lock(S().mu);
        try {
            S().all_list.clear();
            for (creator *c : S().creators) S().all_list.push_back(creator_trt(c));
        } catch (...) {
        }
        if (nb) *nb = static_cast<int32_t>(S().all_list.size());
        return S().all_list.data();
    }
    nvinfer1::IPluginCreatorInterface *getCreator(nvinfer1::AsciiChar const *name, nvinfer1::AsciiChar const *version,
                                                  nvinfer1::AsciiChar const *const ns) noexcept override
    {
        creator *c = find(name, version, ns);
        return c ? creator_trt(c) : nullptr;
    }
    bool deregisterCreator(nvinfer1::IPluginCreatorInterface const &trt) noexcept override
    {
#ifndef PRT_COMPAT_LIBRARY
        std::lock_guard<std::mutex> lock(S().mu);
        for (size_t i = 0; i < S().creators.size(); i++) {
            const prt_plugin_creator *p = creator_get(S().creators[i]);
            if (creator_trt(S().creators[i]) != &trt) continue;
            if (prt_registry_remove(prt_registry_global(), p->name, p->version, p->plugin_namespace) != PRT_OK)
                return false;
            /* The wrapper stays allocated: the static list still points at it. */
            S().creators.erase(S().creators.begin() + static_cast<std::ptrdiff_t>(i));
            return true;
        }
#endif
        (void)trt;
        return false;
    }
    nvinfer1::IPluginResource *acquirePluginResource(nvinfer1::AsciiChar const *key,
                                                     nvinfer1::IPluginResource *) noexcept override
    {
        logf(PRT_SEVERITY_ERROR, "acquirePluginResource(\"%s\"): registry-wide plugin resources are not offered by "
                                 "plugrt's compatibility layer",
             key ? key : "");
        return nullptr;
    }
    int32_t releasePluginResource(nvinfer1::AsciiChar const *) noexcept override
    {
        return -1;
    }
    nvinfer1::IPluginCreatorInterface *const *getAllCreatorsRecursive(int32_t *const nb) noexcept override
    {
        return getAllCreators(nb);
    }
};

class logger final : public nvinfer1::ILogger
{
public:
    void log(Severity severity, nvinfer1::AsciiChar const *msg) noexcept override
    {
        prt_severity s = severity <= Severity::kERROR     ? PRT_SEVERITY_ERROR
                         : severity == Severity::kWARNING ? PRT_SEVERITY_WARNING
                         : severity == Severity::kINFO    ? PRT_SEVERITY_INFO
                                                          : PRT_SEVERITY_VERBOSE;
        log_message(s, msg ? msg : "");
    }
};

} // namespace

void log_message(prt_severity sev, const char *msg)
{
#ifndef PRT_COMPAT_LIBRARY
    prt_log(sev, "%s", msg);
#else
    if (S().host_log) S().host_log(sev, msg);
#endif
}

enqueue_scope::enqueue_scope(prt_exec *ex)
{
    tl_exec = ex;
    tl_asked = false;
}

enqueue_scope::~enqueue_scope()
{
    tl_exec = nullptr;
}

bool enqueue_scope::host_path_asked() const
{
    return tl_asked;
}

prt_status finish_enqueue(const enqueue_scope &scope, int32_t rc, const char *plugin, prt_exec *ex)
{
    char msg[512];
    if (ex->device == PRT_DEVICE_CPU && !scope.host_path_asked()) {
        snprintf(msg, sizeof msg,
                 "%s: this TensorRT-style plugin ran on a CPU context, but its enqueue has no host path (it never "
                 "called prt_compat_on_host()); run it on a CUDA context or add a host path "
                 "(docs/porting-from-tensorrt.md)",
                 plugin);
        ex->set_error(ex, msg);
        return PRT_STATUS_UNSUPPORTED;
    }
    if (rc != 0) {
        snprintf(msg, sizeof msg, "%s: enqueue returned %d", plugin, static_cast<int>(rc));
        ex->set_error(ex, msg);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    return PRT_OK;
}

} // namespace prt_compat

extern "C" int prt_compat_on_host(void)
{
    prt_compat::tl_asked = true;
    return prt_compat::tl_exec && prt_compat::tl_exec->device == PRT_DEVICE_CPU;
}

extern "C" prt_exec *prt_compat_exec(void)
{
    return prt_compat::tl_exec;
}

extern "C" nvinfer1::IPluginRegistry *getPluginRegistry() noexcept
{
    static prt_compat::registry r;
    return &r;
}

extern "C" nvinfer1::ILogger *getLogger() noexcept
{
    static prt_compat::logger l;
    return &l;
}

extern "C" bool initLibNvInferPlugins(void *, char const *)
{
    return true; /* plugrt's bundled plugins are registered statically */
}

#ifdef PRT_COMPAT_LIBRARY
/* TensorRT's plugin-library entry points, used when the library defines them. */
extern "C" nvinfer1::IPluginCreatorInterface *const *getCreators(int32_t &nbCreators) __attribute__((weak));
extern "C" nvinfer1::IPluginCreator *const *getPluginCreators(int32_t &nbCreators) __attribute__((weak));

namespace
{
std::vector<const prt_plugin_creator *> g_list;
bool g_collected = false;
std::mutex g_collect_mu; /* the entry may be called by two registries at once */

void collect(nvinfer1::IPluginCreatorInterface *const *list, int32_t nb)
{
    for (int32_t i = 0; list && i < nb; i++) {
        bool seen = false;
        if (!list[i]) continue;
        {
            std::lock_guard<std::mutex> lock(prt_compat::S().mu);
            for (prt_compat::creator *c : prt_compat::S().creators)
                if (prt_compat::creator_trt(c) == list[i]) seen = true;
        }
        if (!seen) prt_compat::add(*list[i], "");
    }
}
} // namespace

extern "C" PRT_LIBRARY_EXPORT prt_status prt_plugin_library_init(const prt_host_api *host, prt_library_desc *out,
                                                                 prt_msg *err)
{
    prt_compat::state &s = prt_compat::S();
    if (host && host->struct_size >= offsetof(prt_host_api, log) + sizeof(host->log)) s.host_log = host->log;
    std::lock_guard<std::mutex> collecting(g_collect_mu);
    try {
        if (!g_collected) {
            int32_t nb = 0;
            if (getCreators) {
                auto *list = getCreators(nb);
                collect(list, nb);
            }
            if (getPluginCreators) {
                nb = 0;
                auto *list = getPluginCreators(nb);
                std::vector<nvinfer1::IPluginCreatorInterface *> v(list, list ? list + (nb > 0 ? nb : 0) : list);
                collect(v.data(), static_cast<int32_t>(v.size()));
            }
            std::lock_guard<std::mutex> lock(s.mu);
            for (prt_compat::creator *c : s.creators) g_list.push_back(prt_compat::creator_get(c));
            g_collected = true;
        }
    } catch (...) {
        prt_msg_set(err, "%s: out of memory collecting its creators", PRT_COMPAT_LIBRARY_NAME);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    if (!s.errors.empty()) {
        prt_msg_set(err, "%s: %zu TensorRT-style creator%s could not be registered; the first: %s",
                    PRT_COMPAT_LIBRARY_NAME, s.errors.size(), s.errors.size() == 1 ? "" : "s", s.errors[0].c_str());
        return PRT_STATUS_PLUGIN_ERROR;
    }
    out->struct_size = sizeof(*out);
    out->abi_version = PRT_ABI_VERSION;
    out->name = PRT_COMPAT_LIBRARY_NAME;
    out->nb_creators = static_cast<int32_t>(g_list.size());
    out->reserved_ = 0;
    out->creators = g_list.empty() ? nullptr : g_list.data();
    return PRT_OK;
}
#endif
