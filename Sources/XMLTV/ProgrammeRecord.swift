import Primitives

// A programme as read, before its content is turned into Swift values: the attributes the
// schedule needs, a hash of everything inside the element, and the element itself on a tape.

/// A `<programme>` as read, before its content is turned into Swift values: the attributes the
/// schedule needs, a hash of everything inside the element, and the element itself, kept as
/// compact bytes. Decoding (`decoded()`) is left to whoever needs the content: an import that finds
/// the hash unchanged never decodes.
public struct ProgrammeRecord: Sendable {
    /// The `channel` attribute.
    public var channel: String
    /// The `start` attribute, in UTC seconds since 1970.
    public var start: Int64
    /// The `stop` attribute, in UTC seconds; nil when absent or unparseable.
    public var stop: Int64?
    /// The `i` of `clumpidx="i/n"` (0 when absent).
    public var clumpIndex: Int
    /// The `n` of `clumpidx="i/n"` (1 when absent).
    public var clumpCount: Int
    /// Line of the `<programme>` start tag.
    public var line: Int
    /// A hash of the element's content (every child, attribute and text): equal content gives
    /// an equal hash on every run. The programme's own times are not part of it.
    public let sourceHash: UInt64
    let tape: [UInt8]

    init(channel: String, start: Int64, stop: Int64?, clumpIndex: Int, clumpCount: Int, line: Int, tape: [UInt8]) {
        self.channel = channel
        self.start = start
        self.stop = stop
        self.clumpIndex = clumpIndex
        self.clumpCount = clumpCount
        self.line = line
        self.tape = tape
        sourceHash = tape.withUnsafeBufferPointer(FNV1a.wordwise)
    }

    /// About how many bytes of memory the record takes (`ImportOptions.maxChannelBytes`).
    public var textBytes: Int { 64 + channel.utf8.count + tape.count }

    /// The programme with all its content.
    public func decoded() -> XMLTVProgramme {
        tape.withUnsafeBufferPointer { buffer in
            // Filled in a plain loop and returned: a closure capturing it copied it twice.
            var p = XMLTVProgramme(channel: channel, start: start, stop: stop, clumpIndex: clumpIndex, clumpCount: clumpCount, line: line)
            p.sourceHash = sourceHash
            let reader = TapeReader(tape: buffer)
            var i = 0
            while let element = reader.nextElement(from: &i, before: buffer.count) { reader.decodeProgrammeChild(element, into: &p) }
            return p
        }
    }

    /// The first non-empty title, for messages; nil when there is none.
    public var firstTitle: String? {
        tape.withUnsafeBufferPointer { buffer in
            let reader = TapeReader(tape: buffer)
            var title: String?
            reader.forEachElement(in: 0..<buffer.count) { element in
                guard title == nil, nameIs(element.name, "title") else { return }
                let text = reader.text(of: element, .collapse)
                if !text.isEmpty { title = text }
            }
            return title
        }
    }
}

extension TapeReader {
    func decodeChannel(into channel: inout XMLTVChannel) {
        forEachElement(in: 0..<tape.count) { element in
            if nameIs(element.name, "display-name") {
                localized(element, .collapse, into: &channel.displayNames)
            } else if nameIs(element.name, "icon") {
                if let icon = icon(element) { channel.icons.append(icon) }
            } else if nameIs(element.name, "url") {
                let url = text(of: element, .collapse)
                if !url.isEmpty { channel.urls.append(url) }
            }
        }
    }

