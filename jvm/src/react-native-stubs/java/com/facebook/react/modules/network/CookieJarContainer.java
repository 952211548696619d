// Compile-time and JVM-test stand-in for React Native's CookieJarContainer; never packaged.
package com.facebook.react.modules.network;

import okhttp3.CookieJar;

/** The cookie jar React Native's networking and image modules cast the client's jar to. */
public interface CookieJarContainer extends CookieJar {
    /** @param cookieJar the jar to forward to */
    void setCookieJar(CookieJar cookieJar);

    /** Forwards to no jar. */
    void removeCookieJar();
}
