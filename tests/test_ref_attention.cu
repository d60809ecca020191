/* test_ref_attention.cu - the attention forward references (reference/ref_attention.h) against a
 * CPU FP64 attention and against each other. GPU test: exit 77 without a GPU (after the
 * host-only cases, which run anywhere).
 *
 *   attn-0.x  host only: the chunking arithmetic (a 16k x 16k head in four chunks of 4096 rows,
 *             the score block never over the limit, at least one row a chunk) and the refusals
 *             (causal with seq_q > seq_k, heads_kv not dividing heads, a short workspace).
 *   attn-1.x  small shapes (BHSD and BSHD with padded strides, grouped-query and multi-query
 *             heads, causal with seq_q < seq_k and seq_q = seq_k, a decode row, head_dim 64, 128
 *             and 256, and logits up to ~100, past expf's overflow at 88.7): the cuBLASLt
 *             reference unchunked and in chunks of 7 rows (a partial last chunk, chunk pointers
 *             only 2-byte aligned), and the naive one, each against the CPU, and the two GPU
 *             references against each other. Padding holds bf16 NaN and the outputs are NaN
 *             before each run, so a read of padding or an element never written fails.
 *   attn-2.1  1x1x2048x4096x128 causal: the cuBLASLt reference in one chunk and in chunks of
 *             600 rows (three and a partial fourth) against the naive one.
 *
 * Tolerances, derived (u = 2^-24, FP32's unit roundoff; A_i = scale * max_j sum_d |q_id k_jd|
 * over the keys row i sees, the size of a score's terms; w_id = sum_j p_ij |v_jd|):
 *   cuBLASLt: a score is an FP32 sum of D exact BF16 products, then scaled: |ds| <= (D + 2) u A_i
 *     (doubled: tensor cores may truncate rather than round their FP32 sums), eps_s. A
 *     probability p_j = exp(s_j - m) / l moves by ds_j and by the weighted mean of the ds in l
 *     (2 eps_s relative), expf (2 ulp), the FP32 sum of up to Sk terms ((Sk - 1) u) and the
 *     division (u); O = P V is an FP32 sum of Sk products (Sk u of w). So
 *       |dO_id|  <= (2 eps_s + (2 Sk + 16) u) w_id
 *       |dLSE_i| <= eps_s + (Sk + 8) u + 2 u (|LSE_i| + A_i + 1)   (the max, ln l, the last add)
 *     held to twice these (headroom for the library's order of summation).
 *   naive: FP64 throughout (relative errors below (D + Sk) 2^-53 A_i, < 1e-10 here) and one
 *     rounding to FP32: |dO| <= u |O| + 1e-10 w, |dLSE| <= u |LSE| + 1e-10 (A_i + 1); held to
 *     2 u w + 1e-10 w and 2 u |LSE| + 1e-10 (A_i + 1) (a correct rounding alone reaches 0.99 of
 *     the undoubled bound on these shapes).
 *   GPU against GPU: the sum of the two.
 * The large shape has no CPU attention: A_i and w_id are bounded from the inputs (max_j |k_jd|,
 * max_j |v_jd|), |LSE_i| by A_i + ln Sk. Checked by simulating the cuBLASLt path on the CPU in
 * FP32 with sequential sums (worse than a tree): its error is below 1.5 % of its tolerance on
 * every small shape, while one key too many or too few on a causal row is 200 to 10^4 times
 * the tolerance there, and on the large shape 5 times (a chunk's rows off by one: 80 times).
 */
#include "tb_test.h"
#include "ref_attention.h"
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <vector>

static const double U = 1.0 / 16777216.0;   /* 2^-24 */

struct Shape {
    int64_t B, H, Hkv, Sq, Sk, D;
    int causal, bshd, pad;   /* pad: elements added to each stride */
    double amp;              /* inputs uniform on [-amp, amp) */
};

struct Problem {
    tb_attention a;
    std::vector<__nv_bfloat16> q, k, v;   /* whole buffers, padding bf16 NaN */
};

/* What the CPU knows of each row (and each of its outputs): the reference values where it
 * computed them, and the magnitudes the tolerances rest on. */
