/* test_wire.c - harness/common/wire.c: line framing and record round trips. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "common/tb.h"
#include "common/wire.h"
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    char msg[TB_MSG_LEN];
    TB_CASE("wire-1.1", "lines written are read back whole, in order") {
        int fds[2];
        TB_CHECK(pipe(fds) == 0);
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "type", "begin");
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "type", "done\nwith newline");
        TB_CHECK(tb_wire_send(fds[1], a) == TB_OK && tb_wire_send(fds[1], b) == TB_OK);
        close(fds[1]);
        tb_linebuf lb = { 0 };
        while (tb_linebuf_fill(&lb, fds[0]) > 0) {}
        char *l1 = tb_linebuf_next(&lb), *l2 = tb_linebuf_next(&lb), *l3 = tb_linebuf_next(&lb);
        TB_CHECK(l1 && l2 && !l3);
        cJSON *p = cJSON_Parse(l2);
        TB_CHECK(p && !strcmp(tb_json_str(p, "type", ""), "done\nwith newline"));
        cJSON_Delete(p); cJSON_Delete(a); cJSON_Delete(b);
        free(l1); free(l2);
        tb_linebuf_free(&lb);
        close(fds[0]);
    }
    TB_CASE("wire-2.1", "measurement round trip keeps NaN, samples and status") {
        tb_measurement m, r;
        tb_measurement_init(&m);
        m.status = TB_STATUS_TIMEOUT;
        m.disposition = TB_DISP_INCORRECT;
        snprintf(m.reason, sizeof m.reason, "planted, with \"quotes\"");
        m.n_samples = 3;
        double s[3] = { 1.5, 2.5, 3.5 };
        m.samples_ms = s;
        m.median_ms = 2.5;
        cJSON *o = tb_wire_measurement_to_json(&m);
        TB_CHECK(tb_wire_measurement_from_json(o, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.status == TB_STATUS_TIMEOUT && r.disposition == TB_DISP_INCORRECT);
        TB_CHECK(!strcmp(r.reason, m.reason));
        TB_CHECK(r.n_samples == 3 && r.samples_ms && r.samples_ms[2] == 3.5);
        TB_CHECK(r.median_ms == 2.5 && isnan(r.mean_ms) && isnan(r.rel_fro_err));
        tb_measurement_free_samples(&r);
        cJSON_Delete(o);
    }
    TB_CASE("wire-2.2", "a result claiming samples it lacks is refused") {
        cJSON *o = cJSON_Parse("{\"status\":\"ok\",\"disposition\":\"passed\",\"n_samples\":5}");
        tb_measurement r;
        TB_CHECK(tb_wire_measurement_from_json(o, &r, msg, sizeof msg) == TB_EWORKER);
        TB_CHECK_STR_CONTAINS(msg, "5 samples");
        cJSON_Delete(o);
    }
    TB_CASE("wire-2.3", "unknown status is refused") {
        cJSON *o = cJSON_Parse("{\"status\":\"great\",\"disposition\":\"passed\"}");
        tb_measurement r;
        TB_CHECK(tb_wire_measurement_from_json(o, &r, msg, sizeof msg) == TB_EWORKER);
        TB_CHECK_STR_CONTAINS(msg, "great");
        cJSON_Delete(o);
    }
    TB_CASE("wire-3.1", "problem round trip") {
        tb_gemm g = { 0 }, h;
        g.m = 5; g.n = 6; g.k = 7; g.batch = 2; g.a_type = TB_DTYPE_BF16; g.acc_type = TB_DTYPE_F32;
        g.b_layout = TB_LAYOUT_COL; g.lda = 7; g.ldb = 7; g.ldc = 6; g.ldd = 6;
        g.stride_a = 35; g.stride_d = 30; g.alpha = 0.5; g.beta = -2;
        cJSON *o = tb_wire_gemm_to_json(&g);
        TB_CHECK(tb_wire_gemm_from_json(o, &h, msg, sizeof msg) == TB_OK);
        TB_CHECK(h.m == 5 && h.n == 6 && h.k == 7 && h.batch == 2 && h.b_layout == TB_LAYOUT_COL);
        TB_CHECK(h.stride_a == 35 && h.stride_d == 30 && h.alpha == 0.5 && h.beta == -2);
        cJSON_Delete(o);
    }
    TB_CASE("wire-env-0", "the field table covers tb_environment: from its start to extra_json, no field left out") {
        size_t end = 0;
        for (size_t i = 0; i < tb_env_nfields; i++) {
            const tb_env_field *f = &tb_env_fields[i];
            TB_CHECK(f->off >= end && f->off - end < 8);   /* in order; a gap is padding only */
            end = f->off + f->size;
        }
        TB_CHECK(tb_env_fields[0].off == 0 && end <= offsetof(tb_environment, extra_json) &&
                 offsetof(tb_environment, extra_json) - end < 8);
    }
    TB_CASE("wire-env-1", "the environment round-trips field by field (every field of the table, int64 beyond 2^31), "
                          "a missing number reads -1, a missing string empty") {
        tb_environment e, back;
        memset(&e, 0, sizeof e);
        for (size_t i = 0; i < tb_env_nfields; i++) {
            const tb_env_field *f = &tb_env_fields[i];
            if (f->kind == 's') snprintf(tb_env_str_mut(&e, f), f->size, "v<%zu>\"x", i);
            else tb_env_set_num(&e, f, f->kind == 'l' ? (int64_t)5000000000LL + (int64_t)i : (int64_t)(1000 + i));
        }
        snprintf(e.extra_json, sizeof e.extra_json, "{\"k\":1}");
        cJSON *o = tb_wire_env_to_json(&e);
        TB_CHECK(tb_wire_env_from_json(o, &back, msg, sizeof msg) == TB_OK);
        for (size_t i = 0; i < tb_env_nfields; i++) {
            const tb_env_field *f = &tb_env_fields[i];
            if (f->kind == 's') TB_CHECK(!strcmp(tb_env_str(&e, f), tb_env_str(&back, f)));
            else TB_CHECK(tb_env_num(&e, f) == tb_env_num(&back, f));
        }
        TB_CHECK(back.l2_bytes == 5000000006LL && back.power_limit_mw == 1011 && !strcmp(back.extra_json, "{\"k\":1}"));
        cJSON_Delete(o);
        o = cJSON_Parse("{\"gpu_name\":\"G\"}");
        TB_CHECK(tb_wire_env_from_json(o, &back, msg, sizeof msg) == TB_OK && !strcmp(back.gpu_name, "G") &&
                 back.sm_count == -1 && back.mem_bytes == -1 && back.os[0] == 0 && !strcmp(back.extra_json, "{}"));
        cJSON_Delete(o);
    }
    return tb_test_done();
}
