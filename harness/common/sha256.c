/* sha256.c - SHA-256 of bytes in memory, hex (see sha256.h). */
#include "common/sha256.h"
#include <openssl/evp.h>
#include <stdio.h>

int tb_sha256_hex(const void *a, size_t na, const void *b, size_t nb, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) && EVP_DigestUpdate(c, a, na) &&
             (!nb || EVP_DigestUpdate(c, b, nb)) && EVP_DigestFinal_ex(c, md, &n) && n == 32;
    EVP_MD_CTX_free(c);
    out[0] = 0;
    if (!ok) return -1;
    for (unsigned int i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}
