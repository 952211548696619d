// Escapes control and formatting characters from untrusted text bound for a terminal or log.
package org.pinion.trust;

/**
 * Makes untrusted text safe to print, as the Swift {@code TerminalText}: C0 and C1 controls, DEL,
 * and Unicode format, line/paragraph separator, private-use, unassigned and surrogate code points
 * become {@code \\u{XXXX}} (uppercase hex), so a message cannot move the cursor or reorder text.
 */
public final class TerminalText {
    private TerminalText() {}

    /**
     * @param text any text
     * @return the text escaped; the same instance when nothing needs escaping
     */
    public static String escape(String text) {
        boolean any = text.codePoints().anyMatch(TerminalText::needsEscape);
        if (!any) return text;
        StringBuilder out = new StringBuilder();
        text.codePoints().forEach(cp -> {
            if (needsEscape(cp)) {
                out.append("\\u{").append(Integer.toHexString(cp).toUpperCase(java.util.Locale.ROOT)).append('}');
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.toString();
    }

    private static boolean needsEscape(int cp) {
        if (cp <= 0x1F || (cp >= 0x7F && cp <= 0x9F)) return true;
        int type = Character.getType(cp);
        return type == Character.FORMAT || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR
                || type == Character.PRIVATE_USE || type == Character.UNASSIGNED || type == Character.SURROGATE;
    }
}
