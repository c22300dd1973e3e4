/* engine/network.c - the network definition API (plugrt/network.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/netdef.h"

prt_status prt_network_create(prt_registry *r, prt_network **out)
{
    prt_network *net;
    if (!out) return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_network_create: out is NULL");
    net = prt__calloc(1, sizeof *net);
    if (!net) return prt__err(r, PRT_STATUS_OUT_OF_MEMORY, "out of memory creating a network");
    net->registry = r ? r : prt_registry_global();
    *out = net;
    return PRT_OK;
}

static void free_tensor(prt__net_tensor *t)
{
    prt__free(t->name);
    prt__free(t->data);
}

static void free_layer(prt__net_layer *l)
{
    prt__free(l->name);
    prt__free(l->plugin);
    prt__free(l->version);
    prt__free(l->plugin_namespace);
    prt_owned_fields_free(l->fields);
    prt__free(l->in);
    prt__free(l->out);
}

void prt_network_destroy(prt_network *net)
{
    int32_t i;
    if (!net) return;
    for (i = 0; i < net->nb_tensors; i++) free_tensor(&net->tensors[i]);
    for (i = 0; i < net->nb_layers; i++) free_layer(&net->layers[i]);
    prt__free(net->tensors);
    prt__free(net->layers);
    prt__free(net->outputs);
    prt__hmap_free(&net->names);
    prt__hmap_free(&net->layer_names);
    prt__err_clear(net);
    prt__free(net);
}

int32_t prt__network_find(const prt_network *net, const char *name)
{
    if (!name) return -1;
    return prt__hmap_get(&net->names, name);
}

/* Room in the name index for `extra` more tensors, so that adding them
 * cannot fail half-way. */
static int reserve_names(prt_network *net, int32_t extra)
{
    return prt__hmap_reserve(&net->names, (size_t)net->nb_tensors + (size_t)extra) == 0;
}

/* Grow an array so that one more element fits. */
static int reserve(void **arr, int32_t *cap, int32_t nb, int32_t extra, size_t elem)
{
    void *p;
    int32_t ncap;
    if (nb + extra <= *cap) return 1;
    ncap = *cap ? *cap * 2 : 8;
    while (ncap < nb + extra) ncap *= 2;
    p = prt__realloc(*arr, (size_t)ncap * elem);
    if (!p) return 0;
    *arr = p;
    *cap = ncap;
    return 1;
}

static prt_status check_name(prt_network *net, const char *what, const char *name)
{
    if (!name || !name[0]) return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "%s needs a non-empty name", what);
    if (strlen(name) > 4096)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "%s name is %zu bytes long; at most 4096 allowed",
                        what, strlen(name));
    if (prt__network_find(net, name) >= 0)
        return prt__err(net, PRT_STATUS_ALREADY_EXISTS, "%s \"%s\": a tensor of that name already exists",
                        what, name);
    return PRT_OK;
}

static prt_status check_dims(prt_network *net, const char *what, const char *name, const prt_dims *dims,
                             int allow_dynamic)
{
    int32_t i;
    if (!dims) return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "%s \"%s\": no dims given", what, name);
    if (dims->nb < 0 || dims->nb > PRT_MAX_DIMS)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "%s \"%s\": %d dims; expected 0 to %d", what, name,
                        dims->nb, PRT_MAX_DIMS);
    for (i = 0; i < dims->nb; i++) {
        if (dims->d[i] == PRT_DIM_DYNAMIC && allow_dynamic) continue;
        if (dims->d[i] < 0)
            return prt__err(net, PRT_STATUS_INVALID_ARGUMENT,
                            "%s \"%s\": dim %d is %" PRId64 "; expected >= 0%s", what, name, i, dims->d[i],
                            allow_dynamic ? " or -1 (dynamic)" : "");
    }
    return PRT_OK;
}

