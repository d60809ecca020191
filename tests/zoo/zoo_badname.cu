/* zoo_badname.cu - zoo member: a parametric variant (no "naming": "plain" parameter) whose
 * name was typed by hand and disagrees with its parameters: tile_m is 128, the name says 64.
 * tb_variant_make_name("zoo", params) gives "zoo_128x128_tn"; the name is "zoo_64x128_tn".
 * The loader refuses it. (A correct GEMM otherwise.) */
#include "zoo_gemm.cuh"

static const tb_param badname_params[] = {
    TB_PARAM_INT("tile_m", 128), TB_PARAM_INT("tile_n", 128), TB_PARAM_STR("layout", "tn"),
    TB_PARAM_END
};

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_64x128_tn", "zoo", badname_params, TB_SASS,
    zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
