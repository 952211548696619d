// RFC 6125 server identity check: a host name against the leaf certificate's subjectAltName entries.
package org.pinion.tls;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Matches a host name against a certificate the way RFC 6125 §6 and the CA/Browser Forum baseline
 * require, with the same verdicts as OkHttp's host-name verifier (the tests use it as the oracle):
 * DNS names against {@code dNSName} entries only (no common-name fallback, RFC 6125 §6.4.4),
 * case-insensitive ASCII, one trailing dot ignored, a wildcard only as the whole left-most label
 * ({@code *.example.com} covers one label: not {@code example.com}, not {@code a.b.example.com});
 * IP literals against {@code iPAddress} entries only. Two deliberate differences from OkHttp 3.13:
 * IP literals compare as addresses ({@code ::1} matches {@code 0:0:0:0:0:0:0:1}, as in OkHttp 4),
 * and a non-ASCII host is refused (it reaches TLS as A-labels). Pinion keeps its own
 * copy because a platform path such as Android's {@code X509TrustManagerExtensions} does not check
 * names, and OkHttp's verifier is internal API that changes between releases.
 */
public final class HostNames {
    private static final int DNS_NAME = 2;
    private static final int IP_ADDRESS = 7;
    private static final Pattern IP_LITERAL = Pattern.compile("([0-9a-fA-F]*:[0-9a-fA-F:.]*)|([0-9.]+)");

    private HostNames() {}

    /**
     * @param host the host name or IP literal the client connected to (ASCII; IDNs as A-labels)
     * @param leaf the server's leaf certificate
     * @return whether one of the leaf's subjectAltName entries covers {@code host}; false for a null,
     *     empty or non-ASCII host and for a certificate whose extension cannot be parsed
     */
    public static boolean matches(String host, X509Certificate leaf) {
        if (host == null || host.isEmpty() || leaf == null || !isAscii(host)) return false;
        if (IP_LITERAL.matcher(host).matches()) {
            byte[] address = literal(host);
            if (address == null) return false;
            for (String name : altNames(leaf, IP_ADDRESS)) {
                byte[] entry = literal(name);
                if (entry != null && Arrays.equals(address, entry)) return true;
            }
            return false;
        }
        String name = host.toLowerCase(Locale.US);
        for (String pattern : altNames(leaf, DNS_NAME)) {
            if (isAscii(pattern) && matchesPattern(name, pattern.toLowerCase(Locale.US))) return true;
        }
        return false;
    }

    /** One DNS host name (lower case) against one dNSName (lower case), RFC 6125 §6.4.3. */
    static boolean matchesPattern(String host, String pattern) {
        if (!wellFormed(host) || !wellFormed(pattern)) return false;
        String h = host.endsWith(".") ? host : host + ".";
        String p = pattern.endsWith(".") ? pattern : pattern + ".";
        if (p.indexOf('*') < 0) return h.equals(p);
        // A wildcard is the whole left-most label and the only one, and never matches a bare "*.".
        if (!p.startsWith("*.") || p.indexOf('*', 1) >= 0 || p.equals("*.")) return false;
        String suffix = p.substring(1);
        if (h.length() <= suffix.length() || !h.endsWith(suffix)) return false;
        String label = h.substring(0, h.length() - suffix.length());
        return label.indexOf('.') < 0;
    }

    private static boolean wellFormed(String name) {
        return !name.isEmpty() && !name.startsWith(".") && !name.endsWith("..");
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) > 0x7F) return false;
        }
        return true;
    }

    /**
     * The bytes of an IPv4 dotted quad or an IPv6 literal, or null. IPv4 is parsed here because
     * {@code InetAddress.getByName} would look up a digits-and-dots string that is not a literal;
     * a string with a colon is only ever parsed as IPv6, never looked up.
     */
    private static byte[] literal(String text) {
        if (!IP_LITERAL.matcher(text).matches()) return null;
        if (text.indexOf(':') < 0) return dottedQuad(text);
        try {
            return InetAddress.getByName(text).getAddress();
        } catch (UnknownHostException | SecurityException e) {
            return null;
        }
    }

    private static byte[] dottedQuad(String text) {
        String[] parts = text.split("\\.", -1);
        if (parts.length != 4) return null;
        byte[] out = new byte[4];
        for (int i = 0; i < 4; i++) {
            String part = parts[i];
            // No leading zeros: "010" is octal to some parsers and decimal to others.
            if (part.isEmpty() || part.length() > 3 || (part.length() > 1 && part.charAt(0) == '0')) return null;
            int value = Integer.parseInt(part);
            if (value > 255) return null;
            out[i] = (byte) value;
        }
        return out;
    }

    private static List<String> altNames(X509Certificate leaf, int type) {
        Collection<List<?>> entries;
        try {
            entries = leaf.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            return java.util.Collections.emptyList();
        }
        List<String> names = new java.util.ArrayList<>();
        if (entries == null) return names;
        for (List<?> entry : entries) {
            if (entry == null || entry.size() < 2) continue;
            Object kind = entry.get(0);
            Object value = entry.get(1);
            if (kind instanceof Integer && (Integer) kind == type && value instanceof String) names.add((String) value);
        }
        return names;
    }
}
