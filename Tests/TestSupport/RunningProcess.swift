import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program left running while a test talks to it (a server, a concurrent writer, a browser
/// script): `Subprocess.run` for what the test does not wait for. Standard output and error go to
/// files (no pipe can fill up); standard input is empty, or a pipe the test writes to
/// (`keepsInputOpen`). The process is killed when the value goes away, so a failing test leaves
/// nothing running.
public final class RunningProcess {
    private let process = Process()
    private let input: Pipe?
    private let outURL: URL
    private let errURL: URL

    /// Starts `executable` (a path, or a name looked up on `PATH`). `environment` adds to (or,
    /// with nil values, removes from) the test's environment.
    public init(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                environment: [String: String?] = [:], keepsInputOpen: Bool = false) throws {
        let id = UUID().uuidString
        outURL = FileManager.default.temporaryDirectory.appendingPathComponent("running-out-\(id)")
        errURL = FileManager.default.temporaryDirectory.appendingPathComponent("running-err-\(id)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: Tool.path(executable) ?? executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        input = keepsInputOpen ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }
    /// The program's path.
    public var executable: String { process.executableURL?.path ?? "" }
    /// The exit status once the process has ended (128 + N when it died of signal N), else nil.
    public var exitStatus: Int32? {
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
    /// True until the process has ended.
    public var isRunning: Bool { process.isRunning }
    /// Standard output so far.
    public var stdout: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    /// Standard error so far.
    public var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Writes to standard input (with `keepsInputOpen`); false when the process no longer reads it.
    @discardableResult
    public func write(_ text: String) -> Bool {
        guard let input else { return false }
        signal(SIGPIPE, SIG_IGN)   // a process that has ended must fail the write, not the test run
        return (try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))) != nil
    }

    /// Closes standard input (with `keepsInputOpen`): end of input for the process.
    public func closeInput() { try? input?.fileHandleForWriting.close() }

    /// Sends `signal` (SIGTERM by default).
    public func send(_ signal: Int32 = SIGTERM) { kill(process.processIdentifier, signal) }

    /// Waits until `condition` holds, the process ends, or `timeout` seconds pass; whether it holds.
    @discardableResult
    public func wait(timeout: Double, until condition: (RunningProcess) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(self) {
            guard process.isRunning, Date() < deadline else { return condition(self) }
            usleep(20_000)
        }
        return true
    }

    /// Waits for the end; past `timeout` seconds the process is killed first. The exit status,
    /// 128 + N for a process that died of signal N.
    @discardableResult
    public func waitForExit(timeout: Double = 600) -> Int32 {
        wait(timeout: timeout) { !$0.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return exitStatus ?? -1
    }

    /// Stops the process: `signal`, then SIGKILL if it has not ended after `grace` seconds.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM, grace: Double = 10) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return waitForExit(timeout: grace)
    }
}