    func decodeProgrammeChild(_ element: TapeElement, into p: inout XMLTVProgramme) {
        switch ProgrammeChild(element.name) {
        case .title: localized(element, .collapse, into: &p.titles)
        case .subTitle: localized(element, .collapse, into: &p.subTitles)
        case .desc: localized(element, .multiline, into: &p.descriptions)
        case .category: localized(element, .collapse, into: &p.categories)
        case .keyword: localized(element, .collapse, into: &p.keywords)
        case .credits:
            forEachElement(in: element.content) { person in
                guard let role = creditRole(person.name) else { return }
                var character: String?, guest = role == "guest"
                forEachAttribute(of: person) { attribute, value in
                    if nameIs(attribute, "role") { character = String(cString: value).normalised(.collapse) }
                    else if nameIs(attribute, "guest") { guest = guest || nameIs(value, "yes") }
                }
                let name = text(of: person, .collapse)
                var images: [Image] = []
                forEachElement(in: person.content) { child in
                    if nameIs(child.name, "image"), let image = image(child) { images.append(image) }
                }
                if !name.isEmpty {
                    p.credits.append(Credit(role: role, name: name, character: character?.isEmpty == true ? nil : character, isGuest: guest,
                                            images: images))
                }
            }
        case .date: p.date = nonEmpty(text(of: element, .collapse))
        case .language: p.language = nonEmpty(text(of: element, .collapse))
        case .origLanguage: p.originalLanguage = nonEmpty(text(of: element, .collapse))
        case .country:
            if let country = nonEmpty(text(of: element, .collapse)) { p.countries.append(country) }
        case .length:
            let units = attribute("units", of: element) ?? "seconds"
            let value = text(of: element, .collapse)
            let scale = units == "minutes" ? 60 : units == "hours" ? 3600 : 1
            if let amount = Int(value), amount >= 0, amount < Int(Int32.max) / scale { p.length = amount * scale }
        case .icon:
            if let icon = icon(element) { p.icons.append(icon) }
        case .url:
            if let url = nonEmpty(text(of: element, .collapse)) { p.urls.append(url) }
        case .episodeNum:
            let system = attribute("system", of: element) ?? "onscreen"
            if let raw = nonEmpty(text(of: element, .collapse)) { p.episodeNumbers.append(EpisodeNumber(system: system, raw: raw)) }
        case .video:
            fields(element, into: &p.video) { nameIs($0, "present") || nameIs($0, "colour") || nameIs($0, "aspect") || nameIs($0, "quality") }
        case .audio:
            fields(element, into: &p.audio) { nameIs($0, "present") || nameIs($0, "stereo") }
        case .previouslyShown:
            p.previouslyShown = true
            p.previouslyShownStart = attribute("start", of: element)
            p.previouslyShownChannel = attribute("channel", of: element)
        case .premiere: p.premiere = true
        case .lastChance: p.lastChance = true
        case .new: p.isNew = true
        case .subtitles: p.subtitles.append(attribute("type", of: element) ?? "")
        case .rating:
            if let rating = rating(element) { p.ratings.append(rating) }
        case .starRating:
            if let rating = rating(element) { p.starRatings.append(rating) }
        case .image:
            if let image = image(element) { p.images.append(image) }
        case .other:
            break
        }
    }

    /// A DTD 0.6 `<image>`: its URL is the text; attributes outside the DTD's values are dropped.
    private func image(_ element: TapeElement) -> Image? {
        let src = text(of: element, .collapse)
        guard !src.isEmpty else { return nil }
        var image = Image(src: src)
        forEachAttribute(of: element) { name, value in
            let text = String(cString: value).normalised(.collapse)
            if nameIs(name, "type") { image.type = Image.types.contains(text) ? text : nil }
            else if nameIs(name, "size") { image.size = Image.sizes.contains(text) ? text : nil }
            else if nameIs(name, "orient") { image.orient = Image.orients.contains(text) ? text : nil }
            else if nameIs(name, "system") { image.system = text.isEmpty ? nil : text }
        }
        return image
    }

    private func localized(_ element: TapeElement, _ mode: TextMode, into list: inout [LocalizedText]) {
        let lang = attribute("lang", of: element)
        let text = text(of: element, mode)
        if !text.isEmpty { list.append(LocalizedText(text: text, lang: lang?.isEmpty == true ? nil : lang)) }
    }

    private func icon(_ element: TapeElement) -> Icon? {
        var src = "", width: Int?, height: Int?
        forEachAttribute(of: element) { name, value in
            if nameIs(name, "src") { src = String(cString: value).normalised(.collapse) }
            else if nameIs(name, "width") { width = Self.dimension(value) }
            else if nameIs(name, "height") { height = Self.dimension(value) }
        }
        return src.isEmpty ? nil : Icon(src: src, width: width, height: height)
    }

    /// A width or height in pixels: a non-negative number that fits in 32 bits, else nil.
    private static func dimension(_ value: UnsafePointer<UInt8>) -> Int? {
        let text = String(cString: value).normalised(.collapse)
        guard text.utf8.count <= 9, let n = Int(text), n >= 0 else { return nil }
        return n
    }

    private func fields(_ element: TapeElement, into fields: inout [String: String], known: (UnsafePointer<UInt8>) -> Bool) {
        forEachElement(in: element.content) { child in
            guard known(child.name) else { return }
            if let value = nonEmpty(text(of: child, .collapse)) { fields[String(cString: child.name)] = value }
        }
    }

