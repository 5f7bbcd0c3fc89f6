import Merge
import XMLTV

/// Programmes as compact bytes for the staging file of a guide not grouped by channel (the usual
/// output of `tv_sort`, which orders by time). JSON through Codable took two thirds of such an
/// import; these records are written and read field by field. Every field of `XMLTVProgramme` is
/// here, in declaration order: `StagingCodecTests` fails when a new field is not.
enum StagingCodec {
    static func encode(_ p: XMLTVProgramme, into w: inout ByteWriter) {
        w.string(p.channel)
        w.integer(p.start)
        w.optional(p.stop) { $0.integer($1) }
        w.integer(p.clumpIndex)
        w.integer(p.clumpCount)
        w.texts(p.titles)
        w.texts(p.subTitles)
        w.texts(p.descriptions)
        w.list(p.credits) { w, c in
            w.string(c.role)
            w.string(c.name)
            w.optional(c.character) { $0.string($1) }
            w.bool(c.isGuest)
        }
        w.optional(p.date) { $0.string($1) }
        w.texts(p.categories)
        w.texts(p.keywords)
        w.optional(p.language) { $0.string($1) }
        w.optional(p.originalLanguage) { $0.string($1) }
        w.optional(p.length) { $0.integer($1) }
        w.icons(p.icons)
        w.list(p.urls) { $0.string($1) }
        w.list(p.countries) { $0.string($1) }
        w.list(p.episodeNumbers) { w, e in
            w.string(e.system)
            w.string(e.raw)
            for n in [e.season, e.seasonCount, e.episode, e.episodeCount, e.part, e.partCount] { w.optional(n) { $0.integer($1) } }
        }
        w.dictionary(p.video)
        w.dictionary(p.audio)
        w.bool(p.previouslyShown)
        w.optional(p.previouslyShownStart) { $0.string($1) }
        w.optional(p.previouslyShownChannel) { $0.string($1) }
        w.bool(p.premiere)
        w.bool(p.lastChance)
        w.bool(p.isNew)
        w.list(p.subtitles) { $0.string($1) }
        w.ratings(p.ratings)
        w.ratings(p.starRatings)
        w.integer(p.line)
        w.optional(p.sourceHash) { $0.integer(Int64(bitPattern: $1)) }
    }

    static func decode(_ r: inout ByteReader) throws(ByteReader.Truncated) -> XMLTVProgramme {
        var p = XMLTVProgramme(channel: try r.string(), start: try r.integer())
        p.stop = try r.optional { r throws(ByteReader.Truncated) in try r.integer() }
        p.clumpIndex = try r.int()
        p.clumpCount = try r.int()
        p.titles = try r.texts()
        p.subTitles = try r.texts()
        p.descriptions = try r.texts()
        p.credits = try r.list { r throws(ByteReader.Truncated) in
            Credit(role: try r.string(), name: try r.string(),
                   character: try r.optional { r throws(ByteReader.Truncated) in try r.string() }, isGuest: try r.bool())
        }
        p.date = try r.optionalString()
        p.categories = try r.texts()
        p.keywords = try r.texts()
        p.language = try r.optionalString()
        p.originalLanguage = try r.optionalString()
        p.length = try r.optionalInt()
        p.icons = try r.icons()
        p.urls = try r.list { r throws(ByteReader.Truncated) in try r.string() }
        p.countries = try r.list { r throws(ByteReader.Truncated) in try r.string() }
        p.episodeNumbers = try r.list { r throws(ByteReader.Truncated) in
            // Stored as parsed (not parsed again): the record is exactly what the reader made.
            var e = EpisodeNumber(system: try r.string(), raw: try r.string())
            e.season = try r.optionalInt()
            e.seasonCount = try r.optionalInt()
            e.episode = try r.optionalInt()
            e.episodeCount = try r.optionalInt()
            e.part = try r.optionalInt()
            e.partCount = try r.optionalInt()
            return e
        }
        p.video = try r.dictionary()
        p.audio = try r.dictionary()
        p.previouslyShown = try r.bool()
        p.previouslyShownStart = try r.optionalString()
        p.previouslyShownChannel = try r.optionalString()
        p.premiere = try r.bool()
        p.lastChance = try r.bool()
        p.isNew = try r.bool()
        p.subtitles = try r.list { r throws(ByteReader.Truncated) in try r.string() }
        p.ratings = try r.ratings()
        p.starRatings = try r.ratings()
        p.line = try r.int()
        p.sourceHash = try r.optional { r throws(ByteReader.Truncated) in UInt64(bitPattern: try r.integer()) }
        return p
    }
}

