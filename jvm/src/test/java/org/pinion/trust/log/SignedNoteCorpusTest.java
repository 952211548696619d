// The signed-note corpus (conformance/notes/): key names, line breaks and BOMs that both SDKs must read byte for byte, with the same verdict.
package org.pinion.trust.log;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.pinion.trust.log.LogTestKit.CRYPTO;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;
import org.pinion.trust.JsonLimits;
import org.pinion.trust.JsonValue;
import org.pinion.trust.StrictJsonParser;

public class SignedNoteCorpusTest {
    private static final Path NOTES = Paths.get("").toAbsolutePath().resolve("../conformance/notes").normalize();

    /**
     * Every note of conformance/notes/expectations.json: parsed and verified with the listed
     * keys; the verdict and the names of the verified keys (as UTF-8 bytes) are the corpus's,
     * which the Swift SDK's {@code SignedNote} gives too.
     */
    @Test
    public void everyNoteGetsItsVerdict() throws Exception {
        JsonValue document = StrictJsonParser.parse(Files.readAllBytes(NOTES.resolve("expectations.json")),
                new JsonLimits(1024 * 1024, 16, 10_000, Map.of()));
        Map<String, NoteVerifierKey> keys = new HashMap<>();
        JsonValue keyTexts = document.get("keys");
        for (String label : List.of("log", "kw", "nfc", "nfd", "lower")) {
            keys.put(label, NoteVerifierKey.parse(keyTexts.get(label).text(), CRYPTO));
        }
        List<JsonValue> entries = document.get("entries").elements();
        assertTrue(entries.size() >= 12);
        List<String> failures = new ArrayList<>();
        for (JsonValue entry : entries) {
            String file = entry.get("file").text();
            byte[] bytes = Files.readAllBytes(NOTES.resolve(file));
            List<NoteVerifierKey> given = new ArrayList<>();
            for (JsonValue label : entry.get("keys").elements()) given.add(keys.get(label.text()));
            String verdict = "accept";
            List<String> verified = new ArrayList<>();
            try {
                for (SignedNote.Verified v : SignedNote.parse(bytes).verify(given, CRYPTO)) verified.add(v.key.name);
            } catch (NoteException e) {
                verdict = "reject";
            }
            String expected = entry.get("verdict").text();
            if (!verdict.equals(expected)) {
                failures.add(file + ": expected " + expected + ", got " + verdict + " (" + entry.get("why").text() + ")");
                continue;
            }
            if (verdict.equals("accept")) {
                List<String> names = new ArrayList<>();
                for (JsonValue name : entry.get("verified").elements()) names.add(name.text());
                if (!sameBytes(names, verified)) {
                    failures.add(file + ": expected verified " + names + ", got " + verified);
                }
            }
        }
        if (!failures.isEmpty()) fail(String.join("\n", failures));
    }

    private static boolean sameBytes(List<String> a, List<String> b) {
        if (a.size() != b.size()) return false;
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i).getBytes(StandardCharsets.UTF_8), b.get(i).getBytes(StandardCharsets.UTF_8))) return false;
        }
        return true;
    }
}
