import Foundation
import Listings
import Merge
import ObjectGraph
import Primitives
import XMLTV

/// One channel's programmes, normalised and shaped for the merge.
struct PreparedBlock: Sendable {
    var channel: String
    var incoming: [IncomingObject]
    /// Each incoming programme's stop (an undecoded programme's values hold only its identifier):
    /// the resolution of a shared channel takes the block's slots from here (`GuideResolver.MergedBlock`).
    var stops: [Int64?]
    var windowStart: Int64
    var windowEnd: Int64
    var anyInFuture: Bool
    var warnings: [ImportWarning]

    /// Normalises (duplicates, stops, overlaps), computes the covered window and maps to objects.
    static func prepare<P: ScheduledProgramme>(_ channel: String, _ programmes: [P], file: String?, options: ImportOptions,
                                               map: (P) -> IncomingObject) -> PreparedBlock? {
        let (clean, warnings) = ScheduleNormaliser.normalise(programmes, channel: channel)
        let importWarnings = warnings.map {
            ImportWarning(kind: $0.kind, message: $0.message, source: options.source, file: file, line: $0.line, channel: $0.channel ?? channel.excerpt())
        }
        guard let first = clean.first else {
            return importWarnings.isEmpty ? nil : PreparedBlock(channel: channel, incoming: [], stops: [], windowStart: 0, windowEnd: 0,
                                                                 anyInFuture: false, warnings: importWarnings)
        }
        var windowEnd = first.start + 1
        var anyInFuture = false
        for p in clean {
            windowEnd = max(windowEnd, p.stop ?? (p.start + 1))
            if (p.stop ?? p.start) > options.now { anyInFuture = true }
        }
        return PreparedBlock(channel: channel, incoming: clean.map(map), stops: clean.map(\.stop), windowStart: first.start,
                             windowEnd: windowEnd, anyInFuture: anyInFuture, warnings: importWarnings)
    }
}

/// Reads the guide on its own thread while the merge writes on another: parsing and SQLite then
/// share the machine's cores. Blocks travel through a small bounded queue, so memory stays at a
/// few channels' worth of programmes whatever the size of the guide.
final class GuideProducer: @unchecked Sendable {
    enum Item {
        case block(PreparedBlock)
        case end(declared: [[UInt8]: XMLTVChannel], warnings: [ImportWarning])
        case failure(any Error)
    }

    private let files: [String]
    private let options: ImportOptions
    /// Leave programmes undecoded until the merge asks (re-imports, where most are unchanged);
    /// otherwise decode them here, on the reading thread.
    private let deferDecoding: Bool
    private let map: @Sendable (ProgrammeRecord) -> IncomingObject
    private let condition = NSCondition()
    private var queue: [Item] = []
    /// Merged blocks handed back (`recycle`): the reading thread frees them, off the merge's
    /// critical path (freeing a channel's records took a tenth of a re-import's merge thread).
    private var spent: [Item] = []
    private var cancelled = false
    /// Blocks waiting for the merge. Undecoded blocks are small and the merge of a re-import
    /// runs unevenly (fast over unchanged channels): a deeper queue keeps the reader busy. Decoded
    /// blocks are several times larger, and a first import's merge is always the slower side.
    private var capacity: Int { deferDecoding ? 16 : 4 }

    init(files: [String], options: ImportOptions, deferDecoding: Bool) {
        self.files = files
        self.options = options
        self.deferDecoding = deferDecoding
        map = Self.mapping(deferDecoding: deferDecoding)
    }

    /// How records become the merge's input: decoded at once, or when the merge asks.
    static func mapping(deferDecoding: Bool) -> @Sendable (ProgrammeRecord) -> IncomingObject {
        if deferDecoding { return { ListingsMapper.deferredProgramme($0) } }
        return { ListingsMapper.programme($0.decoded()) }
    }