/// Appends values as bytes: integers as zigzag varints, strings as length + UTF-8.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func integer<I: BinaryInteger>(_ value: I) {
        let v = Int64(value)
        var u = UInt64(bitPattern: (v << 1) ^ (v >> 63))
        while u >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: u) | 0x80)
            u >>= 7
        }
        bytes.append(UInt8(u))
    }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func string(_ value: String) {
        var s = value
        s.withUTF8 { utf8 in
            integer(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        guard let value else { return bool(false) }
        bool(true)
        write(&self, value)
    }

    mutating func list<T>(_ values: [T], _ write: (inout ByteWriter, T) -> Void) {
        integer(values.count)
        for v in values { write(&self, v) }
    }

    mutating func texts(_ values: [LocalizedText]) {
        list(values) { w, t in
            w.string(t.text)
            w.optional(t.lang) { $0.string($1) }
        }
    }

    mutating func icons(_ values: [Icon]) {
        list(values) { w, i in
            w.string(i.src)
            w.optional(i.width) { $0.integer($1) }
            w.optional(i.height) { $0.integer($1) }
        }
    }

    mutating func ratings(_ values: [Rating]) {
        list(values) { w, r in
            w.optional(r.system) { $0.string($1) }
            w.string(r.value)
        }
    }

    mutating func dictionary(_ values: [String: String]) {
        list(values.sorted { $0.key < $1.key }) { w, kv in
            w.string(kv.key)
            w.string(kv.value)
        }
    }
}

/// Reads what `ByteWriter` wrote; a record cut short throws (a damaged staging file).
struct ByteReader {
    struct Truncated: Error {}

    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    private mutating func byte() throws(Truncated) -> UInt8 {
        guard position < bytes.count else { throw Truncated() }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func integer() throws(Truncated) -> Int64 {
        var u: UInt64 = 0, shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw Truncated() }
            u |= UInt64(b & 0x7F) << shift
            if b < 0x80 { break }
            shift += 7
        }
        return Int64(bitPattern: u >> 1) ^ -Int64(bitPattern: u & 1)
    }

    mutating func int() throws(Truncated) -> Int { Int(try integer()) }

    mutating func bool() throws(Truncated) -> Bool { try byte() != 0 }

    mutating func string() throws(Truncated) -> String {
        let count = try int()
        guard count >= 0, count <= bytes.count - position else { throw Truncated() }
        defer { position += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)]), as: UTF8.self)
    }

    mutating func optional<T>(_ read: (inout ByteReader) throws(Truncated) -> T) throws(Truncated) -> T? {
        try bool() ? try read(&self) : nil
    }

    mutating func optionalString() throws(Truncated) -> String? { try optional { r throws(Truncated) in try r.string() } }

    mutating func optionalInt() throws(Truncated) -> Int? { try optional { r throws(Truncated) in try r.int() } }

    mutating func list<T>(_ read: (inout ByteReader) throws(Truncated) -> T) throws(Truncated) -> [T] {
        let count = try int()
        guard count >= 0, count <= bytes.count - position else { throw Truncated() }
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try read(&self)) }
        return values
    }

    mutating func texts() throws(Truncated) -> [LocalizedText] {
        try list { r throws(Truncated) in LocalizedText(text: try r.string(), lang: try r.optionalString()) }
    }

    mutating func icons() throws(Truncated) -> [Icon] {
        try list { r throws(Truncated) in Icon(src: try r.string(), width: try r.optionalInt(), height: try r.optionalInt()) }
    }

    mutating func ratings() throws(Truncated) -> [Rating] {
        try list { r throws(Truncated) in
            let system = try r.optionalString()
            return Rating(system: system, value: try r.string())
        }
    }

    mutating func dictionary() throws(Truncated) -> [String: String] {
        var values: [String: String] = [:]
        for (k, v) in try list({ r throws(Truncated) in (try r.string(), try r.string()) }) { values[k] = v }
        return values
    }
}
