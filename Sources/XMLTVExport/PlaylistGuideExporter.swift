import ObjectGraph
import Playlists
import Primitives

/// The config's top-level `fill`: placeholder programmes for playlist channels without
/// programmes, and for the gaps of those with some, so that players show a row.
public struct PlaylistFill: Sendable, Hashable {
    /// Length of one placeholder, in seconds (placeholders are cut at multiples of it since
    /// 1970, UTC, so the same gap always gives the same rows).
    public var length: Int64
    /// The placeholder's title; `{name}` becomes the entry's name.
    public var title: String

    public init(length: Int64, title: String = "{name}") {
        self.length = length
        self.title = title
    }

    func title(for name: String) -> String { title.replacingAll("{name}", with: name) }
}

/// What a playlist's guide holds.
public struct PlaylistExportReport: Sendable {
    public var path: String
    /// False when the file already held these bytes (it kept its mtime).
    public var written: Bool
    public var channels: Int
    public var programmes: Int
    public var placeholders: Int
    /// Every entry's match, in playlist order.
    public var matches: [PlaylistMatch]
    public var unmatched: [PlaylistMatch] { matches.filter { $0.channel == nil } }
}

/// Writes the guide of an M3U playlist's channels as one XMLTV file (the contract's "guide per
/// playlist"): the entries matched to shown channels (`PlaylistMatcher`), in playlist order, each
/// under the playlist's own id with its programmes moved by its shift, and with `fill`,
/// placeholders for unmatched entries and the gaps of matched ones. Streamed from the stored
/// rows like `XMLTVExporter`, with the same writer, so it is as valid and as fast.
///
/// ```swift
/// let playlist = try M3UPlaylist(bytes: bytes, file: "tv.m3u")
/// let report = try PlaylistGuideExporter(store: store, aliases: [:]).export(playlist, to: "tv.xml.gz")
/// ```
public struct PlaylistGuideExporter {
    let store: Store
    let aliases: [String: String]
    let fill: PlaylistFill?
    /// Start of the placeholders' window when the guide is empty.
    let now: Int64
    /// As `XMLTVExporter`'s.
    let threads: Int

    public init(store: Store, aliases: [String: String], fill: PlaylistFill? = nil, now: Int64 = 0,
                threads: Int = XMLTVExporter.defaultThreads) {
        self.store = store
        self.aliases = aliases
        self.fill = fill
        self.now = now
        self.threads = threads
    }

    /// The shown channels (not hidden, with programmes) as the matcher sees them, by id.
    public static func guideChannels(_ context: ObjectContext) throws -> [GuideChannel] {
        var channels: [GuideChannel] = []
        let rows = try context.fetch("Channel", orderBy: [SortKey("xmltvId")], keys: ["xmltvId", "customName", "displayName", "otherNames", "hidden"])
        while let c = try rows.next() {
            guard c["hidden"].boolValue != true, let id = c["xmltvId"].stringValue,
                  try context.first("Programme", where: .related("channel", c.id), keys: []) != nil else { continue }
            var names = [c["customName"].stringValue, c["displayName"].stringValue].compactMap { $0 }
            names += (c["otherNames"].stringValue ?? "").split(separator: "\n").map(String.init)
            channels.append(GuideChannel(id: id, names: names))
        }
        return channels
    }

    /// Each entry's match against the stored guide, without writing anything.
    public func matches(_ playlist: M3UPlaylist) throws -> [PlaylistMatch] {
        try store.read { context in
            let matcher = PlaylistMatcher(channels: try Self.guideChannels(context), aliases: aliases)
            return playlist.entries.map(matcher.match)
        }
    }

