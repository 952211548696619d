// Two-copy client state (DESIGN.md §6): copies A then B, each atomic and self-checked; the valid copy with the higher floor wins.
package org.pinion.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.pinion.trust.ClientState;
import org.pinion.trust.FormatException;
import org.pinion.trust.Limits;
import org.pinion.trust.ManifestOrder;

/**
 * Loads and saves one scope's {@link ClientState} as two full copies, {@code state-a} then
 * {@code state-b}, each written by {@link AtomicFiles#write} and ending in its own SHA-256. A crash at
 * any instant leaves, in each copy, the old state or the new one. Only a missing copy, or one whose
 * checksum or parse fails, or one of another scope, counts as lost; any other read error leaves
 * everything untouched and is reported as {@link Load.Status#UNAVAILABLE}. Saves are serialised
 * across threads and processes by a lock on {@code lock} in the directory.
 */
public final class StateStore {
    /** File name of copy A (written first). */
    public static final String COPY_A = "state-a";
    /** File name of copy B (written second). */
    public static final String COPY_B = "state-b";
    private static final ConcurrentHashMap<Path, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private final Path directory;
    private final String scope;
    private final Limits limits;

    /** What {@link #load()} found. */
    public static final class Load {
        /** The kinds of load outcome. */
        public enum Status {
            /** No copy exists: a first start (no floor). */
            FRESH,
            /** A valid copy of this scope (its envelopes still to be re-verified by the trust core). */
            LOADED,
            /** Both copies lost: {@link #domainNames} stay enforced with no pins until a fresh manifest. */
            LOST,
            /** A read error other than loss (permission, I/O, locked device): skip this refresh, drop nothing. */
            UNAVAILABLE
        }

        /** The outcome. */
        public final Status status;
        /** The state for LOADED, else null. */
        public final ClientState state;
        /** Names of every copy that still yields them, for LOST (and LOADED with a foreign other copy). */
        public final List<String> domainNames;
        /** What happened, for logs: a lost copy, a rewrite, the read error. */
        public final List<String> notes;

        Load(Status status, ClientState state, List<String> domainNames, List<String> notes) {
            this.status = status;
            this.state = state;
            this.domainNames = Collections.unmodifiableList(domainNames);
            this.notes = Collections.unmodifiableList(notes);
        }
    }

    /**
     * @param directory the state directory; created 0700 when absent; a symbolic link is refused
     * @param scope the scope whose state this is
     * @param limits envelope and domain limits for decoding
     */
    public StateStore(Path directory, String scope, Limits limits) {
        this.directory = directory;
        this.scope = scope;
        this.limits = limits;
    }

    private void ensureDirectory() throws IOException {
        if (Files.isSymbolicLink(directory)) throw new IOException(directory + ": is a symbolic link");
        if (!Files.exists(directory, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (UnsupportedOperationException e) {
                Files.createDirectories(directory);
            } catch (FileAlreadyExistsException e) {
                // Created by another process in between: checked below.
            }
        }
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) throw new IOException(directory + ": not a directory");
    }

    /** A held lock; close it to release. */
    public interface Held extends AutoCloseable {
        @Override
        void close() throws IOException;
    }