struct Want {
    std::vector<double> o, lse;      /* empty for the large shape */
    std::vector<double> w;           /* sum_j p_j |v_jd| (or an upper bound) */
    std::vector<double> A, lse_mag;  /* per row */
    double max_logit = -INFINITY;
};

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void strides(const Shape &s, int64_t heads, int64_t seq, int64_t st[3])
{
    const int64_t p = s.pad;
    if (s.bshd) { st[1] = s.D + p; st[2] = heads * st[1] + p; st[0] = seq * st[2] + p; }
    else { st[2] = s.D + p; st[1] = seq * st[2] + p; st[0] = heads * st[1] + p; }
}

static void fill(std::vector<__nv_bfloat16> &buf, const Shape &s, int64_t heads, int64_t seq,
                 const int64_t st[3], uint64_t seed)
{
    __nv_bfloat16_raw nan_bits;
    nan_bits.x = 0x7FC1;
    buf.assign((size_t)(s.B * st[0]), __nv_bfloat16(nan_bits));
    uint64_t n = 0;
    for (int64_t b = 0; b < s.B; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t j = 0; j < seq; j++)
                for (int64_t d = 0; d < s.D; d++) {
                    double x = (double)(mix(seed * 0x100000001B3ull + n++) >> 11) * 0x1p-53;
                    buf[b * st[0] + h * st[1] + j * st[2] + d] = __float2bfloat16((float)(s.amp * (2 * x - 1)));
                }
}

static Problem make(const Shape &s, uint64_t seed)
{
    Problem p;
    tb_attention &a = p.a;
    memset(&a, 0, sizeof a);
    a.batch = s.B; a.heads = s.H; a.heads_kv = s.Hkv; a.seq_q = s.Sq; a.seq_k = s.Sk; a.head_dim = s.D;
    a.q_type = a.k_type = a.v_type = a.o_type = TB_DTYPE_BF16;
    a.acc_type = a.lse_type = TB_DTYPE_F32;
    a.layout = s.bshd ? TB_ATTN_BSHD : TB_ATTN_BHSD;
    a.causal = s.causal ? 1u : 0u;
    a.scale = 1.0 / sqrt((double)s.D);
    strides(s, s.H, s.Sq, a.q_stride);
    strides(s, s.Hkv, s.Sk, a.k_stride);
    strides(s, s.Hkv, s.Sk, a.v_stride);
    strides(s, s.H, s.Sq, a.o_stride);
    a.lse_stride[1] = s.Sq; a.lse_stride[0] = s.H * s.Sq;
    fill(p.q, s, s.H, s.Sq, a.q_stride, seed);
    fill(p.k, s, s.Hkv, s.Sk, a.k_stride, seed + 1);
    fill(p.v, s, s.Hkv, s.Sk, a.v_stride, seed + 2);
    return p;
}

static double el(const std::vector<__nv_bfloat16> &t, const int64_t st[3], int64_t b, int64_t h,
                 int64_t j, int64_t d)
{
    return (double)__bfloat162float(t[b * st[0] + h * st[1] + j * st[2] + d]);
}

static int64_t seen(const tb_attention &a, int64_t i)
{
    return a.causal && i + 1 + a.seq_k - a.seq_q < a.seq_k ? i + 1 + a.seq_k - a.seq_q : a.seq_k;
}

/* The attention in FP64, by the definition in variant.h (growth 2). */
static Want cpu_attention(const Problem &p)
{
    const tb_attention &a = p.a;
    const int64_t B = a.batch, H = a.heads, G = a.heads / a.heads_kv, Sq = a.seq_q, D = a.head_dim;
    Want w;
    w.o.assign(B * H * Sq * D, 0); w.w.assign(B * H * Sq * D, 0);
    w.lse.resize(B * H * Sq); w.A.resize(B * H * Sq); w.lse_mag.resize(B * H * Sq);
    std::vector<double> s(a.seq_k);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < Sq; i++) {
                const int64_t row = (b * H + h) * Sq + i, hk = h / G, n = seen(a, i);
                double m = -INFINITY, A = 0, l = 0;
                for (int64_t j = 0; j < n; j++) {
                    double acc = 0, mag = 0;
                    for (int64_t d = 0; d < D; d++) {
                        double t = el(p.q, a.q_stride, b, h, i, d) * el(p.k, a.k_stride, b, hk, j, d);
                        acc += t; mag += fabs(t);
                    }
                    s[j] = a.scale * acc;
                    m = fmax(m, s[j]);
                    A = fmax(A, a.scale * mag);
                }
                for (int64_t j = 0; j < n; j++) l += exp(s[j] - m);
                for (int64_t j = 0; j < n; j++) {
                    const double pj = exp(s[j] - m) / l;
                    for (int64_t d = 0; d < D; d++) {
                        const double vv = el(p.v, a.v_stride, b, hk, j, d);
                        w.o[row * D + d] += pj * vv;
                        w.w[row * D + d] += pj * fabs(vv);
                    }
                }
                w.lse[row] = m + log(l);
                w.lse_mag[row] = fabs(w.lse[row]);
                w.A[row] = A;
                w.max_logit = fmax(w.max_logit, m);
            }
    return w;
}

