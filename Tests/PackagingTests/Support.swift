import Foundation
import Testing

/// The package's root directory (this file is Tests/PackagingTests/Support.swift).
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The debug binary that `swift test` has just built (every product is built before the tests run).
let tvimportBinary = repoRoot.appendingPathComponent(".build/debug/tvimport")

func repoFile(_ path: String) throws -> String {
    try String(contentsOf: repoRoot.appendingPathComponent(path), encoding: .utf8)
}

struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var output: String { stdout + stderr }
}

/// A program on PATH (or nil), found the way a shell would.
func which(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    let dirs = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
    for dir in dirs {
        let candidate = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Runs a real program; stdout and stderr go through files, so large outputs cannot block it.
@discardableResult
func run(_ executable: String, _ arguments: [String], in directory: URL? = nil,
         environment extra: [String: String] = [:], stdin: String? = nil) throws -> ProcessResult {
    let scratch = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: scratch) }
    let out = scratch.appendingPathComponent("stdout"), err = scratch.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable.contains("/") ? executable : (which(executable) ?? executable))
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    process.environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
    process.standardOutput = outHandle
    process.standardError = errHandle
    if let stdin {
        let input = scratch.appendingPathComponent("stdin")
        try stdin.write(to: input, atomically: true, encoding: .utf8)
        process.standardInput = try FileHandle(forReadingFrom: input)
    } else {
        process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    process.waitUntilExit()
    try outHandle.close()
    try errHandle.close()
    return ProcessResult(status: process.terminationStatus,
                         stdout: try String(contentsOf: out, encoding: .utf8),
                         stderr: try String(contentsOf: err, encoding: .utf8))
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