static prt_status check_dtype(prt_network *net, const char *what, const char *name, prt_dtype dtype)
{
    if ((int)dtype < 0 || dtype >= PRT_DTYPE_COUNT_)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "%s \"%s\": unknown dtype %d", what, name, (int)dtype);
    return PRT_OK;
}

/* Append a tensor (room reserved before) that owns the name `nm`; no producer. */
static prt__net_tensor *push_tensor(prt_network *net, char *nm, prt__tensor_kind kind, prt_dtype dtype,
                                    const prt_dims *dims)
{
    prt__net_tensor *t = &net->tensors[net->nb_tensors];
    (void)prt__hmap_put(&net->names, nm, net->nb_tensors++); /* room reserved, name checked unique */
    memset(t, 0, sizeof *t);
    t->name = nm;
    t->kind = kind;
    t->dtype = dtype;
    t->dims = *dims;
    t->dims.reserved_ = 0;
    t->producer = -1;
    return t;
}

prt_status prt_network_add_input(prt_network *net, const char *name, prt_dtype dtype, const prt_dims *dims)
{
    prt_status s;
    char *nm;
    if (!net) return PRT_STATUS_INVALID_ARGUMENT;
    if ((s = check_name(net, "input", name)) != PRT_OK) return s;
    if ((s = check_dtype(net, "input", name, dtype)) != PRT_OK) return s;
    if ((s = check_dims(net, "input", name, dims, 1)) != PRT_OK) return s;
    if (!reserve((void **)&net->tensors, &net->cap_tensors, net->nb_tensors, 1, sizeof *net->tensors) ||
        !reserve_names(net, 1))
        return prt__err(net, PRT_STATUS_OUT_OF_MEMORY, "out of memory adding input \"%s\"", name);
    nm = prt__strdup(name);
    if (!nm) return prt__err(net, PRT_STATUS_OUT_OF_MEMORY, "out of memory adding input \"%s\"", name);
    push_tensor(net, nm, PRT__TENSOR_INPUT, dtype, dims);
    net->nb_inputs++;
    return PRT_OK;
}

prt_status prt_network_add_shape_input(prt_network *net, const char *name, prt_dtype dtype, const prt_dims *dims)
{
    prt_status s;
    int64_t n;
    char d[160];
    if (!net) return PRT_STATUS_INVALID_ARGUMENT;
    if ((s = check_dims(net, "shape-value input", name ? name : "(null)", dims, 0)) != PRT_OK) return s;
    n = prt_dims_volume(dims);
    if ((dtype != PRT_DTYPE_I32 && dtype != PRT_DTYPE_I64) || dims->nb > 1 || n > PRT_MAX_DIMS)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT,
                        "shape-value input \"%s\" is %s %s; expected int32 or int64, 0-D or 1-D, at most %d elements",
                        name ? name : "(null)", prt_dtype_name(dtype), prt_dims_str(dims, d, sizeof d), PRT_MAX_DIMS);
    if ((s = prt_network_add_input(net, name, dtype, dims)) != PRT_OK) return s;
    net->tensors[net->nb_tensors - 1].shape_values = 1;
    return PRT_OK;
}

