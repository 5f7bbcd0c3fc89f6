import CSpawn
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a process ended.
public enum Termination: Sendable, Equatable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    init(waitStatus status: Int32) {
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros that Swift does not import.
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    public var isSuccess: Bool { self == .exited(0) }

    public var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .signalled(let signal): "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
        }
    }
}

/// Why a command could not be started.
public struct StartError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// One child process, started without a shell as the leader of a process group of its own, with
/// its standard output and standard error on pipes and its standard input on /dev/null.
/// Hand-written on posix_spawn rather than Foundation's `Process` (no process group, and it reaps
/// children on its own) or swift-subprocess (async only, while the import reads on plain threads;
/// and the import needs the raw output descriptor for its reader). See README, "Using a grabber".
final class ChildProcess: @unchecked Sendable {
    /// The child's pid, which is also its process group's id.
    let pid: pid_t
    /// The read ends of the child's standard output and standard error (close-on-exec).
    let output: Int32
    let errors: Int32

    /// Orphaned grandchildren of a killed command come back to this process and are reaped here.
    private static let subreaper: Void = { _ = tv_become_subreaper() }()

    /// Starts `executable` (a path) with `arguments` (the first is the name it is called by) in
    /// `directory`, with this process's environment.
    init(executable: String, arguments: [String], directory: String) throws(StartError) {
        _ = Self.subreaper
        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        guard tv_pipe(&outputPipe, 1 << 20) == 0 else { throw StartError(description: "cannot create a pipe: \(String(cString: strerror(errno)))") }
        guard tv_pipe(&errorPipe, 0) == 0 else {
            let reason = String(cString: strerror(errno))
            close(outputPipe[0]); close(outputPipe[1])
            throw StartError(description: "cannot create a pipe: \(reason)")
        }
        let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for a in cArguments { free(a) } }
        var child: pid_t = 0
        let result = tv_spawn(executable, &cArguments, environ, directory, input, outputPipe[1], errorPipe[1], &child)
        close(input)
        close(outputPipe[1])
        close(errorPipe[1])
        guard result == 0 else {
            close(outputPipe[0]); close(errorPipe[0])
            throw StartError(description: "cannot start \(executable) in \(directory): \(String(cString: strerror(result)))")
        }
        pid = child
        output = outputPipe[0]
        errors = errorPipe[0]
    }

    /// Blocks until the leader has exited, without reaping it: while it is a zombie its pid, and
    /// so its group id, cannot be reused, so the group can still be signalled safely.
    func waitForLeaderExit() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
    }

    /// Whether the leader exits within `seconds` (it is not reaped).
    func leaderExited(within seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            var info = siginfo_t()
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT | WNOHANG)
            if result == 0 && info._sifields._sigchld.si_pid != 0 { return true }
            if result != 0 && errno != EINTR { return true }   // ECHILD: already reaped
            if ContinuousClock.now >= deadline { return false }
            usleep(10_000)
        }
    }

    /// Sends `signal` to every process of the group.
    func signalGroup(_ signal: Int32) {
        _ = killpg(pid, signal)
    }

    /// After the leader exited: kills what is left of its group, then reaps the leader and every
    /// member that is this process's child (orphans come here, see `subreaper`).
    func reap() -> Termination {
        waitForLeaderExit()
        signalGroup(SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        var other: Int32 = 0
        while true {
            let reaped = waitpid(-pid, &other, 0)
            if reaped > 0 || (reaped < 0 && errno == EINTR) { continue }
            break   // ECHILD: no member of the group is our child any more
        }
        return Termination(waitStatus: status)
    }

    deinit {
        close(output)
        close(errors)
    }
}

/// Finds the executable a command names, as the shell would: a name with a slash is a path
/// (relative to `directory`), any other name is looked up in `searchPath` (PATH's syntax).
public enum ExecutableLookup {
    public static func locate(_ name: String, directory: String, searchPath: String?) -> String? {
        if name.contains("/") {
            let path = name.hasPrefix("/") ? name : (directory as NSString).appendingPathComponent(name)
            return isExecutableFile(path) ? path : nil
        }
        guard !name.isEmpty else { return nil }
        for entry in (searchPath ?? "").split(separator: ":", omittingEmptySubsequences: false) {
            let folder = entry.isEmpty ? "." : String(entry)
            let base = folder.hasPrefix("/") ? folder : (directory as NSString).appendingPathComponent(folder)
            let path = (base as NSString).appendingPathComponent(name)
            if isExecutableFile(path) { return path }
        }
        return nil
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
}
