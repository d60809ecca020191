/* hash.c - SHA-256 of variant files through libcrypto (see hash.h). */
#include "driver/hash.h"
#include "common/tb.h"
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

int tb_sha256_file(const char *path, char hex[65], char *msg, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return tb_fail(msg, len, TB_EIO, "cannot read '%s': %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0) ok = EVP_DigestUpdate(ctx, buf, n);
    if (ok && ferror(f)) ok = 0;
    if (ok) ok = EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    fclose(f);
    if (!ok || mdlen != 32) return tb_fail(msg, len, TB_EIO, "cannot hash '%s'", path);
    for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return TB_OK;
}
