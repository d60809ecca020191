/* test_loader.c - harness/worker/loader.c against the zoo's broken libraries (built by the tests):
 * every refusal names the file and the reason; good libraries load. No GPU needed: nothing
 * here initialises CUDA. argv[1] = the zoo directory, argv[2] = a good variant .so. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "worker/loader.h"
#include "common/tb.h"
#include <stdio.h>

static char dir[1024];

/* Fake variants for the host's refusal of FP8 problems (loader-5): never launched. */
static const uint32_t g1_size = sizeof(tb_problem), small_size = 40;
static const void *ext_g1(const char *key) { return !strcmp(key, TB_EXT_PROBLEM_SIZE) ? &g1_size : NULL; }
static const void *ext_none(const char *key) { (void)key; return NULL; }
static const void *ext_small(const char *key) { return !strcmp(key, TB_EXT_PROBLEM_SIZE) ? &small_size : NULL; }
static const uint32_t ops_attn[] = { TB_OP_ATTENTION_FWD, 0 }, ops_both[] = { TB_OP_GEMM, TB_OP_ATTENTION_FWD, 0 };
static const void *ext_attn(const char *key)   /* growth 2, attention only */
{
    return !strcmp(key, TB_EXT_PROBLEM_SIZE) ? (const void *)&g1_size
         : !strcmp(key, TB_EXT_OPS) ? (const void *)ops_attn : NULL;
}
static const void *ext_both(const char *key)
{
    return !strcmp(key, TB_EXT_PROBLEM_SIZE) ? (const void *)&g1_size
         : !strcmp(key, TB_EXT_OPS) ? (const void *)ops_both : NULL;
}
static const uint32_t g1_only = TB_PROBLEM_G1_SIZE;
static const void *ext_attn_old(const char *key)   /* lists attention, built against growth 1 */
{
    return !strcmp(key, TB_EXT_PROBLEM_SIZE) ? (const void *)&g1_only
         : !strcmp(key, TB_EXT_OPS) ? (const void *)ops_attn : NULL;
}
static int fake_launch(void *st, const tb_problem *p, const tb_buffers *io, void *ws, size_t wsb,
                       tb_stream s)
{
    (void)st; (void)p; (void)io; (void)ws; (void)wsb; (void)s;
    return 1;
}
static tb_variant fake(const void *(*ext)(const char *))
{
    tb_variant v = { TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "fake", "fake", NULL, "any",
                     NULL, NULL, fake_launch, NULL, NULL, NULL, ext };
    return v;
}
static tb_problem problem_of(tb_dtype t)
{
    tb_problem p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.op = TB_OP_GEMM;
    p.gemm.m = p.gemm.n = p.gemm.k = p.gemm.batch = 64;
    p.gemm.a_type = p.gemm.b_type = t;
    p.gemm.c_type = p.gemm.d_type = TB_DTYPE_BF16;
    p.gemm.acc_type = TB_DTYPE_F32;
    p.gemm_scales.scale_a = p.gemm_scales.scale_b = 0.5f;
    return p;
}
static tb_problem attention_problem(void)
{
    tb_problem p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.op = TB_OP_ATTENTION_FWD;
    p.attention.batch = 1; p.attention.heads = 32; p.attention.heads_kv = 8;
    p.attention.seq_q = p.attention.seq_k = 4096; p.attention.head_dim = 128;
    return p;
}
static const char *zoo(const char *name)
{
    static char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

/* open + walk every index; returns the first refusal's code (msg filled) or TB_OK */
static int walk(const char *path, int *count, char *msg, size_t len)
{
    tb_lib *lib;
    *count = 0;
    int rc = tb_lib_open(path, &lib, msg, len);
    if (rc) return rc;
    for (uint32_t i = 0;; i++) {
        const tb_variant *v;
        rc = tb_lib_variant(lib, i, &v, msg, len);
        if (rc || !v) break;
        (*count)++;
    }
    tb_lib_free(lib);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) { printf("usage: test_loader ZOO_DIR GOOD.so\n"); return 2; }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    char msg[TB_MSG_LEN];
    int n;
    TB_CASE("loader-1.1", "a good library loads and its variants are walked") {
        TB_CHECK(walk(argv[2], &n, msg, sizeof msg) == TB_OK);
        TB_CHECK(n >= 1);
    }
    TB_CASE("loader-2.1", "wrong ABI version is refused, naming file and versions") {
        TB_CHECK(walk(zoo("zoo_abi_version.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "zoo_abi_version.so");
        TB_CHECK_STR_CONTAINS(msg, "ABI version 999");
    }
    TB_CASE("loader-2.2", "a struct smaller than v1 is refused") {
        TB_CHECK(walk(zoo("zoo_struct_small.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "struct_size 16");
    }
    TB_CASE("loader-2.3", "no entry symbol") {
        TB_CHECK(walk(zoo("zoo_nosym.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "no entry symbol 'tilebench_variant_query'");
        TB_CHECK_STR_CONTAINS(msg, "zoo_nosym.so");
    }
    TB_CASE("loader-2.4", "a library that fails to load (undefined symbol)") {
        TB_CHECK(walk(zoo("zoo_undefined.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "cannot load");
        TB_CHECK_STR_CONTAINS(msg, "undefined symbol");
    }
    TB_CASE("loader-2.5", "not a shared object at all") {
        TB_CHECK(walk(zoo("zoo_notelf.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "zoo_notelf.so");
    }
    TB_CASE("loader-2.6", "a missing file") {
        TB_CHECK(walk(zoo("no_such_variant.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "no such file");
    }
    TB_CASE("loader-2.7", "a NULL name is refused") {
        TB_CHECK(walk(zoo("zoo_null_name.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "no name");
    }
    TB_CASE("loader-2.8", "a parametric name that does not match its parameters") {
        TB_CHECK(walk(zoo("zoo_badname.so"), &n, msg, sizeof msg) == TB_ELOAD);
        TB_CHECK_STR_CONTAINS(msg, "does not match its parameters");
    }
    TB_CASE("loader-3.1", "params become a JSON object in declared order") {
        tb_param ps[] = { TB_PARAM_INT("tile_m", 128), TB_PARAM_STR("schedule", "pingpong"), TB_PARAM_END };
        char buf[256];
        tb_params_json(ps, buf, sizeof buf);
        TB_CHECK(!strcmp(buf, "{\"tile_m\":128,\"schedule\":\"pingpong\"}"));
    }
    TB_CASE("loader-3.2", "generated names follow the fixed field order") {
        tb_param ps[] = { TB_PARAM_STR("layout", "tn"), TB_PARAM_INT("stages", 4),
                          TB_PARAM_INT("tile_n", 256), TB_PARAM_INT("tile_m", 128),
                          TB_PARAM_INT("tile_k", 64), TB_PARAM_INT("cluster_m", 2),
                          TB_PARAM_STR("schedule", "pingpong"), TB_PARAM_STR("dtype", "bf16"),
                          TB_PARAM_STR("raster", "m"), TB_PARAM_END };
        char buf[256];
        tb_variant_make_name("wgmma", ps, buf, sizeof buf);
        TB_CHECK(!strcmp(buf, "wgmma_bf16_128x256x64_c2x1_s4_pingpong_rasterm_tn"));
    }
    TB_CASE("loader-5.1", "an FP8 problem is refused for a variant built against the v1 problem") {
        tb_problem p8 = problem_of(TB_DTYPE_E4M3), p16 = problem_of(TB_DTYPE_BF16);
        char why[256] = "";
        tb_variant none = fake(NULL), nul = fake(ext_none), small = fake(ext_small);
        TB_CHECK(tb_variant_problem_size(&none) == TB_PROBLEM_V1_SIZE);
        TB_CHECK(tb_variant_host_refuses(&none, &p8, why, sizeof why) == 1);
        TB_CHECK(!strcmp(why, "built against the v1 problem (no FP8 scales): rebuild with variant.h growth 1"));
        why[0] = 0;
        TB_CHECK(tb_variant_host_refuses(&nul, &p8, why, sizeof why) == 1);   /* answers NULL */
        TB_CHECK_STR_CONTAINS(why, "v1 problem");
        TB_CHECK(tb_variant_host_refuses(&small, &p8, why, sizeof why) == 1);  /* says v1 */
        /* a BF16 problem is offered to all of them: the refusal is the FP8 members' alone */
        TB_CHECK(tb_variant_host_refuses(&none, &p16, why, sizeof why) == 0);
        TB_CHECK(tb_variant_host_refuses(&small, &p16, why, sizeof why) == 0);
    }
    TB_CASE("loader-5.2", "a variant that answers tb.problem_size with growth 1 is offered FP8") {
        tb_problem p8 = problem_of(TB_DTYPE_E4M3);
        char why[256] = "";
        tb_variant g1 = fake(ext_g1);
        TB_CHECK(tb_variant_problem_size(&g1) == sizeof(tb_problem));
        TB_CHECK(tb_variant_host_refuses(&g1, &p8, why, sizeof why) == 0);
        TB_CHECK(why[0] == 0);
    }
    TB_CASE("loader-5.3", "a shipped BF16 variant without the extension (argv[2]) is refused FP8") {
        tb_lib *lib;
        const tb_variant *v = NULL;
        tb_problem p8 = problem_of(TB_DTYPE_E4M3);
        char why[256] = "";
        TB_CHECK(tb_lib_open(argv[2], &lib, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_lib_variant(lib, 0, &v, msg, sizeof msg) == TB_OK && v);
        if (v) TB_CHECK(tb_variant_host_refuses(v, &p8, why, sizeof why) == 1);
        TB_CHECK_STR_CONTAINS(why, "growth 1");
        tb_lib_free(lib);
    }
    TB_CASE("loader-6.1", "an attention problem is refused for a variant built before growth 2") {
        tb_problem pa = attention_problem();
        char why[256] = "";
        tb_variant none = fake(NULL), g1 = fake(ext_g1), old = fake(ext_attn_old);
        TB_CHECK(tb_variant_host_refuses(&none, &pa, why, sizeof why) == 1);
        TB_CHECK(!strcmp(why, TB_REFUSE_G1_ATTN));
        TB_CHECK_STR_CONTAINS(why, "growth 2");
        TB_CHECK(tb_variant_host_refuses(&old, &pa, why, sizeof why) == 1);   /* lists it: too old */
        TB_CHECK(!strcmp(why, TB_REFUSE_G1_ATTN));
        /* built against growth 2 (g1_size is sizeof(tb_problem) here) but a GEMM variant */
        TB_CHECK(tb_variant_problem_size(&g1) == TB_PROBLEM_G2_SIZE);
        TB_CHECK(tb_variant_host_refuses(&g1, &pa, why, sizeof why) == 1);
        TB_CHECK(!strcmp(why, "does not compute attention_fwd (its extension(\"tb.ops\") does not list it)"));
    }
    TB_CASE("loader-6.2", "tb.ops: what a variant lists is offered, and only that") {
        tb_problem pa = attention_problem(), p16 = problem_of(TB_DTYPE_BF16);
        char why[256] = "";
        tb_variant attn = fake(ext_attn), both = fake(ext_both), none = fake(NULL), nul = fake(ext_none);
        TB_CHECK(tb_variant_computes(&none, TB_OP_GEMM) && !tb_variant_computes(&none, TB_OP_ATTENTION_FWD));
        TB_CHECK(tb_variant_computes(&nul, TB_OP_GEMM) && !tb_variant_computes(&nul, TB_OP_ATTENTION_FWD));
        TB_CHECK(tb_variant_host_refuses(&attn, &pa, why, sizeof why) == 0);
        TB_CHECK(tb_variant_host_refuses(&both, &pa, why, sizeof why) == 0);
        TB_CHECK(tb_variant_host_refuses(&both, &p16, why, sizeof why) == 0);
        TB_CHECK(tb_variant_host_refuses(&attn, &p16, why, sizeof why) == 1);   /* not a GEMM one */
        TB_CHECK_STR_CONTAINS(why, "does not compute gemm");
        TB_CHECK(tb_variant_host_refuses(&none, &p16, why, sizeof why) == 0);   /* as before */
    }
    TB_CASE("loader-6.3", "a shipped GEMM variant (argv[2]) is refused attention") {
        tb_lib *lib;
        const tb_variant *v = NULL;
        tb_problem pa = attention_problem();
        char why[256] = "";
        TB_CHECK(tb_lib_open(argv[2], &lib, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_lib_variant(lib, 0, &v, msg, sizeof msg) == TB_OK && v);
        if (v) TB_CHECK(tb_variant_host_refuses(v, &pa, why, sizeof why) == 1);
        TB_CHECK(why[0] != 0);
        tb_lib_free(lib);
    }
    return tb_test_done();
}
