// The debug proxy override: a verified chain ending in a proxy CA the app names bypasses the pins of the domains it lists.
package org.pinion.tls;

import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.logging.Logger;
import org.pinion.crypto.Sha256;
import org.pinion.trust.FormatException;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.Names;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;

/**
 * An explicit bypass of the pins for connections through an intercepting debugging proxy (Charles,
 * Proxyman, mitmproxy), the counterpart of Android's {@code <debug-overrides>}, with the same
 * decision as the Swift SDK's {@code DebugProxyOverride}.
 *
 * <p>The override names the proxy's CA explicitly, by its certificate or its SPKI pin (RFC 7469
 * §2.4, {@code sha256/<base64>}); there is no "trust any user-installed CA" switch, so a corporate
 * MDM CA on a tester's device never bypasses pins. A connection is bypassed only when all hold:
 * the platform verified the chain (the override adds no trust anchor: the proxy's CA must already be
 * trusted, by the Network Security Config's {@code <debug-overrides>} on Android or the CA file on
 * the JVM); the pins refuse it or report it ({@code REJECTED} or {@code REPORT_ONLY}); the verified
 * chain's last certificate, its trust anchor, has the key of a named CA; and the host is one of the
 * listed domains or a subdomain of one (or the override covers every domain). A pinned domain's real
 * chain does not end in the proxy's CA, so it keeps its verdict, as does every chain through another
 * CA. The update channel's publisher pins are never bypassed.
 *
 * <p>It takes effect only through a trust manager built with an unsafe opt-in:
 * {@code PinionTrustManager.unsafeAllowDebugProxy} on the JVM, and
 * {@code PinionAndroidTrustManager.unsafeAllowDebugProxy} on Android, which also refuses an app
 * that is not debuggable. Every bypassed connection (at the handshake and at each request's
 * re-check) is sent to {@link PolicySource#onEvent} as a {@code DEBUG_PROXY_BYPASS} event and
 * logged at WARNING to the {@code java.util.logging} logger {@value #LOGGER_NAME}.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class DebugProxyOverride {
    /** The {@code java.util.logging} logger every use and every trust manager built with an override writes to. */
    public static final String LOGGER_NAME = "org.pinion.tls.DebugProxyOverride";

    static final Logger LOG = Logger.getLogger(LOGGER_NAME);

    private final Set<Pin> proxyCas;
    private final List<String> domains;

    private DebugProxyOverride(Set<Pin> proxyCas, List<String> domains) {
        this.proxyCas = Collections.unmodifiableSet(proxyCas);
        this.domains = domains == null ? null : Collections.unmodifiableList(domains);
    }

    /** @return a builder; name at least one proxy CA and either domains or {@link Builder#allDomains()} */
    public static Builder builder() { return new Builder(); }

    /** @return the SPKI pins of the named proxy CAs (unmodifiable, not empty) */
    public Set<Pin> proxyCas() { return proxyCas; }

    /** @return the normalised domains covered with their subdomains (unmodifiable), or null when every domain is covered */
    public List<String> domains() { return domains; }

    /**
     * @param host a host name
     * @return whether the override covers {@code host}: every host, or a listed domain or one of its subdomains
     */
    public boolean covers(String host) {
        if (host == null) return false;
        if (domains == null) return true;
        String name = MergedPolicy.normalizedHost(host);
        if (name == null) return false;
        for (String domain : domains) {
            if (name.equals(domain) || name.endsWith("." + domain)) return true;
        }
        return false;
    }

    /**
     * Decides one connection after the pin evaluation.
     *
     * @param host the host connected to
     * @param verifiedDigests SHA-256 of the DER SubjectPublicKeyInfo of every certificate of the
     *     VERIFIED chain, leaf first, trust anchor last
     * @param evaluation the pins' verdict on that chain
     * @return the use when the pins are bypassed (a pin failure, an anchor with a named CA's key, a
     *     covered host), or null when the verdict stands
     */
    public Use decide(String host, List<byte[]> verifiedDigests, PinEvaluation evaluation) {
        if (evaluation == null) return null;
        if (evaluation.verdict != PinEvaluation.Verdict.REJECTED && evaluation.verdict != PinEvaluation.Verdict.REPORT_ONLY) return null;
        if (verifiedDigests == null || verifiedDigests.isEmpty() || !covers(host)) return null;
        byte[] anchor = verifiedDigests.get(verifiedDigests.size() - 1);
        for (Pin ca : proxyCas) {
            if (ca.matches(anchor)) return new Use(host, ca, evaluation);
        }
        return null;
    }

    /**
     * {@link #decide} and, on a bypass, the event and the WARNING log line.
     *
     * @return whether the pins were bypassed
     */
    boolean apply(String host, List<byte[]> verifiedDigests, PinEvaluation evaluation, PolicySource policy) {
        Use use = decide(host, verifiedDigests, evaluation);
        if (use == null) return false;
        LOG.warning(use.toString());
        policy.onEvent(org.pinion.trust.ClientEvent.debugProxyBypass(use.host, use.toString()));
        return true;
    }

    @Override
    public String toString() {
        return "proxy CAs " + proxyCas + " for " + (domains == null ? "every domain" : String.join(", ", domains));
    }

    /** One bypassed connection. */
    public static final class Use {
        /** The host connected to. */
        public final String host;
        /** The named proxy CA the verified chain ends in. */
        public final Pin proxyCa;
        /** The pins' verdict that was overridden ({@code REJECTED} or {@code REPORT_ONLY}). */
        public final PinEvaluation overridden;

        Use(String host, Pin proxyCa, PinEvaluation overridden) {
            this.host = host;
            this.proxyCa = proxyCa;
            this.overridden = overridden;
        }

        /** @return the log line for this use */
        @Override
        public String toString() {
            return "Pinion UNSAFE debug proxy override: pins bypassed for " + host + " (verified chain ends in proxy CA "
                    + proxyCa + "; the pins said " + overridden.verdict + ": "
                    + (overridden.reason == null ? "" : overridden.reason.text) + ")";
        }
    }

    /**
     * Builds an override. Every setter refuses a bad value at once with an
     * {@link IllegalArgumentException} naming it; {@link #build()} refuses an override without a CA
     * or without domains.
     */
    public static final class Builder {
        private final Set<Pin> proxyCas = new LinkedHashSet<>();
        private final List<String> domains = new ArrayList<>();
        private boolean allDomains;

        private Builder() {}

        /**
         * Names a proxy CA by its certificate, as Charles, Proxyman or mitmproxy export it.
         *
         * @param certificate the CA certificate (basicConstraints CA:TRUE)
         * @return this builder
         * @throws IllegalArgumentException a null certificate, or one that is not a CA certificate (a leaf)
         */
        public Builder proxyCaCertificate(X509Certificate certificate) {
            if (certificate == null) throw new IllegalArgumentException("the debug proxy CA certificate is null");
            if (certificate.getBasicConstraints() < 0) {
                throw new IllegalArgumentException("the debug proxy CA certificate " + certificate.getSubjectX500Principal().getName()
                        + " is not a CA certificate (no basicConstraints CA:TRUE): name the proxy's root CA, not a leaf it issued");
            }
            try {
                proxyCas.add(Pin.ofDigest(Sha256.digest(certificate.getPublicKey().getEncoded())));
            } catch (FormatException e) {
                throw new IllegalArgumentException("the debug proxy CA certificate's key: " + e.getMessage(), e);
            }
            return this;
        }

        /**
         * Names a proxy CA by the SPKI pin of its certificate ({@code pinion spki}, or the openssl
         * pipeline in docs/ANDROID.md).
         *
         * @param pin {@code sha256/<base64 of 32 bytes>} (RFC 7469 §2.4)
         * @return this builder
         * @throws IllegalArgumentException a null or malformed pin
         */
        public Builder proxyCaPin(String pin) {
            if (pin == null) throw new IllegalArgumentException("the debug proxy CA pin is null");
            try {
                proxyCas.add(Pin.parse(pin));
            } catch (FormatException e) {
                throw new IllegalArgumentException("the debug proxy CA pin \"" + pin + "\" is not sha256/<base64 of 32 bytes>: "
                        + e.getMessage(), e);
            }
            return this;
        }

        /**
         * Limits the override to these domains and their subdomains.
         *
         * @param names host names (any case, one trailing dot allowed)
         * @return this builder
         * @throws IllegalArgumentException a null array, or a null, empty, IP literal, wildcard or otherwise invalid name
         */
        public Builder domains(String... names) {
            if (names == null) throw new IllegalArgumentException("the debug proxy override's domain list is null");
            for (String name : names) {
                String normalised = name == null ? null : MergedPolicy.normalizedHost(name);
                try {
                    if (normalised == null) throw new FormatException("", org.pinion.trust.FormatRule.INVALID_HOST_NAME, "empty or an IP literal");
                    Names.validateHostName(normalised);
                } catch (FormatException e) {
                    throw new IllegalArgumentException("the debug proxy override's domain " + (name == null ? "null" : "\"" + name + "\"")
                            + " is not a host name: " + e.getMessage(), e);
                }
                if (!domains.contains(normalised)) domains.add(normalised);
            }
            return this;
        }

        /**
         * Extends the override to every domain, pinned or not.
         *
         * @return this builder
         */
        public Builder allDomains() {
            allDomains = true;
            return this;
        }

        /**
         * @return the override
         * @throws IllegalArgumentException no proxy CA named; no domain and not {@link #allDomains()};
         *     or both domains and {@link #allDomains()}
         */
        public DebugProxyOverride build() {
            if (proxyCas.isEmpty()) {
                throw new IllegalArgumentException("the debug proxy override names no proxy CA (give its certificate or SPKI pin)");
            }
            if (allDomains && !domains.isEmpty()) {
                throw new IllegalArgumentException("the debug proxy override lists domains and also covers all domains: choose one");
            }
            if (!allDomains && domains.isEmpty()) {
                throw new IllegalArgumentException("the debug proxy override lists no domain (call allDomains() to cover every host)");
            }
            return new DebugProxyOverride(new LinkedHashSet<>(proxyCas), allDomains ? null : new ArrayList<>(domains));
        }
    }
}
