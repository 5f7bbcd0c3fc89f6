import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The repository root, from this file's path (Tests/PublishTests/Support.swift).
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
/// The project's venv (scripts/install-deps), with moto's server and boto3.
let venvPython = repoRoot.appendingPathComponent(".venv/bin/python").path

/// True when scripts/install-deps has put moto and boto3 into .venv.
let motoIsInstalled: Bool = {
    guard FileManager.default.isExecutableFile(atPath: venvPython) else { return false }
    return (try? run(venvPython, ["-c", "import moto.server, boto3"]))?.status == 0
}()

/// Runs a program to its end (TestSupport's runner), without the variables that would point
/// tvimport or boto3 elsewhere.
func run(_ executable: String, _ arguments: [String], directory: URL? = nil,
                environment extra: [String: String?] = [:]) throws -> ProcessResult {
    var environment: [String: String?] = [:]
    for k in ["TVIMPORT_DB", "TVIMPORT_OUTPUT", "TVIMPORT_CACHE", "TVIMPORT_BASE_URL",
              "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"] { environment[k] = .some(nil) }
    for (k, v) in extra { environment[k] = v }
    return try Subprocess.run(executable, arguments, in: directory, environment: environment)
}

struct SetupFailure: Error, CustomStringConvertible { var description: String }

/// moto's S3 server (`python -m moto.server`) on a free loopback port, with a bucket, an access
/// key and request authentication on: a wrong secret is refused as AWS would refuse it.
/// Its request log (one line per request) counts the PUTs and DELETEs.
final class MotoServer {
    let port: UInt16
    let bucket: String
    let accessKeyID: String
    let secretAccessKey: String
    /// The server, whose standard error is its request log.
    private let process: RunningProcess

    init(bucket: String = "feeds") throws {
        guard let port = freePort() else { throw SetupFailure(description: "no free port") }
        self.port = port
        self.bucket = bucket
        let process = try RunningProcess(venvPython, ["-m", "moto.server", "-H", "127.0.0.1", "-p", "\(port)"])
        self.process = process
        guard process.wait(timeout: 60, until: { _ in canConnect(port) }) else {
            process.stop(SIGKILL)
            throw SetupFailure(description: "moto's server did not start on port \(port)")
        }
        let setup = try run(venvPython, [fixtures.appendingPathComponent("s3_setup.py").path, "\(port)", bucket])
        let words = setup.output.split(whereSeparator: \.isWhitespace).map(String.init)
        guard setup.status == 0, words.count == 2 else {
            process.stop(SIGKILL)
            throw SetupFailure(description: "s3_setup.py failed: \(setup.stderr)")
        }
        (accessKeyID, secretAccessKey) = (words[0], words[1])
    }

    deinit {
        process.stop(SIGKILL)   // moto's server ignores SIGTERM
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// The credentials tvimport reads, as environment variables.
    var environment: [String: String?] { ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey] }

    /// The server's request log so far, one line per request, in request order.
    var log: String { process.stdout + process.stderr }

    /// Requests with this method on objects of the bucket so far (from the server's log).
    func count(_ method: String) -> Int {
        let text = log
        // Werkzeug colours some lines: an escape sequence may stand between the quote and the method.
        return text.split(separator: "\n").filter { $0.contains("\(method) /\(bucket)/") }.count
    }

    struct StoredObject: Equatable {
        var etag: String
        var contentType: String?
        var cacheControl: String?
        var size: Int
        var lastModified: String
    }

    /// Every object under `prefix`, as boto3 sees it.
    func objects(prefix: String) throws -> [String: StoredObject] {
        let r = try run(venvPython, [fixtures.appendingPathComponent("s3_inspect.py").path, "\(port)", bucket, prefix],
                               environment: environment)
        guard r.status == 0, let json = try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: [String: Any]] else {
            throw SetupFailure(description: "s3_inspect.py failed: \(r.stderr)")
        }
        return json.mapValues {
            StoredObject(etag: $0["etag"] as? String ?? "", contentType: $0["contentType"] as? String,
                         cacheControl: $0["cacheControl"] as? String, size: $0["size"] as? Int ?? -1,
                         lastModified: $0["lastModified"] as? String ?? "")
        }
    }

    /// Puts or deletes an object with boto3, behind tvimport's back.
    func change(_ action: String, key: String, file: String? = nil) throws {
        let r = try run(venvPython, [fixtures.appendingPathComponent("s3_inspect.py").path, "\(port)", bucket, "", action, key]
                               + (file.map { [$0] } ?? []), environment: environment)
        if r.status != 0 { throw SetupFailure(description: "s3_inspect.py \(action) failed: \(r.stderr)") }
    }
}

/// A fresh working directory for one test.
final class Sandbox {
    let dir: URL
    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("publishtests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: dir) }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
    }

    /// Runs tvimport here.
    @discardableResult
    func tvimport(_ arguments: [String], environment: [String: String?] = [:]) throws -> ProcessResult {
        guard FileManager.default.isExecutableFile(atPath: Repository.tvimport) else {
            throw SetupFailure(description: "tvimport binary not found at \(Repository.tvimport): run `swift build` first")
        }
        return try run(Repository.tvimport, arguments, directory: dir, environment: environment)
    }

    /// The published files of the feed directory: name -> bytes (hidden files are not published).
    func feeds(_ directory: String = "feeds") -> [String: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path(directory))) ?? []
        var result: [String: Data] = [:]
        for name in names where !name.hasPrefix(".") {
            result[name] = FileManager.default.contents(atPath: path(directory + "/" + name))
        }
        return result
    }

    /// Every file under the sandbox with its bytes and mtime.
    func snapshot() -> [String: (Data, Date)] {
        var result: [String: (Data, Date)] = [:]
        let fm = FileManager.default
        for sub in fm.subpaths(atPath: dir.path) ?? [] {
            let file = path(sub)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let mtime = (try? fm.attributesOfItem(atPath: file)[.modificationDate] as? Date) ?? .distantPast
            result[sub] = (fm.contents(atPath: file) ?? Data(), mtime)
        }
        return result
    }
}

/// MD5 of bytes as hex, by the system's md5sum (an implementation other than the one tested).
func md5Hex(_ data: Data) throws -> String {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("md5-\(UUID().uuidString)")
    try data.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let r = try run("/usr/bin/md5sum", [file.path])
    return String(r.output.prefix(32))
}

/// The first programme start of the generated guides: the next full hour plus one, taken once
/// per test process, so that the guides a test writes before and after an hour turns differ only
/// where it meant them to.
private let guideBase: Int64 = {
    let now = Int64(Date().timeIntervalSince1970)
    return now - now % 3600 + 7200
}()

/// A small guide starting at `guideBase`: each channel with `programmes` half-hour programmes
/// titled "<title of the channel> i".
func makeGuide(_ channels: [String: String], programmes: Int = 4) -> String {
    let base = guideBase
    let ids = channels.keys.sorted()
    return GuideText.document(
        channels: ids.map { .init($0, name: "Name of \($0)", lang: "en") },
        programmes: ids.flatMap { c in
            (0..<Int64(programmes)).map { i in
                .init(c, start: base + i * 1800, stop: base + i * 1800 + 1800, title: "\(channels[c] ?? "") \(i)", lang: "en")
            }
        },
        generator: "publishtests")
}

