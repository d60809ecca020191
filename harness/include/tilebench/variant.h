/* tilebench/variant.h - the variant ABI: the one header a variant library includes.
 *
 * A variant library is a shared object exporting one symbol, tilebench_variant_query(),
 * which the host calls with index 0, 1, 2, ... until it returns NULL (the LV2 pattern).
 * Each call returns a pointer to a tb_variant that lives as long as the library is loaded.
 * The index means nothing across loads; a variant's identity is its name.
 *
 * Growth rule (as SQLite's sqlite3_api_routines and LV2's descriptors): fields are only
 * ever appended. Every struct that crosses the boundary starts with the size the producer
 * built it with; a reader never touches a field that size does not cover. The host refuses
 * a variant whose abi_version is not TB_VARIANT_ABI_VERSION or whose struct_size is smaller
 * than the v1 layout.
 *
 * The header is plain C99 and compiles as C++ (variants are usually .cu files). It pulls in
 * no CUDA header: a stream is passed as tb_stream, which is the same type as cudaStream_t and
 * CUstream (a pointer to struct CUstream_st), so `(cudaStream_t)s` is a no-op cast.
 *
 * THE LAUNCH CONTRACT (read it before writing launch()):
 *  - launch() enqueues work on the given stream and returns. It must not synchronise
 *    (no cudaDeviceSynchronize, cudaStreamSynchronize, blocking cudaMemcpy), must not
 *    allocate or free device or host memory, must not touch any other stream, and must be
 *    capturable in a CUDA graph (cudaStreamBeginCapture on that stream).
 *  - Inputs (buffers->in[]) are const: a variant never writes them. Outputs (buffers->out[])
 *    must be written entirely: the host poisons them before the launch and checks every
 *    element.
 *  - Scratch memory comes from the workspace: workspace_size(problem) bytes, allocated by the
 *    host, 256-byte aligned, contents undefined on entry, not shared between problems.
 *  - Anything that allocates, builds plans or queries heuristics belongs in setup(), which the
 *    host calls once per problem outside every timed region, and is undone by teardown().
 *  - launch() returns 0 when the work was enqueued, non-zero (and no work enqueued) when it
 *    could not be; the host then marks the measurement crashed with the variant's code.
 *  - The host validates the output of launches it did not tell the variant about, with new
 *    inputs at the same pointers: a variant must compute the product every time it is called.
 *
 * A minimal library (see docs/writing-a-variant.md for a whole one):
 *
 *     static const tb_param params[] = { TB_PARAM_INT("tile_m", 64), TB_PARAM_END };
 *     static const tb_variant v = { TB_VARIANT_ABI_VERSION, sizeof(tb_variant),
 *         "my_gemm", "my_family", params, "sm_90a", my_supports, NULL, my_launch };
 *     TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t i) {
 *         (void)host_abi; return i == 0 ? &v : NULL;
 *     }
 */
#ifndef TILEBENCH_VARIANT_H
#define TILEBENCH_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_VARIANT_ABI_VERSION 1u
#define TB_VARIANT_ENTRY "tilebench_variant_query"

#if defined(_WIN32)
#define TB_EXPORT __declspec(dllexport)
#else
#define TB_EXPORT __attribute__((visibility("default")))
#endif

/* Same type as cudaStream_t / CUstream. NULL is the legacy default stream, which the host
 * never passes. */
typedef struct CUstream_st *tb_stream;

/* ---- the problem ---------------------------------------------------------------------- */

typedef enum tb_op {
    TB_OP_GEMM = 1,         /* D = alpha * op(A) * op(B) + beta * C, batched */
    TB_OP_ATTENTION_FWD = 2 /* growth 2: O = softmax(scale * Q K^T [causal]) V, and its LSE */
    /* later operations are appended here, with their own member of tb_problem */
} tb_op;

typedef enum tb_dtype {
    TB_DTYPE_BF16 = 1,
    TB_DTYPE_F16  = 2,
    TB_DTYPE_F32  = 3,
    TB_DTYPE_F64  = 4,
    TB_DTYPE_E4M3 = 5,
    TB_DTYPE_E5M2 = 6,
    TB_DTYPE_I8   = 7,
    TB_DTYPE_I32  = 8
} tb_dtype;

/* How a matrix is stored. For A (M x K), ROW means K is contiguous ("T" in BLAS speak for
 * a column-major library); for B (K x N), COL means K is contiguous ("N"). The default
 * problem is A ROW, B COL, C and D ROW: both operands K-major, the layout Hopper's tensor
 * cores read without transposition ("tn" in variant names). */
