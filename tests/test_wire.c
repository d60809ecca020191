/* test_wire.c - harness/common/wire.c and wire_problem.c: line framing and record round trips;
 * the problem of each op on the wire, an old job without "op" read as GEMM, and every field of
 * an attention problem checked on input (wire-4.*). */
#define _GNU_SOURCE
#include "tb_test.h"
#include "common/tb.h"
#include "common/wire.h"
#include "common/op_attention.h"
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
    TB_CASE("wire-4.1", "a GEMM problem round-trips with its op and scales; a job without \"op\" is a GEMM") {
        tb_problem p, q;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p; p.op = TB_OP_GEMM;
        p.gemm.m = 64; p.gemm.n = 32; p.gemm.k = 16; p.gemm.batch = 1;
        p.gemm.lda = 16; p.gemm.ldb = 16; p.gemm.ldc = 32; p.gemm.ldd = 32; p.gemm.alpha = 1;
        p.gemm_scales.scale_a = 0.5f; p.gemm_scales.scale_b = 0.25f;
        cJSON *o = tb_wire_problem_to_json(&p);
        TB_CHECK(!strcmp(tb_json_str(o, "op", ""), "gemm"));
        TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_OK);
        TB_CHECK(q.op == TB_OP_GEMM && q.struct_size == sizeof q && q.gemm.m == 64 && q.gemm.ldd == 32);
        TB_CHECK(q.gemm_scales.scale_a == 0.5f && q.gemm_scales.scale_b == 0.25f);
        cJSON_DeleteItemFromObjectCaseSensitive(o, "op");   /* as a job from before growth 2 */
        cJSON_DeleteItemFromObjectCaseSensitive(o, "scales");
        TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_OK);
        TB_CHECK(q.op == TB_OP_GEMM && q.gemm.k == 16 && q.gemm_scales.scale_a == 1.0f);
        cJSON_Delete(o);
    }
    TB_CASE("wire-4.2", "an attention problem round-trips field by field (BHSD and BSHD, GQA, causal)") {
        for (int layout = 0; layout < 2; layout++) {
            tb_attn_shape s = { 2, 32, 8, 1024, 4096, 128, 1 };
            tb_problem p, q;
            tb_attn_problem(&s, (tb_attn_layout)layout, 0.0, &p);
            cJSON *o = tb_wire_problem_to_json(&p);
            TB_CHECK(!strcmp(tb_json_str(o, "op", ""), "attention_fwd"));
            TB_CHECK(!cJSON_GetObjectItemCaseSensitive(o, "m"));   /* no GEMM fields */
            char *line = cJSON_PrintUnformatted(o);   /* through text, as on the pipe */
            cJSON *back = cJSON_Parse(line);
            TB_CHECK(tb_wire_problem_from_json(back, &q, msg, sizeof msg) == TB_OK);
            TB_CHECK(memcmp(&p, &q, sizeof p) == 0);   /* every byte, the scale's bits too */
            cJSON_Delete(back); cJSON_free(line); cJSON_Delete(o);
        }
    }
    TB_CASE("wire-4.3", "a malformed attention problem is refused in one line naming its field") {
        static const struct { const char *key, *json, *want; } bad[] = {
            { "batch", "0", "attention.batch 0 is not in 1.." },
            { "heads", "\"x\"", "attention.heads is missing or not a number" },
            { "heads_kv", "3", "attention.heads_kv 3 does not divide attention.heads 32" },
            { "seq_q", "1.5", "attention.seq_q is not an integer" },
            { "seq_q", "8192", "attention.causal with attention.seq_q 8192 more than attention.seq_k 4096" },
            { "head_dim", "-64", "attention.head_dim -64 is not in 1.." },
            { "k_type", "99", "attention.k_type 99 is not a known type" },
            { "layout", "2", "attention.layout 2 is not in 0..1" },
            { "causal", "2", "attention.causal 2 is not in 0..1" },
            { "scale", "0", "attention.scale must be finite and positive" },
            { "scale", "null", "attention.scale must be finite and positive" },
            { "q_stride", "[1, 2]", "attention.q_stride is not an array of 3 numbers" },
            { "k_stride", "[1048576, 131072, 0]", "attention.k_stride[2] 0 is not in 1.." },
            { "v_stride", "[4194304, 524288, 64]", "attention.v_stride[2] 64 is less than 128: V's rows would overlap (bhsd)" },
            { "o_stride", "[134217728, 1000, 128]", "attention.o_stride[1] 1000 is less than 131072: O's heads would overlap (bhsd)" },
            { "q_stride", "[1, 131072, 128]", "attention.q_stride[0] 1 is less than 4194304: Q's batches would overlap (bhsd)" },
            { "lse_stride", "[32768, 1000]", "attention.lse_stride[1] 1000 is less than attention.seq_q 1024" },
            { "lse_stride", "[1024, 1024]", "attention.lse_stride[0] 1024 is less than attention.heads" },
        };
        tb_attn_shape s = { 2, 32, 8, 1024, 4096, 128, 1 };
        tb_problem p, q;
        tb_attn_problem(&s, TB_ATTN_BHSD, 0.0, &p);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            cJSON *o = tb_wire_problem_to_json(&p);
            cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "attention");
            cJSON_ReplaceItemInObjectCaseSensitive(a, bad[i].key, cJSON_Parse(bad[i].json));
            msg[0] = 0;
            TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_EWORKER);
            TB_CHECK_STR_CONTAINS(msg, "malformed problem in job: ");
            TB_CHECK_STR_CONTAINS(msg, bad[i].want);
            TB_CHECK(!strchr(msg, '\n'));
            cJSON_Delete(o);
        }
        cJSON *o = tb_wire_problem_to_json(&p);   /* a missing field, the object, the op */
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "attention"), "v_type");
        TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_EWORKER);
        TB_CHECK_STR_CONTAINS(msg, "attention.v_type is missing or not a number");
        cJSON_DeleteItemFromObjectCaseSensitive(o, "attention");
        TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_EWORKER);
        TB_CHECK_STR_CONTAINS(msg, "op attention_fwd without an \"attention\" object");
        cJSON_ReplaceItemInObjectCaseSensitive(o, "op", cJSON_CreateString("conv2d"));
        TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_EWORKER);
        TB_CHECK_STR_CONTAINS(msg, "op 'conv2d' is not an operation of this worker");
        cJSON_Delete(o);
    }
    TB_CASE("wire-4.4", "BSHD strides are checked in BSHD's order: packed BSHD passes, BHSD strides under bshd do not") {
        tb_attn_shape s = { 1, 16, 16, 512, 512, 64, 0 };
        tb_problem p, q;
        tb_attn_problem(&s, TB_ATTN_BSHD, 0.125, &p);
        TB_CHECK(p.attention.q_stride[1] == 64 && p.attention.q_stride[2] == 16 * 64 &&
                 p.attention.q_stride[0] == 512 * 16 * 64);
        cJSON *o = tb_wire_problem_to_json(&p);
        TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_OK && q.attention.scale == 0.125);
        cJSON_Delete(o);
        tb_problem h;
        tb_attn_problem(&s, TB_ATTN_BHSD, 0.125, &h);
        h.attention.layout = TB_ATTN_BSHD;   /* BHSD's strides, named BSHD */
        o = tb_wire_problem_to_json(&h);
        TB_CHECK(tb_wire_problem_from_json(o, &q, msg, sizeof msg) == TB_EWORKER);
        TB_CHECK_STR_CONTAINS(msg, "attention.q_stride[2] 64 is less than 524288: Q's rows would overlap (bshd)");
        cJSON_Delete(o);
    }
    return tb_test_done();
}
