// A root's `log` member (docs/DESIGN.md §12): origin, log key, witnesses, quorum, maxCheckpointAge, checkpointGrace.
package org.pinion.trust.log;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The log configuration a root lists, checked as the Swift {@code LogPolicy} checks it. Immutable. */
public final class LogPolicy {
    /** The most witnesses a root may list. */
    public static final int MAX_WITNESSES = 31;
    /** Default {@code checkpointGrace}: 7 days, in seconds. */
    public static final long DEFAULT_GRACE = 7L * 24 * 3600;

    /** One witness: its cosignature (0x04) verifier key, whose name is the witness's, and its URL prefix. */
    public static final class Witness {
        /** The witness's 0x04 verifier key. */
        public final NoteVerifierKey key;
        /** Its submission prefix, {@code https://host[:port][/path]}. */
        public final String url;

        /** @param key the 0x04 verifier key @param url the submission prefix */
        public Witness(NoteVerifierKey key, String url) {
            this.key = key;
            this.url = url;
        }

        /** @return the witness's name (its key name) */
        public String name() { return key.name; }
    }

    /** The checkpoint origin line. */
    public final String origin;
    /** The log's Ed25519 (0x01) verifier key. */
    public final NoteVerifierKey logKey;
    /** The witnesses whose cosignatures count, each key once. */
    public final List<Witness> witnesses;
    /** Valid cosignatures by distinct listed witnesses a checkpoint needs, 1 ... witnesses. */
    public final int quorum;
    /** Seconds after t_q when a staleCheckpoint event fires; 0 turns freshness off. */
    public final long maxCheckpointAge;
    /** Seconds after maxCheckpointAge when the manifest counts as expired. */
    public final long checkpointGrace;

    /**
     * @param origin 1-256 printable ASCII characters without spaces
     * @param logKey a 0x01 key
     * @param witnesses 1 ... {@link #MAX_WITNESSES} witnesses with 0x04 keys, distinct keys and names, https URLs
     * @param quorum 1 ... witnesses
     * @param maxCheckpointAge seconds, at least 0
     * @param checkpointGrace seconds, at least 0
     * @throws IllegalArgumentException naming the broken rule, worded as the Swift {@code LogPolicyError}
     */
    public LogPolicy(String origin, NoteVerifierKey logKey, List<Witness> witnesses, int quorum, long maxCheckpointAge,
            long checkpointGrace) {
        byte[] o = origin.getBytes(StandardCharsets.UTF_8);
        boolean printable = o.length > 0 && o.length <= 256;
        for (byte b : o) printable &= b > 0x20 && b < 0x7f;
        if (!printable) throw invalid("invalid log setting: the origin must be 1-256 printable ASCII characters without spaces");
        if (logKey.type != NoteVerifierKey.TYPE_ED25519) throw invalid(logKey.name + ": the log key is note type 0x01, witness keys 0x04");
        if (witnesses.size() > MAX_WITNESSES) throw invalid("invalid log setting: more than " + MAX_WITNESSES + " witnesses");
        if (witnesses.isEmpty() || quorum < 1 || quorum > witnesses.size()) {
            throw invalid("the witness quorum " + quorum + " must be between 1 and the " + witnesses.size() + " witnesses listed");
        }
        Set<String> keys = new HashSet<>();
        Set<String> names = new HashSet<>();
        for (Witness witness : witnesses) {
            String name = witness.name();
            if (witness.key.type != NoteVerifierKey.TYPE_COSIGNATURE_V1) throw invalid(name + ": the log key is note type 0x01, witness keys 0x04");
            if (Arrays.equals(witness.key.publicKey(), logKey.publicKey())) throw invalid("witness " + name + " has the log's own key");
            if (!keys.add(Arrays.toString(witness.key.publicKey()))) throw invalid("witness " + name + " repeats another witness's key");
            if (!names.add(name)) throw invalid("two witnesses are named " + name);
            if (!isWitnessUrl(witness.url)) {
                throw invalid("invalid log setting: witness " + name
                        + ": the URL must be https://host[:port][/path], without query or fragment");
            }
        }
        if (maxCheckpointAge < 0) throw invalid("invalid log setting: maxCheckpointAge is negative");
        if (checkpointGrace < 0) throw invalid("invalid log setting: checkpointGrace is negative");
        this.origin = origin;
        this.logKey = logKey;
        this.witnesses = Collections.unmodifiableList(new ArrayList<>(witnesses));
        this.quorum = quorum;
        this.maxCheckpointAge = maxCheckpointAge;
        this.checkpointGrace = checkpointGrace;
    }

    private static IllegalArgumentException invalid(String message) { return new IllegalArgumentException(message); }

    /**
     * @param url a candidate witness URL
     * @return whether it is {@code https://}, a host of letters, digits, dots and hyphens (or a
     *     bracketed IPv6 literal), an optional port 1-65535 without leading zero, an optional path of
     *     printable ASCII; no query, fragment, user info, backslash or white space; at most 2,048 bytes
     */
    public static boolean isWitnessUrl(String url) {
        if (url.getBytes(StandardCharsets.UTF_8).length > 2048 || !url.startsWith("https://")) return false;
        String rest = url.substring("https://".length());
        for (int i = 0; i < rest.length(); i++) {
            char c = rest.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#' || c == '@' || c == '\\') return false;
        }
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) return false;
            String host = authority.substring(1, close);
            if (host.isEmpty()) return false;
            for (char c : host.toCharArray()) {
                if (!(c == ':' || Character.digit(c, 16) >= 0)) return false;
            }
            String after = authority.substring(close + 1);
            return after.isEmpty() || (after.charAt(0) == ':' && isPort(after.substring(1)));
        }
        String[] parts = authority.split(":", -1);
        if (parts.length > 2) return false;
        if (parts.length == 2 && !isPort(parts[1])) return false;
        String host = parts[0];
        if (host.isEmpty()) return false;
        for (char c : host.toCharArray()) {
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
            if (!ok) return false;
        }
        return true;
    }

    private static boolean isPort(String text) {
        if (text.isEmpty() || text.length() > 5 || text.charAt(0) == '0') return false;
        for (char c : text.toCharArray()) {
            if (c < '0' || c > '9') return false;
        }
        int port = Integer.parseInt(text);
        return port >= 1 && port <= 65535;
    }

    /** @param other another policy, or null @return whether it names the same origin and log key */
    public boolean sameLog(LogPolicy other) {
        return other != null && origin.equals(other.origin) && logKey.equals(other.logKey);
    }
}
