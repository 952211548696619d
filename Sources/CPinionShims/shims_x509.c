#include "pinion_shims_x509.h"

#include <string.h>

int pinion_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *pinion_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void pinion_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

long pinion_x509_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

unsigned long pinion_x509_name_flags_rfc2253_utf8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }

int pinion_x509_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

int pinion_x509_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

int pinion_x509_SSL_set1_sigalgs_list(SSL *ssl, const char *list) {
    return (int)SSL_set1_sigalgs_list(ssl, list);
}

struct pinion_x509_pass {
    const char *pass;
    int passlen;
};

static int pinion_x509_pass_cb(char *buf, int size, int rwflag, void *userdata) {
    (void)rwflag;
    const struct pinion_x509_pass *p = userdata;
    if (p == NULL || p->pass == NULL || p->passlen < 0 || p->passlen > size) return -1;
    memcpy(buf, p->pass, (size_t)p->passlen);
    return p->passlen;
}

int pinion_x509_pem_decrypt_legacy(char *header, unsigned char *data, long *len,
                                   const char *pass, int passlen) {
    EVP_CIPHER_INFO cipher;
    if (!PEM_get_EVP_CIPHER_INFO(header, &cipher)) return 0;
    if (cipher.cipher == NULL) return 0;
    struct pinion_x509_pass p = {pass, passlen};
    return PEM_do_header(&cipher, data, len, pinion_x509_pass_cb, &p) ? 1 : -1;
}
