// Reading the client state files of formatVersion 1 (`state.json` and `enforced-domains.json`,
// the layout before the two state copies) with their own start-up rules, so an older install
// migrates with its floor.

import PinionCore

extension StateStore {
    /// Applies the formatVersion 1 rules to `state.json` and `enforced-domains.json`:
    ///
    /// - `state.json` well-formed and of this scope: `.loaded`, whatever the second file holds.
    /// - `state.json` corrupt, of a newer format or of another scope: `.dropped`, keeping the
    ///   names of both files where readable.
    /// - `state.json` unreadable (not absent): `.unreadable`.
    /// - `state.json` absent: `.empty`, unless `enforced-domains.json` records a committed
    ///   state (then `.dropped(.stateFileMissing)` with its names) or is itself corrupt
    ///   (`.dropped` with no names).
    ///
    /// - Returns: what the formatVersion 1 files hold; never throws.
    func loadFormatVersion1() -> StateLoad {
        let bytes: [UInt8]?
        do {
            bytes = try storage.read(Self.stateFileName, maxBytes: StateCodec.maxStateBytes)
        } catch {
            return .unreadable(error)
        }
        guard let bytes else { return loadFormatVersion1WithoutStateFile() }
        let state: ClientState
        do {
            state = try StateCodec.decode(bytes, limits: limits, hasher: hasher, file: Self.stateFileName)
        } catch {
            return .dropped(reason: error, keptDomainNames: keptFormatVersion1Names(from: nil))
        }
        guard state.scope == scope else {
            return .dropped(
                reason: .foreignScope(expected: scope, found: state.scope),
                keptDomainNames: keptFormatVersion1Names(from: state))
        }
        return .loaded(state)
    }

    /// `state.json` is absent: nothing committed yet, the crash window of a first save, or a
    /// lost file.
    private func loadFormatVersion1WithoutStateFile() -> StateLoad {
        switch readEnforcedDomains() {
        case .success(nil): return .empty
        case .success(let domains?):
            // stateCommitted false: the first save died between its two files; nothing was
            // committed, so the old state (none) stands.
            guard domains.stateCommitted else { return .empty }
            return .dropped(reason: .stateFileMissing, keptDomainNames: domains.names)
        case .failure(.storage(let error)): return .unreadable(error)
        case .failure(let error): return .dropped(reason: error, keptDomainNames: [])
        }
    }

    /// The union of the names in `state` (a readable but refused state) and in the
    /// enforced-domains file, if it can be read; the scope of either is not checked.
    private func keptFormatVersion1Names(from state: ClientState?) -> [String] {
        var names = state?.manifestDomainNames ?? []
        if case .success(let domains?) = readEnforcedDomains() {
            var seen = Set(names)
            for name in domains.names where seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    private func readEnforcedDomains() -> Result<StateCodec.EnforcedDomains?, StateError> {
        do {
            guard
                let bytes = try storage.read(
                    Self.enforcedDomainsFileName, maxBytes: StateCodec.maxDomainsFileBytes(limits))
            else { return .success(nil) }
            do {
                return .success(try StateCodec.decodeEnforcedDomains(bytes, limits: limits, hasher: hasher))
            } catch {
                return .failure(error)
            }
        } catch {
            return .failure(.storage(error))
        }
    }
}
