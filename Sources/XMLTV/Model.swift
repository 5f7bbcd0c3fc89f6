// The values an XMLTV file describes, copied out of libxml2 into plain Swift types.

/// A piece of text with the language it is written in (`lang` attribute), if the file says.
public struct LocalizedText: Sendable, Hashable, Codable {
    /// The text, as the file has it (entities decoded).
    public var text: String
    /// The language code of the `lang` attribute (`en`, `de`); nil when absent.
    public var lang: String?

    /// A text in `lang`, or in no stated language.
    public init(text: String, lang: String? = nil) {
        self.text = text
        self.lang = lang
    }
}

/// An image reference (`<icon src width height>`); sizes are nil when absent or not numbers.
public struct Icon: Sendable, Hashable, Codable {
    /// The image's URL, as written.
    public var src: String
    /// The width in pixels.
    public var width: Int?
    /// The height in pixels.
    public var height: Int?

    /// An icon at `src`, of the given size if known.
    public init(src: String, width: Int? = nil, height: Int? = nil) {
        self.src = src
        self.width = width
        self.height = height
    }
}

/// A DTD 0.6 `<image type size orient system>URL</image>` of a programme or a person. Attributes
/// outside the DTD's values are dropped (nil), so that what is exported stays valid.
public struct Image: Sendable, Hashable, Codable {
    /// The image's URL, as written.
    public var src: String
    /// poster, backdrop, still, person or character.
    public var type: String?
    /// 1 (small), 2 (medium) or 3 (large).
    public var size: String?
    /// P (portrait) or L (landscape).
    public var orient: String?
    /// Where the image comes from (tvdb, tmdb, ...).
    public var system: String?

    /// An image at `src` with these attributes.
    public init(src: String, type: String? = nil, size: String? = nil, orient: String? = nil, system: String? = nil) {
        self.src = src
        self.type = type
        self.size = size
        self.orient = orient
        self.system = system
    }

    /// The `type` values of the DTD.
    public static let types: Set<String> = ["poster", "backdrop", "still", "person", "character"]
    /// The `size` values of the DTD.
    public static let sizes: Set<String> = ["1", "2", "3"]
    /// The `orient` values of the DTD.
    public static let orients: Set<String> = ["P", "L"]
}

/// A `<channel>`: the id programmes refer to, and how to show the channel.
public struct XMLTVChannel: Sendable, Hashable, Codable {
    /// The `id` attribute, which programmes name in their `channel` attribute.
    public var id: String
    /// Its `<display-name>`s, in file order (the first is the preferred one).
    public var displayNames: [LocalizedText]
    /// Its `<icon>`s, in file order.
    public var icons: [Icon]
    /// Its `<url>`s, in file order.
    public var urls: [String]
    /// Line of the `<channel>` start tag.
    public var line: Int

    /// A channel with these values (`line` 0: not read from a file).
    public init(id: String, displayNames: [LocalizedText] = [], icons: [Icon] = [], urls: [String] = [], line: Int = 0) {
        self.id = id
        self.displayNames = displayNames
        self.icons = icons
        self.urls = urls
        self.line = line
    }
}

/// One person of `<credits>`. `role` is the element name (director, actor, writer, adapter, producer,
/// composer, editor, presenter, commentator, guest); `character` is an actor's `role` attribute.
public struct Credit: Sendable, Hashable, Codable {
    /// The element name: director, actor, writer, adapter, producer, composer, editor, presenter, commentator or guest.
    public var role: String
    /// The person's name, the element's text.
    public var name: String
    /// The character an actor plays (the actor's `role` attribute).
    public var character: String?
    /// An actor with `guest="yes"`.
    public var isGuest: Bool
    /// `<image>`s inside the person's element (DTD 0.6), usually of type person or character.
    public var images: [Image]

    /// A credit with these values.
    public init(role: String, name: String, character: String? = nil, isGuest: Bool = false, images: [Image] = []) {
        self.role = role
        self.name = name
        self.character = character
        self.isGuest = isGuest
        self.images = images
    }
}

