/* test_attn_rule_device.cu - the attention rule summed on the GPU (device/tbdev_attn.h, what the
 * worker runs since the sixteenth session) against the host rule (worker/rule_attention.c,
 * tb_attn_rule_check: the specification), on the same data. GPU test: exit 77 without a GPU
 * (after the host-only case, which runs anywhere).
 *
 *   rdev-0    host only: tb_attn_rule_begin + tb_attn_rule_finish with the host walk's own
 *             sums give tb_attn_rule_check's verdict (the two halves are the rule).
 *   rdev-1.x  per shape (head dims 40, 64, 128 and 256, BHSD and BSHD; O and LSE with padded strides whose
 *             padding holds NaN, so a read outside the tensor is a non-finite element), a
 *             reference drawn on the host and O = the reference rounded to BF16, then:
 *             clean; a few elements past their allowance; a NaN and an Inf in O; a NaN in a head
 *             whose other elements are far off (its norm must not count); every element
 *             of one head 0.7 of its allowance off (passes elementwise, fails the head norm);
 *             LSE past its allowance; a NaN in LSE; a non-finite reference element (both
 *             TB_EINTERNAL, the same message). For each: the same return code, verdict, rule
 *             and reason, every count and first index equal, the maxima within 1e-12 and the
 *             norms within 1e-9 relative (the device sums in another order).
 *   rdev-2    the largest row norm of a strided Q and K (padding NaN): the device's against
 *             the host's, 1e-12 relative, so the two bounds on the scores agree; with a NaN in
 *             Q both refuse (TB_EUSAGE).
 * It prints the device check's time beside the host's on the largest shape (information, not
 * asserted).
 */
#include "tb_test.h"
extern "C" {
#include "common/tb.h"
#include "worker/rule_attention.h"
}
#include "device/tbdev_attn.h"
#include "probe_common.h"   /* pc_bf16(), pc_float() */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <vector>

static uint64_t rng_state = 0x2026112716ull;
static double urand()   /* [0, 1) */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1p-53;
}
static double now()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* BHSD (bshd 0) or BSHD (1) strides, each row padded by pad elements */
static tb_attention problem(int64_t B, int64_t H, int64_t Sq, int64_t D, int64_t pad, int bshd = 0)
{
    tb_attention a;
    memset(&a, 0, sizeof a);
    a.batch = B; a.heads = H; a.heads_kv = H; a.seq_q = Sq; a.seq_k = Sq; a.head_dim = D;
    a.scale = 1.0 / sqrt((double)D);
    a.q_type = a.k_type = a.v_type = a.o_type = TB_DTYPE_BF16;
    a.acc_type = a.lse_type = TB_DTYPE_F32;
    const int64_t row = D + pad;
    if (bshd) {   /* [B][S][H][D]: a head's rows H rows apart */
        a.o_stride[2] = H * row; a.o_stride[1] = row; a.o_stride[0] = Sq * H * row;
    } else {
        a.o_stride[2] = row; a.o_stride[1] = Sq * row; a.o_stride[0] = H * Sq * row;
    }
    memcpy(a.q_stride, a.o_stride, sizeof a.o_stride);
    memcpy(a.k_stride, a.q_stride, sizeof a.q_stride);
    memcpy(a.v_stride, a.q_stride, sizeof a.q_stride);
    a.lse_stride[1] = Sq + pad; a.lse_stride[0] = H * (Sq + pad);
    return a;
}

struct Data {
    std::vector<float> oref, lref, lse;   /* contiguous; lse the variant's */
    std::vector<uint16_t> o;              /* contiguous, the variant's */
};

