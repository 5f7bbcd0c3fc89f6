import Foundation
import Merge
import ObjectGraph

/// The report of `run` and `import`: CONTRACT.md's JSON document, or text for people.
public struct RunReport: Sendable {
    public struct Source: Sendable {
        public var name: String
        public var status: String            // applied | unchanged | skipped | failed
        public var error: String?
        public var report: SourceImportReport?
    }
    public var dryRun: Bool
    public var sources: [Source] = []

    public init(dryRun: Bool) { self.dryRun = dryRun }

    // MARK: JSON

    public func json(model: ObjectModel, context: ObjectContext?) -> String {
        var summary: [String: [String: Int]] = [:]
        for entity in ["Channel", "Programme"] {
            var t = MergeTally()
            for s in sources { if let r = s.report { t += entity == "Channel" ? r.channels : r.programmes } }
            summary[entity] = ["inserted": t.inserted, "updated": t.updated, "deleted": t.deleted, "unchanged": t.unchanged]
        }
        let keptAsHistory = sources.compactMap(\.report).reduce(0) { $0 + $1.keptAsHistory }
        summary["Programme"]?["keptAsHistory"] = keptAsHistory
        var document: [String: Any] = [
            "dryRun": dryRun,
            "sources": sources.map { s -> [String: Any] in
                var d: [String: Any] = ["name": s.name, "status": s.status, "error": s.error ?? NSNull()]
                if let r = s.report {
                    d["guard"] = r.guardVerdict
                    d["programmesRead"] = r.programmesRead
                    d["duplicatesDropped"] = r.duplicatesDropped
                }
                return d
            },
            "summary": summary,
            "changes": sources.compactMap(\.report).flatMap { $0.changes.map { change in ChangeRendering.json(change, context: context) } },
            "warnings": sources.compactMap(\.report).flatMap { r in
                r.warnings.map { w -> [String: Any] in
                    var d: [String: Any] = ["kind": w.kind, "message": w.message, "source": w.source]
                    d["line"] = w.line ?? NSNull()
                    if let f = w.file { d["file"] = f }
                    if let c = w.channel { d["channel"] = c }
                    return d
                }
            },
        ]
        if document["changes"] == nil { document["changes"] = [] }
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Text

    /// A short text for people: one line per source and entity, the warnings counted by kind
    /// (verbose: each with its file and line), and (verbose or dry run) the changes grouped by
    /// channel, capped.
    public func text(showChanges: Bool, context: ObjectContext?, maxChangesPerChannel: Int = 20, listWarnings: Bool = false) -> String {
        var lines: [String] = []
        if dryRun { lines.append("Dry run: nothing was changed.") }
        for s in sources {
            // A dry run says what it would do.
            let status = dryRun && s.status == "applied" ? "would apply" : s.status
            guard let r = s.report else {
                lines.append("source \(s.name): \(status)\(s.error.map { ": \($0)" } ?? "")")
                continue
            }
            let read = r.duplicatesDropped > 0
                ? "\(plural(r.programmesRead + r.duplicatesDropped, "programme element")) read, \(plural(r.duplicatesDropped, "duplicate")) dropped"
                : "\(plural(r.programmesRead, "programme")) read"
            lines.append("source \(s.name): \(status)\(s.error.map { ": \($0)" } ?? "") (\(read), safety guard \(r.guardVerdict))")
            lines.append("  channels:   \(r.channels.inserted) inserted, \(r.channels.updated) updated, \(r.channels.deleted) deleted, \(r.channels.unchanged) unchanged")
            lines.append("  programmes: \(r.programmes.inserted) inserted, \(r.programmes.updated) updated, \(r.programmes.deleted) deleted, \(r.programmes.unchanged) unchanged, \(r.keptAsHistory) kept as history")
            if !r.warnings.isEmpty {
                var byKind: [String: Int] = [:]
                for w in r.warnings { byKind[w.kind, default: 0] += 1 }
                lines.append("  warnings: " + byKind.keys.sorted().map { "\(byKind[$0] ?? 0) \($0)" }.joined(separator: ", "))
                if listWarnings {
                    for w in r.warnings {
                        let place = [w.file, w.line.map(String.init)].compactMap { $0 }.joined(separator: ":")
                        lines.append("    \(place.isEmpty ? "" : place + ": ")\(w.kind): \(w.message)")
                    }
                }
            }
            if showChanges && !r.changes.isEmpty {
                lines += ChangeRendering.text(r.changes, windows: r.windows, context: context, cap: maxChangesPerChannel)
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// "1 programme", "2 programmes".
func plural(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
