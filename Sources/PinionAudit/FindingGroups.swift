// Findings grouped by cause: each finding of its own followed by the findings that follow
// from it, as the text report and the HTML page show them.

/// One cause and the findings that follow from it.
public struct FindingGroup: Sendable, Equatable {
    /// A finding of its own (`followsFrom == nil`), or nil for the group of secondary
    /// findings whose cause is not among the findings.
    public var cause: AuditFinding?
    /// The findings that follow from `cause`, in report order.
    public var followers: [AuditFinding]
}

extension AuditFinding {
    /// Whether `follower` is grouped under `cause`: a signature finding owns the findings
    /// about the content of the same version (the same file first), the root equivocation
    /// owns those that follow from the given root.
    ///
    /// - Parameters:
    ///   - cause: a candidate cause.
    ///   - follower: a secondary finding.
    ///   - findings: all findings of the same list (to prefer a cause in the same file).
    /// - Returns: true when `follower` belongs under `cause`.
    public static func owns(_ cause: AuditFinding, _ follower: AuditFinding, among findings: [AuditFinding]) -> Bool {
        switch follower.followsFrom {
        case nil: return false
        case .givenRoot?: return cause.rule == .rootEquivocation
        case .unverifiedContent?:
            let signatureRules: Set<AuditRule> = [.manifestSignature, .manifestForeignKey, .rootSignature]
            guard signatureRules.contains(cause.rule), cause.followsFrom == nil, cause.version == follower.version
            else { return false }
            let sameFile = findings.contains {
                signatureRules.contains($0.rule) && $0.followsFrom == nil && $0.version == follower.version
                    && $0.file == follower.file
            }
            return !sameFile || cause.file == follower.file
        }
    }

    /// `findings` grouped by cause: one group per finding of its own, in order, holding the
    /// findings that follow from it; then, when some secondary finding has no cause in the
    /// list, one last group with a nil cause holding those.
    ///
    /// - Parameter findings: violations or warnings, in report order.
    /// - Returns: every finding exactly once.
    public static func groups(_ findings: [AuditFinding]) -> [FindingGroup] {
        var groups: [FindingGroup] = []
        var placed = Set<Int>()
        for position in findings.indices where findings[position].followsFrom == nil {
            let cause = findings[position]
            let followers = findings.indices.filter {
                !placed.contains($0) && owns(cause, findings[$0], among: findings)
            }
            placed.formUnion(followers)
            groups.append(FindingGroup(cause: cause, followers: followers.map { findings[$0] }))
        }
        let orphans = findings.indices.filter { findings[$0].followsFrom != nil && !placed.contains($0) }
        if !orphans.isEmpty { groups.append(FindingGroup(cause: nil, followers: orphans.map { findings[$0] })) }
        return groups
    }
}