/* both rules on d; checks they agree; returns the host's verdict */
static void compare(const char *what, const tb_attention &a, const Data &d, double qk,
                    double *t_host, double *t_dev)
{
    const uint64_t heads = (uint64_t)(a.batch * a.heads), no = d.o.size(), nl = d.lse.size();
    /* the variant's O and LSE laid out with their strides, the padding NaN */
    const size_t ospan = (size_t)(a.batch * a.o_stride[0]), lspan = (size_t)(a.batch * a.lse_stride[0]);
    std::vector<uint16_t> os(ospan, 0x7FC1u);
    std::vector<float> ls(lspan, NAN);
    for (uint64_t x = 0; x < no; x++) {
        const uint64_t c = x % (uint64_t)a.head_dim, r = x / (uint64_t)a.head_dim;
        const uint64_t i = r % (uint64_t)a.seq_q, bh = r / (uint64_t)a.seq_q;
        const uint64_t b = bh / (uint64_t)a.heads, h = bh % (uint64_t)a.heads;
        os[b * a.o_stride[0] + h * a.o_stride[1] + i * a.o_stride[2] + c] = d.o[x];
    }
    for (uint64_t x = 0; x < nl; x++) {
        const uint64_t i = x % (uint64_t)a.seq_q, bh = x / (uint64_t)a.seq_q;
        ls[(bh / (uint64_t)a.heads) * a.lse_stride[0] + (bh % (uint64_t)a.heads) * a.lse_stride[1] + i] = d.lse[x];
    }
    float *doref, *dlref, *dls;
    uint16_t *dos;
    void *ws;
    const size_t wsb = tbdev_attn_rule_ws_bytes(heads);
    TB_CHECK(cudaMalloc(&doref, no * 4) == cudaSuccess && cudaMalloc(&dlref, nl * 4) == cudaSuccess &&
             cudaMalloc(&dls, lspan * 4) == cudaSuccess && cudaMalloc(&dos, ospan * 2) == cudaSuccess &&
             cudaMalloc(&ws, wsb) == cudaSuccess);
    cudaMemcpy(doref, d.oref.data(), no * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dlref, d.lref.data(), nl * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dls, ls.data(), lspan * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dos, os.data(), ospan * 2, cudaMemcpyHostToDevice);

    char mh[TB_MSG_LEN] = "", md[TB_MSG_LEN] = "";
    tb_attn_verdict vh, vd;
    double t0 = now();
    const int rh = tb_attn_rule_check(&a, d.oref.data(), d.lref.data(), d.o.data(), d.lse.data(),
                                      qk, &vh, mh, sizeof mh);
    double t1 = now();
    int rd = tb_attn_rule_begin(&a, qk, &vd, md, sizeof md);
    TB_CHECK(rd == TB_OK);
    std::vector<double> he(heads), hr(heads);
    std::vector<uint32_t> hf(heads);
    tbdev_attn_sums sm;
    int e = tbdev_attn_rule_reset(ws, heads, 0);
    if (!e) e = tbdev_attn_rule_o(doref, dos, a.o_stride, a.batch, a.heads, a.seq_q, a.head_dim,
                                  vd.o_atol, vd.o_rtol, ws, 0);
    if (!e) e = tbdev_attn_rule_lse(dlref, dls, a.lse_stride, a.batch, a.heads, a.seq_q, vd.lse_atol,
                                    vd.lse_rtol, ws, 0);
    if (!e) e = tbdev_attn_rule_read(ws, heads, &sm, he.data(), hr.data(), hf.data(), 0);
    TB_CHECK(e == 0);
    tb_attn_rule_take(&vd, 0, sm.o.n_bad, sm.o.n_nonfinite, sm.o.first_bad, sm.o.first_nonfinite,
                      sm.o.max_abs_err, sm.o.max_ratio);
    tb_attn_rule_take(&vd, 1, sm.lse.n_bad, sm.lse.n_nonfinite, sm.lse.first_bad,
                      sm.lse.first_nonfinite, sm.lse.max_abs_err, sm.lse.max_ratio);
    rd = tb_attn_rule_finish(&a, sm.o.ref_first, sm.lse.ref_first, he.data(), hr.data(), hf.data(), &vd,
                             md, sizeof md);
    double t2 = now();
    if (t_host) *t_host = t1 - t0;
    if (t_dev) *t_dev = t2 - t1;
    printf("  %-34s host: rc %d %s%s%s | device: rc %d %s%s%s\n", what, rh,
           rh ? mh : vh.passed ? "passed" : vh.rule, rh || vh.passed ? "" : ": ", rh || vh.passed ? "" : vh.reason,
           rd, rd ? md : vd.passed ? "passed" : vd.rule, rd || vd.passed ? "" : ": ", rd || vd.passed ? "" : vd.reason);
    TB_CHECK(rh == rd);
    if (rh) {
        TB_CHECK(strcmp(mh, md) == 0);
    } else {
        const double rel = 1e-12, nrel = 1e-9;
#define SAME(f) TB_CHECK(vh.f == vd.f)
#define NEAR(f, r) TB_CHECK(vh.f == vd.f || fabs(vh.f - vd.f) <= (r) * fabs(vh.f) || (isnan(vh.f) && isnan(vd.f)))
        SAME(passed); SAME(n); SAME(n_bad); SAME(n_nonfinite); SAME(first_bad); SAME(first_nonfinite);
        SAME(heads); SAME(heads_with_bad); SAME(heads_norm_bad); SAME(first_head_bad);
        SAME(lse_n); SAME(lse_bad); SAME(lse_nonfinite); SAME(lse_first_bad); SAME(lse_first_nonfinite);
        SAME(max_abs_err); SAME(lse_max_abs_err);
        NEAR(max_ratio, rel); NEAR(lse_max_ratio, rel);
        NEAR(rel_fro_err, nrel); NEAR(head_max_rel, nrel); NEAR(head_max_ratio, nrel);
        TB_CHECK(strcmp(vh.rule, vd.rule) == 0);
        TB_CHECK(strcmp(vh.reason, vd.reason) == 0);
#undef SAME
#undef NEAR
    }
    cudaFree(doref); cudaFree(dlref); cudaFree(dls); cudaFree(dos); cudaFree(ws);
}

