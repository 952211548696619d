// HostNames against OkHttp's host-name verifier as the oracle, over certificates openssl makes.
package org.pinion.tls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import okhttp3.internal.tls.OkHostnameVerifier;
import org.junit.BeforeClass;
import org.junit.Test;

public class HostNamesTest {
    private static final String[] SANS = {
        "DNS:api.example.test,DNS:*.wild.example.test,IP:127.0.0.1,IP:10.0.0.1,IP:0:0:0:0:0:0:0:1",
        "DNS:*.example.test",
        "DNS:API.Example.TEST.",
        "DNS:*,DNS:*.test,DNS:a*.example.test,DNS:*.*.example.test,DNS:.example.test",
        "DNS:foo.example.test,DNS:xn--bcher-kva.example.test",
    };
    private static final String[] HOSTS = {
        "api.example.test", "API.EXAMPLE.TEST", "api.example.test.", "api.example.test..", ".api.example.test",
        "sub.api.example.test", "example.test", "wild.example.test", "a.wild.example.test", "a.b.wild.example.test",
        "*.wild.example.test", "x.example.test", "ab.example.test", "a.b.example.test", "test", "a.test", "foo.test",
        "foo.example.test", "xn--bcher-kva.example.test", "127.0.0.1", "127.0.0.2", "10.0.0.1",
        "0:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:2", "", "example.test.", "FOO.EXAMPLE.TEST.",
    };
    private static final List<X509Certificate> certs = new ArrayList<>();

    @BeforeClass
    public static void makeCertificates() throws Exception {
        Path dir = Files.createTempDirectory("pinion-hostnames");
        TestPki pki = new TestPki(dir);
        for (int i = 0; i < SANS.length; i++) {
            pki.run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "h" + i + ".key",
                    "-out", "h" + i + ".pem", "-days", "30", "-subj", "/CN=api.example.test", "-addext", "subjectAltName=" + SANS[i]);
            try (InputStream in = Files.newInputStream(dir.resolve("h" + i + ".pem"))) {
                certs.add((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
            }
        }
    }

    @Test
    public void agreesWithOkHttpsVerifierOnEveryCase() {
        int matches = 0;
        for (X509Certificate cert : certs) {
            for (String host : HOSTS) {
                boolean expected = OkHostnameVerifier.INSTANCE.verify(host, cert);
                assertEquals(host + " against " + cert.getSubjectX500Principal() + " " + cert.getSerialNumber(), expected, HostNames.matches(host, cert));
                if (expected) matches++;
            }
        }
        assertTrue("the cases include matches", matches >= 8);
    }

    @Test
    public void neverFallsBackToTheCommonName() throws Exception {
        // Every certificate's CN is api.example.test; the ones without that SAN refuse it.
        assertFalse(HostNames.matches("api.example.test", certs.get(4)));
    }

    @Test
    public void comparesIpv6LiteralsAsAddressesNotStrings() {
        // OkHttp 3.13 compares the strings, so "::1" misses the SAN Java prints as 0:0:0:0:0:0:0:1.
        assertFalse(OkHostnameVerifier.INSTANCE.verify("::1", certs.get(0)));
        assertTrue(HostNames.matches("::1", certs.get(0)));
        assertFalse(HostNames.matches("::2", certs.get(0)));
    }

    @Test
    public void refusesIpv4FormsThatAreNotDottedQuads() {
        assertFalse(HostNames.matches("127.1", certs.get(0)));
        assertFalse(HostNames.matches("2130706433", certs.get(0)));
        assertFalse(HostNames.matches("127.000.0.1", certs.get(0)));
        assertFalse(HostNames.matches("0127.0.0.1", certs.get(0)));
        assertFalse(HostNames.matches("999.0.0.1", certs.get(0)));
    }

    @Test
    public void refusesNullAndNonAsciiHosts() {
        assertFalse(HostNames.matches(null, certs.get(0)));
        // OkHttp 3.13 lets a wildcard cover a non-ASCII label; a host reaches TLS as A-labels, so it is refused here.
        assertTrue(OkHostnameVerifier.INSTANCE.verify("bücher.example.test", certs.get(1)));
        assertFalse(HostNames.matches("bücher.example.test", certs.get(1)));
        assertFalse(HostNames.matches("bücher.example.test", certs.get(4)));
        assertFalse(HostNames.matches("api.example.test", null));
    }
}
