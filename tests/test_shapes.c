/* test_shapes.c - harness/driver/shapes.c: tokens, files, named sets, every bad-input message. */
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
    }
    TB_CASE("shapes-1.2", "MxNxKxB parses the batch") {
        TB_CHECK(tb_shape_parse("8x16x32x4", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s.batch == 4);
    }
    TB_CASE("shapes-2.1", "malformed shapes are refused with the token named") {
        const char *bad[] = { "12x3", "axbxc", "1x2x3x4x5", "1x2x", "x1x2", "1 x2x3", "1x2x3.5", "" };
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
    TB_CASE("shapes-3.1", "lists, sets and dedup") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "128x128x128,smoke,128x128x128", sets, msg, sizeof msg) == TB_OK);
        TB_CHECK(l.n == 4);   /* smoke has 4 shapes, 128^3 among them */
        tb_shapes_free(&l);
    }
    TB_CASE("shapes-3.2", "every shipped set parses") {
        const char *names[] = { "square", "llm", "odd", "smoke" };
        size_t want_min[] = { 6, 48, 8, 3 };
        for (int i = 0; i < 4; i++) {
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
