// LD_PRELOAD shim for wrk: drops the TLS session before wrk reuses its SSL object for the
// next connection (wrk calls SSL_clear), so every "Connection: close" request is a full
// handshake against any server, whatever its session cache or ticket settings.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <openssl/ssl.h>

int SSL_clear(SSL *ssl) {
    static int (*real_clear)(SSL *) = NULL;
    if (real_clear == NULL) real_clear = (int (*)(SSL *))dlsym(RTLD_NEXT, "SSL_clear");
    SSL_set_session(ssl, NULL);
    return real_clear(ssl);
}
