/* compat/creator.cpp - a TensorRT creator (IPluginCreator for V2 plugins,
 * IPluginCreatorV3One for V3) seen as a plugrt creator.
 *
 * getFieldNames() becomes the plugrt schema: every field optional (TensorRT
 * creators supply their own defaults), typed as declared, and counted: a
 * declared length N > 0 allows 1..N values, except kCHAR and kUNKNOWN (text
 * and raw bytes, declared with a nominal length), which are unbounded like a
 * length <= 0. There are no ranges. The host validates every collection
 * against it, so createPlugin never sees an undeclared field. */
#include <cstring>
#include <mutex>
#include <new>

#include "compat/compat.h"

namespace prt_compat
{

struct creator {
    prt_plugin_creator c{};
    nvinfer1::IPluginCreatorInterface *trt = nullptr;
    nvinfer1::IPluginCreator *v1 = nullptr;
    nvinfer1::IPluginCreatorV3One *v3 = nullptr;
    std::string name, version, ns;
    std::vector<std::string> field_names;
    std::vector<prt_field_schema> schema;
    /* plugrt may call a creator from several threads at once; TensorRT
     * creators often keep state (a parameter struct filled by createPlugin),
     * so their calls are serialized. */
    std::mutex mu;
};

namespace
{

creator *W(const prt_plugin_creator *c)
{
    return static_cast<creator *>(c->user);
}

prt_status plugin_from_v2(const creator *w, nvinfer1::IPluginV2 *p, const char *call, prt_blob_plugin **out,
                          prt_msg *err)
{
    if (!p) {
        prt_msg_set(err, "%s returned nullptr (the plugin refused its input)", call);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    auto *d = dynamic_cast<nvinfer1::IPluginV2DynamicExt *>(p);
    if (!d) {
        prt_msg_set(err, "%s gave a plugin that is not an IPluginV2DynamicExt (an implicit-batch IPluginV2, "
                         "IPluginV2Ext or IPluginV2IOExt); plugrt runs IPluginV2DynamicExt and IPluginV3 plugins",
                    call);
        p->destroy();
        return PRT_STATUS_UNSUPPORTED;
    }
    d->setPluginNamespace(w->ns.c_str());
    return blob_wrap(d, out, err);
}

prt_status create_blob(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out, prt_msg *err)
{
    creator *w = W(c);
    field_list fl;
    prt_status s = fields_to_trt(fc, &fl, err);
    if (s != PRT_OK) return s;
    std::lock_guard<std::mutex> lock(w->mu);
    return plugin_from_v2(w, w->v1->createPlugin(w->name.c_str(), &fl.fc), "createPlugin", out, err);
}

prt_status deserialize_blob(const prt_plugin_creator *c, const void *data, size_t len, prt_blob_plugin **out,
                            prt_msg *err)
{
    creator *w = W(c);
    std::lock_guard<std::mutex> lock(w->mu);
    return plugin_from_v2(w, w->v1->deserializePlugin(w->name.c_str(), data, len), "deserializePlugin", out, err);
}

prt_status create_field(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase, prt_field_plugin **out,
                        prt_msg *err)
{
    creator *w = W(c);
    field_list fl;
    prt_status s = fields_to_trt(fc, &fl, err);
    if (s != PRT_OK) return s;
    std::lock_guard<std::mutex> lock(w->mu);
    nvinfer1::TensorRTPhase ph =
        phase == PRT_PHASE_RUNTIME ? nvinfer1::TensorRTPhase::kRUNTIME : nvinfer1::TensorRTPhase::kBUILD;
    nvinfer1::IPluginV3 *p = w->v3->createPlugin(w->name.c_str(), &fl.fc, ph);
    if (!p) {
        prt_msg_set(err, "createPlugin(%s) returned nullptr (the plugin refused its fields)",
                    phase == PRT_PHASE_RUNTIME ? "kRUNTIME" : "kBUILD");
        return PRT_STATUS_PLUGIN_ERROR;
    }
    return field_wrap(p, w->name.c_str(), out, err);
}

bool build_schema(creator *w, const nvinfer1::PluginFieldCollection *fc, std::string *why)
{
    if (!fc) return true; /* no fields */
    if (fc->nbFields < 0 || (fc->nbFields > 0 && !fc->fields)) {
        *why = "getFieldNames() gave a collection with a negative nbFields or no field array";
        return false;
    }
    w->field_names.reserve(static_cast<size_t>(fc->nbFields));
    for (int32_t i = 0; i < fc->nbFields; i++) {
        const nvinfer1::PluginField &f = fc->fields[i];
        prt_field_schema e{};
        if (!f.name || !*f.name) {
            *why = "getFieldNames(): field " + std::to_string(i) + " has no name";
            return false;
        }
        if (!to_prt(f.type, &e.type)) {
            *why = std::string("getFieldNames(): field \"") + f.name + "\" has type " + trt_field_type_name(f.type) +
                   ", which plugrt fields cannot carry (kFLOAT16, kFLOAT32, kFLOAT64, kINT8, kINT16, kINT32, "
                   "kINT64, kCHAR, kDIMS and kUNKNOWN as bytes can)";
            return false;
        }
        w->field_names.emplace_back(f.name);
        e.required = 0;
        e.min_count = 1;
        e.max_count = (f.length <= 0 || f.type == nvinfer1::PluginFieldType::kCHAR ||
                       f.type == nvinfer1::PluginFieldType::kUNKNOWN)
                          ? PRT_COUNT_UNBOUNDED
                          : f.length;
        e.bounds = PRT_BOUND_NONE;
        e.doc = "declared by the TensorRT creator's getFieldNames()";
        w->schema.push_back(e);
    }
    for (size_t i = 0; i < w->schema.size(); i++) w->schema[i].name = w->field_names[i].c_str();
    return true;
}

} // namespace

creator *creator_wrap(nvinfer1::IPluginCreatorInterface *c, const char *plugin_namespace, std::string *why)
{
    creator *w = new (std::nothrow) creator;
    if (!w) {
        *why = "out of memory";
        return nullptr;
    }
    try {
        const char *name = nullptr, *version = nullptr;
        const nvinfer1::PluginFieldCollection *fields = nullptr;
        w->trt = c;
        if ((w->v1 = dynamic_cast<nvinfer1::IPluginCreator *>(c))) {
            name = w->v1->getPluginName();
            version = w->v1->getPluginVersion();
            fields = w->v1->getFieldNames();
        } else if ((w->v3 = dynamic_cast<nvinfer1::IPluginCreatorV3One *>(c))) {
            name = w->v3->getPluginName();
            version = w->v3->getPluginVersion();
            fields = w->v3->getFieldNames();
        } else {
            nvinfer1::InterfaceInfo info = c->getInterfaceInfo();
            *why = std::string("a creator of kind \"") + (info.kind ? info.kind : "?") +
                   "\"; plugrt takes IPluginCreator and IPluginCreatorV3One";
            delete w;
            return nullptr;
        }
        if (!name || !*name || !version || !*version) {
            *why = "a creator without a plugin name or version";
            delete w;
            return nullptr;
        }
        w->name = name;
        w->version = version;
        w->ns = plugin_namespace ? plugin_namespace : "";
        if (!build_schema(w, fields, why)) {
            *why = w->name + " version " + w->version + ": " + *why;
            delete w;
            return nullptr;
        }
    } catch (...) {
        *why = "out of memory";
        delete w;
        return nullptr;
    }
    w->c = prt_plugin_creator{
        .struct_size = sizeof(prt_plugin_creator),
        .abi_version = PRT_ABI_VERSION,
        .name = w->name.c_str(),
        .version = w->version.c_str(),
        .plugin_namespace = w->ns.c_str(),
        .style = w->v1 ? PRT_STYLE_BLOB : PRT_STYLE_FIELD,
        .nb_fields = static_cast<int32_t>(w->schema.size()),
        .fields = w->schema.empty() ? nullptr : w->schema.data(),
        .field_schema_size = sizeof(prt_field_schema),
        .reserved_ = 0,
        .create_blob = w->v1 ? create_blob : nullptr,
        .deserialize_blob = w->v1 ? deserialize_blob : nullptr,
        .create_field = w->v3 ? create_field : nullptr,
        .doc = w->v1 ? "TensorRT IPluginCreator (IPluginV2DynamicExt) through plugrt's compatibility layer"
                     : "TensorRT IPluginCreatorV3One (IPluginV3) through plugrt's compatibility layer",
        .user = w,
    };
    return w;
}

void creator_free(creator *c)
{
    delete c;
}

const prt_plugin_creator *creator_get(const creator *c)
{
    return &c->c;
}

nvinfer1::IPluginCreatorInterface *creator_trt(const creator *c)
{
    return c->trt;
}

} // namespace prt_compat
