// The bytes of one guide file, opened once and read once, for libxml2's read callback. Opening
// once lets a named pipe or /dev/stdin be read at all; inflating gzip here rather than in libxml2
// reads every member of a multi-member file and tells a truncated stream from a complete one.
internal import CLibXML2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class GuideInput {
    /// True when the data starts with the gzip magic bytes (the name does not matter).
    private(set) var isGzip = false
    /// Why reading stopped early (I/O error, corrupt or truncated gzip); nil while all is well.
    private(set) var failure: String?
    /// The gzip data stops inside a member: the file was cut off (a download that ended early).
    private(set) var endedEarly = false
    /// Bytes after the last gzip member that are neither a member nor zero padding: ignored, as
    /// `gzip -d` does (it warns "trailing garbage ignored").
    private(set) var ignoredTrailingGarbage = false
    /// How the XML read so far began: nothing yet, only whitespace, or something else. An empty
    /// file deserves a better message than libxml2's "Extra content at the end of the document".
    enum Start { case nothing, whitespace, content }
    private(set) var start = Start.nothing
    /// The first bytes of XML after leading whitespace, to say what a file that is not XML holds.
    private(set) var head: [UInt8] = []

    private let descriptor: Int32
    private let observer: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    private let raw: UnsafeMutablePointer<UInt8>
    private let rawCapacity = 1 << 16
    private var rawStart = 0
    private var rawEnd = 0
    private var rawAtEnd = false
    /// Heap-allocated: zlib checks that the stream it initialised has not moved.
    private let stream: UnsafeMutablePointer<z_stream>
    private var inflating = false
    private var inMember = false
    private var finished = false


    /// Opens `path` for reading; the error message says why it cannot be opened. `observer` sees
    /// the bytes as they are read (see `XMLTVReaderOptions.inputObserver`).
    init(path: String, observer: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil) throws(GuideInputError) {
        self.observer = observer
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw GuideInputError(message: "cannot open: \(String(cString: strerror(errno)))") }
        raw = .allocate(capacity: rawCapacity)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        _ = ensureAvailable(2)
        isGzip = rawEnd - rawStart >= 2 && raw[rawStart] == 0x1f && raw[rawStart + 1] == 0x8b
        if isGzip {
            // 15 + 16: a gzip wrapper only (the magic is already checked), largest window.
            guard tv_inflateInit2(stream, 15 + 16) == Z_OK else {
                failure = "cannot start gzip decompression"
                return
            }
            inflating = true
            inMember = true
        }
        if let failure { throw GuideInputError(message: failure) }
    }

    deinit {
        if inflating { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        raw.deallocate()
        close(descriptor)
    }

    /// Fills `buffer` with up to `count` bytes of XML: the count, 0 at the end, -1 on failure
    /// (see `failure`).
    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        guard failure == nil else { return -1 }
        guard count > 0, !finished else { return 0 }
        let got = isGzip ? inflate(into: buffer, count: count) : copy(into: buffer, count: count)
        if got > 0 && (start != .content || head.count < 16) { noteStart(buffer, got) }
        if got == 0 { finished = true }
        return failure == nil ? got : -1
    }

    private func noteStart(_ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let bytes = UnsafeBufferPointer(start: buffer, count: count)
        if start != .content {
            guard let first = bytes.firstIndex(where: { !isSpace($0) }) else {
                start = .whitespace
                return
            }
            start = .content
            head = Array(bytes[first...].prefix(16))
        } else {
            head += bytes.prefix(16 - head.count)
        }
    }

    /// Reads whatever libxml2 left unread, so that a truncated or corrupt gzip tail is still
    /// caught; false when that fails (see `failure`).
    func readToEnd() -> Bool {
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
        defer { scratch.deallocate() }
        while read(into: scratch, count: 4096) > 0 {}
        return failure == nil
    }

    // MARK: Plain files

    private func copy(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        guard rawStart < rawEnd || refill() else { return 0 }
        let n = min(count, rawEnd - rawStart)
        buffer.update(from: raw + rawStart, count: n)
        rawStart += n
        return n
    }

    // MARK: gzip

    private func inflate(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        let z = stream
        z.pointee.next_out = buffer
        z.pointee.avail_out = UInt32(count)
        while z.pointee.avail_out == UInt32(count) {
            if !inMember {
                guard startNextMember() else { break }
            }
            if rawStart == rawEnd, !refill() {
                if failure == nil { failure = "gzip data is truncated (the file ends inside a compressed member)" }
                endedEarly = true
                return -1
            }
            z.pointee.next_in = raw + rawStart
            z.pointee.avail_in = UInt32(rawEnd - rawStart)
            let status = CLibXML2.inflate(z, Z_NO_FLUSH)
            let consumed = rawEnd - rawStart - Int(z.pointee.avail_in)
            rawStart += consumed
            switch status {
            case Z_OK:
                continue
            case Z_BUF_ERROR where consumed == 0 && rawStart < rawEnd:
                // No progress with input and room for output: never expected, but never spin on it.
                failure = "gzip data is corrupt (zlib makes no progress)"
                return -1
            case Z_BUF_ERROR:
                continue
            case Z_STREAM_END:
                inMember = false
            default:
                let detail = z.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                failure = "gzip data is corrupt (\(detail))"
                return -1
            }
        }
        return count - Int(z.pointee.avail_out)
    }

    /// After a member: true when another one follows (RFC 1952 allows any number; `cat a.gz b.gz`
    /// makes them). Zero padding ends the data quietly, anything else is ignored, as gzip does.
    private func startNextMember() -> Bool {
        guard ensureAvailable(1) else { return false }
        if raw[rawStart] == 0x1f {
            guard ensureAvailable(2) else {
                if failure == nil { failure = "gzip data is truncated (the file ends inside a member header)" }
                endedEarly = true
                return false
            }
            if raw[rawStart + 1] == 0x8b {
                guard inflateReset(stream) == Z_OK else {
                    failure = "cannot restart gzip decompression"
                    return false
                }
                inMember = true
                return true
            }
        }
        // Padding or garbage: stop at the first non-zero byte, the rest is never read.
        repeat {
            while rawStart < rawEnd {
                if raw[rawStart] != 0 {
                    ignoredTrailingGarbage = true
                    rawStart = rawEnd
                    rawAtEnd = true
                    return false
                }
                rawStart += 1
            }
        } while refill()
        return false
    }

    // MARK: The raw buffer

    /// Reads more after emptying the buffer; false at the end of the file or on failure.
    private func refill() -> Bool {
        rawStart = 0
        rawEnd = 0
        return readMore()
    }

    /// Makes at least `count` unread bytes available (less only at the end of the file).
    private func ensureAvailable(_ count: Int) -> Bool {
        while rawEnd - rawStart < count {
            if rawStart > 0 {
                memmove(raw, raw + rawStart, rawEnd - rawStart)
                rawEnd -= rawStart
                rawStart = 0
            }
            guard readMore() else { return false }
        }
        return true
    }

    /// Appends one read(2) to the buffer; false at the end of the file or on failure.
    private func readMore() -> Bool {
        guard !rawAtEnd, failure == nil else { return false }
        while true {
            let n = readBytes(descriptor, raw + rawEnd, rawCapacity - rawEnd)
            if n > 0 {
                observer?(UnsafeRawBufferPointer(start: raw + rawEnd, count: n))
                rawEnd += n
                return true
            }
            if n == 0 {
                rawAtEnd = true
                return false
            }
            if errno == EINTR { continue }
            failure = "cannot read: \(String(cString: strerror(errno)))"
            return false
        }
    }
}

/// read(2), out of reach of `GuideInput.read`'s name.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// Why a guide file cannot be opened.
struct GuideInputError: Error {
    var message: String
}
