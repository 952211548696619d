// Shims used by the pinned HTTPS client (PinionLinux/PinnedHTTPSClient.swift).
#ifndef PINION_SHIMS_HTTPS_H
#define PINION_SHIMS_HTTPS_H
#include <openssl/err.h>
#include <openssl/ssl.h>

/// Context settings of the pinned client that Swift cannot reach because they are macros:
/// no session tickets and no client session cache (a resumed session has no verified chain,
/// docs/DESIGN.md §8.3), no TLS compression, no renegotiation. Returns 1 on success.
int pinion_https_configure_context(SSL_CTX *ctx);

/// Attaches a socket BIO for the connected descriptor `fd` to `ssl` (for reading and
/// writing). It reads with recv(2) and writes with send(2) and MSG_NOSIGNAL, so a peer that
/// closes early gives EPIPE instead of SIGPIPE whatever the process's signal disposition.
/// The descriptor stays owned by the caller (not closed when `ssl` is freed). Returns 1 on
/// success, 0 on allocation failure.
int pinion_https_set_socket(SSL *ssl, int fd);

/// 1 when `code` (an ERR_get_error value) says the peer closed the connection without a
/// TLS close_notify (SSL_R_UNEXPECTED_EOF_WHILE_READING), else 0.
int pinion_https_is_unexpected_eof(unsigned long code);
#endif
