import Foundation
import Merge
import ObjectGraph
import Primitives
import XMLTVImport

/// Renders merge changes in the design's (docs/design.md#model-driven-diff) shape (entityName, id, attributes old/new, relationships
/// added/removed) and as text grouped by channel.
enum ChangeRendering {
    static func json(_ change: MergeChange, context: ObjectContext?) -> JSONValue {
        var d: [String: JSONValue] = ["entityName": .string(change.entity), "id": .string(identifier(change, context: context)),
                                      "change": .string(change.kind.rawValue)]
        if !change.attributes.isEmpty {
            var attributes: [String: JSONValue] = [:]
            for a in change.attributes { attributes[a.name] = .object(["old": jsonValue(a.old), "new": jsonValue(a.new)]) }
            d["attributes"] = .object(attributes)
        }
        if !change.relationships.isEmpty {
            var relationships: [String: JSONValue] = [:]
            for r in change.relationships {
                relationships[r.name] = .object(["added": .array(r.added.map { .array($0.map(jsonValue)) }),
                                                 "removed": .array(r.removed.map { .array($0.map(jsonValue)) })])
            }
            d["relationships"] = .object(relationships)
        }
        return .object(d)
    }

    static func jsonValue(_ v: Value) -> JSONValue {
        switch v {
        case .null: .null
        case .string(let s): .string(s)
        case .integer(let i): .integer(i)
        // JSON has no NaN or infinity: null.
        case .double(let d): d.isFinite ? .double(d) : .null
        case .bool(let b): .bool(b)
        case .date(let t): .string(UTCTime.iso8601(t))
        case .data(let d): .string(Data(d).base64EncodedString())
        }
    }

    /// The identity of the changed object, as users know it: a channel's XMLTV id, a programme's
    /// "channel/start/clump".
    static func identifier(_ change: MergeChange, context: ObjectContext?) -> String {
        func attr(_ name: String) -> Value? {
            change.attributes.first { $0.name == name }.map { $0.new.isNull ? $0.old : $0.new }
        }
        if change.entity == "Channel" {
            if let id = attr("xmltvId")?.stringValue { return id }
            if let id = try? context?.object(change.id, keys: ["xmltvId"])?["xmltvId"].stringValue { return id }
        }
        if change.entity == "Programme", let context,
           let p = try? context.object(change.id, keys: ["start", "clumpIndex", "channel"]),
           let channel = p.related("channel"),
           let channelID = try? context.object(channel, keys: ["xmltvId"])?["xmltvId"].stringValue {
            return "\(channelID)/\(p["start"])/\(p["clumpIndex"].integerValue ?? 0)"
        }
        if change.entity == "Programme", let start = attr("start") {
            return "\(change.owner.map { $0 + "/" } ?? "")\(start)/\(attr("clumpIndex")?.integerValue ?? 0)"
        }
        return change.id.description
    }

    static func text(_ changes: [MergeChange], windows: [String: (start: Int64, end: Int64)], context: ObjectContext?, cap: Int) -> [String] {
        var lines: [String] = []
        let channelChanges = changes.filter { $0.entity == "Channel" }
        for c in channelChanges.prefix(cap) { lines.append("  \(c.kind.rawValue) channel \(identifier(c, context: context))\(summary(c))") }
        if channelChanges.count > cap { lines.append("  … and \(channelChanges.count - cap) more channel changes") }
        var byChannel: [String: [String]] = [:]
        var order: [String] = []
        for c in changes where c.entity == "Programme" {
            let id = identifier(c, context: context)
            let channel = c.owner ?? id.split(separator: "/").first.map(String.init) ?? "?"
            if byChannel[channel] == nil { order.append(channel) }
            let title = c.attributes.first { $0.name == "title" }.map { ($0.new.isNull ? $0.old : $0.new).description }
            byChannel[channel, default: []].append("    \(c.kind.rawValue) \(id)\(title.map { " \"\($0)\"" } ?? "")\(summary(c))")
        }
        for channel in order {
            let entries = byChannel[channel]!
            var header = "  channel \(channel): \(entries.count) programme change\(entries.count == 1 ? "" : "s")"
            if let w = windows[channel] { header += ", window \(UTCTime.iso8601(w.start)) – \(UTCTime.iso8601(w.end))" }
            lines.append(header)
            lines += entries.prefix(cap)
            if entries.count > cap { lines.append("    … and \(entries.count - cap) more") }
        }
        return lines
    }

    private static func summary(_ c: MergeChange) -> String {
        guard c.kind == .update else { return "" }
        var parts = c.attributes.filter { $0.name != "contentHash" }.map { a -> String in
            let (old, new) = shortPair(a.old.description, a.new.description)
            return "\(a.name): \(old) → \(new)"
        }
        parts += c.relationships.map { "\($0.name): +\($0.added.count) −\($0.removed.count)" }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }

    /// Both values cut to about 40 characters around where they start to differ, so that two long
    /// texts that differ at the end do not look equal.
    static func shortPair(_ a: String, _ b: String) -> (String, String) {
        let common = zip(a, b).prefix { $0 == $1 }.count
        let skip = a.count > 40 || b.count > 40 ? max(0, common - 10) : 0
        func cut(_ s: String) -> String {
            var t = String(s.dropFirst(skip))
            if t.count > 40 { t = String(t.prefix(39)) + "…" }
            return (skip > 0 ? "…" : "") + t
        }
        return (cut(a), cut(b))
    }
}
