// A small, safe Swift face on SQLite 3 (Debian libsqlite3-dev): open, statements, bound
// values, transactions, typed errors. All pointer work on the SQLite handle lives here.

import CSQLite

/// A value stored in or read from SQLite (its five storage classes).
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The integer, or nil for another storage class.
    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The text, or nil for another storage class.
    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes, or nil for another storage class.
    public var blob: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

/// A failed SQLite call: the (extended) result code, SQLite's message and what was being done.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`); its low byte is the primary code.
    public let code: Int32
    /// SQLite's message (`sqlite3_errmsg`), or the code's text.
    public let message: String
    /// What the caller was doing (`open`, `prepare`, `step`, ...).
    public let context: String

    /// - Parameters: the code, SQLite's message and the caller's step.
    public init(code: Int32, message: String, context: String) {
        self.code = code
        self.message = message
        self.context = context
    }

    /// The primary result code (`SQLITE_FULL`, `SQLITE_BUSY`, ...).
    public var primaryCode: Int32 { code & 0xFF }
    /// The database or disk is full (`SQLITE_FULL`), e.g. `max_page_count` reached.
    public var isFull: Bool { primaryCode == SQLITE_FULL }
    /// Another connection holds a lock longer than the busy timeout (`SQLITE_BUSY`, `SQLITE_LOCKED`).
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// The file is not a database or is damaged (`SQLITE_NOTADB`, `SQLITE_CORRUPT`).
    public var isCorrupt: Bool { primaryCode == SQLITE_NOTADB || primaryCode == SQLITE_CORRUPT }

    public var description: String { "SQLite \(context): \(message) (code \(code))" }
}

/// One SQLite connection. Opened in serialized mode (`SQLITE_OPEN_FULLMUTEX`), so it may be
/// handed from the thread that opened it to the one that uses it.
public final class SQLiteDatabase: @unchecked Sendable {
    // @unchecked: the handle is only used through SQLite's own serialized-mode mutex.

    /// How to open the file.
    public enum OpenMode: Sendable {
        /// Reading only; the file must exist.
        case readOnly
        /// Reading and writing; the file must exist.
        case readWrite
        /// Reading and writing; the file is created (mode 0600 via the process umask) if missing.
        case readWriteCreate
    }

    private let handle: OpaquePointer
    /// The path opened.
    public let path: String

    /// Opens `path` (no URI names, no symbolic link resolution beyond the system's).
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - mode: read-only, read-write or read-write-create.
    ///   - busyTimeoutMilliseconds: how long a statement waits for another connection's lock.
    /// - Throws: `SQLiteError` (`context` "open").
    public init(path: String, mode: OpenMode, busyTimeoutMilliseconds: Int32 = 5_000) throws(SQLiteError) {
        var flags = SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var opened: OpaquePointer?
        let result = sqlite3_open_v2(path, &opened, flags, nil)
        guard result == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            if let opened { sqlite3_close_v2(opened) }
            throw SQLiteError(code: result, message: message, context: "open \(path)")
        }
        sqlite3_extended_result_codes(opened, 1)
        sqlite3_busy_timeout(opened, busyTimeoutMilliseconds)
        handle = opened
        self.path = path
    }

    deinit { sqlite3_close_v2(handle) }

    /// The SQLite library's version text, e.g. `3.40.1`.
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    private func error(_ code: Int32, _ context: String) -> SQLiteError {
        SQLiteError(
            code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), context: context)
    }

    /// Runs one or more statements without parameters or results (schema, pragmas).
    ///
    /// - Throws: `SQLiteError` (`context` "execute").
    public func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result, "execute") }
    }

    /// Runs one statement with bound values and returns its rows.
    ///
    /// - Parameters:
    ///   - sql: one SQL statement with `?` parameters.
    ///   - values: the parameters, in order.
    /// - Returns: every row, each as its column values in order.
    /// - Throws: `SQLiteError`.
    @discardableResult
    public func query(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let statement = try prepare(sql)
        try statement.bind(values)
        var rows: [[SQLiteValue]] = []
        while try statement.step() { rows.append(statement.row()) }
        return rows
    }

    /// Prepares one statement for repeated use.
    ///
    /// - Throws: `SQLiteError` (`context` "prepare"), also when `sql` holds more than one statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let result = sql.withCString { text in
            let code = sqlite3_prepare_v2(handle, text, -1, &statement, &tail)
            if code == SQLITE_OK, let rest = tail, rest.pointee != 0 {
                let remaining = String(cString: rest).allSatisfy { $0.isWhitespace || $0 == ";" }
                return remaining ? code : SQLITE_MISUSE
            }
            return code
        }
        guard result == SQLITE_OK, let statement else {
            if let statement { sqlite3_finalize(statement) }
            if result == SQLITE_MISUSE {
                throw SQLiteError(code: result, message: "more than one statement", context: "prepare")
            }
            throw error(result, "prepare")
        }
        return SQLiteStatement(handle: statement, database: self)
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: committed when it returns, rolled back
    /// when it throws (and the error rethrown).
    ///
    /// - Throws: `SQLiteError` from BEGIN or COMMIT, or what `body` throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    fileprivate func failure(_ code: Int32, _ context: String) -> SQLiteError { error(code, context) }
}

/// A prepared statement of one `SQLiteDatabase`. Not shared between threads.
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private let database: SQLiteDatabase

    fileprivate init(handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters 1...n (copied by SQLite).
    ///
    /// - Throws: `SQLiteError` (`context` "bind"), also for a count that does not match.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard Int(sqlite3_bind_parameter_count(handle)) == values.count else {
            throw SQLiteError(code: SQLITE_RANGE, message: "parameter count differs", context: "bind")
        }
        // SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .real(let number): result = sqlite3_bind_double(handle, index, number)
            case .text(let text): result = sqlite3_bind_text(handle, index, text, -1, transient)
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob(
                        handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), transient)
                }
            }
            guard result == SQLITE_OK else { throw database.failure(result, "bind") }
        }
    }

    /// Advances to the next row.
    ///
    /// - Returns: true when a row is ready (`row()`), false when the statement is done.
    /// - Throws: `SQLiteError` (`context` "step"), e.g. `isFull` or `isBusy`.
    public func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let failure = database.failure(result, "step")
            sqlite3_reset(handle)
            throw failure
        }
    }

    /// The current row's values, in column order.
    public func row() -> [SQLiteValue] {
        (0..<sqlite3_column_count(handle)).map { column -> SQLiteValue in
            switch sqlite3_column_type(handle, column) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
            case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
            case SQLITE_TEXT:
                guard let text = sqlite3_column_text(handle, column) else { return .text("") }
                let count = Int(sqlite3_column_bytes(handle, column))
                return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(handle, column))
                guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob([]) }
                return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
            default: return .null
            }
        }
    }
}
