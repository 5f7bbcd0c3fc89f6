import Foundation
import Job
import enum Job.ExitStatus
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The repository root, from this file's path (Tests/JobTests/Support.swift).
let repoRoot: URL = Repository.root

/// The built tvimport binary.

struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
}

struct BinaryMissing: Error, CustomStringConvertible {
    var description: String { "tvimport binary not found at \(Repository.tvimport): run `swift build` first" }
}

/// A fresh temporary directory, the working directory of one test.
final class Sandbox {
    let dir: URL
    init() throws {
        dir = try Scratch.directory("jobtests")
    }
    deinit { try? FileManager.default.removeItem(at: dir) }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
    }

    /// Runs a program (default: tvimport) in this directory; stdout and stderr go to files so that
    /// neither pipe can fill up.
    @discardableResult
    func run(_ args: [String], executable: String? = nil, environment extra: [String: String] = [:]) throws -> Result {
        let exe = executable ?? Repository.tvimport
        guard FileManager.default.isExecutableFile(atPath: exe) else {
            Issue.record("\(BinaryMissing())")
            throw BinaryMissing()
        }
        var env: [String: String?] = ["TVIMPORT_DB": nil, "TVIMPORT_OUTPUT": nil, "TVIMPORT_CACHE": nil, "TVIMPORT_BASE_URL": nil]
        for (key, value) in extra { env[key] = value }
        let result = try Subprocess.run(exe, args, in: dir, environment: env)
        return Result(status: result.status, stdout: result.output, stderr: result.stderr)
    }

    /// Every file under `name` (a file or a directory) with its bytes and mtime.
    func snapshot(_ names: [String]) -> [String: (Data, Date)] {
        var result: [String: (Data, Date)] = [:]
        let fm = FileManager.default
        for name in names {
            let root = path(name)
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: root, isDirectory: &isDir) else { continue }
            let files = isDir.boolValue ? ((fm.subpaths(atPath: root) ?? []).map { root + "/" + $0 }) : [root]
            for f in files {
                var d: ObjCBool = false
                guard fm.fileExists(atPath: f, isDirectory: &d), !d.boolValue else { continue }
                let data = fm.contents(atPath: f) ?? Data()
                let mtime = (try? fm.attributesOfItem(atPath: f)[.modificationDate] as? Date) ?? Date.distantPast
                result[f] = (data, mtime)
            }
        }
        return result
    }

    func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: path(name)) }
}

func sameBytes(_ a: [String: (Data, Date)], _ b: [String: (Data, Date)]) -> Bool {
    a.keys.sorted() == b.keys.sorted() && a.allSatisfy { b[$0.key]?.0 == $0.value.0 }
}

func sameBytesAndTimes(_ a: [String: (Data, Date)], _ b: [String: (Data, Date)]) -> Bool {
    sameBytes(a, b) && a.allSatisfy { b[$0.key]?.1 == $0.value.1 }
}

func parseJSON(_ text: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
}

/// The first programme start of the generated guides: the next full hour plus one hour, taken once
/// for the whole test process, so that a test calling it twice never straddles an hour (at least an
/// hour ahead when the suite starts, still in the future when it ends).
func guideBase() -> Date { processGuideBase }

private let processGuideBase: Date = {
    let now = Date().timeIntervalSince1970
    return Date(timeIntervalSince1970: (now - now.truncatingRemainder(dividingBy: 3600)) + 7200)
}()

/// A small guide in the future: `channels` channels with `programmes` half-hour programmes each.
func makeGuide(channels: [String] = ["alpha.test", "beta.test"], programmes: Int = 4, titlePrefix: String = "Show") -> String {
    let base = Int64(guideBase().timeIntervalSince1970)
    return GuideText.document(
        channels: channels.map { .init($0, name: "Name of \($0)", lang: "en") },
        programmes: channels.flatMap { c in
            (0..<Int64(programmes)).map { i in
                .init(c, start: base + i * 1800, stop: base + i * 1800 + 1800, title: "\(titlePrefix) \(i)", lang: "en")
            }
        },
        generator: "jobtests")
}

