// The rules a document can break, shared with the Swift SDK's FormatRule (DESIGN.md §5, §11).
package org.pinion.trust;

/** What rule an input broke: the same cases, in the same words, as the Swift {@code FormatRule}. */
public enum FormatRule {
    /** The bytes are not valid UTF-8 (RFC 3629). */
    INVALID_UTF8,
    /** A JSON syntax error (RFC 8259). */
    SYNTAX,
    /** Non-whitespace bytes after the top-level value. */
    TRAILING_BYTES,
    /** An object has the same member name twice. */
    DUPLICATE_KEY,
    /** A {@code \\uD800}-{@code \\uDFFF} escape outside a valid surrogate pair. */
    LONE_SURROGATE,
    /** A number with a leading zero such as {@code 007}. */
    LEADING_ZERO,
    /** Arrays and objects nested deeper than the limit. */
    NESTING_TOO_DEEP,
    /** The input is larger than the byte limit. */
    TOO_LARGE,
    /** An array or object has more elements than the limit. */
    TOO_MANY_ELEMENTS,
    /** A required member is absent. */
    MISSING_MEMBER,
    /** A member the schema does not define that does not start with {@code x-}. */
    UNKNOWN_MEMBER,
    /** The value has the wrong JSON type. */
    WRONG_TYPE,
    /** An integer with a fraction or an exponent. */
    NOT_AN_INTEGER,
    /** An integer outside its inclusive range. */
    INTEGER_OUT_OF_RANGE,
    /** Not RFC 3339 UTC with Z and whole seconds. */
    INVALID_TIME,
    /** {@code specVersion} newer than this build reads. */
    UNSUPPORTED_SPEC_VERSION,
    /** {@code type} names another document type. */
    WRONG_DOCUMENT_TYPE,
    /** {@code payloadType} unknown or not the expected one. */
    WRONG_PAYLOAD_TYPE,
    /** A scope outside {@code [a-z0-9._-]{1,128}} or {@code .}/{@code ..}. */
    INVALID_SCOPE,
    /** A host name that is not a lowercase A-label name of two or more labels. */
    INVALID_HOST_NAME,
    /** A pin that is not {@code sha256/} plus canonical padded base64 of 32 bytes. */
    INVALID_PIN,
    /** The same pin twice in one list. */
    DUPLICATE_PIN,
    /** The same domain twice in one manifest. */
    DUPLICATE_DOMAIN,
    /** A list that must not be empty is empty. */
    EMPTY,
    /** Not canonical padded RFC 4648 §4 base64. */
    INVALID_BASE64,
    /** A key id that is not 64 lowercase hex characters. */
    INVALID_KEY_ID,
    /** A key listed under an id that is not the SHA-256 of its public key. */
    KEY_ID_MISMATCH,
    /** A key type other than ed25519, a key not 32 bytes, or an unusable point. */
    INVALID_PUBLIC_KEY,
    /** A role names an unlisted key id, or one key id twice. */
    INVALID_ROLE_KEY,
    /** A threshold outside 1 ... number of keys. */
    INVALID_THRESHOLD,
    /** {@code expiresAt} not after {@code issuedAt}. */
    EXPIRES_NOT_AFTER_ISSUED,
    /** {@code previous} not {@code sha256:} plus 64 lowercase hex. */
    INVALID_PREVIOUS_HASH,
    /** {@code pinsRoleSince} outside 1 ... version. */
    INVALID_PINS_ROLE_SINCE,
    /** The root's {@code log} member breaks a rule of docs/DESIGN.md §12 (keys, witnesses, quorum, URLs, ages). */
    INVALID_LOG
}
