// The values an XMLTV file describes, copied out of libxml2 into plain Swift types.

/// A piece of text with the language it is written in (`lang` attribute), if the file says.
public struct LocalizedText: Sendable, Hashable, Codable {
    public var text: String
    public var lang: String?

    public init(text: String, lang: String? = nil) {
        self.text = text
        self.lang = lang
    }
}

/// An image reference (`<icon src width height>`); sizes are nil when absent or not numbers.
public struct Icon: Sendable, Hashable, Codable {
    public var src: String
    public var width: Int?
    public var height: Int?

    public init(src: String, width: Int? = nil, height: Int? = nil) {
        self.src = src
        self.width = width
        self.height = height
    }
}

/// A DTD 0.6 `<image type size orient system>URL</image>` of a programme or a person. Attributes
/// outside the DTD's values are dropped (nil), so that what is exported stays valid.
public struct Image: Sendable, Hashable, Codable {
    public var src: String
    /// poster, backdrop, still, person or character.
    public var type: String?
    /// 1 (small), 2 (medium) or 3 (large).
    public var size: String?
    /// P (portrait) or L (landscape).
    public var orient: String?
    /// Where the image comes from (tvdb, tmdb, ...).
    public var system: String?

    public init(src: String, type: String? = nil, size: String? = nil, orient: String? = nil, system: String? = nil) {
        self.src = src
        self.type = type
        self.size = size
        self.orient = orient
        self.system = system
    }

    public static let types: Set<String> = ["poster", "backdrop", "still", "person", "character"]
    public static let sizes: Set<String> = ["1", "2", "3"]
    public static let orients: Set<String> = ["P", "L"]
}

public struct XMLTVChannel: Sendable, Hashable, Codable {
    public var id: String
    public var displayNames: [LocalizedText]
    public var icons: [Icon]
    public var urls: [String]
    /// Line of the `<channel>` start tag.
    public var line: Int

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
    public var role: String
    public var name: String
    public var character: String?
    public var isGuest: Bool
    /// `<image>`s inside the person's element (DTD 0.6), usually of type person or character.
    public var images: [Image]

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
    public var system: String
    public var raw: String
    public var season: Int?
    public var seasonCount: Int?
    public var episode: Int?
    public var episodeCount: Int?
    public var part: Int?
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

public struct Rating: Sendable, Hashable, Codable {
    public var system: String?
    public var value: String

    public init(system: String? = nil, value: String) {
        self.system = system
        self.value = value
    }
}

public struct XMLTVProgramme: Sendable, Hashable, Codable {
    public var channel: String
    /// UTC seconds since 1970.
    public var start: Int64
    /// UTC seconds; nil when absent or unparseable.
    public var stop: Int64?
    /// From `clumpidx="i/n"`: 0 and 1 when absent.
    public var clumpIndex: Int
    public var clumpCount: Int
    public var titles: [LocalizedText]
    public var subTitles: [LocalizedText]
    public var descriptions: [LocalizedText]
    public var credits: [Credit]
    public var date: String?
    public var categories: [LocalizedText]
    public var keywords: [LocalizedText]
    public var language: String?
    public var originalLanguage: String?
    /// Seconds.
    public var length: Int?
    public var icons: [Icon]
    public var urls: [String]
    public var countries: [String]
    public var episodeNumbers: [EpisodeNumber]
    /// Keys: present, colour, aspect, quality.
    public var video: [String: String]
    /// Keys: present, stereo.
    public var audio: [String: String]
    public var previouslyShown: Bool
    public var previouslyShownStart: String?
    public var previouslyShownChannel: String?
    public var premiere: Bool
    public var lastChance: Bool
    public var isNew: Bool
    /// `type` attribute values of `<subtitles>` (teletext, onscreen, deaf-signed); "" when untyped.
    public var subtitles: [String]
    public var ratings: [Rating]
    public var starRatings: [Rating]
    /// DTD 0.6 `<image>`s, in document order.
    public var images: [Image]
    /// Line of the `<programme>` start tag.
    public var line: Int
    /// `ProgrammeRecord.sourceHash` of the element read; nil for a programme made otherwise.
    public var sourceHash: UInt64?

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

public enum XMLTVItem: Sendable {
    case channel(XMLTVChannel)
    case programme(XMLTVProgramme)
}

/// What `XMLTVReader.nextRecord()` returns: a programme still undecoded.
public enum XMLTVRecord: Sendable {
    case channel(XMLTVChannel)
    case programme(ProgrammeRecord)
}

/// Something odd in the data that did not stop the import. `kind` is one of "duplicate",
/// "conflicting-duplicate", "overlap", "missing-stop", "repaired-stop", "dropped-stop", "timezone",
/// "bad-time", "missing-title", "missing-channel", "missing-id", "bad-clumpidx", "truncated-warnings",
/// "gzip-trailing-garbage". Values from the input are quoted as excerpts (`String.excerpt`).
public struct XMLTVWarning: Sendable, Hashable, Codable {
    public var kind: String
    public var message: String
    public var line: Int?
    public var channel: String?

    public init(kind: String, message: String, line: Int? = nil, channel: String? = nil) {
        self.kind = kind
        self.message = message
        self.line = line
        self.channel = channel
    }
}

/// A file that cannot be read as XMLTV (missing, malformed, truncated).
public struct XMLTVError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public init(file: String, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

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
