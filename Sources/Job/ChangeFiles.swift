import Foundation
import ObjectGraph

/// The change file of each real run (seed 000's diff of the database before and after), so that
/// another system can be sent just what changed, and `undo` can revert the last import.
///
/// `<changes>/<run-id>.json` holds the `ChangeDocument`; `<run-id>.patch.json` the same as an
/// RFC 6902 JSON Patch. Run ids sort by time: `20261122T030000Z-001`.
public struct ChangeFiles {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// `changes/` beside the database.
    public init(database: String) {
        let dir = (database as NSString).deletingLastPathComponent
        directory = (dir.isEmpty ? "." : dir) + "/changes"
    }

    /// The database as it was before a run changed it (a frozen read view, no copy): the
    /// "before" side of the diff, and an observer of the programmes written since, so that the
    /// diff reads only those.
    public final class Before {
        let view: FrozenStoreView
        let store: Store
        let touched = TouchedObjectsObserver(entities: ["Programme"])
        private var isDiscarded = false
        init(view: FrozenStoreView, store: Store) {
            self.view = view
            self.store = store
        }
        func discard() {
            guard !isDiscarded else { return }
            isDiscarded = true
            view.close()
            store.checkpoint()   // the view held the log back: fold it in now
        }
        deinit { discard() }
    }

    public static func takeBefore(of store: Store) throws -> Before {
        // Earlier versions copied the database beside it; a killed run's copy is removed here.
        removeLeftovers(of: store.path)
        let before = Before(view: try FrozenStoreView(of: store), store: store)
        store.addObserver(before.touched)
        return before
    }

    /// Copies left by killed runs (their process is gone) would otherwise stay for ever.
    static func removeLeftovers(of database: String) {
        let url = URL(fileURLWithPath: database)
        let dir = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + ".before-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? [] where name.hasPrefix(prefix) {
            let pidText = name.dropFirst(prefix.count).prefix { $0.isNumber }
            guard let pid = Int32(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: (dir.isEmpty ? "." : dir) + "/" + name)
        }
    }

    /// Diffs `before` with the store now and writes the change file, streaming (one root's
    /// changes in memory at a time); nil when nothing changed. `channels`, when given, are the
    /// only channels present on both sides that can have changed (the importer's touched ones);
    /// `touched`, the row ids of the objects written since `before` (`Before.touched`), so that
    /// only those are read and compared.
    @discardableResult
    public func record(before: Before, after store: Store, runID: String, channels: Set<String>? = nil) throws -> String? {
        defer { before.discard() }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // A sequence number keeps two runs of one second apart and in order: a change file is
        // never overwritten, and names sort by time.
        var n = 1
        var name: String { "\(runID)-\(String(format: "%03d", n))" }
        while FileManager.default.fileExists(atPath: directory + "/\(name).json")
            || FileManager.default.fileExists(atPath: directory + "/\(name).undone.json") {
            n += 1
        }
        let path = directory + "/\(name).json", patchPath = directory + "/\(name).patch.json"
        let document = JSONStreamWriter(path: path + ".tmp"), patch = JSONStreamWriter(path: patchPath + ".tmp")
        let diff = try GraphDiff(model: store.model)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var count = 0
        var operations = 0
        var text = JSONText()
        do {
            try document.write(#"{"excluded":[],"model":"# + String(decoding: try encoder.encode(store.fingerprint), as: UTF8.self) + #","changes":["#)
            try patch.write("[")
            try before.view.read { old in
                try store.read { new in
                    try diff.diff(from: old, to: new, comparing: channels.map { set in
                        { entity, id in entity != "Channel" || (id.first?.value.stringValue).map(set.contains) ?? true }
                    }, touched: before.touched.touched) { change in
                        text.removeAll()
                        text.append(change)
                        try document.write(count == 0 ? "" : ",")
                        try document.write(text.bytes)
                        for op in ChangeDocument(model: store.fingerprint, changes: [change]).jsonPatch() {
                            text.removeAll()
                            text.append(op)
                            try patch.write(operations == 0 ? "" : ",")
                            try patch.write(text.bytes)
                            operations += 1
                        }
                        count += 1
                    }
                }
            }
            try document.write("]}")
            try patch.write("]")
            try document.close()
            try patch.close()
        } catch {
            document.discard()
            patch.discard()
            throw error
        }
        if count == 0 {
            document.discard()
            patch.discard()
            return nil
        }
        try FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
        try FileManager.default.moveItem(atPath: patchPath + ".tmp", toPath: patchPath)
        return path
    }

    /// The newest change file not undone yet.
    public func latest() -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        // Only files named by a run id: anything else a user keeps in the folder is not undone.
        return names.filter { Self.isRunID($0.prefix(16)) && $0.hasSuffix(".json") && !$0.hasSuffix(".patch.json") && !$0.hasSuffix(".undone.json") }
            .sorted().last.map { directory + "/" + $0 }
    }

    /// Removes the files of runs older than `cutoff` (run ids sort by time, so the name says),
    /// except those of the newest change file not undone yet: `undo`'s target stays whatever its
    /// age. Without this a nightly job would fill the disk (a first import's file holds the whole
    /// guide). Returns how many files went; files that are not change files are left alone.
    @discardableResult
    public func prune(olderThan cutoff: Int64) -> Int {
        let oldest = Self.runID(cutoff)
        let kept = latest().map { String(($0 as NSString).lastPathComponent.dropLast(".json".count)) }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var removed = 0
        for name in names where name.hasSuffix(".json") && Self.isRunID(name.prefix(16)) && name.prefix(16) < oldest {
            if let kept, name == kept + ".json" || name == kept + ".patch.json" { continue }
            if (try? FileManager.default.removeItem(atPath: directory + "/" + name)) != nil { removed += 1 }
        }
        return removed
    }

    /// `20261122T030000Z`: what `runID` makes.
    static func isRunID(_ text: Substring) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return false }
        return bytes.enumerated().allSatisfy { i, b in i == 8 || i == 15 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
    }

    public static func runID(_ time: Int64) -> String {
        let c = UTCTime.components(time)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", c.year, c.month, c.day, c.hour, c.minute, c.second)
    }
}