prt_status prt_network_add_constant(prt_network *net, const char *name, prt_dtype dtype, const prt_dims *dims,
                                    const void *data, size_t nbytes)
{
    prt_status s;
    prt__net_tensor *t;
    char *nm;
    void *copy;
    int64_t vol;
    if (!net) return PRT_STATUS_INVALID_ARGUMENT;
    if ((s = check_name(net, "constant", name)) != PRT_OK) return s;
    if ((s = check_dtype(net, "constant", name, dtype)) != PRT_OK) return s;
    if ((s = check_dims(net, "constant", name, dims, 0)) != PRT_OK) return s;
    vol = prt_dims_volume(dims);
    if (vol < 0 || (uint64_t)vol > SIZE_MAX / prt_dtype_size(dtype))
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "constant \"%s\": dims are too large", name);
    if ((size_t)vol * prt_dtype_size(dtype) != nbytes)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT,
                        "constant \"%s\": %" PRId64 " elements of %s need %zu bytes, got %zu", name, vol,
                        prt_dtype_name(dtype), (size_t)vol * prt_dtype_size(dtype), nbytes);
    if (nbytes && !data)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "constant \"%s\": no data given", name);
    if (!reserve((void **)&net->tensors, &net->cap_tensors, net->nb_tensors, 1, sizeof *net->tensors) ||
        !reserve_names(net, 1))
        return prt__err(net, PRT_STATUS_OUT_OF_MEMORY, "out of memory adding constant \"%s\"", name);
    nm = prt__strdup(name);
    copy = prt__malloc(nbytes);
    if (!nm || !copy) {
        prt__free(nm);
        prt__free(copy);
        return prt__err(net, PRT_STATUS_OUT_OF_MEMORY, "out of memory adding constant \"%s\" (%zu bytes)", name,
                        nbytes);
    }
    if (nbytes) memcpy(copy, data, nbytes);
    t = push_tensor(net, nm, PRT__TENSOR_CONSTANT, dtype, dims);
    t->data = copy;
    t->nbytes = nbytes;
    return PRT_OK;
}

static int layer_name_taken(const prt_network *net, const char *name)
{
    return prt__hmap_get(&net->layer_names, name) >= 0;
}

static prt_status add_layer(prt_network *net, const char *layer_name, const char *plugin, const char *version,
                            const char *plugin_namespace, const prt_fields *fields, const prt__plugin *proto,
                            const char *const *inputs, int32_t nb_inputs, const char *const *outputs,
                            int32_t nb_outputs);

prt_status prt_network_add_layer(prt_network *net, const char *layer_name, const char *plugin,
                                 const char *version, const char *plugin_namespace, const prt_fields *fields,
                                 const char *const *inputs, int32_t nb_inputs, const char *const *outputs,
                                 int32_t nb_outputs)
{
    return add_layer(net, layer_name, plugin, version, plugin_namespace, fields, NULL, inputs, nb_inputs, outputs,
                     nb_outputs);
}

prt_status prt__network_add_proto_layer(prt_network *net, const char *layer_name, const prt__plugin *proto,
                                        const char *const *inputs, int32_t nb_inputs, const char *const *outputs,
                                        int32_t nb_outputs)
{
    const prt_plugin_creator *c = proto ? proto->creator : NULL;
    if (!net || !c) return PRT_STATUS_INVALID_ARGUMENT;
    return add_layer(net, layer_name, c->name, c->version, c->plugin_namespace, NULL, proto, inputs, nb_inputs,
                     outputs, nb_outputs);
}

/* The one path of both: a borrowed proto, or a creator found in the
 * registry with validated fields. */
