import Foundation
import ObjectGraph

/// Writes the channels' programmes on several threads and hands their bytes out in channel
/// order. Each worker reads through a frozen view of its own (`Store.read(withViews:)`: the
/// export's snapshot on another connection) and takes the next channel no one has taken. The
/// channel being handed out streams block by block; the few after it wait in memory (at most
/// `ahead` channels, `bufferLimit` bytes each), so memory stays bounded whatever the guide's size.
///
/// Why: the export is SQLite's reading and the XML writing, 1.5 times `xmllint`'s CPU time for
/// the file it writes; on one core it cannot run at the parse floor, split by channel it can.
/// Channels are independent (each its own three cursors), so the bytes are those one thread writes.
final class ChannelWorkers<Result>: @unchecked Sendable {
    /// Writes channel `channel`'s part of the document with `writer`; what it returns is kept in
    /// channel order.
    typealias Render = (_ channel: Int, _ context: ObjectContext, _ writer: inout XMLTVDocumentWriter) throws -> Result

    /// Writes channels `0..<count` with `render` into `writer`, each channel's bytes after the
    /// previous one's: on the views' threads when there are views, else one after the other on
    /// `context`. The results in channel order.
    static func write(count: Int, context: ObjectContext, views: [FrozenStoreView], into writer: inout XMLTVDocumentWriter,
                      render: @escaping Render) throws -> [Result] {
        guard !views.isEmpty, count > 1 else { return try (0..<count).map { try render($0, context, &writer) } }
        try writer.flush()
        return try ChannelWorkers(count: count, views: views, render: render).run { bytes in try writer.append(written: bytes) }
    }

    private let count: Int
    private let views: [FrozenStoreView]
    private let render: Render
    /// Channels taken and not yet handed out, at most (so a worker never runs far ahead).
    private let ahead: Int
    /// Bytes a channel may hold before its worker waits for them to be handed out.
    private static var bufferLimit: Int { 1 << 20 }

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var next = 0
    private var current = 0
    private var slots: [Int: Slot] = [:]
    private var failure: (any Error)?
    private var running = 0

    private struct Slot {
        var blocks: [[UInt8]] = []
        var bytes = 0
        var result: Result?
        var done = false
    }

    /// A worker stops: another one failed, or the output did.
    private struct Stopped: Error {}

    private init(count: Int, views: [FrozenStoreView], render: @escaping Render) {
        self.count = count
        self.views = views
        self.render = render
        ahead = 2 * views.count
    }

    /// Starts a worker per view, hands each channel's blocks to `output` in order, and waits for
    /// every worker to end (they read through views the caller closes) before returning or throwing.
    private func run(_ output: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> [Result] {
        running = views.count
        for index in views.indices {
            let thread = Thread { [self] in work(index) }
            thread.stackSize = 8 << 20
            thread.start()
        }
        var results: [Result] = []
        results.reserveCapacity(count)
        condition.lock()
        while failure == nil && current < count {
            guard let slot = slots[current] else {
                condition.wait()
                continue
            }
            if !slot.blocks.isEmpty {
                slots[current]!.blocks = []
                slots[current]!.bytes = 0
                condition.broadcast()   // its worker may wait for room
                condition.unlock()
                var failed: (any Error)?
                do {
                    for block in slot.blocks { try block.withUnsafeBufferPointer { try output($0) } }
                } catch {
                    failed = error
                }
                condition.lock()
                if let failed, failure == nil { failure = failed }
            } else if slot.done {
                results.append(slot.result!)
                slots[current] = nil
                current += 1
                condition.broadcast()   // a worker may wait to take a channel
            } else {
                condition.wait()
            }
        }
        condition.broadcast()
        while running > 0 { condition.wait() }
        let failure = self.failure
        condition.unlock()
        if let failure { throw failure }
        return results
    }

    private func work(_ index: Int) {
        do {
            try views[index].read { context in
                // One writer (and its buffer) for all of this worker's channels.
                var channel = 0
                var writer = XMLTVDocumentWriter(header: false) { [unowned self] bytes in try deliver(bytes, of: channel) }
                while let next = take() {
                    channel = next
                    let result = try render(channel, context, &writer)
                    try writer.flush()
                    finish(channel, result)
                }
            }
        } catch is Stopped {
        } catch {
            condition.lock()
            if failure == nil { failure = error }
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// The next channel to write; nil when all are taken or the work stopped.
    private func take() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil && next < count && next >= current + ahead { condition.wait() }
        guard failure == nil && next < count else { return nil }
        let channel = next
        next += 1
        slots[channel] = Slot()
        return channel
    }

    /// Keeps a block of `channel`'s bytes for the output; waits while the channel holds its limit.
    private func deliver(_ bytes: UnsafeBufferPointer<UInt8>, of channel: Int) throws {
        let block = Array(bytes)
        condition.lock()
        defer { condition.unlock() }
        while failure == nil && slots[channel]!.bytes >= Self.bufferLimit { condition.wait() }
        guard failure == nil else { throw Stopped() }
        slots[channel]!.blocks.append(block)
        slots[channel]!.bytes += block.count
        if channel == current { condition.broadcast() }
    }

    private func finish(_ channel: Int, _ result: Result) {
        condition.lock()
        slots[channel]!.result = result
        slots[channel]!.done = true
        if channel == current { condition.broadcast() }
        condition.unlock()
    }
}
