import Foundation
import TestSupport
import Testing

/// The package's root directory (this file is Tests/PackagingTests/Support.swift).
let repoRoot = Repository.root

/// The debug binary that `swift test` has just built (every product is built before the tests run).

func repoFile(_ path: String) throws -> String {
    try String(contentsOf: repoRoot.appendingPathComponent(path), encoding: .utf8)
}

/// A program on PATH (or in the system directories), or nil.
func which(_ name: String) -> String? { Tool.path(name) ?? ["/usr/sbin", "/sbin"].lazy.map { "\($0)/\(name)" }.first(where: Tool.isInstalled) }

struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var output: String { stdout + stderr }
}

/// Runs a real program (TestSupport's runner).
@discardableResult
func run(_ executable: String, _ arguments: [String], in directory: URL? = nil,
         environment extra: [String: String] = [:], stdin: String? = nil) throws -> RunResult {
    let result = try Subprocess.run(which(executable) ?? executable, arguments, in: directory, environment: extra, input: stdin)
    return RunResult(status: result.status, stdout: result.output, stderr: result.stderr)
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("tvimport-packaging-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The lines of a unit file's section, as (key, value), comments and blank lines dropped.
func unitSettings(_ text: String, section: String) -> [(key: String, value: String)] {
    var current = "", settings: [(String, String)] = []
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let line = raw.trimmingCharacters(in: .whitespaces)
        if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
        if line.hasPrefix("[") { current = String(line.dropFirst().dropLast()); continue }
        guard current == section, let eq = line.firstIndex(of: "=") else { continue }
        settings.append((String(line[..<eq]), String(line[line.index(after: eq)...])))
    }
    return settings
}
