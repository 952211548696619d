/* Test-only PKCS#11 module: forwards every call to SoftHSM2 (dlopen) and injects the
 * faults named in the file "<this library's path>.faults" (read at C_Initialize), so
 * tests can make a token refuse, lie or vanish. Each call it sees is appended to
 * "<this library's path>.log" (one function name per line).
 *
 * Faults, one per line:
 *   pin-incorrect          C_Login answers CKR_PIN_INCORRECT
 *   flags=N                OR these CKF_* bits into every C_GetTokenInfo answer (decimal)
 *   flags-after-login=N    the same, only after a failed C_Login
 *   sign-removed           C_Sign answers CKR_DEVICE_REMOVED
 *   max-message=N          C_Sign answers CKR_DATA_LEN_RANGE above N bytes
 *   sign-flip              one bit of the signature flipped
 *   sign-length=N          C_Sign reports N bytes written
 *   ec-point-length=N      C_GetAttributeValue reports N bytes for CKA_EC_POINT
 *   ec-point=short|raw|bad-point|garbage-der
 *                          CKA_EC_POINT replaced: 31 bytes; the raw 32-byte point (valid);
 *                          an OCTET STRING of a small-order point; 34 bytes not a DER OCTET STRING
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <p11-kit/pkcs11.h>

#ifndef SOFTHSM_PATH
#define SOFTHSM_PATH "/usr/lib/softhsm/libsofthsm2.so"
#endif

static CK_FUNCTION_LIST *real;
static CK_FUNCTION_LIST wrapped;
static char self_path[4096];
static int pin_incorrect, sign_removed, sign_flip, login_failed;
static unsigned long extra_flags, flags_after_login, max_message, sign_length, ec_point_length;
static char ec_point[32];

static void note(const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s.log", self_path);
    FILE *log = fopen(path, "a");
    if (log) { fprintf(log, "%s\n", name); fclose(log); }
}

static void read_faults(void) {
    char path[4200], line[256];
    pin_incorrect = sign_removed = sign_flip = login_failed = 0;
    extra_flags = flags_after_login = max_message = sign_length = ec_point_length = 0;
    ec_point[0] = 0;
    snprintf(path, sizeof path, "%s.faults", self_path);
    FILE *file = fopen(path, "r");
    if (!file) return;
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!strcmp(line, "pin-incorrect")) pin_incorrect = 1;
        else if (!strcmp(line, "sign-removed")) sign_removed = 1;
        else if (!strcmp(line, "sign-flip")) sign_flip = 1;
        else if (!strncmp(line, "flags=", 6)) extra_flags = strtoul(line + 6, NULL, 10);
        else if (!strncmp(line, "flags-after-login=", 18)) flags_after_login = strtoul(line + 18, NULL, 10);
        else if (!strncmp(line, "max-message=", 12)) max_message = strtoul(line + 12, NULL, 10);
        else if (!strncmp(line, "sign-length=", 12)) sign_length = strtoul(line + 12, NULL, 10);
        else if (!strncmp(line, "ec-point-length=", 16)) ec_point_length = strtoul(line + 16, NULL, 10);
        else if (!strncmp(line, "ec-point=", 9)) snprintf(ec_point, sizeof ec_point, "%s", line + 9);
    }
    fclose(file);
}

static CK_RV w_Initialize(void *args) { note("C_Initialize"); read_faults(); return real->C_Initialize(args); }
static CK_RV w_Finalize(void *reserved) { note("C_Finalize"); return real->C_Finalize(reserved); }

static CK_RV w_GetTokenInfo(CK_SLOT_ID slot, CK_TOKEN_INFO *info) {
    CK_RV rv = real->C_GetTokenInfo(slot, info);
    if (rv == CKR_OK) {
        info->flags |= extra_flags;
        if (login_failed) info->flags |= flags_after_login;
    }
    return rv;
}

static CK_RV w_Login(CK_SESSION_HANDLE session, CK_USER_TYPE type, unsigned char *pin, unsigned long len) {
    note("C_Login");
    if (pin_incorrect) { login_failed = 1; return CKR_PIN_INCORRECT; }
    return real->C_Login(session, type, pin, len);
}

static CK_RV w_Sign(CK_SESSION_HANDLE session, unsigned char *data, unsigned long len, unsigned char *sig,
                    unsigned long *sig_len) {
    note("C_Sign");
    if (sign_removed) return CKR_DEVICE_REMOVED;
    if (max_message && len > max_message) return CKR_DATA_LEN_RANGE;
    CK_RV rv = real->C_Sign(session, data, len, sig, sig_len);
    if (rv != CKR_OK || !sig) return rv;
    if (sign_flip && *sig_len > 0) sig[*sig_len - 1] ^= 0x01;
    if (sign_length) *sig_len = sign_length;
    return rv;
}

/* Pinion asks one attribute at a time, so only a one-attribute CKA_EC_POINT request is
   rewritten: the real value is read into a local buffer, then replaced. */
