import Primitives

/// A stored channel as the bytes of the row being read (`TVModel.channelKeys`).
struct StoredChannel {
    var id: StoredBytes
    var displayName: StoredBytes?
    /// Further display names, one a line.
    var otherNames: StoredBytes?
    var icon: StoredBytes?
    var url: StoredBytes?
    /// Every icon with its size, `width\theight\tsrc` lines; nil when `icon` says it all.
    var icons: StoredBytes?
}

/// A stored programme as the bytes and numbers of the row being read, in the import's
/// storage forms (`TVModel.programmeKeys`).
struct StoredProgramme {
    var start: Int64 = 0
    var stop: Int64?
    var clumpIndex: Int64 = 0
    var clumpCount: Int64 = 1
    var title: StoredBytes?
    var subTitle: StoredBytes?
    var desc: StoredBytes?
    /// Titles, sub-titles and descriptions in further languages, `tag\tlang\ttext` lines.
    var otherLanguages: StoredBytes?
    var date: StoredBytes?
    var keywords: StoredBytes?
    var language: StoredBytes?
    var originalLanguage: StoredBytes?
    var length: Int64?
    var icon: StoredBytes?
    var url: StoredBytes?
    var country: StoredBytes?
    /// `system=raw` lines.
    var episodeNum: StoredBytes?
    var video: StoredBytes?
    var audio: StoredBytes?
    var previouslyShown = false
    var previouslyShownStart: StoredBytes?
    var premiere = false
    var lastChance = false
    var isNew = false
    var subtitles: StoredBytes?
    var rating: StoredBytes?
    var starRating: StoredBytes?
    /// As `StoredChannel.icons`.
    var icons: StoredBytes?
    /// DTD 0.6 images, `type\tsize\torient\tsystem\tsrc` lines.
    var images: StoredBytes?
}

/// Writes an XMLTV document element by element, in the order of the XMLTV DTD
/// (`/usr/share/xmltv/xmltv.dtd`), with times as `YYYYMMDDhhmmss +0000`, straight from stored
/// rows' bytes into an `XMLText` (no value is built per row). Text is handed to `output` in blocks,
/// so a guide of any size passes through a fixed amount of memory. The same values always give
/// the same bytes (no date, no generator version in the document).
struct XMLTVDocumentWriter {
    private var xml: XMLText
    private let output: (UnsafeBufferPointer<UInt8>) throws -> Void
    private static let blockSize = 1 << 16

