import Glibc
import Primitives

/// One output file written atomically and only when its bytes change: the bytes go to a temporary
/// file beside it (gzip-compressed on the way, on every core, when the name ends in `.gz`), which then either
/// replaces the file (synced, renamed, directory synced) or, when it holds exactly the same bytes,
/// is removed, so the file keeps its mtime. Memory stays constant: bytes are compressed and written
/// as they come, and the comparison reads both files in blocks.
final class XMLTVFile {
    let path: String
    let temporary: String
    private var fd: Int32
    private var deflater: ParallelGzip?

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
        if Self.sameContent(temporary, path) {
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
        var failed = false
        bytes.withUnsafeBytes { failed = !write(all: $0) }
        if failed { throw failure("cannot write \(temporary)") }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(XMLTVExportError) {
        guard write(all: bytes) else { throw failure("cannot write \(temporary)") }
    }

    /// False when a write failed (`errno` says why).
    private func write(all bytes: UnsafeRawBufferPointer) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let n = Glibc.write(fd, rest.baseAddress!, rest.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
        return true
    }

    private func failure(_ what: String) -> XMLTVExportError {
        XMLTVExportError("\(what): \(String(cString: strerror(errno)))")
    }

    /// Whether both files exist with the same bytes, read in blocks.
    static func sameContent(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0, sa.st_size == sb.st_size else { return false }
        let fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC)
        defer {
            if fa >= 0 { close(fa) }
            if fb >= 0 { close(fb) }
        }
        guard fa >= 0, fb >= 0 else { return false }
        let size = 1 << 16
        var ba = [UInt8](repeating: 0, count: size), bb = [UInt8](repeating: 0, count: size)
        while true {
            let na = readFully(fa, &ba), nb = readFully(fb, &bb)
            guard na == nb, na >= 0 else { return false }
            if na == 0 { return true }
            if memcmp(ba, bb, na) != 0 { return false }
        }
    }

    private static func readFully(_ fd: Int32, _ buffer: inout [UInt8]) -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return -1 }
            if n == 0 { break }
            filled += n
        }
        return filled
    }
}

/// The XMLTV export could not be written (exit 73: the previous file is still there, whole).
public struct XMLTVExportError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
