#include "pinion_shims_https.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

int pinion_https_configure_context(SSL_CTX *ctx) {
    if (ctx == NULL) return 0;
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    return 1;
}

int pinion_https_is_unexpected_eof(unsigned long code) {
    return ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

/// Per-BIO state: the descriptor and whether recv(2) has reported end of stream (BIO_eof,
/// which OpenSSL consults to tell a peer's plain close from a transport error).
struct pinion_https_socket {
    int fd;
    int eof;
};

static int pinion_https_write(BIO *bio, const char *data, int length) {
    struct pinion_https_socket *state = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    if (state == NULL || data == NULL || length < 0) return -1;
    ssize_t written;
    do {
        written = send(state->fd, data, (size_t)length, MSG_NOSIGNAL);
    } while (written < 0 && errno == EINTR);
    if (written >= 0) return (int)written;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    return -1;
}

static int pinion_https_read(BIO *bio, char *data, int length) {
    struct pinion_https_socket *state = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    if (state == NULL || data == NULL || length < 0) return -1;
    ssize_t received;
    do {
        received = recv(state->fd, data, (size_t)length, 0);
    } while (received < 0 && errno == EINTR);
    if (received > 0) return (int)received;
    if (received == 0) {
        if (length > 0) state->eof = 1;
        return 0;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
    return -1;
}

static long pinion_https_ctrl(BIO *bio, int command, long number, void *pointer) {
    (void)number;
    struct pinion_https_socket *state = BIO_get_data(bio);
    switch (command) {
    case BIO_CTRL_FLUSH:
        return 1;
    case BIO_CTRL_EOF:
        return state != NULL && state->eof;
    case BIO_C_GET_FD:
        if (state == NULL) return -1;
        if (pointer != NULL) *(int *)pointer = state->fd;
        return state->fd;
    default:
        return 0;
    }
}

static int pinion_https_destroy(BIO *bio) {
    if (bio == NULL) return 0;
    OPENSSL_free(BIO_get_data(bio));
    BIO_set_data(bio, NULL);
    BIO_set_init(bio, 0);
    return 1;
}

static BIO_METHOD *pinion_https_method = NULL;
static pthread_once_t pinion_https_method_once = PTHREAD_ONCE_INIT;

static void pinion_https_make_method(void) {
    int index = BIO_get_new_index();
    if (index == -1) return;
    BIO_METHOD *method =
        BIO_meth_new(index | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "pinion socket (MSG_NOSIGNAL)");
    if (method == NULL) return;
    if (BIO_meth_set_write(method, pinion_https_write) != 1 || BIO_meth_set_read(method, pinion_https_read) != 1
        || BIO_meth_set_ctrl(method, pinion_https_ctrl) != 1
        || BIO_meth_set_destroy(method, pinion_https_destroy) != 1) {
        BIO_meth_free(method);
        return;
    }
    // Kept for the life of the process: every pinned connection uses it.
    pinion_https_method = method;
}

int pinion_https_set_socket(SSL *ssl, int fd) {
    if (ssl == NULL || fd < 0) return 0;
    if (pthread_once(&pinion_https_method_once, pinion_https_make_method) != 0) return 0;
    if (pinion_https_method == NULL) return 0;
    struct pinion_https_socket *state = OPENSSL_zalloc(sizeof(*state));
    if (state == NULL) return 0;
    state->fd = fd;
    BIO *bio = BIO_new(pinion_https_method);
    if (bio == NULL) {
        OPENSSL_free(state);
        return 0;
    }
    BIO_set_data(bio, state);
    BIO_set_init(bio, 1);
    // One BIO for both directions: SSL_set_bio takes the single reference.
    SSL_set_bio(ssl, bio, bio);
    return 1;
}
