/* cp_async.cuh - the PTX wrappers of the family's predicated paths, one inline wrapper each:
 * shared-memory loads (the predicated epilogue of wgmma.cu reads its staging buffer with
 * them), cp.async with zero-fill (16-byte global-to-shared copies of which only src_bytes are
 * read, the rest of the 16 written as zeros: the edges of small.cuh's tiles), its commit and
 * wait, and wgmma.mma_async m64nNk16 for the N that small.cuh uses (N = 136 and 72; BF16 in,
 * FP32 accumulators, both operands K-major in shared memory).
 *
 * Owns nothing but these wrappers: no state, no policy. Kept apart from wgmma_ptx.cuh (the TMA
 * kernel's wrappers), which it does not change; the descriptor format is that file's
 * (desc_lo(), DESC_HI), so include wgmma_ptx.cuh first where wgmma is used. Everything is
 * inline and in an anonymous namespace, as there.
 */
#ifndef TB_VARIANTS_WGMMA_CP_ASYNC_CUH
#define TB_VARIANTS_WGMMA_CP_ASYNC_CUH

#include <stdint.h>

namespace {

__device__ __forceinline__ uint32_t ld_shared_b32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ uint16_t ld_shared_b16(uint32_t addr)
{
    uint16_t v;
    asm volatile("ld.shared.b16 %0, [%1];\n" : "=h"(v) : "r"(addr) : "memory");
    return v;
}

/* 16 bytes from global src to shared dst, of which the first src_bytes (0..16) are read and
 * the rest written as zeros; src must be 16-byte aligned and, when src_bytes is 0, still a
 * valid address (nothing is read from it). Cached in L2 only (.cg). */
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src, uint32_t src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Wait until at most N of this thread's committed cp.async groups are still pending. */
template <int N>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

/* D[64 x 136] (+)= A[64 x 16] * B[16 x 136], both operands K-major in shared memory (128-byte
 * swizzle; da, db: the descriptors' low words, wgmma_ptx.cuh's desc_lo(), the high word its
 * DESC_HI); 68 f32 accumulators per thread; scale_d = 0 overwrites D. */
[[maybe_unused]] __device__ __forceinline__ void wgmma_n136_kk(float (&d)[68], uint32_t da, uint32_t db, int scale_d)
{
    asm volatile(
        "{\n.reg .pred p;\n.reg .b64 da, db;\n"
        "setp.ne.b32 p, %70, 0;\n"
        "mov.b64 da, {%68, %71};\n"
        "mov.b64 db, {%69, %71};\n"
        "wgmma.mma_async.sync.aligned.m64n136k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67"
        "}, da, db, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
        : "r"(da), "r"(db), "r"(scale_d), "n"(DESC_HI));
}

/* D[64 x 72] (+)= A[64 x 16] * B[16 x 72], both operands K-major in shared memory (128-byte
 * swizzle; da, db: the descriptors' low words, wgmma_ptx.cuh's desc_lo(), the high word its
 * DESC_HI); 36 f32 accumulators per thread; scale_d = 0 overwrites D. */
[[maybe_unused]] __device__ __forceinline__ void wgmma_n72_kk(float (&d)[36], uint32_t da, uint32_t db, int scale_d)
{
    asm volatile(
        "{\n.reg .pred p;\n.reg .b64 da, db;\n"
        "setp.ne.b32 p, %38, 0;\n"
        "mov.b64 da, {%36, %39};\n"
        "mov.b64 db, {%37, %39};\n"
        "wgmma.mma_async.sync.aligned.m64n72k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35"
        "}, da, db, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
        : "r"(da), "r"(db), "r"(scale_d), "n"(DESC_HI));
}

} // namespace

#endif /* TB_VARIANTS_WGMMA_CP_ASYNC_CUH */
