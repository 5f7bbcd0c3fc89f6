import Foundation
import CommandLineOptions
import Job
#if canImport(Glibc)
import Glibc
#endif

/// `tvimport serve` runs tvimport-serve in this process (execv): its signals (SIGTERM drains) and
/// its exit status are the server's own, and tvimport itself links no server code.
enum ServeExec {
    static let programName = "tvimport-serve"

    /// tvimport-serve beside this executable (symlinks resolved), then on `PATH`.
    static func candidates(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var paths: [String] = []
        if let own = ownExecutable() {
            paths.append(String(own[..<(own.lastIndex(of: "/") ?? own.startIndex)]) + "/" + programName)
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":") where !directory.isEmpty {
            let path = directory + "/" + programName
            if !paths.contains(path) { paths.append(path) }
        }
        return paths
    }

    /// Replaces this process with tvimport-serve and `arguments`; returns only by exiting 69 when
    /// there is none to run.
    static func run(arguments: [String]) -> Never {
        let found = candidates()
        for path in found where access(path, X_OK) == 0 {
            let argv = ([programName] + arguments).map { strdup($0) } + [nil]
            execv(path, argv)
            let reason = String(cString: strerror(errno))
            finish { throw JobError(.unavailable, "serve: cannot run \(path): \(reason)") }
        }
        let looked = found.first.map { "\($0) (nor on PATH)" } ?? "PATH"
        finish { throw JobError(.unavailable, "serve: \(programName) is not installed: looked at \(looked); install it beside tvimport") }
    }

    /// The resolved path of the running executable (`/proc/self/exe`).
    static func ownExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
