import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One run of a command source (a grabber such as `tv_grab_uk_freeview`): started at once, its
/// standard output left for the caller to read as it comes (`outputPath`), its standard error
/// collected (the last lines, for the report) and optionally passed on line by line, and its time
/// limit enforced on its whole process group. `finish` or `abort` ends every run.
public final class CommandRun: @unchecked Sendable {
    /// How the run ended, with what the report needs.
    public struct Outcome: Sendable {
        public var termination: Termination
        /// The time limit ran out and the process group was killed.
        public var timedOut: Bool
        /// Seconds from the start to the leader's exit.
        public var duration: Double
        /// The last lines of its standard error.
        public var errorTail: [String]
        public var timeout: Double
        /// Killed by `abort` while still running: its output was refused, its own end is unknown.
        public var abandoned: Bool
        /// Killed because this process was asked to stop (SIGTERM, SIGINT).
        public var interrupted: Bool

        /// Exited with status 0, in time.
        public var succeeded: Bool { termination.isSuccess && !timedOut && !abandoned && !interrupted }

        /// "exit status 1", "timed out after 5 s (its process group was killed)", ...
        public var status: String {
            if timedOut { return "timed out after \(Self.seconds(timeout)) (its process group was killed)" }
            if abandoned { return "stopped once its output was refused" }
            if interrupted { return "stopped by a signal to tvimport (its process group was killed)" }
            return termination.description
        }

        /// The status and the last lines of standard error, for the report's `error`.
        public var summary: String {
            errorTail.isEmpty ? status + ", nothing on its standard error"
                : status + "; the last lines of its standard error:\n" + errorTail.map { "  " + $0 }.joined(separator: "\n")
        }

        static func seconds(_ value: Double) -> String {
            value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
        }
    }

    /// Lines of standard error kept for the report.
    public static let tailLines = 5

    private let process: ChildProcess
    private let timeout: Double
    private let started = ContinuousClock.now
    private let condition = NSCondition()
    private var ended = false
    private var timedOut = false
    private var abandoned = false
    private var interrupted = false
    private let stopRequested: (@Sendable () -> Bool)?
    private var errorReaderDone = false
    private var tail = TailLines(limit: CommandRun.tailLines)
    private var outcome: Outcome?

    /// Starts `arguments` (the first names the command, `executable` is where it was found) in
    /// `directory`. `errorLine`, when given, receives each line of its standard error as it comes.
    /// `stopRequested` is asked a few times a second: true stops the command as its time limit would
    /// (it runs in a process group of its own, so a Ctrl-C at the terminal does not reach it).
    public init(executable: String, arguments: [String], directory: String, timeout: Double,
                errorLine: (@Sendable (String) -> Void)? = nil, stopRequested: (@Sendable () -> Bool)? = nil) throws(StartError) {
        process = try ChildProcess(executable: executable, arguments: arguments, directory: directory)
        self.timeout = timeout
        self.stopRequested = stopRequested
        let errorThread = Thread { [self] in readErrors(errorLine) }
        errorThread.start()
        let watchdog = Thread { [self] in enforceTimeLimit() }
        watchdog.start()
    }

    /// The command's standard output, as a path that opens the same pipe (Linux's /dev/fd): the
    /// XMLTV reader reads it like a file, as the bytes come.
    public var outputPath: String { "/dev/fd/\(process.output)" }

    /// The pid of the command, which is also the id of its process group.
    public var processGroup: pid_t { process.pid }

    /// Waits for the command to end (within its time limit) after its output was read to the end;
    /// whatever is left of its process group is killed, and every process reaped.
    public func finish() -> Outcome {
        condition.lock()
        if let outcome {
            condition.unlock()
            return outcome
        }
        condition.unlock()
        process.waitForLeaderExit()
        let duration = started.duration(to: .now)
        let termination = process.reap()
        condition.lock()
        ended = true
        condition.broadcast()
        // Every writer of standard error is gone now (killed with the group); a process that left
        // the group may still hold it open, so the wait is bounded.
        let until = Date(timeIntervalSinceNow: 1)
        while !errorReaderDone && condition.wait(until: until) {}
        let result = Outcome(termination: termination, timedOut: timedOut,
                             duration: Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18,
                             errorTail: tail.lines, timeout: timeout, abandoned: abandoned, interrupted: interrupted)
        outcome = result
        condition.unlock()
        return result
    }

    /// Stops the command (its output is not wanted: the import failed), then as `finish`. A command
    /// that is about to exit anyway (its output just ended) gets half a second to report its own status.
    public func abort() -> Outcome {
        condition.lock()
        let done = outcome != nil
        condition.unlock()
        if !done && !process.leaderExited(within: 0.5) {
            condition.lock()
            abandoned = true
            condition.unlock()
            process.signalGroup(SIGKILL)
        }
        return finish()
    }

    deinit {
        // A run that nobody finished (an error path) still leaves no process behind.
        if outcome == nil { _ = abort() }
    }

    /// Kills the group when the time limit runs out: SIGTERM first, so that a grabber may remove
    /// its temporary files, SIGKILL two seconds later.
    private func enforceTimeLimit() {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !ended && Date() < deadline {
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.25)))
            if !ended, stopRequested?() == true {
                interrupted = true
                break
            }
        }
        guard !ended else { return }
        if !interrupted { timedOut = true }
        process.signalGroup(SIGTERM)
        let grace = Date(timeIntervalSinceNow: 2)
        while !ended && condition.wait(until: grace) {}
        if !ended { process.signalGroup(SIGKILL) }
    }

    /// Reads standard error to its end (or until the run ended), keeping the last lines.
    private func readErrors(_ errorLine: (@Sendable (String) -> Void)?) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func emit(_ line: ArraySlice<UInt8>) {
            let text = String(decoding: line, as: UTF8.self)
            condition.lock()
            tail.append(text)
            condition.unlock()
            errorLine?(text)
        }
        var poller = pollfd(fd: process.errors, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&poller, 1, 200)
            if ready == 0 {
                condition.lock()
                let stop = ended
                condition.unlock()
                if stop { break }
                continue
            }
            if ready < 0 { if errno == EINTR { continue } else { break } }
            let got = buffer.withUnsafeMutableBytes { read(process.errors, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { break }
            pending += buffer[..<got]
            while let newline = pending.firstIndex(of: 0x0A) {
                emit(pending[..<newline])
                pending.removeSubrange(...newline)
            }
            // A line longer than this is cut: the report needs its end, not all of it.
            if pending.count > 4096 { emit(pending[...]); pending.removeAll() }
        }
        if !pending.isEmpty { emit(pending[...]) }
        condition.lock()
        errorReaderDone = true
        condition.broadcast()
        condition.unlock()
    }
}

/// The last `limit` lines.
struct TailLines {
    let limit: Int
    private(set) var lines: [String] = []
    mutating func append(_ line: String) {
        lines.append(line)
        if lines.count > limit { lines.removeFirst(lines.count - limit) }
    }
}
