// Owners for OpenSSL objects: each allocated object is held by one small class that frees it
// in `deinit`, so no call site pairs an allocation with a hand-written `*_free` (a missed or
// doubled free on one error path is the bug this rules out). The pointer is lent out only
// inside `withPointer`, which keeps the owner alive for the whole use.

import COpenSSL

/// An OpenSSL object type an `OpenSSLObject` can own: the function that frees one.
package protocol OpenSSLObjectKind {
    /// The type's `*_free` function (for example `X509_free`).
    static func free(_ pointer: OpaquePointer)
}

/// An OpenSSL object type with a reference count, so an owner can share an object that
/// someone else also holds (`*_up_ref` on the way in, `*_free` in `deinit`).
package protocol OpenSSLSharedKind: OpenSSLObjectKind {
    /// The type's `*_up_ref` function; false when OpenSSL could not count the reference.
    static func upRef(_ pointer: OpaquePointer) -> Bool
}

/// One reference to an OpenSSL object, released (`Kind.free`) when the owner goes away.
///
/// Make one from the allocating call (`OpenSSLObject<X509Kind>(taking: d2i_X509(...))`);
/// for a borrowed (`get0`) pointer of a reference-counted type use `init(sharing:)`, which
/// takes a reference of its own. Do not wrap a pointer whose ownership passed elsewhere
/// (`SSL_set_bio`, `PKCS8_pkey_set0`, `*_set0_*`).
package final class OpenSSLObject<Kind: OpenSSLObjectKind> {
    /// The object; valid while this owner is alive. Read through `withPointer`, or through
    /// an owner held in a stored property of an object that outlives the use.
    package let pointer: OpaquePointer

    /// Takes over the reference an allocating call returned.
    ///
    /// - Parameter pointer: the result of `*_new`, `d2i_*`, `PEM_read_*` or `get1`; nil
    ///   (the call failed) makes the initializer fail, with nothing to free.
    package init?(taking pointer: OpaquePointer?) {
        guard let pointer else { return nil }
        self.pointer = pointer
    }

    /// Takes an additional reference to an object someone else holds (`*_up_ref`).
    ///
    /// - Parameter pointer: a borrowed (`get0`) pointer; the caller's reference stays its own.
    /// - Returns: nil when OpenSSL could not count the reference.
    package init?(sharing pointer: OpaquePointer) where Kind: OpenSSLSharedKind {
        guard Kind.upRef(pointer) else { return nil }
        self.pointer = pointer
    }

    deinit { Kind.free(pointer) }

    /// Calls `body` with the object; the object stays alive until `body` returns, so
    /// pointers it lends (`get0`) may be used inside `body` but must not escape it.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    package func withPointer<R, E: Error>(_ body: (OpaquePointer) throws(E) -> R) throws(E) -> R {
        try withExtendedLifetime(self) { () throws(E) -> R in try body(pointer) }
    }
}

/// `X509`, a certificate.
package enum X509Kind: OpenSSLSharedKind {
    package static func free(_ pointer: OpaquePointer) { X509_free(pointer) }
    package static func upRef(_ pointer: OpaquePointer) -> Bool { X509_up_ref(pointer) == 1 }
}

/// `X509_REQ`, a certificate signing request (PKCS #10).
package enum X509RequestKind: OpenSSLObjectKind {
    package static func free(_ pointer: OpaquePointer) { X509_REQ_free(pointer) }
}

/// `X509_PUBKEY`, a decoded SubjectPublicKeyInfo.
package enum X509PublicKeyKind: OpenSSLObjectKind {
    package static func free(_ pointer: OpaquePointer) { X509_PUBKEY_free(pointer) }
}

/// `X509_SIG`, an EncryptedPrivateKeyInfo (PKCS #8).
package enum X509SigKind: OpenSSLObjectKind {
    package static func free(_ pointer: OpaquePointer) { X509_SIG_free(pointer) }
}

/// `PKCS8_PRIV_KEY_INFO`, a PrivateKeyInfo (PKCS #8); its free wipes the key bytes.
package enum PrivateKeyInfoKind: OpenSSLObjectKind {
    package static func free(_ pointer: OpaquePointer) { PKCS8_PRIV_KEY_INFO_free(pointer) }
}

/// `EVP_PKEY`, a public or private key; its free wipes private key material.
package enum EVPKeyKind: OpenSSLSharedKind {
    package static func free(_ pointer: OpaquePointer) { EVP_PKEY_free(pointer) }
    package static func upRef(_ pointer: OpaquePointer) -> Bool { EVP_PKEY_up_ref(pointer) == 1 }
}

/// `BIO`, an I/O abstraction (here memory buffers); a secure-heap memory BIO's free wipes it.
package enum BIOKind: OpenSSLSharedKind {
    package static func free(_ pointer: OpaquePointer) { BIO_free(pointer) }
    package static func upRef(_ pointer: OpaquePointer) -> Bool { BIO_up_ref(pointer) == 1 }
}

/// `SSL_CTX`, a TLS context (settings and trust shared by connections).
package enum SSLContextKind: OpenSSLSharedKind {
    package static func free(_ pointer: OpaquePointer) { SSL_CTX_free(pointer) }
    package static func upRef(_ pointer: OpaquePointer) -> Bool { SSL_CTX_up_ref(pointer) == 1 }
}

/// `SSL`, one TLS connection; it holds a reference to its `SSL_CTX` and owns the BIOs
/// given to it (`SSL_set_fd`, `SSL_set_bio`).
package enum SSLKind: OpenSSLSharedKind {
    package static func free(_ pointer: OpaquePointer) { SSL_free(pointer) }
    package static func upRef(_ pointer: OpaquePointer) -> Bool { SSL_up_ref(pointer) == 1 }
}

/// An owned certificate (`X509 *`).
package typealias OwnedX509 = OpenSSLObject<X509Kind>
/// An owned key (`EVP_PKEY *`).
package typealias OwnedEVPKey = OpenSSLObject<EVPKeyKind>
/// An owned I/O buffer (`BIO *`).
package typealias OwnedBIO = OpenSSLObject<BIOKind>
/// An owned TLS context (`SSL_CTX *`).
package typealias OwnedSSLContext = OpenSSLObject<SSLContextKind>
/// An owned TLS connection (`SSL *`).
package typealias OwnedSSL = OpenSSLObject<SSLKind>
