/* test_shapes.c - harness/driver/shapes.c: tokens (GEMM's and attention's), files, named sets,
 * every bad-input message, the attn set's arithmetic. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "driver/shapes.h"
#include "common/tb.h"
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *sets = argc > 1 ? argv[1] : "results/shapes";
    char msg[TB_MSG_LEN];
    tb_shape s;
    TB_CASE("shapes-1.1", "MxNxK parses, batch defaults to 1") {
        TB_CHECK(tb_shape_parse("4096x2048x512", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s.m == 4096 && s.n == 2048 && s.k == 512 && s.batch == 1);
        TB_CHECK(s.op == TB_OP_GEMM && s.attn.batch == 0);
    }
    TB_CASE("shapes-1.2", "MxNxKxB parses the batch") {
        TB_CHECK(tb_shape_parse("8x16x32x4", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s.batch == 4);
    }
    TB_CASE("shapes-2.1", "malformed shapes are refused with the token named") {
        const char *bad[] = { "12x3", "axbxc", "1x2x3x4x5x6", "1x2x", "x1x2", "1 x2x3", "1x2x3.5", "" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            TB_CHECK(tb_shape_parse(bad[i], &s, msg, sizeof msg) == TB_EUSAGE);
            TB_CHECK_STR_CONTAINS(msg, "malformed shape");
        }
    }
    TB_CASE("shapes-2.2", "non-positive sizes are refused") {
        TB_CHECK(tb_shape_parse("0x5x5", &s, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "non-positive");
        TB_CHECK(tb_shape_parse("5x-5x5", &s, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "non-positive");
    }
    TB_CASE("shapes-2.3", "absurd sizes are refused") {
        TB_CHECK(tb_shape_parse("99999999999x5x5", &s, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "too large");
    }
    TB_CASE("shapes-5.1", "BxHxSqxSkxD is attention, heads_kv defaulting to H, not causal") {
        TB_CHECK(tb_shape_parse("2x32x4096x4096x128", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s.op == TB_OP_ATTENTION_FWD);
        TB_CHECK(s.attn.batch == 2 && s.attn.heads == 32 && s.attn.heads_kv == 32);
        TB_CHECK(s.attn.seq_q == 4096 && s.attn.seq_k == 4096 && s.attn.head_dim == 128);
        TB_CHECK(!s.attn.causal && s.m == 0 && s.n == 0 && s.k == 0 && s.batch == 0);
    }
    TB_CASE("shapes-5.2", ":causal and :hkv=N, in either order") {
        TB_CHECK(tb_shape_parse("1x64x8192x8192x128:causal:hkv=8", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s.op == TB_OP_ATTENTION_FWD && s.attn.causal && s.attn.heads_kv == 8 && s.attn.heads == 64);
        TB_CHECK(tb_shape_parse("1x64x8192x8192x128:hkv=8:causal", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s.attn.causal && s.attn.heads_kv == 8);
        TB_CHECK(tb_shape_parse("4x8x1x16384x64:hkv=1", &s, msg, sizeof msg) == TB_OK);   /* MQA decode */
        TB_CHECK(s.attn.heads_kv == 1 && s.attn.seq_q == 1 && !s.attn.causal);
        TB_CHECK(tb_shape_parse("1x1x1x1x1", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_shape_parse("1x2x128x4096x64:causal", &s, msg, sizeof msg) == TB_OK);   /* Sq < Sk */
    }
    TB_CASE("shapes-5.3", "bad attention tokens: one line naming the token and what is wrong") {
        struct { const char *tok, *want; } bad[] = {
            { "1x2x3x4:causal", "malformed attention shape '1x2x3x4:causal' (want BxHxSqxSkxD[:causal][:hkv=N])" },
            { "1x2x3x4x5x6:causal", "malformed attention shape" },
            { "1x32x4096x4096x128:", "an empty option" },
            { "1x32x4096x4096x128::causal", "an empty option" },
            { "1x32x4096x4096x128:causual", "unknown option ':causual' (want :causal or :hkv=N)" },
            { "1x32x4096x4096x128:causal:causal", "':causal' given twice" },
            { "1x32x4096x4096x128:hkv=8:hkv=4", "':hkv' given twice" },
            { "1x32x4096x4096x128:hkv=", "':hkv=' is not a positive count of key/value heads" },
            { "1x32x4096x4096x128:hkv=0", "':hkv=0' is not a positive" },
            { "1x32x4096x4096x128:hkv=x", "is not a positive" },
            { "1x32x4096x4096x128:hkv=3", "hkv=3 does not divide the 32 query heads" },
            { "1x32x4096x4096x128:hkv=64", "hkv=64 does not divide the 32 query heads" },
            { "1x32x8192x4096x128:causal", "causal needs Sq <= Sk" },
            { "0x32x4096x4096x128", "attention shape '0x32x4096x4096x128' has a non-positive size" },
            { "1x-32x4096x4096x128", "non-positive" },
            { "1x32x4096x4096x1024", "head_dim 1024 is more than 512" },
            { "1x2048x4096x4096x128", "heads 2048 is more than 1024" },
            { "1x32x2000000x4096x128", "Sq 2000000 is more than 1048576" },
            { "1x32x4096x99999999999x128", "attention shape '1x32x4096x99999999999x128' is too large" },
            { "65536x1024x1024x1024x128", "is too large (more than 2^36 elements in one tensor)" },
            { "99999x1x1x1x1", "batch 99999 is more than 65536" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            msg[0] = 0;
            TB_CHECK(tb_shape_parse(bad[i].tok, &s, msg, sizeof msg) == TB_EUSAGE);
            TB_CHECK_STR_CONTAINS(msg, bad[i].want);
            TB_CHECK(strchr(msg, '\n') == NULL);
        }
    }
    TB_CASE("shapes-5.4", "a six-size token is a malformed shape naming both syntaxes") {
        TB_CHECK(tb_shape_parse("1x2x3x4x5x6", &s, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "want MxNxK, MxNxKxB or BxHxSqxSkxD[:causal][:hkv=N]");
    }
    TB_CASE("shapes-5.5", "canonical text round-trips through the parser") {
        const char *toks[] = { "1x32x4096x4096x128", "2x64x8192x8192x128:causal:hkv=8", "4x8x1x16384x64:hkv=1",
                               "4096x4096x4096", "8x16x32x4" };
        for (size_t i = 0; i < sizeof toks / sizeof *toks; i++) {
            char buf[128];
            TB_CHECK(tb_shape_parse(toks[i], &s, msg, sizeof msg) == TB_OK);
            const tb_op_desc *d = tb_op_of_shape(&s);
            TB_CHECK(d && d->shape_text(&s, buf, sizeof buf) == (int)strlen(toks[i]));
            TB_CHECK(!strcmp(buf, toks[i]));
        }
    }
    TB_CASE("shapes-5.6", "dedup keys on the operation and every size; GEMM and attention mix") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "1x32x4096x4096x128,1x32x4096x4096x128:causal,1x32x4096x4096x128:hkv=8,"
                                   "1x32x4096x4096x128,1x32x4096x4096x128:hkv=32,128x128x128,128x128x128x1",
                               sets, msg, sizeof msg) == TB_OK);
        TB_CHECK(l.n == 4);   /* :hkv=32 is the default; 128x128x128x1 is 128x128x128 */
        if (l.n == 4) {
            TB_CHECK(l.v[0].op == TB_OP_ATTENTION_FWD && !l.v[0].attn.causal);
            TB_CHECK(l.v[1].attn.causal && l.v[2].attn.heads_kv == 8 && l.v[3].op == TB_OP_GEMM);
        }
        /* a GEMM shape written by hand (op 0) is the parsed one */
        tb_shape hand = { .m = 128, .n = 128, .k = 128, .batch = 1 };
        TB_CHECK(tb_op_of_shape(&hand) == &tb_op_gemm);
        tb_shapes_free(&l);
    }
    TB_CASE("shapes-5.7", "the measuring commands' check: GEMM only, for now") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "square", sets, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_shapes_gemm_only(&l, "gate", msg, sizeof msg) == TB_OK);
        TB_CHECK(!tb_shapes_any_attention(&l));
        TB_CHECK(tb_shapes_add(&l, "1x32x4096x4096x128", sets, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_shapes_gemm_only(&l, "gate", msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(!strcmp(msg, "attention shapes: `gate` measures GEMM only for now (issue 33)"));
        TB_CHECK(tb_shapes_any_attention(&l));
        tb_shapes_free(&l);
    }
    TB_CASE("shapes-5.8", "a shape file mixes operations; a bad attention line names file and line") {
        char path[] = "/tmp/tb_shapes_XXXXXX";
        int fd = mkstemp(path);
        TB_CHECK(fd >= 0);
        dprintf(fd, "# both\n1x32x4096x4096x128:causal:hkv=8 attn.causal\n4096x4096x4096 gemm\n"
                    "1x32x4096x4096x128:hkv=5\n");
        close(fd);
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, path, sets, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, ":4: attention shape '1x32x4096x4096x128:hkv=5': hkv=5 does not divide");
        TB_CHECK(l.n == 2 && !strcmp(l.v[0].label, "attn.causal") && l.v[1].op == TB_OP_GEMM);
        tb_shapes_free(&l);
        unlink(path);
    }
    TB_CASE("shapes-3.1", "lists, sets and dedup") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "128x128x128,smoke,128x128x128", sets, msg, sizeof msg) == TB_OK);
        TB_CHECK(l.n == 4);   /* smoke has 4 shapes, 128^3 among them */
        tb_shapes_free(&l);
    }
    TB_CASE("shapes-3.2", "every shipped set parses") {
        const char *names[] = { "square", "llm", "odd", "smoke", "attn" };
        size_t want_min[] = { 6, 48, 8, 3, 20 };
        for (int i = 0; i < 5; i++) {
            tb_shape_list l = { 0 };
            TB_CHECK(tb_shapes_add(&l, names[i], sets, msg, sizeof msg) == TB_OK);
            TB_CHECK(l.n >= want_min[i]);
            tb_shapes_free(&l);
        }
    }
    TB_CASE("shapes-3.3", "llm labels are kept") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "llm", sets, msg, sizeof msg) == TB_OK);
        TB_CHECK_STR_CONTAINS(l.v[0].label, "llama3");
        tb_shapes_free(&l);
    }
    TB_CASE("shapes-4.1", "unknown set names the sets there are") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "nosuchset", sets, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "unknown shape set 'nosuchset'");
        TB_CHECK_STR_CONTAINS(msg, "square");
        tb_shapes_free(&l);
    }
    TB_CASE("shapes-4.2", "a bad line in a shape file names file and line") {
        char path[] = "/tmp/tb_shapes_XXXXXX";
        int fd = mkstemp(path);
        TB_CHECK(fd >= 0);
        dprintf(fd, "# comment\n128x128x128 ok\n12x3\n");
        close(fd);
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, path, sets, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, ":3:");
        TB_CHECK_STR_CONTAINS(msg, "malformed shape '12x3'");
        tb_shapes_free(&l);
        unlink(path);
    }
    TB_CASE("shapes-4.3", "a missing shape file is named") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "/nonexistent/shapes.txt", sets, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "/nonexistent/shapes.txt");
        tb_shapes_free(&l);
    }
    return tb_test_done();
}
