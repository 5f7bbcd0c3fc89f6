import Foundation
import Listings
import ObjectGraph
import XMLTV

/// A guide whose programmes are not grouped by channel, staged on disk so that the merge can
/// still go channel by channel: programmes are appended to a temporary file as JSON lines and
/// only their offsets are kept in memory (16 bytes each, not the programmes themselves).
final class StagedGuide {
    private(set) var channels: [[UInt8]: XMLTVChannel] = [:]
    private(set) var warnings: [ImportWarning] = []
    private var offsets: [[UInt8]: [(offset: UInt64, length: Int)]] = [:]
    private var order: [String] = []
    private let path: String
    private let handle: FileHandle

    init(files: [String], options: ImportOptions) throws {
        Self.removeLeftovers()
        path = NSTemporaryDirectory() + "tvimport-stage-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        FileManager.default.createFile(atPath: path, contents: nil)
        handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let encoder = JSONEncoder()
        var position: UInt64 = 0
        var staged: [ImportWarning] = []
        _ = try readGuide(files: files, options: options, channel: { c, _ in channels[Array(c.id.utf8)] = c }, programme: { p, _ in
            let data = try encoder.encode(p)
            handle.write(data)
            let key = Array(p.channel.utf8)
            if offsets[key] == nil { order.append(p.channel) }
            offsets[key, default: []].append((position, data.count))
            position += UInt64(data.count)
            return true
        }, warnings: &staged)
        warnings = staged
        warnings.append(ImportWarning(kind: "not-grouped", message: "the guide is not grouped by channel; it was staged on disk to merge channel by channel",
                                      source: options.source, file: files.first, line: nil, channel: nil))
    }

    /// Staging files of killed imports (their process is gone).
    static func removeLeftovers() {
        let dir = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where name.hasPrefix("tvimport-stage-") {
            let pidText = name.dropFirst("tvimport-stage-".count).prefix { $0.isNumber }
            guard let pid = Int32(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: (dir.hasSuffix("/") ? dir : dir + "/") + name)
        }
    }

    deinit {
        try? handle.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Calls `body` with each channel's programmes, in order of first appearance.
    func forEachBlock(_ body: (String, [XMLTVProgramme]) throws -> Void) throws {
        let decoder = JSONDecoder()
        for channel in order {
            var programmes: [XMLTVProgramme] = []
            for (offset, length) in offsets[Array(channel.utf8)] ?? [] {
                try handle.seek(toOffset: offset)
                guard let data = try handle.read(upToCount: length) else { continue }
                programmes.append(try decoder.decode(XMLTVProgramme.self, from: data))
            }
            try body(channel, programmes)
        }
    }
}

/// Imports XMLTV files as one source in one transaction (rolled back when `dryRun`), streaming
/// channel by channel; a guide not grouped by channel is staged on disk and merged again.
public func importGuide(into store: Store, files: [String], options: ImportOptions, dryRun: Bool,
                        overwritable: [String: Set<String>] = [:]) throws -> SourceImportReport {
    do {
        return try store.write(dryRun: dryRun) { context in
            try GuideImporter(context: context, options: options, overwritable: overwritable).run(files: files)
        }.result
    } catch is GuideImporter.NotGroupedByChannel {
        let staged = try StagedGuide(files: files, options: options)
        return try store.write(dryRun: dryRun) { context in
            try GuideImporter(context: context, options: options, overwritable: overwritable)
                .run(declared: staged.channels, blocks: staged.forEachBlock, readerWarnings: staged.warnings)
        }.result
    } catch let error as ObjectGraphError {
        if case .notSorted = error { throw ImportError.notSorted("\(error)") }
        throw error
    }
}
