// Builds the VERIFIED certificate path with PKIX CertPathBuilder, never trusting the chain as the server sent it.
package org.pinion.tls;

import java.security.InvalidAlgorithmParameterException;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertPathBuilder;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertStore;
import java.security.cert.CertificateException;
import java.security.cert.CollectionCertStoreParameters;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.PKIXCertPathBuilderResult;
import java.security.cert.TrustAnchor;
import java.security.cert.X509CertSelector;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.pinion.crypto.Sha256;

/** The certificate path from the leaf to a trust anchor, as PKIX (RFC 5280 §6) builds it. */
public final class VerifiedChain {
    private VerifiedChain() {}

    /**
     * @param served the chain the server sent, leaf first
     * @param anchors the trusted CA certificates
     * @param at the validation time
     * @return the verified path, leaf first, ending with the trust anchor's certificate; certificates
     *     the server appended that are not on the path are not in it
     * @throws CertificateException when no path to an anchor exists
     */
    public static List<X509Certificate> build(X509Certificate[] served, X509Certificate[] anchors, java.util.Date at)
            throws CertificateException {
        if (served == null || served.length == 0) throw new CertificateException("the server sent no certificate");
        Set<TrustAnchor> trust = new HashSet<>();
        for (X509Certificate anchor : anchors) trust.add(new TrustAnchor(anchor, null));
        if (trust.isEmpty()) throw new CertificateException("no trust anchors");
        try {
            X509CertSelector target = new X509CertSelector();
            target.setCertificate(served[0]);
            PKIXBuilderParameters parameters = new PKIXBuilderParameters(trust, target);
            parameters.setRevocationEnabled(false);
            parameters.setDate(at);
            parameters.addCertStore(CertStore.getInstance("Collection", new CollectionCertStoreParameters(Arrays.asList(served))));
            PKIXCertPathBuilderResult result = (PKIXCertPathBuilderResult) CertPathBuilder.getInstance("PKIX").build(parameters);
            List<X509Certificate> path = new ArrayList<>();
            for (java.security.cert.Certificate c : result.getCertPath().getCertificates()) path.add((X509Certificate) c);
            X509Certificate anchor = result.getTrustAnchor().getTrustedCert();
            if (anchor != null && (path.isEmpty() || !path.get(path.size() - 1).equals(anchor))) path.add(anchor);
            if (path.isEmpty()) path.add(served[0]);
            return path;
        } catch (CertPathBuilderException | InvalidAlgorithmParameterException | NoSuchAlgorithmException e) {
            throw new CertificateException("no verified path to a trust anchor: " + e.getMessage(), e);
        }
    }

    /** @param chain certificates @return SHA-256 of each certificate's DER SubjectPublicKeyInfo (RFC 7469 §2.4) */
    public static List<byte[]> spkiDigests(List<X509Certificate> chain) {
        List<byte[]> digests = new ArrayList<>();
        for (X509Certificate c : chain) digests.add(Sha256.digest(c.getPublicKey().getEncoded()));
        return digests;
    }
}
