import Foundation
import Primitives

/// Streams a response body into a new temporary file, counting and hashing the bytes on the way,
/// so that no body is ever held in memory. Keeps the first bytes for the content sniffer.
final class BodySink {
    enum Abort: Equatable {
        /// The body went over the byte limit.
        case tooLarge
        /// The final response is not a success: its body is not wanted.
        case unwantedStatus
        /// The temporary file could not be written (errno).
        case diskError(Int32)
    }

    let path: String
    let maxBytes: Int64
    private(set) var bytes: Int64 = 0
    private(set) var hash = ContentHash()
    private(set) var head: [UInt8] = []
    private(set) var abort: Abort?
    private var descriptor: Int32

    /// Creates the file; fails with errno when the directory is not writable.
    init(directory: String, maxBytes: Int64) throws(SinkError) {
        self.maxBytes = maxBytes
        self.path = directory + "/.fetch-" + UUID().uuidString + ".part"
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 { throw SinkError(path: path, errno: errno) }
    }

    deinit { close() }

    /// Accepts one chunk; false means "stop the transfer" (see `abort`).
    func write(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard abort == nil else { return false }
        if bytes + Int64(chunk.count) > maxBytes {
            abort = .tooLarge
            return false
        }
        if head.count < ContentSniffer.headLength {
            head.append(contentsOf: chunk.prefix(ContentSniffer.headLength - head.count))
        }
        hash.update(chunk)
        guard DurableFile.writeAll(descriptor, chunk) else {
            abort = .diskError(errno)
            return false
        }
        bytes += Int64(chunk.count)
        return true
    }

    /// Refuses the rest of the body without writing it.
    func refuse() -> Bool {
        abort = .unwantedStatus
        return false
    }

    /// Flushes the file to disk so that the caller's rename is durable.
    func finish() throws(SinkError) {
        guard descriptor >= 0 else { return }
        let flushed = fsync(descriptor) == 0
        let failure = errno
        close()
        if !flushed { throw SinkError(path: path, errno: failure) }
    }

    /// Closes and deletes the file: every failure path ends here.
    func discard() {
        close()
        unlink(path)
    }

    private func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }
}

struct SinkError: Error {
    var path: String
    var errno: Int32
    var reason: String { String(cString: strerror(errno)) }
}
