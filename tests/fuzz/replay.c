/* Replays every file in tests/fuzz/corpus/<parser>/ and
 * tests/fuzz/crashers/<parser>/ through that parser's fuzz entry, so the
 * inputs the fuzzers found stay fixed in the regular test run. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "prt_test.h"

int prt_fuzz_npy(const uint8_t *data, size_t size);
int prt_fuzz_pcfg(const uint8_t *data, size_t size);
int prt_fuzz_golden(const uint8_t *data, size_t size);
int prt_fuzz_plan(const uint8_t *data, size_t size);
int prt_fuzz_netjson(const uint8_t *data, size_t size);
int prt_fuzz_record(const uint8_t *data, size_t size);
#ifdef PLUGRT_HAVE_ONNX
int prt_fuzz_onnx(const uint8_t *data, size_t size);
#endif
int prt_fuzz_planrun(const uint8_t *data, size_t size);
int prt_fuzz_netrun(const uint8_t *data, size_t size);
int prt_fuzz_tcache(const uint8_t *data, size_t size);

static int replay_dir(const char *kind, const char *parser, int (*entry)(const uint8_t *, size_t))
{
    char dir[1024];
    DIR *d;
    struct dirent *e;
    int n = 0;
    snprintf(dir, sizeof dir, "%s/%s/%s", PRT_FUZZ_DIR, kind, parser);
    d = opendir(dir);
    if (!d) return 0;
    while ((e = readdir(d))) {
        char path[2048], err[512];
        void *buf;
        uint8_t *copy;
        size_t len;
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (prt__read_file(path, &buf, &len, err, sizeof err) != PRT_OK) continue;
        copy = malloc(len ? len : 1); /* exact size, so an overread is caught under ASan */
        memcpy(copy, buf, len);
        prt__free(buf);
        entry(copy, len);
        free(copy);
        n++;
    }
    closedir(d);
    return n;
}

static void replay(const char *parser, int (*entry)(const uint8_t *, size_t))
{
    int n = replay_dir("corpus", parser, entry) + replay_dir("crashers", parser, entry);
    CHECK_MSG(n > 0, "no inputs found for %s under %s", parser, PRT_FUZZ_DIR);
    printf("  replayed %d %s inputs\n", n, parser);
}

TEST(replay_npy)
{
    replay("npy", prt_fuzz_npy);
}

TEST(replay_pcfg)
{
    replay("pcfg", prt_fuzz_pcfg);
}

TEST(replay_golden)
{
    replay("golden", prt_fuzz_golden);
}

TEST(replay_plan)
{
    replay("plan", prt_fuzz_plan);
}

TEST(replay_netjson)
{
    replay("netjson", prt_fuzz_netjson);
}

TEST(replay_record)
{
    replay("record", prt_fuzz_record);
}

TEST(replay_tcache)
{
    replay("tcache", prt_fuzz_tcache);
}

#ifdef PLUGRT_HAVE_ONNX
TEST(replay_onnx)
{
    replay("onnx", prt_fuzz_onnx);
}
#endif
/* The plan and netjson inputs again, run at random shapes inside their
 * profiles (crashers of these targets: crashers/planrun/, crashers/netrun/). */
TEST(replay_planrun)
{
    int n = replay_dir("corpus", "plan", prt_fuzz_planrun) + replay_dir("crashers", "planrun", prt_fuzz_planrun);
    CHECK_MSG(n > 0, "no plan inputs found under %s", PRT_FUZZ_DIR);
    printf("  replayed %d plan inputs at random shapes\n", n);
}

TEST(replay_netrun)
{
    int n = replay_dir("corpus", "netjson", prt_fuzz_netrun) + replay_dir("crashers", "netrun", prt_fuzz_netrun);
    CHECK_MSG(n > 0, "no netjson inputs found under %s", PRT_FUZZ_DIR);
    printf("  replayed %d netjson inputs built and run\n", n);
}
