import CZlib
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// gzip compression on every core, as pigz does it: the input is cut into blocks of a fixed size,
/// each block is deflated on its own thread (primed with the 32 KiB before it, so the file stays
/// about as small as a single stream), and the blocks' output is joined in order into one gzip
/// member. The cuts depend only on the bytes, so the same bytes always give the same file; the
/// header carries no name and no time (mtime 0), as `GzipDeflater`'s.
///
/// ```swift
/// let gzip = ParallelGzip()
/// try Array("<tv>".utf8).withUnsafeBufferPointer { try gzip.compress($0, finish: false) { chunk in output += chunk } }
/// try gzip.compress(UnsafeBufferPointer(start: nil, count: 0), finish: true) { chunk in output += chunk }
/// ```
public final class ParallelGzip {
    private let level: Int32
    private let blockSize: Int
    /// Blocks handed out and not yet written, oldest first.
    private var inFlight: [Block] = []
    private let maxInFlight: Int
    /// The bytes of the block being filled.
    private var filling: [UInt8] = []
    /// The last 32 KiB of the block before: the next block's dictionary.
    private var dictionary: [UInt8] = []
    private var headerWritten = false
    private var crc: UInt = 0
    private var length: UInt64 = 0

    /// `level` is zlib's, 1 (fastest) to 9 (smallest); -1 is zlib's default (6). `blockSize`
    /// is pigz's default: smaller blocks lose compression, larger ones parallelism on small files.
    public init(level: Int32 = Z_DEFAULT_COMPRESSION, blockSize: Int = 1 << 17) {
        self.level = level
        self.blockSize = blockSize
        // Two blocks a core: one deflating, one waiting, so no core idles while the oldest is written.
        maxInFlight = 2 * Self.onlineCPUs
        filling.reserveCapacity(blockSize)
    }

    deinit {
        // Blocks still running own their buffers; only wait, so none outlives what it reads.
        for block in inFlight { block.done.wait() }
    }

    /// Compresses `bytes`, handing each piece of output to `sink` in order; `finish` ends the
    /// gzip member (nothing may follow).
    public func compress<E: Error>(_ bytes: UnsafeBufferPointer<UInt8>, finish: Bool, _ sink: (ArraySlice<UInt8>) throws(E) -> Void) throws(E) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let taken = rest.prefix(blockSize - filling.count)
            filling += taken
            rest = rest.dropFirst(taken.count)
            if filling.count == blockSize { try submit(last: false, sink) }
        }
        guard finish else { return }
        try submit(last: true, sink)
        while let oldest = inFlight.first {
            oldest.done.wait()
            try writeOldest(sink)
        }
        var trailer: [UInt8] = []
        for shift in stride(from: 0, to: 32, by: 8) { trailer.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { trailer.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        try sink(trailer[...])
    }

    /// Hands the filled block to a core; writes the blocks done before it (waits for the oldest
    /// when too many are out).
    private func submit<E: Error>(last: Bool, _ sink: (ArraySlice<UInt8>) throws(E) -> Void) throws(E) {
        let block = Block(input: filling, dictionary: dictionary, last: last)
        dictionary = Array(filling.suffix(Self.window))
        filling = []
        filling.reserveCapacity(blockSize)
        let level = self.level
        DispatchQueue.global().async { block.deflate(level: level) }
        inFlight.append(block)
        while let oldest = inFlight.first {
            if inFlight.count > maxInFlight {
                oldest.done.wait()
            } else if oldest.done.wait(timeout: .now()) != .success {
                return
            }
            try writeOldest(sink)
        }
    }

    /// Writes the oldest block, which is done (its `done` waited for).
    private func writeOldest<E: Error>(_ sink: (ArraySlice<UInt8>) throws(E) -> Void) throws(E) {
        let block = inFlight.removeFirst()
        precondition(block.status == Z_OK || block.status == Z_STREAM_END, "zlib deflate failed with status \(block.status)")
        if !headerWritten {
            // zlib's own gzip header: no name, mtime 0, its "extra flags" for the level, Unix.
            let extraFlags: UInt8 = level == 9 ? 2 : (level == 1 ? 4 : 0)
            try sink([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, extraFlags, 3][...])
            headerWritten = true
        }
        if !block.output.isEmpty { try sink(block.output[...]) }
        crc = crc32_combine(crc, block.crc, Int(block.input.count))
        length += UInt64(block.input.count)
    }

    /// The cores to deflate on.
    private static var onlineCPUs: Int {
        #if canImport(Glibc)
        return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
        return 2
        #endif
    }

    /// deflate's window: what a block may refer back to.
    private static let window = 1 << 15

    /// One block: its input, the dictionary before it, and (once `done` is signalled) its raw
    /// deflate output and CRC. Written by one thread, then read by the other after `done`.
    private final class Block: @unchecked Sendable {
        let input: [UInt8]
        let dictionary: [UInt8]
        let last: Bool
        var output: [UInt8] = []
        var crc: UInt = 0
        var status: Int32 = Z_OK
        let done = DispatchSemaphore(value: 0)

        init(input: [UInt8], dictionary: [UInt8], last: Bool) {
            self.input = input
            self.dictionary = dictionary
            self.last = last
        }

        /// Raw deflate of the block: a sync flush ends each block on a byte boundary (an empty
        /// stored block), so blocks join; the last one ends the stream.
        func deflate(level: Int32) {
            defer { done.signal() }
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)   // zlib checks it does not move
            stream.initialize(to: z_stream())
            defer { stream.deallocate() }
            status = tv_deflateInit2(stream, level, -15)
            guard status == Z_OK else { return }
            defer { deflateEnd(stream) }
            if !dictionary.isEmpty {
                status = dictionary.withUnsafeBufferPointer { deflateSetDictionary(stream, $0.baseAddress, UInt32($0.count)) }
                guard status == Z_OK else { return }
            }
            // Room for all of it in one call: the bound, and the flush's marker.
            output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(input.count))) + 16)
            let capacity = output.count
            input.withUnsafeBufferPointer { input in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = UInt32(input.count)
                output.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(capacity)
                    status = CZlib.deflate(stream, last ? Z_FINISH : Z_SYNC_FLUSH)
                }
            }
            let produced = capacity - Int(stream.pointee.avail_out)
            if status == Z_OK || status == Z_STREAM_END, stream.pointee.avail_in != 0 || (last && status != Z_STREAM_END) {
                status = Z_BUF_ERROR   // the bound was not enough: cannot happen, but never write half a block
            }
            output.removeLast(capacity - produced)
            crc = input.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
        }
    }
}