/// A config file for `run --config`.
func makeConfig(database: String = "tv.sqlite", output: String = "out", sources: [(String, String)], extra: String = "") -> String {
    let list = sources.map { "{\"name\": \"\($0.0)\", \"url\": \"\($0.1)\"}" }.joined(separator: ", ")
    return "{\"database\": \"\(database)\", \"output\": \"\(output)\", \"sources\": [\(list)]\(extra)}"
}


/// What a database stores, as `status --format json` shows it (entity counts and per-source
/// counts), without the run log: a failed run records itself there, so the file's bytes change.
func storedData(_ box: Sandbox, _ db: String) throws -> String {
    let r = try box.run(["status", "--db", db, "--format", "json"])
    guard var json = parseJSON(r.stdout) else { return "status failed: \(r.stderr)" }
    json["runs"] = nil
    return String(decoding: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), as: UTF8.self)
}

/// Starts Fixtures/guide_server.py serving `guide` on loopback; returns its base URL and a stopper.
func startGuideServer(_ box: Sandbox, guide: String) throws -> (String, () -> Void) {
    try box.write("served.xml", guide)
    let script = repoRoot.appendingPathComponent("Tests/JobTests/Fixtures/guide_server.py").path
    let server = try RunningProcess("python3", [script, box.path("served.xml")], keepsInputOpen: true)
    server.wait(timeout: 60) { $0.stdout.contains("\n") }
    let line = server.stdout
    let port = try #require(Int(line.trimmingCharacters(in: .whitespacesAndNewlines)), "server said '\(line)'")
    return ("http://127.0.0.1:\(port)", { server.stop(SIGKILL) })
}

// MARK: - The job's commands in this process

/// The commands as the Job library runs them, in this process: what `tvimport` does between
/// parsing its flags and printing. Relative paths are the sandbox's, as for a `tvimport` run in
/// it (no chdir: tests run in parallel). The result reads like a run of the binary: the output
/// with print's newline, a failure as the one `tvimport: …` line `finish` writes, its status.
extension Sandbox {
    /// `relative` in this sandbox; absolute paths, `-` and URLs as given.
    func resolved(_ relative: String) -> String {
        relative.hasPrefix("/") || relative == "-" || relative.contains("://") ? relative : path(relative)
    }

    /// A config file of this sandbox, its paths resolved here (the database, outputs, cache,
    /// change folder, XMLTV file and the sources' local files).
    func config(_ name: String, requireSources: Bool = true) throws -> JobConfig {
        var config = try JobConfig.load(path: resolved(name), requireSources: requireSources)
        config.database = resolved(config.database)
        config.output = resolved(config.output)
        config.cache = config.cache.map(resolved)
        config.changes = config.changes.map(resolved)
        config.xmltv = config.xmltv.map(resolved)
        for index in config.sources.indices where config.sources[index].command == nil {
            config.sources[index].url = resolved(config.sources[index].url)
        }
        return config
    }

    /// What a command returned or threw, as `finish` turns it into output and an exit status.
    func outcome(_ body: () throws -> (output: String, status: ExitStatus)) -> Result {
        do {
            let (output, status) = try body()
            return Result(status: status.rawValue, stdout: output.isEmpty ? "" : output + "\n", stderr: "")
        } catch let error as JobError {
            return Result(status: error.status.rawValue, stdout: "", stderr: "tvimport: \(error.message)\n")
        } catch {
            return Result(status: ExitStatus.dataError.rawValue, stdout: "", stderr: "tvimport: \(error)\n")
        }
    }

    /// `tvimport import [--config C] [--db D] FILES` (ImportJob); `set` gives the other flags.
    func importing(_ files: [String], db: String? = nil, config name: String? = nil, _ set: (inout ImportJob) -> Void = { _ in }) -> Result {
        outcome {
            let settings = try name.map { try config($0, requireSources: false) }
            var job = ImportJob(database: resolved(db ?? settings?.database ?? "tvimport.sqlite"), files: files.map(resolved))
            if let settings {
                (job.channelAliases, job.whitelists, job.userModules) = (settings.channelAliases, settings.whitelists, settings.modules)
                job.config = settings
            }
            set(&job)
            return try job.run()
        }
    }

