import Foundation
import Primitives
import Synchronization
import Logging

/// Where the job's messages go: stderr, as plain lines for people (`tvimport: …`) or as one JSON
/// object per line for containers (`--log-format json`). Reports go to stdout, never here.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

public enum JobLog {
    nonisolated(unsafe) public private(set) static var format = LogFormat.text

    /// One failure line on stderr, in the chosen format.
    public static func failure(_ message: String) {
        // A command's last lines of stderr come inside the message: still one line for cron.
        let message = message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " | ")
        if format == .json { logger.error("\(message)") } else { FileHandle.standardError.write(Data("tvimport: \(message)\n".utf8)) }
    }

    /// Installs the handler once, at start-up.
    public static func bootstrap(format: LogFormat, level: Logger.Level = .info) {
        self.format = format
        LoggingSystem.bootstrap { label in
            var handler = StderrLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
    }

    public static let logger = Logger(label: "tvimport")
}

struct StderrLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let level = event.level, message = event.message
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let text: String
        switch format {
        case .text:
            text = "tvimport: \(message)\n"
        case .json:
            var object: [String: JSONValue] = ["level": .string(level.rawValue), "message": .string("\(message)"),
                                               "time": .string(UTCTime.iso8601(Int64(Date().timeIntervalSince1970.rounded(.down))))]
            for (k, v) in all { object[k] = .string("\(v)") }
            var json = JSONText(keyOrder: JSONText.serializationOrder)
            json.append(.object(object))
            text = json.string + "\n"
        }
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// SIGTERM and SIGINT ask the job to stop between transactions: the transaction under way
/// commits or rolls back as a whole, the next one does not start.
public enum StopSignal {
    /// Lock-free, so a signal handler may set it.
    static let received = Atomic<Bool>(false)

    public static func install() {
        signal(SIGTERM) { _ in StopSignal.received.store(true, ordering: .relaxed) }
        signal(SIGINT) { _ in StopSignal.received.store(true, ordering: .relaxed) }
    }

    public static var requested: Bool { received.load(ordering: .relaxed) }
}

/// A one-line progress display on stderr, only when stderr is a terminal.
final class Progress: @unchecked Sendable {
    private let enabled: Bool
    private var lastDraw = 0.0

    init(quiet: Bool) { enabled = !quiet && isatty(STDERR_FILENO) == 1 }

    func show(_ text: String) {
        guard enabled else { return }
        let now = Date().timeIntervalSince1970
        guard now - lastDraw > 0.2 else { return }
        lastDraw = now
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }

    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
