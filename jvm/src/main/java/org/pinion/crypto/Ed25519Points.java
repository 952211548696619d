// Ed25519 point checks libsodium makes and BouncyCastle/JDK do not: canonical y, small order, prime-order subgroup.
//
// Written here because no Debian-packaged Java library exposes these checks: BouncyCastle's
// rfc8032.Ed25519 keeps point decoding private and accepts small-order keys and R. Plain
// twisted-Edwards arithmetic with BigInteger in extended coordinates (RFC 8032 §5.1.4): slow next
// to native code but simple, and only run on public keys and R values, never on secrets.
package org.pinion.crypto;

import java.math.BigInteger;

/** Checks on 32-byte Ed25519 point encodings (RFC 8032 §5.1.3). */
final class Ed25519Points {
    static final BigInteger P = BigInteger.valueOf(2).pow(255).subtract(BigInteger.valueOf(19));
    static final BigInteger L = BigInteger.valueOf(2).pow(252).add(new BigInteger("27742317777372353535851937790883648493"));
    private static final BigInteger D = BigInteger.valueOf(-121665).multiply(BigInteger.valueOf(121666).modInverse(P)).mod(P);
    private static final BigInteger SQRT_M1 = BigInteger.valueOf(2).modPow(P.subtract(BigInteger.ONE).shiftRight(2), P);

    private Ed25519Points() {}

    /** @param encoding 32 bytes, little endian @return y (top bit cleared) */
    static BigInteger y(byte[] encoding) {
        byte[] be = new byte[32];
        for (int i = 0; i < 32; i++) be[i] = encoding[31 - i];
        be[0] &= 0x7f;
        return new BigInteger(1, be);
    }

    /** @param encoding 32 bytes @return whether y < p (the sign bit is not part of the test, as in libsodium) */
    static boolean isCanonical(byte[] encoding) { return y(encoding).compareTo(P) < 0; }

    /** @param encoding 32 bytes, little endian scalar @return whether it is below L */
    static boolean isCanonicalScalar(byte[] encoding) {
        byte[] be = new byte[32];
        for (int i = 0; i < 32; i++) be[i] = encoding[31 - i];
        return new BigInteger(1, be).compareTo(L) < 0;
    }

    /**
     * @param encoding 32 bytes with y < p
     * @return the affine point {x, y}, or null when y is not the y of a curve point (or x = 0 with
     *     the sign bit set)
     */
    static BigInteger[] decode(byte[] encoding) {
        BigInteger y = y(encoding);
        if (y.compareTo(P) >= 0) return null;
        boolean sign = (encoding[31] & 0x80) != 0;
        BigInteger y2 = y.multiply(y).mod(P);
        BigInteger u = y2.subtract(BigInteger.ONE).mod(P);
        BigInteger v = D.multiply(y2).add(BigInteger.ONE).mod(P);
        BigInteger x2 = u.multiply(v.modInverse(P)).mod(P);
        BigInteger x = x2.modPow(P.add(BigInteger.valueOf(3)).shiftRight(3), P);
        if (!x.multiply(x).mod(P).equals(x2)) x = x.multiply(SQRT_M1).mod(P);
        if (!x.multiply(x).mod(P).equals(x2)) return null;
        if (x.signum() == 0 && sign) return null;
        if (x.testBit(0) != sign) x = P.subtract(x).mod(P);
        return new BigInteger[] {x, y};
    }

    private static final BigInteger D2 = D.shiftLeft(1).mod(P);

    /** Unified addition in extended coordinates (X:Y:Z:T), complete for a = -1 (HWCD 2008, add-2008-hwcd-3). */
    static BigInteger[] add(BigInteger[] a, BigInteger[] b) {
        BigInteger pa = a[1].subtract(a[0]).multiply(b[1].subtract(b[0])).mod(P);
        BigInteger pb = a[1].add(a[0]).multiply(b[1].add(b[0])).mod(P);
        BigInteger pc = a[3].multiply(D2).multiply(b[3]).mod(P);
        BigInteger pd = a[2].shiftLeft(1).multiply(b[2]).mod(P);
        BigInteger e = pb.subtract(pa);
        BigInteger f = pd.subtract(pc);
        BigInteger g = pd.add(pc);
        BigInteger h = pb.add(pa);
        return new BigInteger[] {e.multiply(f).mod(P), g.multiply(h).mod(P), f.multiply(g).mod(P), e.multiply(h).mod(P)};
    }

    static BigInteger[] multiply(BigInteger[] point, BigInteger scalar) {
        BigInteger[] extended = {point[0], point[1], BigInteger.ONE, point[0].multiply(point[1]).mod(P)};
        BigInteger[] result = {BigInteger.ZERO, BigInteger.ONE, BigInteger.ONE, BigInteger.ZERO};
        for (int i = scalar.bitLength() - 1; i >= 0; i--) {
            result = add(result, result);
            if (scalar.testBit(i)) result = add(result, extended);
        }
        return result;
    }

    static boolean isIdentity(BigInteger[] point) { return point[0].signum() == 0 && point[1].equals(point[2]); }

    /** @param point a decoded point @return whether [8]point is the identity (order 1, 2, 4 or 8) */
    static boolean hasSmallOrder(BigInteger[] point) { return isIdentity(multiply(point, BigInteger.valueOf(8))); }

    /** @param point a decoded point @return whether [L]point is the identity */
    static boolean inPrimeOrderSubgroup(BigInteger[] point) { return isIdentity(multiply(point, L)); }
}