static CK_RV w_GetAttributeValue(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ATTRIBUTE *templ,
                                 unsigned long count) {
    if (count != 1 || templ[0].type != CKA_EC_POINT || (!ec_point_length && !ec_point[0]))
        return real->C_GetAttributeValue(session, object, templ, count);
    unsigned char value[128];
    CK_ATTRIBUTE own = {CKA_EC_POINT, value, sizeof value};
    CK_RV rv = real->C_GetAttributeValue(session, object, &own, 1);
    if (rv != CKR_OK) return rv;
    if (ec_point_length) { templ[0].ulValueLen = ec_point_length; return CKR_OK; }
    unsigned char replacement[64];
    unsigned long size = 0;
    if (!strcmp(ec_point, "short")) { memset(replacement, 0x42, 31); size = 31; }
    else if (!strcmp(ec_point, "garbage-der")) { memset(replacement, 0x30, 34); size = 34; }
    else if (!strcmp(ec_point, "bad-point")) {
        /* the identity point (small order): 0x01 followed by zeros, in an OCTET STRING */
        memset(replacement, 0, 34); replacement[0] = 0x04; replacement[1] = 0x20; replacement[2] = 0x01; size = 34;
    } else if (!strcmp(ec_point, "raw") && own.ulValueLen == 34) { memcpy(replacement, value + 2, 32); size = 32; }
    else { memcpy(replacement, value, own.ulValueLen); size = own.ulValueLen; }
    if (templ[0].pValue) {
        if (templ[0].ulValueLen < size) return CKR_BUFFER_TOO_SMALL;
        memcpy(templ[0].pValue, replacement, size);
    }
    templ[0].ulValueLen = size;
    return CKR_OK;
}

CK_RV C_GetFunctionList(CK_FUNCTION_LIST **list) {
    if (!real) {
        Dl_info info;
        /* A static function: the address of an exported one may resolve to another
         library's C_GetFunctionList already in the global scope (libp11-kit). */
        if (!dladdr((void *)note, &info) || !info.dli_fname) return CKR_GENERAL_ERROR;
        snprintf(self_path, sizeof self_path, "%s", info.dli_fname);
        void *handle = dlopen(SOFTHSM_PATH, RTLD_NOW | RTLD_LOCAL);
        if (!handle) return CKR_GENERAL_ERROR;
        CK_RV (*get)(CK_FUNCTION_LIST **) = (CK_RV(*)(CK_FUNCTION_LIST **))dlsym(handle, "C_GetFunctionList");
        if (!get || get(&real) != CKR_OK) return CKR_GENERAL_ERROR;
        wrapped = *real;
        wrapped.C_Initialize = w_Initialize;
        wrapped.C_Finalize = w_Finalize;
        wrapped.C_GetTokenInfo = w_GetTokenInfo;
        wrapped.C_Login = w_Login;
        wrapped.C_Sign = w_Sign;
        wrapped.C_GetAttributeValue = w_GetAttributeValue;
    }
    *list = &wrapped;
    return CKR_OK;
}