    /// Writes `path` (gzip when it ends in `.gz`) atomically; leaves it untouched when its bytes
    /// would not change.
    public func export(_ playlist: M3UPlaylist, to path: String) throws -> PlaylistExportReport {
        let file = try XMLTVFile(path: path)
        var writer = XMLTVDocumentWriter { bytes throws in try file.write(bytes) }
        var report = PlaylistExportReport(path: path, written: false, channels: 0, programmes: 0, placeholders: 0, matches: [])
        try store.read(withViews: threads > 1 ? threads : 0) { context, views in
            let matcher = PlaylistMatcher(channels: try Self.guideChannels(context), aliases: aliases)
            report.matches = playlist.entries.map(matcher.match)
            let planned = playlistChannels(report.matches)
            let window = try guideWindow(context)
            // Channels first (the DTD's order), each once: those with programmes, or placeholders.
            var written: [(PlaylistChannel, ObjectID?)] = []
            for channel in planned {
                var row: ObjectID?
                var stored: FetchedObject?
                if let id = channel.channel {
                    stored = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: ChannelColumn.keys)
                    row = stored?.id
                }
                guard row != nil || (fill != nil && window != nil) else { continue }
                try writeChannel(channel, stored: stored, into: &writer)
                written.append((channel, row))
            }
            report.channels = written.count
            let counts = try ChannelWorkers<(programmes: Int, placeholders: Int)>.write(count: written.count, context: context, views: views,
                                                                                     into: &writer) { [written] i, context, writer in
                let (channel, row) = written[i]
                return try Array(channel.outputID.utf8).withUnsafeBufferPointer { outputID in
                    try writeProgrammes(channel, row: row, outputID: outputID, window: window, context: context, writer: &writer)
                }
            }
            report.programmes = counts.reduce(0) { $0 + $1.programmes }
            report.placeholders = counts.reduce(0) { $0 + $1.placeholders }
        }
        try writer.finish()
        report.written = try file.commit()
        return report
    }

    private func writeChannel(_ channel: PlaylistChannel, stored: FetchedObject?, into writer: inout XMLTVDocumentWriter) throws {
        guard let stored else {
            return try writer.write(playlistChannel: channel.outputID, names: [channel.name], guide: nil, logo: channel.logo)
        }
        // The stored values as bytes, as the export's writer takes them.
        let texts = ChannelColumn.keys.map { stored[$0].stringValue.map { Array($0.utf8) } }
        func withBytes<R>(_ i: Int, _ body: (StoredBytes?) throws -> R) rethrows -> R {
            guard let bytes = texts[i] else { return try body(nil) }
            return try bytes.withUnsafeBufferPointer { try body($0) }
        }
        try withBytes(ChannelColumn.displayName) { displayName in
            try withBytes(ChannelColumn.otherNames) { otherNames in
                try withBytes(ChannelColumn.icon) { icon in
                    try withBytes(ChannelColumn.url) { url in
                        try withBytes(ChannelColumn.icons) { icons in
                            let guide = StoredChannel(id: StoredText.empty, displayName: displayName, otherNames: otherNames, icon: icon, url: url,
                                                      icons: icons)
                            try writer.write(playlistChannel: channel.outputID, names: [channel.name], guide: guide, logo: channel.logo)
                        }
                    }
                }
            }
        }
    }

    /// [earliest start, latest stop) of the shown guide: what placeholders cover; with an empty
    /// guide, the day from `now`; nil without `fill`.
    private func guideWindow(_ context: ObjectContext) throws -> Range<Int64>? {
        guard let fill else { return nil }
        let first = try context.fetchAll("Programme", orderBy: [SortKey("start")], keys: ["start"], limit: 1).first?["start"].integerValue
        let last = try context.fetchAll("Programme", orderBy: [SortKey("stop", ascending: false)], keys: ["stop", "start"], limit: 1).first
        let end = last.flatMap { $0["stop"].integerValue ?? $0["start"].integerValue }
        let start = Self.floor(first ?? now, fill.length)
        let stop = max(end ?? (start + 86400), start + fill.length)
        return start..<stop
    }

    static func floor(_ t: Int64, _ length: Int64) -> Int64 {
        let r = t % length
        return r < 0 ? t - r - length : t - r
    }

    /// The channel's programmes moved by its shift, placeholders in its gaps (with `fill`); how
    /// many of each it wrote.
    private func writeProgrammes(_ channel: PlaylistChannel, row: ObjectID?, outputID: StoredBytes, window: Range<Int64>?,
                                 context: ObjectContext, writer: inout XMLTVDocumentWriter) throws -> (programmes: Int, placeholders: Int) {
        var written = (programmes: 0, placeholders: 0)
        let title = fill?.title(for: channel.name) ?? ""
        /// Placeholders over [from, to), cut at multiples of the fill's length.
        func placeholders(_ from: Int64, _ to: Int64) throws {
            guard let fill, from < to else { return }
            var start = from
            while start < to {
                let next = min(Self.floor(start, fill.length) + fill.length, to)
                try writer.writePlaceholder(start: start, stop: next, channel: outputID, title: title)
                written.placeholders += 1
                start = next
            }
        }
        guard let row else {
            if let window { try placeholders(window.lowerBound, window.upperBound) }
            return written
        }
        let streams = try ChannelProgrammes(of: row, in: context)
        let (rows, credits, categories) = (streams.rows, streams.credits, streams.categories)
        // Covered up to here; nil while a programme without a stop lasts until the next start.
        var coveredUntil: Int64? = window?.lowerBound
        while try rows.step() {
            var p = ProgrammeColumn.programme(rows)
            // A shift is at most 48 hours and stored times are the XMLTV grammar's: clamped all the same.
            p.start = p.start.addingClamped(channel.shift)
            p.stop = p.stop.map { $0.addingClamped(channel.shift) }
            if let coveredUntil { try placeholders(coveredUntil, p.start) }
            try writer.write(p, channel: outputID, credits: credits.rows(of: rows.rowID), categories: categories.rows(of: rows.rowID))
            written.programmes += 1
            coveredUntil = p.stop.map { max($0, coveredUntil ?? $0) }
        }
        if let coveredUntil, let window { try placeholders(coveredUntil, window.upperBound) }
        return written
    }
}

extension Int64 {
    /// The sum, at the ends of the range instead of trapping.
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
