// What every Pinion trust manager offers PinionOkHttp: the trust manager and the policy it checks.
package org.pinion.tls;

import javax.net.ssl.X509TrustManager;

/**
 * A trust manager that checks pins on the verified chain and stores the verified SPKI digests in the
 * handshake session under {@link PinionTrustManager#SESSION_KEY}, so that {@link PinionOkHttp} can
 * re-check them on every request over a reused connection. Implemented by
 * {@link PinionTrustManager} (JVM) and {@code PinionAndroidTrustManager} (Android).
 */
public interface PinCheckingTrustManager extends X509TrustManager {
    /** @return the policy this trust manager checks pins against, or null when it checks fixed pins only */
    PolicySource policySource();
}