/* Upper bounds of A_i, |LSE_i| and w_id from the inputs alone (for the large shape: O(S D)). */
static Want cpu_bounds(const Problem &p)
{
    const tb_attention &a = p.a;
    const int64_t B = a.batch, H = a.heads, G = a.heads / a.heads_kv, Sq = a.seq_q, D = a.head_dim;
    Want w;
    w.w.resize(B * H * Sq * D); w.A.resize(B * H * Sq); w.lse_mag.resize(B * H * Sq);
    std::vector<double> kmax(D), vmax(D);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            const int64_t hk = h / G;
            for (int64_t d = 0; d < D; d++) {
                kmax[d] = vmax[d] = 0;
                for (int64_t j = 0; j < a.seq_k; j++) {
                    kmax[d] = fmax(kmax[d], fabs(el(p.k, a.k_stride, b, hk, j, d)));
                    vmax[d] = fmax(vmax[d], fabs(el(p.v, a.v_stride, b, hk, j, d)));
                }
            }
            for (int64_t i = 0; i < Sq; i++) {
                const int64_t row = (b * H + h) * Sq + i;
                double A = 0;
                for (int64_t d = 0; d < D; d++) {
                    A += fabs(el(p.q, a.q_stride, b, h, i, d)) * kmax[d];
                    w.w[row * D + d] = vmax[d];
                }
                w.A[row] = a.scale * A;
                w.lse_mag[row] = w.A[row] + log((double)seen(a, i));   /* |m| + ln n */
            }
        }
    return w;
}

/* The tolerances of the header comment, for row `row` (and element `idx` of O). */
static double eps_s(const tb_attention &a, double A) { return 2.0 * (double)(a.head_dim + 2) * U * A; }
static double tol_o_lt(const tb_attention &a, const Want &w, size_t idx)
{
    const double A = w.A[idx / a.head_dim];
    return 2.0 * (2.0 * eps_s(a, A) + (2.0 * (double)a.seq_k + 16.0) * U) * w.w[idx] + 1e-30;
}
static double tol_o_nv(const tb_attention &, const Want &w, size_t idx) { return (2 * U + 1e-10) * w.w[idx] + 1e-30; }
static double tol_l_lt(const tb_attention &a, const Want &w, size_t row)
{
    return 2.0 * (eps_s(a, w.A[row]) + ((double)a.seq_k + 8.0) * U +
                  2.0 * U * (w.lse_mag[row] + w.A[row] + 1.0));
}
static double tol_l_nv(const tb_attention &, const Want &w, size_t row)
{
    return 2 * U * w.lse_mag[row] + 1e-10 * (w.A[row] + 1.0);
}

/* max |got - want| / tol over the elements (infinite where got is not finite) */
template <typename T, typename F>
static double worst(const std::vector<float> &got, const std::vector<T> &want, F tol)
{
    double r = 0;
    for (size_t i = 0; i < got.size(); i++) {
        const double e = fabs((double)got[i] - (double)want[i]) / tol(i);
        r = isfinite(got[i]) && isfinite((double)want[i]) ? fmax(r, e) : INFINITY;
    }
    return r;
}

struct Dev {
    void *q = nullptr, *k = nullptr, *v = nullptr, *work = nullptr;
    float *o = nullptr, *l = nullptr;
    size_t work_bytes = 0;
};

