/*
 * registry/host.c - the host table every plugin gets (prt_host_api): handed
 * to plugin libraries at load time, returned by prt_host_api_get() to plugin
 * code compiled into the application or libplugrt.
 */
#include <stdint.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "core/core.h"
#include "engine/subnet.h"

static void host_log(prt_severity sev, const char *msg)
{
    prt_log(sev, "%s", msg ? msg : "");
}

static void *host_alloc(size_t bytes)
{
    return prt__malloc(bytes);
}

static void host_free(void *p)
{
    prt__free(p);
}

static prt_status host_device_alloc(prt_device device, int32_t device_index, size_t bytes, void **out, prt_msg *err)
{
    char msg[PRT_ERR_CAP];
    prt_status st;
    void *p = NULL;
    if (!out) {
        prt_msg_set(err, "device_alloc: out is NULL");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (device == PRT_DEVICE_CPU) {
        /* 64-byte aligned, the block's own address kept just before it. */
        uintptr_t at;
        if (bytes > SIZE_MAX - 64 - sizeof(void *) || !(p = prt__malloc(bytes + 64 + sizeof(void *)))) {
            prt_msg_set(err, "device_alloc: out of host memory (%zu bytes)", bytes);
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        at = ((uintptr_t)p + sizeof(void *) + 63) & ~(uintptr_t)63;
        memcpy((void *)(at - sizeof(void *)), &p, sizeof p);
        *out = (void *)at;
        return PRT_OK;
    }
    if (device != PRT_DEVICE_CUDA) {
        prt_msg_set(err, "device_alloc: device %d is neither PRT_DEVICE_CPU (0) nor PRT_DEVICE_CUDA (1)", (int)device);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (device_index < 0 || device_index >= prt__cuda_device_count()) {
        prt_msg_set(err, "device_alloc: CUDA device %d does not exist (%d usable)", (int)device_index,
                    prt__cuda_device_count());
        return PRT_STATUS_NO_DEVICE;
    }
    st = prt__cuda_set_device(device_index, msg, sizeof msg);
    if (st == PRT_OK) st = prt__cuda_malloc(bytes ? bytes : 1, &p, msg, sizeof msg);
    if (st != PRT_OK) {
        prt_msg_set(err, "device_alloc: %zu bytes on CUDA device %d: %s", bytes, (int)device_index, msg);
        return st;
    }
    *out = p;
    return PRT_OK;
}

static void host_device_free(prt_device device, int32_t device_index, void *p)
{
    char msg[PRT_ERR_CAP];
    if (!p) return;
    if (device == PRT_DEVICE_CPU) {
        void *block;
        memcpy(&block, (char *)p - sizeof(void *), sizeof block);
        prt__free(block);
    } else if (device == PRT_DEVICE_CUDA && prt__cuda_set_device(device_index, msg, sizeof msg) == PRT_OK) {
        prt__cuda_free(p);
    }
}

static int32_t host_device_count(prt_device device)
{
    if (device == PRT_DEVICE_CPU) return 1;
    return device == PRT_DEVICE_CUDA ? (int32_t)prt__cuda_device_count() : 0;
}

static const prt_host_api host_api = {
    .struct_size = (uint32_t)sizeof(prt_host_api),
    .abi_version = PRT_ABI_VERSION,
    .log = host_log,
    .dims_str = prt_dims_str,
    .status_name = prt_status_name,
    .status_str = prt_status_str,
    .alloc = host_alloc,
    .free = host_free,
    .device_alloc = host_device_alloc,
    .device_free = host_device_free,
    .device_count = host_device_count,
    .subnet_build = prt__subnet_build,
    .subnet_describe = prt__subnet_describe,
    .subnet_run = prt__subnet_run,
    .subnet_destroy = prt__subnet_destroy,
};

const prt_host_api *prt_host_api_get(void)
{
    return &host_api;
}
