import Foundation
import ObjectGraph
import Primitives

/// The change file of each real run (the diff's format: what the run's merges decided, recorded as
/// they decided it), so that another system can be sent just what changed, and `undo` can revert
/// the last import.
///
/// `<changes>/<run-id>.json` holds the `ChangeDocument`; `<run-id>.patch.json`, when the config
/// asks for it (or `tvimport changes --patch`), the same as an RFC 6902 JSON Patch. Run ids sort
/// by time: `20261122T030000Z-001`. Each database records its own files (`ChangeRegister`).
public struct ChangeFiles {
    public let directory: String

    /// The folder as an absolute path: the register records each file by the path made here,
    /// so that `undo` and `serve` find it from any working directory.
    public init(directory: String) { self.directory = Self.absolute(directory) }

    /// `changes/` beside the database.
    public init(database: String) {
        let dir = (database as NSString).deletingLastPathComponent
        self.init(directory: (dir.isEmpty ? "." : dir) + "/changes")
    }

    /// `path` made absolute against the working directory (or `base`), `.` and `..` resolved.
    static func absolute(_ path: String, against base: String? = nil) -> String {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL.path }
        let folder = base ?? FileManager.default.currentDirectoryPath
        return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: folder, isDirectory: true)).standardizedFileURL.path
    }

    /// A change file being written while a run changes the store: the store's own change
    /// stream (`ChangeRecorder`), one writer, one batch in memory at a time.
    public final class Recording {
        let recorder: ChangeRecorder
        let path: String
        let writesPatch: Bool

        init(recorder: ChangeRecorder, path: String, writesPatch: Bool) {
            self.recorder = recorder
            self.path = path
            self.writesPatch = writesPatch
        }

        /// Ends the file and gives it its name; nil (and no file) when the run changed nothing.
        /// With `writesPatch`, the JSON Patch form is written beside it.
        public func finish() throws -> String? {
            let count: Int
            do { count = try recorder.finish() } catch {
                recorder.discard()
                throw error
            }
            guard count > 0 else {
                recorder.discard()
                return nil
            }
            try DurableFile.moveIntoPlace(recorder.path, to: path)
            if writesPatch { try ChangeFiles.writePatch(of: path) }
            return path
        }

        /// Stops recording and removes the unfinished file.
        public func discard() { recorder.discard() }

        deinit { recorder.discard() }
    }

    /// Starts recording what `store`'s next transactions change, into this folder's file for
    /// `runID` (a sequence number keeps two runs of one second apart and in order: a change
    /// file is never overwritten, and names sort by time).
    public func startRecording(_ store: Store, runID: String, writesPatch: Bool = false) throws -> Recording {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        removeLeftovers()
        var n = 1
        var name: String { "\(runID)-\(String(format: "%03d", n))" }
        while FileManager.default.fileExists(atPath: directory + "/\(name).json")
            || FileManager.default.fileExists(atPath: directory + "/\(name).undone.json")
            || FileManager.default.fileExists(atPath: directory + "/\(name).json.\(getpid()).tmp") {
            n += 1
        }
        let path = directory + "/\(name).json"
        let recorder = try ChangeRecorder(model: store.model, path: path + ".\(getpid()).tmp")
        store.addObserver(recorder)
        return Recording(recorder: recorder, path: path, writesPatch: writesPatch)
    }

    /// Unfinished files of killed runs (`<name>.json.<pid>.tmp`, their process gone) would
    /// otherwise stay for ever.
    func removeLeftovers() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".tmp") {
            let parts = name.split(separator: ".")
            guard parts.count >= 4, parts[parts.count - 3] == "json", let pid = Int32(parts[parts.count - 2]),
                  pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }

    /// Writes `<run-id>.patch.json` beside a change file: the same changes as RFC 6902 JSON Patch.
    public static func writePatch(of path: String) throws {
        let patchPath = String(path.dropLast(".json".count)) + ".patch.json"
        let document = try ChangeDocument(contentsOfFile: path)
        let writer = JSONStreamWriter(path: patchPath + ".tmp")
        var text = JSONText()
        do {
            try writer.write("[")
            for (i, op) in document.jsonPatch().enumerated() {
                text.removeAll()
                text.append(op)
                try writer.write(i == 0 ? "" : ",")
                try writer.write(text.bytes)
            }
            try writer.write("]")
            try writer.close()
        } catch {
            writer.discard()
            throw error
        }
        try DurableFile.moveIntoPlace(patchPath + ".tmp", to: patchPath)
    }

    /// The change file of `run` (a run id, with or without its sequence number, or a path), as
    /// RFC 6902 JSON Patch: `tvimport changes --patch`.
    public func patch(of run: String) throws -> String {
        var path = run
        if !FileManager.default.fileExists(atPath: path) {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            guard let name = names.last(where: { ($0 == run + ".json" || ($0.hasPrefix(run) && Self.isRunID($0.prefix(16))))
                    && $0.hasSuffix(".json") && !$0.hasSuffix(".patch.json") }) else {
                throw JobError(.noInput, "no change file of run \(run) in \(directory)")
            }
            path = directory + "/" + name
        }
        let document: ChangeDocument
        do { document = try ChangeDocument(contentsOfFile: path) } catch {
            throw JobError(.dataError, "\(path): \(error)")
        }
        var text = JSONText(), out = "["
        for (i, op) in document.jsonPatch().enumerated() {
            text.removeAll()
            text.append(op)
            out += (i == 0 ? "" : ",") + text.string
        }
        return out + "]"
    }

    /// Removes the files of runs older than `cutoff` (run ids sort by time, so the name says),
    /// except `keeping` (the database's newest import not undone yet: `undo`'s target stays
    /// whatever its age). Without this a nightly job would fill the disk (a first import's file
    /// holds the whole guide). Returns how many files went; files that are not change files are
    /// left alone.
    @discardableResult
    public func prune(olderThan cutoff: Int64, keeping: String? = nil) -> Int {
        let oldest = Self.runID(cutoff)
        let kept = keeping.map { String(($0 as NSString).lastPathComponent.dropLast(".json".count)) }
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
        let started = Int64(Date().timeIntervalSince1970)
        let result = try run(document, on: store, dryRun: dryRun, what: file)
        if !dryRun {
            try? RunLog.record(database: database, started: started, command: "apply", dryRun: false, exitCode: result.status.rawValue,
                               outcome: result.output.split(separator: "\n").first.map(String.init) ?? "")
        }
        return result
    }

    /// Reverts this database's newest import not undone yet (its own, from its register: never
    /// another database's file that shares the folder), all or nothing: one transaction that
    /// commits only when every change applies, and marks the import undone in the same
    /// transaction, so that a second `undo` takes the import before.
    public static func undo(database: String, expecting runID: String? = nil) throws -> (output: String, status: ExitStatus) {
        let model = try StoreAccess.model(forDatabase: database, userModules: [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let lock = try RunLock(path: database + ".lock")
        defer { lock.release() }
        let started = Int64(Date().timeIntervalSince1970)
        func log(_ status: ExitStatus, _ outcome: String) {
            try? RunLog.record(database: database, started: started, command: "undo", dryRun: false, exitCode: status.rawValue, outcome: outcome)
        }
        guard let entry = try ChangeRegister.latest(in: store) else {
            log(.noInput, "nothing to undo")
            throw JobError(.noInput, "nothing to undo: \(database) has no change (an import, a run or an edit) with a change file that is not undone yet")
        }
        if let runID, runID != entry.runID {
            // A page confirmed another change than the newest one now (a run or an edit came between).
            let now = try ChangeRegister.describe(entry, in: store)
            throw JobError(.tempFail, "the newest change is now \(now.about), made \(now.time), not the one confirmed; nothing changed")
        }
        func document() throws -> ChangeDocument {
            do { return try ChangeDocument(contentsOfFile: entry.path) } catch {
                let missing = !FileManager.default.fileExists(atPath: entry.path)
                log(missing ? .noInput : .dataError, "change file of \(entry.runID) unreadable")
                throw JobError(missing ? .noInput : .dataError, "cannot undo the import \(entry.runID): its change file \(entry.path) "
                               + (missing ? "is missing (removed, or pruned after changeFilesDays)" : "is unreadable: \(error)") + "; nothing changed")
            }
        }
        let what = "undo of \(try ChangeRegister.describe(entry, in: store).about), made \(entry.runID) (\(entry.path))"
        let priorities = try ChangeRegister.priorities(of: entry.runID, in: store)
        let writtenLast = try ChangeRegister.writeToken(of: entry, in: store)
        func undone(_ context: ObjectContext) throws {
            try ChangeRegister.markUndone(entry, in: context)
            try ChangeRegister.restorePriorities(priorities, in: context)
            // The sources' rows no longer hold what their last downloads gave.
            try FetchState.forgetAll(in: context)
        }
        let report: ApplyReport
        do {
            // Nothing wrote since the change (the usual undo, right after an import): the store
            // holds what the change left. Made to an empty store (a first import), the store is
            // emptied; otherwise its inserted objects are deleted with what they own, read from
            // the file only as a count. Anything else, and the whole file is read and every
            // object checked.
            let untouched = try writtenLast.map { try store.writeToken() == $0 } ?? false
            if untouched, let writtenLast, try ChangeRegister.wasMadeOnEmptyStore(entry, in: store),
               let emptied = try UndoTransaction.runEmptying(store, writtenLast: writtenLast, onSuccess: undone) {
                report = emptied
            } else if untouched, let writtenLast,
               let shallow = try? ChangeDocument(contentsOfFile: entry.path, readingInsertedMembers: false),
               let trusted = try UndoTransaction.runTrusted(shallow.inverted(), on: store, writtenLast: writtenLast, onSuccess: undone) {
                report = trusted
            } else {
                report = try UndoTransaction.run(document().inverted(), on: store, unlessWrittenSince: writtenLast, onSuccess: undone)
            }
        } catch let error as DiffError {
            log(.dataError, "\(what): \(error)")
            throw JobError(.dataError, "\(what): \(error); nothing changed")
        }
        if !report.conflicts.isEmpty {
            var lines = ["\(what) refused: \(report.conflicts.count) conflict\(report.conflicts.count == 1 ? "" : "s") (objects changed since, by a later import, an apply or an edit); nothing changed"]
            lines += report.conflicts.prefix(50).map { "  conflict: \($0)" }
            if report.conflicts.count > 50 { lines.append("  … and \(report.conflicts.count - 50) more conflicts") }
            log(.dataError, "refused: \(report.conflicts.count) conflicts; nothing changed")
            return (lines.joined(separator: "\n"), .dataError)
        }
        // An undo that left no object (of a first import, say) gives the file's pages back: best
        // effort, as the compaction itself, so that the undo, done, never reports a failure here.
        if (try? store.holdsNoObjects()) == true { store.compact() }
        // The import is undone in the database; its files follow (best effort: the register decides).
        let undone = String(entry.path.dropLast(".json".count)) + ".undone.json"
        try? FileManager.default.moveItem(atPath: entry.path, toPath: undone)
        try? FileManager.default.removeItem(atPath: String(entry.path.dropLast(".json".count)) + ".patch.json")
        let line = "\(what): \(report.applied) change\(report.applied == 1 ? "" : "s") undone"
        log(.success, "\(entry.runID): \(report.applied) changes undone")
        return (line, .success)
    }

    /// The change `undo` would revert now, described (for a page's button and confirmation).
    public static func newestChange(database: String) throws -> ChangeRegister.Description? {
        let model = try StoreAccess.model(forDatabase: database, userModules: [])
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        return try ChangeRegister.latestDescription(in: store)
    }

    static func run(_ document: ChangeDocument, on store: Store, dryRun: Bool, what: String) throws -> (output: String, status: ExitStatus) {
        let report: ApplyReport
        do {
            guard store.acceptedFingerprints.contains(document.model) else { throw DiffError.modelMismatch(expected: document.model, found: store.fingerprint) }
            report = try store.write(dryRun: dryRun) { context in
                let report = try document.apply(in: context)
                if report.applied > 0 { try FetchState.forgetAll(in: context) }
                return report
            }.result
        } catch let error as DiffError {
            throw JobError(.dataError, "\(what): \(error)")
        }
        var lines = ["\(what): \(report.applied) change\(report.applied == 1 ? "" : "s") \(dryRun ? "would be " : "")applied, \(report.conflicts.count) conflict\(report.conflicts.count == 1 ? "" : "s")"]
        lines += report.conflicts.prefix(50).map { "  conflict: \($0)" }
        if report.conflicts.count > 50 { lines.append("  … and \(report.conflicts.count - 50) more conflicts") }
        return (lines.joined(separator: "\n"), report.conflicts.isEmpty ? .success : .dataError)
    }
}

/// The change files of one database, in the database (`_tvimport_changes`): the run id and path of
/// each import's file, and whether it was undone. Several databases may share one `changes/`
/// folder; `undo` reads only its own database's register.
public enum ChangeRegister {
    static let table = SideTable(name: "_tvimport_changes", key: "runID", columns: [
        AttributeDescription("path", .string, optional: false),
        AttributeDescription("recorded", .integer, optional: false),
        AttributeDescription("undone", .bool, optional: false),
    ])

    public struct Entry: Sendable, Equatable {
        public var runID: String
        public var path: String
    }

    /// What else a change replaced that its change file does not hold: the sources' remembered
    /// priorities before and after it (an import may set one). `undo` puts back those before it
    /// with the rows, redo those after it.
    static let priorities = SideTable(name: "_tvimport_change_priorities", key: "runID", columns: [
        AttributeDescription("before", .string, optional: false),
        AttributeDescription("after", .string, optional: false),
    ])

    /// What each change was, in words (`about`): what `undo` and the pages say they revert
    /// ("the edit of Programme RTE2.ie/... (note)", "the import of source ie (...)").
    static let descriptions = SideTable(name: "_tvimport_change_about", key: "runID", columns: [
        AttributeDescription("kind", .string, optional: false),
        AttributeDescription("about", .string, optional: false),
    ])

    /// What kind of change a file holds, for the words of `undo` and its confirmation.
    public enum Kind: String, Sendable {
        case importing = "import", run, edit, apply
    }

    /// A change as `undo` and the pages describe it before reverting it.
    public struct Description: Sendable, Equatable {
        public var runID: String
        public var kind: Kind?
        /// "the import of source ie (202 inserted, 16 updated, 17 deleted programmes)"; "the change
        /// RUNID" for a change of an earlier version, which recorded no words.
        public var about: String
        /// When it was made (its run id's time).
        public var time: String
    }

    /// The newest change not undone yet, described; nil when there is none.
    public static func latestDescription(in store: Store) throws -> Description? {
        guard let entry = try latest(in: store) else { return nil }
        return try describe(entry, in: store)
    }

    static func describe(_ entry: Entry, in store: Store) throws -> Description {
        let row = try store.row(forKey: entry.runID, in: descriptions)
        let id = entry.runID
        let time = id.count >= 16 ? "\(id.prefix(4))-\(id.dropFirst(4).prefix(2))-\(id.dropFirst(6).prefix(2)) \(id.dropFirst(9).prefix(2)):\(id.dropFirst(11).prefix(2)):\(id.dropFirst(13).prefix(2)) UTC" : id
        return Description(runID: id, kind: row?["kind"]?.stringValue.flatMap(Kind.init(rawValue:)),
                           about: row?["about"]?.stringValue ?? "the change \(id)", time: time)
    }

    /// Undone changes that a later change made impossible to redo (a redo re-applies only what
    /// was undone since the last new change).
    static let notRedoable = SideTable(name: "_tvimport_changes_not_redoable", key: "runID", columns: [])

    /// How `undo` knows that nothing wrote after a change (then it need not compare every object
    /// with the change file): the database's write token (`Store.writeToken`) just after the
    /// change, and the size and modification time its file had then, so that the file read is the
    /// one written. Recorded only when nothing else wrote between the change and its record.
    static let writes = SideTable(name: "_tvimport_change_writes", key: "runID", columns: [
        AttributeDescription("token", .string, optional: false),
        AttributeDescription("fileSize", .integer, optional: false),
        AttributeDescription("fileTime", .integer, optional: false),
    ])

    /// The size and modification time (nanoseconds) of a file; nil if it cannot be read.
    static func fileIdentity(_ path: String) -> (size: Int64, time: Int64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (Int64(info.st_size), Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec))
    }

    /// The changes made to a store that held no object: undoing one with nothing written since
    /// empties the store (`UndoTransaction.runEmptying`).
    static let madeOnEmptyStore = SideTable(name: "_tvimport_changes_on_empty_store", key: "runID", columns: [])

    /// Whether `entry` was recorded as made to a store that held no object.
    static func wasMadeOnEmptyStore(_ entry: Entry, in store: Store) throws -> Bool {
        try store.row(forKey: entry.runID, in: madeOnEmptyStore) != nil
    }

    /// The write token recorded after the change of `entry`, when its file is still the one
    /// written then; nil otherwise (or for changes recorded before tokens).
    static func writeToken(of entry: Entry, in store: Store) throws -> String? {
        guard let row = try store.row(forKey: entry.runID, in: writes), let token = row["token"]?.stringValue,
              let file = fileIdentity(entry.path), row["fileSize"]?.integerValue == file.size, row["fileTime"]?.integerValue == file.time
        else { return nil }
        return token
    }

    /// Records a change file written for this database (its run id is the file's name), with the
    /// priorities the sources had before the change when it may have set one, and what it was.
    /// Every change undone before it can no longer be redone.
    public static func record(path: String, in store: Store, prioritiesBefore priorities: [String: Int]? = nil,
                              kind: Kind? = nil, about: String? = nil, madeOnEmptyStore onEmpty: Bool = false) throws {
        let runID = String((path as NSString).lastPathComponent.dropLast(".json".count))
        try store.create(table)
        if onEmpty {
            try store.create(madeOnEmptyStore)
            try store.save([:], forKey: runID, in: madeOnEmptyStore)
        }
        let undone = try store.rows(in: table).filter { $0.value["undone"]?.boolValue == true }.keys
        if !undone.isEmpty {
            try store.create(notRedoable)
            for id in undone { try store.save([:], forKey: id, in: notRedoable) }
        }
        if let kind, let about {
            try store.create(descriptions)
            try store.save(["kind": .string(kind.rawValue), "about": .string(about)], forKey: runID, in: descriptions)
        }
        if let before = priorities {
            func text(_ priorities: [String: Int]) -> String {
                priorities.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: "\n")
            }
            try store.create(Self.priorities)
            let after = try SourcePriorities.all(in: store)
            try store.save(["before": .string(text(before)), "after": .string(text(after))], forKey: runID, in: Self.priorities)
        }
        // Best effort: without it, `undo` compares every object, as it did before tokens.
        if let token = store.lastWriteToken, (try? store.writeToken()) == token, let file = fileIdentity(path) {
            try? store.create(writes)
            try? store.save(["token": .string(token), "fileSize": .integer(file.size), "fileTime": .integer(file.time)], forKey: runID, in: writes)
        }
        try store.save(["path": .string(path), "recorded": .integer(Int64(Date().timeIntervalSince1970)), "undone": .bool(false)],
                       forKey: runID, in: table)
    }

    /// The priorities recorded before (or after) the change `runID` (read before the undo's or
    /// redo's transaction).
    static func priorities(of runID: String, after: Bool = false, in store: Store) throws -> String? {
        try store.row(forKey: runID, in: priorities)?[after ? "after" : "before"]?.stringValue
    }

    /// Puts back priorities as `priorities(before:in:)` read them, inside the undo's transaction.
    static func restorePriorities(_ text: String?, in context: ObjectContext) throws {
        guard let text else { return }
        try context.removeAllRows(in: SourcePriorities.table)
        for line in text.split(separator: "\n") {
            guard let space = line.firstIndex(of: " "), let priority = Int64(line[..<space]) else { continue }
            try context.save(["priority": .integer(priority)], forKey: String(line[line.index(after: space)...]), in: SourcePriorities.table)
        }
    }

    /// The newest change of this database (an import, a run, an edit) not undone yet.
    public static func latest(in store: Store) throws -> Entry? {
        try store.rows(in: table).filter { $0.value["undone"]?.boolValue != true }
            .max { $0.key < $1.key }
            .flatMap { row in row.value["path"]?.stringValue.map { Entry(runID: row.key, path: resolved($0, store: store)) } }
    }

    /// A recorded path as a file to open: entries of earlier versions were recorded relative to
    /// the working directory of their run (`./changes/...`), which was the database's folder in
    /// the usual set-up; they are read against that folder, whatever the working directory now.
    ///
    /// A database copied or moved with its `changes/` folder (a backup restored, a test's copy)
    /// reads the file of that name beside itself, never the original's: an undo must not
    /// rename another database's files.
    static func resolved(_ path: String, store: Store) -> String {
        let folder = (ChangeFiles.absolute(store.path) as NSString).deletingLastPathComponent
        let beside = folder + "/changes/" + (path as NSString).lastPathComponent
        if FileManager.default.fileExists(atPath: beside) { return beside }
        if path.hasPrefix("/") { return path }
        return ChangeFiles.absolute(path, against: folder)
    }

    /// Marks a change undone (or applied again by a redo), inside the undo's own transaction.
    static func markUndone(_ entry: Entry, undone: Bool = true, in context: ObjectContext) throws {
        try context.save(["path": .string(entry.path), "recorded": .integer(Int64(Date().timeIntervalSince1970)), "undone": .bool(undone)],
                         forKey: entry.runID, in: table)
    }
}

