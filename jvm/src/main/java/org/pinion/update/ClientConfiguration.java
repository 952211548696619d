// Everything an app configures for one scope: embedded root and baseline, publisher, state directory, trust of the update channel.
package org.pinion.update;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.function.LongSupplier;
import org.pinion.trust.Baseline;
import org.pinion.trust.Limits;
import org.pinion.trust.Pin;

/** Configuration of a {@link PinningClient}; public fields, set before constructing the client. */
public final class ClientConfiguration {
    /** The app's scope. */
    public String scope;
    /** The publisher's server root ({@code https://pins.example.com/}), or null (no refresh). */
    public String baseUrl;
    /** Exact envelope bytes of the root embedded in the app. */
    public byte[] embeddedRoot;
    /** The baseline pins compiled into the app. */
    public Baseline baseline = Baseline.EMPTY;
    /** The state directory (app-private, excluded from backups). */
    public Path stateDirectory;
    /** A PEM CA file for both channels, or null for the system trust store. */
    public Path caFile;
    /** Optional pins for the publisher host (update channel only). */
    public List<Pin> publisherPins = Collections.emptyList();
    /** Seconds a manifest counts as current after its expiry (default 0). */
    public long staleGrace;
    /** Document limits. */
    public Limits limits = Limits.STANDARD;
    /** Wall clock in seconds since the epoch (tests pass a fixed one). */
    public LongSupplier clock = () -> System.currentTimeMillis() / 1000;
    /** Connect and read timeouts of the update channel, in seconds. */
    public long timeoutSeconds = 30;
    /** Where pin-failure reports are POSTed as JSON (RFC 7469 §3), or null; sent over the update channel's client, never with manifest pins (DESIGN.md §14). */
    public String reportUri;
    /** False for a rehearsal ({@code --at}): refreshes never write the state. */
    public boolean persist = true;
    /** An address to dial for the publisher instead of its host (as curl --connect-to), or null. */
    public String publisherConnectTo;
}
