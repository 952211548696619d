// The order of manifests: (rootVersion, version), compared lexicographically (DESIGN.md §5).
package org.pinion.trust;

/** (rootVersion, version) of a manifest; the floor never goes down. */
public final class ManifestOrder implements Comparable<ManifestOrder> {
    /** The root version. */
    public final long rootVersion;
    /** The manifest version. */
    public final long version;

    /** @param rootVersion root version @param version manifest version */
    public ManifestOrder(long rootVersion, long version) {
        this.rootVersion = rootVersion;
        this.version = version;
    }

    @Override
    public int compareTo(ManifestOrder other) {
        int c = Long.compare(rootVersion, other.rootVersion);
        return c != 0 ? c : Long.compare(version, other.version);
    }

    @Override
    public boolean equals(Object other) { return other instanceof ManifestOrder && compareTo((ManifestOrder) other) == 0; }

    @Override
    public int hashCode() { return Long.hashCode(rootVersion) * 31 + Long.hashCode(version); }

    /** @return {@code (rootVersion R, version V)}, as the Swift SDK prints it */
    @Override
    public String toString() { return "(rootVersion " + rootVersion + ", version " + version + ")"; }
}
