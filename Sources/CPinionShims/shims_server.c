#define _GNU_SOURCE
#include "pinion_shims_server.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/// Refuses to decrypt a key file: a server must not stop at start-up (or on SIGHUP) to
/// prompt on a terminal for a passphrase.
static int pinion_server_no_passphrase(char *buffer, int size, int rwflag, void *userdata) {
    (void)buffer;
    (void)size;
    (void)rwflag;
    (void)userdata;
    return -1;
}

/// Chooses "http/1.1" when the client offers it; otherwise no ALPN (the client may go on
/// with HTTP/1.1 or give up). Never selects h2, which the server does not speak.
static int pinion_server_select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                     const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    static const unsigned char http11[] = "http/1.1";
    unsigned int offset = 0;
    while (offset < inlen) {
        unsigned int length = in[offset];
        if (length == 0 || offset + 1 + length > inlen) return SSL_TLSEXT_ERR_NOACK;
        if (length == 8 && memcmp(in + offset + 1, http11, 8) == 0) {
            *out = in + offset + 1;
            *outlen = (unsigned char)length;
            return SSL_TLSEXT_ERR_OK;
        }
        offset += 1 + length;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

int pinion_server_configure_context(SSL_CTX *ctx) {
    if (ctx == NULL) return 0;
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    if (SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1) return 0;
    // No session tickets: their key would live for the whole run (until a reload) and
    // weaken forward secrecy; resumption uses the server's session cache instead.
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                 SSL_OP_NO_TICKET);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    // Read-ahead: OpenSSL fills its read buffer in one recv instead of reading each record's
    // header and body with two; the worker asks SSL_has_pending before it waits for EPOLLIN.
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_passwd_cb(ctx, pinion_server_no_passphrase);
    SSL_CTX_set_alpn_select_cb(ctx, pinion_server_select_alpn, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    return 1;
}

int pinion_server_is_plain_http(unsigned long code) {
    if (ERR_GET_LIB(code) != ERR_LIB_SSL) return 0;
    int reason = ERR_GET_REASON(code);
    return reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST;
}

int pinion_server_accept(int listener, struct sockaddr_storage *address, socklen_t *length) {
    return accept4(listener, (struct sockaddr *)address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static volatile sig_atomic_t pinion_server_signal_fd = -1;

static void pinion_server_signal_handler(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    if (pinion_server_signal_fd >= 0) (void)!write(pinion_server_signal_fd, &byte, 1);
    errno = saved;
}

int pinion_server_route_signals(int write_fd) {
    pinion_server_signal_fd = write_fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = pinion_server_signal_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGHUP, &action, NULL) != 0) return -1;
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    if (sigaction(SIGINT, &action, NULL) != 0) return -1;
    // A parent (a supervisor, a test runner) may have left them blocked; threads started
    // after this inherit the mask, so the signals reach the handler.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0) return -1;
    return 0;
}
