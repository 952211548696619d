// Whether the process's standard streams are terminals (isatty), for progress output.

#if canImport(Glibc)
    import Glibc
#endif

/// Terminal queries on the standard streams (POSIX `isatty`).
public enum Terminal {
    /// True when standard error (file descriptor 2) is a terminal: progress bars are drawn
    /// only then, never into a log file or pipe.
    public static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}
