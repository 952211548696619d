// The host-aware checkServerTrusted(chain, authType, host) of both trust managers, called directly and as Android's X509TrustManagerExtensions calls it.
package org.pinion.tls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import android.net.http.X509TrustManagerExtensions;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.tls.OkHttpPinningTest.MutablePolicy;
import org.pinion.trust.PinEvaluation;

public class HostAwareCheckTest {
    static final String HOST = "api.example.test";

    @BeforeClass
    public static void makeCertificates() throws Exception { OkHttpPinningTest.makeCertificates(); }

    @AfterClass
    public static void removeCertificates() throws IOException { OkHttpPinningTest.removeCertificates(); }

    /** One trust manager of each kind, both checking {@code policy}. */
    static List<HostAwareTrustManager> managers(MutablePolicy policy) {
        return Arrays.asList(new PinionTrustManager(OkHttpPinningTest.platform, policy),
                new PinionAndroidTrustManager(OkHttpPinningTest.platform, policy));
    }

    static X509Certificate cert(String name) throws Exception { return OkHttpPinningTest.pki.cert(name); }

    static X509Certificate[] served(String... names) throws Exception {
        X509Certificate[] chain = new X509Certificate[names.length];
        for (int i = 0; i < names.length; i++) chain[i] = cert(names[i]);
        return chain;
    }

    static MutablePolicy pinned(String... certs) throws Exception {
        org.pinion.trust.Pin[] pins = new org.pinion.trust.Pin[certs.length];
        for (int i = 0; i < certs.length; i++) pins[i] = OkHttpPinningTest.pinOf(certs[i]);
        return new MutablePolicy(OkHttpPinningTest.entry(HOST, false, true, pins));
    }

    /** The public three-argument method, looked up as Android's X509TrustManagerExtensions does. */
    static List<X509Certificate> hostAware(HostAwareTrustManager tm, X509Certificate[] chain, String authType, String host)
            throws CertificateException {
        return new X509TrustManagerExtensions(tm).checkServerTrusted(chain, authType, host);
    }

    static String refusal(HostAwareTrustManager tm, X509Certificate[] chain, String authType, String host) {
        try {
            hostAware(tm, chain, authType, host);
        } catch (CertificateException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        fail(tm.getClass().getSimpleName() + " accepted " + Arrays.toString(chain) + " for " + host);
        return null;
    }

    @Test
    public void hostAwareFormIsDeclaredPublicOnEachPublicClass() throws Exception {
        for (Class<?> type : Arrays.<Class<?>>asList(PinionTrustManager.class, PinionAndroidTrustManager.class)) {
            Method method = type.getMethod("checkServerTrusted", X509Certificate[].class, String.class, String.class);
            assertSame("reflection must find the method on the public class itself", type, method.getDeclaringClass());
            assertTrue(Modifier.isPublic(method.getModifiers()) && Modifier.isPublic(type.getModifiers()));
            assertSame(List.class, method.getReturnType());
        }
    }

    @Test
    public void pinnedChainReturnsTheVerifiedChain() throws Exception {
        MutablePolicy policy = pinned("int");
        for (HostAwareTrustManager tm : managers(policy)) {
            List<X509Certificate> verified = hostAware(tm, served("leaf", "int"), "ECDHE_ECDSA", HOST);
            assertEquals(tm.getClass().getSimpleName(), Arrays.asList(cert("leaf"), cert("int"), cert("root")), verified);
            try {
                verified.clear();
                fail("the returned chain is modifiable");
            } catch (UnsupportedOperationException expected) {
                assertEquals(3, verified.size());
            }
        }
        assertEquals(0, policy.failures.size());
    }

    @Test
    public void directCallGivesTheSameChainAsTheReflectiveOne() throws Exception {
        MutablePolicy policy = pinned("leaf");
        PinionTrustManager jvm = new PinionTrustManager(OkHttpPinningTest.platform, policy);
        PinionAndroidTrustManager android = new PinionAndroidTrustManager(OkHttpPinningTest.platform, policy);
        List<X509Certificate> expected = Arrays.asList(cert("leaf"), cert("int"), cert("root"));
        assertEquals(expected, jvm.checkServerTrusted(served("leaf", "int"), "ECDHE_ECDSA", HOST));
        assertEquals(expected, android.checkServerTrusted(served("leaf", "int"), "ECDHE_ECDSA", HOST));
    }

    @Test
    public void hostWithoutPinsGetsTheVerifiedChainAndNoReport() throws Exception {
        MutablePolicy policy = pinned("leaf2");
        for (HostAwareTrustManager tm : managers(policy)) {
            List<X509Certificate> verified = hostAware(tm, served("leaf", "int"), "ECDHE_ECDSA", "report.example.test");
            assertEquals(3, verified.size());
        }
        assertEquals(0, policy.failures.size());
    }

    @Test
    public void wrongPinsAreRefusedAndReported() throws Exception {
        MutablePolicy policy = pinned("leaf2");
        for (HostAwareTrustManager tm : managers(policy)) {
            String why = refusal(tm, served("leaf", "int"), "ECDHE_ECDSA", HOST);
            assertTrue(why, why.startsWith("PinningException"));
        }
        assertEquals(2, policy.failures.size());
        for (PinEvaluation failure : policy.failures) assertEquals(PinEvaluation.Verdict.REJECTED, failure.verdict);
    }

    @Test
    public void reportOnlyWrongPinsReturnTheChainAndReport() throws Exception {
        MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry(HOST, false, false, OkHttpPinningTest.pinOf("leaf2")));
        for (HostAwareTrustManager tm : managers(policy)) assertEquals(3, hostAware(tm, served("leaf", "int"), "ECDHE_ECDSA", HOST).size());
        assertEquals(2, policy.failures.size());
        for (PinEvaluation failure : policy.failures) assertEquals(PinEvaluation.Verdict.REPORT_ONLY, failure.verdict);
    }

