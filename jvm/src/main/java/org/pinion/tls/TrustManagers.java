// The platform X509TrustManager: the system trust store, or the CA certificates of a PEM file.
package org.pinion.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/** Builds the platform trust manager Pinion wraps. */
public final class TrustManagers {
    private TrustManagers() {}

    /**
     * @param caFile a PEM file of CA certificates, or null for the system trust store
     * @return the platform's PKIX trust manager for those anchors
     * @throws IOException when the file cannot be read or holds no certificate
     * @throws GeneralSecurityException when the platform has no PKIX trust manager
     */
    public static X509TrustManager platform(Path caFile) throws IOException, GeneralSecurityException {
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        if (caFile == null) {
            factory.init((KeyStore) null);
        } else {
            byte[] pem = Files.readAllBytes(caFile);
            Collection<? extends Certificate> certificates = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
            if (certificates.isEmpty()) throw new IOException(caFile + ": no certificate");
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate c : certificates) store.setCertificateEntry("ca-" + i++, c);
            factory.init(store);
        }
        for (TrustManager tm : factory.getTrustManagers()) {
            if (tm instanceof X509TrustManager) return (X509TrustManager) tm;
        }
        throw new GeneralSecurityException("no X509TrustManager");
    }
}