/// `tvimport apply --db OTHER FILE` and `tvimport undo --db FILE`.
public enum ApplyCommand {
    public static func apply(database: String, file: String, dryRun: Bool) throws -> (output: String, status: ExitStatus) {
        let model = try StoreAccess.model(forDatabase: database, userModules: [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let lock = try RunLock(path: database + ".lock")
        defer { lock.release() }
        let document: ChangeDocument
        do { document = try ChangeDocument(contentsOfFile: file) } catch {
            throw JobError(FileManager.default.fileExists(atPath: file) ? .dataError : .noInput, "\(file): \(error)")
        }
        return try run(document, on: store, dryRun: dryRun, what: file)
    }

    public static func undo(database: String) throws -> (output: String, status: ExitStatus) {
        let model = try StoreAccess.model(forDatabase: database, userModules: [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let lock = try RunLock(path: database + ".lock")
        defer { lock.release() }
        let files = ChangeFiles(database: database)
        guard let latest = files.latest() else {
            throw JobError(.noInput, "no change file to undo in \(files.directory)")
        }
        let result = try run(try ChangeDocument(contentsOfFile: latest).inverted(), on: store, dryRun: false, what: "undo of \(latest)")
        if result.status == .success {
            try FileManager.default.moveItem(atPath: latest, toPath: latest.replacingOccurrences(of: ".json", with: ".undone.json"))
        }
        return result
    }

    static func run(_ document: ChangeDocument, on store: Store, dryRun: Bool, what: String) throws -> (output: String, status: ExitStatus) {
        let report: ApplyReport
        do {
            report = try document.apply(to: store, dryRun: dryRun)
        } catch let error as DiffError {
            throw JobError(.dataError, "\(what): \(error)")
        }
        var lines = ["\(what): \(report.applied) change\(report.applied == 1 ? "" : "s") \(dryRun ? "would be " : "")applied, \(report.conflicts.count) conflict\(report.conflicts.count == 1 ? "" : "s")"]
        lines += report.conflicts.prefix(50).map { "  conflict: \($0)" }
        if report.conflicts.count > 50 { lines.append("  … and \(report.conflicts.count - 50) more conflicts") }
        return (lines.joined(separator: "\n"), report.conflicts.isEmpty ? .success : .dataError)
    }
}

/// Appends text to a file through a buffer, counting writes.
final class JSONStreamWriter {
    let path: String
    private var buffer: [UInt8] = []
    private var handle: FileHandle?

    init(path: String) { self.path = path }

    func write(_ text: String) throws { try write(text.utf8) }

    func write<Bytes: Sequence<UInt8>>(_ bytes: Bytes) throws {
        if handle == nil {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw JobError(.cannotCreate, "cannot write \(path)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        }
        buffer.append(contentsOf: bytes)
        if buffer.count > 1 << 20 { try flush() }
    }

    private func flush() throws {
        try handle?.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        try handle?.close()
        handle = nil
    }

    func discard() {
        try? handle?.close()
        handle = nil
        try? FileManager.default.removeItem(atPath: path)
    }
}