/// Applies a document all or nothing: the transaction commits only when no change conflicts.
enum UndoTransaction {
    private struct Refused: Error { let report: ApplyReport }

    /// `writtenLast`: the store's write token just after the change that `document` reverts
    /// (`ChangeRegister.writeToken(of:in:)`). When the store still has it, nothing wrote since:
    /// the store holds what the document expects, and its objects are only found, not compared
    /// (undoing a first import at the speed of the import, issue 33).
    static func run(_ document: ChangeDocument, on store: Store, unlessWrittenSince writtenLast: String? = nil,
                    onSuccess: (ObjectContext) throws -> Void) throws -> ApplyReport {
        guard store.acceptedFingerprints.contains(document.model) else { throw DiffError.modelMismatch(expected: document.model, found: store.fingerprint) }
        do {
            return try store.write { context in
                // Read in the transaction: nothing can write between this and the changes.
                let unchanged = try writtenLast != nil && context.withDatabase { try Store.writeToken(in: $0) } == writtenLast
                let report = try document.apply(in: context, storeIsAsExpected: unchanged)
                if !report.conflicts.isEmpty { throw Refused(report: report) }
                try onSuccess(context)
                return report
            }.result
        } catch let refused as Refused {
            return refused.report
        }
    }

    private struct NotTrusted: Error {}

