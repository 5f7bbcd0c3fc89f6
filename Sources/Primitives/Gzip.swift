import CZlib

/// gzip compression with zlib in one stream: `serve` compresses each feed once with it
/// (Sources/Serve/FeedFiles.swift); the XMLTV export, hundreds of megabytes, uses `ParallelGzip`
/// (the same zlib, on every core). The header carries no name and no time (mtime 0), so the same
/// bytes always compress to the same bytes.
///
/// ```swift
/// let deflater = try GzipDeflater()
/// try deflater.compress(Array("<tv>".utf8), finish: false) { chunk in output += chunk }
/// try deflater.compress([], finish: true) { chunk in output += chunk }
/// let small = GzipDeflater.gzip(Array("<tv/>".utf8), level: 9)
/// ```
public final class GzipDeflater {
    /// zlib refused to start or to go on (the status zlib returned).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var status: Int32
        public var description: String { "zlib: gzip compression failed (\(status))" }
    }

    /// Heap-allocated: zlib checks that the stream it initialised has not moved.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var output = [UInt8](repeating: 0, count: 1 << 16)

    /// `level` is zlib's, 1 (fastest) to 9 (smallest); -1 is zlib's default (6).
    public init(level: Int32 = Z_DEFAULT_COMPRESSION) throws(Failure) {
        stream.initialize(to: z_stream())
        // 15 + 16: a gzip wrapper around deflate's largest window.
        let status = tv_deflateInit2(stream, level, 15 + 16)
        guard status == Z_OK else {
            stream.deallocate()
            throw Failure(status: status)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Compresses `bytes`, handing each block of output to `sink`; `finish` ends the gzip member.
    public func compress<E: Error>(_ bytes: [UInt8], finish: Bool, _ sink: (ArraySlice<UInt8>) throws(E) -> Void) throws(E) {
        let capacity = output.count
        var failed: Int32?
        // zlib only reads the input (its `next_in` is not const for old compilers' sake): no copy.
        try bytes.withUnsafeBufferPointer { (input) throws(E) in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.pointee.avail_in = UInt32(input.count)
            defer { stream.pointee.next_in = nil }
            while true {
                let (status, produced) = output.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(capacity)
                    let status = deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH)
                    return (status, capacity - Int(stream.pointee.avail_out))
                }
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    failed = status
                    return
                }
                if produced > 0 { try sink(output[0..<produced]) }
                if finish ? status == Z_STREAM_END : (stream.pointee.avail_in == 0 && produced < capacity) { break }
            }
        }
        // Only a stream used wrongly fails (zlib's own errors); callers with typed errors map it.
        precondition(failed == nil, "zlib deflate failed with status \(failed ?? 0)")
    }

    /// `bytes` as one gzip member, or nil when zlib cannot start.
    public static func gzip(_ bytes: [UInt8], level: Int32 = Z_DEFAULT_COMPRESSION) -> [UInt8]? {
        guard let deflater = try? GzipDeflater(level: level) else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count / 4 + 64)
        deflater.compress(bytes, finish: true) { (chunk: ArraySlice<UInt8>) in result += chunk }
        return result
    }
}
