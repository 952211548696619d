// The conformance suite's reason codes (conformance/README.md) and the JVM SDK's typed errors mapped onto them.
package org.pinion.conformance;

import java.util.Locale;
import org.pinion.trust.ClientException;
import org.pinion.trust.FormatRule;
import org.pinion.trust.TrustException;

/** Maps the JVM SDK's refusals onto the shared reason codes. */
final class ReasonCodes {
    private ReasonCodes() {}

    /** @param error a refresh's refusal @return its reason code, e.g. {@code threshold-not-met} */
    static String of(ClientException error) {
        switch (error.kind()) {
            case TRUST: return of(error.trust());
            case ROLLBACK: return "rollback";
            case EQUIVOCATION: return "equivocation";
            case INVALID_EMBEDDED_ROOT: return "invalid-embedded-root";
            case TOO_MANY_ROTATIONS: return "too-many-rotations";
            case FETCH_FAILED: return "network";
            case FETCH_REFUSED: return "fetch-refused";
            case CONFIGURATION: return "configuration";
            case STORAGE: return "storage";
            case LOG: return error.log().code();
            default: throw new IllegalStateException("unmapped " + error.kind());
        }
    }

    /** @param error a trust rule broken @return its reason code */
    static String of(TrustException error) {
        if (error.kind() == TrustException.Kind.FORMAT) return of(error.format().rule());
        return kebab(error.kind().name());
    }

    /** @param rule a strict-parser or schema rule @return its reason code (one per rule) */
    static String of(FormatRule rule) {
        switch (rule) {
            case INVALID_UTF8: return "json-invalid-utf8";
            case SYNTAX: return "json-syntax";
            case TRAILING_BYTES: return "json-trailing-bytes";
            case DUPLICATE_KEY: return "json-duplicate-name";
            case LONE_SURROGATE: return "json-lone-surrogate";
            case LEADING_ZERO: return "json-leading-zero";
            case NESTING_TOO_DEEP: return "json-nesting-too-deep";
            case TOO_LARGE: return "json-too-large";
            case TOO_MANY_ELEMENTS: return "json-too-many-elements";
            // pinsRoleSince outside 1 ... version is an integer bound like any other (README).
            case INVALID_PINS_ROLE_SINCE: return "integer-out-of-range";
            default: return kebab(rule.name());
        }
    }

    private static String kebab(String constant) { return constant.toLowerCase(Locale.ROOT).replace('_', '-'); }
}