    /// The undo of a change made to a store that held no object, trusting the store: every object
    /// deleted at once, when the store still has the write token `writtenLast` in the
    /// transaction (then it holds what the change made and nothing else). Nil (and nothing
    /// changed) otherwise. The report counts the objects deleted: the objects the change made.
    static func runEmptying(_ store: Store, writtenLast: String, onSuccess: (ObjectContext) throws -> Void) throws -> ApplyReport? {
        do {
            return try store.write(checkingForeignKeys: false) { context in
                guard try context.withDatabase({ try Store.writeToken(in: $0) }) == writtenLast else { throw NotTrusted() }
                let deleted = try context.deleteEveryObject()
                try onSuccess(context)
                return ApplyReport(applied: deleted)
            }.result
        } catch is NotTrusted {
            return nil
        }
    }

    /// `run` of a document read without its inserts' members (`ChangeDocument(contentsOfFile:readingInsertedMembers:)`),
    /// trusting the store: only when it still has the write token `writtenLast` in the
    /// transaction, and only when everything applies. Nil (and nothing changed) otherwise: then
    /// the caller reads the whole file and checks.
    static func runTrusted(_ document: ChangeDocument, on store: Store, writtenLast: String,
                           onSuccess: (ObjectContext) throws -> Void) throws -> ApplyReport? {
        guard store.acceptedFingerprints.contains(document.model) else { return nil }
        do {
            return try store.write { context in
                guard try context.withDatabase({ try Store.writeToken(in: $0) }) == writtenLast else { throw NotTrusted() }
                let report = try document.apply(in: context, storeIsAsExpected: true)
                if !report.conflicts.isEmpty { throw NotTrusted() }
                try onSuccess(context)
                return report
            }.result
        } catch is NotTrusted {
            return nil
        }
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