    private func rating(_ element: TapeElement) -> Rating? {
        let system = attribute("system", of: element)
        var value: String?
        forEachElement(in: element.content) { child in
            if nameIs(child.name, "value") { value = nonEmpty(text(of: child, .collapse)) }
        }
        return value.map { Rating(system: system?.isEmpty == true ? nil : system, value: $0) }
    }

    private func nonEmpty(_ s: String) -> String? { s.isEmpty ? nil : s }
}

// MARK: Staging

/// A staged record that cannot be read back: cut short, or its bytes changed on disk.
public struct DamagedStagedRecord: Error, Sendable {}

/// The one staging format, for every guide (docs/design.md#staging-a-guide-not-grouped-by-channel):
/// a record is kept as the reader made it, its head followed by its tape (`ElementTape.swift`), so
/// staging a guide not grouped by channel copies bytes and decodes nothing, and reading it back
/// gives the same `ProgrammeRecord` a grouped guide hands the merge (decoded only where the merge
/// needs its values).
///
/// Layout, integers little-endian:
///   start i64, stop i64, has-stop u8, clump-index i64, clump-count i64, line i64,
///   source-hash u64, channel-length u32, tape-length u32, channel bytes, tape bytes
extension ProgrammeRecord {
    private static let headBytes = 8 + 8 + 1 + 8 + 8 + 8 + 8 + 4 + 4

    /// Appends the record in the staging format.
    ///
    /// ```swift
    /// var file: [UInt8] = []
    /// record.stage(into: &file)
    /// let back = try file.withUnsafeBytes { try ProgrammeRecord(staged: $0) }
    /// ```
    public func stage(into bytes: inout [UInt8]) {
        var channel = channel
        channel.withUTF8 { channelBytes in
            tape.withUnsafeBufferPointer { tapeBytes in
                bytes.reserveCapacity(bytes.count + Self.headBytes + channelBytes.count + tapeBytes.count)
                appendLittleEndian(start, to: &bytes)
                appendLittleEndian(stop ?? 0, to: &bytes)
                bytes.append(stop == nil ? 0 : 1)
                appendLittleEndian(Int64(clumpIndex), to: &bytes)
                appendLittleEndian(Int64(clumpCount), to: &bytes)
                appendLittleEndian(Int64(line), to: &bytes)
                appendLittleEndian(sourceHash, to: &bytes)
                appendLittleEndian(UInt32(channelBytes.count), to: &bytes)
                appendLittleEndian(UInt32(tapeBytes.count), to: &bytes)
                bytes.append(contentsOf: channelBytes)
                bytes.append(contentsOf: tapeBytes)
            }
        }
    }

    /// Reads one record written by `stage(into:)`, which must fill `staged` exactly. Throws when
    /// the bytes are not such a record (a damaged staging file): never a crash or a wrong programme.
    ///
    /// ```swift
    /// let record = try ProgrammeRecord(staged: UnsafeRawBufferPointer(rebasing: file[range]))
    /// ```
    public init(staged: UnsafeRawBufferPointer) throws(DamagedStagedRecord) {
        guard staged.count >= Self.headBytes else { throw DamagedStagedRecord() }
        func load<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T {
            T(littleEndian: staged.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let channelCount = Int(load(49, as: UInt32.self))
        let tapeCount = Int(load(53, as: UInt32.self))
        guard Self.headBytes + channelCount + tapeCount == staged.count else { throw DamagedStagedRecord() }
        let tapeStart = Self.headBytes + channelCount
        let tape = Array(UnsafeRawBufferPointer(rebasing: staged[tapeStart...]))
        guard TapeReader.isWellFormed(tape) else { throw DamagedStagedRecord() }
        self.init(channel: String(decoding: UnsafeRawBufferPointer(rebasing: staged[Self.headBytes..<tapeStart]), as: UTF8.self),
                  start: load(0, as: Int64.self), stop: staged[16] == 0 ? nil : load(8, as: Int64.self),
                  clumpIndex: Int(load(17, as: Int64.self)), clumpCount: Int(load(25, as: Int64.self)),
                  line: Int(load(33, as: Int64.self)), tape: tape)
        guard sourceHash == load(41, as: UInt64.self) else { throw DamagedStagedRecord() }
    }
}

@inline(__always)
private func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
}
