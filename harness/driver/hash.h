/* hash.h - SHA-256 of a file (OpenSSL libcrypto's EVP interface; no hand-written hash). */
#ifndef TB_HASH_H
#define TB_HASH_H
#include <stddef.h>
/* hex gets 64 hex digits and a NUL. TB_OK or TB_EIO naming the file. */
int tb_sha256_file(const char *path, char hex[65], char *msg, size_t len);
#endif
