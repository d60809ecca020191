/* test_job_line.c - the session protocol of tilebench-worker measure (worker/job.h, issue 25),
 * without a GPU: the worker's side of a job line (worker/job_line.c: its variants, "more", the
 * check that a follow-up job is for the first job's problem), the parent's job and session key
 * (driver/worker_job.c, driver/session.c) agreeing with it, and the session's worker kept,
 * taken back and ended (a shell for a worker). */
#define _GNU_SOURCE
#include "tb_test.h"
#include "common/tb.h"
#include "driver/session.h"
#include "driver/sweep.h"
#include "driver/worker_job.h"
#include "worker/job_line.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static const char *JOB =
    "{\"device\":0,\"seed\":7,\"stop\":\"stdrel\",\"problem\":{\"m\":128,\"n\":256,\"k\":64},"
    "\"variants\":[{\"name\":\"a\",\"file\":\"a.so\",\"index\":0},{\"name\":\"b\",\"file\":\"b.so\",\"index\":1}]%s}";

static char *job(const char *more)
{
    char *s = NULL;
    if (asprintf(&s, JOB, more) < 0) return NULL;
    return s;
}

int main(void)
{
    char msg[TB_MSG_LEN];
    TB_CASE("job-1.1", "a sweep's job: its variants apart, no \"more\"") {
        char *l = job("");
        cJSON *rest = NULL, *vs = NULL;
        int more = -1;
        TB_CHECK(tbw_job_split(l, &rest, &vs, &more, msg, sizeof msg) == TB_OK);
        TB_CHECK(more == 0 && cJSON_GetArraySize(vs) == 2);
        TB_CHECK(rest && !cJSON_GetObjectItemCaseSensitive(rest, "variants") &&
                 cJSON_GetObjectItemCaseSensitive(rest, "problem"));
        cJSON_Delete(rest); cJSON_Delete(vs); free(l);
    }
    TB_CASE("job-1.2", "\"more\": true (or non-zero) asks for another job; false, 0 do not") {
        const char *m[] = { ",\"more\":true", ",\"more\":1", ",\"more\":false", ",\"more\":0" };
        const int want[] = { 1, 1, 0, 0 };
        for (int i = 0; i < 4; i++) {
            char *l = job(m[i]);
            cJSON *rest = NULL, *vs = NULL;
            int more = -1;
            TB_CHECK(tbw_job_split(l, &rest, &vs, &more, msg, sizeof msg) == TB_OK && more == want[i]);
            TB_CHECK(!cJSON_GetObjectItemCaseSensitive(rest, "more"));
            cJSON_Delete(rest); cJSON_Delete(vs); free(l);
        }
    }
    TB_CASE("job-1.3", "a follow-up job with other variants, keys in another order, is the same job") {
        char *l = job(",\"more\":true");
        cJSON *first = NULL, *vs = NULL, *rest = NULL, *vs2 = NULL;
        int more = 0;
        TB_CHECK(tbw_job_split(l, &first, &vs, &more, msg, sizeof msg) == TB_OK);
        const char *next = "{\"more\":true,\"variants\":[{\"name\":\"c\",\"file\":\"c.so\",\"index\":2}],"
                           "\"problem\":{\"k\":64,\"n\":256,\"m\":128},\"stop\":\"stdrel\",\"seed\":7,\"device\":0}";
        TB_CHECK(tbw_job_split(next, &rest, &vs2, &more, msg, sizeof msg) == TB_OK && more == 1);
        TB_CHECK(cJSON_GetArraySize(vs2) == 1);
        TB_CHECK(tbw_job_same(first, rest, msg, sizeof msg) == TB_OK);
        cJSON_Delete(first); cJSON_Delete(vs); cJSON_Delete(rest); cJSON_Delete(vs2); free(l);
    }
    TB_CASE("job-1.4", "a follow-up job for another problem, seed or options is refused, naming the key") {
        char *l = job("");
        cJSON *first = NULL, *vs = NULL;
        int more = 0;
        TB_CHECK(tbw_job_split(l, &first, &vs, &more, msg, sizeof msg) == TB_OK);
        const char *other[][2] = {
            { "{\"device\":0,\"seed\":7,\"stop\":\"stdrel\",\"problem\":{\"m\":129,\"n\":256,\"k\":64}}", "problem" },
            { "{\"device\":0,\"seed\":8,\"stop\":\"stdrel\",\"problem\":{\"m\":128,\"n\":256,\"k\":64}}", "seed" },
            { "{\"device\":0,\"seed\":7,\"stop\":\"stdrel\",\"problem\":{\"m\":128,\"n\":256,\"k\":64},\"pace\":1}", "pace" },
            { "{\"device\":0,\"seed\":7,\"problem\":{\"m\":128,\"n\":256,\"k\":64}}", "stop" } };
        for (int i = 0; i < 4; i++) {
            cJSON *rest = NULL, *v2 = NULL;
            TB_CHECK(tbw_job_split(other[i][0], &rest, &v2, &more, msg, sizeof msg) == TB_OK);
            TB_CHECK(tbw_job_same(first, rest, msg, sizeof msg) == TB_EUSAGE);
            char want[64];
            snprintf(want, sizeof want, "\"%s\" differs", other[i][1]);
            TB_CHECK_STR_CONTAINS(msg, want);
            cJSON_Delete(rest); cJSON_Delete(v2);
        }
        cJSON_Delete(first); cJSON_Delete(vs); free(l);
    }
    TB_CASE("job-1.5", "not a job: not JSON, not an object, variants not an array") {
        const char *bad[] = { "{not json", "[1,2]", "{\"variants\":{}}" };
        for (int i = 0; i < 3; i++) {
            cJSON *rest = (cJSON *)1, *vs = (cJSON *)1;
            int more = 0;
            TB_CHECK(tbw_job_split(bad[i], &rest, &vs, &more, msg, sizeof msg) == TB_EWORKER);
            TB_CHECK(rest == NULL && vs == NULL);
        }
    }
    TB_CASE("job-2.1", "the parent's jobs of one shape share one session key, which the worker accepts") {
        tb_sweep_opts o;
        tb_sweep_opts_default(&o);
        tb_shape sh = { .m = 1024, .n = 8192, .k = 8192, .batch = 1, .label = "1024x8192x8192", .op = TB_OP_GEMM };
        tb_problem_info pi;
        tb_problem prob;
        tb_sweep_problem(&sh, &o, &pi);
        tb_sweep_problem_abi(&pi, &prob);
        tb_catalog cat;
        memset(&cat, 0, sizeof cat);
        tb_variant_info v[3];
        memset(v, 0, sizeof v);
        for (int i = 0; i < 3; i++) {
            snprintf(v[i].name, sizeof v[i].name, "point_%d_tn", i);
            snprintf(v[i].file, sizeof v[i].file, "/lib/point_%d.so", i);
            v[i].index = i;
        }
        cat.v = v;
        cat.n = 3;
        int r1[3] = { 1, 1, 0 }, r2[3] = { 0, 0, 1 };
        cJSON *j1 = tb_worker_job_json(&o, &prob, &cat, r1, 3, 42), *j2 = tb_worker_job_json(&o, &prob, &cat, r2, 3, 42);
        cJSON *j3 = tb_worker_job_json(&o, &prob, &cat, r2, 3, 43);   /* another shape's seed */
        char *k1 = tb_shape_session_key(j1), *k2 = tb_shape_session_key(j2), *k3 = tb_shape_session_key(j3);
        TB_CHECK(k1 && k2 && k3 && !strcmp(k1, k2) && strcmp(k1, k3));
        TB_CHECK(k1 && !strstr(k1, "variants") && !strstr(k1, "more"));
        cJSON_AddTrueToObject(j1, "more");
        cJSON_AddTrueToObject(j2, "more");
        char *l1 = cJSON_PrintUnformatted(j1), *l2 = cJSON_PrintUnformatted(j2);
        cJSON *f = NULL, *fv = NULL, *r = NULL, *rv = NULL, *kj = k1 ? cJSON_Parse(k1) : NULL;
        int more = 0;
        TB_CHECK(tbw_job_split(l1, &f, &fv, &more, msg, sizeof msg) == TB_OK && more == 1);
        TB_CHECK(tbw_job_split(l2, &r, &rv, &more, msg, sizeof msg) == TB_OK && more == 1);
        TB_CHECK(cJSON_GetArraySize(fv) == 2 && cJSON_GetArraySize(rv) == 1);
        TB_CHECK(tbw_job_same(f, r, msg, sizeof msg) == TB_OK);
        TB_CHECK(kj && cJSON_Compare(kj, f, 1));
        cJSON_Delete(f); cJSON_Delete(fv); cJSON_Delete(r); cJSON_Delete(rv); cJSON_Delete(kj);
        cJSON_free(l1); cJSON_free(l2);
        free(k1); free(k2); free(k3);
        cJSON_Delete(j1); cJSON_Delete(j2); cJSON_Delete(j3);
        /* a search round (no_confirm) asks the worker for no confirming pass: "confirm": 0,
         * which the worker reads (job.c, default 1); a sweep's job names no "confirm" */
        const cJSON *c0 = NULL;
        cJSON *js = tb_worker_job_json(&o, &prob, &cat, r1, 3, 42);
        TB_CHECK(js && !cJSON_GetObjectItemCaseSensitive(js, "confirm"));
        o.no_confirm = 1;
        cJSON *jn = tb_worker_job_json(&o, &prob, &cat, r1, 3, 42);
        TB_CHECK(jn && (c0 = cJSON_GetObjectItemCaseSensitive(jn, "confirm")) && cJSON_IsNumber(c0)
                 && c0->valuedouble == 0);
        cJSON_Delete(js); cJSON_Delete(jn);
    }
    TB_CASE("job-2.2", "a session keeps a worker for its key, gives it back, ends it on another key or close") {
        tb_shape_session s;
        tb_shape_session_open(&s);
        char *argv[] = { (char *)"sh", (char *)"-c", (char *)"cat > /dev/null", NULL };
        tb_proc p, q;
        char *env = NULL;
        TB_CHECK(tb_shape_session_take(&s, "k1", &q, &env) == 0 && env == NULL);   /* none yet */
        TB_CHECK(tb_proc_start(&p, "/bin/sh", argv, msg, sizeof msg) == TB_OK);
        const pid_t pid = p.pid;
        tb_shape_session_env(&s, "{\"type\":\"env\"}");
        tb_shape_session_keep(&s, &p, "k1");
        TB_CHECK(s.live && kill(pid, 0) == 0);
        TB_CHECK(tb_shape_session_take(&s, "k1", &q, &env) == 1 && q.pid == pid && !s.live);
        TB_CHECK(env && !strcmp(env, "{\"type\":\"env\"}"));
        free(env);
        tb_shape_session_keep(&s, &q, "k1");
        TB_CHECK(tb_shape_session_take(&s, "k2", &q, &env) == 0 && !s.live);   /* another shape */
        TB_CHECK(kill(pid, 0) == -1 && errno == ESRCH);   /* ended at end of file, reaped */
        TB_CHECK(tb_proc_start(&p, "/bin/sh", argv, msg, sizeof msg) == TB_OK);
        const pid_t pid2 = p.pid;
        tb_shape_session_keep(&s, &p, "k2");
        TB_CHECK(tb_shape_session_close(&s) > 0 && !s.live && s.key == NULL && s.env_line == NULL);
        TB_CHECK(kill(pid2, 0) == -1 && errno == ESRCH);
        TB_CHECK(tb_shape_session_close(&s) == 0);   /* nothing left */
    }
    TB_CASE("job-2.3", "--keep-worker: one session key for every shape, which the worker follows: "
            "another problem and seed are taken, another option refused; without it, refused") {
        tb_sweep_opts o;
        tb_sweep_opts_default(&o);
        o.keep_worker = 1;
        tb_shape sa = { .m = 1024, .n = 8192, .k = 8192, .batch = 1, .label = "a", .op = TB_OP_GEMM };
        tb_shape sb = { .m = 16, .n = 4096, .k = 1024, .batch = 1, .label = "b", .op = TB_OP_GEMM };
        tb_problem_info pa, pb;
        tb_problem qa, qb;
        tb_sweep_problem(&sa, &o, &pa);
        tb_sweep_problem(&sb, &o, &pb);
        tb_sweep_problem_abi(&pa, &qa);
        tb_sweep_problem_abi(&pb, &qb);
        tb_catalog cat;
        memset(&cat, 0, sizeof cat);
        tb_variant_info v[1];
        memset(v, 0, sizeof v);
        snprintf(v[0].name, sizeof v[0].name, "point_tn");
        snprintf(v[0].file, sizeof v[0].file, "/lib/point.so");
        cat.v = v;
        cat.n = 1;
        int all[1] = { 1 };
        cJSON *ja = tb_worker_job_json(&o, &qa, &cat, all, 1, 42), *jb = tb_worker_job_json(&o, &qb, &cat, all, 1, 43);
        char *ka = tb_shape_session_key(ja), *kb = tb_shape_session_key(jb);
        TB_CHECK(ka && kb && !strcmp(ka, kb));   /* two shapes, two seeds: one worker */
        TB_CHECK(ka && !strstr(ka, "problem") && !strstr(ka, "\"seed\"") && strstr(ka, "keep_worker"));
        o.pace = 1;                              /* another option: another worker */
        cJSON *jc = tb_worker_job_json(&o, &qb, &cat, all, 1, 43);
        char *kc = tb_shape_session_key(jc);
        TB_CHECK(kc && ka && strcmp(ka, kc));
        char *la = cJSON_PrintUnformatted(ja), *lb = cJSON_PrintUnformatted(jb), *lc = cJSON_PrintUnformatted(jc);
        cJSON *fa = NULL, *va = NULL, *rb = NULL, *vb = NULL, *rc = NULL, *vc = NULL;
        int more = 0, retake = -1;
        TB_CHECK(tbw_job_split(la, &fa, &va, &more, msg, sizeof msg) == TB_OK);
        TB_CHECK(tbw_job_split(lb, &rb, &vb, &more, msg, sizeof msg) == TB_OK);
        TB_CHECK(tbw_job_split(lc, &rc, &vc, &more, msg, sizeof msg) == TB_OK);
        TB_CHECK(tbw_job_follow(fa, fa, fa, &retake, msg, sizeof msg) == TB_OK && retake == 0);
        TB_CHECK(tbw_job_follow(fa, fa, rb, &retake, msg, sizeof msg) == TB_OK && retake == 1);
        TB_CHECK(tbw_job_follow(fa, rb, rb, &retake, msg, sizeof msg) == TB_OK && retake == 0);
        TB_CHECK(tbw_job_follow(fa, rb, fa, &retake, msg, sizeof msg) == TB_OK && retake == 1);
        TB_CHECK(tbw_job_follow(fa, rb, rc, &retake, msg, sizeof msg) == TB_EUSAGE && retake == 0);
        TB_CHECK_STR_CONTAINS(msg, "\"pace\" differs");
        /* the first job without keep_worker: a new problem is refused, as before */
        cJSON_DeleteItemFromObjectCaseSensitive(fa, "keep_worker");
        TB_CHECK(tbw_job_follow(fa, fa, rb, &retake, msg, sizeof msg) == TB_EUSAGE && retake == 0);
        TB_CHECK_STR_CONTAINS(msg, "differs");
        cJSON_Delete(fa); cJSON_Delete(va); cJSON_Delete(rb); cJSON_Delete(vb); cJSON_Delete(rc); cJSON_Delete(vc);
        cJSON_free(la); cJSON_free(lb); cJSON_free(lc);
        free(ka); free(kb); free(kc);
        cJSON_Delete(ja); cJSON_Delete(jb); cJSON_Delete(jc);
    }
    return tb_test_done();
}
