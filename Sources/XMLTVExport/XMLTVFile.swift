import Glibc
import Primitives

/// One output file written atomically and only when its bytes change: the bytes go to a temporary
/// file beside it (gzip-compressed on the way, on every core, when the name ends in `.gz`), which then either
/// replaces the file (synced, renamed, directory synced) or, when it holds exactly the same bytes,
/// is removed, so the file keeps its mtime. Memory stays constant: bytes are compressed and written
/// as they come, and the comparison reads both files in blocks. The disk writes start behind the
/// bytes as they are written, so the closing flush waits for the last few megabytes only.
final class XMLTVFile {
    let path: String
    let temporary: String
    private var fd: Int32
    private var deflater: ParallelGzip?
    /// Bytes written, and how many of them were handed to the disk (`DurableFile.startWriteBack`).
    private var written = 0
    private var writtenBack = 0
    /// Disk writes start behind the file every this many bytes, so that the final flush (about a
    /// tenth of a second for a 37 MB guide) waits for the last few megabytes only.
    private static let writeBackStep = 4 << 20

    init(path: String) throws(XMLTVExportError) {
        self.path = path
        temporary = DurableFile.temporaryPath(for: path)
        fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw XMLTVExportError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        if path.hasSuffix(".gz") { deflater = ParallelGzip() }
    }

    deinit {
        if fd >= 0 {
            close(fd)
            unlink(temporary)
        }
    }

    func write(_ bytes: UnsafeBufferPointer<UInt8>) throws(XMLTVExportError) {
        if let deflater {
            try deflater.compress(bytes, finish: false) { (chunk) throws(XMLTVExportError) in try writeAll(chunk) }
        } else {
            try writeAll(UnsafeRawBufferPointer(bytes))
        }
    }

    /// Ends the file and publishes it; true when the file changed, false when it already held
    /// these bytes (then it is left untouched).
    func commit() throws(XMLTVExportError) -> Bool {
        if let deflater {
            try deflater.compress(UnsafeBufferPointer(start: nil, count: 0), finish: true) { (chunk) throws(XMLTVExportError) in try writeAll(chunk) }
        }
        if DurableFile.holds(path, .file(temporary)) {
            close(fd)
            fd = -1
            unlink(temporary)
            return false
        }
        close(fd)
        fd = -1
        do {
            try DurableFile.moveIntoPlace(temporary, to: path)
        } catch {
            unlink(temporary)
            throw XMLTVExportError("cannot replace \(path): \(error)")
        }
        return true
    }

    private func writeAll(_ bytes: ArraySlice<UInt8>) throws(XMLTVExportError) {
        var failed: XMLTVExportError?
        bytes.withUnsafeBytes { bytes in
            do throws(XMLTVExportError) { try writeAll(bytes) } catch { failed = error }
        }
        if let failed { throw failed }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(XMLTVExportError) {
        guard DurableFile.writeAll(fd, bytes) else { throw failure("cannot write \(temporary)") }
        written += bytes.count
        if written - writtenBack >= Self.writeBackStep {
            DurableFile.startWriteBack(fd, offset: writtenBack, count: written - writtenBack)
            writtenBack = written
        }
    }

    private func failure(_ what: String) -> XMLTVExportError {
        XMLTVExportError("\(what): \(String(cString: strerror(errno)))")
    }
}

/// The XMLTV export could not be written (exit 73: the previous file is still there, whole).
public struct XMLTVExportError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
