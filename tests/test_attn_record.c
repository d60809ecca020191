/* test_attn_record.c - an attention problem as a record (issue 33, the op seam's record side):
 * what the sweep builds for an attention shape and the ABI problem of it (driver/sweep.c,
 * common/problem.c), the store's problems table at schema 9 (both ops written and read back
 * field by field, the key, the refusals, the migration of a schema-8 file keeping its ids,
 * merge matching problems by their key), and export and show of an attention row beside a
 * GEMM row whose output is what it was. The rows are put through store.h in a mkdtemp
 * directory; the schema-8 file is made by tb_store_create_at_version and filled with sqlite3
 * directly, as an older tilebench would have left it. No GPU.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* mkdtemp, open_memstream */
#endif
#include "driver/sweep.h"
#include "common/op_attention.h"
#include "common/problem.h"
#include "common/tb.h"
#include "common/wire.h"
#include "report/export.h"
#include "report/show.h"
#include "report/side.h"
#include "store/store.h"
#include "tb_test.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];
static char msg[TB_MSG_LEN];

static const char *at(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static int raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* One integer from a query on path, or -999. */
static long long raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -999;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void die(const char *what)
{
    printf("cannot %s: %s\n", what, msg);
    exit(2);
}

static tb_shape attn_shape(const char *tok)
{
    tb_shape s;
    if (tb_op_attention_fwd.shape_parse(tok, &s, msg, sizeof msg)) die("parse a shape");
    snprintf(s.label, sizeof s.label, "llama3-8b.attn");
    return s;
}

static tb_problem_info gemm_info(int64_t m)
{
    tb_sweep_opts o;
    tb_sweep_opts_default(&o);
    tb_shape s = { .m = m, .n = 256, .k = 512, .batch = 1, .label = "g", .op = TB_OP_GEMM };
    tb_problem_info p;
    tb_sweep_problem(&s, &o, &p);
    return p;
}

static tb_problem_info attn_info(const char *tok)
{
    tb_sweep_opts o;
    tb_sweep_opts_default(&o);
    tb_shape s = attn_shape(tok);
    tb_problem_info p;
    tb_sweep_problem(&s, &o, &p);
    return p;
}

static tb_store *open_new(const char *name)
{
    tb_store *s = NULL;
    if (tb_store_open(at(name), 1, 0, &s, msg, sizeof msg)) die("open a store");
    return s;
}

/* A run with an environment, a variant, a GEMM problem and an attention problem, one timed
 * measurement on each (2 samples). Returns the run id; the problems' ids in *pg and *pa. */
static int64_t fill(tb_store *s, int64_t *pg, int64_t *pa)
{
    tb_run_info r;
    memset(&r, 0, sizeof r);
    snprintf(r.command_line, sizeof r.command_line, "tilebench test");
    snprintf(r.options_json, sizeof r.options_json, "{}");
    if (tb_store_run_begin(s, &r, msg, sizeof msg)) die("begin a run");
    tb_environment e;
    memset(&e, 0, sizeof e);
    snprintf(e.gpu_name, sizeof e.gpu_name, "test GPU");
    snprintf(e.extra_json, sizeof e.extra_json, "{}");
    e.cc_major = 9; e.sm_count = 132;
    if (tb_store_put_environment(s, r.id, &e, msg, sizeof msg)) die("put the environment");
    tb_variant_info v;
    memset(&v, 0, sizeof v);
    snprintf(v.name, sizeof v.name, "flash_fwd");
    snprintf(v.family, sizeof v.family, "flash");
    snprintf(v.params_json, sizeof v.params_json, "{\"tile_m\":128}");
    snprintf(v.sha256, sizeof v.sha256, "%064d", 3);
    if (tb_store_put_variant(s, r.id, &v, msg, sizeof msg)) die("put a variant");
    tb_problem_info g = gemm_info(1024), a = attn_info("1x32x4096x4096x128:causal:hkv=8");
    if (tb_store_put_problem(s, &g, msg, sizeof msg) || tb_store_put_problem(s, &a, msg, sizeof msg))
        die("put the problems");
    *pg = g.id;
    *pa = a.id;
    static double ms[2] = { 1.0, 1.5 };
    for (int i = 0; i < 2; i++) {
        tb_measurement m;
        tb_measurement_init(&m);
        m.run_id = r.id; m.variant_id = v.id; m.problem_id = i ? a.id : g.id;
        m.disposition = TB_DISP_PASSED;
        m.n_samples = 2; m.samples_ms = ms; m.median_ms = 1.25; m.tflops = 100;
        snprintf(m.method, sizeof m.method, "cold");
        if (tb_store_put_measurement(s, &m, msg, sizeof msg)) die("put a measurement");
    }
    if (tb_store_run_end(s, r.id, "complete", msg, sizeof msg)) die("end a run");
    return r.id;
}

/* The output of export (fmt "json"/"csv") or show (fmt NULL) of run, malloc'd. */
static char *output(tb_store *s, int64_t run, const char *fmt)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    int rc = fmt ? tb_export(s, run, fmt, f, msg, sizeof msg)
                 : tb_show_run(s, run, f, 1, 0, msg, sizeof msg);
    fclose(f);
    if (rc) die("export or show");
    return text;
}

