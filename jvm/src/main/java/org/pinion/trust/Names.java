// Validation of the names documents carry: host names, scopes and key ids (DESIGN.md §2, §5).
package org.pinion.trust;

import java.nio.charset.StandardCharsets;

/** The rules of {@code name}, {@code scope} and key ids, with the Swift SDK's reasons. */
public final class Names {
    /** Longest host name in characters (RFC 1035 §2.3.4). */
    public static final int MAX_HOST_LENGTH = 253;

    private Names() {}

    private static FormatException host(String reason) {
        return new FormatException("", FormatRule.INVALID_HOST_NAME, "invalid host name: " + reason);
    }

    /**
     * Checks a manifest domain name: lowercase ASCII A-labels of letters, digits and hyphens, 1-63
     * per label, no leading/trailing hyphen, no trailing dot, no wildcard, not an IP address, two or
     * more labels, at most 253 characters.
     *
     * @param name the name
     * @throws FormatException {@link FormatRule#INVALID_HOST_NAME} with the reason (path empty)
     */
    public static void validateHostName(String name) throws FormatException {
        if (isPlainHostName(name)) return;
        validateHostNameReasoned(name);
    }

    /**
     * One pass over the characters, no copy: whether {@code name} meets every rule of
     * {@link #validateHostName}. Only a name it refuses goes through the rule-by-rule check, which
     * finds the reason in the Swift SDK's order (tested to agree on valid and invalid names).
     */
    static boolean isPlainHostName(String name) {
        int length = name.length();
        if (length == 0 || length > MAX_HOST_LENGTH) return false;
        int labels = 0;
        int labelStart = 0;
        for (int i = 0; i <= length; i++) {
            char c = i < length ? name.charAt(i) : '.';
            if (c == '.') {
                int labelLength = i - labelStart;
                if (labelLength == 0 || labelLength > 63) return false;
                if (name.charAt(labelStart) == '-' || name.charAt(i - 1) == '-') return false;
                labels++;
                labelStart = i + 1;
            } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
                return false;
            }
        }
        return labels >= 2 && !looksNumeric(name, name.lastIndexOf('.') + 1);
    }

    /** {@link #looksNumeric(String)} of {@code name[start...]}, without a substring or a stream. */
    private static boolean looksNumeric(String name, int start) {
        int length = name.length();
        if (start >= length) return false;
        boolean decimal = true;
        for (int i = start; i < length && decimal; i++) decimal = name.charAt(i) >= '0' && name.charAt(i) <= '9';
        if (decimal) return true;
        if (length - start < 2 || name.charAt(start) != '0' || name.charAt(start + 1) != 'x') return false;
        for (int i = start + 2; i < length; i++) {
            char c = name.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        }
        return true;
    }

    /** The rule-by-rule check of {@link #validateHostName}, throwing the first rule broken. */
    static void validateHostNameReasoned(String name) throws FormatException {
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0) throw host("empty");
        if (b.length > MAX_HOST_LENGTH) throw host("longer than " + MAX_HOST_LENGTH + " characters");
        for (byte x : b) {
            if ((x & 0x80) != 0) throw host("non-ASCII; write internationalised names as A-labels (xn--...)");
        }
        for (byte x : b) {
            if (x >= 'A' && x <= 'Z') throw host("uppercase letters; host names are listed in lowercase");
        }
        for (byte x : b) {
            if (x == '*') throw host("wildcards are not allowed; use includeSubdomains");
        }
        for (byte x : b) {
            if (x == ':') throw host("IP addresses cannot be pinned by name");
        }
        if (b[0] == '[') throw host("IP addresses cannot be pinned by name");
        if (b[b.length - 1] == '.') throw host("trailing dot");
        String[] labels = name.split("\\.", -1);
        if (labels.length < 2) throw host("a single label; at least two are required");
        for (String label : labels) {
            if (label.isEmpty()) throw host("empty label");
            if (label.length() > 63) throw host("a label longer than 63 characters");
            for (int i = 0; i < label.length(); i++) {
                char c = label.charAt(i);
                boolean allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                if (!allowed) throw host("character \"" + c + "\" is not a letter, digit or hyphen");
            }
            if (label.charAt(0) == '-' || label.charAt(label.length() - 1) == '-') {
                throw host("a label starts or ends with a hyphen");
            }
        }
        if (looksNumeric(labels[labels.length - 1])) throw host("IP addresses cannot be pinned by name");
    }

    /**
     * @param last the last label of a name
     * @return whether it is all digits or {@code 0x} hex (an IPv4 part to inet_aton and URL parsers)
     */
    static boolean looksNumeric(String last) {
        if (last.isEmpty()) return false;
        boolean decimal = last.chars().allMatch(c -> c >= '0' && c <= '9');
        boolean hex = last.length() >= 2 && last.startsWith("0x")
                && last.substring(2).chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
        return decimal || hex;
    }

    /**
     * Checks a scope: 1-128 characters of {@code [a-z0-9._-]}, not {@code .} or {@code ..}.
     *
     * @param scope the scope
     * @throws FormatException {@link FormatRule#INVALID_SCOPE} with the reason (path empty)
     */
    public static void validateScope(String scope) throws FormatException {
        byte[] b = scope.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0 || b.length > 128) {
            throw new FormatException("", FormatRule.INVALID_SCOPE, "invalid scope: must be 1 to 128 characters");
        }
        for (byte c : b) {
            boolean allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            if (!allowed) {
                throw new FormatException("", FormatRule.INVALID_SCOPE, "invalid scope: only a-z 0-9 . _ - are allowed");
            }
        }
        if (scope.equals(".") || scope.equals("..")) {
            throw new FormatException("", FormatRule.INVALID_SCOPE, "invalid scope: " + scope + " is not allowed");
        }
    }

    /**
     * @param id candidate key id
     * @throws FormatException {@link FormatRule#INVALID_KEY_ID} unless 64 lowercase hex characters
     */
    public static void validateKeyId(String id) throws FormatException {
        if (id.length() != 64 || Codec.decodeHexLowercase(id) == null) {
            throw new FormatException("", FormatRule.INVALID_KEY_ID, "key id \"" + id + "\" is not 64 lowercase hex characters");
        }
    }
}
