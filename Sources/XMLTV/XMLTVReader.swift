// Streaming XMLTV reader on libxml2's xmlTextReader: one channel or programme at a time,
// constant memory, no network, no external entities.
internal import CLibXML2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects the first libxml2 error; its address is handed to libxml2 as the handler's context.
private final class ErrorSink {
    var message: String?
    var line: Int?
}

public final class XMLTVReader {
    public let path: String
    public let options: XMLTVReaderOptions
    /// True when the file starts with the gzip magic bytes (the name does not matter).
    public let isGzip: Bool

    /// Reading-time warnings, at most `options.maxWarnings`; see `suppressedWarningCount`.
    public private(set) var warnings: [XMLTVWarning] = []
    public private(set) var suppressedWarningCount = 0

    /// Bytes of XML consumed so far (uncompressed bytes for a gzip file).
    public var bytesRead: Int64 {
        let consumed = Int64(xmlTextReaderByteConsumed(reader))
        if consumed > lastBytesRead { lastBytesRead = consumed }
        return lastBytesRead
    }

    private let reader: OpaquePointer
    private let sink = ErrorSink()
    private var scratch: [UInt8] = []
    private var pending = false          // the reader already sits on the next node (after xmlTextReaderNext)
    private var rootOpen = false
    private var rootClosed = false
    private var finished = false
    private var failure: XMLTVError?
    private var warnedMissingZone = false
    private var lastBytesRead: Int64 = 0
    private let input: GuideInput

