import Foundation
import TestSupport
import Listings
import Merge
import ObjectGraph
import XMLTV
import XMLTVImport

/// 2030-01-01T00:00:00Z: every test guide lies around this instant.
let base: Int64 = 1_893_456_000
let hour: Int64 = 3600
/// A "now" before every test programme, so the guard's "future" check passes.
let testNow: Int64 = base - 24 * hour

struct GP {
    var channel: String
    var start: Int64
    var stop: Int64?
    var title: String
    var desc: String? = nil
    var clump: (Int, Int)? = nil
    var categories: [(String, String?)] = []
    var credits: [(String, String)] = []   // (role element, name), in document order
    var offsetMinutes = 0
}

/// Builds an XMLTV document: channel declarations then programmes, in the order given.
func guideXML(channels: [String], programmes: [GP]) -> String {
    var s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n"
    for c in channels {
        s += "  <channel id=\"\(GuideText.escaped(c))\"><display-name>\(GuideText.escaped(c)) name</display-name></channel>\n"
    }
    for p in programmes {
        s += "  <programme start=\"\(GuideText.time(p.start, offsetMinutes: p.offsetMinutes))\""
        if let stop = p.stop { s += " stop=\"\(GuideText.time(stop, offsetMinutes: p.offsetMinutes))\"" }
        s += " channel=\"\(GuideText.escaped(p.channel))\""
        if let (i, n) = p.clump { s += " clumpidx=\"\(i)/\(n)\"" }
        s += ">\n    <title>\(GuideText.escaped(p.title))</title>\n"
        if let d = p.desc { s += "    <desc>\(GuideText.escaped(d))</desc>\n" }
        if !p.credits.isEmpty {
            s += "    <credits>"
            for (role, name) in p.credits { s += "<\(role)>\(GuideText.escaped(name))</\(role)>" }
            s += "</credits>\n"
        }
        for (name, lang) in p.categories {
            s += "    <category\(lang.map { " lang=\"\($0)\"" } ?? "")>\(GuideText.escaped(name))</category>\n"
        }
        s += "  </programme>\n"
    }
    return s + "</tv>\n"
}

final class TempDir {
    let path: String
    private var n = 0
    init() {
        path = NSTemporaryDirectory() + "mergetests-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func write(_ xml: String) -> String {
        n += 1
        let file = path + "/guide\(n).xml"
        try! Data(xml.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// One in-memory store plus helpers to import guides into it.
final class Harness {
    let store: Store
    let dir = TempDir()
    init() throws { store = try Store.inMemory(model: TVModel.model()) }

    /// `ImportOptions.maxChannelBytes` for this harness's imports (nil: the default).
    var maxChannelBytes: Int64?

    func options(_ source: String = "S", force: Bool = false, now: Int64 = testNow) -> ImportOptions {
        var options = ImportOptions(source: source, force: force, now: now)
        if let maxChannelBytes { options.maxChannelBytes = maxChannelBytes }
        return options
    }

    @discardableResult
    func run(_ xml: String, source: String = "S", force: Bool = false, now: Int64 = testNow, dryRun: Bool = false) throws -> SourceImportReport {
        try importGuide(into: store, files: [dir.write(xml)], options: options(source, force: force, now: now), dryRun: dryRun)
    }

    @discardableResult
    func run(channels: [String], _ programmes: [GP], source: String = "S", force: Bool = false, now: Int64 = testNow,
             dryRun: Bool = false) throws -> SourceImportReport {
        try run(guideXML(channels: channels, programmes: programmes), source: source, force: force, now: now, dryRun: dryRun)
    }

    func count(_ entity: String, where p: ObjectPredicate = .all) throws -> Int {
        try store.read { try $0.count(entity, where: p) }
    }

    /// Every row of every listings entity, with its row id: equal before/after means nothing changed.
    func checksum() throws -> [String] {
        try store.read { ctx in
            var rows: [String] = []
            for e in ["Channel", "Programme", "Credit", "Category"] {
                for o in try ctx.fetchAll(e) {
                    rows.append("\(e)#\(o.id.rowID):" + o.values.map { "\($0)" }.joined(separator: "|"))
                }
            }
            return rows.sorted()
        }
    }

    func channelIDs() throws -> [Int64: String] {
        try store.read { ctx in
            var m: [Int64: String] = [:]
            for o in try ctx.fetchAll("Channel", keys: ["xmltvId"]) { m[o.id.rowID] = o["xmltvId"].stringValue! }
            return m
        }
    }

    struct Key: Hashable, CustomStringConvertible {
        var channel: String, start: Int64, clump: Int64, title: String
        var description: String { "\(channel)@\(start - base)/\(clump):\(title)" }
    }

    /// (channel, start, clump, title) of every stored programme.
    func programmeKeys() throws -> Set<Key> {
        let channels = try channelIDs()
        return try store.read { ctx in
            var s = Set<Key>()
            for o in try ctx.fetchAll("Programme", keys: ["channel", "start", "clumpIndex", "title"]) {
                s.insert(Key(channel: channels[o["channel"].integerValue!] ?? "?", start: o["start"].integerValue!,
                             clump: o["clumpIndex"].integerValue!, title: o["title"].stringValue ?? ""))
            }
            return s
        }
    }

    func channel(_ xmltvId: String) throws -> FetchedObject? {
        try store.read { try $0.first("Channel", where: .compare("xmltvId", .equal, .string(xmltvId))) }
    }

    func programme(_ channel: String, _ start: Int64, clump: Int64 = 0) throws -> FetchedObject? {
        guard let c = try self.channel(channel) else { return nil }
        return try store.read {
            try $0.first("Programme", where: .and([.related("channel", c.id), .compare("start", .equal, .date(start)),
                                                   .compare("clumpIndex", .equal, .integer(clump))]))
        }
    }
}

func isSafetyGuard(_ error: any Error) -> Bool {
    if case ImportError.safetyGuard = error { return true }
    return false
}

/// Hourly programmes on `channel` at slots `slots` (hours after `base`), titled "<channel> <slot>".
func hourly(_ channel: String, _ slots: [Int], title: (Int) -> String = { "T\($0)" }) -> [GP] {
    slots.map { GP(channel: channel, start: base + Int64($0) * hour, stop: base + Int64($0 + 1) * hour, title: title($0)) }
}