typedef enum tb_layout {
    TB_LAYOUT_ROW = 0,      /* element (i, j) at i * ld + j */
    TB_LAYOUT_COL = 1       /* element (i, j) at j * ld + i */
} tb_layout;

typedef struct tb_gemm {
    int64_t  m, n, k;       /* A is m x k, B is k x n, C and D are m x n; all >= 1 */
    int64_t  batch;         /* >= 1; batch b's matrices start at b * stride_x elements */
    tb_dtype a_type, b_type, c_type, d_type;
    tb_dtype acc_type;      /* accumulation type, e.g. TB_DTYPE_F32 */
    tb_layout a_layout, b_layout, c_layout, d_layout;
    int64_t  lda, ldb, ldc, ldd;    /* leading dimensions, in elements */
    int64_t  stride_a, stride_b, stride_c, stride_d;   /* batch strides, in elements */
    double   alpha, beta;   /* beta == 0 means C is not read (and may be NULL) */
} tb_gemm;

/* Growth 1 (FP8, appended after v1's tb_problem): per-tensor scales of 8-bit operands.
 * The value an E4M3/E5M2 element stands for is scale * decode(bits); the product is
 *     D = alpha * (scale_a * A) (scale_b * B) + beta * C,
 * accumulated in acc_type (FP32), rounded once to d_type. For 16- and 32-bit operands the
 * host sets both scales to 1 and a variant may ignore them. */
typedef struct tb_gemm_scales {
    float scale_a, scale_b; /* finite and > 0 */
    uint32_t reserved[2];   /* 0; room to append without moving what follows */
} tb_gemm_scales;

/* Growth 2 (attention, appended after growth 1's tb_problem): TB_OP_ATTENTION_FWD.
 *
 * For batch b, query head h and query row i (0 <= i < seq_q), with g = heads / heads_kv and
 * kv head hk = h / g (grouped-query attention: consecutive query heads share a K/V head;
 * heads_kv == heads is plain multi-head attention, heads_kv == 1 multi-query):
 *     s_ij  = scale * sum_d Q[b,h,i,d] * K[b,hk,j,d]          (in acc_type, FP32)
 *     J(i)  = { j : 0 <= j < seq_k }, or when causal { j : j <= i + (seq_k - seq_q) }
 *     lse_i = ln sum_{j in J(i)} exp(s_ij)                     (natural log, FP32)
 *     O[b,h,i,:] = sum_{j in J(i)} exp(s_ij - lse_i) * V[b,hk,j,:]   rounded once to o_type
 *     LSE[b,h,i] = lse_i
 * The causal mask is aligned to the bottom right (query row i is the (seq_k - seq_q + i)-th
 * position of the key sequence, as in a decoder with a KV cache); the host offers a causal
 * problem only with seq_q <= seq_k, so every row has at least one key.
 *
 * Buffers (tb_buffers): in[0] = Q, in[1] = K, in[2] = V; out[0] = O, out[1] = LSE. Element
 * (b, h, s, d) of Q, K, V or O is at b * stride[0] + h * stride[1] + s * stride[2] + d, in
 * elements of its type (the head dimension is always contiguous); LSE[b, h, i] is at
 * b * lse_stride[0] + h * lse_stride[1] + i. layout names the order the strides describe:
 * BHSD (stride[0] >= stride[1] >= stride[2]: a head's rows together, as FlashAttention's
 * kernels are benchmarked) or BSHD (stride[0] >= stride[2] >= stride[1]: a token's heads
 * together, as a model's QKV projection writes them); a variant that handles one layout
 * refuses the other in supports(). The strides are the truth, and the host may pad them. */
typedef enum tb_attn_layout {
    TB_ATTN_BHSD = 0,       /* [batch][heads][seq][head_dim] */
    TB_ATTN_BSHD = 1        /* [batch][seq][heads][head_dim] */
} tb_attn_layout;