static prt_status add_layer(prt_network *net, const char *layer_name, const char *plugin, const char *version,
                            const char *plugin_namespace, const prt_fields *fields, const prt__plugin *proto,
                            const char *const *inputs, int32_t nb_inputs, const char *const *outputs,
                            int32_t nb_outputs)
{
    static const prt_fields no_fields = {NULL, 0, 0};
    const prt_plugin_creator *c = NULL;
    prt_owned_fields *owned = NULL;
    prt__net_layer l;
    char autoname[256];
    char err[PRT_ERR_CAP];
    const char *lname;
    prt_status s;
    int32_t i, j;

    if (!net) return PRT_STATUS_INVALID_ARGUMENT;
    if (!plugin || !plugin[0]) return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "layer needs a plugin name");
    if (!version) version = "1";
    if (!plugin_namespace) plugin_namespace = "";
    if (layer_name) {
        lname = layer_name;
    } else {
        int n = 0;
        do snprintf(autoname, sizeof autoname, "%.200s_%d", plugin, n++);
        while (layer_name_taken(net, autoname));
        lname = autoname;
    }
    if (!lname[0]) return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "layer of plugin %s: empty layer name", plugin);
    if (layer_name_taken(net, lname))
        return prt__err(net, PRT_STATUS_ALREADY_EXISTS, "layer \"%s\": a layer of that name already exists", lname);
    if (nb_inputs < 0 || nb_inputs > 4096 || (nb_inputs > 0 && !inputs))
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "layer \"%s\": bad input list (%d names)", lname,
                        nb_inputs);
    if (nb_outputs < 1 || nb_outputs > 4096 || !outputs)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "layer \"%s\": needs at least one output name, got %d",
                        lname, nb_outputs);
    for (i = 0; i < nb_inputs; i++) {
        if (inputs[i] && !inputs[i][0]) continue; /* an absent optional input */
        if (!inputs[i] || prt__network_find(net, inputs[i]) < 0)
            return prt__err(net, PRT_STATUS_NOT_FOUND, "layer \"%s\": input %d names tensor \"%s\", which does not exist",
                            lname, i, inputs[i] ? inputs[i] : "(null)");
    }
    /* Outputs left out at the end (empty names) are not made. */
    while (nb_outputs > 1 && outputs[nb_outputs - 1] && !outputs[nb_outputs - 1][0]) nb_outputs--;
    for (i = 0; i < nb_outputs; i++) {
        if (outputs[i] && !outputs[i][0])
            return prt__err(net, PRT_STATUS_INVALID_ARGUMENT,
                            "layer \"%s\": output %d has an empty name; only outputs at the end may be left out", lname,
                            i);
        if (!outputs[i] || !outputs[i][0] || strlen(outputs[i]) > 4096)
            return prt__err(net, PRT_STATUS_INVALID_ARGUMENT, "layer \"%s\": output %d needs a name of 1 to 4096 bytes",
                            lname, i);
        if (prt__network_find(net, outputs[i]) >= 0)
            return prt__err(net, PRT_STATUS_ALREADY_EXISTS,
                            "layer \"%s\": output \"%s\": a tensor of that name already exists", lname, outputs[i]);
        for (j = 0; j < i; j++)
            if (strcmp(outputs[i], outputs[j]) == 0)
                return prt__err(net, PRT_STATUS_ALREADY_EXISTS, "layer \"%s\": output \"%s\" is named twice", lname,
                                outputs[i]);
    }
    if (!proto) {
        s = prt_registry_find(net->registry, plugin, version, plugin_namespace, &c, NULL);
        if (s != PRT_OK)
            return prt__err(net, s, "layer \"%s\": %s", lname, prt_registry_last_error(net->registry));
        err[0] = 0;
        s = prt_fields_validate(c, fields ? fields : &no_fields, &owned, err, sizeof err);
        if (s != PRT_OK) return prt__err(net, s, "layer \"%s\": %s", lname, err);
    }

    memset(&l, 0, sizeof l);
    l.name = prt__strdup(lname);
    l.plugin = prt__strdup(plugin);
    l.version = prt__strdup(version);
    l.plugin_namespace = prt__strdup(plugin_namespace);
    l.fields = owned;
    l.nb_in = nb_inputs;
    l.nb_out = nb_outputs;
    l.in = prt__calloc((size_t)(nb_inputs ? nb_inputs : 1), sizeof(int32_t));
    l.out = prt__calloc((size_t)nb_outputs, sizeof(int32_t));
    if (!l.name || !l.plugin || !l.version || !l.plugin_namespace || !l.in || !l.out ||
        !reserve((void **)&net->layers, &net->cap_layers, net->nb_layers, 1, sizeof *net->layers) ||
        prt__hmap_reserve(&net->layer_names, (size_t)net->nb_layers + 1) != 0 ||
        !reserve((void **)&net->tensors, &net->cap_tensors, net->nb_tensors, nb_outputs, sizeof *net->tensors) ||
        !reserve_names(net, nb_outputs))
        goto oom;
    for (i = 0; i < nb_inputs; i++) l.in[i] = inputs[i][0] ? prt__network_find(net, inputs[i]) : -1;
    /* Name copies first, so that nothing below can fail. */
    {
        char **names = prt__calloc((size_t)nb_outputs, sizeof(char *));
        if (!names) goto oom;
        for (i = 0; i < nb_outputs; i++) {
            names[i] = prt__strdup(outputs[i]);
            if (!names[i]) {
                for (j = 0; j < i; j++) prt__free(names[j]);
                prt__free(names);
                goto oom;
            }
        }
        for (i = 0; i < nb_outputs; i++) {
            prt__net_tensor *t = &net->tensors[net->nb_tensors];
            memset(t, 0, sizeof *t);
            t->name = names[i];
            t->kind = PRT__TENSOR_LAYER;
            t->producer = net->nb_layers;
            t->producer_out = i;
            (void)prt__hmap_put(&net->names, t->name, net->nb_tensors); /* room reserved */
            l.out[i] = net->nb_tensors++;
        }
        prt__free(names);
    }
    (void)prt__hmap_put(&net->layer_names, l.name, net->nb_layers); /* room reserved, name checked unique */
    l.proto = proto;
    net->layers[net->nb_layers++] = l;
    return PRT_OK;
