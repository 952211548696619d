// The `pinion` executable: the offline signer CLI (see `pinion --help`).

import PinionCLI

#if canImport(Glibc)
    import Glibc
#endif

// OpenSSL writes to sockets itself, so MSG_NOSIGNAL cannot help (SWIFT-LINUX-NOTES.md).
signal(SIGPIPE, SIG_IGN)
exit(PinionCommandLine.run(Array(CommandLine.arguments.dropFirst())))
