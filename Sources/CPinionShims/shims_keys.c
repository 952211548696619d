#include "pinion_shims_keys.h"

long pinion_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

void *pinion_OPENSSL_malloc(size_t length) { return OPENSSL_malloc(length); }

void pinion_OPENSSL_clear_free(void *pointer, size_t length) { OPENSSL_clear_free(pointer, length); }

void pinion_OPENSSL_secure_free(void *pointer) { OPENSSL_secure_free(pointer); }

void pinion_OPENSSL_secure_clear_free(void *pointer, size_t length) { OPENSSL_secure_clear_free(pointer, length); }

int pinion_ERR_GET_LIB(unsigned long code) { return ERR_GET_LIB(code); }

int pinion_ERR_GET_REASON(unsigned long code) { return ERR_GET_REASON(code); }

/// A non-negative ASN1_INTEGER as uint64_t, saturating at UINT64_MAX; 0 when absent or negative.
static int pinion_read_count(const ASN1_INTEGER *value, uint64_t *count) {
    if (value == NULL || ASN1_STRING_type(value) == V_ASN1_NEG_INTEGER) return 0;
    if (ASN1_INTEGER_get_uint64(count, value) != 1) *count = UINT64_MAX;
    return 1;
}

static int pinion_pbkdf2_cost(const ASN1_TYPE *parameter, uint64_t *iterations) {
    PBKDF2PARAM *kdf = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBKDF2PARAM), parameter);
    if (kdf == NULL) return 0;
    int ok = pinion_read_count(kdf->iter, iterations);
    PBKDF2PARAM_free(kdf);
    return ok;
}

static int pinion_scrypt_cost(const ASN1_TYPE *parameter, uint64_t *n, uint64_t *r, uint64_t *p) {
#ifndef OPENSSL_NO_SCRYPT
    SCRYPT_PARAMS *kdf = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(SCRYPT_PARAMS), parameter);
    if (kdf == NULL) return 0;
    int ok = pinion_read_count(kdf->costParameter, n) && pinion_read_count(kdf->blockSize, r)
             && pinion_read_count(kdf->parallelizationParameter, p);
    SCRYPT_PARAMS_free(kdf);
    return ok;
#else
    (void)parameter;
    (void)n;
    (void)r;
    (void)p;
    return 0;
#endif
}

static int pinion_pkcs8_kdf_cost_unmarked(const X509_SIG *sig, int *kind, uint64_t *iterations,
                                          uint64_t *scrypt_n, uint64_t *scrypt_r, uint64_t *scrypt_p) {
    const X509_ALGOR *algorithm = NULL;
    X509_SIG_get0(sig, &algorithm, NULL);
    if (algorithm == NULL) return 0;
    const ASN1_TYPE *parameter = algorithm->parameter;
    // The same dispatch as EVP_PBE_CipherInit_ex: the outer algorithm picks the key
    // generator; PBES2 then picks its KDF from EVP_PBE_TYPE_KDF (PBKDF2 or scrypt only).
    int outer = OBJ_obj2nid(algorithm->algorithm);
    if (outer == NID_pbes2) {
        PBE2PARAM *pbe2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM), parameter);
        if (pbe2 == NULL || pbe2->keyfunc == NULL) {
            PBE2PARAM_free(pbe2);
            return 0;
        }
        int ok = 1;
        switch (OBJ_obj2nid(pbe2->keyfunc->algorithm)) {
        case NID_id_pbkdf2:
            *kind = PINION_KDF_PBKDF2;
            ok = pinion_pbkdf2_cost(pbe2->keyfunc->parameter, iterations);
            break;
        case NID_id_scrypt:
            *kind = PINION_KDF_SCRYPT;
            ok = pinion_scrypt_cost(pbe2->keyfunc->parameter, scrypt_n, scrypt_r, scrypt_p);
            break;
        default:
            break;
        }
        PBE2PARAM_free(pbe2);
        return ok;
    }
    if (outer == NID_id_pbkdf2) {
        *kind = PINION_KDF_PBKDF2;
        return pinion_pbkdf2_cost(parameter, iterations);
    }
    if (outer != NID_undef && EVP_PBE_find(EVP_PBE_TYPE_OUTER, outer, NULL, NULL, NULL) == 1) {
        // Every other built-in outer scheme (PKCS#5 v1.5, PKCS#12) reads PBEParameter.
        PBEPARAM *pbe = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBEPARAM), parameter);
        if (pbe == NULL) return 0;
        *kind = PINION_KDF_PBES1;
        int ok = pinion_read_count(pbe->iter, iterations);
        PBEPARAM_free(pbe);
        return ok;
    }
    return 1;
}

int pinion_pkcs8_kdf_cost(const X509_SIG *sig, int *kind, uint64_t *iterations, uint64_t *scrypt_n,
                          uint64_t *scrypt_r, uint64_t *scrypt_p) {
    *kind = PINION_KDF_UNKNOWN;
    *iterations = 0;
    *scrypt_n = 0;
    *scrypt_r = 0;
    *scrypt_p = 0;
    if (sig == NULL) return 0;
    ERR_set_mark();
    int ok = pinion_pkcs8_kdf_cost_unmarked(sig, kind, iterations, scrypt_n, scrypt_r, scrypt_p);
    ERR_pop_to_mark();
    return ok;
}
