import Merge
import ObjectGraph
import XMLTVImport

/// The exit codes of the user contract (docs/design.md#user-contract), sysexits.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case cannotCreate = 73
    case tempFail = 75
    case config = 78
}

/// A failure the command line reports as one line on stderr and an exit code.
public struct JobError: Error, Sendable, CustomStringConvertible {
    public let status: ExitStatus
    public let message: String
    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
    public var description: String { message }

    /// An error of a lower layer that has an exit status of its own, as a `JobError`; nil for
    /// any other. A busy database is 75: try again later.
    public init?(_ error: any Error) {
        guard let error = error as? StoreError, case .busy = error else { return nil }
        self.init(.tempFail, error.description)
    }
}

extension ExitStatus {
    /// Bad data is 65; a temporary file the import could not write is 73 (the input may be fine).
    init(_ error: ImportError) {
        if case .cannotWrite = error { self = .cannotCreate } else { self = .dataError }
    }
}
