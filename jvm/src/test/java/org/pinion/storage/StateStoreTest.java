// Two-copy state storage (DESIGN.md §6): round trips, damage of one or both copies, crashes between copies, read errors.
package org.pinion.storage;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.pinion.trust.ClientState;
import org.pinion.trust.FormatException;
import org.pinion.trust.Limits;
import org.pinion.trust.ManifestOrder;
import org.pinion.trust.Pin;
import org.pinion.trust.Timestamp;

public class StateStoreTest {
    Path dir;
    StateStore store;

    @Before
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("pinion-state").resolve("state");
        store = new StateStore(dir, "com.example.app", Limits.STANDARD);
    }

    @After
    public void tearDown() throws IOException {
        Path root = dir.getParent();
        try (var walk = Files.walk(root)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static ClientState state(long version) throws FormatException {
        ClientState s = new ClientState("com.example.app");
        s.acceptedRoots.add("{\"root\": 2}".getBytes(StandardCharsets.UTF_8));
        s.manifest = ("{\"manifest\": " + version + "}").getBytes(StandardCharsets.UTF_8);
        s.floor = new ManifestOrder(1, version);
        s.floorPayloadSha256 = new byte[32];
        s.lastKnownTime = Timestamp.parse("2026-06-02T00:00:00Z");
        byte[] d = new byte[32];
        d[0] = (byte) version;
        s.revokedPins.add(Pin.ofDigest(d));
        s.revokedSince = 1;
        s.manifestDomainNames.add("api.example.com");
        s.manifestDomainNames.add("v" + version + ".example.com");
        s.manifestETag = "\"abc\"";
        return s;
    }

    @Test
    public void freshStoreLoadsFreshAndASavedStateLoadsBack() throws Exception {
        assertEquals(StateStore.Load.Status.FRESH, store.load().status);
        try (StateStore.Held held = store.lock()) {
            store.save(state(3));
        }
        StateStore.Load load = store.load();
        assertEquals(StateStore.Load.Status.LOADED, load.status);
        assertEquals(state(3), load.state);
        assertArrayEquals(Files.readAllBytes(dir.resolve(StateStore.COPY_A)), Files.readAllBytes(dir.resolve(StateStore.COPY_B)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(StateStore.COPY_A))));
        try (var list = Files.list(dir)) {
            assertEquals("no temporary files left", List.of("lock", "state-a", "state-b"), list.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }

    @Test
    public void encodingIsDeterministicAndEndsInItsSha256() throws Exception {
        byte[] one = StateCodec.encode(state(3));
        assertArrayEquals(one, StateCodec.encode(state(3)));
        String text = new String(one, StandardCharsets.UTF_8);
        assertTrue(text.matches("(?s)\\{.*\\}\nsha256 [0-9a-f]{64}\n"));
        assertEquals(state(3), StateCodec.decode(one, Limits.STANDARD));
    }

    @Test
    public void everySingleBitFlipAndEveryTruncationIsDetected() throws Exception {
        byte[] good = StateCodec.encode(state(3));
        for (int i = 0; i < good.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[i] ^= (byte) (1 << bit);
                try {
                    StateCodec.decode(bad, Limits.STANDARD);
                    fail("bit " + bit + " of byte " + i + " flipped and accepted");
                } catch (FormatException e) {
                    assertTrue(e.getMessage().length() > 0);
                }
            }
        }
        for (int cut = 0; cut < good.length; cut++) {
            try {
                StateCodec.decode(java.util.Arrays.copyOf(good, cut), Limits.STANDARD);
                fail("truncated at " + cut + " and accepted");
            } catch (FormatException e) {
                assertTrue(e.getMessage().length() > 0);
            }
        }
    }

    @Test
    public void oneCorruptCopyNeverLowersProtectionAndIsRewritten() throws Exception {
        store.save(state(3));
        for (String damaged : List.of(StateStore.COPY_A, StateStore.COPY_B)) {
            byte[] bytes = Files.readAllBytes(dir.resolve(damaged));
            bytes[bytes.length / 2] ^= 0x20;
            Files.write(dir.resolve(damaged), bytes);
            StateStore.Load load = store.load();
            assertEquals(StateStore.Load.Status.LOADED, load.status);
            assertEquals(state(3), load.state);
            assertEquals(state(3), StateCodec.decode(Files.readAllBytes(dir.resolve(damaged)), Limits.STANDARD));
        }
        Files.delete(dir.resolve(StateStore.COPY_A));
        assertEquals(state(3), store.load().state);
        assertTrue(Files.exists(dir.resolve(StateStore.COPY_A)));
    }

    @Test
    public void aCrashBetweenTheCopiesLoadsTheHigherFloor() throws Exception {
        store.save(state(3));
        // The crash: A holds the new state (version 4), B still the old one.
        AtomicFiles.write(dir, StateStore.COPY_A, StateCodec.encode(state(4)));
        assertEquals(new ManifestOrder(1, 4), store.load().state.floor);
        assertEquals(state(4), StateCodec.decode(Files.readAllBytes(dir.resolve(StateStore.COPY_B)), Limits.STANDARD));
        // An older A (restored from elsewhere) never wins over a higher B.
        AtomicFiles.write(dir, StateStore.COPY_A, StateCodec.encode(state(2)));
        assertEquals(new ManifestOrder(1, 4), store.load().state.floor);
        // A leftover temporary file of a crash mid-write changes nothing.
        Files.write(dir.resolve(".state-a.tmp-dead"), new byte[] {1, 2, 3});
        assertEquals(new ManifestOrder(1, 4), store.load().state.floor);
    }

    @Test
    public void bothCopiesLostKeepsTheDomainNamesTheyStillYield() throws Exception {
        store.save(state(3));
        for (String name : List.of(StateStore.COPY_A, StateStore.COPY_B)) {
            byte[] bytes = Files.readAllBytes(dir.resolve(name));
            bytes[bytes.length - 3] ^= 0x01;
            Files.write(dir.resolve(name), bytes);
        }
        StateStore.Load load = store.load();
        assertEquals(StateStore.Load.Status.LOST, load.status);
        assertNull(load.state);
        assertEquals(List.of("api.example.com", "v3.example.com"), load.domainNames);
        Files.write(dir.resolve(StateStore.COPY_A), new byte[] {(byte) 0xff});
        Files.write(dir.resolve(StateStore.COPY_B), new byte[0]);
        StateStore.Load garbage = store.load();
        assertEquals(StateStore.Load.Status.LOST, garbage.status);
        assertTrue(garbage.domainNames.isEmpty());
    }

    @Test
    public void aCopyOfAnotherScopeIsLostButItsNamesAreKept() throws Exception {
        ClientState foreign = state(9);
        foreign.scope = "org.other.app";
        Files.createDirectories(dir);
        AtomicFiles.write(dir, StateStore.COPY_A, StateCodec.encode(foreign));
        AtomicFiles.write(dir, StateStore.COPY_B, StateCodec.encode(foreign));
        StateStore.Load load = store.load();
        assertEquals(StateStore.Load.Status.LOST, load.status);
        assertTrue(load.domainNames.contains("v9.example.com"));
        try {
            store.save(foreign);
            fail("saved a state of another scope");
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("org.other.app"));
        }
    }

    @Test
    public void aReadErrorOtherThanLossLeavesEverythingUntouched() throws Exception {
        store.save(state(3));
        byte[] before = Files.readAllBytes(dir.resolve(StateStore.COPY_B));
        Files.delete(dir.resolve(StateStore.COPY_A));
        Files.createDirectory(dir.resolve(StateStore.COPY_A));
        StateStore.Load load = store.load();
        assertEquals(StateStore.Load.Status.UNAVAILABLE, load.status);
        assertArrayEquals(before, Files.readAllBytes(dir.resolve(StateStore.COPY_B)));
        assertTrue(Files.isDirectory(dir.resolve(StateStore.COPY_A)));
    }

    @Test
    public void aSymlinkedDirectoryOrCopyIsRefused() throws Exception {
        Path real = Files.createTempDirectory("pinion-real");
        Path link = dir.getParent().resolve("link");
        Files.createSymbolicLink(link, real);
        StateStore linked = new StateStore(link, "com.example.app", Limits.STANDARD);
        assertEquals(StateStore.Load.Status.UNAVAILABLE, linked.load().status);
        try {
            linked.save(state(1));
            fail("saved through a symlinked directory");
        } catch (IOException e) {
            assertTrue(e.getMessage().contains("symbolic link"));
        }
        Files.delete(real);
        store.save(state(3));
        Files.delete(dir.resolve(StateStore.COPY_A));
        Files.createSymbolicLink(dir.resolve(StateStore.COPY_A), dir.resolve(StateStore.COPY_B));
        assertEquals(StateStore.Load.Status.UNAVAILABLE, store.load().status);
    }

    @Test
    public void aFailedWriteLeavesTheOldCopyAndNoTemporaryFile() throws Exception {
        store.save(state(3));
        Path blocked = dir.resolve("blocked");
        Files.createDirectories(blocked.resolve("x"));
        try {
            AtomicFiles.write(dir, "blocked", new byte[] {1});
            fail("replaced a non-empty directory");
        } catch (IOException e) {
            assertTrue(Files.isDirectory(blocked));
        }
        try (var list = Files.list(dir)) {
            assertFalse(list.anyMatch(p -> p.getFileName().toString().startsWith(".")));
        }
        try {
            AtomicFiles.write(dir, "../escape", new byte[] {1});
            fail("accepted a path as a file name");
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("plain file name"));
        }
    }

    @Test
    public void theCommittedFormatVersion1CopyStillLoadsAndRestores() throws Exception {
        byte[] bytes;
        try (var in = StateStoreTest.class.getResourceAsStream("/state/state-v1")) {
            bytes = in.readAllBytes();
        }
        ClientState state = StateCodec.decode(bytes, Limits.STANDARD);
        assertEquals(new ManifestOrder(2, 4), state.floor);
        assertEquals(1, state.acceptedRoots.size());
        assertEquals(List.of("api.example.com", "example.net"), state.manifestDomainNames);
        org.pinion.trust.TrustCore core;
        try (var in = StateStoreTest.class.getResourceAsStream("/state/root-1.json")) {
            core = new org.pinion.trust.TrustCore("com.example.app", in.readAllBytes(), org.pinion.crypto.StrictEd25519.INSTANCE, Limits.STANDARD);
        }
        org.pinion.trust.TrustCore.Restored restored = core.restore(state);
        assertTrue(restored.events.toString(), restored.events.isEmpty());
        assertTrue(restored.state.manifestValid);
        assertEquals(2, restored.state.chain.newest().version());
        assertArrayEquals("encoding is stable", bytes, StateCodec.encode(state));
    }

    @Test
    public void lockSerialisesSavesAcrossThreads() throws Exception {
        java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
        List<Thread> threads = new java.util.ArrayList<>();
        for (int t = 0; t < 4; t++) {
            final int n = t;
            threads.add(new Thread(() -> {
                for (int i = 0; i < 5; i++) {
                    try (StateStore.Held held = store.lock()) {
                        if (inside.incrementAndGet() > 1) overlaps.incrementAndGet();
                        store.save(state(n * 10 + i + 1));
                        inside.decrementAndGet();
                    } catch (Exception e) {
                        overlaps.addAndGet(1000);
                    }
                }
            }));
        }
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        assertEquals(0, overlaps.get());
        assertEquals(StateStore.Load.Status.LOADED, store.load().status);
    }
}