typedef struct tb_attention {
    int64_t  batch;         /* B >= 1 */
    int64_t  heads;         /* H: query heads (and O's, LSE's) >= 1 */
    int64_t  heads_kv;      /* K's and V's heads, >= 1, divides heads */
    int64_t  seq_q, seq_k;  /* query and key/value lengths, >= 1 */
    int64_t  head_dim;      /* D: 64, 128 or 256 in the shipped shapes */
    tb_dtype q_type, k_type, v_type, o_type;   /* TB_DTYPE_BF16 */
    tb_dtype acc_type;      /* TB_DTYPE_F32: the products' and the softmax's type */
    tb_dtype lse_type;      /* TB_DTYPE_F32 */
    tb_attn_layout layout;  /* of Q, K, V and O alike */
    uint32_t causal;        /* 0 or 1 */
    double   scale;         /* softmax scale, > 0; the host's default is 1 / sqrt(head_dim) */
    int64_t  q_stride[3], k_stride[3], v_stride[3], o_stride[3];   /* batch, head, seq */
    int64_t  lse_stride[2]; /* batch, head; a head's rows are contiguous */
    uint32_t reserved[4];   /* 0; room to append without moving what follows */
} tb_attention;

typedef struct tb_problem {
    uint32_t struct_size;   /* sizeof(tb_problem) as the host built it */
    uint32_t op;            /* a tb_op; read only the member it names */
    tb_gemm  gemm;          /* op == TB_OP_GEMM */
    /* ---- v1 ends here ---- */
    tb_gemm_scales gemm_scales; /* growth 1; covered when struct_size >= TB_PROBLEM_G1_SIZE */
    /* ---- growth 1 ends here ---- */
    tb_attention attention; /* growth 2, op == TB_OP_ATTENTION_FWD; covered when
                               struct_size >= TB_PROBLEM_G2_SIZE */
    /* new operations' members are appended here */
} tb_problem;

/* Sizes of the problem layouts so far (v1 160 bytes, growth 1 176, growth 2 392 on every
 * LP64 target; tests/test_abi.c pins each offset). A variant built against a header older
 * than growth 1 never sees gemm_scales: it cannot express an FP8 product, so the host never
 * offers it one; a variant built before growth 2 never sees attention, so the host never
 * offers it an attention problem (the rule in docs/writing-a-variant.md, "Growth"). A variant
 * says which layout it was built against by answering extension(TB_EXT_PROBLEM_SIZE) with a
 * pointer to a uint32_t holding sizeof(tb_problem); a variant without that answer is treated
 * as v1. A problem a variant's layout does not cover is recorded unsupported without calling
 * supports(): "built against the v1 problem (no FP8 scales): rebuild with variant.h growth 1",
 * "built before variant.h growth 2 (no attention problem): rebuild with growth 2". */
#define TB_PROBLEM_V1_SIZE ((uint32_t)(offsetof(tb_problem, gemm_scales)))
#define TB_PROBLEM_G1_SIZE ((uint32_t)(offsetof(tb_problem, gemm_scales) + sizeof(tb_gemm_scales)))
#define TB_PROBLEM_G2_SIZE ((uint32_t)(offsetof(tb_problem, attention) + sizeof(tb_attention)))
#define TB_EXT_PROBLEM_SIZE "tb.problem_size"

/* Which operations a variant computes (growth 2): extension(TB_EXT_OPS) returns a pointer to
 * an array of uint32_t tb_op values ended by 0, e.g. { TB_OP_ATTENTION_FWD, 0 }. A variant
 * without that answer computes TB_OP_GEMM only, as every variant built before growth 2 does;
 * the host offers a problem only to a variant whose list holds its op, so a supports() of
 * NULL ("everything") never reaches an operation its author did not write. An attention
 * variant answers both keys: TB_EXT_OPS and, with sizeof(tb_problem) >= TB_PROBLEM_G2_SIZE,
 * TB_EXT_PROBLEM_SIZE. */
#define TB_EXT_OPS "tb.ops"

/* True when a is an 8-bit floating-point type (the types that carry a scale). */
static inline int tb_dtype_is_fp8(uint32_t t) { return t == TB_DTYPE_E4M3 || t == TB_DTYPE_E5M2; }

/* Device buffers of one launch. For TB_OP_GEMM: in[0] = A, in[1] = B, in[2] = C (NULL when
 * beta == 0), out[0] = D. For TB_OP_ATTENTION_FWD: in[0] = Q, in[1] = K, in[2] = V, out[0] = O,
 * out[1] = LSE (both outputs written entirely). Every pointer is at least 256-byte aligned. */
#define TB_MAX_IN  8
#define TB_MAX_OUT 4
typedef struct tb_buffers {
    uint32_t    struct_size;        /* sizeof(tb_buffers) as the host built it */
    const void *in[TB_MAX_IN];
    void       *out[TB_MAX_OUT];
} tb_buffers;

/* ---- parameters: typed key/value pairs ------------------------------------------------ */

