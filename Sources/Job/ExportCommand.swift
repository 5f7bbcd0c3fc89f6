import Feeds
import Foundation
import ObjectGraph
import Primitives

/// `tvimport export`: (re)writes the feeds and/or the guide as one XMLTV file from the database.
///
/// ```swift
/// var export = ExportCommand(database: "tv.sqlite", output: "feeds")
/// export.pastHours = 48
/// export.xmltv = "guide.xml.gz"
/// let (text, status) = try export.run()
/// ```
public struct ExportCommand {
    public var database: String
    /// The feed directory; nil writes no feeds (then `xmltv` is required).
    public var output: String?
    /// The XMLTV file to write (gzip when it ends in .gz).
    public var xmltv: String?
    /// With `xmltv`: an M3U playlist; the XMLTV file then holds exactly its channels, under its ids
    /// (`PlaylistStep`).
    public var playlist: String?
    /// Lines for standard error: the playlist's entries that match nothing.
    public private(set) var warnings: [String] = []
    /// Filtered feeds, base URL, UID domain and windows; its sources are not needed.
    public var config: JobConfig?
    /// Overrides the config's `feeds.pastHours`.
    public var pastHours: Int?
    public var now = Int64(Date().timeIntervalSince1970)

    public init(database: String, output: String?) {
        self.database = database
        self.output = output
    }

    public mutating func run() throws -> (output: String, status: ExitStatus) {
        guard output != nil || xmltv != nil else { throw JobError(.usage, "export: give --out DIR, --xmltv FILE or both") }
        if playlist != nil, xmltv == nil { throw JobError(.usage, "export: --playlist needs --xmltv FILE (the guide written for it)") }
        var config = self.config ?? JobConfig()
        config.database = database
        if let pastHours { config.pastHours = pastHours }
        let model = try StoreAccess.model(forDatabase: database, userModules: config.modules)
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let xmltvLine: String?
        if let playlist, let xmltv {
            let result = try PlaylistStep.run(store: store, m3u: playlist, xmltv: xmltv, config: self.config, now: now)
            warnings = result.unmatched
            xmltvLine = result.line
        } else {
            xmltvLine = try xmltv.map { try XMLTVExportStep.run(store: store, path: $0) }
        }
        guard let output else { return (xmltvLine ?? "", .success) }
        config.output = output
        let report: ExportReport
        do {
            report = try config.exporter(store: store, now: now).export()
        } catch {
            throw JobError(.cannotCreate, "export to \(output) failed: \(error)")
        }
        var text = "feeds: \(report.written.count) written, \(report.unchanged.count) unchanged, \(report.removed.count) removed in \(output)/"
        if let xmltvLine { text += "\n" + xmltvLine }
        if report.events == 0 {
            text += "\n" + (try emptyWindowExplanation(store, windowStart: now - Int64(config.pastHours) * 3600))
        }
        // With `publish` in the config, export publishes what it wrote, as run does (the XMLTV file
        // written now, else the one the config names).
        if let xmltv, playlist == nil { config.xmltv = xmltv }
        guard let published = PublishCommand.publish(config: config, feedDirectory: output) else { return (text, .success) }
        return (text + "\n" + published.line, published.status)
    }

    /// Why the feeds hold nothing: an empty database, or a guide that lies before the window.
    func emptyWindowExplanation(_ store: Store, windowStart: Int64) throws -> String {
        let window = "[\(UTCTime.iso8601(windowStart)), …)"
        return try store.read { context in
            let count = try context.count("Programme")
            guard count > 0 else { return "warning: 0 programmes in the window \(window): the database holds no programmes (import a guide first)" }
            let last = try context.fetchAll("Programme", orderBy: [SortKey("stop", ascending: false)], keys: ["stop", "start"], limit: 1).first
            let end = last.flatMap { $0["stop"].integerValue ?? $0["start"].integerValue }
            let ends = end.map { "the guide ends \(UTCTime.iso8601($0))" } ?? "no programme has a time"
            let hours = end.map { max(1, (now - $0) / 3600 + 1) }
            return "warning: 0 programmes in the window \(window): \(ends)" + (hours.map { " (--past-hours \($0) would include its last programme)" } ?? "")
        }
    }
}
