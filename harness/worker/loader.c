/* loader.c - dlopen, the entry symbol, and the ABI checks of each variant (see loader.h).
 * Invariant: no field of a tb_variant is read before struct_size has been checked to
 * cover it. */
#define _GNU_SOURCE
#include "worker/loader.h"
#include "common/tb.h"
#include "common/op.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>

struct tb_lib {
    char path[1024];
    void *handle;
    tb_variant_query_fn query;
};

/* the v1 layout ends after extension; a library built against v1 has at least this */
#define TB_V1_SIZE (offsetof(tb_variant, extension) + sizeof(void *))

int tb_lib_open(const char *path, tb_lib **out, char *msg, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return tb_fail(msg, len, TB_ELOAD, "cannot load '%s': no such file", path);
    if (!S_ISREG(st.st_mode))
        return tb_fail(msg, len, TB_ELOAD, "cannot load '%s': not a regular file", path);
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return tb_fail(msg, len, TB_ELOAD, "cannot load '%s': %s", path, e ? e : "dlopen failed");
    }
    void *sym = dlsym(h, TB_VARIANT_ENTRY);
    if (!sym) {
        /* keep the handle open: unloading CUDA-linked libraries is not safe */
        return tb_fail(msg, len, TB_ELOAD, "no entry symbol '%s' in '%s'", TB_VARIANT_ENTRY, path);
    }
    tb_lib *lib = calloc(1, sizeof *lib);
    if (!lib) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    snprintf(lib->path, sizeof lib->path, "%s", path);
    lib->handle = h;
    /* POSIX guarantees a data pointer from dlsym converts to a function pointer */
    memcpy(&lib->query, &sym, sizeof sym);
    *out = lib;
    return TB_OK;
}

void tb_lib_free(tb_lib *lib) { free(lib); }

const char *tb_lib_path(const tb_lib *lib) { return lib->path; }

int tb_variant_plain_name(const tb_variant *v)
{
    const tb_param *p = tb_param_find(v->params, "naming");
    return p && p->type == TB_PARAM_TYPE_STR && p->s && strcmp(p->s, "plain") == 0;
}

int tb_lib_variant(tb_lib *lib, uint32_t index, const tb_variant **out, char *msg, size_t len)
{
    *out = NULL;
    if (index >= 4096) return TB_OK;
    const tb_variant *v = lib->query(TB_VARIANT_ABI_VERSION, index);
    if (!v) return TB_OK;
    if (v->abi_version != TB_VARIANT_ABI_VERSION)
        return tb_fail(msg, len, TB_ELOAD, "'%s' variant %u: ABI version %u, this tilebench "
                       "speaks %u", lib->path, index, v->abi_version, TB_VARIANT_ABI_VERSION);
    if (v->struct_size < TB_V1_SIZE)
        return tb_fail(msg, len, TB_ELOAD, "'%s' variant %u: struct_size %u is smaller than "
                       "the v1 layout (%zu)", lib->path, index, v->struct_size, (size_t)TB_V1_SIZE);
    if (!v->name || !*v->name)
        return tb_fail(msg, len, TB_ELOAD, "'%s' variant %u: no name", lib->path, index);
    if (!v->family || !*v->family)
        return tb_fail(msg, len, TB_ELOAD, "'%s' variant '%s': no family", lib->path, v->name);
    if (!v->launch)
        return tb_fail(msg, len, TB_ELOAD, "'%s' variant '%s': no launch function", lib->path,
                       v->name);
    if (strlen(v->name) >= 128)
        return tb_fail(msg, len, TB_ELOAD, "'%s' variant %u: name longer than 127 bytes",
                       lib->path, index);
    for (const char *c = v->name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-' || *c == '.'))
            return tb_fail(msg, len, TB_ELOAD, "'%s' variant %u: name '%s' has a character "
                           "outside [A-Za-z0-9_.-]", lib->path, index, v->name);
    if (!tb_variant_plain_name(v)) {
        char want[256];
        tb_variant_make_name(v->family, v->params, want, sizeof want);
        if (strcmp(want, v->name) != 0)
            return tb_fail(msg, len, TB_ELOAD, "'%s' variant '%s': name does not match its "
                           "parameters (expected '%s'; plain names need naming=plain)",
                           lib->path, v->name, want);
    }
    *out = v;
    return TB_OK;
}

int tb_params_json(const tb_param *ps, char *buf, size_t len)
{
    cJSON *o = cJSON_CreateObject();
    for (const tb_param *p = ps; p && p->key; p++) {
        if (p->type == TB_PARAM_TYPE_INT) cJSON_AddNumberToObject(o, p->key, (double)p->i);
        else cJSON_AddStringToObject(o, p->key, p->s ? p->s : "");
    }
    char *s = cJSON_PrintUnformatted(o);
    int n = snprintf(buf, len, "%s", s ? s : "{}");
    cJSON_free(s);
    cJSON_Delete(o);
    return n;
}

uint32_t tb_variant_problem_size(const tb_variant *v)
{
    if (!v->extension) return TB_PROBLEM_V1_SIZE;
    const uint32_t *size = (const uint32_t *)v->extension(TB_EXT_PROBLEM_SIZE);
    return size ? *size : TB_PROBLEM_V1_SIZE;
}

int tb_variant_computes(const tb_variant *v, uint32_t op)
{
    const uint32_t *ops = v->extension ? (const uint32_t *)v->extension(TB_EXT_OPS) : NULL;
    if (!ops) return op == TB_OP_GEMM;
    for (int i = 0; i < TB_OPS_MAX && ops[i]; i++)
        if (ops[i] == op) return 1;
    return 0;
}

int tb_variant_host_refuses(const tb_variant *v, const tb_problem *p, char *why, size_t why_len)
{
    const char *no = NULL;
    char buf[160];
    const tb_gemm *g = &p->gemm;
    if (p->op == TB_OP_GEMM && (tb_dtype_is_fp8(g->a_type) || tb_dtype_is_fp8(g->b_type)) &&
        tb_variant_problem_size(v) < TB_PROBLEM_G1_SIZE)
        no = TB_REFUSE_V1_FP8;
    else if (p->op == TB_OP_ATTENTION_FWD && tb_variant_problem_size(v) < TB_PROBLEM_G2_SIZE)
        no = TB_REFUSE_G1_ATTN;
    else if (!tb_variant_computes(v, p->op)) {
        const tb_op_desc *d = tb_op_find(p->op);
        snprintf(buf, sizeof buf, "does not compute %s (its extension(\"%s\") does not list it)",
                 d ? d->name : "this operation", TB_EXT_OPS);
        no = buf;
    }
    if (!no) return 0;
    if (why && why_len) snprintf(why, why_len, "%s", no);
    return 1;
}
