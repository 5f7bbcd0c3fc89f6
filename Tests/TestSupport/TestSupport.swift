// What every test target shares: where the repository and ../shared are, which optional tools
// are installed (so a test can say `.enabled(if:)` with a reason instead of passing by not
// running), one way to run a subprocess, the shared guide generator and the feed parsers.
import Foundation

/// The repository this package is, and files in it.
public enum Repository {
    /// The package root, from this file's path (Tests/TestSupport/TestSupport.swift).
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A path below the root.
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The debug build of the `tvimport` executable (what `swift build` makes).
    public static var tvimport: String { path(".build/debug/tvimport") }
    /// The debug build of the `tvimport-serve` executable, which `tvimport serve` execs.
    public static var tvimportServe: String { path(".build/debug/tvimport-serve") }
}

/// `../shared` beside the repository: real-world fixtures, the guide generator, the validators.
public enum Shared {
    public static let directory = Repository.root.deletingLastPathComponent().appendingPathComponent("shared").standardizedFileURL

    /// `../shared/fixtures/xmltv` (see its MANIFEST.tsv).
    public static let fixtures = directory.appendingPathComponent("fixtures/xmltv").path
    /// True when the real-world fixtures are there.
    public static var hasFixtures: Bool { FileManager.default.fileExists(atPath: fixtures + "/MANIFEST.tsv") }
    /// A fixture's path.
    public static func fixture(_ name: String) -> String { fixtures + "/" + name }

    /// `../shared/tools/xmltvgen.py`, the generator of large guides and their revisions.
    public static let generator = directory.appendingPathComponent("tools/xmltvgen.py").path
    /// True when the generator is there and Python can run it.
    public static var hasGenerator: Bool { FileManager.default.fileExists(atPath: generator) && Tool.path("python3") != nil }
}

/// Folders the tests write in, all below one folder of this test process that is removed when the
/// process exits: tests that kept theirs (a shared fixture folder, folders of whole exports) left
/// 30 MB or more in /tmp on every run.
public enum Scratch {
    /// This process's folder, made on first use and removed at exit.
    public static let root: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tvimport-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Scratch.root) }
        return url
    }()

    /// A new, empty folder below `root`, named `prefix` and a unique suffix.
    public static func directory(_ prefix: String) throws -> URL {
        let url = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// External programs the tests use.
public enum Tool {
    /// The full path of an executable on `PATH`, or nil.
    public static func path(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// True when `name` is on `PATH`.
    public static func isInstalled(_ name: String) -> Bool { path(name) != nil }
}

/// The repository's Python venv (scripts/install-deps makes it, with the iCalendar parsers).
public enum Venv {
    public static let python = Repository.path(".venv/bin/python")
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: python) }
}

/// What a finished subprocess left: exit status, standard output and standard error.
public struct ProcessResult: Sendable {
    /// The exit status; 128 + N when the process died of signal N; nil when it outlived its time limit (it was killed).
    public var exitStatus: Int32?
    public var stdout: Data
    public var stderr: String
    /// Wall-clock seconds.
    public var seconds: Double

    /// The exit status, or -1 for a process that was killed at its time limit.
    public var status: Int32 { exitStatus ?? -1 }
    /// Standard output as text.
    public var output: String { String(decoding: stdout, as: UTF8.self) }
}

/// The one way the tests run programs.
public enum Subprocess {
    /// Runs `executable` (a path, or a name looked up on `PATH`) and waits for it. Standard output
    /// and error go through files, so a chatty child can never block on a full pipe; standard input
    /// is `input` (empty by default). `environment` adds to (or, with nil values, removes from) the test's environment.
    /// Past `timeout` seconds the process is killed and `exitStatus` is nil.
    public static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                           environment: [String: String?] = [:], input: String? = nil, timeout: Double = 600) throws -> ProcessResult {
        let id = UUID().uuidString
        let outURL = FileManager.default.temporaryDirectory.appendingPathComponent("stdout-\(id)")
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(id)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let inURL = FileManager.default.temporaryDirectory.appendingPathComponent("stdin-\(id)")
        defer { for url in [outURL, errURL, inURL] { try? FileManager.default.removeItem(at: url) } }
        let outHandle = try FileHandle(forWritingTo: outURL), errHandle = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.path(executable) ?? executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = outHandle
        process.standardError = errHandle
        if let input {
            try Data(input.utf8).write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        let started = Date()
        try process.run()
        let deadline = started.addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline {
                timedOut = true
                process.terminate()
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let status: Int32? = timedOut ? nil
            : (process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus)
        return ProcessResult(exitStatus: status, stdout: (try? Data(contentsOf: outURL)) ?? Data(),
                             stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "",
                             seconds: Date().timeIntervalSince(started))
    }
}

/// `../shared/tools/xmltvgen.py`: large guides and their revisions.
public enum GuideGenerator {
    /// Runs the generator with `arguments` (see its --help); throws with its stderr when it fails.
    public static func run(_ arguments: [String]) throws {
        let result = try Subprocess.run("python3", [Shared.generator] + arguments)
        guard result.exitStatus == 0 else { throw Failure(message: "xmltvgen.py \(arguments.joined(separator: " ")): \(result.stderr)") }
    }
}

/// Tests/ICalendarTests/Fixtures/parse_feeds.py in the venv: what the Python iCalendar libraries
/// `icalendar` and `ical` decode from feeds, for the tests that check the writer against them.
public enum FeedParsers {
    public static let script = Repository.path("Tests/ICalendarTests/Fixtures/parse_feeds.py")

    /// True when the venv with both libraries is installed.
    public static var isInstalled: Bool { Venv.isInstalled }

    /// What each library decoded from each file.
    public static func parse(_ paths: [String]) throws -> ParseOutput {
        let result = try Subprocess.run(Venv.python, [script] + paths)
        guard result.exitStatus == 0 else { throw Failure(message: "parse_feeds.py failed: \(result.stderr)") }
        return try JSONDecoder().decode(ParseOutput.self, from: result.stdout)
    }
}

/// What parse_feeds.py prints.
public struct ParseOutput: Decodable, Sendable {
    public var versions: [String: String]
    /// path -> library ("icalendar", "ical") -> what it read.
    public var files: [String: [String: Result]]

    public struct Result: Decodable, Sendable {
        public var error: String?
        public var events: [Event]?
        public var calendar: Calendar?
    }

    public struct Calendar: Decodable, Sendable {
        public var name: String?
        public var x_wr_calname: String?
    }

    public struct Event: Decodable, Sendable {
        public var uid: String
        public var dtstart: String
        public var dtend: String
        public var summary: String
        public var description: String?
        public var categories: [String]
        public var location: String?
        public var url: String?
        public var sequence: Int
    }
}

/// A failure of a test helper, with its reason.
public struct Failure: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

#if canImport(Glibc)
import Glibc
#endif

/// A TCP port on 127.0.0.1 that nothing listens on now (for a test server).
public func freePort() -> UInt16? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = 0
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard ok == 0 else { return nil }
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
    return UInt16(bigEndian: addr.sin_port)
}

/// Whether something accepts connections on 127.0.0.1:port.
public func canConnect(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = port.bigEndian
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
}

/// SplitMix64: a small seeded generator, so that a failing property run replays from its seed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number of `range`, from the next value.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
}
