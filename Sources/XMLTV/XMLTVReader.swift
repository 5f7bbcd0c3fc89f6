// Streaming XMLTV reader on libxml2's SAX2 push parser: one channel or programme at a time,
// constant memory, no network, no external entities. (SAX2 rather than xmlTextReader: the reader
// builds and frees a tree node for every element and text, and parses 2.5 times slower here.)
internal import CLibXML2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Primitives

/// Collects the first libxml2 error; its address is handed to libxml2 as the handler's context.
private final class ErrorSink {
    var message: String?
    var line: Int?
}

/// A streaming reader of XMLTV files on libxml2: one channel or programme at a time, in
/// document order, in constant memory, gzip inflated on the way. It never touches the network and
/// expands no external entities; times are converted to UTC (`XMLTVTime`). Malformed or truncated
/// XML is an `XMLTVError` naming the file and line; oddities that do not stop reading are
/// `warnings`.
///
/// ```swift
/// let reader = try XMLTVReader(path: "guide.xml.gz")
/// while let item = try reader.next() {
///     if case .programme(let p) = item { print(p.start, p.titles.first?.text ?? "") }
/// }
/// ```
///
/// See <doc:GettingStarted>.
public final class XMLTVReader {
    /// The file being read, as given.
    public let path: String
    /// The options it reads with.
    public let options: XMLTVReaderOptions
    /// True when the file starts with the gzip magic bytes (the name does not matter).
    public let isGzip: Bool

    /// Reading-time warnings, at most `options.maxWarnings`; see `suppressedWarningCount`.
    public private(set) var warnings: [XMLTVWarning] = []
    /// Warnings beyond `options.maxWarnings`, counted but not kept.
    public private(set) var suppressedWarningCount = 0

    /// Bytes of XML consumed so far (uncompressed bytes for a gzip file).
    public private(set) var bytesRead: Int64 = 0

    private var parser: xmlParserCtxtPtr?
    private let sink = ErrorSink()
    private let input: GuideInput
    private let chunk: UnsafeMutablePointer<UInt8>
    private static let chunkSize = 1 << 16

    /// Records completed by the last chunk, handed out one by one.
    private var ready: [XMLTVRecord] = []
    private var readyIndex = 0
    private var finished = false
    private var failure: XMLTVError?
    /// An error found by a callback (libxml2 is then stopped).
    private var callbackFailure: XMLTVError?

    // Where the parser is: open elements, and the channel or programme being recorded.
    private var openElements = 0
    private var rootOpen = false
    private var rootClosed = false
    private enum Recording { case none, channel(XMLTVChannel), programme(ProgrammeRecordHead) }
    private var recording = Recording.none
    private let tape = TapeWriter()
    /// Inside a `<title>` (a child) of the programme being recorded; whether one had text (for the
    /// missing-title warning, without decoding).
    private var inTitle = false
    private var sawTitle = false
    private var warnedMissingZone = false

    /// A programme's attributes, read from its start tag.
    private struct ProgrammeRecordHead {
        var channel: String
        var start: Int64
        var stop: Int64?
        var clumpIndex = 0
        var clumpCount = 1
        var line: Int
    }

    /// Opens `path` (once: a named pipe or /dev/stdin works too). Throws when it cannot be read.
    public init(path: String, options: XMLTVReaderOptions = .init()) throws(XMLTVError) {
        self.path = path
        self.options = options
        do {
            input = try GuideInput(path: path, observer: options.inputObserver)
        } catch {
            throw XMLTVError(file: path, message: error.message)
        }
        isGzip = input.isGzip
        chunk = .allocate(capacity: Self.chunkSize)
    }

    deinit {
        if let parser {
            if let document = parser.pointee.myDoc { xmlFreeDoc(document) }
            xmlFreeParserCtxt(parser)
        }
        chunk.deallocate()
    }

    /// The next channel or programme in document order; nil at the end of the document.
    /// Throws for malformed or truncated XML (and keeps throwing the same error afterwards).
    public func next() throws(XMLTVError) -> XMLTVItem? {
        switch try nextRecord() {
        case .channel(let c): .channel(c)
        case .programme(let p): .programme(p.decoded())
        case nil: nil
        }
    }

