import Foundation
import Listings
import Merge
import ObjectGraph
import Primitives
import XMLTV

/// A guide whose programmes are not grouped by channel, staged on disk so that the merge can
/// still go channel by channel: programmes are appended to a temporary file as the reader made
/// them (`ProgrammeRecord.stage(into:)`, the one staging format: a grouped guide's records stay in
/// memory instead) and only their offsets are kept in memory (16 bytes each, not the programmes).
final class StagedGuide {
    private(set) var channels: [[UInt8]: XMLTVChannel] = [:]
    private(set) var warnings: [ImportWarning] = []
    /// Each channel's records in the staging file, and its programme text so far.
    private struct StagedChannel {
        var records: [(offset: Int64, length: Int)] = []
        var textBytes: Int64 = 0
    }
    private var staged: [[UInt8]: StagedChannel] = [:]
    private var order: [String] = []
    private let path: String
    private let descriptor: Int32

    init(files: [String], options: ImportOptions) throws {
        path = Self.temporaryPath(suffix: "stage")
        descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("cannot create the staging file \(path)") }
        var flushed: Int64 = 0   // bytes of the file before `pending`
        var readerWarnings: [ImportWarning] = []
        var pending: [UInt8] = []
        pending.reserveCapacity(1 << 20 + 1 << 16)
        func flush() throws {
            guard pending.withUnsafeBytes({ DurableFile.writeAll(descriptor, $0) }) else { throw Self.failure("cannot write the staging file \(path)") }
            flushed += Int64(pending.count)
            pending.removeAll(keepingCapacity: true)
        }
        _ = try readGuide(files: files, options: options, channel: { c, _ in channels[Array(c.id.utf8)] = c }, programme: { record, file in
            let start = pending.count
            record.stage(into: &pending)
            let key = Array(record.channel.utf8)
            let textBytes = withStaged(key, record.channel) { channel in
                channel.records.append((flushed + Int64(start), pending.count - start))
                channel.textBytes += Int64(record.textBytes)
                return channel.textBytes
            }
            if textBytes > options.maxChannelBytes {
                throw ImportError.channelTooLarge(record.channel, file: file, line: record.line, limit: options.maxChannelBytes)
            }
            if pending.count >= 1 << 20 { try flush() }
            return true
        }, warnings: &readerWarnings)
        try flush()
        warnings = readerWarnings
        warnings.append(ImportWarning(kind: "not-grouped", message: "the guide is not grouped by channel; it was staged on disk to merge channel by channel",
                                      source: options.source, file: files.first, line: nil, channel: nil))
    }

    /// A new name for a staging file of this process: `removeLeftovers` knows the pattern.
    static func temporaryPath(suffix: String) -> String {
        NSTemporaryDirectory() + "tvimport-stage-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).\(suffix)"
    }

    /// Staging files (and input copies) of killed imports (their process is gone).
    static func removeLeftovers() {
        let dir = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where name.hasPrefix("tvimport-stage-") {
            let pidText = name.dropFirst("tvimport-stage-".count).prefix { $0.isNumber }
            guard let pid = Int32(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: (dir.hasSuffix("/") ? dir : dir + "/") + name)
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Changes the entry of channel `key` (made on its first programme), with one lookup.
    private func withStaged<T>(_ key: [UInt8], _ channel: String, _ body: (inout StagedChannel) throws -> T) rethrows -> T {
        if staged[key] == nil { order.append(channel) }
        return try body(&staged[key, default: StagedChannel()])
    }

    /// Calls `body` with each channel's programmes, in order of first appearance.
    func forEachBlock(_ body: (String, [ProgrammeRecord]) throws -> Void) throws {
        var buffer: [UInt8] = []
        for channel in order {
            var programmes: [ProgrammeRecord] = []
            for (offset, length) in staged[Array(channel.utf8)]?.records ?? [] {
                if buffer.count < length { buffer = [UInt8](repeating: 0, count: max(length, 2 * buffer.count)) }
                let programme = try buffer.withUnsafeMutableBytes { raw throws -> ProgrammeRecord in
                    guard let base = raw.baseAddress, Self.readAll(descriptor, base, length, at: offset) else {
                        throw Self.failure("cannot read the staging file \(path)")
                    }
                    do { return try ProgrammeRecord(staged: UnsafeRawBufferPointer(rebasing: raw[..<length])) } catch {
                        throw ImportError.cannotWrite("the staging file \(path) is damaged")
                    }
                }
                programmes.append(programme)
            }
            try body(channel, programmes)
        }
    }

    /// The staging file could not be written or read back (a full disk, most likely).
    private static func failure(_ what: String) -> ImportError {
        .cannotWrite("\(what): \(String(cString: strerror(errno)))")
    }

    private static func readAll(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, at offset: Int64) -> Bool {
        var got = 0
        while got < count {
            let n = pread(fd, buffer + got, count - got, off_t(offset) + off_t(got))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            got += n
        }
        return true
    }
}

/// Inputs that cannot be read twice (named pipes: process substitution, /dev/stdin from a pipe),
/// copied once to a temporary file named like a staging file (so a killed run's copy is cleaned up
/// the same way) and read from there: a guide not grouped by channel is read a second time to
/// stage it. The copy takes as much disk as the stream (compressed bytes stay compressed). Other
/// files are read where they are: a device such as /dev/zero is not copied for ever, the reader
/// rejects it at once.
final class RereadableInputs {
    /// The path to read each file from, in the order given.
    let paths: [String]
    /// Copy -> the name the user gave, for messages.
    private let names: [String: String]

    init(files: [String]) throws {
        var paths: [String] = [], names: [String: String] = [:]
        // Whatever is copied so far is removed if a later copy fails.
        defer { if paths.count < files.count { for copy in names.keys { unlink(copy) } } }
        for file in files {
            var info = stat()
            let kind = stat(file, &info) == 0 ? info.st_mode & S_IFMT : 0
            guard kind == S_IFIFO || kind == S_IFSOCK else {
                paths.append(file)   // re-readable, or unreadable (the reader says why)
                continue
            }
            let copy = StagedGuide.temporaryPath(suffix: "input")
            names[copy] = file
            try Self.copy(file, to: copy)
            paths.append(copy)
        }
        self.paths = paths
        self.names = names
    }

    deinit {
        for copy in names.keys { unlink(copy) }
    }

    /// The name the user gave for `path` (a copy's original), or `path` itself.
    func name(of path: String) -> String {
        names[path] ?? path
    }

    /// Copies the bytes as they come (a gzip stream stays compressed), in constant memory.
    private static func copy(_ file: String, to copy: String) throws {
        func failure(_ what: String) -> ImportError {
            ImportError.badInput(XMLTVError(file: file, message: "\(what): \(String(cString: strerror(errno)))"))
        }
        let source = open(file, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw failure("cannot open") }
        defer { close(source) }
        let target = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard target >= 0 else { throw ImportError.cannotWrite("cannot create the temporary copy \(copy) of \(file): \(String(cString: strerror(errno)))") }
        defer { close(target) }
        let size = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let got = read(source, buffer, size)
            if got == 0 { return }
            if got < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read")
            }
            guard DurableFile.writeAll(target, UnsafeRawBufferPointer(start: buffer, count: got)) else {
                throw ImportError.cannotWrite("cannot write the temporary copy \(copy) of \(file): \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// Imports XMLTV files as one source in one transaction (rolled back when `dryRun`), streaming
/// channel by channel; a guide not grouped by channel is staged on disk and merged again.
public func importGuide(into store: Store, files: [String], options: ImportOptions, dryRun: Bool,
                        overwritable: [String: Set<String>] = [:]) throws -> SourceImportReport {
    StagedGuide.removeLeftovers()
    let inputs = try RereadableInputs(files: files)
    do {
        var report = try importGuide(into: store, readable: inputs.paths, options: options, dryRun: dryRun,
                                     overwritable: overwritable)
        for i in report.warnings.indices {
            if let file = report.warnings[i].file { report.warnings[i].file = inputs.name(of: file) }
        }
        return report
    } catch ImportError.badInput(var error) {
        error.file = inputs.name(of: error.file)
        throw ImportError.badInput(error)
    }
}

/// The import of readable `files`. `reread` gives what to read again when the guide turns out not
/// to be grouped by channel (a stream's kept copy; by default the files themselves); `beforeCommit`
/// runs inside the transaction once everything is read and merged, and throws to refuse it.
func importGuide(into store: Store, readable files: [String], options: ImportOptions, dryRun: Bool,
                 overwritable: [String: Set<String>],
                 reread: (() throws -> (files: [String], options: ImportOptions))? = nil,
                 beforeCommit: () throws -> Void = {}) throws -> SourceImportReport {
    // The first import into an empty store has nothing to lose but the empty store: its pages are
    // written once, not logged and then checkpointed (docs/design.md#the-first-import).
    let journal: Store.Journal = try !dryRun && store.holdsNoObjects() ? .rollback : .writeAhead
    do {
        return try store.write(dryRun: dryRun, journal: journal) { context in
            let report = try GuideImporter(context: context, options: options, overwritable: overwritable).run(files: files)
            try beforeCommit()
            return report
        }.result
    } catch is GuideImporter.NotGroupedByChannel {
        let (files, options) = try reread?() ?? (files, options)
        let staged = try StagedGuide(files: files, options: options)
        return try store.write(dryRun: dryRun, journal: journal) { context in
            let report = try GuideImporter(context: context, options: options, overwritable: overwritable)
                .run(declared: staged.channels, blocks: staged.forEachBlock, readerWarnings: staged.warnings)
            try beforeCommit()
            return report
        }.result
    } catch let error as ObjectGraphError {
        if case .notSorted = error { throw ImportError.notSorted("\(error)") }
        throw error
    }
}