static Data draw(const tb_attention &a)
{
    const uint64_t nl = (uint64_t)(a.batch * a.heads * a.seq_q), no = nl * (uint64_t)a.head_dim;
    Data d;
    d.oref.resize(no); d.o.resize(no); d.lref.resize(nl); d.lse.resize(nl);
    for (uint64_t x = 0; x < no; x++) {
        d.oref[x] = (float)(2 * urand() - 1) * (float)(0.2 + urand());
        d.o[x] = pc_bf16(d.oref[x]);
    }
    for (uint64_t x = 0; x < nl; x++) {
        d.lref[x] = (float)(8 + 4 * urand());
        d.lse[x] = d.lref[x] + (float)((urand() - 0.5) * 1e-5);
    }
    return d;
}

/* the rule's allowance for element x of O (host arithmetic, as rule_attention.c) */
static double allowance(const tb_attention &a, const Data &d, uint64_t x)
{
    const uint64_t D = (uint64_t)a.head_dim, base = x / D * D;
    double ss = 0;
    for (uint64_t c = 0; c < D; c++) ss += (double)d.oref[base + c] * d.oref[base + c];
    return TB_ATTN_O_ATOL * sqrt(ss / (double)D) + TB_ATTN_O_RTOL * fabs((double)d.oref[x]);
}