/// An `<episode-num>`. For `xmltv_ns` (zero-based in the file) and best effort for `onscreen`
/// ("S04E14"), the numbers are parsed and stored ONE-based; counts are totals as written.
public struct EpisodeNumber: Sendable, Hashable, Codable {
    /// The `system` attribute: `xmltv_ns`, `onscreen`, `dd_progid` or any other.
    public var system: String
    /// The element's text, as written.
    public var raw: String
    /// The season, one-based.
    public var season: Int?
    /// The number of seasons, as written.
    public var seasonCount: Int?
    /// The episode within the season, one-based.
    public var episode: Int?
    /// The number of episodes in the season, as written.
    public var episodeCount: Int?
    /// The part within the episode, one-based.
    public var part: Int?
    /// The number of parts, as written.
    public var partCount: Int?

    /// Parses `raw` according to `system`; unknown systems keep only the raw text.
    public init(system: String, raw: String) {
        self.system = system
        self.raw = raw
        switch system {
        case "xmltv_ns": parseXMLTVNS()
        case "onscreen": parseOnscreen()
        default: break
        }
    }
}

/// A `<rating>` or `<star-rating>`: a value, and the system it is given in.
public struct Rating: Sendable, Hashable, Codable {
    /// The `system` attribute (`MPAA`, `FSK`); nil when absent.
    public var system: String?
    /// The `<value>` as written (`PG`, `3/5`).
    public var value: String

    /// A rating of `value` in `system`.
    public init(system: String? = nil, value: String) {
        self.system = system
        self.value = value
    }
}

/// A `<programme>`, decoded: when it is on which channel, and everything the file says about it.
public struct XMLTVProgramme: Sendable, Hashable, Codable {
    /// The `channel` attribute: the id of an `XMLTVChannel`.
    public var channel: String
    /// UTC seconds since 1970.
    public var start: Int64
    /// UTC seconds; nil when absent or unparseable.
    public var stop: Int64?
    /// From `clumpidx="i/n"`: 0 and 1 when absent.
    public var clumpIndex: Int
    /// The `n` of `clumpidx="i/n"`: how many programmes share this slot.
    public var clumpCount: Int
    /// `<title>`s, in file order (one per language, usually).
    public var titles: [LocalizedText]
    /// `<sub-title>`s, in file order.
    public var subTitles: [LocalizedText]
    /// `<desc>`s, in file order.
    public var descriptions: [LocalizedText]
    /// The people of `<credits>`, in file order.
    public var credits: [Credit]
    /// `<date>`: the year (or date) it was made, as written.
    public var date: String?
    /// `<category>`s, in file order.
    public var categories: [LocalizedText]
    /// `<keyword>`s, in file order.
    public var keywords: [LocalizedText]
    /// `<language>`: the language it is broadcast in.
    public var language: String?
    /// `<orig-language>`: the language it was made in.
    public var originalLanguage: String?
    /// Seconds.
    public var length: Int?
    /// `<icon>`s, in file order.
    public var icons: [Icon]
    /// `<url>`s, in file order.
    public var urls: [String]
    /// `<country>`s, in file order.
    public var countries: [String]
    /// `<episode-num>`s, in file order.
    public var episodeNumbers: [EpisodeNumber]
    /// Keys: present, colour, aspect, quality.
    public var video: [String: String]
    /// Keys: present, stereo.
    public var audio: [String: String]
    /// `<previously-shown>`: a repeat.
    public var previouslyShown: Bool
    /// The `start` attribute of `<previously-shown>`, as written.
    public var previouslyShownStart: String?
    /// The `channel` attribute of `<previously-shown>`.
    public var previouslyShownChannel: String?
    /// `<premiere>`: shown for the first time.
    public var premiere: Bool
    /// `<last-chance>`: shown for the last time.
    public var lastChance: Bool
    /// `<new>`: a new programme or series.
    public var isNew: Bool
    /// `type` attribute values of `<subtitles>` (teletext, onscreen, deaf-signed); "" when untyped.
    public var subtitles: [String]
    /// `<rating>`s, in file order.
    public var ratings: [Rating]
    /// `<star-rating>`s, in file order.
    public var starRatings: [Rating]
    /// DTD 0.6 `<image>`s, in document order.
    public var images: [Image]
    /// Line of the `<programme>` start tag.
    public var line: Int
    /// `ProgrammeRecord.sourceHash` of the element read; nil for a programme made otherwise.
    public var sourceHash: UInt64?

