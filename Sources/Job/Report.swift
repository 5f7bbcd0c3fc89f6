import Foundation
import Merge
import ObjectGraph
import Primitives
import XMLTVImport

/// The report of `run` and `import`: the user contract's JSON document (docs/design.md#user-contract), or text for people.
public struct RunReport: Sendable {
    public struct Source: Sendable {
        public var name: String
        public var status: String            // applied | unchanged | skipped | failed
        public var error: String?
        public var report: SourceImportReport?
    }
    public var dryRun: Bool
    public var sources: [Source] = []
    /// The config's playlists as written (`PlaylistStep.runConfigured`): counts and unmatched entries.
    public var playlists: [JSONValue] = []

    public init(dryRun: Bool) { self.dryRun = dryRun }

    // MARK: JSON

    public func json(model: ObjectModel, context: ObjectContext?) -> String {
        func count(_ n: Int) -> JSONValue { .integer(Int64(n)) }
        var summary: [String: JSONValue] = [:]
        for entity in ["Channel", "Programme"] {
            var t = MergeTally()
            for s in sources { if let r = s.report { t += entity == "Channel" ? r.channels : r.programmes } }
            var counts = ["inserted": count(t.inserted), "updated": count(t.updated), "deleted": count(t.deleted), "unchanged": count(t.unchanged)]
            if entity == "Programme" { counts["keptAsHistory"] = count(sources.compactMap(\.report).reduce(0) { $0 + $1.keptAsHistory }) }
            summary[entity] = .object(counts)
        }
        var document: [String: JSONValue] = [
            "dryRun": .bool(dryRun),
            "sources": .array(sources.map { s in
                var d: [String: JSONValue] = ["name": .string(s.name), "status": .string(s.status), "error": s.error.map(JSONValue.string) ?? .null]
                if let r = s.report {
                    d["guard"] = .string(r.guardVerdict)
                    d["programmesRead"] = count(r.programmesRead)
                    d["duplicatesDropped"] = count(r.duplicatesDropped)
                    d["lostEdits"] = .array(r.lostEdits.map { edit in
                        .object(["channel": .string(edit.channel), "start": .string(UTCTime.iso8601(edit.start)),
                                 "title": edit.title.map(JSONValue.string) ?? .null,
                                 "values": .object(edit.values.mapValues(JSONValue.string))])
                    })
                    // What the shown guide (feeds, XMLTV export, serve) changed by, once sources were resolved.
                    func shown(_ t: MergeTally) -> JSONValue { .object(["inserted": count(t.inserted), "updated": count(t.updated), "deleted": count(t.deleted)]) }
                    d["shown"] = .object(["Channel": shown(r.shownChannels), "Programme": shown(r.shownProgrammes)])
                }
                return .object(d)
            }),
            "summary": .object(summary),
            "changes": .array(sources.compactMap(\.report).flatMap { $0.changes.map { change in ChangeRendering.json(change, context: context) } }),
            "warnings": .array(sources.compactMap(\.report).flatMap { r in
                r.warnings.map { w in
                    var d: [String: JSONValue] = ["kind": .string(w.kind), "message": .string(w.message), "source": .string(w.source)]
                    d["line"] = w.line.map(count) ?? .null
                    if let f = w.file { d["file"] = .string(f) }
                    if let c = w.channel { d["channel"] = .string(c) }
                    return .object(d)
                }
            }),
        ]
        if !playlists.isEmpty { document["playlists"] = .array(playlists) }
        var text = JSONText(keyOrder: JSONText.serializationOrder)
        text.append(.object(document), pretty: true)
        return text.string
    }

    // MARK: Text

    /// A short text for people: one line per source and entity, the warnings counted by kind
    /// (verbose: each with its file and line), and (verbose or dry run) the changes grouped by
    /// channel, capped.
    /// " (202 inserted, 16 updated, 17 deleted programmes)": what the shown guide changed by.
    var countsInWords: String {
        var t = MergeTally()
        for s in sources { if let r = s.report { t += r.shownProgrammes } }
        return " (\(t.inserted) inserted, \(t.updated) updated, \(t.deleted) deleted programmes)"
    }

    /// `RTE2.ie 2026-11-27T08:45:00Z "Hockey World Cup": note="record this"`.
    static func describe(_ edit: LostEdit) -> String {
        "\(edit.channel) \(UTCTime.iso8601(edit.start))" + (edit.title.map { " \"\($0)\"" } ?? "") + ": "
            + edit.values.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ", ")
    }

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
            let shown = r.shownProgrammes, shownChannels = r.shownChannels
            if shown.withoutUnchanged != r.programmes.withoutUnchanged || shownChannels.withoutUnchanged != r.channels.withoutUnchanged {
                // Other sources overlap this one: say what the shown guide did.
                lines.append("  shown guide: channels \(shownChannels.inserted) inserted, \(shownChannels.updated) updated, \(shownChannels.deleted) deleted; "
                             + "programmes \(shown.inserted) inserted, \(shown.updated) updated, \(shown.deleted) deleted")
            }
            if !r.lostEdits.isEmpty {
                // Said even without --verbose: a user's note went with a programme the guide cancelled.
                lines.append("  local edits lost: \(plural(r.lostEdits.count, "deleted programme")) carried them")
                for edit in r.lostEdits.prefix(20) { lines.append("    " + Self.describe(edit)) }
                if r.lostEdits.count > 20 { lines.append("    … and \(r.lostEdits.count - 20) more (--format json lists all)") }
            }
            if !r.warnings.isEmpty {
                var byKind: [String: Int] = [:]
                for w in r.warnings { byKind[w.kind, default: 0] += 1 }
                lines.append("  warnings: " + byKind.keys.sorted().map { "\(byKind[$0] ?? 0) \($0)" }.joined(separator: ", "))
                if listWarnings {
                    // In reading order, file by file: the merge reports them channel by channel.
                    let ordered = r.warnings.enumerated().sorted {
                        ($0.element.file ?? "", $0.element.line ?? 0, $0.offset) < ($1.element.file ?? "", $1.element.line ?? 0, $1.offset)
                    }.map(\.element)
                    for w in ordered {
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

extension MergeTally {
    /// The tally with `unchanged` left out (the shown guide counts only what it looked at).
    var withoutUnchanged: MergeTally {
        var t = self
        t.unchanged = 0
        return t
    }
}

/// "1 programme", "2 programmes".
func plural(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}

extension JSONText {
    /// The order `JSONSerialization` writes `.sortedKeys` in (numeric, case-insensitive: "a2"
    /// before "a10", "ab" before "B"), for the documents it used to write, which keep their bytes.
    static let serializationOrder: @Sendable (String, String) -> Bool = { a, b in
        a.compare(b, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.startIndex..<a.endIndex,
                  locale: Locale(identifier: "")) == .orderedAscending
    }
}