int main()
{
    TB_CASE("rdev-0", "begin + finish over the host walk's sums give tb_attn_rule_check's verdict") {
        /* on the host: a problem whose only fault is a head's norm, the verdict both ways */
        tb_attention a = problem(1, 3, 5, 8, 0);
        Data d = draw(a);
        for (uint64_t x = 40; x < 80; x++) {   /* head 1: every element 0.7 of its allowance off */
            const double t = allowance(a, d, x);
            d.o[x] = pc_bf16((float)(d.oref[x] + 0.7 * t));
        }
        tb_attn_verdict v1, v2;
        char m[TB_MSG_LEN];
        TB_CHECK(tb_attn_rule_check(&a, d.oref.data(), d.lref.data(), d.o.data(), d.lse.data(), 1.0,
                                    &v1, m, sizeof m) == TB_OK);
        TB_CHECK(tb_attn_rule_begin(&a, 1.0, &v2, m, sizeof m) == TB_OK);
        /* the walk's counts from v1 (none elementwise: 0.7 of the allowance and BF16's rounding
         * of o, at most a quarter of rtol |r|, stay inside it) and the heads' sums */
        tb_attn_rule_take(&v2, 0, v1.n_bad, v1.n_nonfinite, v1.first_bad, v1.first_nonfinite,
                          v1.max_abs_err, v1.max_ratio);
        tb_attn_rule_take(&v2, 1, v1.lse_bad, v1.lse_nonfinite, v1.lse_first_bad,
                          v1.lse_first_nonfinite, v1.lse_max_abs_err, v1.lse_max_ratio);
        double he[3] = { 0, 0, 0 }, hr[3] = { 0, 0, 0 };
        uint32_t hf[3] = { 0, 0, 0 };
        for (uint64_t x = 0; x < d.o.size(); x++) {
            const uint64_t h = x / 40;
            const double e = fabs((double)pc_float(d.o[x]) - d.oref[x]);
            he[h] += e * e;
            hr[h] += (double)d.oref[x] * d.oref[x];
            if (e > allowance(a, d, x)) hf[h] |= 1u;
        }
        TB_CHECK(tb_attn_rule_finish(&a, TB_ATTN_NONE, TB_ATTN_NONE, he, hr, hf, &v2, m, sizeof m) == TB_OK);
        printf("  check: %s %s | halves: %s %s\n", v1.passed ? "passed" : v1.rule, v1.reason,
               v2.passed ? "passed" : v2.rule, v2.reason);
        TB_CHECK(!v1.passed && strcmp(v1.rule, v2.rule) == 0 && strcmp(v1.reason, v2.reason) == 0);
        TB_CHECK(v1.n_bad == 0 && strcmp(v1.rule, "head") == 0);
        TB_CHECK(v1.heads_norm_bad == 1 && v2.heads_norm_bad == 1 && v2.first_head_bad == 1);
    }

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("skip: no GPU for the device half of the rule\n");
        return tb_test_failed_ ? 1 : 77;
    }

    struct { int64_t B, H, Sq, D, pad; int bshd; } shapes[] = {
        { 1, 2, 37, 40, 8, 0 }, { 2, 3, 64, 64, 0, 0 }, { 1, 4, 129, 128, 16, 0 }, { 2, 2, 33, 256, 8, 0 },
        { 2, 3, 50, 128, 8, 1 }, { 1, 16, 4096, 128, 0, 0 },
    };
    int sid = 0;
    for (auto &s : shapes) {
        sid++;
        char cid[32], what[160];
        snprintf(cid, sizeof cid, "rdev-1.%d", sid);
        snprintf(what, sizeof what, "B %lld H %lld Sq %lld D %lld %s, strides padded by %lld: "
                 "device sums against the host rule", (long long)s.B, (long long)s.H,
                 (long long)s.Sq, (long long)s.D, s.bshd ? "BSHD" : "BHSD", (long long)s.pad);
        TB_CASE(cid, what) {
            const tb_attention a = problem(s.B, s.H, s.Sq, s.D, s.pad, s.bshd);
            const Data d0 = draw(a);
            const uint64_t no = d0.o.size(), nl = d0.lse.size();
            double th = 0, td = 0;
            compare("clean", a, d0, 3.0, &th, &td);
            if (s.Sq >= 4096)
                printf("  time of the check: host %.3f s (the walk alone, without the copies), "
                       "device %.4f s (kernels and read-back)\n", th, td);
            Data d = d0;
            for (int k = 0; k < 5; k++) {   /* five elements past their allowance */
                const uint64_t x = (uint64_t)(urand() * (double)no);
                d.o[x] = pc_bf16((float)(d.oref[x] + 3 * allowance(a, d, x) + 0.01));
            }
            compare("five elements off", a, d, 3.0, NULL, NULL);
            d = d0;
            d.o[no / 3] = 0x7FC1u;
            d.o[no - 1] = 0x7F80u;   /* +Inf */
            compare("a NaN and an Inf in O", a, d, 3.0, NULL, NULL);
            d = d0;   /* head 0: a NaN and every other element far off (its norm must not count) */
            for (uint64_t x = 0; x < (uint64_t)(a.seq_q * a.head_dim); x++)
                d.o[x] = pc_bf16((float)(d.oref[x] + 10 * allowance(a, d, x)));
            d.o[1] = 0x7FC1u;
            compare("a NaN in a head far off", a, d, 3.0, NULL, NULL);
            d = d0;
            const uint64_t hsz = (uint64_t)(a.seq_q * a.head_dim), h = (uint64_t)(a.batch * a.heads) - 1;
            for (uint64_t x = h * hsz; x < (h + 1) * hsz; x++)
                d.o[x] = pc_bf16((float)(d.oref[x] + 0.7 * allowance(a, d, x)));
            compare("one head 0.7 of its allowance off", a, d, 3.0, NULL, NULL);
            d = d0;
            d.lse[nl / 2] = d.lref[nl / 2] + 0.5f;
            d.lse[nl - 1] = d.lref[nl - 1] - 0.25f;
            compare("LSE off in two rows", a, d, 3.0, NULL, NULL);
            d = d0;
            d.lse[1] = NAN;
            compare("a NaN in LSE", a, d, 3.0, NULL, NULL);
            d = d0;
            d.oref[no / 2] = INFINITY;
            compare("a non-finite reference O", a, d, 3.0, NULL, NULL);
            d = d0;
            d.lref[nl / 3] = NAN;
            compare("a non-finite reference LSE", a, d, 3.0, NULL, NULL);
        }
    }

    TB_CASE("rdev-2", "the largest row norm of a strided Q and K: device against host") {
        const tb_attention a = problem(2, 3, 77, 128, 24);
        const uint64_t rows = (uint64_t)(a.batch * a.heads * a.seq_q), D = (uint64_t)a.head_dim;
        std::vector<uint16_t> q(rows * D), k(rows * D);
        for (auto &v : q) v = pc_bf16((float)(2 * urand() - 1));
        for (auto &v : k) v = pc_bf16((float)(4 * urand() - 2));
        const size_t span = (size_t)(a.batch * a.q_stride[0]);
        std::vector<uint16_t> qs(span, 0x7FC1u), ks(span, 0x7FC1u);
        for (uint64_t r = 0; r < rows; r++) {
            const uint64_t i = r % (uint64_t)a.seq_q, bh = r / (uint64_t)a.seq_q;
            const uint64_t off = (bh / (uint64_t)a.heads) * a.q_stride[0] + (bh % (uint64_t)a.heads) * a.q_stride[1] + i * a.q_stride[2];
            memcpy(&qs[off], &q[r * D], D * 2);
            memcpy(&ks[off], &k[r * D], D * 2);
        }
        uint16_t *dq, *dk;
        double *dn, n2[2] = { -1, -1 };
        TB_CHECK(cudaMalloc(&dq, span * 2) == cudaSuccess && cudaMalloc(&dk, span * 2) == cudaSuccess &&
                 cudaMalloc(&dn, 2 * sizeof(double)) == cudaSuccess);
        cudaMemcpy(dq, qs.data(), span * 2, cudaMemcpyHostToDevice);
        cudaMemcpy(dk, ks.data(), span * 2, cudaMemcpyHostToDevice);
        TB_CHECK(tbdev_row_norm2_max(dq, a.q_stride, a.batch, a.heads, a.seq_q, a.head_dim, dn, 0) == 0);
        TB_CHECK(tbdev_row_norm2_max(dk, a.k_stride, a.batch, a.heads, a.seq_k, a.head_dim, dn + 1, 0) == 0);
        TB_CHECK(cudaMemcpy(n2, dn, sizeof n2, cudaMemcpyDeviceToHost) == cudaSuccess);
        double sh = 0, sd = 0;
        char m[TB_MSG_LEN];
        TB_CHECK(tb_attn_rule_qk_bound(&a, q.data(), k.data(), &sh, m, sizeof m) == TB_OK);
        TB_CHECK(tb_attn_rule_qk_bound_norms(&a, n2[0], n2[1], &sd, m, sizeof m) == TB_OK);
        printf("  S host %.17g device %.17g\n", sh, sd);
        TB_CHECK(sh > 0 && fabs(sh - sd) <= 1e-12 * sh);
        /* a NaN in Q: no bound either way (the host once skipped such a row) */
        q[5 * D + 3] = 0x7FC1u;
        qs[(size_t)a.q_stride[2] * 5 + 3] = 0x7FC1u;   /* row 5 of batch 0, head 0 */
        cudaMemcpy(dq, qs.data(), span * 2, cudaMemcpyHostToDevice);
        TB_CHECK(tbdev_row_norm2_max(dq, a.q_stride, a.batch, a.heads, a.seq_q, a.head_dim, dn, 0) == 0);
        TB_CHECK(cudaMemcpy(n2, dn, sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess);
        const int rh = tb_attn_rule_qk_bound(&a, q.data(), k.data(), &sh, m, sizeof m);
        const int rd = tb_attn_rule_qk_bound_norms(&a, n2[0], n2[1], &sd, m, sizeof m);
        printf("  a NaN in Q: host rc %d, device rc %d (%s)\n", rh, rd, m);
        TB_CHECK(rh == TB_EUSAGE && rd == TB_EUSAGE);
        cudaFree(dq); cudaFree(dk); cudaFree(dn);
    }
    return tb_test_done();
}