    /// `tvimport run --config C` (NightlyJob); `set` gives the flags.
    func nightly(config name: String, _ set: (inout NightlyJob) -> Void = { _ in }) -> Result {
        outcome {
            var job = NightlyJob(config: try config(name))
            set(&job)
            return try job.run()
        }
    }

    /// `tvimport export` (ExportCommand); its warnings are its standard error.
    func exporting(db: String? = nil, out: String? = nil, xmltv: String? = nil, playlist: String? = nil, config name: String? = nil,
                   pastHours: Int? = nil) -> Result {
        var warnings: [String] = []
        var result = outcome {
            let settings = try name.map { try config($0, requireSources: false) }
            var export = ExportCommand(database: resolved(db ?? settings?.database ?? "tvimport.sqlite"),
                                       output: out.map(resolved) ?? (xmltv == nil ? settings?.output ?? path("feeds") : nil))
            export.config = settings
            export.pastHours = pastHours
            export.xmltv = xmltv.map(resolved)
            export.playlist = playlist.map(resolved)
            defer { warnings = export.warnings }
            return try export.run()
        }
        result.stderr = warnings.map { $0 + "\n" }.joined() + result.stderr
        return result
    }

    /// `tvimport status [--format json]` (StatusCommand).
    func status(db: String, json: Bool = false) -> Result {
        outcome { (try StatusCommand.run(database: resolved(db), json: json), ExitStatus.success) }
    }

    /// `tvimport edit ENTITY ID KEY=VALUE…` (EditCommand), then the outputs rewritten as `edit` does.
    func edit(_ entity: String, _ id: String, _ assignments: [String] = [], db: String? = nil, config name: String? = nil,
              unset: [String] = [], force: Bool = false) -> Result {
        outcome {
            let settings = try name.map { try config($0, requireSources: false) }
            var edit = EditCommand(database: resolved(db ?? settings?.database ?? "tvimport.sqlite"), entityName: entity, id: id)
            edit.assignments = assignments
            edit.unset = unset
            edit.force = force
            return try edit.run(under: settings)
        }
    }

    /// `tvimport undo` (ApplyCommand.undo), then the outputs rewritten.
    func undo(db: String? = nil, config name: String? = nil) -> Result {
        outcome {
            let settings = try name.map { try config($0, requireSources: false) }
            let database = resolved(db ?? settings?.database ?? "tvimport.sqlite")
            let (line, status) = try ApplyCommand.undo(database: database)
            return DerivedOutputs.following(line, status, config: settings, database: database)
        }
    }

    /// `tvimport apply FILE` (ApplyCommand.apply), then the outputs rewritten unless a dry run.
    func apply(_ file: String, db: String? = nil, config name: String? = nil, dryRun: Bool = false) -> Result {
        outcome {
            let settings = try name.map { try config($0, requireSources: false) }
            let database = resolved(db ?? settings?.database ?? "tvimport.sqlite")
            let (line, status) = try ApplyCommand.apply(database: database, file: resolved(file), dryRun: dryRun)
            return dryRun ? (line, status) : DerivedOutputs.following(line, status, config: settings, database: database)
        }
    }

    /// `tvimport channels` (ChannelsCommand).
    func channels(db: String, source: String? = nil, unmapped: Bool = false, playlist: String? = nil, config name: String? = nil,
                  json: Bool = false) -> Result {
        outcome {
            let settings = try name.map { try config($0, requireSources: false) }
            if let playlist {
                return (try ChannelsCommand.run(database: resolved(db), playlist: resolved(playlist), config: settings, json: json), ExitStatus.success)
            }
            return (try ChannelsCommand.run(database: resolved(db), source: source, unmapped: unmapped, json: json), ExitStatus.success)
        }
    }
}
