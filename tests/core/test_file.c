/* tests/core/test_file.c - reading only regular files without blocking;
 * replacing files through a unique temporary file and a rename. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "prt_test.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int same_text(const char *path, const char *text)
{
    void *d = NULL;
    size_t n = 0;
    char err[256];
    int ok;
    if (prt__read_file(path, &d, &n, err, sizeof err) != PRT_OK) return 0;
    ok = n == strlen(text) && memcmp(d, text, n) == 0;
    prt__free(d);
    return ok;
}

static int nb_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* A FIFO with no writer: opening it for reading would wait forever; the
 * reader refuses it at once (the runner's time limit fails a hang). */
TEST(fifo_is_refused_without_blocking)
{
    char dir[64] = "/tmp/prt_file_XXXXXX", fifo[128], err[512] = "";
    void *d = (void *)0x1;
    size_t n = 7;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_EQ_INT(prt__read_file(fifo, &d, &n, err, sizeof err), PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(err, "expected a regular file, found a FIFO");
    CHECK(d == (void *)0x1 && n == 7);
    CHECK_EQ_INT(prt__read_file(dir, &d, &n, err, sizeof err), PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(err, "found a directory");
    CHECK_EQ_INT(prt__read_file("/dev/null", &d, &n, err, sizeof err), PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(err, "found a device");
    unlink(fifo);
    rmdir(dir);
}

/* The old writer opened NAME.tmp and followed a link placed there. */
TEST(atomic_write_never_follows_a_link)
{
    char dir[64] = "/tmp/prt_file_XXXXXX", path[128], tmp[160], victim[128], err[512] = "";
    struct stat st;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/model.plan", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    put(victim, "precious");
    CHECK(symlink(victim, tmp) == 0);
    CHECK_OK(prt__write_file_atomic(path, "new plan", 8, err, sizeof err));
    CHECK(same_text(victim, "precious"));
    CHECK(same_text(path, "new plan"));
    /* A link at the target itself is replaced, not written through. */
    unlink(path);
    CHECK(symlink(victim, path) == 0);
    CHECK_OK(prt__write_file_atomic(path, "again", 5, err, sizeof err));
    CHECK(same_text(victim, "precious"));
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(same_text(path, "again"));
    /* Nothing else was left behind: model.plan, model.plan.tmp, victim. */
    CHECK_EQ_INT(nb_entries(dir), 3);
    unlink(path);
    unlink(tmp);
    unlink(victim);
    rmdir(dir);
}

TEST(atomic_write_failure_leaves_the_target_and_no_temporary)
{
    char dir[64] = "/tmp/prt_file_XXXXXX", path[128], sub[128], err[512] = "";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/keep", dir);
    put(path, "old");
    /* The target is a directory: the rename fails. */
    snprintf(sub, sizeof sub, "%s/adir", dir);
    CHECK(mkdir(sub, 0700) == 0);
    CHECK_EQ_INT(prt__write_file_atomic(sub, "x", 1, err, sizeof err), PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(err, "cannot rename");
    CHECK_EQ_INT(nb_entries(dir), 2);
    /* A folder that does not exist. */
    snprintf(sub, sizeof sub, "%s/none/x.plan", dir);
    CHECK_EQ_INT(prt__write_file_atomic(sub, "x", 1, err, sizeof err), PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(err, "cannot create a temporary file beside");
    CHECK(same_text(path, "old"));
    rmdir(dir);
    snprintf(sub, sizeof sub, "%s/adir", dir);
    rmdir(sub);
    unlink(path);
    rmdir(dir);
}
