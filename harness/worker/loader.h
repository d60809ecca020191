/* loader.h - opens variant libraries and checks them against the ABI. The only module that
 * calls dlopen/dlsym. Used by the worker (never by the parent, which must survive a library
 * whose constructor crashes: it asks a worker in probe mode instead). */
#ifndef TB_LOADER_H
#define TB_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include "tilebench/variant.h"

typedef struct tb_lib tb_lib;

/* dlopen(path, RTLD_NOW | RTLD_LOCAL) and find TB_VARIANT_ENTRY. TB_ELOAD with a message
 * naming the file when it is missing, not loadable (dlerror's text) or has no entry.
 * Libraries are never unloaded (CUDA modules do not survive dlclose well); tb_lib_free only
 * frees the handle record. */
int tb_lib_open(const char *path, tb_lib **out, char *msg, size_t len);
void tb_lib_free(tb_lib *lib);
const char *tb_lib_path(const tb_lib *lib);

/* The variant at index: TB_OK and *out set; TB_OK and *out NULL past the last; TB_ELOAD
 * (message names file and index) when the variant is refused: wrong abi_version, a
 * struct_size below the v1 layout, no name, no family, no launch, a parametric name that
 * does not match tb_variant_make_name(family, params). Stops at 4096 variants. */
int tb_lib_variant(tb_lib *lib, uint32_t index, const tb_variant **out, char *msg, size_t len);

/* The variant's params as a JSON object {"key": value, ...} in declared order. Returns the
 * length written (truncated output is still valid JSON only when it fits: check < len). */
int tb_params_json(const tb_param *ps, char *buf, size_t len);

/* 1 if the variant opted out of generated names (TB_PARAM_STR("naming", "plain")). */
int tb_variant_plain_name(const tb_variant *v);

/* The tb_problem layout v was built against: what its extension(TB_EXT_PROBLEM_SIZE) points
 * to, or TB_PROBLEM_V1_SIZE when it has no extension or answers NULL (a variant built before
 * growth 1). v must have passed tb_lib_variant. Can't fail. */
uint32_t tb_variant_problem_size(const tb_variant *v);

/* 1 when v computes op: op is in the list its extension(TB_EXT_OPS) points to (uint32_t
 * values ended by 0, read up to TB_OPS_MAX of them), or, without that answer, op is
 * TB_OP_GEMM (variant.h, growth 2). Can't fail. */
#define TB_OPS_MAX 64
int tb_variant_computes(const tb_variant *v, uint32_t op);

/* The host's refusal, before supports() is asked (docs/writing-a-variant.md, "Growth"): 1 and
 * a one-line reason in why when v cannot see a member p needs (an FP8 problem's scales, for a
 * variant built against the v1 problem; an attention problem, for one built before growth 2)
 * or does not compute p's operation; 0 when p may be offered to it. The worker records a
 * refusal as it records supports() == 0: unsupported, with the reason. */
#define TB_REFUSE_V1_FP8 "built against the v1 problem (no FP8 scales): rebuild with variant.h growth 1"
#define TB_REFUSE_G1_ATTN "built before variant.h growth 2 (no attention problem): rebuild with growth 2"
int tb_variant_host_refuses(const tb_variant *v, const tb_problem *p, char *why, size_t why_len);

#endif