    /// Like `next`, with programmes left undecoded: the schedule and the hash are there at once,
    /// the content when asked for (`ProgrammeRecord.decoded()`).
    public func nextRecord() throws(XMLTVError) -> XMLTVRecord? {
        while true {
            if readyIndex < ready.count {
                readyIndex += 1
                return ready[readyIndex - 1]
            }
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
            if let failure { throw failure }
            if finished { return nil }
            tv_silenceGenericErrors()
            do throws(XMLTVError) {
                try parseChunk()
            } catch {
                failure = error   // thrown once the records before it are handed out
            }
        }
    }

    // MARK: Feeding libxml2

    private func parseChunk() throws(XMLTVError) {
        var count = input.read(into: chunk, count: parser == nil ? 4 : Self.chunkSize)
        // libxml2 guesses the encoding (BOM, UTF-16) from the first four bytes: a pipe may give fewer.
        while parser == nil, count > 0, count < 4 {
            let more = input.read(into: chunk + count, count: 4 - count)
            if more <= 0 { break }
            count += more
        }
        if count < 0 { throw input.endedEarly && rootOpen && !rootClosed ? truncated() : inputError() }
        if parser == nil {
            try startParser(count)
            if count > 0 { return }
        }
        let status = xmlParseChunk(parser, count > 0 ? UnsafeRawPointer(chunk).assumingMemoryBound(to: CChar.self) : nil,
                                   Int32(count), count == 0 ? 1 : 0)
        bytesRead = max(bytesRead, Int64(xmlByteConsumed(parser)))
        if let callbackFailure { throw callbackFailure }
        if status != 0 || parser!.pointee.wellFormed == 0 {
            // At the last byte, an open document is a cut-off one, whatever libxml2 calls it
            // ("AttValue: ' expected", "Extra content at the end of the document").
            if count == 0, rootOpen, !rootClosed { throw truncated() }
            throw error("malformed XML")
        }
        if count == 0 { try finish() }
    }

