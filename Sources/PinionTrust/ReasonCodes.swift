// The shared reason codes of conformance/README.md for the trust and format rules, the
// names every SDK reports a refusal under.

import PinionCore

extension TrustError {
    /// The shared reason code of conformance/README.md for the rule broken, e.g.
    /// `threshold-not-met`, `json-duplicate-name`: stable across releases and SDKs.
    public var reasonCode: String {
        switch self {
        case .format(let format): return format.rule.reasonCode
        case .wrongPayloadKind: return "wrong-payload-kind"
        case .thresholdNotMet: return "threshold-not-met"
        case .scopeMismatch: return "scope-mismatch"
        case .rootNotNext: return "root-not-next"
        case .rootEquivocation: return "root-equivocation"
        case .rootVersionMismatch: return "root-version-mismatch"
        case .rootVersionBeforePinsRole: return "root-version-mismatch"
        case .pinsRoleSinceInvalid: return "pins-role-since-invalid"
        case .lifetimeExceedsCap: return "lifetime-exceeds-cap"
        case .rootExpired: return "root-expired"
        case .manifestExpired: return "manifest-expired"
        case .tooManyRotations: return "too-many-rotations"
        }
    }
}

extension FormatRule {
    /// The shared reason code of conformance/README.md for a strict-parser or schema rule
    /// (one code per rule), e.g. `json-duplicate-name`: stable across releases and SDKs.
    public var reasonCode: String {
        switch self {
        case .invalidUTF8: return "json-invalid-utf8"
        case .syntax: return "json-syntax"
        case .trailingBytes: return "json-trailing-bytes"
        case .duplicateKey: return "json-duplicate-name"
        case .loneSurrogate: return "json-lone-surrogate"
        case .leadingZero: return "json-leading-zero"
        case .nestingTooDeep: return "json-nesting-too-deep"
        case .tooLarge: return "json-too-large"
        case .tooManyElements: return "json-too-many-elements"
        case .missingMember: return "missing-member"
        case .unknownMember: return "unknown-member"
        case .wrongType: return "wrong-type"
        case .notAnInteger: return "not-an-integer"
        case .integerOutOfRange: return "integer-out-of-range"
        case .invalidTime: return "invalid-time"
        case .unsupportedSpecVersion: return "unsupported-spec-version"
        case .wrongDocumentType: return "wrong-document-type"
        case .wrongPayloadType: return "wrong-payload-type"
        case .invalidScope: return "invalid-scope"
        case .invalidHostName: return "invalid-host-name"
        case .invalidPin: return "invalid-pin"
        case .duplicatePin: return "duplicate-pin"
        case .duplicateDomain: return "duplicate-domain"
        case .empty: return "empty"
        case .invalidBase64: return "invalid-base64"
        case .invalidKeyID: return "invalid-key-id"
        case .keyIDMismatch: return "key-id-mismatch"
        case .invalidPublicKey: return "invalid-public-key"
        case .invalidRoleKey: return "invalid-role-key"
        case .invalidThreshold: return "invalid-threshold"
        case .expiresNotAfterIssued: return "expires-not-after-issued"
        case .invalidPreviousHash: return "invalid-previous-hash"
        case .invalidLog: return "invalid-log"
        }
    }
}