oom:
    free_layer(&l);
    return prt__err(net, PRT_STATUS_OUT_OF_MEMORY, "out of memory adding layer \"%s\"", lname);
}

prt_status prt_network_mark_output(prt_network *net, const char *name)
{
    int32_t i, t;
    if (!net) return PRT_STATUS_INVALID_ARGUMENT;
    t = prt__network_find(net, name);
    if (t < 0)
        return prt__err(net, PRT_STATUS_NOT_FOUND, "output \"%s\": no tensor of that name", name ? name : "(null)");
    if (net->tensors[t].kind != PRT__TENSOR_LAYER)
        return prt__err(net, PRT_STATUS_INVALID_ARGUMENT,
                        "output \"%s\": only layer outputs can be network outputs, this one is %s", name,
                        net->tensors[t].kind == PRT__TENSOR_INPUT ? "an input" : "a constant");
    for (i = 0; i < net->nb_outputs; i++)
        if (net->outputs[i] == t)
            return prt__err(net, PRT_STATUS_ALREADY_EXISTS, "output \"%s\" is already marked", name);
    if (!reserve((void **)&net->outputs, &net->cap_outputs, net->nb_outputs, 1, sizeof *net->outputs))
        return prt__err(net, PRT_STATUS_OUT_OF_MEMORY, "out of memory marking output \"%s\"", name);
    net->outputs[net->nb_outputs++] = t;
    net->tensors[t].is_output = 1;
    return PRT_OK;
}

int32_t prt_network_nb_inputs(const prt_network *net) { return net ? net->nb_inputs : 0; }
int32_t prt_network_nb_outputs(const prt_network *net) { return net ? net->nb_outputs : 0; }
int32_t prt_network_nb_layers(const prt_network *net) { return net ? net->nb_layers : 0; }

const char *prt_network_input_name(const prt_network *net, int32_t i)
{
    int32_t k, n = 0;
    if (!net || i < 0) return NULL;
    for (k = 0; k < net->nb_tensors; k++)
        if (net->tensors[k].kind == PRT__TENSOR_INPUT && n++ == i) return net->tensors[k].name;
    return NULL;
}

const char *prt_network_output_name(const prt_network *net, int32_t i)
{
    if (!net || i < 0 || i >= net->nb_outputs) return NULL;
    return net->tensors[net->outputs[i]].name;
}

const char *prt_network_layer_name(const prt_network *net, int32_t i)
{
    if (!net || i < 0 || i >= net->nb_layers) return NULL;
    return net->layers[i].name;
}

prt_registry *prt_network_registry(const prt_network *net) { return net ? net->registry : NULL; }

const char *prt_network_last_error(const prt_network *net) { return prt__err_get(net); }
