import CommandLineOptions
import Foundation
import Grabber
import Job
#if canImport(Glibc)
import Glibc
#endif

/// `tvimport serve` runs tvimport-serve in this process (execv): its signals (SIGTERM drains) and
/// its exit status are the server's own, and tvimport itself links no server code.
enum ServeExec {
    static let programName = "tvimport-serve"

    /// Replaces this process with tvimport-serve and `arguments`; returns only by exiting 69 when
    /// there is none to run. It is looked for beside this executable (symlinks resolved), then on
    /// `PATH`, as the shell would (`ExecutableLookup`, which finds a source's grabber command too).
    static func run(arguments: [String]) -> Never {
        let ownDirectory = ownExecutable().map { String($0[..<($0.lastIndex(of: "/") ?? $0.startIndex)]) }
        let environment = ProcessInfo.processInfo.environment
        let searchPath = ([ownDirectory] + [environment["PATH"]]).compactMap { $0 }.joined(separator: ":")
        if let path = ExecutableLookup.locate(programName, directory: FileManager.default.currentDirectoryPath, searchPath: searchPath) {
            let argv = ([programName] + arguments).map { strdup($0) } + [nil]
            execv(path, argv)
            let reason = String(cString: strerror(errno))
            finish { throw JobError(.unavailable, "serve: cannot run \(path): \(reason)") }
        }
        let looked = ownDirectory.map { "\($0)/\(programName) (nor on PATH)" } ?? "PATH"
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