    /// Opens `path` (once: a named pipe or /dev/stdin works too). Throws when it cannot be read.
    public init(path: String, options: XMLTVReaderOptions = .init()) throws(XMLTVError) {
        self.path = path
        self.options = options
        do {
            input = try GuideInput(path: path)
        } catch {
            throw XMLTVError(file: path, message: error.message)
        }
        isGzip = input.isGzip

        tv_silenceGenericErrors()
        // NONET: never fetch a DTD; no NOENT/DTDLOAD: entities are not expanded or loaded.
        let flags = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue | XML_PARSE_COMPACT.rawValue
            | XML_PARSE_BIG_LINES.rawValue)
        // libxml2 calls back (already here, for the first bytes) while `input` is alive: the reader owns both.
        let context = Unmanaged.passUnretained(input).toOpaque()
        guard let reader = xmlReaderForIO({ context, buffer, length in
            guard let context, let buffer else { return -1 }
            let input = Unmanaged<GuideInput>.fromOpaque(context).takeUnretainedValue()
            let bytes = UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt8.self)
            return Int32(input.read(into: bytes, count: Int(length)))
        }, nil, context, path, nil, flags) else {
            throw XMLTVError(file: path, message: input.failure ?? "libxml2 cannot read the file")
        }
        self.reader = reader
        xmlTextReaderSetStructuredErrorHandler(reader, { context, error in
            guard let context, let error else { return }
            let sink = Unmanaged<ErrorSink>.fromOpaque(context).takeUnretainedValue()
            guard error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue, sink.message == nil else { return }
            let text = error.pointee.message.map { String(cString: $0) } ?? "XML error \(error.pointee.code)"
            sink.message = text.normalised(.collapse).excerpt(limit: 200)
            sink.line = error.pointee.line > 0 ? Int(error.pointee.line) : nil
        }, Unmanaged.passUnretained(sink).toOpaque())
    }

    deinit {
        xmlFreeTextReader(reader)
    }

    /// The next channel or programme in document order; nil at the end of the document.
    /// Throws for malformed or truncated XML (and keeps throwing the same error afterwards).
    public func next() throws(XMLTVError) -> XMLTVItem? {
        if let failure { throw failure }
        if finished { return nil }
        tv_silenceGenericErrors()
        do throws(XMLTVError) {
            while try step() {
                let type = xmlTextReaderNodeType(reader)
                if type == NodeType.endElement {
                    if xmlTextReaderDepth(reader) == 0 { rootClosed = true }
                    continue
                }
                guard type == NodeType.element else { continue }
                let depth = xmlTextReaderDepth(reader)
                let name = xmlTextReaderConstLocalName(reader)!
                if depth == 0 {
                    guard nameIs(name, "tv") else {
                        throw error("root element is <\(excerpt(name))>, not <tv>")
                    }
                    rootOpen = true
                    if xmlTextReaderIsEmptyElement(reader) == 1 { rootClosed = true }
                } else if depth == 1 && nameIs(name, "programme") {
                    if let programme = try readProgramme() { return .programme(programme) }
                } else if depth == 1 && nameIs(name, "channel") {
                    if let channel = try readChannel() { return .channel(channel) }
                } else {
                    try consume()
                }
            }
            guard rootOpen, rootClosed else {
                throw error(rootOpen ? "document ends before </tv> (truncated file?)" : "no <tv> element")
            }
            // libxml2 may stop short of the end: a damaged gzip tail must still be an error.
            guard input.readToEnd() else { throw inputError() }
            if input.ignoredTrailingGarbage {
                warn("gzip-trailing-garbage", "bytes after the last gzip member ignored (not gzip data)", line: nil)
            }
            finished = true
            return nil
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: Walking the tree

    private enum NodeType {
        static let element: Int32 = 1
        static let text: Int32 = 3
        static let cdata: Int32 = 4
        static let whitespace: Int32 = 13
        static let significantWhitespace: Int32 = 14
        static let endElement: Int32 = 15
    }

    /// Moves to the next node; false at the end of the input.
    private func step() throws(XMLTVError) -> Bool {
        if pending {
            pending = false
            return true
        }
        switch xmlTextReaderRead(reader) {
        case 1: return true
        case 0: return false
        default: throw parseError()
        }
    }

    /// Like `step`, inside an element, where the end of the input means truncation.
    private func stepInside() throws(XMLTVError) {
        guard try step() else {
            throw parseError(fallback: "document ends inside an element (truncated file?)")
        }
    }

    /// Skips the current element with its whole subtree.
    private func consume() throws(XMLTVError) {
        if xmlTextReaderIsEmptyElement(reader) == 1 { return }
        switch xmlTextReaderNext(reader) {
        case 1: pending = true
        case 0: break
        default: throw parseError()
        }
    }

    /// Calls `body` on each child element with its local name; `body` must consume the element.
    private func forEachChild(_ body: (UnsafePointer<UInt8>) throws(XMLTVError) -> Void) throws(XMLTVError) {
        if xmlTextReaderIsEmptyElement(reader) == 1 { return }
        let depth = xmlTextReaderDepth(reader)
        while true {
            try stepInside()
            let type = xmlTextReaderNodeType(reader)
            if type == NodeType.element {
                try body(xmlTextReaderConstLocalName(reader)!)
            } else if type == NodeType.endElement && xmlTextReaderDepth(reader) == depth {
                return
            }
        }
    }

    /// Calls `body` with each attribute's local name and value of the current element.
    private func forEachAttribute(_ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>) -> Void) {
        guard xmlTextReaderMoveToFirstAttribute(reader) == 1 else { return }
        repeat {
            if let name = xmlTextReaderConstLocalName(reader), let value = xmlTextReaderConstValue(reader) {
                body(name, value)
            }
        } while xmlTextReaderMoveToNextAttribute(reader) == 1
        xmlTextReaderMoveToElement(reader)
    }

    private func attribute(_ wanted: StaticString) -> String? {
        var found: String?
        forEachAttribute { name, value in
            if found == nil, nameIs(name, wanted) { found = String(cString: value) }
        }
        return found
    }

    /// libxml2's limit for one text node (XML_MAX_TEXT_LENGTH), applied to an element's whole text.
    static let maxTextBytes = 10_000_000

    /// The element's own text (nested elements skipped), normalised; consumes the element.
    private func readText(_ mode: TextMode) throws(XMLTVError) -> String {
        if xmlTextReaderIsEmptyElement(reader) == 1 { return "" }
        scratch.removeAll(keepingCapacity: true)
        let depth = xmlTextReaderDepth(reader)
        while true {
            try stepInside()
            switch xmlTextReaderNodeType(reader) {
            case NodeType.text, NodeType.cdata, NodeType.whitespace, NodeType.significantWhitespace:
                if let value = xmlTextReaderConstValue(reader) {
                    scratch.append(contentsOf: UnsafeBufferPointer(start: value, count: strlen(value)))
                    // libxml2 refuses one text node over 10 MB; comments between nodes must not get round that.
                    if scratch.count > Self.maxTextBytes {
                        throw error("element text longer than \(Self.maxTextBytes) bytes")
                    }
                }
            case NodeType.element:
                try consume()
            case NodeType.endElement where xmlTextReaderDepth(reader) == depth:
                return scratch.withUnsafeBufferPointer { normalisedText($0, mode) }
            default:
                break
            }
        }
    }

    private func readLocalized(_ mode: TextMode, into list: inout [LocalizedText]) throws(XMLTVError) {
        let lang = attribute("lang")
        let text = try readText(mode)
        if !text.isEmpty { list.append(LocalizedText(text: text, lang: lang?.isEmpty == true ? nil : lang)) }
    }

    private func readIcon() throws(XMLTVError) -> Icon? {
        var src = "", width: Int?, height: Int?
        forEachAttribute { name, value in
            if nameIs(name, "src") { src = String(cString: value).normalised(.collapse) }
            else if nameIs(name, "width") { width = Int(String(cString: value)) }
            else if nameIs(name, "height") { height = Int(String(cString: value)) }
        }
        try consume()
        return src.isEmpty ? nil : Icon(src: src, width: width, height: height)
    }

    private var currentLine: Int {
        Int(xmlGetLineNo(xmlTextReaderCurrentNode(reader)))
    }

    // MARK: Channels and programmes

    private func readChannel() throws(XMLTVError) -> XMLTVChannel? {
        let line = currentLine
        guard let id = attribute("id"), !id.isEmpty else {
            warn("missing-id", "<channel> without id ignored", line: line)
            try consume()
            return nil
        }
        guard options.accepts(channel: id) else {
            try consume()
            return nil
        }
        var channel = XMLTVChannel(id: id, line: line)
        try forEachChild { name throws(XMLTVError) in
            if nameIs(name, "display-name") {
                try readLocalized(.collapse, into: &channel.displayNames)
            } else if nameIs(name, "icon") {
                if let icon = try readIcon() { channel.icons.append(icon) }
            } else if nameIs(name, "url") {
                let url = try readText(.collapse)
                if !url.isEmpty { channel.urls.append(url) }
            } else {
                try consume()
            }
        }
        return channel
    }

    private func readProgramme() throws(XMLTVError) -> XMLTVProgramme? {
        let line = currentLine
        var channel: String?
        var start: Int64?, stop: Int64?
        var badStart: String?, badStop: String?, hasStart = false   // excerpts, for warnings
        var clump: String?
        forEachAttribute { name, value in
            if nameIs(name, "channel") {
                channel = String(cString: value)
            } else if nameIs(name, "start") {
                hasStart = true
                start = utc(value)
                if start == nil { badStart = excerpt(value) }
            } else if nameIs(name, "stop") {
                stop = utc(value)
                if stop == nil { badStop = excerpt(value) }
            } else if nameIs(name, "clumpidx") {
                clump = String(cString: value)
            }
        }
        guard let channel, !channel.isEmpty else {
            warn("missing-channel", "<programme> without channel ignored", line: line)
            try consume()
            return nil
        }
        guard options.accepts(channel: channel) else {
            try consume()
            return nil
        }
        guard let start else {
            let why = hasStart ? "bad start time '\(badStart ?? "")'" : "no start time"
            warn("bad-time", "programme with \(why) skipped", line: line, channel: channel)
            try consume()
            return nil
        }
        if let badStop {
            warn("bad-time", "bad stop time '\(badStop)' ignored", line: line, channel: channel)
        }
        var programme = XMLTVProgramme(channel: channel, start: start, stop: stop, line: line)
        if let clump {
            if let (index, count) = parseClump(clump) {
                (programme.clumpIndex, programme.clumpCount) = (index, count)
            } else {
                warn("bad-clumpidx", "bad clumpidx '\(clump.excerpt())' read as 0/1", line: line, channel: channel)
            }
        }
        try forEachChild { name throws(XMLTVError) in try readProgrammeChild(name, into: &programme) }
        if programme.titles.isEmpty {
            warn("missing-title", "programme at \(XMLTVTime.format(start)) has no title", line: line, channel: channel)
        }
        return programme
    }

    private func readProgrammeChild(_ name: UnsafePointer<UInt8>, into p: inout XMLTVProgramme) throws(XMLTVError) {
        switch ProgrammeChild(name) {
        case .title: try readLocalized(.collapse, into: &p.titles)
        case .subTitle: try readLocalized(.collapse, into: &p.subTitles)
        case .desc: try readLocalized(.multiline, into: &p.descriptions)
        case .category: try readLocalized(.collapse, into: &p.categories)
        case .keyword: try readLocalized(.collapse, into: &p.keywords)
        case .credits:
            try forEachChild { name throws(XMLTVError) in
                guard let role = creditRole(name) else { return try consume() }
                var character: String?, guest = role == "guest"
                forEachAttribute { attribute, value in
                    if nameIs(attribute, "role") { character = String(cString: value).normalised(.collapse) }
                    else if nameIs(attribute, "guest") { guest = guest || nameIs(value, "yes") }
                }
                let person = try readText(.collapse)
                if !person.isEmpty {
                    p.credits.append(Credit(role: role, name: person, character: character?.isEmpty == true ? nil : character,
                                            isGuest: guest))
                }
            }
        case .date: p.date = try nonEmpty(readText(.collapse))
        case .language: p.language = try nonEmpty(readText(.collapse))
        case .origLanguage: p.originalLanguage = try nonEmpty(readText(.collapse))
        case .country:
            if let country = try nonEmpty(readText(.collapse)) { p.countries.append(country) }
        case .length:
            let units = attribute("units") ?? "seconds"
            let value = try readText(.collapse)
            let scale = units == "minutes" ? 60 : units == "hours" ? 3600 : 1
            if let amount = Int(value), amount >= 0, amount < Int(Int32.max) / scale { p.length = amount * scale }
        case .icon:
            if let icon = try readIcon() { p.icons.append(icon) }
        case .url:
            if let url = try nonEmpty(readText(.collapse)) { p.urls.append(url) }
        case .episodeNum:
            let system = attribute("system") ?? "onscreen"
            if let raw = try nonEmpty(readText(.collapse)) { p.episodeNumbers.append(EpisodeNumber(system: system, raw: raw)) }
        case .video:
            try readFields(into: &p.video) { nameIs($0, "present") || nameIs($0, "colour") || nameIs($0, "aspect") || nameIs($0, "quality") }
        case .audio:
            try readFields(into: &p.audio) { nameIs($0, "present") || nameIs($0, "stereo") }
        case .previouslyShown:
            p.previouslyShown = true
            p.previouslyShownStart = attribute("start")
            p.previouslyShownChannel = attribute("channel")
            try consume()
        case .premiere: p.premiere = true; try consume()
        case .lastChance: p.lastChance = true; try consume()
        case .new: p.isNew = true; try consume()
        case .subtitles:
            p.subtitles.append(attribute("type") ?? "")
            try consume()
        case .rating:
            if let rating = try readRating() { p.ratings.append(rating) }
        case .starRating:
            if let rating = try readRating() { p.starRatings.append(rating) }
        case .other:
            try consume()
        }
    }

    private func readFields(into fields: inout [String: String],
                            known: (UnsafePointer<UInt8>) -> Bool) throws(XMLTVError) {
        try forEachChild { name throws(XMLTVError) in
            guard known(name) else { return try consume() }
            let key = String(cString: name)
            if let value = try nonEmpty(readText(.collapse)) { fields[key] = value }
        }
    }

    private func readRating() throws(XMLTVError) -> Rating? {
        let system = attribute("system")
        var value: String?
        try forEachChild { name throws(XMLTVError) in
            if nameIs(name, "value") { value = try nonEmpty(readText(.collapse)) } else { try consume() }
        }
        return value.map { Rating(system: system?.isEmpty == true ? nil : system, value: $0) }
    }

    private func nonEmpty(_ s: String) -> String? { s.isEmpty ? nil : s }

    private func parseClump(_ s: String) -> (Int, Int)? {
        let halves = s.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, halves[0].count <= 6, halves[1].count <= 6,
              let index = Int(halves[0].normalised()), let count = Int(halves[1].normalised()),
              count >= 1, index >= 0, index < count else { return nil }
        return (index, count)
    }

    /// A time attribute as UTC seconds, honouring `timeOffsetOverride`.
    private func utc(_ value: UnsafePointer<UInt8>) -> Int64? {
        guard let parts = XMLTVTime.components(UnsafeBufferPointer(start: value, count: strlen(value))) else { return nil }
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
        return XMLTVError(file: path, line: sink.line ?? lineOrNil(), message: input.failure ?? sink.message ?? message)
    }

    private func parseError(fallback: String = "malformed XML") -> XMLTVError {
        error(fallback)
    }

    private func inputError() -> XMLTVError {
        XMLTVError(file: path, line: lineOrNil(), message: input.failure ?? "cannot read the file")
    }

    private func lineOrNil() -> Int? {
        let line = Int(xmlTextReaderGetParserLineNumber(reader))
        return line > 0 ? line : nil
    }
}

private extension Substring {
    func normalised() -> String { String(self).normalised(.collapse) }
}