    @Test
    public void pinnedCertificateOffTheVerifiedPathDoesNotCount() throws Exception {
        MutablePolicy policy = pinned("stray");
        for (HostAwareTrustManager tm : managers(policy)) {
            String why = refusal(tm, served("leaf", "int", "stray"), "ECDHE_ECDSA", HOST);
            assertTrue(why, why.startsWith("PinningException"));
        }
    }

    @Test
    public void hostTheCertificateDoesNotNameIsRefused() throws Exception {
        MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("other.example.test", false, true, OkHttpPinningTest.pinOf("int")));
        for (HostAwareTrustManager tm : managers(policy)) {
            assertEquals("CertificateException: the certificate is not valid for other.example.test",
                    refusal(tm, served("leaf", "int"), "ECDHE_ECDSA", "other.example.test"));
            assertTrue(refusal(tm, served("leaf", "int"), "ECDHE_ECDSA", "unknown.invalid").endsWith("not valid for unknown.invalid"));
        }
        assertEquals("a name mismatch is refused before the pins are checked", 0, policy.failures.size());
    }

    @Test
    public void chainThePlatformRefusesIsRefusedBeforeThePins() throws Exception {
        MutablePolicy policy = pinned("leaf2");
        for (HostAwareTrustManager tm : managers(policy)) {
            refusal(tm, served("expired", "int"), "ECDHE_ECDSA", HOST);
            refusal(tm, served("stray"), "ECDHE_ECDSA", HOST);
        }
        assertEquals("the pin check never ran", 0, policy.failures.size());
    }

    @Test
    public void badArgumentsAreRefusedSayingWhich() throws Exception {
        MutablePolicy policy = pinned("int");
        X509Certificate[] good = served("leaf", "int");
        for (HostAwareTrustManager tm : managers(policy)) {
            assertEquals("CertificateException: the server sent no certificate", refusal(tm, null, "ECDHE_ECDSA", HOST));
            assertEquals("CertificateException: the server sent no certificate", refusal(tm, new X509Certificate[0], "ECDHE_ECDSA", HOST));
            assertEquals("CertificateException: the certificate chain has a null element",
                    refusal(tm, new X509Certificate[] {cert("leaf"), null}, "ECDHE_ECDSA", HOST));
            assertEquals("CertificateException: no key exchange algorithm (authType) given", refusal(tm, good, null, HOST));
            assertEquals("CertificateException: no key exchange algorithm (authType) given", refusal(tm, good, "", HOST));
            assertEquals("CertificateException: no host name for the pin check: the caller gave none", refusal(tm, good, "ECDHE_ECDSA", null));
            assertEquals("CertificateException: no host name for the pin check: the caller gave none", refusal(tm, good, "ECDHE_ECDSA", ""));
        }
        assertEquals(0, policy.failures.size());
    }

    @Test
    public void twoArgumentFormIsRefusedNamingTheHostAwareForm() throws Exception {
        for (HostAwareTrustManager tm : managers(pinned("int"))) {
            try {
                tm.checkServerTrusted(served("leaf", "int"), "ECDHE_ECDSA");
                fail("the two-argument form accepted a chain");
            } catch (CertificateException e) {
                assertTrue(e.getMessage(), e.getMessage().startsWith("no host name for the pin check"));
                assertTrue(e.getMessage(), e.getMessage().contains("checkServerTrusted(chain, authType, host)"));
            }
        }
    }

    @Test
    public void rotationAppliesToTheNextCall() throws Exception {
        MutablePolicy policy = pinned("leaf");
        for (HostAwareTrustManager tm : managers(policy)) {
            policy.policy = pinned("leaf").policy;
            assertEquals(3, hostAware(tm, served("leaf", "int"), "ECDHE_ECDSA", HOST).size());
            policy.policy = pinned("leaf2").policy;
            assertTrue(refusal(tm, served("leaf", "int"), "ECDHE_ECDSA", HOST).startsWith("PinningException"));
        }
    }

    @Test
    public void clientCertificatesAreNeverAccepted() throws Exception {
        for (HostAwareTrustManager tm : managers(pinned("int"))) {
            try {
                tm.checkClientTrusted(served("leaf", "int"), "ECDHE_ECDSA");
                fail("a client chain was accepted");
            } catch (CertificateException e) {
                assertEquals("Pinion's trust manager does not authenticate clients", e.getMessage());
            }
        }
    }
}