    /// Creates the push parser with the first bytes, from which libxml2 guesses the encoding.
    private func startParser(_ count: Int) throws(XMLTVError) {
        var handler = xmlSAXHandler()
        // The default SAX2 handlers keep the DTD's declarations (for entities); elements, text,
        // comments and processing instructions are ours, so no tree is ever built.
        xmlSAXVersion(&handler, 2)
        handler.startElementNs = { context, name, _, _, _, _, count, defaulted, attributes in
            guard let name else { return }
            // Defaults from a DTD's ATTLIST come last: the file did not say them, leave them out.
            XMLTVReader.withOwner(context) { $0.didStart(name, attributes: attributes, count: Int(count - defaulted)) }
        }
        handler.endElementNs = { context, _, _, _ in
            XMLTVReader.withOwner(context) { $0.didEnd() }
        }
        let characters: charactersSAXFunc = { context, text, count in
            guard let text else { return }
            XMLTVReader.withOwner(context) { $0.didRead(text, Int(count)) }
        }
        handler.characters = characters
        handler.cdataBlock = characters
        handler.ignorableWhitespace = characters
        handler.comment = nil
        handler.processingInstruction = nil
        handler.reference = nil
        handler.serror = { context, error in
            // The context is the parser (ours, or the one checking an entity): the first error counts.
            guard let context, let error,
                  let owner = context.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private else { return }
            let sink = Unmanaged<XMLTVReader>.fromOpaque(owner).takeUnretainedValue().sink
            guard error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue, sink.message == nil else { return }
            let text = error.pointee.message.map { String(cString: $0) } ?? "XML error \(error.pointee.code)"
            sink.message = text.normalised(.collapse).excerpt(limit: 200)
            sink.line = error.pointee.line > 0 ? Int(error.pointee.line) : nil
        }
        let first = UnsafeRawPointer(chunk).assumingMemoryBound(to: CChar.self)
        guard let parser = xmlCreatePushParserCtxt(&handler, nil, count > 0 ? first : nil, Int32(count), path) else {
            throw XMLTVError(file: path, message: "libxml2 cannot start parsing")
        }
        self.parser = parser
        // NONET: never fetch a DTD; no NOENT/DTDLOAD: entities are not expanded or loaded.
        xmlCtxtUseOptions(parser, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue | XML_PARSE_BIG_LINES.rawValue))
        parser.pointee._private = Unmanaged.passUnretained(self).toOpaque()
    }

    /// The reader a callback is for. libxml2 also calls back while it checks an entity's
    /// replacement text in a parser of its own: those events are not the document's and are left
    /// out (entity references are not expanded, as before).
    /// The reader is alive for as long as its parser, so a callback borrows it (no retain and
    /// release per event: millions of them).
    private static func withOwner(_ context: UnsafeMutableRawPointer?, _ body: (XMLTVReader) -> Void) {
        guard let context else { return }
        let parser = context.assumingMemoryBound(to: xmlParserCtxt.self)
        guard let owner = parser.pointee._private else { return }
        Unmanaged<XMLTVReader>.fromOpaque(owner)._withUnsafeGuaranteedRef { reader in
            if reader.parser == parser { body(reader) }
        }
    }

    /// After the last byte: the document must be complete, and the input read to its end.
    private func finish() throws(XMLTVError) {
        guard rootOpen, rootClosed else {
            throw rootOpen ? truncated() : error("no <tv> element")
        }
        // libxml2 may stop short of the end: a damaged gzip tail must still be an error.
        guard input.readToEnd() else { throw inputError() }
        if input.ignoredTrailingGarbage {
            warn("gzip-trailing-garbage", "bytes after the last gzip member ignored (not gzip data)", line: nil)
        }
        finished = true
    }

    private func fail(_ error: XMLTVError) {
        if callbackFailure == nil { callbackFailure = error }
        xmlStopParser(parser)
    }

    private var currentLine: Int { Int(parser?.pointee.input?.pointee.line ?? 0) }

    // MARK: Events

    /// libxml2's limit for one text node (XML_MAX_TEXT_LENGTH), applied to a channel's or a
    /// programme's whole recorded content.
    static let maxTextBytes = 10_000_000
    static let maxDepth = 256

    private func didStart(_ name: UnsafePointer<UInt8>, attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int) {
        let level = openElements
        openElements += 1
        // libxml2 checks depth only when it builds a tree; nothing in XMLTV nests this deep.
        if level >= Self.maxDepth { return fail(error("elements nested deeper than \(Self.maxDepth) levels")) }
        if level == 0 {
            guard nameIs(name, "tv") else { return fail(error("root element is <\(excerpt(name))>, not <tv>")) }
            rootOpen = true
        } else if level == 1 {
            if nameIs(name, "programme") { startProgramme(attributes, count) }
            else if nameIs(name, "channel") { startChannel(attributes, count) }
        } else if case .none = recording {
            return
        } else {
            if level == 2 { inTitle = nameIs(name, "title") }
            tape.start(name, attributeCount: count)
            forEachAttribute(attributes, count) { tape.attribute($0, $1) }
            checkTapeSize()
        }
    }

    private func didEnd() {
        openElements -= 1
        switch openElements {
        case 0:
            rootClosed = true
        case 1:
            switch recording {
            case .none: break
            case .channel(var channel):
                TapeReader(tape: tape.bytes).decodeChannel(into: &channel)
                ready.append(.channel(channel))
            case .programme(let head):
                // An exact-size copy: the writer keeps its buffer for the next programme.
                let record = ProgrammeRecord(channel: head.channel, start: head.start, stop: head.stop, clumpIndex: head.clumpIndex,
                                             clumpCount: head.clumpCount, line: head.line, tape: Array(tape.bytes))
                if !sawTitle {
                    warn("missing-title", "programme at \(XMLTVTime.format(head.start)) has no title", line: head.line, channel: head.channel)
                }
                ready.append(.programme(record))
            }
            recording = .none
        default:
            if case .none = recording { return }
            if openElements == 2 { inTitle = false }
            tape.end()
        }
    }

    private func didRead(_ text: UnsafePointer<UInt8>, _ count: Int) {
        // Text inside a child of the channel or programme; between the children it is layout.
        guard openElements >= 3 else { return }
        if case .none = recording { return }
        // A title's own text, as decoding reads it (text of elements nested in it left out).
        if inTitle && openElements == 3 && !sawTitle {
            for i in 0..<count where text[i] != 32 && text[i] != 9 && text[i] != 10 && text[i] != 13 {
                sawTitle = true
                break
            }
        }
        tape.text(text, count)
        checkTapeSize()
    }

    private func checkTapeSize() {
        if tape.count > Self.maxTextBytes { fail(error("element text longer than \(Self.maxTextBytes) bytes")) }
    }

    // MARK: Channels and programmes

    /// Calls `body` with each attribute's local name and value (not NUL-terminated), with
    /// character and entity references replaced.
    private func forEachAttribute(_ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ count: Int,
                                  _ body: (UnsafePointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        guard let attributes else { return }
        for i in 0..<count {
            guard let name = attributes[i * 5], let value = attributes[i * 5 + 3], let end = attributes[i * 5 + 4] else { continue }
            let raw = UnsafeBufferPointer(start: value, count: end - value)
            // Without entity substitution libxml2 hands SAX2 a value with "&" as "&#38;" and an
            // entity as "&name;": replace them as a tree builder would.
            guard raw.contains(UInt8(ascii: "&")),
                  let decoded = xmlStringLenDecodeEntities(parser, value, Int32(raw.count), Int32(XML_SUBSTITUTE_REF), 0, 0, 0) else {
                body(name, raw)
                continue
            }
            body(name, UnsafeBufferPointer(start: decoded, count: strlen(decoded)))
            tv_xmlFree(decoded)
        }
    }

    private func startChannel(_ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ count: Int) {
        let line = currentLine
        var id: String?
        forEachAttribute(attributes, count) { name, value in
            if id == nil, nameIs(name, "id") { id = String(decoding: value, as: UTF8.self) }
        }
        guard let id, !id.isEmpty else { return warn("missing-id", "<channel> without id ignored", line: line) }
        guard options.accepts(channel: id) else { return }
        tape.reset()
        recording = .channel(XMLTVChannel(id: options.canonical(id), line: line))
    }

    /// The channel attribute as a String, shared with the programme before when it is the same
    /// (programmes come grouped by channel: one String per channel, not per programme).
    private func channelName(_ value: UnsafeBufferPointer<UInt8>) -> String {
        if let last = lastChannel, last.hasUTF8(value) { return last }
        let name = String(decoding: value, as: UTF8.self)
        lastChannel = name
        return name
    }

    private var lastChannel: String?

    /// The canonical id of a programme's channel (`XMLTVReaderOptions.channelAliases`), looked up
    /// once per run of programmes of the same channel.
    private func canonicalChannel(_ channel: String) -> String {
        if options.channelAliases.isEmpty { return channel }
        if let last = lastAlias, last.source == channel { return last.canonical }
        let canonical = options.canonical(channel)
        lastAlias = (channel, canonical)
        return canonical
    }

    private var lastAlias: (source: String, canonical: String)?

    private func startProgramme(_ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ count: Int) {
        let line = currentLine
        var channel: String?
        var start: Int64?, stop: Int64?
        var badStart: String?, badStop: String?, hasStart = false   // excerpts, for warnings
        var clump: String?
        forEachAttribute(attributes, count) { name, value in
            if nameIs(name, "channel") {
                channel = channelName(value)
            } else if nameIs(name, "start") {
                hasStart = true
                start = utc(value)
                if start == nil { badStart = String(decoding: value, as: UTF8.self).excerpt() }
            } else if nameIs(name, "stop") {
                stop = utc(value)
                if stop == nil { badStop = String(decoding: value, as: UTF8.self).excerpt() }
            } else if nameIs(name, "clumpidx") {
                clump = String(decoding: value, as: UTF8.self)
            }
        }
        guard let channel, !channel.isEmpty else { return warn("missing-channel", "<programme> without channel ignored", line: line) }
        guard options.accepts(channel: channel) else { return }
        let id = canonicalChannel(channel)
        guard let start else {
            let why = hasStart ? "bad start time '\(badStart ?? "")'" : "no start time"
            return warn("bad-time", "programme with \(why) skipped", line: line, channel: channel)
        }
        if let badStop {
            warn("bad-time", "bad stop time '\(badStop)' ignored", line: line, channel: channel)
        }
        var head = ProgrammeRecordHead(channel: id, start: start, stop: stop, line: line)
        if let clump {
            if let (index, count) = parseClump(clump) {
                (head.clumpIndex, head.clumpCount) = (index, count)
            } else {
                warn("bad-clumpidx", "bad clumpidx '\(clump.excerpt())' read as 0/1", line: line, channel: channel)
            }
        }
        tape.reset()
        sawTitle = false
        recording = .programme(head)
    }

    private func parseClump(_ s: String) -> (Int, Int)? {
        let halves = s.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, halves[0].count <= 6, halves[1].count <= 6,
              let index = Int(halves[0].normalised()), let count = Int(halves[1].normalised()),
              count >= 1, index >= 0, index < count else { return nil }
        return (index, count)
    }

    /// A time attribute as UTC seconds, honouring `timeOffsetOverride`.
    private func utc(_ value: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let parts = XMLTVTime.components(value) else { return nil }
        if let override = options.timeOffsetOverride { return parts.local - Int64(override) }
        if parts.offset == nil && !warnedMissingZone {
            warnedMissingZone = true
            warn("timezone", "times without a zone are read as UTC", line: currentLine)
        }
        return parts.local - Int64(parts.offset ?? 0)
    }

    // MARK: Errors and warnings

    private func warn(_ kind: String, _ message: String, line: Int?, channel: String? = nil) {
        guard warnings.count < options.maxWarnings else {
            suppressedWarningCount += 1
            return
        }
        warnings.append(XMLTVWarning(kind: kind, message: message, line: line, channel: channel?.excerpt()))
    }

    /// An error at the current position; a failed read (truncated gzip, I/O error) is the cause
    /// of whatever libxml2 then says, so it wins.
    private func error(_ message: String) -> XMLTVError {
        if !rootOpen, input.failure == nil, input.start != .content {
            let what = input.start == .nothing ? "the file is empty" : "the file holds only whitespace"
            return XMLTVError(file: path, message: what + (input.isGzip ? " (after gzip decompression)" : "") + ": no XMLTV document")
        }
        if !rootOpen, input.failure == nil, let notXML = Self.notXMLDescription(input.head) {
            return XMLTVError(file: path, line: 1, message: notXML + (input.isGzip ? " (after gzip decompression)" : ""))
        }
        return XMLTVError(file: path, line: sink.line ?? lineOrNil(), message: input.failure ?? sink.message ?? message)
    }

    /// "not XML (starts with …)" for a file whose first character cannot begin an XML document
    /// (libxml2 only says "Document is empty"); nil when it could be XML.
    static func notXMLDescription(_ head: [UInt8]) -> String? {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let first = bytes.first, first != UInt8(ascii: "<") else { return nil }
        // UTF-16 and UTF-32 documents (a byte order mark, or `<` beside zero bytes): libxml2 reads those.
        for start: [UInt8] in [[0xFE, 0xFF], [0xFF, 0xFE], [0x00, 0x3C], [0x00, 0x00]] where bytes.starts(with: start) { return nil }
        let printable = bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 >= 0x80 }
        let shown: String
        if printable, let text = String(validating: bytes, as: UTF8.self) {
            var escaped = ""
            for c in text.unicodeScalars {
                switch c {
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                case "\t": escaped += "\\t"
                default: escaped.unicodeScalars.append(c)
                }
            }
            shown = "\"" + escaped + "\""
        } else {
            shown = "bytes " + bytes.prefix(8).map { let h = String($0, radix: 16); return h.count == 1 ? "0" + h : h }.joined(separator: " ")
        }
        return "not XML (starts with \(shown))"
    }

    /// The document is still open at the end of the input: the file was cut off. The line is where
    /// it ends; libxml2's message (or the gzip reader's) follows.
    private func truncated() -> XMLTVError {
        let cause = [input.failure, sink.message].compactMap { $0 }.joined(separator: "; ")
        return XMLTVError(file: path, line: sink.line ?? lineOrNil(),
                          message: "the file ends before the document is complete (probably truncated)" + (cause.isEmpty ? "" : ": " + cause))
    }

    private func inputError() -> XMLTVError {
        XMLTVError(file: path, line: lineOrNil(), message: input.failure ?? "cannot read the file")
    }

    private func lineOrNil() -> Int? {
        currentLine > 0 ? currentLine : nil
    }
}

private extension Substring {
    func normalised() -> String { String(self).normalised(.collapse) }
}