    /// Starts the document; `output` receives its bytes in order. Without `header`, a piece of
    /// a document another writer started (`ChannelWorkers`: one channel's programmes).
    init(header: Bool = true, output: @escaping (UnsafeBufferPointer<UInt8>) throws -> Void) {
        self.output = output
        xml = XMLText(capacity: Self.blockSize + 16384)
        guard header else { return }
        xml.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE tv SYSTEM \"xmltv.dtd\">\n")
        xml.raw("<tv generator-info-name=\"tvimport\">\n")
    }

    /// Hands out the bytes written so far.
    mutating func flush() throws {
        guard xml.count > 0 else { return }
        try xml.withBytes { try output($0) }
        xml.removeAll()
    }

    /// Bytes another writer made (`init(header: false)`), after those written so far.
    mutating func append(written bytes: UnsafeBufferPointer<UInt8>) throws {
        try flush()
        try output(bytes)
    }

    /// A `<channel>`: display names (the id when it has none: the DTD wants one), icon, url.
    mutating func write(_ channel: StoredChannel) throws {
        xml.raw("  <channel id=\"")
        xml.attribute(channel.id)
        xml.raw("\">\n")
        var named = false
        func name(_ text: StoredBytes) {
            guard !text.isEmpty else { return }
            named = true
            element("display-name", text)
        }
        if let first = channel.displayName { name(first) }
        StoredText.forEachLine(channel.otherNames) { name($0) }
        if !named { element("display-name", channel.id) }
        icons(channel.icon, channel.icons)
        if let url = channel.url { element("url", url) }
        xml.raw("  </channel>\n")
        try flushIfFull()
    }

    /// A playlist's `<channel>` (`PlaylistGuideExporter`): under the playlist's id, the entry's
    /// name then the guide channel's display names (each once), its icons, else the playlist's logo.
    mutating func write(playlistChannel id: String, names: [String], guide: StoredChannel?, logo: String?) throws {
        xml.raw("  <channel id=\"")
        xml.attribute(id)
        xml.raw("\">\n")
        var written: [String] = []
        func name(_ text: String) {
            guard !text.isEmpty, !written.contains(text) else { return }
            written.append(text)
            xml.raw("    <display-name>")
            xml.text(text)
            xml.raw("</display-name>\n")
        }
        for n in names { name(n) }
        if let guide {
            if let first = guide.displayName { name(String(decoding: first, as: UTF8.self)) }
            StoredText.forEachLine(guide.otherNames) { name(String(decoding: $0, as: UTF8.self)) }
        }
        if written.isEmpty { name(id) }
        if let guide, guide.icon != nil || guide.icons != nil {
            icons(guide.icon, guide.icons)
        } else if let logo {
            xml.raw("    <icon src=\"")
            xml.attribute(logo)
            xml.raw("\"/>\n")
        }
        if let url = guide?.url { element("url", url) }
        xml.raw("  </channel>\n")
        try flushIfFull()
    }

    /// A placeholder programme ("fill"): times and a title, nothing else.
    mutating func writePlaceholder(start: Int64, stop: Int64, channel: StoredBytes, title: String) throws {
        xml.raw("  <programme start=\"")
        time(start)
        xml.raw("\" stop=\"")
        time(stop)
        xml.raw("\" channel=\"")
        xml.attribute(channel)
        xml.raw("\">\n    <title>")
        xml.text(title.isEmpty ? "(untitled)" : title)
        xml.raw("</title>\n  </programme>\n")
        try flushIfFull()
    }

    /// A `<programme>` on the channel `channel` with every child it stores, in the DTD's order;
    /// its credits and categories in stored position order.
    mutating func write(_ p: StoredProgramme, channel: StoredBytes, credits: MemberRows, categories: MemberRows) throws {
        xml.raw("  <programme start=\"")
        time(p.start)
        if let stop = p.stop {
            xml.raw("\" stop=\"")
            time(stop)
        }
        xml.raw("\" channel=\"")
        xml.attribute(channel)
        if p.clumpCount > 1 {
            xml.raw("\" clumpidx=\"")
            xml.append(integer: p.clumpIndex)
            xml.raw("/")
            xml.append(integer: p.clumpCount)
        }
        xml.raw("\">\n")
        // title+ : a programme stored without one gets the feeds' word for it (an empty title is
        // an error to tv_validate_file).
        if !languages(.title, "title", p.title, p.otherLanguages) { xml.raw("    <title>(untitled)</title>\n") }
        languages(.subTitle, "sub-title", p.subTitle, p.otherLanguages)
        languages(.desc, "desc", p.desc, p.otherLanguages)
        if !credits.isEmpty { write(credits: credits) }
        if let date = p.date { element("date", date) }
        for i in categories.indices {
            localized("category", categories.text(i, Category.name) ?? StoredText.empty, lang: categories.text(i, Category.lang))
        }
        StoredText.forEachLine(p.keywords) { element("keyword", $0) }
        if let language = p.language { element("language", language) }
        if let language = p.originalLanguage { element("orig-language", language) }
        if let length = p.length {
            xml.raw("    <length units=\"seconds\">")
            xml.append(integer: length)
            xml.raw("</length>\n")
        }
        icons(p.icon, p.icons)
        if let url = p.url { element("url", url) }
        StoredText.forEachLine(p.country) { element("country", $0) }
        // An xmltv_ns number that breaks its own grammar ("00.05") is left out: tv_validate_file
        // refuses it and media servers would misread it.
        StoredText.forEachLine(p.episodeNum) { line in
            let (system, raw) = StoredText.keyed(line)
            guard !StoredText.equals(system, "xmltv_ns") || StoredText.isWellFormedXMLTVNS(raw) else { return }
            xml.raw("    <episode-num system=\"")
            xml.attribute(system)
            xml.raw("\">")
            xml.text(raw)
            xml.raw("</episode-num>\n")
        }
        fields("video", p.video, Self.videoFields)
        fields("audio", p.audio, Self.audioFields)
        if p.previouslyShown {
            xml.raw("    <previously-shown")
            if let start = p.previouslyShownStart {
                xml.raw(" start=\"")
                xml.attribute(start)
                xml.raw("\"")
            }
            xml.raw("/>\n")
        }
        if p.premiere { xml.raw("    <premiere/>\n") }
        if p.lastChance { xml.raw("    <last-chance/>\n") }
        if p.isNew { xml.raw("    <new/>\n") }
        StoredText.forEachLine(p.subtitles) { type in
            // The DTD knows three types; anything else is written untyped.
            if Self.subtitleTypes.contains(where: { StoredText.equals(type, $0) }) {
                xml.raw("    <subtitles type=\"")
                xml.raw(type)
                xml.raw("\"/>\n")
            } else {
                xml.raw("    <subtitles/>\n")
            }
        }
        StoredText.forEachLine(p.rating) { rating("rating", $0) }
        StoredText.forEachLine(p.starRating) { rating("star-rating", $0) }
        StoredText.forEachLine(p.images) { image($0, indent: "    ") }
        xml.raw("  </programme>\n")
        try flushIfFull()
    }

    /// Ends the document and hands out the last bytes.
    mutating func finish() throws {
        xml.raw("</tv>\n")
        try flush()
    }

    /// The credit roles in the DTD's order; credits of other roles are not written.
    static let creditRoles: [StaticString] = ["director", "actor", "writer", "adapter", "producer", "composer", "editor", "presenter",
                                              "commentator", "guest"]
    /// Only actors have a character and a guest flag.
    static let actorRank = 1
    static let subtitleTypes: [StaticString] = ["teletext", "onscreen", "deaf-signed"]
    /// The children of `<video>` and `<audio>` in the DTD's order (a key stored twice: the last).
    static let videoFields: [StaticString] = ["present", "colour", "aspect", "quality"]
    static let audioFields: [StaticString] = ["present", "stereo"]

    /// The credit keys a `MemberStream` reads (`TVModel.creditKeys`' texts, then the guest flag).
    enum Credit {
        static let keys = ["role", "name", "character", "images"]
        static let role = 0, name = 1, character = 2, images = 3
        static let flagKey = "isGuest"
    }

    /// The category keys a `MemberStream` reads.
    enum Category {
        static let keys = ["name", "lang"]
        static let name = 0, lang = 1
    }

    /// `<credits>` with the credits grouped by role in the DTD's order, each role's in stored order.
    private mutating func write(credits: MemberRows) {
        xml.raw("    <credits>\n")
        // Each credit's role found once (its place in `creditRoles`, -1 for another role).
        withUnsafeTemporaryAllocation(of: Int.self, capacity: credits.indices.count) { ranks in
            for i in credits.indices {
                let role = credits.text(i, Credit.role) ?? StoredText.empty
                ranks[i] = Self.creditRoles.firstIndex { StoredText.equals(role, $0) } ?? -1
            }
            for (rank, role) in Self.creditRoles.enumerated() where ranks.contains(rank) {
                role.withUTF8Buffer { roleName in
                    for i in credits.indices where ranks[i] == rank {
                        xml.raw("      <")
                        xml.raw(roleName)
                        if rank == Self.actorRank {
                            if let character = credits.text(i, Credit.character) {
                                xml.raw(" role=\"")
                                xml.attribute(character)
                                xml.raw("\"")
                            }
                            if credits.flag(i) { xml.raw(" guest=\"yes\"") }
                        }
                        xml.raw(">")
                        xml.text(credits.text(i, Credit.name) ?? StoredText.empty)
                        StoredText.forEachLine(credits.text(i, Credit.images)) { image($0, indent: nil) }
                        xml.raw("</")
                        xml.raw(roleName)
                        xml.raw(">\n")
                    }
                }
            }
        }
        xml.raw("    </credits>\n")
    }

    /// The stored text of `element` then the further languages' of it; false when there is none.
    @discardableResult
    private mutating func languages(_ tag: StoredText.Tag, _ element: StaticString, _ first: StoredBytes?, _ others: StoredBytes?) -> Bool {
        var any = false
        if let first {
            localized(element, first, lang: nil)
            any = true
        }
        StoredText.forEachOtherLanguage(others) { t, lang, text in
            guard t == tag else { return }
            localized(element, text, lang: lang)
            any = true
        }
        return any
    }

    private mutating func flushIfFull() throws {
        guard xml.count >= Self.blockSize else { return }
        try flush()
    }

    private mutating func time(_ utc: Int64) {
        xml.append(compactTime: utc)
        xml.raw(" +0000")
    }

    /// `    <NAME>TEXT</NAME>` and a line break.
    private mutating func element(_ name: StaticString, _ text: StoredBytes) {
        localized(name, text, lang: nil)
    }

    /// `    <NAME lang="LANG">TEXT</NAME>` (no `lang` when empty) and a line break.
    private mutating func localized(_ name: StaticString, _ text: StoredBytes, lang: StoredBytes?) {
        xml.raw("    <")
        xml.raw(name)
        if let lang, !lang.isEmpty {
            xml.raw(" lang=\"")
            xml.attribute(lang)
            xml.raw("\"")
        }
        xml.raw(">")
        xml.text(text)
        xml.raw("</")
        xml.raw(name)
        xml.raw(">\n")
    }

    private mutating func icon(_ src: StoredBytes) {
        xml.raw("    <icon src=\"")
        xml.attribute(src)
        xml.raw("\"/>\n")
    }

    /// Every icon (`icons` lines, with sizes), else the one `icon`.
    private mutating func icons(_ icon: StoredBytes?, _ icons: StoredBytes?) {
        guard icons != nil else {
            if let icon { self.icon(icon) }
            return
        }
        StoredText.forEachLine(icons) { line in
            let fields = StoredText.tabFields(line, count: 3)
            xml.raw("    <icon src=\"")
            xml.attribute(fields[2])
            xml.raw("\"")
            if !fields[0].isEmpty {
                xml.raw(" width=\"")
                xml.attribute(fields[0])
                xml.raw("\"")
            }
            if !fields[1].isEmpty {
                xml.raw(" height=\"")
                xml.attribute(fields[1])
                xml.raw("\"")
            }
            xml.raw("/>\n")
        }
    }

    /// `<image type size orient system>src</image>` from a `type\tsize\torient\tsystem\tsrc` line,
    /// on a line of its own at `indent`, or inline (inside a credit) without one.
    private mutating func image(_ line: StoredBytes, indent: StaticString?) {
        let fields = StoredText.tabFields(line, count: 5)
        if let indent { xml.raw(indent) }
        xml.raw("<image")
        for (i, name) in [(0, " type=\"" as StaticString), (1, " size=\""), (2, " orient=\""), (3, " system=\"")] where !fields[i].isEmpty {
            xml.raw(name)
            xml.attribute(fields[i])
            xml.raw("\"")
        }
        xml.raw(">")
        xml.text(fields[4])
        xml.raw(indent == nil ? "</image>" : "</image>\n")
    }

    /// `<video>` or `<audio>` from `key=value` lines: the known keys in the DTD's order.
    private mutating func fields(_ name: StaticString, _ lines: StoredBytes?, _ order: [StaticString]) {
        guard lines != nil else { return }
        var opened = false
        for key in order {
            var value: StoredBytes?
            StoredText.forEachLine(lines) { line in
                let (k, v) = StoredText.keyed(line)
                if StoredText.equals(k, key) { value = v }
            }
            guard let value else { continue }
            if !opened {
                xml.raw("    <")
                xml.raw(name)
                xml.raw(">")
                opened = true
            }
            xml.raw("<")
            xml.raw(key)
            xml.raw(">")
            xml.text(value)
            xml.raw("</")
            xml.raw(key)
            xml.raw(">")
        }
        guard opened else { return }
        xml.raw("</")
        xml.raw(name)
        xml.raw(">\n")
    }

    private mutating func rating(_ name: StaticString, _ line: StoredBytes) {
        let (system, value) = StoredText.keyed(line)
        xml.raw("    <")
        xml.raw(name)
        if !system.isEmpty {
            xml.raw(" system=\"")
            xml.attribute(system)
            xml.raw("\"")
        }
        xml.raw("><value>")
        xml.text(value)
        xml.raw("</value></")
        xml.raw(name)
        xml.raw(">\n")
    }
}