    /**
     * Takes the exclusive lock of this state directory (threads of this process, then other processes).
     *
     * @return the held lock
     * @throws IOException when the directory or lock file cannot be opened
     */
    public Held lock() throws IOException {
        ensureDirectory();
        Path lockFile = directory.resolve("lock");
        ReentrantLock local = LOCKS.computeIfAbsent(lockFile.toAbsolutePath().normalize(), k -> new ReentrantLock());
        local.lock();
        FileChannel channel;
        FileLock fileLock;
        try {
            channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            try {
                fileLock = channel.lock();
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            local.unlock();
            throw e;
        }
        return () -> {
            try {
                fileLock.release();
                channel.close();
            } finally {
                local.unlock();
            }
        };
    }

    private static final class Copy {
        final String name;
        ClientState state;
        List<String> salvaged = new ArrayList<>();
        String lostReason;

        Copy(String name) { this.name = name; }
    }

    private Copy read(String name) throws IOException {
        Copy copy = new Copy(name);
        byte[] bytes;
        try {
            bytes = AtomicFiles.read(directory.resolve(name), StateCodec.MAX_STATE_BYTES);
        } catch (NoSuchFileException e) {
            copy.lostReason = name + " is missing";
            return copy;
        }
        try {
            ClientState state = StateCodec.decode(bytes, limits);
            if (!state.scope.equals(scope)) {
                copy.lostReason = name + " belongs to scope " + state.scope;
                copy.salvaged = new ArrayList<>(state.manifestDomainNames);
                return copy;
            }
            copy.state = state;
        } catch (FormatException e) {
            copy.lostReason = name + ": " + e.getMessage();
            copy.salvaged = StateCodec.salvageDomainNames(bytes);
        }
        return copy;
    }

    private static int compareFloors(ClientState a, ClientState b) {
        ManifestOrder fa = a.floor;
        ManifestOrder fb = b.floor;
        if (fa == null) return fb == null ? 0 : -1;
        if (fb == null) return 1;
        return fa.compareTo(fb);
    }

    /**
     * Loads the state: the valid copy with the higher floor (A on a tie: it is written first, so never
     * older), and rewrites the other copy when it is lost or differs. Call it while holding {@link #lock()}.
     *
     * @return what was found
     */
    public Load load() {
        List<String> notes = new ArrayList<>();
        Copy a;
        Copy b;
        try {
            ensureDirectory();
            a = read(COPY_A);
            b = read(COPY_B);
        } catch (IOException e) {
            notes.add(String.valueOf(e.getMessage()));
            return new Load(Load.Status.UNAVAILABLE, null, Collections.emptyList(), notes);
        }
        boolean aMissing = a.state == null && a.salvaged.isEmpty() && a.lostReason != null && a.lostReason.endsWith("is missing");
        boolean bMissing = b.state == null && b.salvaged.isEmpty() && b.lostReason != null && b.lostReason.endsWith("is missing");
        if (a.state == null && b.state == null) {
            if (aMissing && bMissing) return new Load(Load.Status.FRESH, null, Collections.emptyList(), notes);
            List<String> names = new ArrayList<>(a.salvaged);
            for (String n : b.salvaged) {
                if (!names.contains(n)) names.add(n);
            }
            notes.add(a.lostReason);
            notes.add(b.lostReason);
            return new Load(Load.Status.LOST, null, names, notes);
        }
        Copy winner;
        Copy other;
        if (a.state != null && (b.state == null || compareFloors(a.state, b.state) >= 0)) {
            winner = a;
            other = b;
        } else {
            winner = b;
            other = a;
        }
        if (other.lostReason != null) notes.add(other.lostReason);
        if (other.state == null || !other.state.equals(winner.state)) {
            try {
                AtomicFiles.write(directory, other.name, StateCodec.encode(winner.state));
                notes.add("rewrote " + other.name + " from " + winner.name);
            } catch (IOException e) {
                notes.add("could not rewrite " + other.name + ": " + e.getMessage());
            }
        }
        return new Load(Load.Status.LOADED, winner.state, other.salvaged, notes);
    }

    /**
     * Saves the state: copy A, then copy B, each atomically and durably. Call it while holding
     * {@link #lock()}.
     *
     * @param state the state of this store's scope
     * @throws IOException when a write fails (disk full, read-only...): the copies then hold the old
     *     state, or A the new one and B the old (the next load picks the higher floor)
     */
    public void save(ClientState state) throws IOException {
        if (!state.scope.equals(scope)) throw new IllegalArgumentException("state of scope " + state.scope + " saved to " + scope);
        ensureDirectory();
        byte[] bytes = StateCodec.encode(state);
        AtomicFiles.write(directory, COPY_A, bytes);
        AtomicFiles.write(directory, COPY_B, bytes);
    }

    /** @return the state directory */
    public Path directory() { return directory; }
}
