// Shims used by the X.509 / TLS code (PinionCrypto/SPKI*.swift, TLS*.swift).
#ifndef PINION_SHIMS_X509_H
#define PINION_SHIMS_X509_H
#include <openssl/ssl.h>
#include <openssl/x509.h>

int pinion_sk_X509_num(const STACK_OF(X509) *stack);
X509 *pinion_sk_X509_value(const STACK_OF(X509) *stack, int index);
void pinion_OPENSSL_free(void *pointer);
#endif
