import Feeds
import Foundation
import Listings
import Merge
import ObjectGraph
import Primitives
import TestSupport
import Testing
import XMLTVImport

/// The repository root, from this file's path (Tests/FeedsTests/Support.swift).
let repositoryRoot = Repository.root

/// A store set up the way the nightly job sets it up, without the Job module: the aggregates,
/// the dirty channels and the feeds' revision stamps are kept by observers.
struct ObservedStore {
    let store: Store
    let dirty = DirtyOwnersObserver(parentEntity: "Channel", relationship: "programmes")
    let clock = TestClock()

    init(path: String) throws {
        store = try Store(path: path, model: TVModel.model())
        let clock = self.clock
        store.addObserver(AggregateMaintainer(parentEntity: "Channel", relationship: "programmes", countKey: "programmeCount",
                                              lastChangedKey: "programmesChangedAt", clock: { clock.now }))
        store.addObserver(dirty)
        store.addObserver(ProgrammeRevisionObserver(clock: { clock.now }))
    }

    /// Imports the files as source `source`, the inserted programmes stamped with the clock.
    @discardableResult
    func importGuide(_ files: [String], source: String = "t", now: Int64) throws -> SourceImportReport {
        var options = ImportOptions(source: source, force: true, now: now)
        options.programmeInsertValues = ["changedAt": .date(clock.now)]
        options.updateStamps = ["Programme": ProgrammeRevision.stamp(now: clock.now)]
        return try XMLTVImport.importGuide(into: store, files: files, options: options, dryRun: false)
    }
}

/// "Now" for the observers, set by the test.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64 = 1_900_000_000
    var now: Int64 {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

func makeTemporaryDirectory(_ name: String = "FeedsTests") throws -> String {
    let path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func iso(_ seconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}

func mtime(_ path: String) throws -> Date {
    try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as! Date
}

/// Every published file of a directory (the exporter's hidden state file left out) with its bytes.
func snapshot(_ directory: String) throws -> [String: Data] {
    var out: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: directory) where !name.hasPrefix(".") {
        out[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
    }
    return out
}

/// Runs a program (TestSupport's runner).
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
    let result = try Subprocess.run(executable, arguments)
    return (result.status, result.stdout, result.stderr)
}

/// A minimal reading of our own feeds for the incremental tests (the independent parsers are
/// checked in EndToEndParserTests): unfolded content lines, VEVENTs as property maps.
enum FeedText {
    static func logicalLines(_ data: Data) -> [String] {
        let text = String(decoding: data, as: UTF8.self)
        var lines: [String] = []
        for physical in text.components(separatedBy: "\r\n") where !physical.isEmpty {
            if physical.hasPrefix(" "), !lines.isEmpty { lines[lines.count - 1] += physical.dropFirst() } else { lines.append(physical) }
        }
        return lines
    }

    /// Calendar-level properties (name without parameters → raw value).
    static func calendarProperties(_ data: Data) -> [String: String] {
        var out: [String: String] = [:]
        for line in logicalLines(data) {
            if line == "BEGIN:VEVENT" { break }
            let (name, value) = split(line)
            if out[name] == nil { out[name] = value }
        }
        return out
    }

    /// UID → properties of each VEVENT.
    static func events(_ data: Data) -> [String: [String: String]] {
        var out: [String: [String: String]] = [:]
        var current: [String: String]?
        for line in logicalLines(data) {
            if line == "BEGIN:VEVENT" { current = [:]; continue }
            if line == "END:VEVENT", let c = current { out[c["UID"] ?? ""] = c; current = nil; continue }
            if current != nil {
                let (name, value) = split(line)
                current![name] = value
            }
        }
        return out
    }

    static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        let head = line[..<colon]
        let name = head.split(separator: ";").first.map(String.init) ?? String(head)
        return (name, String(line[line.index(after: colon)...]))
    }
}
