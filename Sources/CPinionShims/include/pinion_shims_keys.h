// Shims used by the key-file code (PinionCrypto/KeyFile*.swift).
#ifndef PINION_SHIMS_KEYS_H
#define PINION_SHIMS_KEYS_H
#include <stddef.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

/// BIO_get_mem_data: pointer to and length of a memory BIO's contents.
long pinion_BIO_get_mem_data(BIO *bio, char **data);

/// OPENSSL_malloc / OPENSSL_clear_free: OpenSSL's heap, for buffers whose ownership passes
/// to OpenSSL (PKCS8_pkey_set0) or comes back from it.
void *pinion_OPENSSL_malloc(size_t length);
void pinion_OPENSSL_clear_free(void *pointer, size_t length);

/// OPENSSL_secure_free: frees memory from OPENSSL_secure_malloc (or the plain heap when
/// the secure heap is not initialised), e.g. PEM_read_bio_ex results with PEM_FLAG_SECURE.
void pinion_OPENSSL_secure_free(void *pointer);

/// OPENSSL_secure_clear_free: wipes `length` bytes, then frees as above.
void pinion_OPENSSL_secure_clear_free(void *pointer, size_t length);

/// ERR_GET_LIB / ERR_GET_REASON: the library and reason code of an error queue entry.
int pinion_ERR_GET_LIB(unsigned long code);
int pinion_ERR_GET_REASON(unsigned long code);
#endif
