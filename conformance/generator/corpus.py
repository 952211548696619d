# The parser-differential corpus (conformance/parser/): manifest payloads with the verdict and reason code every SDK must give.

from .common import *  # noqa: F401,F403 (payload writers)


def corpus():
    base = manifest_payload(1, [domain(API, [pin("a"), pin("b")])])
    text = base.decode()

    def with_member(raw):
        return (text[:-1] + "," + raw + "}").encode()

    def nested(depth):
        # the payload object is depth 1; x-n adds (depth - 1) nested arrays
        return with_member('"x-n":' + "[" * (depth - 1) + "]" * (depth - 1))

    def pins(count):
        return manifest_payload(1, [domain(API, [pin("p%d" % i) for i in range(count)])])

    entries = [
        ("valid", base, "accept", None),
        ("whitespace-around", b" \r\n\t" + base + b"\n ", "accept", None),
        ("x-extension", with_member('"x-note":{"any":[1,"two",null,true,-0.5e3]}'), "accept", None),
        ("escaped-value", with_member('"x-s":"\\u00e9\\/\\ud83d\\ude00\\n"'), "accept", None),
        ("bom", b"\xef\xbb\xbf" + base, "reject", "json-syntax"),
        ("duplicate-name", with_member('"version":1'), "reject", "json-duplicate-name"),
        ("duplicate-name-escaped", with_member('"\\u0076ersion":1'), "reject", "json-duplicate-name"),
        ("duplicate-name-nfd", with_member('"x-\\u00e9":1,"x-e\\u0301":2'), "reject", "json-duplicate-name"),
        ("invalid-utf8-byte", with_member('"x-s":"') [:-1] + b"\xff\"}", "reject", "json-invalid-utf8"),
        ("invalid-utf8-overlong", with_member('"x-s":"') [:-1] + b"\xc0\xaf\"}", "reject", "json-invalid-utf8"),
        ("invalid-utf8-surrogate", with_member('"x-s":"') [:-1] + b"\xed\xa0\x80\"}", "reject",
         "json-invalid-utf8"),
        ("invalid-utf8-truncated", with_member('"x-s":"') [:-1] + b"\xe2\x82\"}", "reject", "json-invalid-utf8"),
        ("lone-surrogate", with_member('"x-s":"\\ud800"'), "reject", "json-lone-surrogate"),
        ("lone-low-surrogate", with_member('"x-s":"\\udc00\\ud800"'), "reject", "json-lone-surrogate"),
        ("control-character", with_member('"x-s":"a\tb"'), "reject", "json-syntax"),
        ("trailing-bytes", base + b"{}", "reject", "json-trailing-bytes"),
        ("trailing-comma", with_member('"x-a":[1,]'), "reject", "json-syntax"),
        ("single-quotes", with_member("'x-a':1"), "reject", "json-syntax"),
        ("literal-case", with_member('"x-a":True'), "reject", "json-syntax"),
        ("leading-zero", text.replace('"version":1', '"version":01').encode(), "reject", "json-leading-zero"),
        ("fraction", text.replace('"version":1', '"version":1.0').encode(), "reject", "not-an-integer"),
        ("exponent", text.replace('"version":1', '"version":1e0').encode(), "reject", "not-an-integer"),
        ("negative", text.replace('"version":1', '"version":-1').encode(), "reject", "integer-out-of-range"),
        ("zero", text.replace('"version":1', '"version":0').encode(), "reject", "integer-out-of-range"),
        ("max-safe-integer", text.replace('"version":1', '"version":9007199254740991').encode(), "accept", None),
        ("max-safe-integer-plus-one", text.replace('"version":1', '"version":9007199254740992').encode(),
         "reject", "integer-out-of-range"),
        ("huge-integer", text.replace('"version":1', '"version":123456789012345678901234567890').encode(),
         "reject", "integer-out-of-range"),
        ("huge-number-in-extension", with_member('"x-n":1e400'), "accept", None),
        ("bare-minus", with_member('"x-n":-'), "reject", "json-syntax"),
        ("depth-at-limit", nested(16), "accept", None),
        ("depth-over-limit", nested(17), "reject", "json-nesting-too-deep"),
        ("depth-100000", with_member('"x-n":' + "[" * 100000 + "]" * 100000), "reject", "json-nesting-too-deep"),
        ("depth-100000-unclosed", with_member('"x-n":' + "[" * 100000), "reject", "json-nesting-too-deep"),
        ("empty-document", b"", "reject", "json-syntax"),
        ("whitespace-only", b" \n", "reject", "json-syntax"),
        ("top-level-array", b"[" + base + b"]", "reject", "wrong-type"),
        ("top-level-null", b"null", "reject", "wrong-type"),
        ("negative-zero", text.replace('"version":1', '"version":-0').encode(), "reject", "integer-out-of-range"),
        ("plus-sign", text.replace('"version":1', '"version":+1').encode(), "reject", "json-syntax"),
        ("duplicate-extension-escaped", with_member('"x-a":1,"\\u0078-a":2'), "reject", "json-duplicate-name"),
        ("nul-escape-in-extension", with_member('"x-s":"a\\u0000b"'), "accept", None),
        ("raw-nul", with_member('"x-s":"a')[:-1] + b'\x00b"}', "reject", "json-syntax"),
        ("noncharacter-escape", with_member('"x-s":"\\uffff"'), "accept", None),
        ("utf8-bmp-max", with_member('"x-s":"\uffff\U0010ffff"'), "accept", None),
        ("pins-at-limit", pins(64), "accept", None),
        ("pins-over-limit", pins(65), "reject", "json-too-many-elements"),
        ("array-at-limit", with_member('"x-a":[' + ",".join(["0"] * 10000) + "]"), "accept", None),
        ("array-over-limit", with_member('"x-a":[' + ",".join(["0"] * 10001) + "]"), "reject",
         "json-too-many-elements"),
        ("unknown-member", with_member('"extra":1'), "reject", "unknown-member"),
        ("missing-member", text.replace('"scope":"conformance.test",', "").encode(), "reject", "missing-member"),
        ("spec-version-2", text.replace('"specVersion":1', '"specVersion":2').encode(), "reject",
         "unsupported-spec-version"),
        ("wrong-type", text.replace('"version":1', '"version":"1"').encode(), "reject", "wrong-type"),
        ("time-without-z", text.replace("2027-03-01T00:00:00Z", "2027-03-01T00:00:00+00:00").encode(), "reject",
         "invalid-time"),
        ("time-fraction", text.replace("2027-03-01T00:00:00Z", "2027-03-01T00:00:00.5Z").encode(), "reject",
         "invalid-time"),
        ("time-before-1970", text.replace("2026-12-15T00:00:00Z", "1969-12-31T23:59:59Z").encode(), "reject",
         "invalid-time"),
        ("time-february-30", text.replace("2027-03-01T00:00:00Z", "2027-02-30T00:00:00Z").encode(), "reject",
         "invalid-time"),
        ("expires-not-after-issued", text.replace("2027-03-01T00:00:00Z", "2026-12-15T00:00:00Z").encode(),
         "reject", "expires-not-after-issued"),
        ("host-uppercase", text.replace(API, "API.conformance.test").encode(), "reject", "invalid-host-name"),
        ("host-ip", text.replace(API, "192.0.2.1").encode(), "reject", "invalid-host-name"),
        ("host-one-label", text.replace(API, "localhost").encode(), "reject", "invalid-host-name"),
        ("host-wildcard", text.replace(API, "*.conformance.test").encode(), "reject", "invalid-host-name"),
        ("host-trailing-dot", text.replace(API, API + ".").encode(), "reject", "invalid-host-name"),
        ("pin-trailing-bits", text.replace(pin("a"), pin("a")[:-2] + "B=").encode(), "reject", "invalid-pin"),
        ("pin-url-alphabet", text.replace(pin("a"), "sha256/" + "_" * 43 + "=").encode(), "reject", "invalid-pin"),
        ("duplicate-pin", text.replace(pin("b"), pin("a")).encode(), "reject", "duplicate-pin"),
        ("duplicate-domain", manifest_payload(1, [domain(API, [pin("a")]), domain(API, [pin("b")])]), "reject",
         "duplicate-domain"),
        ("empty-pins", manifest_payload(1, [domain(API, [])]), "reject", "empty"),
        ("wrong-document-type", text.replace('"pinion.pins"', '"pinion.root"').encode(), "reject",
         "wrong-document-type"),
    ]
    return entries
