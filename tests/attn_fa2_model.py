#!/usr/bin/python3
"""attn_fa2_model.py - a lane-level model of variants/attn_fa2/attn_fa2.cu's kernel (issue 33),
for checking its index arithmetic without a GPU: the kernel transcribed statement by statement
(loader, swizzle, ldmatrix lane offsets, tile counts, mask, online softmax, pipelines and
their cp.async groups), run on the PTX ISA's semantics written independently of it: ldmatrix
.x4 and .x4.trans, the m16n8k16 A/B/C fragments, cp.async landing only at a wait_group 0 of
a committed group (an uncommitted copy never lands), shared memory poisoned with NaN (an MMA
that reads an unwritten element fails). O and LSE are compared with an FP64 reference under
docs/method.md's attention rule (O: 2^-6 rms + 2^-7 |ref|; LSE: 1e-3 here). Not run by ctest
(about a minute a dozen cases); rerun it after changing the kernel's index arithmetic, and
keep the transcription in step with the kernel:
    tests/attn_fa2_model.py                      (the default cases below)
    tests/attn_fa2_model.py "BQ,BKV,W,STAGES,SPLIT;..." "B,H,HKV,SQ,SK,D,CAUSAL[,BSHD];..."
Inputs use padded rows (D + 8 elements a row), BHSD or (BSHD = 1) BSHD, grouped-query heads
where HKV < H."""
import sys, itertools
import numpy as np

def bf16(x):
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)

