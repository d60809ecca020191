/* sha256.h - SHA-256 of bytes in memory as 64 lowercase hex digits (OpenSSL's EVP: no
 * hand-written hash). Used for idempotency keys, token hashes and the GPU UUID's hash; files
 * are hashed by driver/hash.c, which streams them. */
#ifndef TB_SHA256_H
#define TB_SHA256_H
#include <stddef.h>
/* out = hex SHA-256 of a[0..na) followed by b[0..nb) (b may be NULL with nb 0). 0, or -1 when
 * libcrypto fails (out is then ""). */
int tb_sha256_hex(const void *a, size_t na, const void *b, size_t nb, char out[65]);
#endif
