import Foundation
import ObjectGraph
import Playlists
import Primitives
import XMLTVExport

/// The guide of an M3U playlist's channels as a step of `export --playlist` and `run` (the
/// config's `playlists`): reads the playlist, writes its guide, names the entries that match
/// nothing (with the nearest display names) on standard error and in the JSON report.
enum PlaylistStep {
    /// Reads an M3U file: unreadable is exit 66, no entries is 65.
    static func load(_ path: String) throws -> M3UPlaylist {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JobError(.noInput, "\(path): cannot read the playlist")
        }
        do {
            return try M3UPlaylist(bytes: data, file: path)
        } catch {
            throw JobError(.dataError, "\(error)")
        }
    }

    /// Writes the guide of `m3u`'s channels to `xmltv`; the report line, the unmatched entries as
    /// lines for standard error, and the report for JSON.
    static func run(store: Store, m3u: String, xmltv: String, config: JobConfig?, now: Int64) throws -> (line: String, unmatched: [String], report: PlaylistExportReport) {
        let playlist = try load(m3u)
        let exporter = PlaylistGuideExporter(store: store, aliases: config?.channelAliases ?? [:], fill: config?.fill, now: now)
        let report: PlaylistExportReport
        do {
            report = try exporter.export(playlist, to: xmltv)
        } catch {
            throw JobError(.cannotCreate, "playlist guide \(xmltv) failed: \(error)")
        }
        let unmatched = report.unmatched
        let counts = "\(report.channels) channels, \(report.programmes) programmes" + (report.placeholders > 0 ? ", \(report.placeholders) placeholders" : "")
            + (unmatched.isEmpty ? "" : ", \(unmatched.count) of \(report.matches.count) entries unmatched")
        let line = report.written ? "playlist: \(xmltv) written for \(m3u) (\(counts))" : "playlist: nothing changed, \(xmltv) left as it was (\(counts))"
        let warnings = playlist.warnings.map { "\(m3u):\($0.line): \($0.message)" }
        return (line, warnings + unmatched.map { unmatchedLine($0, file: m3u) }, report)
    }

    static func unmatchedLine(_ m: PlaylistMatch, file: String) -> String {
        let id = m.entry.tvgID.map { " tvg-id '\($0)'" } ?? ""
        let nearest = m.nearest.isEmpty ? "" : "; nearest display names: " + m.nearest.map { "'\($0)'" }.joined(separator: ", ")
        return "\(file):\(m.entry.line): '\(m.entry.name)'\(id) matches no channel\(nearest)"
    }

    /// An entry's match for JSON (`channels --playlist`, the run's report).
    static func json(_ m: PlaylistMatch) -> JSONValue {
        .object([
            "line": .integer(Int64(m.entry.line)), "name": .string(m.entry.name), "tvgId": m.entry.tvgID.map(JSONValue.string) ?? .null,
            "channel": m.channel.map(JSONValue.string) ?? .null, "shiftSeconds": .integer(m.shift), "reason": .string(m.reason),
            "nearest": .array(m.nearest.map(JSONValue.string)),
        ])
    }

    /// Every playlist of the config, each on its own: a failure is reported and the rest written.
    static func runConfigured(store: Store, config: JobConfig, now: Int64) -> (lines: [String], stderr: [String], json: [JSONValue], status: ExitStatus) {
        var lines: [String] = [], stderr: [String] = [], json: [JSONValue] = []
        var status = ExitStatus.success
        for p in config.playlists {
            do {
                let result = try run(store: store, m3u: p.m3u, xmltv: p.xmltv, config: config, now: now)
                lines.append(result.line)
                stderr += result.unmatched
                json.append(.object(["m3u": .string(p.m3u), "xmltv": .string(p.xmltv), "written": .bool(result.report.written),
                                     "channels": .integer(Int64(result.report.channels)), "programmes": .integer(Int64(result.report.programmes)),
                                     "placeholders": .integer(Int64(result.report.placeholders)),
                                     "unmatched": .array(result.report.unmatched.map(Self.json))]))
            } catch let error as JobError {
                if status == .success { status = error.status }
                lines.append("playlist: \(p.xmltv) stale: \(error.message)")
                json.append(.object(["m3u": .string(p.m3u), "xmltv": .string(p.xmltv), "error": .string(error.message)]))
            } catch {
                if status == .success { status = .cannotCreate }
                lines.append("playlist: \(p.xmltv) stale: \(error)")
            }
        }
        return (lines, stderr, json, status)
    }
}
