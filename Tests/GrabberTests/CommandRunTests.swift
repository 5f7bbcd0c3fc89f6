import Foundation
import Testing
@testable import Grabber
#if canImport(Glibc)
import Glibc
#endif

/// Runs `script` with /bin/sh (as a command source would run any program), reads its standard
/// output to the end and finishes the run.
private func run(_ script: String, timeout: Double = 30, directory: String = "/tmp",
                 errorLine: (@Sendable (String) -> Void)? = nil) throws -> (output: String, outcome: CommandRun.Outcome, group: pid_t) {
    let command = try CommandRun(executable: "/bin/sh", arguments: ["sh", "-c", script], directory: directory, timeout: timeout,
                                 errorLine: errorLine)
    // Opened by path, as the XMLTV reader opens it.
    let descriptor = open(command.outputPath, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw CannotOpen(path: command.outputPath, reason: String(cString: strerror(errno))) }
    defer { close(descriptor) }
    var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if got <= 0 { break }
        bytes += buffer[..<got]
    }
    return (String(decoding: bytes, as: UTF8.self), command.finish(), command.processGroup)
}

private struct CannotOpen: Error { var path: String; var reason: String }

/// True while any process of group `group` exists (zombies included).
private func groupExists(_ group: pid_t) -> Bool {
    kill(-group, 0) == 0 || errno == EPERM
}

@Suite struct CommandRunTests {
    @Test func successReadsTheOutputAndReportsStatusZero() throws {
        let (output, outcome, group) = try run("echo '<tv/>'; echo note >&2")
        #expect(output == "<tv/>\n")
        #expect(outcome.succeeded)
        #expect(outcome.termination == .exited(0))
        #expect(outcome.errorTail == ["note"])
        #expect(!groupExists(group))
    }

    @Test func nonZeroExitKeepsTheLastLinesOfStandardError() throws {
        let (_, outcome, _) = try run("for i in 1 2 3 4 5 6 7; do echo line$i >&2; done; echo half; exit 3")
        #expect(!outcome.succeeded)
        #expect(outcome.termination == .exited(3))
        #expect(outcome.errorTail == ["line3", "line4", "line5", "line6", "line7"])
        #expect(outcome.summary.contains("exit status 3"))
        #expect(outcome.summary.contains("line7"))
    }

    @Test func deathBySignalIsReported() throws {
        let (_, outcome, _) = try run("echo partial; kill -KILL $$")
        #expect(outcome.termination == .signalled(SIGKILL))
        #expect(!outcome.succeeded)
        #expect(outcome.status.contains("signal 9"))
    }

    @Test func timeOutKillsTheWholeProcessGroupAndLeavesNoZombie() throws {
        // The shell starts two children (a sleeper in the background and one in the foreground),
        // both holding standard output open, and ignores SIGTERM so that only SIGKILL ends it.
        let started = Date()
        let (_, outcome, group) = try run("trap '' TERM; sleep 60 & sleep 60; echo never", timeout: 1)
        let elapsed = Date().timeIntervalSince(started)
        #expect(outcome.timedOut)
        #expect(!outcome.succeeded)
        #expect(outcome.status.contains("timed out after 1 s"))
        #expect(elapsed < 1 + 5, "returned after \(elapsed) s")
        #expect(!groupExists(group), "a process of the command's group is left")
    }

    @Test func aStopRequestKillsTheGroupBeforeItsTimeLimit() throws {
        let started = Date()
        let command = try CommandRun(executable: "/bin/sh", arguments: ["sh", "-c", "sleep 60 & sleep 60"], directory: "/tmp", timeout: 60,
                                     stopRequested: { Date().timeIntervalSince(started) > 0.5 })
        let outcome = command.finish()
        #expect(outcome.interrupted)
        #expect(!outcome.timedOut)
        #expect(!outcome.succeeded)
        #expect(outcome.status.contains("stopped by a signal"))
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(!groupExists(command.processGroup))
    }

    @Test func runsInTheGivenDirectoryWithThisEnvironment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grabber-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        setenv("TVIMPORT_GRABBER_TEST", "passed through", 1)
        let (output, _, _) = try run("pwd; echo \"$TVIMPORT_GRABBER_TEST\"", directory: directory)
        let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        #expect(output == "\(resolved)\npassed through\n")
    }

    @Test func standardErrorIsPassedOnLineByLine() throws {
        final class Lines: @unchecked Sendable { var all: [String] = []; let lock = NSLock() }
        let lines = Lines()
        _ = try run("printf 'one\\ntwo\\nthree' >&2", errorLine: { line in lines.lock.withLock { lines.all.append(line) } })
        #expect(lines.lock.withLock { lines.all } == ["one", "two", "three"])
    }

    @Test func aMissingExecutableCannotStart() {
        #expect(throws: StartError.self) {
            _ = try CommandRun(executable: "/nonexistent/tv_grab_none", arguments: ["tv_grab_none"], directory: "/tmp", timeout: 5)
        }
    }

    @Test func lookupSearchesPathAndResolvesRelativeNames() throws {
        #expect(ExecutableLookup.locate("sh", directory: "/", searchPath: "/nonexistent:/bin") == "/bin/sh")
        #expect(ExecutableLookup.locate("sh", directory: "/", searchPath: "/nonexistent") == nil)
        #expect(ExecutableLookup.locate("tv_grab_none", directory: "/", searchPath: "/usr/bin:/bin") == nil)
        #expect(ExecutableLookup.locate("bin/sh", directory: "/", searchPath: nil) == "/bin/sh")
        // A directory or a file without the execute bit is not a command.
        #expect(ExecutableLookup.locate("/tmp", directory: "/", searchPath: nil) == nil)
        let plain = FileManager.default.temporaryDirectory.appendingPathComponent("grabber-plain-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: plain, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o644]))
        defer { try? FileManager.default.removeItem(atPath: plain) }
        #expect(ExecutableLookup.locate(plain, directory: "/", searchPath: nil) == nil)
    }
}
