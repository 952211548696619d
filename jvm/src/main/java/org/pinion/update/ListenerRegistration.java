// A handle that removes a listener it registered, so the registry stops holding it.
package org.pinion.update;

/**
 * A listener's registration: {@link #close()} removes the listener, after which it is never called
 * again and the registry no longer references it (nor anything it holds, such as a connection pool).
 * Closing twice does nothing more. Works in try-with-resources; {@code close} throws nothing.
 */
public interface ListenerRegistration extends AutoCloseable {
    /** Removes the listener; idempotent. */
    @Override
    void close();
}