typedef enum tb_param_type {
    TB_PARAM_NONE = 0,      /* terminates a parameter list */
    TB_PARAM_TYPE_INT = 1,
    TB_PARAM_TYPE_STR = 2
} tb_param_type;

typedef struct tb_param {
    const char   *key;      /* lower_snake_case; the known keys are listed below */
    tb_param_type type;
    int64_t       i;        /* TB_PARAM_TYPE_INT */
    const char   *s;        /* TB_PARAM_TYPE_STR */
} tb_param;

#define TB_PARAM_INT(k, v) { (k), TB_PARAM_TYPE_INT, (int64_t)(v), NULL }
#define TB_PARAM_STR(k, v) { (k), TB_PARAM_TYPE_STR, 0, (v) }
#define TB_PARAM_END       { NULL, TB_PARAM_NONE, 0, NULL }

/* ---- the variant ------------------------------------------------------------------------ */

typedef struct tb_variant {
    uint32_t abi_version;   /* TB_VARIANT_ABI_VERSION */
    uint32_t struct_size;   /* sizeof(tb_variant) as the variant was built */

    /* Unique among all variants the host loads. A parametric family's names are generated
     * by tb_variant_make_name() from family + params; a baseline keeps a plain name
     * ("cublaslt") and sets TB_PARAM_STR("naming", "plain"). */
    const char *name;
    const char *family;
    const tb_param *params; /* terminated by TB_PARAM_END; may be NULL for none */

    /* SASS targets the kernels were built for, comma separated: "sm_90a", "sm_80,sm_90".
     * "sm_XYa" runs only on compute capability X.Y; "sm_XY" on X.y for y >= Y (SASS is
     * compatible within a major version); "any" means the library has no kernels of its own
     * (a wrapper around a vendor library). "compute_XY" (PTX only) is not accepted: what the
     * driver would compile from it at run time is not the code that was tuned. A variant with
     * nothing for the GPU is refused before it is called.
     * Text limits, checked when the library is probed (a variant over them is refused, never
     * cut): name up to 127 bytes of [A-Za-z0-9_.-]; family and sass up to 63 bytes, and the
     * parameters as JSON up to 1023, all valid UTF-8 without control characters. */
    const char *sass;

    /* Non-zero when the variant computes this problem; 0 with a one-line reason in why
     * ("K must be a multiple of 8") when it does not. May be NULL: supports everything. */
    int (*supports)(const tb_problem *p, char *why, size_t why_len);

    /* Workspace bytes for this problem. May be NULL: none. */
    size_t (*workspace_size)(const tb_problem *p);

    /* Enqueue the computation; see the launch contract at the top of this file. state is
     * what setup() returned (NULL without setup). */
    int (*launch)(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
                  size_t workspace_bytes, tb_stream stream);

    /* Optional, may be NULL. Called once per problem, outside timed regions, with the
     * stream later launches use; may allocate, query heuristics, set kernel attributes.
     * Returns 0 and sets *state, or non-zero with a message in msg. */
    int (*setup)(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t msg_len);
    void (*teardown)(void *state);

    /* Optional, may be NULL. A one-line description of what setup() chose for this problem
     * ("algo=23 tile=128x256 stages=4"), stored beside the measurement. */
    int (*describe)(void *state, char *buf, size_t buf_len);

    /* Optional, may be NULL. Returns NULL for every key it does not know; later optional
     * interfaces arrive here without growing this struct. */
    const void *(*extension)(const char *key);
} tb_variant;

/* The one exported entry point. host_abi is TB_VARIANT_ABI_VERSION of the host. Declared
 * here inside extern "C", so a C++ (.cu) definition gets C linkage without saying so. */
typedef const tb_variant *(*tb_variant_query_fn)(uint32_t host_abi, uint32_t index);
TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index);

/* ---- generated names ----------------------------------------------------------------------
 * One fixed field order and one spelling per key, as CUTLASS's procedural names:
 *   family [_dtype] [_TMxTNxTK] [_cCMxCN] [_sSTAGES] [_wWARPS] [_SCHEDULE] [_rasterR]
 *   [_swSWIZZLE] [_other-key-values in declared order] [_LAYOUT]
 * e.g. mma_sync_bf16_128x128x32_s3_w8_tn. Keys: dtype (str), tile_m/tile_n/tile_k (int),
 * cluster_m/cluster_n (int), stages (int), warps (int), schedule (str), raster (str, "m" or
 * "n"), swizzle (int), layout (str). Any other key is appended as key-value in the order
 * declared; the key "naming" is not part of the name.
 * Writes at most len bytes (always NUL terminated when len > 0); returns the length the full
 * name needs, like snprintf. */
