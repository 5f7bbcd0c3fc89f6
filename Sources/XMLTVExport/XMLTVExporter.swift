import Listings
import ObjectGraph
import XMLTV
import XMLTVImport

/// What an XMLTV export wrote.
public struct XMLTVExportReport: Sendable {
    public var path: String
    /// False when the file already held these bytes (it kept its mtime).
    public var written: Bool
    public var channels: Int
    public var programmes: Int
}

/// Writes the stored guide (the `Channel` and `Programme` rows) as one XMLTV file: the channels
/// that are not hidden and have programmes, sorted by id (UTF-8 bytes), then their programmes
/// channel by channel in (start, clump index) order. Programmes are read in blocks with their
/// credits and categories, so memory does not grow with the guide.
///
/// ```swift
/// let report = try XMLTVExporter(store: store).export(to: "/var/www/tv/guide.xml.gz")
/// print(report.written ? "written" : "unchanged")
/// ```
public struct XMLTVExporter {
    let store: Store
    /// Programmes read (with their members) per query.
    var blockSize = 512

    public init(store: Store) {
        self.store = store
    }

    /// Writes `path` (gzip when it ends in `.gz`) atomically; leaves it untouched when its bytes
    /// would not change.
    public func export(to path: String) throws -> XMLTVExportReport {
        let file = try XMLTVFile(path: path)
        var writer = XMLTVDocumentWriter { bytes throws in try file.write(bytes) }
        var channelCount = 0, programmeCount = 0
        try store.read { context in
            var shown: [(id: ObjectID, xmltvId: String)] = []
            let channels = try context.fetch("Channel", orderBy: [SortKey("xmltvId")], keys: ListingsMapper.channelKeys + ["hidden"])
            while let c = try channels.next() {
                guard c["hidden"].boolValue != true,
                      try context.first("Programme", where: .related("channel", c.id), keys: []) != nil else { continue }
                try writer.write(StoredListingsMapper.channel { c[$0] })
                shown.append((c.id, c["xmltvId"].stringValue ?? ""))
            }
            channelCount = shown.count
            for (id, xmltvId) in shown {
                programmeCount += try writeProgrammes(of: id, xmltvId: xmltvId, context: context, into: &writer)
            }
        }
        try writer.finish()
        let written = try file.commit()
        return XMLTVExportReport(path: path, written: written, channels: channelCount, programmes: programmeCount)
    }

    private func writeProgrammes(of channel: ObjectID, xmltvId: String, context: ObjectContext,
                                 into writer: inout XMLTVDocumentWriter) throws -> Int {
        let cursor = try context.fetch("Programme", where: .related("channel", channel),
                                       orderBy: [SortKey("start"), SortKey("clumpIndex")], keys: ListingsMapper.programmeKeys)
        var count = 0
        var block: [FetchedObject] = []
        block.reserveCapacity(blockSize)
        func flush() throws {
            guard !block.isEmpty else { return }
            let ids = block.map { Value.integer($0.id.rowID) }
            var credits: [Int64: [Credit]] = [:]
            let creditCursor = try context.fetch("Credit", where: .isIn("programme", ids), orderBy: [SortKey("programme"), SortKey("position")],
                                                 keys: ListingsMapper.creditKeys + ["programme"])
            while let c = try creditCursor.next() {
                credits[c["programme"].integerValue ?? 0, default: []].append(StoredListingsMapper.credit { c[$0] })
            }
            var categories: [Int64: [LocalizedText]] = [:]
            let categoryCursor = try context.fetch("Category", where: .isIn("programme", ids), orderBy: [SortKey("programme"), SortKey("position")],
                                                   keys: ListingsMapper.categoryKeys + ["programme"])
            while let c = try categoryCursor.next() {
                categories[c["programme"].integerValue ?? 0, default: []].append(StoredListingsMapper.category { c[$0] })
            }
            for p in block {
                try writer.write(StoredListingsMapper.programme(channel: xmltvId, { p[$0] },
                                                                credits: credits[p.id.rowID] ?? [], categories: categories[p.id.rowID] ?? []))
            }
            count += block.count
            block.removeAll(keepingCapacity: true)
        }
        while let p = try cursor.next() {
            block.append(p)
            if block.count == blockSize { try flush() }
        }
        try flush()
        return count
    }
}