    /// A programme with this schedule and these titles; every other element absent.
    public init(channel: String, start: Int64, stop: Int64? = nil, clumpIndex: Int = 0, clumpCount: Int = 1,
                titles: [LocalizedText] = [], line: Int = 0) {
        self.channel = channel
        self.start = start
        self.stop = stop
        self.clumpIndex = clumpIndex
        self.clumpCount = clumpCount
        self.titles = titles
        self.subTitles = []
        self.descriptions = []
        self.credits = []
        self.date = nil
        self.categories = []
        self.keywords = []
        self.language = nil
        self.originalLanguage = nil
        self.length = nil
        self.icons = []
        self.urls = []
        self.countries = []
        self.episodeNumbers = []
        self.video = [:]
        self.audio = [:]
        self.previouslyShown = false
        self.previouslyShownStart = nil
        self.previouslyShownChannel = nil
        self.premiere = false
        self.lastChance = false
        self.isNew = false
        self.subtitles = []
        self.ratings = []
        self.starRatings = []
        self.images = []
        self.line = line
    }
}

/// What `XMLTVReader.next()` returns, in document order.
public enum XMLTVItem: Sendable {
    /// A `<channel>`.
    case channel(XMLTVChannel)
    /// A `<programme>`, decoded.
    case programme(XMLTVProgramme)
}

/// What `XMLTVReader.nextRecord()` returns: a programme still undecoded.
public enum XMLTVRecord: Sendable {
    /// A `<channel>`.
    case channel(XMLTVChannel)
    /// A `<programme>`, not decoded yet (`ProgrammeRecord.decoded()`).
    case programme(ProgrammeRecord)
}

/// Something odd in the data that did not stop the import. `kind` is one of "duplicate",
/// "conflicting-duplicate", "overlap", "missing-stop", "repaired-stop", "dropped-stop", "timezone",
/// "bad-time", "missing-title", "missing-channel", "missing-id", "bad-clumpidx", "truncated-warnings",
/// "gzip-trailing-garbage". Values from the input are quoted as excerpts (`String.excerpt`).
public struct XMLTVWarning: Sendable, Hashable, Codable {
    /// What kind of oddity it is (see the type's description).
    public var kind: String
    /// What happened, in a sentence.
    public var message: String
    /// The line of the element it is about, when known.
    public var line: Int?
    /// The channel it is about, when there is one.
    public var channel: String?

    /// A warning with these values.
    public init(kind: String, message: String, line: Int? = nil, channel: String? = nil) {
        self.kind = kind
        self.message = message
        self.line = line
        self.channel = channel
    }
}

/// A file that cannot be read as XMLTV (missing, malformed, truncated).
public struct XMLTVError: Error, Sendable, CustomStringConvertible {
    /// The file, as the reader was given it.
    public var file: String
    /// The line the problem is on, when known.
    public var line: Int?
    /// What is wrong, in a sentence.
    public var message: String

    /// An error about `file`, at `line` if known.
    public init(file: String, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `FILE:LINE: MESSAGE`, as compilers write it (`FILE: MESSAGE` without a line).
    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

/// How `XMLTVReader` reads a file: which channels, in which time zone, how many warnings.
public struct XMLTVReaderOptions: Sendable {
    /// Seconds east of UTC; replaces whatever zone the file gives (for feeds that lie about it).
    public var timeOffsetOverride: Int?
    /// When set, only these channels (and their programmes) are read.
    public var includeChannels: Set<String>?
    /// Channels (and their programmes) skipped while parsing.
    public var excludeChannels: Set<String>
    /// Reading-time warnings kept; the rest are only counted.
    public var maxWarnings: Int
    /// Sees every byte of the input as it is read, before any gzip is inflated (a command
    /// source hashes and counts its output with it, and keeps it for a second reading).
    public var inputObserver: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    /// Source channel id → canonical channel id (the config's channel aliases): channels and
    /// programmes are read under the canonical id. The include and exclude lists name source ids.
    public var channelAliases: [String: String] = [:]

    /// Options with these values; no input observer, no aliases.
    public init(timeOffsetOverride: Int? = nil, includeChannels: Set<String>? = nil,
                excludeChannels: Set<String> = [], maxWarnings: Int = 1000) {
        self.timeOffsetOverride = timeOffsetOverride
        self.includeChannels = includeChannels
        self.excludeChannels = excludeChannels
        self.maxWarnings = maxWarnings
    }

    /// The canonical id of a source channel id: its alias target, else itself.
    @inline(__always) func canonical(_ channel: String) -> String {
        channelAliases.isEmpty ? channel : channelAliases[channel] ?? channel
    }

    func accepts(channel: String) -> Bool {
        if excludeChannels.contains(channel) { return false }
        if let includeChannels { return includeChannels.contains(channel) }
        return true
    }
}
