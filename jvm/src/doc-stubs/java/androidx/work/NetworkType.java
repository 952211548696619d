// Compile-time stand-in for androidx.work's NetworkType (WorkManager 2.x); never packaged, never run.
package androidx.work;

/** The network a request needs (the members the snippets use). */
public enum NetworkType {
    /** Any connected network. */
    CONNECTED
}
