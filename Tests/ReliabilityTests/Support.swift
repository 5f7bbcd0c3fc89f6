import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The repository root, from this file's path (Tests/ReliabilityTests/Support.swift).
let repoRoot: URL = Repository.root

/// The built tvimport binary (the debug build that `swift test` makes).

struct Outcome {
    /// The exit code, or 128 + the signal when the process died of one; nil when it timed out and was killed.
    var status: Int32?
    var seconds: Double
    var stdout: String
    var stderr: String
}

struct BinaryMissing: Error, CustomStringConvertible {
    var description: String { "tvimport binary not found at \(Repository.tvimport): run `swift build` first" }
}

/// Runs `executable` with `args` in `directory`, killing it after `timeout` seconds (TestSupport's
/// runner), without the TVIMPORT_* variables of the caller's environment.
func runProcess(_ executable: String, _ args: [String], in directory: URL, timeout: Double = 600,
                environment: [String: String] = [:]) throws -> Outcome {
    var env: [String: String?] = ["TVIMPORT_DB": nil, "TVIMPORT_OUTPUT": nil, "TVIMPORT_CACHE": nil, "TVIMPORT_BASE_URL": nil]
    for (key, value) in environment { env[key] = value }
    let result = try Subprocess.run(executable, args, in: directory, environment: env, timeout: timeout)
    return Outcome(status: result.exitStatus, seconds: result.seconds, stdout: result.output, stderr: result.stderr)
}

/// A temporary `guard/work` pair: tvimport runs in `work`; anything that appears in `guard` or in
/// `work` outside the expected names was written where it should not be.
final class GuardedSandbox {
    let guardDir: URL
    let work: URL
    init() throws {
        guardDir = FileManager.default.temporaryDirectory.appendingPathComponent("reliability-\(UUID().uuidString)")
        work = guardDir.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: guardDir) }

    func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    func write(_ name: String, _ data: Data) throws {
        try data.write(to: work.appendingPathComponent(name))
    }

    @discardableResult
    func tvimport(_ args: [String], timeout: Double = 60) throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: Repository.tvimport) else {
            Issue.record("\(BinaryMissing())")
            throw BinaryMissing()
        }
        return try runProcess(Repository.tvimport, args, in: work, timeout: timeout)
    }

    /// Every path under the guard directory, relative to it.
    func tree() -> Set<String> {
        Set(FileManager.default.subpaths(atPath: guardDir.path) ?? [])
    }

    /// Every regular file under `work/name`.
    func files(under name: String) -> [String] {
        let root = path(name)
        return (FileManager.default.subpaths(atPath: root) ?? []).map { root + "/" + $0 }.filter {
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &isDir) && !isDir.boolValue
        }
    }
}

/// The first programme start of the generated guides: the next full hour plus one hour.
let guideBase: Int = {
    let now = Int(Date().timeIntervalSince1970)
    return now - now % 3600 + 7200
}()

/// A small guide: `channels` channels with `programmes` half-hour programmes each from `start`.
func makeGuide(channels: [String], programmes: Int, start: Int = guideBase, titlePrefix: String = "Show") -> String {
    GuideText.document(
        channels: channels.map { .init($0, name: "Name of \($0)") },
        programmes: channels.flatMap { c in
            (0..<programmes).map { i in
                .init(c, start: Int64(start + i * 1800), stop: Int64(start + i * 1800 + 1800), title: "\(titlePrefix) \(i)")
            }
        },
        generator: "reliability")
}
