// Shims for OpenSSL's stack macros and OPENSSL_free, which Swift cannot import, used by the
// TLS code of PinionSystem (PinnedHTTPSClient.swift, TLSProbe.swift).
#ifndef PINION_SHIMS_X509_H
#define PINION_SHIMS_X509_H
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

int pinion_sk_X509_num(const STACK_OF(X509) *stack);
X509 *pinion_sk_X509_value(const STACK_OF(X509) *stack, int index);
void pinion_OPENSSL_free(void *pointer);

/// BIO_get_mem_data: pointer to and length of a memory BIO's contents.
long pinion_x509_BIO_get_mem_data(BIO *bio, char **data);

/// XN_FLAG_RFC2253 without ASN1_STRFLGS_ESC_MSB: RFC 2253 one-line names with UTF-8
/// output (`openssl x509 -nameopt RFC2253,-esc_msb`).
unsigned long pinion_x509_name_flags_rfc2253_utf8(void);

/// SSL_CTX_set_min_proto_version; returns 1 on success.
int pinion_x509_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);

/// SSL_set_tlsext_host_name (SNI); returns 1 on success.
int pinion_x509_SSL_set_tlsext_host_name(SSL *ssl, const char *name);

/// SSL_set1_sigalgs_list: the signature algorithms a client offers (OpenSSL list syntax,
/// such as "ECDSA+SHA256:ecdsa_secp384r1_sha384"); returns 1 on success.
int pinion_x509_SSL_set1_sigalgs_list(SSL *ssl, const char *list);

/// Decrypts the body of a legacy encrypted PEM block ("Proc-Type: 4,ENCRYPTED" and
/// "DEK-Info" headers, as written by `openssl pkey -traditional -aes256`) in place.
///
/// header: the block's header lines joined with "\n" (NUL-terminated, modified while
/// parsing); data/len: the base64-decoded body, replaced by the plaintext and its length;
/// pass/passlen: the passphrase (not copied anywhere but OpenSSL's own stack buffer, which
/// it cleanses). Returns 1 on success, 0 when the header is not understood, -1 when
/// decryption fails (wrong passphrase or corrupt data).
int pinion_x509_pem_decrypt_legacy(char *header, unsigned char *data, long *len,
                                   const char *pass, int passlen);
#endif
