/* core/file.c - reading and replacing whole files safely (core.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    if (S_ISSOCK(m)) return "a socket";
    return "something else";
}

prt_status prt__read_file(const char *path, void **data, size_t *len, char *err, size_t cap)
{
    int fd, fl;
    struct stat st;
    uint8_t *buf;
    size_t n, got = 0;
    if (!path) {
        snprintf(err, cap, "no file name given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    /* Non-blocking: opening a FIFO for reading would otherwise wait for a
     * writer before the check below could refuse it. */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, cap, "cannot open \"%s\": %s", path, strerror(errno));
        return PRT_STATUS_IO_ERROR;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, cap, "cannot read \"%s\": expected a regular file, found %s", path, kind_of(st.st_mode));
        close(fd);
        return PRT_STATUS_IO_ERROR;
    }
    fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)PTRDIFF_MAX) {
        snprintf(err, cap, "cannot read \"%s\": its size %lld is too large", path, (long long)st.st_size);
        close(fd);
        return PRT_STATUS_IO_ERROR;
    }
    n = (size_t)st.st_size;
    buf = prt__malloc(n ? n : 1);
    if (!buf) {
        snprintf(err, cap, "out of memory reading \"%s\" (%zu bytes)", path, n);
        close(fd);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(err, cap, "cannot read \"%s\": %s after %zu of %zu bytes", path,
                     r < 0 ? strerror(errno) : "it ended", got, n);
            prt__free(buf);
            close(fd);
            return PRT_STATUS_IO_ERROR;
        }
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = n;
    return PRT_OK;
}

prt_status prt__write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t cap)
{
    char tmp[4096];
    const uint8_t *p = data;
    size_t done = 0;
    struct stat st;
    mode_t mode = 0644;
    int fd;
    if (!path || !path[0]) {
        snprintf(err, cap, "no file name given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= sizeof tmp) {
        snprintf(err, cap, "path too long: %s", path);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    /* A regular file being replaced keeps its permission bits. */
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) mode = st.st_mode & 0777;
    fd = mkstemp(tmp); /* O_CREAT | O_EXCL: never an existing file or link */
    if (fd < 0) {
        snprintf(err, cap, "cannot create a temporary file beside \"%s\": %s", path, strerror(errno));
        return PRT_STATUS_IO_ERROR;
    }
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            snprintf(err, cap, "cannot write \"%s\": %s", tmp, w < 0 ? strerror(errno) : "no progress");
            goto fail;
        }
        done += (size_t)w;
    }
    if (fchmod(fd, mode) != 0 || fsync(fd) != 0) {
        snprintf(err, cap, "cannot write \"%s\": %s", tmp, strerror(errno));
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        snprintf(err, cap, "cannot write \"%s\": %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        snprintf(err, cap, "cannot rename \"%s\" to \"%s\": %s", tmp, path, strerror(errno));
        goto fail;
    }
    return PRT_OK;
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
    return PRT_STATUS_IO_ERROR;
}