static int has_key(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k) != NULL;
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/tb_attn_record.XXXXXX");
    if (!mkdtemp(g_dir)) { perror("mkdtemp"); return 2; }

    TB_CASE("attn-rec-1.1", "the sweep's record of an attention shape: its sizes, BHSD, bf16, 1/sqrt(D); GEMM's fields 0") {
        tb_problem_info p = attn_info("2x32x1024x4096x128:causal:hkv=8");
        TB_CHECK(!strcmp(p.op, "attention_fwd") && tb_problem_info_is_attention(&p));
        TB_CHECK(p.batch == 2 && p.heads == 32 && p.heads_kv == 8 && p.seq_q == 1024 &&
                 p.seq_k == 4096 && p.head_dim == 128 && p.causal == 1);
        TB_CHECK(p.softmax_scale == 1.0 / sqrt(128.0));
        TB_CHECK(!strcmp(p.dtypes, "bf16,bf16,bf16,bf16,f32") && !strcmp(p.layouts, "bhsd"));
        TB_CHECK(!strcmp(p.label, "llama3-8b.attn"));
        TB_CHECK(p.m == 0 && p.n == 0 && p.k == 0 && p.lda == 0 && p.ldd == 0 && p.alpha == 0 &&
                 p.beta == 0 && p.scale_a == 0 && p.scale_b == 0);
        char t[128];
        tb_problem_info_text(&p, t, sizeof t);
        TB_CHECK(!strcmp(t, "2x32x1024x4096x128:causal:hkv=8"));
        tb_problem_info g = gemm_info(4096);   /* a GEMM's record: no attention field set */
        TB_CHECK(!strcmp(g.op, "gemm") && g.m == 4096 && g.alpha == 1 && g.heads == 0 &&
                 g.heads_kv == 0 && g.seq_q == 0 && g.head_dim == 0 && g.softmax_scale == 0);
        tb_problem_info_text(&g, t, sizeof t);
        TB_CHECK(!strcmp(t, "4096x256x512"));
    }
    TB_CASE("attn-rec-1.2", "the ABI problem of the record: op, size, types, BHSD strides, scale as stored") {
        tb_problem_info p = attn_info("2x32x1024x4096x128:causal:hkv=8");
        tb_problem q;
        memset(&q, 0xff, sizeof q);
        tb_sweep_problem_abi(&p, &q);
        const tb_attention *a = &q.attention;
        TB_CHECK(q.struct_size == sizeof(tb_problem) && q.op == TB_OP_ATTENTION_FWD);
        TB_CHECK(q.gemm.m == 0 && q.gemm.lda == 0);   /* zeroed, not left over */
        TB_CHECK(a->batch == 2 && a->heads == 32 && a->heads_kv == 8 && a->seq_q == 1024 &&
                 a->seq_k == 4096 && a->head_dim == 128 && a->causal == 1 && a->layout == TB_ATTN_BHSD);
        TB_CHECK(a->q_type == TB_DTYPE_BF16 && a->k_type == TB_DTYPE_BF16 && a->v_type == TB_DTYPE_BF16 &&
                 a->o_type == TB_DTYPE_BF16 && a->acc_type == TB_DTYPE_F32 && a->lse_type == TB_DTYPE_F32);
        TB_CHECK(a->scale == p.softmax_scale);
        const int64_t H = 32, Hk = 8, Sq = 1024, Sk = 4096, D = 128;
        TB_CHECK(a->q_stride[0] == H * Sq * D && a->q_stride[1] == Sq * D && a->q_stride[2] == D);
        TB_CHECK(a->k_stride[0] == Hk * Sk * D && a->k_stride[1] == Sk * D && a->k_stride[2] == D);
        TB_CHECK(!memcmp(a->v_stride, a->k_stride, sizeof a->k_stride));
        TB_CHECK(!memcmp(a->o_stride, a->q_stride, sizeof a->q_stride));
        TB_CHECK(a->lse_stride[0] == H * Sq && a->lse_stride[1] == Sq);
        TB_CHECK(a->reserved[0] == 0 && a->reserved[3] == 0);
        /* BSHD: a token's heads together */
        tb_shape s = attn_shape("2x32x1024x4096x128:causal:hkv=8");
        tb_problem_info_attention(&s, TB_ATTN_BSHD, 0.05, &p);
        TB_CHECK(!strcmp(p.layouts, "bshd") && p.softmax_scale == 0.05);
        tb_sweep_problem_abi(&p, &q);
        TB_CHECK(a->layout == TB_ATTN_BSHD && a->scale == 0.05);
        TB_CHECK(a->q_stride[0] == Sq * H * D && a->q_stride[1] == D && a->q_stride[2] == H * D);
        TB_CHECK(a->k_stride[0] == Sk * Hk * D && a->k_stride[1] == D && a->k_stride[2] == Hk * D);
        TB_CHECK(a->lse_stride[0] == H * Sq && a->lse_stride[1] == Sq);
        /* and it crosses the wire whole */
        cJSON *o = tb_wire_problem_to_json(&q);
        tb_problem back;
        TB_CHECK(tb_wire_problem_from_json(o, &back, msg, sizeof msg) == TB_OK && !memcmp(&back, &q, sizeof q));
        cJSON_Delete(o);
        /* a record this build cannot read: no layout */
        snprintf(p.layouts, sizeof p.layouts, "tn");
        TB_CHECK(tb_problem_info_attention_abi(&p, &q, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "unknown layout 'tn'");
    }
    TB_CASE("attn-rec-2.1", "the store: a GEMM and an attention problem written and read back field by field") {
        tb_store *s = open_new("rt.db");
        int64_t pg, pa;
        int64_t run = fill(s, &pg, &pa);
        tb_result_row *rows = NULL;
        size_t n = 0;
        TB_CHECK(tb_store_results(s, run, &rows, &n, msg, sizeof msg) == TB_OK && n == 2);
        tb_problem_info g = gemm_info(1024), a = attn_info("1x32x4096x4096x128:causal:hkv=8");
        g.id = pg;
        a.id = pa;
        for (size_t i = 0; i < n; i++) {
            const tb_problem_info *want = rows[i].p.id == pg ? &g : &a;
            TB_CHECK(!memcmp(&rows[i].p, want, sizeof *want));   /* every field, bit for bit */
        }
        free(rows);
        tb_store_close(s);
    }
    TB_CASE("attn-rec-2.2", "the key: the same attention problem is found, each field of it makes a new one, the label does not") {
        tb_store *s = open_new("key.db");
        tb_problem_info a = attn_info("1x32x4096x4096x128:causal:hkv=8"), b = a;
        TB_CHECK(tb_store_put_problem(s, &a, msg, sizeof msg) == TB_OK);
        snprintf(b.label, sizeof b.label, "another label");
        TB_CHECK(tb_store_put_problem(s, &b, msg, sizeof msg) == TB_OK && b.id == a.id);
        int64_t ids[8];
        int k = 0;
        for (int f = 0; f < 8; f++) {
            tb_problem_info c = attn_info("1x32x4096x4096x128:causal:hkv=8");
            switch (f) {
            case 0: c.batch = 2; break;
            case 1: c.heads = 64; break;
            case 2: c.heads_kv = 4; break;
            case 3: c.seq_q = 2048; break;
            case 4: c.seq_k = 8192; break;
            case 5: c.head_dim = 64; break;
            case 6: c.causal = 0; break;
            case 7: c.softmax_scale = 0.125; break;
            }
            TB_CHECK(tb_store_put_problem(s, &c, msg, sizeof msg) == TB_OK && c.id != a.id);
            ids[k++] = c.id;
        }
        for (int i = 0; i < k; i++)
            for (int j = i + 1; j < k; j++) TB_CHECK(ids[i] != ids[j]);
        tb_problem_info c = attn_info("1x32x4096x4096x128:causal:hkv=8");
        snprintf(c.layouts, sizeof c.layouts, "bshd");
        TB_CHECK(tb_store_put_problem(s, &c, msg, sizeof msg) == TB_OK && c.id != a.id);
        tb_store_close(s);
        TB_CHECK(raw_int(at("key.db"), "SELECT count(*) FROM pragma_index_info("
                         "(SELECT name FROM pragma_index_list('problems') WHERE origin = 'u'))") == 22);
    }
    TB_CASE("attn-rec-2.3", "the store refuses a record mixing the ops or an attention problem it could not read") {
        tb_store *s = open_new("bad.db");
        static const char *const want[] = {
            "an attention problem with GEMM sizes", "a GEMM problem with attention sizes",
            "non-positive size", "non-positive size", "scale is not positive",
            "causal is not 0 or 1", "layout 'tn'" };
        for (int f = 0; f < 7; f++) {
            tb_problem_info p = f == 1 ? gemm_info(64) : attn_info("1x8x128x128x64");
            switch (f) {
            case 0: p.lda = 64; break;
            case 1: p.heads = 8; break;
            case 2: p.seq_k = 0; break;
            case 3: p.heads_kv = 3; break;
            case 4: p.softmax_scale = 0; break;
            case 5: p.causal = 2; break;
            case 6: snprintf(p.layouts, sizeof p.layouts, "tn"); break;
            }
            TB_CHECK(tb_store_put_problem(s, &p, msg, sizeof msg) == TB_EINTERNAL);
            TB_CHECK_STR_CONTAINS(msg, want[f]);
        }
        tb_store_close(s);
        TB_CHECK(raw_int(at("bad.db"), "SELECT count(*) FROM problems") == 0);
    }
    TB_CASE("attn-rec-3.1", "schema 9: a v8 file's problems keep their ids and values, get 0 attention columns; "
                            "a reading command refuses it naming the version and 'tilebench migrate'") {
        const char *p = at("v8.db");
        TB_CHECK(tb_store_create_at_version(p, 8, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_exec(p, "INSERT INTO runs (id, started_at, status, uid) VALUES (3, 'x', 'complete', 'u3');"
                             "INSERT INTO problems (id,op,m,n,k,batch,dtypes,layouts,lda,ldb,ldc,ldd,alpha,beta,"
                             "label,scale_a,scale_b) VALUES (42,'gemm',64,32,16,2,'e4m3,e4m3,bf16,bf16,f32','tn',"
                             "16,16,32,32,1,0.5,'old',0.015625,0.03125),(7,'gemm',8,8,8,1,"
                             "'bf16,bf16,bf16,bf16,f32','nn',8,8,8,8,1,0,NULL,0,0);"
                             "INSERT INTO variants (id, run_id, name) VALUES (1, 3, 'v');"
                             "INSERT INTO measurements (run_id, variant_id, problem_id, status,"
                             " disposition) VALUES (3, 1, 42, 'ok', 'passed'), (3, 1, 7, 'ok', 'passed')") == SQLITE_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 1, &s, msg, sizeof msg) == TB_EDB && !s);
        TB_CHECK_STR_CONTAINS(msg, "schema version 8; this one reads 9");
        TB_CHECK_STR_CONTAINS(msg, "run 'tilebench migrate --db ");
        TB_CHECK(raw_int(p, "PRAGMA user_version") == 8);
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s && tb_store_found_version(s) == 8);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == TB_SCHEMA_VERSION);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM problems WHERE id = 42 AND op = 'gemm' AND m = 64 AND n = 32"
                            " AND k = 16 AND batch = 2 AND dtypes = 'e4m3,e4m3,bf16,bf16,f32' AND layouts = 'tn'"
                            " AND lda = 16 AND ldd = 32 AND alpha = 1 AND beta = 0.5 AND label = 'old'"
                            " AND scale_a = 0.015625 AND scale_b = 0.03125 AND heads = 0 AND heads_kv = 0"
                            " AND seq_q = 0 AND seq_k = 0 AND head_dim = 0 AND causal = 0"
                            " AND softmax_scale = 0") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM problems WHERE id = 7 AND label IS NULL AND layouts = 'nn'") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM measurements WHERE problem_id IN (7, 42)") == 2);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM pragma_foreign_key_check") == 0);
        /* the migrated rows are found by their description, and read back whole */
        tb_problem_info q;
        memset(&q, 0, sizeof q);
        snprintf(q.op, sizeof q.op, "gemm");
        q.m = 8; q.n = 8; q.k = 8; q.batch = 1; q.lda = q.ldb = q.ldc = q.ldd = 8; q.alpha = 1;
        snprintf(q.dtypes, sizeof q.dtypes, "bf16,bf16,bf16,bf16,f32");
        snprintf(q.layouts, sizeof q.layouts, "nn");
        TB_CHECK(s && tb_store_put_problem(s, &q, msg, sizeof msg) == TB_OK && q.id == 7);
        tb_problem_info a = attn_info("1x8x128x128x64");
        TB_CHECK(s && tb_store_put_problem(s, &a, msg, sizeof msg) == TB_OK && a.id == 43);
        tb_result_row *rows = NULL;
        size_t n = 0;
        TB_CHECK(s && tb_store_results(s, 3, &rows, &n, msg, sizeof msg) == TB_OK && n == 2);
        for (size_t i = 0; i < n; i++)
            if (rows[i].p.id == 42)
                TB_CHECK(rows[i].p.scale_b == 0.03125 && rows[i].p.beta == 0.5 && rows[i].p.heads == 0 &&
                         !strcmp(rows[i].p.label, "old"));
        free(rows);
        tb_store_close(s);
        s = NULL;
        TB_CHECK(tb_store_open(p, 0, 1, &s, msg, sizeof msg) == TB_OK);   /* now it reads */
        tb_store_close(s);
    }
    TB_CASE("attn-rec-4.1", "merge: an attention problem is matched by its key, copied once") {
        tb_store *a = open_new("ma.db"), *b = open_new("mb.db");
        int64_t pg, pa, qg, qa;
        fill(a, &pg, &pa);
        tb_problem_info other = attn_info("1x8x128x128x64");   /* b's ids differ from a's */
        TB_CHECK(tb_store_put_problem(b, &other, msg, sizeof msg) == TB_OK);
        fill(b, &qg, &qa);
        tb_store_close(a);
        TB_CHECK(qa != pa);
        tb_merge_counts c;
        TB_CHECK(tb_store_merge(b, at("ma.db"), &c, msg, sizeof msg) == TB_OK && c.runs == 1 &&
                 c.measurements == 2 && c.samples == 4);
        TB_CHECK(tb_store_merge(b, at("ma.db"), &c, msg, sizeof msg) == TB_OK && c.runs == 0 &&
                 c.runs_present == 1);
        tb_store_close(b);
        TB_CHECK(raw_int(at("mb.db"), "SELECT count(*) FROM problems") == 3);
        TB_CHECK(raw_int(at("mb.db"), "SELECT count(DISTINCT problem_id) FROM measurements") == 2);
        TB_CHECK(raw_int(at("mb.db"), "SELECT count(*) FROM measurements m JOIN problems p ON p.id = m.problem_id"
                                      " WHERE p.op = 'attention_fwd' AND p.heads_kv = 8 AND p.causal = 1") == 2);
    }
    TB_CASE("attn-rec-5.1", "export JSON: the GEMM problem's object as before, the attention problem's own fields") {
        tb_store *s = open_new("ex.db");
        int64_t pg, pa;
        int64_t run = fill(s, &pg, &pa);
        char *text = output(s, run, "json");
        cJSON *doc = cJSON_Parse(text);
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(doc, "results"), *it;
        int seen = 0;
        cJSON_ArrayForEach(it, res) {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "problem");
            const char *op = tb_json_str(p, "op", "");
            if (!strcmp(op, "gemm")) {
                static const char *const keys[] = { "id", "op", "m", "n", "k", "batch", "dtypes",
                    "layouts", "lda", "ldb", "ldc", "ldd", "alpha", "beta", "label" };
                int i = 0;
                for (const cJSON *c = p->child; c; c = c->next, i++)
                    TB_CHECK(i < 15 && !strcmp(c->string, keys[i]));
                TB_CHECK(i == 15);
                seen |= 1;
            } else {
                TB_CHECK(!strcmp(op, "attention_fwd"));
                TB_CHECK(!strcmp(tb_json_str(p, "shape", ""), "1x32x4096x4096x128:causal:hkv=8"));
                TB_CHECK(tb_json_num(p, "batch", 0) == 1 && tb_json_num(p, "heads", 0) == 32 &&
                         tb_json_num(p, "heads_kv", 0) == 8 && tb_json_num(p, "seq_q", 0) == 4096 &&
                         tb_json_num(p, "seq_k", 0) == 4096 && tb_json_num(p, "head_dim", 0) == 128);
                TB_CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "causal")));
                TB_CHECK(tb_json_num(p, "softmax_scale", 0) == 1.0 / sqrt(128.0));
                TB_CHECK(!strcmp(tb_json_str(p, "layout", ""), "bhsd") &&
                         !strcmp(tb_json_str(p, "dtypes", ""), "bf16,bf16,bf16,bf16,f32") &&
                         !strcmp(tb_json_str(p, "label", ""), "llama3-8b.attn"));
                TB_CHECK(!has_key(p, "m") && !has_key(p, "lda") && !has_key(p, "alpha"));
                seen |= 2;
            }
        }
        TB_CHECK(seen == 3);
        cJSON_Delete(doc);
        free(text);
        tb_store_close(s);
    }
    TB_CASE("attn-rec-5.2", "export CSV: attention columns only in a run that has one; m, n, k empty in its row") {
        tb_store *s = open_new("csv.db");
        int64_t pg, pa;
        int64_t run = fill(s, &pg, &pa);
        char *text = output(s, run, "csv");
        TB_CHECK_STR_CONTAINS(text, ",stop_reason,sha256,host_launch_ms,host_bound,op,shape,heads,"
                                    "heads_kv,seq_q,seq_k,head_dim,causal,softmax_scale,tile_m\n");
        TB_CHECK_STR_CONTAINS(text, ",flash_fwd,flash,1024,256,512,1,\"bf16,bf16,bf16,bf16,f32\",tn,");
        TB_CHECK_STR_CONTAINS(text, ",gemm,1024x256x512,,,,,,,,128\n");
        TB_CHECK_STR_CONTAINS(text, ",flash_fwd,flash,,,,1,\"bf16,bf16,bf16,bf16,f32\",bhsd,");
        TB_CHECK_STR_CONTAINS(text, ",attention_fwd,1x32x4096x4096x128:causal:hkv=8,32,8,4096,4096,128,"
                                    "true,0.0883883476483");
        free(text);
        /* a run of GEMM problems only: the header it always had */
        tb_store *g = open_new("csvg.db");
        tb_run_info r;
        memset(&r, 0, sizeof r);
        TB_CHECK(tb_store_run_begin(g, &r, msg, sizeof msg) == TB_OK);
        text = output(g, r.id, "csv");
        TB_CHECK(!strcmp(text, "run_id,variant,family,m,n,k,batch,dtypes,layouts,status,disposition,"
                               "reason,rule,median_ms,mean_ms,stdev_ms,min_ms,max_ms,rse,n_samples,"
                               "tflops,clock_mhz,max_abs_err,rel_fro_err,method,stop_reason,sha256,"
                               "host_launch_ms,host_bound\n"));
        free(text);
        tb_store_close(g);
        tb_store_close(s);
    }
    TB_CASE("attn-rec-5.3", "show: the attention block names its token, layout, types and scale; the GEMM block as before") {
        tb_store *s = open_new("show.db");
        int64_t pg, pa;
        int64_t run = fill(s, &pg, &pa);
        char *text = output(s, run, NULL);
        TB_CHECK_STR_CONTAINS(text, "\nshape 1024x256x512  g  (tn, bf16,bf16,bf16,bf16,f32)\n");
        TB_CHECK_STR_CONTAINS(text, "\nshape 1x32x4096x4096x128:causal:hkv=8  llama3-8b.attn  (attention, "
                                    "bhsd, bf16,bf16,bf16,bf16,f32, scale 0.0883883)\n");
        /* the attention row's re-measure and profile lines name its token (the worker's NVTX name) */
        TB_CHECK_STR_CONTAINS(text, "--shapes 1x32x4096x4096x128:causal:hkv=8 --seed");
        TB_CHECK_STR_CONTAINS(text, "--nvtx-include 'tb/flash_fwd/1x32x4096x4096x128:causal:hkv=8/timed/'");
        TB_CHECK(!strstr(text, "--shapes 1x32x4096x4096x128:causal:hkv=8 --layout"));
        TB_CHECK_STR_CONTAINS(text, "re-measure: tilebench sweep --variants");   /* the GEMM row's */
        free(text);
        tb_problem_info a = attn_info("1x32x4096x4096x128:causal:hkv=8");
        char key[96];
        tb_side_shape_key(&a, key, sizeof key);   /* compare's key */
        TB_CHECK(!strcmp(key, "1x32x4096x4096x128:causal:hkv=8 bhsd"));
        tb_store_close(s);
    }

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) printf("cannot remove %s\n", g_dir);
    return tb_test_done();
}
