// A strict-parser or schema error: the file, the path of the value and the rule broken.
package org.pinion.trust;

/**
 * A typed format error (DESIGN.md §11): {@link #rule()} for callers to match on, {@link #path()}
 * such as {@code domains[3].pins[1]}, and a message {@code file: path: rule in words}.
 */
public final class FormatException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String file;
    private final String path;
    private final FormatRule rule;
    private final String detail;

    /**
     * @param path path of the offending value; empty for the whole document
     * @param rule the rule broken
     * @param detail the rule in words, as the Swift SDK words it
     */
    public FormatException(String path, FormatRule rule, String detail) {
        this(null, path, rule, detail);
    }

    private FormatException(String file, String path, FormatRule rule, String detail) {
        super(render(file, path, detail));
        this.file = file;
        this.path = path;
        this.rule = rule;
        this.detail = detail;
    }

    private static String render(String file, String path, String detail) {
        StringBuilder text = new StringBuilder();
        if (file != null) text.append(file).append(": ");
        if (!path.isEmpty()) text.append(path).append(": ");
        text.append(detail);
        return TerminalText.escape(text.toString());
    }

    /** @return the same error attributed to {@code file} */
    public FormatException inFile(String file) {
        return new FormatException(file, path, rule, detail);
    }

    /** @return the same error with its path placed under {@code prefix} (e.g. {@code payload}) */
    public FormatException under(String prefix) {
        return new FormatException(file, path.isEmpty() ? prefix : prefix + "." + path, rule, detail);
    }

    /** @param newPath the path to report @return the same error at {@code newPath} */
    public FormatException at(String newPath) {
        return new FormatException(file, newPath, rule, detail);
    }

    /** @return the rule broken */
    public FormatRule rule() { return rule; }

    /** @return the path of the offending value, empty for the whole document */
    public String path() { return path; }

    /** @return the file, or null when unknown */
    public String file() { return file; }

    /** @return the rule in words, without file and path */
    public String detail() { return detail; }
}
