// The client state's files on Apple platforms: a directory in Application Support, excluded from backup,
// protected until first unlock, written with atomic replacement. Apple-only glue, type-checked against
// Tests/AppleStubs and Linux's Foundation only (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionTrust

    /// `StateStorage` in one directory, with the data protection class
    /// `FileProtectionType.completeUntilFirstUserAuthentication` (readable by background refresh once
    /// the device was unlocked after boot) and `isExcludedFromBackup` (a restored backup must not bring
    /// back an older state). Writes use `Data.write(options: .atomic)`: a crash leaves the old file or
    /// the new one. A read that fails for any reason but "absent" (such as a device still locked) throws,
    /// so the store is reported as unreadable, never taken for a lost file. One process per directory:
    /// an app and its extensions must not share one (no cross-process lock).
    public struct AppleFileStorage: StateStorage {
        /// The directory holding the files.
        public let directory: URL

        /// Creates the directory if needed, with the protection class, and excludes it from backup.
        ///
        /// - Parameter directory: a file URL.
        /// - Throws: `StorageError` (`.createDirectory`) when it cannot be created or marked.
        public init(directory: URL) throws(StorageError) {
            var marked = directory
            do {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true,
                    attributes: [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication])
                var values = URLResourceValues()
                values.isExcludedFromBackup = true
                try marked.setResourceValues(values)
            } catch {
                throw Self.failure(.createDirectory, directory.path, error)
            }
            self.directory = directory
        }

        /// Storage in `Application Support/<subdirectory>` of the app's container.
        ///
        /// - Parameter subdirectory: a relative path (`ClientConfiguration.stateDirectory` in the
        ///   factory), without empty, `.` or `..` components.
        /// - Throws: `StorageError` for such a path or when the directory cannot be made.
        public static func applicationSupport(subdirectory: String) throws(StorageError) -> AppleFileStorage {
            let parts = subdirectory.split(separator: "/", omittingEmptySubsequences: false)
            guard !subdirectory.hasPrefix("/"), !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
            else { throw StorageError(.open, subdirectory, code: EINVAL, detail: "not a relative path") }
            do {
                let base = try FileManager.default.url(
                    for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
                return try AppleFileStorage(directory: parts.reduce(base) { $0.appendingPathComponent(String($1)) })
            } catch let error as StorageError {
                throw error
            } catch {
                throw failure(.createDirectory, subdirectory, error)
            }
        }

        public func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
            let url = try fileURL(name)
            do {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                return [UInt8](try handle.read(upToCount: max(maxBytes, 0) + 1) ?? Data())
            } catch {
                if Self.isAbsent(error) { return nil }
                throw Self.failure(.read, name, error)
            }
        }

        public func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
            let url = try fileURL(name)
            do {
                try Data(bytes).write(to: url, options: [.atomic, .completeFileProtectionUntilFirstUserAuthentication])
            } catch {
                throw Self.failure(.write, name, error)
            }
        }

        public func remove(_ name: String) throws(StorageError) {
            let url = try fileURL(name)
            do { try FileManager.default.removeItem(at: url) } catch {
                if !Self.isAbsent(error) { throw Self.failure(.remove, name, error) }
            }
        }

        private func fileURL(_ name: String) throws(StorageError) -> URL {
            guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
                throw StorageError(.open, name, code: EINVAL, detail: "not a plain file name")
            }
            return directory.appendingPathComponent(name)
        }

        private static func isAbsent(_ error: any Error) -> Bool {
            let code = (error as? CocoaError)?.code
            return code == .fileReadNoSuchFile || code == .fileNoSuchFile || posixCode(error) == ENOENT
        }

        private static func posixCode(_ error: any Error) -> Int32? {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            guard let underlying, underlying.domain == NSPOSIXErrorDomain else { return nil }
            return Int32(exactly: underlying.code)
        }

        private static func failure(_ operation: StorageError.Operation, _ name: String, _ error: any Error)
            -> StorageError
        {
            StorageError(
                operation, name, code: posixCode(error) ?? EIO, detail: (error as NSError).localizedDescription)
        }
    }
#endif
