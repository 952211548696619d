// One file of a scope's tree on the update channel: root/N.json, manifest.json or manifest.proof.
package org.pinion.trust;

/** A file of {@code v1/{scope}/} the refresh asks for (docs/DESIGN.md §6, §12); a value. */
public final class TreeFile {
    /** Which of the three files. */
    public enum Kind {
        /** {@code root/N.json}. */
        ROOT,
        /** {@code manifest.json}. */
        MANIFEST,
        /** {@code manifest.proof}. */
        MANIFEST_PROOF
    }

    /** {@code manifest.json}. */
    public static final TreeFile MANIFEST = new TreeFile(Kind.MANIFEST, 0);
    /** {@code manifest.proof}. */
    public static final TreeFile MANIFEST_PROOF = new TreeFile(Kind.MANIFEST_PROOF, 0);

    /** The kind. */
    public final Kind kind;
    /** The root version for ROOT (1 ... 2^53-1), else 0. */
    public final long version;

    private TreeFile(Kind kind, long version) {
        this.kind = kind;
        this.version = version;
    }

    /**
     * @param version the root version, at least 1
     * @return {@code root/{version}.json}
     * @throws IllegalArgumentException for a version below 1
     */
    public static TreeFile root(long version) {
        if (version < 1) throw new IllegalArgumentException("root version " + version + " is below 1");
        return new TreeFile(Kind.ROOT, version);
    }

    /** @return the path under {@code v1/{scope}/}: {@code root/N.json}, {@code manifest.json} or {@code manifest.proof} */
    public String path() {
        switch (kind) {
            case ROOT: return "root/" + version + ".json";
            case MANIFEST: return "manifest.json";
            default: return "manifest.proof";
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TreeFile && ((TreeFile) other).kind == kind && ((TreeFile) other).version == version;
    }

    @Override
    public int hashCode() { return kind.hashCode() * 31 + Long.hashCode(version); }

    @Override
    public String toString() { return path(); }
}
