// The OpenSSL owners free their object exactly once, when the owner goes away, and a shared
// owner keeps the object alive after the lender lets go. OpenSSL's ex_data free callback is
// the witness: it runs when the object itself is destroyed, not when a reference is dropped.

import COpenSSL
import Testing

@testable import PinionCrypto

/// Counts the destructions of the objects it is attached to, through an ex_data index whose
/// free callback increments the counter stored in the slot.
private final class DestructionWitness {
    let index: Int32
    private let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)

    /// - Parameter classIndex: the `CRYPTO_EX_INDEX_*` of the object type.
    init(classIndex: Int32) throws {
        counter.initialize(to: 0)
        // The callback runs for every object of the type freed while the index exists; only
        // objects a witness was attached to carry a counter in the slot.
        index = CRYPTO_get_ex_new_index(classIndex, 0, nil, nil, nil) { _, slot, _, _, _, _ in
            slot?.assumingMemoryBound(to: Int.self).pointee += 1
        }
        guard index >= 0 else { throw WitnessError.noIndex }
    }

    deinit { counter.deallocate() }

    /// How many times an attached object was destroyed.
    var destructions: Int { counter.pointee }

    /// Attaches the counter with the type's `*_set_ex_data`.
    func attach(_ set: (Int32, UnsafeMutableRawPointer) -> Int32) throws {
        guard set(index, UnsafeMutableRawPointer(counter)) == 1 else { throw WitnessError.notAttached }
    }

    enum WitnessError: Error { case noIndex, notAttached }
}

@Suite struct OpenSSLObjectTests {
    @Test func certificateOwnerFreesOnceWhenItGoesAway() throws {
        let witness = try DestructionWitness(classIndex: CRYPTO_EX_INDEX_X509)
        var owner = OwnedX509(taking: X509_new())
        let pointer = try #require(owner?.pointer)
        try witness.attach { X509_set_ex_data(pointer, $0, $1) }
        #expect(witness.destructions == 0)
        owner = nil
        #expect(witness.destructions == 1)
    }

    @Test func keyOwnerFreesOnceWhenItGoesAway() throws {
        let witness = try DestructionWitness(classIndex: CRYPTO_EX_INDEX_EVP_PKEY)
        var owner = OwnedEVPKey(taking: EVP_PKEY_new())
        let pointer = try #require(owner?.pointer)
        try witness.attach { EVP_PKEY_set_ex_data(pointer, $0, $1) }
        #expect(witness.destructions == 0)
        owner = nil
        #expect(witness.destructions == 1)
    }

    @Test func bufferOwnerFreesOnceWhenItGoesAway() throws {
        let witness = try DestructionWitness(classIndex: CRYPTO_EX_INDEX_BIO)
        var owner = OwnedBIO(taking: BIO_new(BIO_s_mem()))
        let pointer = try #require(owner?.pointer)
        try witness.attach { BIO_set_ex_data(pointer, $0, $1) }
        #expect(witness.destructions == 0)
        owner = nil
        #expect(witness.destructions == 1)
    }

    /// The probe and the pinned client drop their context owner once the `SSL` exists: the
    /// `SSL`'s own reference must keep the context alive until the `SSL` goes.
    @Test func connectionOwnerFreesOnceAndKeepsItsContextAlive() throws {
        let contextWitness = try DestructionWitness(classIndex: CRYPTO_EX_INDEX_SSL_CTX)
        let connectionWitness = try DestructionWitness(classIndex: CRYPTO_EX_INDEX_SSL)
        var context = OwnedSSLContext(taking: SSL_CTX_new(TLS_client_method()))
        let contextPointer = try #require(context?.pointer)
        try contextWitness.attach { SSL_CTX_set_ex_data(contextPointer, $0, $1) }
        var connection = try #require(context).withPointer { OwnedSSL(taking: SSL_new($0)) }
        let connectionPointer = try #require(connection?.pointer)
        try connectionWitness.attach { SSL_set_ex_data(connectionPointer, $0, $1) }

        context = nil
        #expect(contextWitness.destructions == 0, "the SSL holds its own reference to the context")
        connection = nil
        #expect(connectionWitness.destructions == 1)
        #expect(contextWitness.destructions == 1)
    }

    @Test func sharedOwnerKeepsTheObjectAliveAfterTheLenderFreesIt() throws {
        let witness = try DestructionWitness(classIndex: CRYPTO_EX_INDEX_X509)
        let lent = try #require(X509_new())
        try witness.attach { X509_set_ex_data(lent, $0, $1) }
        var owner = OwnedX509(sharing: lent)
        #expect(owner != nil)
        X509_free(lent)
        #expect(witness.destructions == 0, "the shared owner holds its own reference")
        owner = nil
        #expect(witness.destructions == 1)
    }

    @Test func failedAllocationMakesNoOwner() {
        #expect(OwnedX509(taking: nil) == nil)
    }
}
