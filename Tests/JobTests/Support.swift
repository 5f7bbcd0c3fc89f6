import Foundation
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
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("jobtests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
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