static int dev_open(Dev &d, const Problem &p, size_t work_bytes)
{
    const size_t no = (size_t)(p.a.batch * p.a.heads * p.a.seq_q);
    int bad = cudaMalloc(&d.q, p.q.size() * 2) | cudaMalloc(&d.k, p.k.size() * 2) |
              cudaMalloc(&d.v, p.v.size() * 2) | cudaMalloc(&d.work, work_bytes) |
              cudaMalloc(&d.o, no * p.a.head_dim * 4) | cudaMalloc(&d.l, no * 4);
    if (bad) return 1;
    d.work_bytes = work_bytes;
    cudaMemcpy(d.q, p.q.data(), p.q.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(d.k, p.k.data(), p.k.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(d.v, p.v.data(), p.v.size() * 2, cudaMemcpyHostToDevice);
    return cudaDeviceSynchronize() != cudaSuccess;
}

static void dev_close(Dev &d)
{
    cudaFree(d.q); cudaFree(d.k); cudaFree(d.v); cudaFree(d.work); cudaFree(d.o); cudaFree(d.l);
    d = Dev();
}

/* One reference (ref NULL: the naive one; else cuBLASLt with the score block bounded by limit)
 * into o and l, the outputs NaN before it runs. */
static int compute(tb_ref *ref, const Problem &p, Dev &d, size_t limit, std::vector<float> &o,
                   std::vector<float> &l)
{
    char msg[512] = "";
    const size_t no = (size_t)(p.a.batch * p.a.heads * p.a.seq_q);
    o.assign(no * p.a.head_dim, 0); l.assign(no, 0);
    cudaMemset(d.o, 0xFF, o.size() * 4);
    cudaMemset(d.l, 0xFF, l.size() * 4);
    int rc = ref ? tb_ref_attention_cublaslt_limit(ref, &p.a, d.q, d.k, d.v, d.o, d.l, d.work,
                                                   d.work_bytes, limit, 0, msg, sizeof msg)
                 : tb_ref_attention_naive(&p.a, d.q, d.k, d.v, d.o, d.l, 0, msg, sizeof msg);
    if (rc) printf("  %s\n", msg);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("  %s\n", cudaGetErrorString(e)); rc = 1; }
    cudaMemcpy(o.data(), d.o, o.size() * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(l.data(), d.l, l.size() * 4, cudaMemcpyDeviceToHost);
    return rc;
}

static void host_cases(void)
{
    TB_CASE("attn-0.1", "chunking: the score block within the limit, whatever seq_q and seq_k") {
        Shape s16 = { 1, 1, 1, 16384, 16384, 128, 1, 0, 0, 1.0 };
        tb_attention a = {};
        a.batch = s16.B; a.heads = a.heads_kv = 1; a.seq_q = s16.Sq; a.seq_k = s16.Sk; a.head_dim = 128;
        a.q_type = a.k_type = a.v_type = a.o_type = TB_DTYPE_BF16; a.acc_type = a.lse_type = TB_DTYPE_F32;
        a.causal = 1; a.scale = 0.125;
        strides(s16, 1, a.seq_q, a.q_stride); strides(s16, 1, a.seq_k, a.k_stride);
        strides(s16, 1, a.seq_k, a.v_stride); strides(s16, 1, a.seq_q, a.o_stride);
        TB_CHECK(tb_ref_attention_chunk_rows(&a, TB_REF_ATTN_S_LIMIT) == 4096);
        TB_CHECK(tb_ref_attention_workspace(&a) == ((size_t)256 << 20) + ((size_t)8 << 20));
        const int64_t sqs[] = { 1, 7, 4096, 16384, 1 << 20 }, sks[] = { 1, 53, 16384, 1 << 20 };
        const size_t limits[] = { 4, 1000, (size_t)1 << 20, TB_REF_ATTN_S_LIMIT };
        for (int64_t sq : sqs)
            for (int64_t sk : sks)
                for (size_t lim : limits) {
                    a.seq_q = sq; a.seq_k = sk; a.causal = sq <= sk;
                    const int64_t r = tb_ref_attention_chunk_rows(&a, lim);
                    TB_CHECK(r >= 1 && r <= sq);
                    TB_CHECK(r == 1 || (size_t)r * (size_t)sk * 4 <= lim);
                    TB_CHECK(r == sq || (size_t)(r + 1) * (size_t)sk * 4 > lim);   /* the most that fit */
                    TB_CHECK(tb_ref_attention_workspace_limit(&a, lim) >=
                             (size_t)r * (size_t)sk * 4 + (size_t)sk * 128 * 4);
                }
    }
    TB_CASE("attn-0.2", "refusals: causal with seq_q > seq_k, heads_kv not dividing heads, short workspace") {
        Problem p = make(Shape{ 1, 2, 2, 8, 8, 64, 1, 0, 0, 1.0 }, 1);
        char msg[256] = "";
        float o, l;
        p.a.seq_q = 9;   /* the pointers are never used: each call refuses first */
        TB_CHECK(tb_ref_attention_naive(&p.a, &o, &o, &o, &o, &l, 0, msg, sizeof msg) == 1);
        TB_CHECK_STR_CONTAINS(msg, "causal needs seq_q <= seq_k");
        TB_CHECK(tb_ref_attention_workspace(&p.a) == 0);
        p.a.seq_q = 8; p.a.heads_kv = 3;
        TB_CHECK(tb_ref_attention_cublaslt(NULL, &p.a, &o, &o, &o, &o, &l, NULL, 0, 0, msg, sizeof msg) == 1);
        TB_CHECK_STR_CONTAINS(msg, "heads_kv does not divide heads");
        p.a.heads_kv = 2;
        TB_CHECK(tb_ref_attention_workspace(&p.a) > 0);
        TB_CHECK(tb_ref_attention_cublaslt((tb_ref *)&o, &p.a, &o, &o, &o, &o, &l, &o, 16, 0, msg,
                                           sizeof msg) == 1);
        TB_CHECK_STR_CONTAINS(msg, "workspace");
    }
}

int main()
{
    host_cases();
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no GPU\n");
        return tb_test_failed_ ? 1 : 77;
    }
    char msg[512];
    tb_ref *ref;
    if (tb_ref_open(&ref, msg, sizeof msg)) { printf("FAIL attn-0: %s\n", msg); return 1; }

    const Shape small[] = {
        { 1, 2, 2, 37, 53, 64, 0, 0, 0, 1.0 },     /* odd lengths, no mask */
        { 2, 4, 4, 64, 64, 128, 1, 0, 0, 1.0 },    /* causal, seq_q = seq_k */
        { 1, 8, 2, 16, 96, 64, 1, 0, 0, 1.0 },     /* grouped-query (4 a kv head), causal seq_q < seq_k */
        { 2, 4, 2, 33, 70, 64, 1, 1, 8, 1.0 },     /* BSHD, every stride padded, grouped-query */
        { 1, 2, 1, 20, 40, 256, 1, 0, 3, 1.0 },    /* multi-query, head_dim 256, odd padding */
        { 2, 4, 1, 1, 77, 128, 1, 1, 0, 1.0 },     /* one decode row a head, BSHD */
        { 1, 2, 2, 37, 53, 64, 0, 0, 0, 10.0 },    /* logits up to ~100: expf overflows without the max */
    };
    int id = 0;
    for (const Shape &s : small) {
        char cid[32], what[160];
        snprintf(cid, sizeof cid, "attn-1.%d", ++id);
        snprintf(what, sizeof what, "%lldx%lldx%lldx%lldx%lld hkv=%lld%s %s pad %d amp %g",
                 (long long)s.B, (long long)s.H, (long long)s.Sq, (long long)s.Sk, (long long)s.D,
                 (long long)s.Hkv, s.causal ? " causal" : "", s.bshd ? "BSHD" : "BHSD", s.pad, s.amp);
        TB_CASE(cid, what) {
            Problem p = make(s, 1000 * id);
            const tb_attention &a = p.a;
            const size_t lim7 = (size_t)7 * (size_t)s.Sk * 4;
            TB_CHECK(tb_ref_attention_chunk_rows(&a, lim7) == (s.Sq < 7 ? s.Sq : 7));
            size_t wb = tb_ref_attention_workspace(&a), w7 = tb_ref_attention_workspace_limit(&a, lim7);
            TB_CHECK(wb > 0 && w7 > 0);
            Dev d;
            if (dev_open(d, p, wb > w7 ? wb : w7)) { TB_CHECK(!"device buffers"); dev_close(d); continue; }
            Want w = cpu_attention(p);
            std::vector<float> o1, l1, o7, l7, on, ln;
            TB_CHECK(compute(ref, p, d, TB_REF_ATTN_S_LIMIT, o1, l1) == 0);
            TB_CHECK(compute(ref, p, d, lim7, o7, l7) == 0);
            TB_CHECK(compute(NULL, p, d, 0, on, ln) == 0);
            auto to_lt = [&](size_t i) { return tol_o_lt(a, w, i); };
            auto to_nv = [&](size_t i) { return tol_o_nv(a, w, i); };
            auto tl_lt = [&](size_t i) { return tol_l_lt(a, w, i); };
            auto tl_nv = [&](size_t i) { return tol_l_nv(a, w, i); };
            auto to_both = [&](size_t i) { return tol_o_lt(a, w, i) + tol_o_nv(a, w, i); };
            auto tl_both = [&](size_t i) { return tol_l_lt(a, w, i) + tol_l_nv(a, w, i); };
            const double r[8] = { worst(o1, w.o, to_lt), worst(l1, w.lse, tl_lt),
                                  worst(o7, w.o, to_lt), worst(l7, w.lse, tl_lt),
                                  worst(on, w.o, to_nv), worst(ln, w.lse, tl_nv),
                                  worst(o1, on, to_both), worst(l1, ln, tl_both) };
            for (double x : r) TB_CHECK(x <= 1.0);
            printf("  worst err/tol (O, LSE): cublaslt %.3g %.3g, in chunks of 7 %.3g %.3g, naive "
                   "%.3g %.3g, cublaslt-naive %.3g %.3g; max logit %.1f\n",
                   r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], w.max_logit);
            if (s.amp > 5) TB_CHECK(w.max_logit > 88.8);   /* expf(88.8) is past FLT_MAX */
            dev_close(d);
        }
    }

    TB_CASE("attn-2.1", "1x1x2048x4096x128 causal: cuBLASLt in one chunk and in chunks of 600 rows "
                        "against the naive reference") {
        Problem p = make(Shape{ 1, 1, 1, 2048, 4096, 128, 1, 0, 0, 2.0 }, 77);
        const tb_attention &a = p.a;
        const size_t lim600 = (size_t)600 * 4096 * 4;
        TB_CHECK(tb_ref_attention_chunk_rows(&a, TB_REF_ATTN_S_LIMIT) == 2048);
        TB_CHECK(tb_ref_attention_chunk_rows(&a, lim600) == 600);
        size_t wb = tb_ref_attention_workspace(&a), w6 = tb_ref_attention_workspace_limit(&a, lim600);
        Dev d;
        if (dev_open(d, p, wb > w6 ? wb : w6)) { TB_CHECK(!"device buffers"); dev_close(d); }
        else {
            Want w = cpu_bounds(p);
            std::vector<float> o1, l1, o6, l6, on, ln;
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0); cudaEventCreate(&e1);
            TB_CHECK(compute(ref, p, d, TB_REF_ATTN_S_LIMIT, o1, l1) == 0);
            TB_CHECK(compute(ref, p, d, lim600, o6, l6) == 0);
            cudaEventRecord(e0, 0);
            TB_CHECK(compute(NULL, p, d, 0, on, ln) == 0);
            cudaEventRecord(e1, 0);
            float ms = 0;
            if (cudaEventSynchronize(e1) == cudaSuccess) cudaEventElapsedTime(&ms, e0, e1);
            cudaEventDestroy(e0); cudaEventDestroy(e1);
            auto to_both = [&](size_t i) { return tol_o_lt(a, w, i) + tol_o_nv(a, w, i); };
            auto tl_both = [&](size_t i) { return tol_l_lt(a, w, i) + tol_l_nv(a, w, i); };
            const double r[4] = { worst(o1, on, to_both), worst(l1, ln, tl_both),
                                  worst(o6, on, to_both), worst(l6, ln, tl_both) };
            for (double x : r) TB_CHECK(x <= 1.0);
            double omax = 0, dmax = 0;
            for (size_t i = 0; i < on.size(); i++) {
                omax = fmax(omax, fabs(on[i]));
                dmax = fmax(dmax, fabs(o6[i] - on[i]));
            }
            printf("  worst err/tol (O, LSE) against naive: cublaslt %.3g %.3g, in chunks of 600 "
                   "%.3g %.3g; max |O| %.3g, max |O diff| %.3g; naive %.1f ms (with copies)\n",
                   r[0], r[1], r[2], r[3], omax, dmax, ms);
            dev_close(d);
        }
    }
    tb_ref_close(ref);
    return tb_test_done();
}
