// Pin validation failure reports with the RFC 7469 §3 fields (DESIGN.md §8 step 5), as the Swift SDK writes them.
package org.pinion.tls;

import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.pinion.trust.Codec;
import org.pinion.trust.JsonValue;
import org.pinion.trust.JsonWriter;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.Timestamp;

/** One report: date-time, hostname, port, noted-hostname, include-subdomains, chains (PEM), known-pins, expiry. */
public final class PinFailureReport {
    /** When the failure happened. */
    public final Timestamp dateTime;
    /** The host connected to (normalised). */
    public final String hostname;
    /** The port, or -1 when unknown. */
    public final int port;
    /** The policy entry the pins came from. */
    public final String notedHostname;
    /** That entry's includeSubdomains. */
    public final boolean includeSubdomains;
    /** The chain the server sent, PEM. */
    public final List<String> servedCertificateChain;
    /** The verified chain, PEM. */
    public final List<String> validatedCertificateChain;
    /** That entry's pins. */
    public final List<Pin> knownPins;
    /** The accepted manifest's expiresAt, or null. */
    public final Timestamp effectiveExpirationDate;

    /**
     * @param evaluation a failed evaluation (REJECTED or REPORT_ONLY)
     * @param port the port, or -1
     * @param at the time of the failure
     * @param served the served chain
     * @param verified the verified chain
     * @param expiration the manifest's expiresAt, or null
     */
    public PinFailureReport(PinEvaluation evaluation, int port, Timestamp at, List<X509Certificate> served, List<X509Certificate> verified,
            Timestamp expiration) {
        this.dateTime = at;
        this.hostname = evaluation.host;
        this.port = port;
        this.notedHostname = evaluation.entry.name;
        this.includeSubdomains = evaluation.entry.includeSubdomains;
        this.servedCertificateChain = pems(served);
        this.validatedCertificateChain = pems(verified);
        this.knownPins = evaluation.entry.pins;
        this.effectiveExpirationDate = expiration;
    }

    static List<String> pems(List<X509Certificate> chain) {
        List<String> out = new ArrayList<>();
        for (X509Certificate c : chain) {
            try {
                out.add(pem(c.getEncoded()));
            } catch (CertificateEncodingException e) {
                continue;
            }
        }
        return out;
    }

    /** @param der a DER certificate @return PEM with 64-character lines, no final newline */
    public static String pem(byte[] der) {
        String encoded = Codec.base64(der);
        StringBuilder out = new StringBuilder("-----BEGIN CERTIFICATE-----");
        for (int i = 0; i < encoded.length(); i += 64) out.append('\n').append(encoded, i, Math.min(encoded.length(), i + 64));
        return out.append("\n-----END CERTIFICATE-----").toString();
    }

    List<JsonValue.Member> identityMembers() {
        List<JsonValue> served = new ArrayList<>();
        for (String s : servedCertificateChain) served.add(JsonValue.string(s));
        List<JsonValue> validated = new ArrayList<>();
        for (String s : validatedCertificateChain) validated.add(JsonValue.string(s));
        List<JsonValue> pins = new ArrayList<>();
        for (Pin p : knownPins) pins.add(JsonValue.string("pin-sha256=\"" + Codec.base64(p.digest()) + "\""));
        List<JsonValue.Member> members = new ArrayList<>();
        members.add(new JsonValue.Member("hostname", JsonValue.string(hostname)));
        members.add(new JsonValue.Member("port", JsonValue.number(port)));
        // RFC 7469 §3 defines it as a date: left out when baseline pins (which never expire) applied.
        if (effectiveExpirationDate != null) {
            members.add(new JsonValue.Member("effective-expiration-date", JsonValue.string(effectiveExpirationDate.toString())));
        }
        members.add(new JsonValue.Member("include-subdomains", JsonValue.bool(includeSubdomains)));
        members.add(new JsonValue.Member("noted-hostname", JsonValue.string(notedHostname)));
        members.add(new JsonValue.Member("served-certificate-chain", JsonValue.array(served)));
        members.add(new JsonValue.Member("validated-certificate-chain", JsonValue.array(validated)));
        members.add(new JsonValue.Member("known-pins", JsonValue.array(pins)));
        return members;
    }

    /** @return the report as JSON bytes (RFC 7469 §3 member names, date-time first) */
    public byte[] jsonBytes() {
        List<JsonValue.Member> members = new ArrayList<>();
        members.add(new JsonValue.Member("date-time", JsonValue.string(dateTime.toString())));
        members.addAll(identityMembers());
        return JsonWriter.write(JsonValue.object(members));
    }

    /** @return the report without its time, the identity the throttle compares */
    byte[] identity() { return JsonWriter.write(JsonValue.object(identityMembers())); }
}