    func start() {
        let thread = Thread { [self] in produce() }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// The next item; blocks until the reader has one.
    func next() -> Item {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty { condition.wait() }
        let item = queue.removeFirst()
        condition.broadcast()
        return item
    }

    /// Takes back an item the merge is done with; the reading thread frees it.
    func recycle(_ item: consuming Item) {
        condition.lock()
        spent.append(item)
        condition.unlock()
    }

    /// Stops the reader (the merge failed): it finishes at its next step.
    func cancel() {
        condition.lock()
        cancelled = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// Queues an item; false when cancelled.
    private func push(_ item: Item) -> Bool {
        var freed: [Item] = []
        defer { freed.removeAll() }   // outside the lock
        condition.lock()
        defer { condition.unlock() }
        swap(&freed, &spent)
        while queue.count >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        queue.append(item)
        condition.broadcast()
        return true
    }

    private func produce() {
        var declared: [[UInt8]: XMLTVChannel] = [:]
        var warnings: [ImportWarning] = []
        var finished = Set<[UInt8]>()
        var block: [ProgrammeRecord] = []
        var blockChannel: String?
        var blockBytes: Int64 = 0   // held to `maxChannelBytes`
        func flush(_ file: String?) throws -> Bool {
            guard let channel = blockChannel else { return true }
            guard finished.insert(Array(channel.utf8)).inserted else { throw GuideImporter.NotGroupedByChannel(channel: channel) }
            defer { block.removeAll(keepingCapacity: true) }
            guard let prepared = PreparedBlock.prepare(channel, block, file: file, options: options, map: map) else { return true }
            return push(.block(prepared))
        }
        do {
            var readerWarnings: [ImportWarning] = []
            let completed = try readGuide(files: files, options: options, channel: { c, file in
                let key = Array(c.id.utf8)
                if declared[key] != nil {
                    warnings.append(ImportWarning(kind: "duplicate-channel", message: "channel '\(c.id.excerpt())' is declared twice; the last declaration wins",
                                                  source: options.source, file: file, line: c.line, channel: c.id.excerpt()))
                }
                declared[key] = c
            }, programme: { p, file in
                if !(blockChannel.map(p.channel.hasSameUTF8(as:)) ?? false) {
                    guard try flush(file) else { return false }
                    blockChannel = p.channel
                    blockBytes = 0
                }
                blockBytes += Int64(p.textBytes)
                if blockBytes > options.maxChannelBytes {
                    throw ImportError.channelTooLarge(p.channel, file: file, line: p.line, limit: options.maxChannelBytes)
                }
                block.append(p)
                return true
            }, warnings: &readerWarnings)
            warnings += readerWarnings
            guard completed else { return }
            guard try flush(files.last) else { return }
            _ = push(.end(declared: declared, warnings: warnings))
        } catch {
            _ = push(.failure(error))
        }
    }
}

/// Reads every file in turn, handing channels and programmes to the closures (a programme
/// closure returning false stops the reading), mapping reader errors to `ImportError.badInput`
/// and collecting each file's reading warnings. Returns false when stopped.
func readGuide(files: [String], options: ImportOptions,
               channel: (XMLTVChannel, String) -> Void,
               programme: (ProgrammeRecord, String) throws -> Bool,
               warnings: inout [ImportWarning]) throws -> Bool {
    for file in files {
        let reader: XMLTVReader
        do { reader = try XMLTVReader(path: file, options: options.reader) } catch { throw ImportError.badInput(error) }
        do {
            while let item = try reader.nextRecord() {
                switch item {
                case .channel(let c): channel(c, file)
                case .programme(let p): if try !programme(p, file) { return false }
                }
            }
        } catch let error as XMLTVError {
            throw ImportError.badInput(error)
        }
        for w in reader.warnings {
            warnings.append(ImportWarning(kind: w.kind, message: w.message, source: options.source, file: file, line: w.line, channel: w.channel))
        }
    }
    return true
}
