import ObjectGraph
import XMLTV

/// The inverse of `ListingsMapper`: stored channels and programmes as XMLTV values again (for the
/// XMLTV export). What the mapping keeps comes back; what it drops (the language of the first
/// title, icons and urls after the first, a previously-shown channel) stays dropped, so that
/// mapping the result again gives the same stored values.
public enum StoredListingsMapper {
    /// A channel from its stored values (`ListingsMapper.channelKeys`, read through `value`).
    public static func channel(_ value: (String) -> Value) -> XMLTVChannel {
        let id = value("xmltvId").stringValue ?? ""
        var names: [LocalizedText] = []
        if let first = value("displayName").stringValue { names.append(LocalizedText(text: first)) }
        names += lines(value("otherNames")).map { LocalizedText(text: $0) }
        return XMLTVChannel(id: id, displayNames: names, icons: value("icon").stringValue.map { [Icon(src: $0)] } ?? [],
                            urls: value("url").stringValue.map { [$0] } ?? [])
    }

    /// A stored credit, as fetched (`ListingsMapper.creditKeys`).
    public static func credit(_ value: (String) -> Value) -> Credit {
        Credit(role: value("role").stringValue ?? "", name: value("name").stringValue ?? "",
               character: value("character").stringValue, isGuest: value("isGuest").boolValue ?? false)
    }

    /// A stored category, as fetched (`ListingsMapper.categoryKeys`).
    public static func category(_ value: (String) -> Value) -> LocalizedText {
        let lang = value("lang").stringValue ?? ""
        return LocalizedText(text: value("name").stringValue ?? "", lang: lang.isEmpty ? nil : lang)
    }

    /// A programme on channel `channel` from its stored values (`ListingsMapper.programmeKeys`),
    /// its credits and categories in stored position order.
    public static func programme(channel: String, _ value: (String) -> Value, credits: [Credit], categories: [LocalizedText]) -> XMLTVProgramme {
        var p = XMLTVProgramme(channel: channel, start: value("start").integerValue ?? 0, stop: value("stop").integerValue,
                               clumpIndex: Int(value("clumpIndex").integerValue ?? 0), clumpCount: Int(value("clumpCount").integerValue ?? 1))
        if let t = value("title").stringValue { p.titles.append(LocalizedText(text: t)) }
        if let t = value("subTitle").stringValue { p.subTitles.append(LocalizedText(text: t)) }
        if let t = value("desc").stringValue { p.descriptions.append(LocalizedText(text: t)) }
        for (tag, text) in otherLanguages(value("otherLanguages").stringValue) {
            switch tag {
            case "title": p.titles.append(text)
            case "sub-title": p.subTitles.append(text)
            default: p.descriptions.append(text)
            }
        }
        p.credits = credits
        p.date = value("date").stringValue
        p.categories = categories
        p.keywords = lines(value("keywords")).map { LocalizedText(text: $0) }
        p.language = value("language").stringValue
        p.originalLanguage = value("originalLanguage").stringValue
        p.length = value("length").integerValue.map { Int($0) }
        p.icons = value("icon").stringValue.map { [Icon(src: $0)] } ?? []
        p.urls = value("url").stringValue.map { [$0] } ?? []
        p.countries = lines(value("country"))
        p.episodeNumbers = lines(value("episodeNum")).map { line in
            let (system, raw) = keyed(line)
            return EpisodeNumber(system: system, raw: raw)
        }
        for line in lines(value("video")) { let (k, v) = keyed(line); p.video[k] = v }
        for line in lines(value("audio")) { let (k, v) = keyed(line); p.audio[k] = v }
        p.previouslyShown = value("previouslyShown").boolValue ?? false
        p.previouslyShownStart = value("previouslyShownStart").stringValue
        p.premiere = value("premiere").boolValue ?? false
        p.lastChance = value("lastChance").boolValue ?? false
        p.isNew = value("isNew").boolValue ?? false
        p.subtitles = lines(value("subtitles")).map { $0 == "untyped" ? "" : $0 }
        p.ratings = lines(value("rating")).map(rating)
        p.starRatings = lines(value("starRating")).map(rating)
        return p
    }

    private static func lines(_ v: Value) -> [String] {
        guard let s = v.stringValue, !s.isEmpty else { return [] }
        return s.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// "key=value" at the first '='.
    private static func keyed(_ line: String) -> (String, String) {
        guard let i = line.firstIndex(of: "=") else { return (line, "") }
        return (String(line[..<i]), String(line[line.index(after: i)...]))
    }

    private static func rating(_ line: String) -> Rating {
        let (system, value) = keyed(line)
        return Rating(system: system.isEmpty ? nil : system, value: value)
    }

    /// "tag\tlang\ttext" lines; a description's own line breaks continue the text before them.
    private static func otherLanguages(_ s: String?) -> [(String, LocalizedText)] {
        guard let s, !s.isEmpty else { return [] }
        var result: [(String, LocalizedText)] = []
        for line in s.split(separator: "\n", omittingEmptySubsequences: false) {
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, ["title", "sub-title", "desc"].contains(parts[0]) {
                result.append((String(parts[0]), LocalizedText(text: String(parts[2]), lang: parts[1].isEmpty ? nil : String(parts[1]))))
            } else if !result.isEmpty {
                result[result.count - 1].1.text += "\n" + line
            }
        }
        return result
    }
}
