// Shims used by the key-file code (PinionCrypto/KeyFile*.swift).
#ifndef PINION_SHIMS_KEYS_H
#define PINION_SHIMS_KEYS_H
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

/// BIO_get_mem_data: pointer to and length of a memory BIO's contents.
long pinion_BIO_get_mem_data(BIO *bio, char **data);
#endif
