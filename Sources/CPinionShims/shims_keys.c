#include "pinion_shims_keys.h"

long pinion_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

void *pinion_OPENSSL_malloc(size_t length) { return OPENSSL_malloc(length); }

void pinion_OPENSSL_clear_free(void *pointer, size_t length) { OPENSSL_clear_free(pointer, length); }

void pinion_OPENSSL_secure_free(void *pointer) { OPENSSL_secure_free(pointer); }

void pinion_OPENSSL_secure_clear_free(void *pointer, size_t length) { OPENSSL_secure_clear_free(pointer, length); }

int pinion_ERR_GET_LIB(unsigned long code) { return ERR_GET_LIB(code); }

int pinion_ERR_GET_REASON(unsigned long code) { return ERR_GET_REASON(code); }