static inline const tb_param *tb_param_find(const tb_param *ps, const char *key)
{
    if (!ps) return NULL;
    for (; ps->key; ps++) {
        const char *a = ps->key, *b = key;
        while (*a && *a == *b) { a++; b++; }
        if (*a == 0 && *b == 0) return ps;
    }
    return NULL;
}

static inline size_t tb__put(char *out, size_t len, size_t at, const char *s)
{
    for (; *s; s++, at++)
        if (at + 1 < len) out[at] = *s;
    if (len) out[at < len ? at : len - 1] = 0;
    return at;
}

static inline size_t tb__put_int(char *out, size_t len, size_t at, int64_t v)
{
    char tmp[24]; int n = 0; uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    do { tmp[n++] = (char)('0' + (int)(u % 10)); u /= 10; } while (u);
    if (v < 0) tmp[n++] = '-';
    char rev[24]; int j = 0; while (n) rev[j++] = tmp[--n]; rev[j] = 0;
    return tb__put(out, len, at, rev);
}

static inline size_t tb__put_val(char *out, size_t len, size_t at, const tb_param *p)
{
    return p->type == TB_PARAM_TYPE_INT ? tb__put_int(out, len, at, p->i)
                                        : tb__put(out, len, at, p->s ? p->s : "");
}

static inline int tb__is_known_key(const char *k)
{
    static const char *const known[] = { "dtype", "tile_m", "tile_n", "tile_k", "cluster_m",
        "cluster_n", "stages", "warps", "schedule", "raster", "swizzle", "layout", "naming", 0 };
    for (int i = 0; known[i]; i++) {
        const char *a = known[i], *b = k;
        while (*a && *a == *b) { a++; b++; }
        if (*a == 0 && *b == 0) return 1;
    }
    return 0;
}

static inline size_t tb_variant_make_name(const char *family, const tb_param *ps,
                                          char *out, size_t len)
{
    size_t at = tb__put(out, len, 0, family ? family : "");
    const tb_param *p;
    if ((p = tb_param_find(ps, "dtype"))) { at = tb__put(out, len, at, "_"); at = tb__put_val(out, len, at, p); }
    const tb_param *tm = tb_param_find(ps, "tile_m"), *tn = tb_param_find(ps, "tile_n"),
                   *tk = tb_param_find(ps, "tile_k");
    if (tm || tn || tk) {
        at = tb__put(out, len, at, "_");
        if (tm) at = tb__put_val(out, len, at, tm);
        if (tn) { at = tb__put(out, len, at, "x"); at = tb__put_val(out, len, at, tn); }
        if (tk) { at = tb__put(out, len, at, "x"); at = tb__put_val(out, len, at, tk); }
    }
    const tb_param *cm = tb_param_find(ps, "cluster_m"), *cn = tb_param_find(ps, "cluster_n");
    if (cm || cn) {
        at = tb__put(out, len, at, "_c");
        at = cm ? tb__put_val(out, len, at, cm) : tb__put(out, len, at, "1");
        at = tb__put(out, len, at, "x");
        at = cn ? tb__put_val(out, len, at, cn) : tb__put(out, len, at, "1");
    }
    if ((p = tb_param_find(ps, "stages"))) { at = tb__put(out, len, at, "_s"); at = tb__put_val(out, len, at, p); }
    if ((p = tb_param_find(ps, "warps"))) { at = tb__put(out, len, at, "_w"); at = tb__put_val(out, len, at, p); }
    if ((p = tb_param_find(ps, "schedule"))) { at = tb__put(out, len, at, "_"); at = tb__put_val(out, len, at, p); }
    if ((p = tb_param_find(ps, "raster"))) { at = tb__put(out, len, at, "_raster"); at = tb__put_val(out, len, at, p); }
    if ((p = tb_param_find(ps, "swizzle"))) { at = tb__put(out, len, at, "_sw"); at = tb__put_val(out, len, at, p); }
    for (p = ps; p && p->key; p++) {
        if (tb__is_known_key(p->key)) continue;
        at = tb__put(out, len, at, "_"); at = tb__put(out, len, at, p->key);
        at = tb__put(out, len, at, "-"); at = tb__put_val(out, len, at, p);
    }
    if ((p = tb_param_find(ps, "layout"))) { at = tb__put(out, len, at, "_"); at = tb__put_val(out, len, at, p); }
    return at;
}

#ifdef __cplusplus
}
#endif
#endif /* TILEBENCH_VARIANT_H */
