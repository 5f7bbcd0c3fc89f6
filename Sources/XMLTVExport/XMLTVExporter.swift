import Foundation
import ObjectGraph

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
/// channel by channel in (start, clump index) order. Rows are read in index order, credits and
/// categories beside their programmes, and written from SQLite's own bytes (no value is built
/// per row), so memory does not grow with the guide.
///
/// ```swift
/// let report = try XMLTVExporter(store: store).export(to: "/var/www/tv/guide.xml.gz")
/// print(report.written ? "written" : "unchanged")
/// ```
public struct XMLTVExporter {
    let store: Store
    let threads: Int

    /// `threads`: how many threads write the channels' programmes, each reading through a
    /// connection of its own at the same snapshot (1: the caller's thread alone).
    public init(store: Store, threads: Int = XMLTVExporter.defaultThreads) {
        self.store = store
        self.threads = threads
    }

    /// A thread per core (up to four: past that the file's writing is the bound), none besides
    /// the caller's on one core.
    public static var defaultThreads: Int {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return cores > 1 ? min(cores, 4) : 1
    }

    /// Writes `path` (gzip when it ends in `.gz`) atomically; leaves it untouched when its bytes
    /// would not change.
    public func export(to path: String) throws -> XMLTVExportReport {
        let file = try XMLTVFile(path: path)
        var writer = XMLTVDocumentWriter { bytes throws in try file.write(bytes) }
        var channelCount = 0, programmeCount = 0
        try store.read(withViews: threads > 1 ? threads : 0) { context, views in
            var shown: [(id: ObjectID, xmltvId: [UInt8])] = []
            let channels = try context.fetch("Channel", orderBy: [SortKey("xmltvId")], keys: ChannelColumn.keys)
            while try channels.step() {
                let id = ObjectID(entity: "Channel", rowID: channels.rowID)
                guard channels.value(at: ChannelColumn.hidden).boolValue != true,
                      try context.first("Programme", where: .related("channel", id), keys: []) != nil else { continue }
                let channel = StoredChannel(id: channels.text(at: ChannelColumn.xmltvId) ?? StoredText.empty,
                                            displayName: channels.text(at: ChannelColumn.displayName),
                                            otherNames: channels.text(at: ChannelColumn.otherNames),
                                            icon: channels.text(at: ChannelColumn.icon), url: channels.text(at: ChannelColumn.url),
                                            icons: channels.text(at: ChannelColumn.icons))
                try writer.write(channel)
                shown.append((id, Array(channel.id)))
            }
            channelCount = shown.count
            let counts = try ChannelWorkers<Int>.write(count: shown.count, context: context, views: views, into: &writer) { [shown] i, context, writer in
                try shown[i].xmltvId.withUnsafeBufferPointer { xmltvId in
                    try writeProgrammes(of: shown[i].id, xmltvId: xmltvId, context: context, into: &writer)
                }
            }
            programmeCount = counts.reduce(0, +)
        }
        try writer.finish()
        let written = try file.commit()
        return XMLTVExportReport(path: path, written: written, channels: channelCount, programmes: programmeCount)
    }

    /// The channel's programmes with their credits and categories: three cursors in the same
    /// (start, clump index) index order, read side by side.
    private func writeProgrammes(of channel: ObjectID, xmltvId: StoredBytes, context: ObjectContext,
                                 into writer: inout XMLTVDocumentWriter) throws -> Int {
        let streams = try ChannelProgrammes(of: channel, in: context)
        let (rows, credits, categories) = (streams.rows, streams.credits, streams.categories)
        var count = 0
        while try rows.step() {
            try writer.write(ProgrammeColumn.programme(rows), channel: xmltvId,
                             credits: credits.rows(of: rows.rowID), categories: categories.rows(of: rows.rowID))
            count += 1
        }
        guard credits.isFinished && categories.isFinished else {
            throw XMLTVExportError("the programmes of \(String(decoding: xmltvId, as: UTF8.self)) changed while they were read")
        }
        return count
    }
}

/// The channel keys the export reads, and their places in a fetched row.
enum ChannelColumn {
    static let keys = ["xmltvId", "displayName", "otherNames", "icon", "url", "hidden", "icons"]
    static let xmltvId = 0, displayName = 1, otherNames = 2, icon = 3, url = 4, hidden = 5, icons = 6
}

/// The programme keys the export reads (`TVModel.programmeKeys` that XMLTV has), their
/// places in a fetched row, and the row as a `StoredProgramme`.
enum ProgrammeColumn {
    static let keys = ["start", "stop", "clumpIndex", "clumpCount", "title", "subTitle", "desc", "otherLanguages", "date",
                       "keywords", "language", "originalLanguage", "length", "icon", "url", "country", "episodeNum", "video",
                       "audio", "previouslyShown", "previouslyShownStart", "premiere", "lastChance", "isNew", "subtitles",
                       "rating", "starRating", "icons", "images"]

    /// The current row of a cursor over `keys`.
    static func programme(_ row: ObjectCursor) -> StoredProgramme {
        // Numbers and flags as `Value` reads them, without building one.
        func integer(_ i: Int) -> Int64? { row.integer(at: i) }
        func flag(_ i: Int) -> Bool { (row.integer(at: i) ?? 0) != 0 }
        return StoredProgramme(
            start: integer(0) ?? 0, stop: integer(1), clumpIndex: integer(2) ?? 0, clumpCount: integer(3) ?? 1,
            title: row.text(at: 4), subTitle: row.text(at: 5), desc: row.text(at: 6), otherLanguages: row.text(at: 7),
            date: row.text(at: 8), keywords: row.text(at: 9), language: row.text(at: 10), originalLanguage: row.text(at: 11),
            length: integer(12), icon: row.text(at: 13), url: row.text(at: 14), country: row.text(at: 15),
            episodeNum: row.text(at: 16), video: row.text(at: 17), audio: row.text(at: 18), previouslyShown: flag(19),
            previouslyShownStart: row.text(at: 20), premiere: flag(21), lastChance: flag(22), isNew: flag(23),
            subtitles: row.text(at: 24), rating: row.text(at: 25), starRating: row.text(at: 26), icons: row.text(at: 27),
            images: row.text(at: 28))
    }
}