class CTA:
    def __init__(s, smem_bytes):
        s.smem = np.full(smem_bytes // 2, np.nan, dtype=np.float32)   # poisoned
        s.pending = []      # uncommitted (dst_byte, src_array, src_index or None)
        s.groups = []

    def cp_async16(s, dst, arr, idx, ok):
        assert dst % 16 == 0
        s.pending.append((dst, arr, idx if ok else None))

    def commit(s):
        s.groups.append(s.pending); s.pending = []

    def wait0(s):
        for g in s.groups:
            for dst, arr, idx in g:
                e = dst // 2
                s.smem[e:e + 8] = 0.0 if idx is None else arr[idx:idx + 8]
        s.groups = []

    def ldsm_x4(s, addr, trans=False):
        """addr: 32 byte addresses. Returns 4 regs, each (32, 2)."""
        out = []
        for j in range(4):
            M = np.empty((8, 8), dtype=np.float32)
            for r in range(8):
                a = addr[8 * j + r]; assert a % 16 == 0
                M[r] = s.smem[a // 2: a // 2 + 8]
            reg = np.empty((32, 2), dtype=np.float32)
            for l in range(32):
                g, t = l // 4, l % 4
                reg[l] = (M[2 * t][g], M[2 * t + 1][g]) if trans else (M[g][2 * t], M[g][2 * t + 1])
            out.append(reg)
        return out

def mma(c, a, b0, b1):
    """c (32,4) f32 in place; a 4 regs (32,2); b0, b1 (32,2)"""
    A = np.zeros((16, 16)); B = np.zeros((16, 8)); C = np.zeros((16, 8))
    for l in range(32):
        g, t = l // 4, l % 4
        A[g, 2*t:2*t+2] = a[0][l]; A[g+8, 2*t:2*t+2] = a[1][l]
        A[g, 2*t+8:2*t+10] = a[2][l]; A[g+8, 2*t+8:2*t+10] = a[3][l]
        B[2*t:2*t+2, g] = b0[l]; B[2*t+8:2*t+10, g] = b1[l]
        C[g, 2*t:2*t+2] = c[l, 0:2]; C[g+8, 2*t:2*t+2] = c[l, 2:4]
    assert np.all(np.isfinite(A)) and np.all(np.isfinite(B)), "NaN (unwritten smem) read into an MMA"
    D = (A @ B + C).astype(np.float32)
    for l in range(32):
        g, t = l // 4, l % 4
        c[l, 0:2] = D[g, 2*t:2*t+2]; c[l, 2:4] = D[g+8, 2*t:2*t+2]

def shfl_xor(v, m):
    return v[np.arange(32) ^ m]

def run(BQ, BKV, W, ST, SPLIT, prob, seed=0):
    B_, H, HKV, SQ, SK, D, causal = prob[:7]
    bshd = len(prob) > 7 and prob[7] == 1
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(D)
    # BHSD (or BSHD) with padded rows (D + 8 elements a row) to exercise the strides
    rs = D + 8
    if bshd:
        qs = (SQ * H * rs, rs, H * rs); ks = (SK * HKV * rs, rs, HKV * rs)
    else:
        qs = (H * SQ * rs, SQ * rs, rs); ks = (HKV * SK * rs, SK * rs, rs)
    vs = ks
    os_ = (H * SQ * D, SQ * D, D); ls = (H * SQ, SQ)
    Q = bf16(rng.standard_normal(B_ * qs[0]) * 1.5); K = bf16(rng.standard_normal(B_ * ks[0]))
    V = bf16(rng.standard_normal(B_ * vs[0]))
    O = np.full(B_ * os_[0], np.nan, dtype=np.float32); LSE = np.full(B_ * ls[0], np.nan, dtype=np.float32)

    THREADS = 32 * W; MW = BQ // W; MI = MW // 16; NT = BKV // 8; KK = BKV // 16
    RB = D * 2; CPR = D // 8; KS = D // 16; DT = D // 8
    Q_REGS = MI == 1 and D <= 128
    Q_BYTES = BQ * RB; KV_BYTES = BKV * RB
    IG = 1 if SPLIT else MI
    RPP = THREADS // CPR
    group = H // HKV
    n_qtiles = (SQ + BQ - 1) // BQ
    c = np.float32(scale * 1.4426950408889634)
    def swz(r, ch): return r * RB + ((ch ^ (r & 7)) << 4)

    for b, h, bx in itertools.product(range(B_), range(H), range(n_qtiles)):
        cta = CTA(Q_BYTES + 2 * ST * KV_BYTES)
        sQ = 0; sK = sQ + Q_BYTES; sV = sK + ST * KV_BYTES
        qt = n_qtiles - 1 - bx; hk = h // group; q0 = qt * BQ; diag = SK - SQ
        qp = b * qs[0] + h * qs[1] + q0 * qs[2]
        kp = b * ks[0] + hk * ks[1]; vp = b * vs[0] + hk * vs[1]
        n_tiles = (SK + BKV - 1) // BKV
        if causal: n_tiles = min(n_tiles, (min(q0 + BQ, SQ) - 1 + diag) // BKV + 1)
        first_masked = SK // BKV
        if causal: first_masked = min(first_masked, (q0 + diag + 1) // BKV)

        def tile(dst, arr, base, stride, valid, ROWS):   # loader<D>::tile for every thread
            for tid in range(THREADS):
                r0, ch = tid // CPR, tid % CPR
                src = base + r0 * stride + ch * 8
                for i in range(ROWS // RPP):
                    r = r0 + i * RPP
                    ok = r < valid
                    cta.cp_async16(dst + swz(r, ch), arr, src, ok)
                    src += RPP * stride

        lane = np.arange(32); x = lane & 7
        q_lm = [(w * MW + (lane & 15)) * RB + (((lane >> 4) ^ x) << 4) for w in range(W)]
        k_lm = (x + ((lane >> 4) << 3)) * RB + ((((lane >> 3) & 1) ^ x) << 4)
        v_lm = (x + (((lane >> 3) & 1) << 3)) * RB + (((lane >> 4) ^ x) << 4)

        tile(sQ, Q, qp, qs[2], SQ - q0, BQ)
        tile(sK, K, kp, ks[2], SK, BKV)
        if ST == 2: tile(sV, V, vp, vs[2], SK, BKV)
        cta.commit()

        acc = [np.zeros((MI, DT, 32, 4), dtype=np.float32) for w in range(W)]
        m_run = [np.full((MI, 2, 32), -np.inf, dtype=np.float32) for w in range(W)]
        l_run = [np.zeros((MI, 2, 32), dtype=np.float32) for w in range(W)]
        qf = [None] * W
        if Q_REGS:
            cta.wait0()
            for w in range(W):
                qf[w] = [cta.ldsm_x4(sQ + (q_lm[w] ^ (ks_ * 32))) for ks_ in range(KS)]

        for t in range(n_tiles):
            kv0 = t * BKV
            buf = (t & 1) if ST == 2 else 0
            kb = sK + buf * KV_BYTES; vb = sV + buf * KV_BYTES
            cta.wait0()   # + __syncthreads
            if ST == 1:
                tile(sV, V, vp + kv0 * vs[2], vs[2], SK - kv0, BKV)
                cta.commit()
            elif t + 1 < n_tiles:
                nk = kv0 + BKV; nb = (t + 1) & 1
                tile(sK + nb * KV_BYTES, K, kp + nk * ks[2], ks[2], SK - nk, BKV)
            if ST == 2: cta.commit()
            pa = [None] * W
            for w in range(W):
                row_g = q0 + w * MW + (lane >> 2)
                pa[w] = [[None] * KK for _ in range(MI)]
                for i0 in range(0, MI, IG):
                    s = np.zeros((IG, NT, 32, 4), dtype=np.float32)
                    for ks_ in range(KS):
                        a = []
                        for i in range(IG):
                            a.append(qf[w][ks_] if Q_REGS else cta.ldsm_x4(sQ + ((q_lm[w] + (i0 + i) * 16 * RB) ^ (ks_ * 32))))
                        for np_ in range(NT // 2):
                            bk = cta.ldsm_x4(kb + ((k_lm + np_ * 16 * RB) ^ (ks_ * 32)))
                            for i in range(IG):
                                mma(s[i, 2 * np_], a[i], bk[0], bk[1])
                                mma(s[i, 2 * np_ + 1], a[i], bk[2], bk[3])
                    if t >= first_masked:
                        key0 = kv0 + (lane & 3) * 2
                        for i in range(IG):
                            for hf in range(2):
                                lim = np.full(32, SK)
                                if causal: lim = np.minimum(lim, row_g + (i0 + i) * 16 + hf * 8 + diag + 1)
                                lim = lim - key0
                                for j in range(NT):
                                    for e in range(2):
                                        s[i, j, :, 2 * hf + e] = np.where(j * 8 + e >= lim, -np.inf, s[i, j, :, 2 * hf + e])
                    for i in range(IG):
                        for hf in range(2):
                            m = m_run[w][i0 + i, hf]
                            mx = m.copy()
                            for j in range(NT):
                                mx = np.maximum(mx, np.maximum(s[i, j, :, 2 * hf], s[i, j, :, 2 * hf + 1]))
                            mx = np.maximum(mx, shfl_xor(mx, 1)); mx = np.maximum(mx, shfl_xor(mx, 2))
                            mu = np.where(mx == -np.inf, np.float32(0), mx)
                            with np.errstate(invalid='raise'):
                                alpha = np.exp2((m - mu) * c).astype(np.float32)
                            mc = (mu * c).astype(np.float32)
                            ssum = np.zeros(32, dtype=np.float32)
                            for j in range(NT):
                                for e in range(2):
                                    p = np.exp2(s[i, j, :, 2 * hf + e] * c - mc).astype(np.float32)
                                    s[i, j, :, 2 * hf + e] = p; ssum += p
                            l_run[w][i0 + i, hf] = l_run[w][i0 + i, hf] * alpha + ssum
                            m_run[w][i0 + i, hf] = mx
                            acc[w][i0 + i, :, :, 2 * hf] *= alpha
                            acc[w][i0 + i, :, :, 2 * hf + 1] *= alpha
                    for i in range(IG):
                        for kk in range(KK):
                            pa[w][i0 + i][kk] = [bf16(s[i, 2 * kk, :, 0:2]), bf16(s[i, 2 * kk, :, 2:4]),
                                                 bf16(s[i, 2 * kk + 1, :, 0:2]), bf16(s[i, 2 * kk + 1, :, 2:4])]
            if ST == 2 and t + 1 < n_tiles:
                nk = kv0 + BKV; nb = (t + 1) & 1
                tile(sV + nb * KV_BYTES, V, vp + nk * vs[2], vs[2], SK - nk, BKV)
                cta.commit()
            if ST == 1:
                cta.wait0()
                if t + 1 < n_tiles:
                    nk = kv0 + BKV
                    tile(sK, K, kp + nk * ks[2], ks[2], SK - nk, BKV)
                cta.commit()
            for w in range(W):
                for kk in range(KK):
                    for dp in range(DT // 2):
                        bv = cta.ldsm_x4(vb + kk * 16 * RB + (v_lm ^ (dp * 32)), trans=True)
                        for i in range(MI):
                            mma(acc[w][i, 2 * dp], pa[w][i][kk], bv[0], bv[1])
                            mma(acc[w][i, 2 * dp + 1], pa[w][i][kk], bv[2], bv[3])
        cta.wait0()
        col = (lane & 3) * 2
        for w in range(W):
            row_g = q0 + w * MW + (lane >> 2)
            for i in range(MI):
                for hf in range(2):
                    l = l_run[w][i, hf]
                    l = l + shfl_xor(l, 1); l = l + shfl_xor(l, 2)
                    row = row_g + i * 16 + hf * 8
                    inv = (1.0 / l).astype(np.float32)
                    for ln in range(32):
                        if row[ln] >= SQ: continue
                        op = b * os_[0] + h * os_[1] + row[ln] * os_[2] + col[ln]
                        for j in range(DT):
                            O[op + j * 8: op + j * 8 + 2] = bf16(acc[w][i, j, ln, 2 * hf: 2 * hf + 2] * inv[ln])
                        if ln & 3 == 0:
                            LSE[b * ls[0] + h * ls[1] + row[ln]] = m_run[w][i, hf, ln] * np.float32(scale) + np.log(l[ln])

    # reference (FP64)
    err_o = 0.0; err_l = 0.0; bad = 0
    for b, h in itertools.product(range(B_), range(H)):
        hk = h // group
        q = np.array([Q[b*qs[0]+h*qs[1]+i*qs[2]: b*qs[0]+h*qs[1]+i*qs[2]+D] for i in range(SQ)], dtype=np.float64)
        k = np.array([K[b*ks[0]+hk*ks[1]+j*ks[2]: b*ks[0]+hk*ks[1]+j*ks[2]+D] for j in range(SK)], dtype=np.float64)
        v = np.array([V[b*vs[0]+hk*vs[1]+j*vs[2]: b*vs[0]+hk*vs[1]+j*vs[2]+D] for j in range(SK)], dtype=np.float64)
        S = scale * q @ k.T
        if causal:
            S = np.where(np.arange(SK)[None, :] > np.arange(SQ)[:, None] + SK - SQ, -np.inf, S)
        mx = S.max(1, keepdims=True); P = np.exp(S - mx); l = P.sum(1, keepdims=True)
        ref = (P / l) @ v; lse = (mx + np.log(l))[:, 0]
        o = np.array([O[b*os_[0]+h*os_[1]+i*os_[2]: b*os_[0]+h*os_[1]+i*os_[2]+D] for i in range(SQ)])
        L = LSE[b*ls[0]+h*ls[1]: b*ls[0]+h*ls[1]+SQ]
        if not np.all(np.isfinite(o)) or not np.all(np.isfinite(L)): bad += 1
        rms = np.sqrt((ref ** 2).mean(1, keepdims=True))
        err_o = max(err_o, float(np.nanmax(np.abs(o - ref) / (2**-6 * rms + 2**-7 * np.abs(ref)))))
        err_l = max(err_l, float(np.nanmax(np.abs(L - lse))))
    return bad, err_o, err_l

if __name__ == "__main__":
    a1 = sys.argv[1] if len(sys.argv) > 1 else "128,64,4,2,0;128,64,4,1,1;64,32,4,1,0"
    a2 = sys.argv[2] if len(sys.argv) > 2 else "1,2,1,150,200,64,0;2,2,2,77,131,128,1,1;1,1,1,1,100,128,1"
    cfgs = [tuple(int(v) for v in a.split(",")) for a in a1.split(";")]
    probs = [tuple(int(v) for v in a.split(",")) for a in a2.split(";")]
    fail = 0
    for cf in cfgs:
        for pr in probs:
            bad, eo, el = run(*cf, pr)
            ok = bad == 0 and eo <= 1.0 and el < 1e-3
            fail += not ok
            print(f"{'ok  ' if ok else 'FAIL'} cfg BQ,BKV,W,ST,SPLIT={cf} prob B,H,HKV,SQ,SK,D,causal={pr}: "
                  f"nonfinite heads {bad}, O err {eo:.3f} of allowance, LSE abs err {el:.2e}", flush=True)
    sys.exit(1 if fail else 0)
