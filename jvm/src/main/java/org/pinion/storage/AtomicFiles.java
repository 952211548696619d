// Atomic, durable file replacement: temp file, write, fsync, rename, fsync of the directory.
package org.pinion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;

/**
 * Replaces files so that a crash at any instant leaves the old file or the new one, and the new one
 * is on disk when {@link #write} returns (POSIX rename(2) atomicity; fsync of the file and of the
 * directory, as the Swift StateStore does).
 */
public final class AtomicFiles {
    private static final SecureRandom RANDOM = new SecureRandom();

    private AtomicFiles() {}

    /**
     * @param directory an existing directory
     * @param name a plain file name (no separator, not starting with a dot)
     * @param bytes the new content
     * @throws IOException when any step fails; the old file is then unchanged and the temp file removed
     */
    public static void write(Path directory, String name, byte[] bytes) throws IOException {
        checkName(name);
        Path target = directory.resolve(name);
        Path temp = directory.resolve("." + name + ".tmp-" + Long.toHexString(RANDOM.nextLong()));
        boolean moved = false;
        try {
            try (FileChannel channel = openPrivate(temp)) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) channel.write(buffer);
                channel.force(true);
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("atomic rename is not supported in " + directory, e);
            }
            moved = true;
            syncDirectory(directory);
        } finally {
            if (!moved) Files.deleteIfExists(temp);
        }
    }

    /** Creates {@code file} new, mode 0600 where the file system has POSIX permissions. */
    private static FileChannel openPrivate(Path file) throws IOException {
        java.util.Set<StandardOpenOption> options = java.util.EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try {
            return FileChannel.open(file, options,
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            return FileChannel.open(file, options);
        }
    }

    /**
     * @param directory a directory
     * @throws IOException when its fsync fails
     */
    static void syncDirectory(Path directory) throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /**
     * Reads a regular file of at most {@code maxBytes}.
     *
     * @param file the file
     * @param maxBytes the limit
     * @return the bytes, at most {@code maxBytes + 1} (the caller refuses longer ones)
     * @throws java.nio.file.NoSuchFileException when absent
     * @throws IOException on any other failure, including a symbolic link or non-regular file
     */
    static byte[] read(Path file, int maxBytes) throws IOException {
        if (Files.isSymbolicLink(file)) throw new IOException(file.getFileName() + ": is a symbolic link");
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(file.getFileName() + ": not a regular file");
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) Math.min((long) maxBytes + 1, Math.max(0, channel.size()) + 1));
            while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
                if (!buffer.hasRemaining() && buffer.capacity() <= maxBytes) {
                    ByteBuffer bigger = ByteBuffer.allocate((int) Math.min((long) maxBytes + 1, buffer.capacity() * 2L));
                    buffer.flip();
                    bigger.put(buffer);
                    buffer = bigger;
                }
            }
            byte[] out = new byte[buffer.position()];
            buffer.flip();
            buffer.get(out);
            return out;
        }
    }

    static void checkName(String name) {
        if (name.isEmpty() || name.startsWith(".") || name.contains("/") || name.contains("\\") || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("not a plain file name: " + name);
        }
    }
}
