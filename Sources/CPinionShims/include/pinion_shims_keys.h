// Shims used by the key-file code (PinionCrypto/KeyFile*.swift).
#ifndef PINION_SHIMS_KEYS_H
#define PINION_SHIMS_KEYS_H
#include <stddef.h>
#include <stdint.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

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

/// Key derivations that `pinion_pkcs8_kdf_cost` tells apart.
#define PINION_KDF_UNKNOWN 0 /* a scheme or KDF OpenSSL has no key derivation for */
#define PINION_KDF_PBKDF2 1  /* PBES2 with PBKDF2 (RFC 8018 §6.2), or bare id-PBKDF2 */
#define PINION_KDF_SCRYPT 2  /* PBES2 with scrypt (RFC 7914 §7) */
#define PINION_KDF_PBES1 3   /* PBES1 (RFC 8018 §6.1) or PKCS#12 PBE (RFC 7292 App. C) */

/// The key-derivation cost of a PKCS#8 EncryptedPrivateKeyInfo, read without decrypting.
///
/// Decodes the encryption algorithm's parameters exactly as PKCS8_decrypt would
/// (ASN1_TYPE_unpack_sequence with PBE2PARAM, PBKDF2PARAM, SCRYPT_PARAMS or PBEPARAM), so
/// the numbers are the ones OpenSSL would use. Sets *kind to a PINION_KDF_ value; for
/// PBKDF2 and PBES1 sets *iterations, for scrypt *scrypt_n, *scrypt_r and *scrypt_p
/// (others are set to 0). Counts too large for 64 bits read as UINT64_MAX. Returns 1 when
/// the parameters were read (or the scheme is PINION_KDF_UNKNOWN), 0 when they are
/// malformed (absent, undecodable, a negative count). Leaves OpenSSL's error queue as found.
int pinion_pkcs8_kdf_cost(const X509_SIG *sig, int *kind, uint64_t *iterations, uint64_t *scrypt_n,
                          uint64_t *scrypt_r, uint64_t *scrypt_p);
#endif
