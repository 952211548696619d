// Shims used by the publisher's HTTPS server (PinionPublisher/TLSContext.swift).
#ifndef PINION_SHIMS_SERVER_H
#define PINION_SHIMS_SERVER_H
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/// Settings of the publisher's server context that Swift cannot reach because they are
/// macros or need a C callback: TLS 1.2 as the lowest version (TLS 1.3 the highest), no
/// renegotiation, no TLS compression, no session tickets, partial writes with a moving write buffer, read and
/// write buffers released while a connection is idle (bounded memory per connection), read-ahead, ALPN
/// answered with "http/1.1" only, and no passphrase prompt for an encrypted key file (it is
/// refused instead). Returns 1 on success, 0 on failure.
int pinion_server_configure_context(SSL_CTX *ctx);

/// 1 when `code` (an ERR_get_error value) says a plain HTTP request reached the TLS port
/// (SSL_R_HTTP_REQUEST or SSL_R_HTTPS_PROXY_REQUEST), else 0.
int pinion_server_is_plain_http(unsigned long code);

/// accept4(2) with SOCK_NONBLOCK and SOCK_CLOEXEC (a GNU extension Swift's Glibc module
/// does not export). Returns the descriptor or -1 with errno set.
int pinion_server_accept(int listener, struct sockaddr_storage *address, socklen_t *length);

/// Routes SIGHUP, SIGTERM and SIGINT to a pipe: the handler writes the signal number as
/// one byte to `write_fd` (async-signal-safe), so any thread may receive the signal and
/// the main thread reads which one arrived. Also unblocks them in the calling thread (and
/// so in threads it starts later). Returns 0, or -1 with errno set.
int pinion_server_route_signals(int write_fd);
#endif
