#include "pinion_shims_x509.h"

int pinion_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *pinion_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void pinion_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
